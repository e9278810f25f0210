package js

import (
	"strings"
	"testing"
	"time"

	"github.com/dop251/goja/parser"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
)

// TestCodeDepth: code nested past maxCodeDepth, in any shape, is refused
// with limit_exceeded naming the depth limit, quickly, before goja's
// compiler recurses over it.
func TestCodeDepth(t *testing.T) {
	rep := strings.Repeat
	for _, tt := range []struct{ name, code string }{
		{"brackets", "return " + rep("[", 100000) + rep("]", 100000)},
		{"objects", "return " + rep("{a:", 50000) + "1" + rep("}", 50000)},
		{"not", "return " + rep("!", 200000) + "1"},
		{"negate", "return " + rep("- ", 100000) + "1"},
		{"typeof", "return " + rep("typeof ", 30000) + "1"},
		{"members", "const a = {}; return a" + rep(".a", 80000)},
		{"calls", "const f = () => f; return f" + rep("()", 80000)},
		{"plus chain", "return 1" + rep("+1", 100000)},
		{"string concat", "return 'a'" + rep("+'a'", 60000)},
		{"power", "return " + rep("1**", 60000) + "1"},
		{"assign chain", "let a; return " + rep("a=", 100000) + "1"},
		{"ternary", "return " + rep("1?1:", 60000) + "1"},
		{"arrows", "return " + rep("x=>", 4000) + "1"},
		{"ifs", rep("if(1)", 40000) + "return 1"},
		{"else if", "let x = 1;" + rep("if(x){}else ", 20000) + "{}"},
		{"blocks", rep("{", 100000) + rep("}", 100000)},
		{"functions", rep("function f(){", 15000) + rep("}", 15000)},
		{"templates", "return " + rep("`${", 30000) + "1" + rep("}`", 30000)},
		{"new", "return " + rep("new ", 40000) + "Object"},
		{"mixed", "return " + rep("[(!{a:-", 20000) + "1" + rep("})]", 20000)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.code) > maxCodeBytes {
				t.Fatalf("case is %d bytes, over maxCodeBytes", len(tt.code))
			}
			start := time.Now()
			res, err := run(t, false, tt.code, "", executors.Limits{Timeout: time.Minute})
			if errdefs.CodeOf(err) != errdefs.LimitExceeded || errdefs.LimitOf(err) != errdefs.LimitDepth {
				t.Fatalf("got %v %+v, want limit_exceeded depth", err, res)
			}
			if !strings.Contains(err.Error(), "1000") {
				t.Errorf("message %q does not name the limit", err)
			}
			t.Logf("refused in %v", time.Since(start))
		})
	}
}

// TestDeepSourceEndsCleanly: shapes goja handles without deep trees still
// end in a result or a clean limit, never a crash: 100,000 nested
// parentheses leave no node of their own, and thousands of labels cost
// the parser memory before the tree is measured.
func TestDeepSourceEndsCleanly(t *testing.T) {
	for _, code := range []string{
		"return " + strings.Repeat("(", 100000) + "1" + strings.Repeat(")", 100000),
		strings.Repeat("a:", 5000) + "return 1",
	} {
		res, err := run(t, false, code, "", executors.Limits{Timeout: time.Minute})
		if err != nil && errdefs.CodeOf(err) != errdefs.LimitExceeded {
			t.Errorf("%.20s…: %v, want a result or limit_exceeded", code, err)
		}
		if err == nil && (res.IsError || string(res.Value) != "1") {
			t.Errorf("%.20s…: %+v", code, res)
		}
	}
}

// TestCodeDepthOrdinary: the corpus sits far below the limit, and
// moderately deep code still runs.
func TestCodeDepthOrdinary(t *testing.T) {
	names, code := readCorpus(t)
	deepest := 0
	for _, n := range names {
		prg, err := parser.ParseFile(nil, toolFile, wrapperPrefix+code[n]+wrapperSuffix, 0)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		deepest = max(deepest, astDepth(prg, maxCodeDepth))
	}
	t.Logf("deepest corpus snippet: %d syntax tree levels (limit %d)", deepest, maxCodeDepth)
	if deepest > maxCodeDepth/10 {
		t.Errorf("corpus reaches %d levels: the limit leaves too little room", deepest)
	}
	res, err := run(t, false, "return "+strings.Repeat("[", 100)+strings.Repeat("]", 100)+".length + 1"+strings.Repeat("+1", 50), "", executors.Limits{})
	if err != nil || res.IsError || string(res.Value) != "52" {
		t.Errorf("nesting 100: %v %+v", err, res)
	}
}

func FuzzASTDepth(f *testing.F) {
	for _, s := range []string{"return 1", "((((1))))", "function f(){ var g = function(){ return [1,[2]] } }", "a.b.c(d)[e]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, code string) {
		prg, err := parser.ParseFile(nil, "f.js", code, 0)
		if err != nil {
			return
		}
		d := astDepth(prg, maxCodeDepth)
		if d < 1 || d > maxCodeDepth+1 {
			t.Fatalf("depth %d", d)
		}
		if again := astDepth(prg, maxCodeDepth); again != d {
			t.Fatalf("unstable depth %d then %d", d, again)
		}
	})
}
