package shellguard

import (
	"path"
	"slices"
	"strings"
)

// Paths in rules are patterns in path.Match syntax, with ~ standing for a
// home directory. An argument that is itself a pattern (cat /etc/sh?dow,
// rm -rf /???) matches a rule when the two patterns can match one common
// path: the shell expands it to whatever exists, and the protected path
// does.

// globTok is one element of a pattern.
type globTok struct {
	kind  byte // 'c' one char, '?' any char but /, '*' any run without /, '[' class
	c     rune
	neg   bool
	class []rune // ranges as pairs lo, hi
}

func globTokens(p string) []globTok {
	var out []globTok
	r := []rune(p)
	for i := 0; i < len(r); i++ {
		// An extended pattern (bash extglob: !(x), @(a|b), *(x), +(x),
		// ?(x)) reads as * here: it matches no more than a run without /,
		// and * covers what it may.
		star := r[i] == '*'
		if strings.ContainsRune("!@*+?", r[i]) && i+1 < len(r) && r[i+1] == '(' {
			if end := closeParen(r, i+1); end > 0 {
				star, i = true, end
			}
		}
		switch {
		case star:
			if len(out) == 0 || out[len(out)-1].kind != '*' {
				out = append(out, globTok{kind: '*'})
			}
		case r[i] == '?':
			out = append(out, globTok{kind: '?'})
		case r[i] == '[':
			j := i + 1
			t := globTok{kind: '['}
			if j < len(r) && (r[j] == '!' || r[j] == '^') {
				t.neg = true
				j++
			}
			start := j
			for j < len(r) && (r[j] != ']' || j == start) {
				lo := r[j]
				if lo == '\\' && j+1 < len(r) {
					j++
					lo = r[j]
				}
				hi := lo
				if j+2 < len(r) && r[j+1] == '-' && r[j+2] != ']' {
					hi = r[j+2]
					j += 2
				}
				t.class = append(t.class, lo, hi)
				j++
			}
			if j >= len(r) {
				out = append(out, globTok{kind: 'c', c: '['})
				continue
			}
			out = append(out, t)
			i = j
		case r[i] == '\\' && i+1 < len(r):
			i++
			fallthrough
		default:
			out = append(out, globTok{kind: 'c', c: r[i]})
		}
	}
	return out
}

