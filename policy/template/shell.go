package template

// Shell tool rendering. A shell template that is one simple command runs as
// an argv with no shell at all: it is parsed with mvdan.cc/sh (the parser
// the deny rules use), placeholders standing as sentinel words, and each
// placeholder then becomes exactly one argv element (or is inserted verbatim
// into the element it shares with literal text, as in --name={{x}}).
// Anything else runs as sh -c text in which every value is one single-quoted
// word. In both modes:
//
//   - ValidateShell's checks run first (see shell_check.go and
//     shell_rules.go): a placeholder is only allowed where a quoted
//     value is one literal word, and never where it would be the program or
//     code;
//   - a value that starts with "-" at the start of a word is refused unless
//     the word follows a literal "--" of its program or the parameter is in
//     ShellOptions.AllowDash, so an argument cannot become an option
//     (curl {{url}} with --upload-file=/etc/passwd). In a word with an
//     unquoted brace or glob character every value counts as starting a
//     word (bash turns rm {,{{f}}} into rm -rf);
//   - in a curl command, a value starting with "@" or "<" at the start of
//     a word or after a literal "=" is refused (curl -d @/etc/passwd reads
//     the file);
//   - a value starting a word that its program reads as an option or a
//     target without a "-" (the grammar's OperandForms, policy/shellsyntax:
//     dig's @server and +option, rsync's and scp's host:path, dd's and
//     make's NAME=value, ps' BSD options) is refused, after "--" too,
//     which these programs do not honour for such forms;
//   - a value holding a NUL byte is refused: no command line can carry it.
//
// Missing arguments are errors here (no AllowMissing): dropping a word
// would shift the others into different roles.

import (
	"strings"

	"github.com/toolcage/toolcage/policy/shellsyntax"
)

// Shell rendering modes.
const (
	ShellModeArgv  = "argv"  // run Argv directly, no shell
	ShellModeShell = "shell" // run sh -c Command
)

// ShellRendering is a rendered shell command.
type ShellRendering struct {
	// Mode is ShellModeArgv or ShellModeShell.
	Mode string `json:"mode"`
	// Argv is the command to exec, for ShellModeArgv.
	Argv []string `json:"argv,omitempty"`
	// Command is the text for sh -c, for ShellModeShell.
	Command string `json:"command,omitempty"`
	// Env is the environment the tool sets for the command (its env:
	// block), shown with it: a variable may be what runs.
	Env map[string]string `json:"env,omitempty"`
}

// ShellOptions controls RenderShell.
type ShellOptions struct {
	// AllowDash names the parameters whose schema allows a leading "-"
	// (a negative number, say). Other parameters may not start with "-"
	// where a program would read them as an option.
	AllowDash map[string]bool
	// Secrets looks up {{secret.NAME}}; nil means secrets are not available.
	// A secret is placed like any value (quoted, one word), is exempt from
	// the option rule (the operator chose it, not the caller), and is
	// visible to other local users in the process list while the command
	// runs: pass secrets through the environment where the program allows.
	Secrets func(name string) (string, error)
}

// CompiledShell is a checked shell template, ready to render many times.
// It is immutable and safe for concurrent use.
type CompiledShell struct {
	t    *Template
	mode string
	// argv holds the words of the command in argv mode.
	argv [][]piece
	// checks holds the words whose values are checked at render time
	// (checkWord), their pieces normalized.
	checks []*word
}

// ValidateShell checks a shell tool's command at creation: it must
// parse, and no placeholder may sit inside quotes, $(...), `...`, ${...},
// arithmetic, [[ ]], a comment or a here-document, right after "\" or "$",
// in command position, or where the program treats it as code or as a
// variable name. The error is an *Error naming the position.
func ValidateShell(command string) error {
	_, err := CompileShell(command)
	return err
}

