package jscheck

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckJSCodeFlags(t *testing.T) {
	tests := []struct {
		name    string
		code    string
		pattern string
		line    int
	}{
		{"require", "const fs = require('fs')", "require(", 1},
		{"require newline", "const fs = require\n('fs')", "require(", 1},
		{"require comment", "const fs = require /* x */ ('fs')", "require(", 1},
		{"require line comment", "const fs = require // x\n('fs')", "require(", 1},
		{"require optional call", "require?.('fs')", "require(", 1},
		{"import", "const m = await import('fs')", "import(", 1},
		{"import spaced", "await import ('fs')", "import(", 1},
		{"eval", "return eval('1+1')", "eval(", 1},
		{"eval spaced", "return eval ('1+1')", "eval(", 1},
		{"eval tab newline", "return eval\t\n('1+1')", "eval(", 1},
		{"eval comment", "return eval/**/('1')", "eval(", 1},
		{"eval indirect", "return (0, eval)('1')", "eval(", 1},
		{"eval alias", "const e = eval; return e('1')", "eval(", 1},
		{"require alias", "const r = require; return r('fs')", "require(", 1},
		{"eval template", "return eval`1`", "eval(", 1},
		{"eval unicode escape", `return \u0065val('1')`, "eval(", 1},
		{"eval braced escape", `return \u{65}val('1')`, "eval(", 1},
		{"eval after nbsp", "return\u00a0eval('1')", "eval(", 1},
		{"Function", "return Function('return 1')()", "Function(", 1},
		{"new Function", "return new Function ('return 1')()", "Function(", 1},
		{"Function template", "return Function`return 1`()", "Function(", 1},
		{"line number", "const a = 1;\nconst b = 2;\nreturn eval('a')", "eval(", 3},
		{"line crlf", "const a = 1;\r\nconst b = 2;\r\nreturn eval('a')", "eval(", 3},
		{"line cr", "const a = 1;\rreturn eval('a')", "eval(", 2},
		{"line separator", "const a = 1;\u2028return eval('a')", "eval(", 2},
		{"first in text wins", "const x = 1\nreturn eval(require('x'))", "eval(", 2},
		{"eval in template substitution", "return `pid ${eval(1)}`", "eval(", 1},
		{"eval after regex", "const re = /a/g; return eval", "eval(", 1},
		{"eval after division", "const x = a / b; return eval / 2", "eval(", 1},
		{"eval after nested template", "return `${`${a}`}` + eval", "eval(", 1},
		{"eval after regex with slash class", "if (/[/]/.test(s)) eval(1)", "eval(", 1},
		{"eval after string with quote", `const s = "it's"; eval(s)`, "eval(", 1},
		{"eval after block comment", "/* a\n b */ eval(1)", "eval(", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(tt.code)
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("CheckJSCode(%q) = %v, want a *CodeCheckError", tt.code, err)
			}
			if ce.Pattern != tt.pattern || ce.Line != tt.line {
				t.Errorf("CheckJSCode(%q) = %q at line %d, want %q at line %d", tt.code, ce.Pattern, ce.Line, tt.pattern, tt.line)
			}
			if ce.Reason == "" {
				t.Errorf("no reason for %q", ce.Pattern)
			}
		})
	}
}

