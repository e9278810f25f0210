package js

import (
	"container/list"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
	"github.com/toolcage/toolcage/errdefs"
)

// toolFile is the file name the tool's code is compiled under; stack
// frames in it are the tool's own.
const toolFile = "tool.js"

// The tool's code becomes the body of an async function. The prefix has no
// newline, so line N of the code is line N of the compiled file.
const (
	wrapperPrefix = "(async function (args, context, console, utils) {"
	wrapperSuffix = "\n})"
)

// compiled is a tool's code compiled once, or the syntax error it has.
// A goja.Program is not tied to a runtime, so one serves every call.
type compiled struct {
	prog      *goja.Program
	syntaxErr string // "SyntaxError: <message> (line N)"
	// limitErr is set for code nested too deeply to compile safely.
	limitErr *errdefs.Error
}

// compileTool compiles code as the body of the tool function.
func compileTool(code string) *compiled {
	src := wrapperPrefix + code + wrapperSuffix
	prg, err := parser.ParseFile(nil, toolFile, src, 0, parser.WithDisableSourceMaps)
	if err != nil {
		var list parser.ErrorList
		if errors.As(err, &list) && len(list) > 0 {
			return &compiled{syntaxErr: "SyntaxError: " + list[0].Message + lineSuffix(list[0].Position.Line)}
		}
		return &compiled{syntaxErr: "SyntaxError: " + err.Error()}
	}
	// Code that closes the function body early, as in "}); (function(){",
	// would run outside the wrapper. It is a syntax error for a body.
	if len(prg.Body) != 1 || !isFunctionLiteral(prg.Body[0]) {
		line := 1
		if len(prg.Body) > 0 {
			line = prg.File.Position(int(prg.Body[0].Idx1()) - 2).Line
		}
		return &compiled{syntaxErr: "SyntaxError: Unexpected '}' closing the tool's function body" + lineSuffix(line)}
	}
	if d := astDepth(prg, maxCodeDepth); d > maxCodeDepth {
		return &compiled{limitErr: errdefs.LimitError(errdefs.LimitDepth, "js: the code nests more than %d syntax tree levels deep", maxCodeDepth)}
	}
	p, err := goja.CompileAST(prg, false)
	if err != nil {
		return &compiled{syntaxErr: compileErrorMessage(err)}
	}
	return &compiled{prog: p}
}

func isFunctionLiteral(s ast.Statement) bool {
	es, ok := s.(*ast.ExpressionStatement)
	if !ok {
		return false
	}
	_, ok = es.Expression.(*ast.FunctionLiteral)
	return ok
}

// compileErrorMessage formats an error goja's compiler found after parsing
// (a redeclared let, an invalid assignment target).
func compileErrorMessage(err error) string {
	var ce *goja.CompilerError
	name := "SyntaxError"
	var se *goja.CompilerSyntaxError
	var re *goja.CompilerReferenceError
	switch {
	case errors.As(err, &se):
		ce = &se.CompilerError
	case errors.As(err, &re):
		ce, name = &re.CompilerError, "ReferenceError"
	default:
		return "SyntaxError: " + err.Error()
	}
	line := 0
	if ce.File != nil {
		line = ce.File.Position(ce.Offset).Line
	}
	return name + ": " + ce.Message + lineSuffix(line)
}

// lineSuffix is " (line N)", or "" when the line is unknown.
func lineSuffix(line int) string {
	if line <= 0 {
		return ""
	}
	return " (line " + strconv.Itoa(line) + ")"
}

var lineSuffixRE = regexp.MustCompile(`\(line \d+\)$`)

func hasLineSuffix(msg string) bool { return lineSuffixRE.MatchString(msg) }

// toolLine returns the line of the innermost stack frame in the tool's
// code, or 0.
func toolLine(frames []goja.StackFrame) int {
	for i := range frames {
		if frames[i].SrcName() == toolFile {
			return frames[i].Position().Line
		}
	}
	return 0
}

// stackLineRE finds a tool frame in an Error's stack text, as goja writes
// it: "at name (tool.js:3:7(12))" or "at tool.js:3:7(12)".
var stackLineRE = regexp.MustCompile(`^\s*at .*\b` + regexp.QuoteMeta(toolFile) + `:(\d+):\d+`)

// stackLine returns the line of the first tool frame in stack text after
// skipping skip frames, or 0.
func stackLine(stack string, skip int) int {
	for _, l := range strings.Split(stack, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "at ") {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		if m := stackLineRE.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			return n
		}
	}
	return 0
}

// programCache keeps compiled tools, least recently used first out, within
// a budget of source bytes. Tools are called again and again with the same
// code, and parsing is most of the cost of a small call.
type programCache struct {
	mu      sync.Mutex
	budget  int
	used    int
	order   *list.List // of *cacheEntry, most recent at the front
	entries map[string]*list.Element
}

type cacheEntry struct {
	code string
	c    *compiled
}

func newProgramCache(budget int) *programCache {
	return &programCache{budget: budget, order: list.New(), entries: make(map[string]*list.Element)}
}

// get returns code compiled, compiling it on a miss.
func (pc *programCache) get(code string) *compiled {
	pc.mu.Lock()
	if el, ok := pc.entries[code]; ok {
		pc.order.MoveToFront(el)
		c := el.Value.(*cacheEntry).c
		pc.mu.Unlock()
		return c
	}
	pc.mu.Unlock()

	c := compileTool(code)

	pc.mu.Lock()
	defer pc.mu.Unlock()
	if _, ok := pc.entries[code]; ok || len(code) > pc.budget {
		return c
	}
	pc.entries[code] = pc.order.PushFront(&cacheEntry{code: code, c: c})
	pc.used += len(code)
	for pc.used > pc.budget {
		el := pc.order.Back()
		e := el.Value.(*cacheEntry)
		pc.order.Remove(el)
		delete(pc.entries, e.code)
		pc.used -= len(e.code)
	}
	return c
}
