package shellsyntax

import (
	"regexp"
	"slices"
	"strings"
)

// Effects: the options of a command line that do more than the program's
// name and its first words say. An approval rule for `git log` speaks
// for reading history, not for `git log --output=.git/config` (a file
// written) or `git -c core.pager=./x log` (a program run): the exec
// toolset's rules (policy/execrules) do not cover an effect the rule does
// not name. What counts is the grammar table's (WriteOpts, RunOpts, the
// code, module, split and program options, and git's subcommands and
// settings in git.go).

// EffectKind says what an option does beyond the command's words.
type EffectKind uint8

const (
	EffectWrites  EffectKind = iota + 1 // writes a file (git log --output, sort -o, sed -i)
	EffectRuns                          // runs a program or code it names or finds (git -c core.pager=, --exec-path, make -f)
	EffectUnknown                       // a word not known before the command runs, where an option could stand
)

// Effect is one such option.
type Effect struct {
	Kind EffectKind
	Word int    // the word holding the option
	Name string // the option's name without dashes ("output", "c"), or the verb ("run")
}

// Effects lists the options of w's command line that write a file or
// name a program, read against the program's grammar (its subcommand's,
// for git), and the words not known before it runs that may be such an
// option. A program the table does not know has none.
func Effects(w Words) []Effect {
	name, ok := w.Text(0)
	if !ok {
		return nil
	}
	g := GrammarOf(name)
	if g == nil {
		return nil
	}
	var out []Effect
	if g.Role == RoleFind {
		// find's primaries are single-dash words anywhere on its line.
		for i := 1; i < w.Len(); i++ {
			if t, ok := w.Text(i); ok && strings.HasPrefix(t, "-") && slices.Contains(g.WriteLong, t[1:]) {
				out = append(out, Effect{Kind: EffectWrites, Word: i, Name: t[1:]})
			}
		}
		return out
	}
	isAssign := func(i int) bool { return w.IsAssign(i) }
	sub := -1
	for o := range g.Options(w, 1, isAssign) {
		if o.Kind == OptOperand && g.Subcommand {
			if t, known := w.Text(o.Word); !known && (t == "" || t[0] == '-') {
				// git $X: the subcommand, or an option, is not known.
				out = append(out, Effect{Kind: EffectUnknown, Word: o.Word})
			}
			sub = o.Word
			break
		}
		out = g.effect(w, o, out)
	}
	if g == sedGrammar {
		out = append(out, sedEffects(w)...)
	}
	if sub < 0 {
		return out
	}
	verb, ok := w.Text(sub)
	if !ok {
		return out
	}
	sg := g.Verb(verb)
	ops := 0
	for o := range sg.Options(w, sub+1, isAssign) {
		if o.Kind == OptOperand {
			t, known := w.Text(o.Word)
			switch {
			case known && ops == 0 && gitRunVerbs[verb] == t:
				out = append(out, Effect{Kind: EffectRuns, Word: o.Word, Name: t})
			case known && ops == 0 && gitWriteVerbs[verb] == t:
				out = append(out, Effect{Kind: EffectWrites, Word: o.Word, Name: t})
			case verb == "config" && ops == 0:
				out = append(out, gitConfigEffects(w, o.Word)...)
			default:
				out = sg.effect(w, o, out)
			}
			ops++
			continue
		}
		out = sg.effect(w, o, out)
	}
	return out
}

// effect appends what option o does beyond the command's words, if
// anything.
func (g *Grammar) effect(w Words, o Opt, out []Effect) []Effect {
	add := func(k EffectKind) []Effect { return append(out, Effect{Kind: k, Word: o.Word, Name: o.Name}) }
	switch o.Kind {
	case OptOperand:
		if t, known := w.Text(o.Word); !known && (t == "" || t[0] == '-') && g.hasEffects() {
			return add(EffectUnknown)
		}
		return out
	case OptEnd, OptAssign:
		return out
	case OptCode, OptProg:
		if g.Role == RoleInterp || g.Role == RoleShell {
			return out // the program's own code: what it is run for
		}
		fallthrough
	case OptMod, OptSplit:
		if (g.Subcommand || g == gitClone) && (o.Name == "c" || o.Name == "config" || o.Name == "config-env") {
			// git -c KEY=VALUE: only a key that names a program.
			v, known := optValue(w, o)
			key, _, _ := strings.Cut(v, "=")
			if known && !GitKeyRuns(key) {
				return out
			}
		}
		if o.Name == "exec-path" && g.Subcommand && !o.Attached && o.ValueWord < 0 {
			return out // git --exec-path alone prints the path
		}
		return add(EffectRuns)
	}
	if o.Long && slices.Contains(g.WriteLong, o.Name) || !o.Long && len(o.Name) == 1 && strings.Contains(g.WriteOpts, o.Name) {
		return add(EffectWrites)
	}
	if o.Long && slices.Contains(g.RunLong, o.Name) || !o.Long && len(o.Name) == 1 && strings.Contains(g.RunOpts, o.Name) {
		return add(EffectRuns)
	}
	if o.Long && !g.OneDash {
		// getopt_long and git take a long option's unambiguous prefix:
		// --outp is --output.
		switch {
		case abbreviates(o.Name, g.WriteLong):
			return add(EffectWrites)
		case abbreviates(o.Name, g.RunLong, g.CodeLong, g.ModLong, g.ProgLong, g.SplitLong):
			return add(EffectRuns)
		}
	}
	return out
}