func TestCheckJSCodeAllows(t *testing.T) {
	tests := []struct {
		name string
		code string
	}{
		{"empty", ""},
		{"trivial", "return args.a + args.b"},
		{"processData", "const processData = x => x; return processData(args)"},
		{"preprocess", "return preprocess(args)"},
		{"process as property", "return args.process"},
		{"process key", "return { process: 1 }"},
		{"process second key", "return { a: 1, process : 2 }"},
		{"process optional property", "return args?.process"},
		{"global property", "return args.global.x"},
		{"with method", "return arr.with(0, 1)"},
		{"eval property", "return args.eval"},
		{"eval in prose comment", "// we never eval here\nreturn 1"},
		{"process in string", `return "the process failed"`},
		{"process in single quotes", `return 'process'`},
		{"process in template text", "return `process ${args.x} done`"},
		{"process in comment", "// process each row\nreturn 1"},
		{"process in block comment", "/* process\n all rows */ return 1"},
		{"process in regex", "return /process/.test(args.s)"},
		{"myeval", "function myeval(x) { return x }; return myeval(1)"},
		{"evaluate", "return evaluate(1)"},
		{"eval no call", "return typeof evaluation"},
		{"Functions", "return isFunction(x)"},
		{"instanceof Function", "return x instanceof Function"},
		{"typeof function", "return typeof x === 'function'"},
		{"requireAuth", "return requireAuth(x)"},
		{"imported", "return imported(x)"},
		{"global word", "const globalCount = 1; return globalCount"},
		{"global in string", `return "global. settings"`},
		{"with in comment", "// call with (a, b)\nreturn 1"},
		{"with in string", `return "with (care)"`},
		{"without", "return without(x)"},
		{"constructor dot", "return x.constructor.name"},
		{"constructor name check", "return x.constructor === Object"},
		{"proto-like", "return obj.__proto"},
		{"unknown escape", `return "\u0022"`},
		{"dollar prefix", "return $process"},
		{"unicode identifier", "const éprocess = 1; return éprocess"},
		{"division after paren", "return (a) / (b) / 2"},
		{"utils", "return utils.hash(args.text, 'sha256')"},
		// The realm has none of these, or only its own: mentioning them
		// reaches nothing outside the call.
		{"process.exit (was refused)", "process.exit(1)"},
		{"process.exit spaced (was refused)", "process . exit ( 1 )"},
		{"process.exit optional (was refused)", "process?.exit()"},
		{"process env (was refused)", "return process.env.HOME"},
		{"process alone (was refused)", "const p = process"},
		{"process bracket (was refused)", "return process['env']"},
		{"dirname (was refused)", "return __dirname"},
		{"filename (was refused)", "return __filename + 'x'"},
		{"global dot (was refused)", "global.x = 1"},
		{"global dot spaced (was refused)", "global\n  .x = 1"},
		{"globalThis dot (was refused)", "globalThis.x = 1"},
		{"globalThis optional (was refused)", "globalThis?.x"},
		{"globalThis in string (was refused)", "return 'globalThis.x'"},
		{"process spread (was refused)", "return [...process.argv]"},
		{"process shorthand (was refused)", "return { process }"},
		{"process ternary (was refused)", "return a ? process : b"},
		{"eval in string (was refused)", `console.log("eval(x)")`},
		{"eval in comment (was refused)", "// eval(x)\nreturn 1"},
		{"proto (was refused)", "obj.__proto__.x = 1"},
		{"proto string (was refused)", "obj['__proto__'].x = 1"},
		{"proto key (was refused)", "const o = {__proto__: null}"},
		{"constructor bracket (was refused)", "x.constructor['constructor']"},
		{"constructor bracket spaced (was refused)", "x.constructor [0]"},
		{"with (was refused)", "with(obj) { a = 1 }"},
		{"with spaced (was refused)", "with (obj) { a = 1 }"},
		{"typeof eval", "return typeof eval === 'function'"},
		{"typeof require parens", "if (typeof(require) !== 'undefined') return 1"},
		{"typeof process", "return typeof process !== 'undefined' && process.versions"},
		{"local named process", "function process(rows) { return rows.length }; return process(args.rows)"},
		{"global local", "let global = {}; global.count = 1; return global"},
		{"globalThis read", "return Object.keys(globalThis).length"},
		{"proto concat", "return ({})['__pro' + 'to__'] === Object.prototype"},
		{"eval in string", `return "do not eval(x) user input"`},
		{"Function in comment", "// new Function(body) is not available\nreturn 1"},
		{"require in regex", "return /require\\(/.test(args.src)"},
		{"import in string", "return 'import(\"x\")'"},
		{"eval method", "return calc.eval(args.expr)"},
		{"eval key", "return { eval: 1, Function: 2 }"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := Check(tt.code); err != nil {
				t.Errorf("CheckJSCode(%q) = %v, want nil", tt.code, err)
			}
		})
	}
}

func TestCodeCheckErrorMessage(t *testing.T) {
	err := Check("const a = 1\nconst b = 2\nreturn eval(a)")
	want := `forbidden pattern "eval(" at line 3: dynamic code evaluation`
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %q", err, want)
	}
}

func TestCheckJSCodeLinear(t *testing.T) {
	// Inputs that make recursive parsers recurse or backtrack must scan in
	// linear time here.
	// "/**/" not "/*": eval after an unclosed comment is a comment.
	for _, unit := range []string{"!", "(", "x=>", "`${", "/**/", "'", "[", "a=", "\\u0065"} {
		code := strings.Repeat(unit, 1<<18) + " eval(1)"
		if err := Check(code); err == nil {
			t.Errorf("%q×n: eval( not found", unit)
		}
	}
}

func FuzzCheckJSCode(f *testing.F) {
	for _, s := range []string{
		"return args.a + args.b",
		"process.exit(1)",
		"return eval ('x')",
		"`${`${process}`}`",
		"/[/]/.test(x); with (o) {}",
		`\u0065val(1)`,
		"x.constructor['constructor']('return this')()",
		"'unterminated\nprocess",
		"/* unterminated",
		"a / b / c; global.x",
	} {
		f.Add(s)
	}
	known := map[string]bool{}
	for _, r := range jsRules {
		known[r.pattern] = true
	}
	f.Fuzz(func(t *testing.T, code string) {
		err := Check(code)
		if again := Check(code); (err == nil) != (again == nil) || err != nil && err.Error() != again.Error() {
			t.Fatalf("unstable result: %v then %v", err, again)
		}
		if err == nil {
			return
		}
		var ce *Error
		if !errors.As(err, &ce) {
			t.Fatalf("error %T, want *CodeCheckError", err)
		}
		if !known[ce.Pattern] {
			t.Fatalf("unknown pattern %q", ce.Pattern)
		}
		if ce.Line < 1 || ce.Line > strings.Count(code, "\n")+strings.Count(code, "\r")+strings.Count(code, "\u2028")+strings.Count(code, "\u2029")+1 {
			t.Fatalf("line %d out of range", ce.Line)
		}
	})
}