// CompileShell parses and checks a shell template once; see
// ValidateShell.
func CompileShell(command string) (*CompiledShell, error) {
	t, err := Parse(command)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(command) == "" {
		return nil, errorAt(command, 0, "the command is empty")
	}
	c, err := check(t)
	if err != nil {
		return nil, err
	}
	if len(c.cmds) == 0 && len(c.nested) == 0 && len(c.loose) == 0 {
		return nil, errorAt(command, 0, "the command has no words")
	}
	cs := &CompiledShell{t: t, mode: ShellModeShell}
	for _, cmd := range c.cmds {
		cs.addChecks(cmd)
	}
	cs.addChecks(c.loose)
	if argv, ok := c.argv(); ok {
		cs.mode, cs.argv = ShellModeArgv, argv
	}
	return cs, nil
}

// addChecks keeps the words whose values are checked at render time.
func (c *CompiledShell) addChecks(ws []*word) {
	for _, w := range ws {
		// After "--" only what a program does with an operand is left to
		// check (curl's URLs), not where an option may start.
		if w.hasPH && !w.redir && (!w.afterDD || w.curlOpt != "" || w.forms != "") {
			w.pieces = normPieces(w.pieces)
			c.checks = append(c.checks, w)
		}
	}
}

// normPieces merges adjacent literals and drops empty ones.
func normPieces(ps []piece) []piece {
	out := make([]piece, 0, len(ps))
	for _, p := range ps {
		switch {
		case p.ph >= 0:
			out = append(out, p)
		case p.lit == "":
		case len(out) > 0 && out[len(out)-1].ph < 0:
			out[len(out)-1].lit += p.lit
		default:
			out = append(out, p)
		}
	}
	return out
}

// Mode reports how the template runs: ShellModeArgv or ShellModeShell.
func (c *CompiledShell) Mode() string { return c.mode }

// Template returns the parsed template.
func (c *CompiledShell) Template() *Template { return c.t }

// RenderShell checks and renders a shell template in one go; a caller that
// renders the same command often can CompileShell it once instead.
func RenderShell(command string, args map[string]any, opts ShellOptions) (*ShellRendering, error) {
	c, err := CompileShell(command)
	if err != nil {
		return nil, err
	}
	return c.Render(args, opts)
}

// Render renders the command for one call. Every placeholder's argument
// must be present (a *MissingArgumentError otherwise); a value refused by
// the option or NUL rule is an *ArgumentError.
func (c *CompiledShell) Render(args map[string]any, opts ShellOptions) (*ShellRendering, error) {
	vals, err := c.values(args, opts)
	if err != nil {
		return nil, err
	}
	for _, w := range c.checks {
		if err := c.checkWord(w, vals, opts); err != nil {
			return nil, err
		}
	}
	if c.mode == ShellModeArgv {
		argv := make([]string, len(c.argv))
		for i, w := range c.argv {
			argv[i] = text(w, vals)
		}
		return &ShellRendering{Mode: ShellModeArgv, Argv: argv}, nil
	}
	// With no values source, render fails only if the escaper does.
	cmd, _ := c.t.render(nil, func(i int, _ Placeholder, _ any, _ bool) (string, error) {
		return ShellQuote(vals[i]), nil
	})
	return &ShellRendering{Mode: ShellModeShell, Command: cmd}, nil
}

// text is the word ps with vals in place of its placeholders.
func text(ps []piece, vals []string) string {
	if len(ps) == 1 && ps[0].ph >= 0 {
		return vals[ps[0].ph]
	}
	var b strings.Builder
	for _, p := range ps {
		if p.ph >= 0 {
			b.WriteString(vals[p.ph])
		} else {
			b.WriteString(p.lit)
		}
	}
	return b.String()
}

