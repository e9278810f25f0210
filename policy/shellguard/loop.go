package shellguard

import (
	"regexp"
	"slices"

	"mvdan.cc/sh/v3/syntax"
)

// A loop that starts a background job on every round and has no bound
// (while true, for ((;;)), for over a command's output or a huge range)
// starts processes without end: the shell form of a fork bomb.

// startsBackground reports whether a loop body runs a job in the
// background (&) itself, not only inside a function it defines.
func startsBackground(ss []*syntax.Stmt, depth int) bool {
	if depth > 4 {
		return false
	}
	for _, s := range ss {
		if s.Background {
			return true
		}
		var lists [][]*syntax.Stmt
		d := depth + 1
		switch x := s.Cmd.(type) {
		case *syntax.BinaryCmd:
			// && and | join members of one list, not a level deeper.
			lists, d = [][]*syntax.Stmt{{x.X, x.Y}}, depth
		case *syntax.Subshell:
			lists = [][]*syntax.Stmt{x.Stmts}
		case *syntax.Block:
			lists = [][]*syntax.Stmt{x.Stmts}
		case *syntax.IfClause:
			for cl := x; cl != nil; cl = cl.Else {
				lists = append(lists, cl.Cond, cl.Then)
			}
		case *syntax.WhileClause:
			lists = [][]*syntax.Stmt{x.Cond, x.Do}
		case *syntax.ForClause:
			lists = [][]*syntax.Stmt{x.Do}
		case *syntax.CaseClause:
			for _, it := range x.Items {
				lists = append(lists, it.Stmts)
			}
		}
		if slices.ContainsFunc(lists, func(l []*syntax.Stmt) bool { return startsBackground(l, d) }) {
			return true
		}
	}
	return false
}

// counterTest is a condition comparing a counter: the loop ends.
var counterTest = regexp.MustCompile(`(^|\s)(-lt|-le|-gt|-ge|<|<=|>|>=)(\s|$)`)

// spawnLoop reports whether s is a loop that starts a background job on
// every round and may run without end.
func (w *walker) spawnLoop(s *syntax.Stmt, sc *scope) bool {
	switch x := s.Cmd.(type) {
	case *syntax.WhileClause:
		if !startsBackground(x.Do, 0) {
			return false
		}
		if len(x.Cond) == 0 {
			return true
		}
		first := chain(x.Cond[0], false, nil)[0]
		stages := chain(first, true, nil)
		switch c := stages[len(stages)-1].Cmd.(type) {
		case *syntax.ArithmCmd:
			return !counterTest.MatchString(w.between(c.Left, 2, c.Right))
		case *syntax.CallExpr:
			if len(c.Args) == 0 {
				return true
			}
			switch baseName(w.text(c.Args[0])) {
			case "read", "mapfile", "readarray":
				return false // bounded by its input
			case "test", "[":
				return !counterTest.MatchString(w.cmdText(stages[len(stages)-1]))
			}
		}
		return true
	case *syntax.ForClause:
		if !startsBackground(x.Do, 0) {
			return false
		}
		lp, ok := x.Loop.(*syntax.WordIter)
		if !ok {
			// for ((init; cond; step)): no condition runs forever.
			return x.Loop.(*syntax.CStyleLoop).Cond == nil
		}
		n := 0 // (no items: "$@", the caller's arguments, none counted)
		for _, v := range w.expandWords(lp.Items, sc) {
			for _, a := range v {
				if a.dyn && a.origins != 0 {
					return true // a command's output
				}
				n++
			}
		}
		return n > maxLoopJobs
	}
	return false
}

// maxLoopJobs is how many background jobs a loop over a known list may
// start before it counts as without bound.
const maxLoopJobs = 64
