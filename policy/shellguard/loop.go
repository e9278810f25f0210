package shellguard

import (
	"regexp"
	"strings"
)

// A loop that starts a background job on every round and has no bound
// (while true, for ((;;)), for over a command's output or a huge range)
// starts processes without end: the shell form of a fork bomb.

// startsBackground reports whether a loop body runs a job in the
// background (&) itself, not only inside a function it defines.
func startsBackground(l *cmdList, depth int) bool {
	if l == nil || depth > 4 {
		return false
	}
	for _, ao := range l.items {
		if ao.bg {
			return true
		}
		for _, p := range ao.pipes {
			for _, c := range p.cmds {
				if c.kind == cmdFunc || c.kind == cmdSimple {
					continue
				}
				for _, sub := range c.lists {
					if startsBackground(sub, depth+1) {
						return true
					}
				}
			}
		}
	}
	return false
}

// counterTest is a condition comparing a counter: the loop ends.
var counterTest = regexp.MustCompile(`(^|\s)(-lt|-le|-gt|-ge|<|<=|>|>=)(\s|$)`)

// unbounded reports whether loop c may run without end.
func (w *walker) unbounded(c *command, sc *scope) bool {
	switch c.kind {
	case cmdLoop:
		cond := c.lists[0]
		if cond == nil || len(cond.items) == 0 {
			return true
		}
		first := cond.items[0]
		if len(first.pipes) == 0 || len(first.pipes[0].cmds) == 0 {
			return true
		}
		cmd := first.pipes[0].cmds[len(first.pipes[0].cmds)-1]
		if cmd.kind != cmdSimple || len(cmd.words) == 0 {
			return cmd.kind != cmdArith || !counterTest.MatchString(wordsText(cmd.words))
		}
		switch baseName(cmd.words[0].raw) {
		case "read", "mapfile", "readarray":
			return false // bounded by its input
		case "test", "[", "[[":
			return !counterTest.MatchString(wordsText(cmd.words))
		}
		return true
	case cmdFor:
		if c.name == "" {
			// for ((init; cond; step)): no condition runs forever.
			if len(c.words) == 0 {
				return true
			}
			parts := strings.Split(c.words[0].raw, ";")
			return len(parts) != 3 || strings.TrimSpace(parts[1]) == ""
		}
		if len(c.words) == 0 {
			return false // "$@": the caller's arguments
		}
		n := 0
		for _, v := range w.expandWords(c.words, sc) {
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

func wordsText(ws []*word) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.raw
	}
	return strings.Join(parts, " ")
}