// checkWord applies the option rule, and for curl the file rules, to one
// word: its rendered value must not start with "-" (where it starts the
// word) or, for curl's words (curlOpt), with "@" or "<" (where it starts
// the word or follows a literal "="). In a word with an unquoted brace or
// glob character (glob), bash's brace expansion ({,x}) can make any value
// start a word.
func (c *CompiledShell) checkWord(w *word, vals []string, opts ShellOptions) error {
	atStart, prevEq := true, false
	for _, p := range w.pieces {
		if p.ph < 0 {
			atStart, prevEq = w.glob, strings.HasSuffix(p.lit, "=")
			continue
		}
		v, ph := vals[p.ph], c.t.phs[p.ph]
		if v == "" {
			continue // the next piece starts where this one would have
		}
		if atStart && v[0] == '-' && !w.afterDD && !ph.Secret && !opts.AllowDash[ph.Name] {
			return &ArgumentError{Name: ph.Name, Msg: "starts with \"-\" where the command would read it as an option; the parameter must allow a leading \"-\" (or the template must put \"--\" before it)"}
		}
		if atStart && v[0] == '+' && w.plusRule && !w.afterDD && !ph.Secret && !opts.AllowDash[ph.Name] {
			return &ArgumentError{Name: ph.Name, Msg: "starts with \"+\", which this program reads as a command to run (less +!cmd, vi +cmd); the template must put \"--\" before it"}
		}
		if (atStart || prevEq) && (v[0] == '@' || v[0] == '<') && w.curlOpt != "" && !ph.Secret {
			return &ArgumentError{Name: ph.Name, Msg: "starts with \"" + v[:1] + "\", which makes curl read a local file"}
		}
		if atStart && w.forms != "" && !ph.Secret {
			if msg := operandForm(w.forms, w.prog, v); msg != "" {
				return &ArgumentError{Name: ph.Name, Msg: msg}
			}
		}
		atStart, prevEq = w.glob, false
	}
	if w.curlOpt != "" {
		return checkCurlWord(w, vals, c.t.phs)
	}
	return nil
}

// operandForm is why value v, starting an operand of program prog, is more
// than data there (forms: its Grammar.OperandForms), or "". No "--" helps:
// these programs read the forms after it too.
func operandForm(forms, prog, v string) string {
	switch {
	case (v[0] == '@' || v[0] == '+') && strings.IndexByte(forms, v[0]) >= 0:
		what := "a server to ask"
		if v[0] == '+' {
			what = "a query option"
		}
		return "starts with \"" + v[:1] + "\", which " + prog + " reads as " + what + ", not a name"
	case strings.IndexByte(forms, ':') >= 0 && hostPath(v):
		return "reads as HOST:PATH, which " + prog + " takes as another host's file; write it as ./" + v + " for a local one"
	case strings.IndexByte(forms, '=') >= 0 && assignment(v):
		return "reads as NAME=value, which " + prog + " takes as an option or a variable to set, not an operand"
	case strings.IndexByte(forms, 'a') >= 0 && (v[0] >= 'a' && v[0] <= 'z' || v[0] >= 'A' && v[0] <= 'Z'):
		return "starts with a letter, which " + prog + " reads as options (ps e prints every process' environment); pass it as an option's value"
	}
	return ""
}

// hostPath reports a value rsync or scp reads as HOST:PATH (or HOST::MODULE,
// or an rsync:// URL): a ":" before any "/".
func hostPath(v string) bool {
	colon, slash := strings.IndexByte(v, ':'), strings.IndexByte(v, '/')
	return colon >= 0 && (slash < 0 || colon < slash)
}

// assignment reports a value that starts NAME=.
func assignment(v string) bool {
	eq := strings.IndexByte(v, '=')
	return eq > 0 && strings.Trim(v[:eq], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == "" && !strings.HasPrefix(v, "-")
}

// values resolves the text of every placeholder, by index, through the one
// template renderer.
func (c *CompiledShell) values(args map[string]any, opts ShellOptions) ([]string, error) {
	vals := make([]string, len(c.t.phs))
	src := newTmplValues(args, opts.Secrets)
	for i, p := range c.t.phs {
		v, ok, err := src.lookup(p)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, &MissingArgumentError{Name: p.Name}
		}
		s, err := ValueText(v)
		if err != nil {
			return nil, &ArgumentError{Name: phName(p), Msg: err.Error()}
		}
		if strings.IndexByte(s, 0) >= 0 {
			return nil, &ArgumentError{Name: phName(p), Msg: "contains a NUL byte, which a command line cannot carry"}
		}
		vals[i] = s
	}
	return vals, nil
}

// ShellQuote returns s as one single-quoted shell word. A single quote in
// s closes the quoting, is written escaped, and reopens it:
//
//	it's  ->  'it'\''s'
func ShellQuote(s string) string { return shellsyntax.Quote(s) }
