package shellsyntax

import (
	"iter"
	"slices"
	"strings"
)

// OptKind is what one word (or one letter of an option cluster) of a
// command line is, read against the program's grammar.
type OptKind uint8

const (
	OptOperand OptKind = iota // not an option: an operand
	OptEnd                    // "--": the options end here
	OptAssign                 // NAME=value among the options (Grammar.Assigns)
	OptFlag                   // an option without a value
	OptShell                  // Grammar.ShellFlags: the operands are shell text
	OptStdin                  // Grammar.StdinFlags: the program comes from standard input
	OptJoinOff                // Grammar.JoinOff: the operands are not joined
	OptValue                  // takes a plain value
	OptCode                   // its value is code
	OptMod                    // its value names code loaded too (perl -M)
	OptSplit                  // its value is split into words (env -S)
	OptProg                   // its value is the program file (awk -f)
)

// Rest is where the operands start when the walk stops at o (an operand
// or "--").
func (o Opt) Rest() int {
	if o.Kind == OptEnd {
		return o.Word + 1
	}
	return o.Word
}

// TakesValue says whether an option of kind k takes a value.
func (k OptKind) TakesValue() bool { return k >= OptValue }

// Opt is one step of a command line's option walk.
type Opt struct {
	Kind OptKind
	Word int    // index of the word holding the option (or operand)
	Name string // the option without its dashes: "c", "command"
	Long bool   // written --name
	// Value is the value written in the option's own word (after "=" or
	// after the letter), when Attached.
	Value    string
	Attached bool
	// ValueWord is the index of the next word when it is the value; -1 when
	// the value is attached or missing (the line ends).
	ValueWord int
	// NoExec: the letter is in Grammar.NoExec (nothing runs).
	NoExec bool
}

// Options walks the options of w's words from word from on against g (the
// reader, Read, is its caller). A word whose text is not known is an
// operand, unless what is known of it is an option whose value runs on
// into the rest (--to-command=$X); isAssign, asked only when g.Assigns and before the first
// operand, says whether word i is a NAME=value assignment. The walk ends
// after "--" and, unless g.Permute, after the first operand.
func (g *Grammar) Options(w Words, from int, isAssign func(i int) bool) iter.Seq[Opt] {
	return func(yield func(Opt) bool) {
		seenOperand := false
		n := w.Len()
		for i := from; i < n; i++ {
			t, known := w.Text(i)
			o := Opt{Kind: OptFlag, Word: i, ValueWord: -1}
			part, isPart := o, false
			if !known {
				part, isPart = g.partial(t, i)
			}
			switch {
			case known && t == "--":
				o.Kind = OptEnd
				yield(o)
				return
			case known && t == "-" && g.DashOpt && !seenOperand:
			case isPart:
				o = part
			case !known || len(t) < 2 || t[0] != '-' && !(g.Plus && t[0] == '+'):
				if g.Assigns && !seenOperand && isAssign(i) {
					o.Kind = OptAssign
					break
				}
				seenOperand = true
				o.Kind = OptOperand
				if !yield(o) || !g.Permute {
					return
				}
				continue
			case strings.HasPrefix(t, "--") || g.OneDash && t[0] == '-':
				// --name, or -name where every option is long (gdb -ex, emacs -eval)
				name, val, hasEq := strings.Cut(strings.TrimPrefix(t[1:], "-"), "=")
				o = Opt{Kind: g.longKind(name), Word: i, Name: name, Long: true, Value: val, Attached: hasEq, ValueWord: -1}
				if o.Kind.TakesValue() && !hasEq && !slices.Contains(g.OptLong, name) {
					if i+1 < n {
						o.ValueWord = i + 1
					}
					i++
				}
			case g.Numeric && t[1] >= '0' && t[1] <= '9':
				o.Name = t[1:]
			default:
				word := i
				for k := 1; k < len(t); k++ {
					ch := t[k]
					o := Opt{Kind: g.shortKind(ch), Word: word, Name: t[k : k+1], ValueWord: -1, NoExec: strings.IndexByte(g.NoExec, ch) >= 0}
					switch {
					case o.Kind == OptValue && strings.IndexByte(g.OptOpts, ch) >= 0:
						o.Value, o.Attached = t[k+1:], k+1 < len(t)
						k = len(t)
					case o.Kind.TakesValue() && g.Clustered && k+1 < len(t):
						// sh -oc: the letters after -o are flags too; a
						// value comes only after the cluster's last letter.
					case o.Kind.TakesValue():
						o.Value, o.Attached = t[k+1:], k+1 < len(t)
						if !o.Attached {
							if i+1 < n {
								o.ValueWord = i + 1
							}
							i++
						}
						k = len(t)
					}
					if !yield(o) {
						return
					}
				}
				continue
			}
			if !yield(o) {
				return
			}
		}
	}
}

// partial reads a word known only up to t as an option whose value is
// code (or names it) and runs on into what is not known (--to-command=$X,
// -oProxyCommand=$X, -e$X); any other such word stays an operand.
func (g *Grammar) partial(t string, i int) (Opt, bool) {
	if strings.HasPrefix(t, "--") || g.OneDash && strings.HasPrefix(t, "-") {
		if name, val, ok := strings.Cut(strings.TrimPrefix(t[1:], "-"), "="); ok && g.longKind(name) > OptValue {
			return Opt{Kind: g.longKind(name), Word: i, Name: name, Long: true, Value: val, Attached: true, ValueWord: -1}, true
		}
		return Opt{}, false
	}
	for k := 1; k < len(t) && t[0] == '-'; k++ {
		if kind := g.shortKind(t[k]); kind.TakesValue() {
			return Opt{Kind: kind, Word: i, Name: t[k : k+1], Value: t[k+1:], Attached: true, ValueWord: -1}, kind > OptValue
		}
	}
	return Opt{}, false
}

// optSet is one of a grammar's option sets.
type optSet struct {
	kind  OptKind
	short string
	long  []string
}

// optSets are g's option sets in order of precedence: a letter or name in
// more than one takes the first (code, module, split, program, value,
// shell, stdin, join-off).
func (g *Grammar) optSets() [9]optSet {
	return [...]optSet{
		{OptCode, g.CodeOpts, g.CodeLong}, {OptMod, g.ModOpts, g.ModLong}, {OptSplit, g.SplitOpts, g.SplitLong},
		{OptProg, g.ProgOpts, g.ProgLong}, {OptValue, g.ValueOpts, g.ValueLong}, {OptValue, g.OptOpts, g.OptLong},
		{OptShell, g.ShellFlags, nil}, {OptStdin, g.StdinFlags, nil}, {OptJoinOff, g.JoinOff, nil},
	}
}

// shortKind reads option letter ch.
func (g *Grammar) shortKind(ch byte) OptKind {
	for _, s := range g.optSets() {
		if strings.IndexByte(s.short, ch) >= 0 {
			return s.kind
		}
	}
	return OptFlag
}

// longKind reads long option name (without dashes or "=value").
func (g *Grammar) longKind(name string) OptKind {
	for _, s := range g.optSets() {
		if slices.Contains(s.long, name) {
			return s.kind
		}
	}
	if g.UnknownVal && !slices.Contains(g.FlagLong, name) {
		return OptValue
	}
	return OptFlag
}
