package shellguard

import (
	"errors"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/toolcage/toolcage/policy/shellsyntax"
)

// Shell text is read with mvdan.cc/sh/v3/syntax (bash, which parses every
// POSIX program too) and the walker walks its tree. This file bounds the
// depth and the work of a parse; what the parser refuses is refused
// (group "parse"), never guessed at.

// parse parses src as a shell script at the given nesting depth.
func parse(src string, depth int, work *int) (*syntax.File, *DeniedError) {
	tooDeep := parseErr("too_deep", "commands are nested more than 8 levels deep", src)
	if depth > maxDepth {
		return nil, tooDeep
	}
	if *work -= 1 + len(src)/64; *work < 0 {
		return nil, parseErr("too_complex", "command text takes too much work to analyse", src)
	}
	if shellsyntax.DeepBrackets(src, maxBrackets) >= 0 {
		// The parser backtracks on deep $(( nesting (10,000 levels take
		// seconds); text this deep is refused before it is parsed.
		return nil, tooDeep
	}
	f, err := shellsyntax.ParseBash(src)
	if err != nil {
		// What bash refuses, dash may run: ((a; b)) is two subshells to
		// dash, a[$(cmd)] a word. Text either shell reads is walked.
		pf, perr := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(src), "")
		if perr != nil {
			return nil, syntaxErr(err, src)
		}
		f = pf
	}
	switch bad := (bounds{src, work}).deep(f, depth); bad {
	case "":
	case "too_deep":
		return nil, tooDeep
	case "too_complex":
		return nil, parseErr("too_complex", "command text takes too much work to analyse", src)
	default:
		return nil, parseErr("syntax", bad, src)
	}
	return f, nil
}

// maxBrackets bounds the nesting of ( and { outside single quotes,
// four per level of the depth bound: more cannot be within it.
const maxBrackets = 4 * maxDepth

// bounds checks a parse of src.
type bounds struct {
	src  string
	work *int
}

// deep reports "too_deep" when n, at depth d, nests deeper than maxDepth
// (compound commands, substitutions, double quotes, parameter operators,
// arrays and here-document bodies each count one level; ((...)) is read
// again as dash reads it, two subshells), "too_complex" when that takes
// too much work, or names what the parser accepts but no shell runs: a
// function body that is not a compound command (f() a), one without a
// name (() { a; }), ${}.
func (b bounds) deep(n syntax.Node, d int) string {
	if d > maxDepth {
		return "too_deep"
	}
	bad := ""
	syntax.Walk(n, func(m syntax.Node) bool {
		if bad != "" || m == n {
			return bad == ""
		}
		switch x := m.(type) {
		case *syntax.IfClause:
			// elif and else are one level with their if.
			for cl := x; cl != nil; cl = cl.Else {
				for _, s := range slices.Concat(cl.Cond, cl.Then) {
					if bad = b.deep(s, d+1); bad != "" {
						return false
					}
				}
			}
			return false
		case *syntax.Redirect:
			if bad = b.deep(x.Word, d); bad == "" && x.Hdoc != nil {
				bad = b.deep(x.Hdoc, d+1)
			}
			return false
		case *syntax.ArithmCmd:
			if _, err := parseLenient(b.src[x.Left.Offset()+2:x.Right.Offset()], d+1, b.work); err != nil {
				bad = err.Rule
			}
			return bad == ""
		case *syntax.ParamExp:
			if x.Param == nil {
				bad = "bad ${} substitution"
			}
			if x.Short || bad != "" {
				return bad == ""
			}
		case *syntax.FuncDecl:
			if x.Name == nil {
				// The parser reads "() { ...; }" as zsh's anonymous function.
				bad = "function definition without a name"
				return false
			}
			switch x.Body.Cmd.(type) {
			case nil, *syntax.CallExpr, *syntax.DeclClause, *syntax.LetClause, *syntax.TimeClause, *syntax.CoprocClause:
				bad = "function body is not a compound command"
				return false
			}
		case *syntax.Subshell, *syntax.Block, *syntax.CmdSubst, *syntax.ProcSubst, *syntax.DblQuoted, *syntax.ArithmExp,
			*syntax.WhileClause, *syntax.ForClause, *syntax.CaseClause, *syntax.ArrayExpr:
		default:
			return true
		}
		bad = b.deep(m, d+1)
		return false
	})
	return bad
}

// parseLenient parses text that may or may not be commands; it returns
// no tree when it does not parse, and an error only for the limits (depth,
// work), which stop the analysis.
func parseLenient(src string, depth int, work *int) (*syntax.File, *DeniedError) {
	if strings.TrimSpace(src) == "" {
		return nil, nil
	}
	w := *work
	f, err := parse(src, depth, &w)
	if err != nil {
		if err.Rule == "too_deep" || err.Rule == "too_complex" {
			return nil, err
		}
		return nil, nil
	}
	*work = w
	return f, nil
}

// syntaxErr names a parse error: text that ends too early is
// "unbalanced", anything else "syntax". The description says that the
// command does not parse, not that it is dangerous.
func syntaxErr(err error, src string) *DeniedError {
	const notParsed = "the command does not parse as shell, so it cannot be checked: "
	var pe syntax.ParseError
	if errors.As(err, &pe) {
		// An operator with nothing after it is a syntax error to the
		// shell running the text, not text cut short.
		t := strings.TrimRight(src, " \t\n")
		if pe.Incomplete && (t == "" || !strings.ContainsRune("|&<>", rune(t[len(t)-1]))) || strings.Contains(pe.Text, "without matching") {
			return parseErr("unbalanced", notParsed+pe.Text, src)
		}
		return parseErr("syntax", notParsed+pe.Text, src)
	}
	var le syntax.LangError
	if errors.As(err, &le) {
		return parseErr("syntax", notParsed+le.Feature+" is not supported", src)
	}
	return parseErr("syntax", notParsed+err.Error(), src)
}