// notAbbreviations are whole options that are also the start of an
// effect option's name (git diff --text, not --textconv).
var notAbbreviations = WordSet("text no")

// abbreviates reports whether name is a prefix, of three letters or
// more, of one of the names.
func abbreviates(name string, sets ...[]string) bool {
	if len(name) < 3 || notAbbreviations[name] {
		return false
	}
	for _, set := range sets {
		if slices.ContainsFunc(set, func(n string) bool { return strings.HasPrefix(n, name) }) {
			return true
		}
	}
	return false
}

// hasEffects reports whether any option of g writes or runs.
func (g *Grammar) hasEffects() bool {
	return g.WriteOpts != "" || len(g.WriteLong) > 0 || g.RunOpts != "" || len(g.RunLong) > 0 ||
		g.CodeOpts != "" || len(g.CodeLong) > 0 || g.ModOpts != "" || len(g.ModLong) > 0 ||
		g.ProgOpts != "" || len(g.ProgLong) > 0 || g.SplitOpts != "" || len(g.SplitLong) > 0 || g.Subcommand
}

// optValue is option o's value and whether it is known.
func optValue(w Words, o Opt) (string, bool) {
	switch {
	case o.Attached:
		return o.Value, true
	case o.ValueWord >= 0:
		return w.Text(o.ValueWord)
	}
	return "", true
}

// gitConfigEffects reads git config's operands from word i: a write of a
// key that names a program (git config KEY VALUE, git config set KEY
// VALUE, --add, --replace-all) is an effect; reading one is not.
func gitConfigEffects(w Words, i int) []Effect {
	var ops []int
	for k := i; k < w.Len(); k++ {
		t, known := w.Text(k)
		if known && strings.HasPrefix(t, "-") {
			continue
		}
		ops = append(ops, k)
	}
	if len(ops) == 0 {
		return nil
	}
	first, _ := w.Text(ops[0])
	if first == "edit" {
		return []Effect{{Kind: EffectRuns, Word: ops[0], Name: "edit"}}
	}
	k := GitConfigKey(first, len(ops))
	if k < 0 {
		return nil
	}
	if key, known := w.Text(ops[k]); !known || GitKeyRuns(key) {
		return []Effect{{Kind: EffectRuns, Word: ops[k], Name: "config"}}
	}
	return nil
}

// sedEffects reads sed's script (its program operand and -e values):
// the w and W commands and the s///w flag write a file, the e command
// and the s///e flag run one.
func sedEffects(w Words) []Effect {
	r := Read(w)
	var out []Effect
	check := func(word int, text string, known bool) {
		if !known || sedWrites.MatchString(text) || slices.ContainsFunc(sedSubstFlags, func(re *regexp.Regexp) bool { return re.MatchString(text) }) {
			out = append(out, Effect{Kind: EffectWrites, Word: word, Name: "script"})
		}
	}
	if r.Code >= 0 {
		t, known := w.Text(r.Code)
		check(r.Code, t, known)
	}
	for _, o := range r.Opts {
		if o.Kind == OptCode {
			v, known := optValue(w, o)
			check(o.Word, v, known)
		}
	}
	return out
}

// sedWrites matches sed's w, W and e commands (after an optional
// address).
var sedWrites = regexp.MustCompile(`(^|[;{}\n])\s*(\d+|\$|/[^/]*/)?(\s*,\s*(\d+|\$|/[^/]*/))?\s*!?\s*[wWe](\s|$)`)

// sedSubstFlags match an s command with the w or e flag, one per common
// delimiter (RE2 has no back-references).
var sedSubstFlags = func() []*regexp.Regexp {
	var out []*regexp.Regexp
	for _, d := range "/|#:,@!_" {
		q := regexp.QuoteMeta(string(d))
		part := `([^` + q + `\\]|\\.)*`
		out = append(out, regexp.MustCompile(`(^|[;{}\s])s`+q+part+q+part+q+`[gpiImM0-9]*[we]`))
	}
	return out
}()