// closeParen returns the index of the ) matching the ( at r[open], or -1.
func closeParen(r []rune, open int) int {
	depth := 0
	for i := open; i < len(r); i++ {
		switch r[i] {
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return -1
}

// tokAccepts reports whether a single-character token accepts c.
func tokAccepts(t globTok, c rune) bool {
	switch t.kind {
	case 'c':
		return t.c == c
	case '?', '*':
		return c != '/'
	case '[':
		in := false
		for i := 0; i+1 < len(t.class); i += 2 {
			if c >= t.class[i] && c <= t.class[i+1] {
				in = true
				break
			}
		}
		return in != t.neg && c != '/'
	}
	return false
}

// tokMeet reports whether two single-character tokens accept a common
// character.
func tokMeet(a, b globTok) bool {
	switch {
	case a.kind == 'c':
		return tokAccepts(b, a.c)
	case b.kind == 'c':
		return tokAccepts(a, b.c)
	case a.kind == '?' || b.kind == '?':
		return true // both exclude only '/', and classes hold more than '/'
	}
	// Two classes: try their bounds and a probe of ordinary characters.
	both := func(c rune) bool { return tokAccepts(a, c) && tokAccepts(b, c) }
	if slices.ContainsFunc(a.class, both) || slices.ContainsFunc(b.class, both) {
		return true
	}
	for c := rune(' '); c < 0x7f; c++ {
		if both(c) {
			return true
		}
	}
	return false
}

// globIntersect reports whether some path matches both patterns.
func globIntersect(a, b string) bool {
	ta, tb := globTokens(a), globTokens(b)
	type st struct{ i, j int }
	seen := make(map[st]bool)
	stack := []st{{0, 0}}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[s] {
			continue
		}
		seen[s] = true
		if s.i == len(ta) && s.j == len(tb) {
			return true
		}
		// A star may match nothing.
		if s.i < len(ta) && ta[s.i].kind == '*' {
			stack = append(stack, st{s.i + 1, s.j})
		}
		if s.j < len(tb) && tb[s.j].kind == '*' {
			stack = append(stack, st{s.i, s.j + 1})
		}
		if s.i == len(ta) || s.j == len(tb) {
			continue
		}
		x, y := &ta[s.i], &tb[s.j]
		switch {
		case x.kind == '*' && y.kind == '*':
			stack = append(stack, st{s.i + 1, s.j + 1})
		case x.kind == '*':
			// The star eats y's character.
			if y.kind != 'c' || y.c != '/' {
				stack = append(stack, st{s.i, s.j + 1})
			}
		case y.kind == '*':
			if x.kind != 'c' || x.c != '/' {
				stack = append(stack, st{s.i + 1, s.j})
			}
		default:
			if tokMeet(*x, *y) {
				stack = append(stack, st{s.i + 1, s.j + 1})
			}
		}
	}
	return false
}

// pathMatch reports whether an argument (a pattern when glob is set)
// names a path the rule pattern covers.
func pathMatch(rulePat, arg string, glob bool) bool {
	if glob {
		// Tilde expansion comes before globbing, and a pattern does not
		// match "." or ".." (bash without dotglob): a pattern can only
		// reach ~user or the directory itself when written so.
		if rulePat == "." || rulePat == ".." || strings.HasPrefix(rulePat, "~") != strings.HasPrefix(arg, "~") {
			return false
		}
		return globIntersect(rulePat, arg)
	}
	ok, err := path.Match(rulePat, arg)
	return err == nil && ok
}

// pathForms resolves an argument to the absolute forms it may name.
// cwd is "" for the tool's own work directory, "?" when unknown.
func pathForms(arg, cwd string) []string {
	if arg == "" {
		return nil
	}
	switch {
	case strings.HasPrefix(arg, "/"):
		c := clean(arg)
		// Home directories read as ~ too, so rules need list them once.
		if rest, ok := strings.CutPrefix(c, "/root"); ok && (rest == "" || rest[0] == '/') {
			return []string{c, "~" + rest}
		}
		if rest, ok := strings.CutPrefix(c, "/home/"); ok && rest != "" {
			if i := strings.IndexByte(rest, '/'); i > 0 {
				return []string{c, "~" + rest[i:]}
			}
			return []string{c, "~"}
		}
		return []string{c}
	case arg == "~" || strings.HasPrefix(arg, "~/"):
		if rel := path.Clean(strings.TrimPrefix(arg[1:], "/")); rel == ".." || strings.HasPrefix(rel, "../") {
			// Above the home directory (~/..): /home, or / for root's.
			return []string{clean("/home/user/" + rel), clean("/root/" + rel)}
		}
		return []string{clean(arg)}
	case strings.HasPrefix(arg, "~"):
		// ~user: another account's home directory.
		rest := ""
		if i := strings.IndexByte(arg, '/'); i >= 0 {
			rest = arg[i:]
		}
		return []string{clean(arg), clean("~" + rest), clean("/home/*" + rest)}
	}
	if cwd != "" && cwd != "?" {
		return []string{clean(cwd + "/" + arg), clean(arg)}
	}
	c := clean(arg)
	if cwd == "?" {
		return []string{c, clean("/" + c), clean("~/" + c)}
	}
	if c == ".." || strings.HasPrefix(c, "../") {
		// Above the tool's work directory: anywhere.
		rest := strings.TrimLeft(strings.TrimPrefix(c, ".."), "/")
		for strings.HasPrefix(rest, "../") || rest == ".." {
			rest = strings.TrimLeft(strings.TrimPrefix(rest, ".."), "/")
		}
		return []string{c, clean("/" + rest), clean("~/" + rest)}
	}
	return []string{c}
}

// litPrefix is pattern p up to its first pattern character.
func litPrefix(p string) string {
	if j := strings.IndexAny(p, "*?[\\"); j >= 0 {
		return p[:j]
	}
	return p
}

// clean is path.Clean that keeps a leading ~ component intact.
func clean(p string) string {
	c := path.Clean(p)
	// x/.. is kept as written (x may be a link), but ./. and .// are the
	// directory itself.
	if c == "." && p != "." && (strings.Contains(p, "..") || strings.Trim(p, "./") != "") {
		return p
	}
	return c
}

// ancestorOf reports whether dir is a directory above the rule path.
func ancestorOf(dir, rulePat string) bool {
	if dir == "/" {
		return strings.HasPrefix(rulePat, "/") && rulePat != "/"
	}
	return strings.HasPrefix(rulePat, dir+"/")
}
