package shellguard

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/yaml"
)

// Shell deny rules are checked on a shell command before it runs: the
// rendered template (CheckCommand) or an argument vector run without a
// shell (CheckArgv). The text is parsed as the shell parses it, every
// command it may run is collected (pipeline stages, lists, subshells,
// substitutions, what wrappers such as env, sudo, xargs, find -exec and
// sh -c run, decoded payloads, shell-outs in inline interpreter code) and
// each is matched against the rules. Matching uses normalised words;
// what runs is always the original text.
//
// Rules come in groups that can be switched off one by one; group "parse"
// (text that cannot be analysed: unbalanced quotes, NUL, control
// characters, deep nesting, more than 64 KiB, command names only known at
// run time) is built in and always on.

// GroupParse is the built-in group of refusals for text the rules
// cannot analyse; it cannot be disabled.
const GroupParse = "parse"

// GroupUser is the group of Options.Extra rules that
// name none.
const GroupUser = "user"

// DeniedError reports the rule a shell command broke.
type DeniedError struct {
	Group       string // rule group, such as "disk_destruction" or "parse"
	Rule        string // rule name within the group
	Description string // what the rule guards against
	Segment     string // the command (after normalisation) the rule matched
}

func (e *DeniedError) Error() string {
	if e.NotParsed() {
		// Not a judgement that the command is dangerous: it was not read.
		return fmt.Sprintf("refused by %s/%s: %s (in %s)", e.Group, e.Rule, e.Description, strconv.Quote(e.Segment))
	}
	return fmt.Sprintf("denied by shell rule %s/%s: %s (in %s)", e.Group, e.Rule, e.Description, strconv.Quote(e.Segment))
}

// NotParsed reports a refusal of text that is not valid shell (unbalanced
// quotes, a syntax error): nothing in it was found dangerous.
func (e *DeniedError) NotParsed() bool {
	return e.Group == GroupParse && (e.Rule == "unbalanced" || e.Rule == "syntax")
}

// VerdictDeny and VerdictAsk are a group's verdicts (verdict: in the
// rules file): a deny group refuses what its rules match, an ask group
// (what destroys work in a workspace) has a person decide.
const (
	VerdictDeny = "deny"
	VerdictAsk  = "ask"
)

// AskError reports that a command matched a rule of an ask group and no
// deny rule: a person decides whether it runs.
type AskError struct {
	Group       string // rule group, such as "workspace_work"
	Rule        string // rule name within the group
	Description string // what the command would destroy
	Segment     string // the command (after normalisation) the rule matched
}

func (e *AskError) Error() string {
	return fmt.Sprintf("asks a person: %s (shell rule %s/%s, in %s)", e.Description, e.Group, e.Rule, strconv.Quote(e.Segment))
}

// Rule is one deny rule. Every condition that is set must hold; a rule
// needs at least one of command, targets, assign, regex, code_regex or
// detect.
type Rule struct {
	// Name identifies the rule within its group: ^[a-z][a-z0-9_]*$.
	Name string `json:"name"`
	// Description says what the rule guards against; it is shown in
	// refusals.
	Description string `json:"description,omitempty"`
	// Group is the group of a rule passed in Options.Extra;
	// "user" when empty. Ignored in the rules file.
	Group string `json:"group,omitempty"`
	// Command lists command base names (/bin/rm is rm), compared case
	// insensitively; path.Match patterns such as "mkfs.*" are allowed.
	Command []string `json:"command,omitempty"`
	// ExceptCommand lists commands the rule does not apply to.
	ExceptCommand []string `json:"except_command,omitempty"`
	// Flags lists options of which one must be present: "-r" matches
	// clusters such as -rf, "--recursive" matches its abbreviations
	// (--rec) and --recursive=value.
	Flags []string `json:"flags,omitempty"`
	// ArgRegex must match one argument (after the command name) by itself,
	// unless that argument also matches ArgExcept.
	ArgRegex  string `json:"arg_regex,omitempty"`
	ArgExcept string `json:"arg_except,omitempty"`
	// ArgsRegex must match the arguments joined with single spaces.
	ArgsRegex string `json:"args_regex,omitempty"`
	// ArgsExcept turns the rule off when the joined arguments match it
	// (fdisk -l only lists).
	ArgsExcept string `json:"args_except,omitempty"`
	// Targets lists protected paths (path.Match patterns, ~ for a home
	// directory). It matches when an operand, the value of a key=value or
	// --opt=value operand, or a redirection target resolves to one of
	// them; an operand that is itself a pattern matches when both could
	// name one path.
	Targets []string `json:"targets,omitempty"`
	// TargetsExcept lists paths Targets does not cover (~/.ssh/*.pub).
	TargetsExcept []string `json:"targets_except,omitempty"`
	// Access "write" limits Targets to what a command writes: output
	// redirections and the operands of writing commands (tee, cp's
	// destination, dd of=, sed -i...). Default "any".
	Access string `json:"access,omitempty"`
	// Ancestors extends Targets to directories above a protected path
	// (tar czf x.tgz ~/.ssh).
	Ancestors bool `json:"ancestors,omitempty"`
	// Assign lists variable names (patterns) whose assignment is denied:
	// NAME=value before a command or alone, env NAME=value, export,
	// declare, typeset, local, readonly.
	Assign []string `json:"assign,omitempty"`
	// Regex is matched against the normalised command: assignments, base
	// name, arguments and redirections, joined with spaces. Quotes are
	// gone, so anchor on the command name.
	Regex string `json:"regex,omitempty"`
	// CodeRegex is matched against inline interpreter code (python -c,
	// perl -e, node -e, awk programs, code piped into an interpreter);
	// Command then limits the interpreters.
	CodeRegex string `json:"code_regex,omitempty"`
	// Detect names a structural detector: fork_bomb, spawn_loop (a loop
	// without a bound starts a background job each round),
	// output_to_network (a command's output is in a network tool's
	// arguments: a host name, URL, header or body), shell_input (a shell or
	// interpreter runs text from Sources), shell_to_socket (a shell's output
	// is piped into a socket tool), metadata_address (a word or interpreter
	// string names a cloud metadata endpoint by address, in any spelling).
	Detect string `json:"detect,omitempty"`
	// Sources limits shell_input to text from: fetch (curl, wget...),
	// socket (nc, /dev/tcp...), decode (base64 -d, xxd -r, generated by
	// an interpreter...).
	Sources []string `json:"sources,omitempty"`
	// With requires one of these commands to run somewhere in the same
	// command text (mkfifo with nc).
	With []string `json:"with,omitempty"`
	// ExceptLoopback turns the rule off for a network command whose every
	// address is this machine (curl -d @body.json http://127.0.0.1:8080/).
	ExceptLoopback bool `json:"except_loopback,omitempty"`
	// ExceptFiltered turns the rule off for a listing piped straight into
	// grep for named variables (env | grep ^GO, printenv | grep -i proxy:
	// not an inverted match, not a pattern file, no name that reads as a
	// credential) or into wc.
	ExceptFiltered bool `json:"except_filtered,omitempty"`
}

// Options adjusts a rule set.
type Options struct {
	// DisabledGroups switches groups off; an unknown name is an error.
	DisabledGroups []string
	// Extra adds rules, to group "user" unless they name one.
	Extra []Rule
}

// Rules is a compiled rule set. It is immutable and safe for
// concurrent use.
type Rules struct {
	groups []*ruleGroup
	// deny holds the enabled rules of deny groups, ask those of ask
	// groups (verdict: ask): an everyday check never looks at the ask
	// rules unless it asks for them (Protect).
	deny, ask ruleIndex
}

// ruleIndex is a list of active rules with indexes into it.
type ruleIndex struct {
	active []*rule
	// Indexes into active: by exact command name, rules with command
	// patterns, rules without a command, detector and code rules.
	byName  map[string][]int
	globCmd []int
	noCmd   []int
	detects []int
	codes   []int
}

type ruleGroup struct {
	name        string
	description string
	enabled     bool
	ask         bool // verdict: ask
	rules       []*rule
}

type rule struct {
	src          Rule
	group        string
	cmdSet       map[string]bool
	cmdGlobs     []string
	except       map[string]bool
	argRe        *ruleRegexp
	argExcept    *ruleRegexp
	argsRe       *ruleRegexp
	argsExcept   *ruleRegexp
	targets      []target
	targetsExcpt []target
	write        bool
	re           *ruleRegexp
	codeRe       *ruleRegexp
	sources      originSet
	with         []string
}

// ruleRegexp is a compiled expression with a cheap prefilter: substrings
// of which every match contains one.
type ruleRegexp struct {
	re    *regexp.Regexp
	needs []string // nil: no prefilter
	fold  bool     // needs are lower case; compare against lower-cased text
}

func (r *ruleRegexp) MatchString(s string) bool {
	if r.needs != nil {
		t := s
		if r.fold {
			t = strings.ToLower(s)
		}
		if !slices.ContainsFunc(r.needs, func(n string) bool { return strings.Contains(t, n) }) {
			return false
		}
	}
	return r.re.MatchString(s)
}

// compileShRegexp compiles expr and works out its prefilter.
func compileShRegexp(expr string) (*ruleRegexp, error) {
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, err
	}
	out := &ruleRegexp{re: re}
	if tree, err := syntax.Parse(expr, syntax.Perl); err == nil {
		needs, fold, ok := requiredLiterals(tree.Simplify())
		if ok && len(needs) > 0 && len(needs) <= 32 && !slices.ContainsFunc(needs, func(n string) bool { return len(n) < 2 }) {
			out.needs, out.fold = needs, fold
		}
	}
	return out, nil
}

// requiredLiterals returns strings one of which every match of re
// contains, or ok false when it cannot tell. fold reports that some
// literal is case-insensitive (all are then lower-cased).
func requiredLiterals(re *syntax.Regexp) (needs []string, fold, ok bool) {
	switch re.Op {
	case syntax.OpLiteral:
		s := string(re.Rune)
		if re.Flags&syntax.FoldCase != 0 {
			return []string{strings.ToLower(s)}, true, true
		}
		return []string{s}, false, true
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiterals(re.Sub[0])
		}
	case syntax.OpConcat:
		// Any part's literals are required; take the part whose shortest
		// literal is longest.
		best := -1
		for _, sub := range re.Sub {
			n, f, ok := requiredLiterals(sub)
			if !ok {
				continue
			}
			if shortest := len(slices.MinFunc(n, func(a, b string) int { return len(a) - len(b) })); shortest > best {
				best, needs, fold = shortest, n, f
			}
		}
		return needs, fold, best > 0
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			n, f, ok := requiredLiterals(sub)
			if !ok {
				return nil, false, false
			}
			needs = append(needs, n...)
			fold = fold || f
		}
		if fold {
			for i := range needs {
				needs[i] = strings.ToLower(needs[i])
			}
		}
		return needs, fold, true
	}
	return nil, false, false
}

// target is a path pattern with its literal prefix for quick rejection.
type target struct {
	pat  string
	lit  string // up to the first pattern character
	meta bool
}

func compileShTargets(pats []string) []target {
	out := make([]target, len(pats))
	for i, p := range pats {
		out[i] = target{pat: p, lit: litPrefix(p)}
		out[i].meta = out[i].lit != p
	}
	return out
}

// matches reports whether the target covers a resolved path.
func (t *target) matches(form string, glob bool) bool {
	if !glob && !t.meta {
		return form == t.pat
	}
	if !glob {
		return strings.HasPrefix(form, t.lit) && pathMatch(t.pat, form, false)
	}
	lit := litPrefix(form)
	if j := strings.Index(lit, "("); j > 0 && strings.IndexByte("!@+", lit[j-1]) >= 0 {
		lit = lit[:j-1] // an extended pattern: !(x), @(a|b), +(x)
	}
	return (strings.HasPrefix(lit, t.lit) || strings.HasPrefix(t.lit, lit)) && pathMatch(t.pat, form, true)
}

type rulesFile struct {
	Version     int               `json:"version"`
	Definitions json.RawMessage   `json:"definitions,omitempty"`
	Groups      []json.RawMessage `json:"groups"`
}

type groupFile struct {
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	Enabled     *bool             `json:"enabled,omitempty"`
	Verdict     string            `json:"verdict,omitempty"`
	Rules       []json.RawMessage `json:"rules"`
}

var nameRe = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// Load parses and compiles a rules file (YAML or JSON). Errors
// name the group and rule at fault.
func Load(yamlData []byte) (*Rules, error) {
	js, err := yaml.YAMLToJSONStrict(yamlData)
	if err != nil {
		return nil, fmt.Errorf("shell rules: %w", err)
	}
	var f rulesFile
	if err := decodeStrict(js, &f); err != nil {
		return nil, fmt.Errorf("shell rules: %w", err)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("shell rules: version must be 1, not %d", f.Version)
	}
	rs := &Rules{}
	seen := map[string]bool{GroupParse: true}
	for gi, raw := range f.Groups {
		var gf groupFile
		if err := decodeStrict(raw, &gf); err != nil {
			return nil, fmt.Errorf("shell rules: group #%d: %w", gi+1, err)
		}
		if !nameRe.MatchString(gf.Name) {
			return nil, fmt.Errorf("shell rules: group #%d: name %q must match %s", gi+1, gf.Name, nameRe)
		}
		if seen[gf.Name] {
			return nil, fmt.Errorf("shell rules: group %q: defined twice (or reserved)", gf.Name)
		}
		seen[gf.Name] = true
		g := &ruleGroup{name: gf.Name, description: gf.Description, enabled: gf.Enabled == nil || *gf.Enabled}
		switch gf.Verdict {
		case "", VerdictDeny:
		case VerdictAsk:
			g.ask = true
		default:
			return nil, fmt.Errorf("shell rules: group %q: verdict must be deny or ask, not %q", gf.Name, gf.Verdict)
		}
		for ri, rraw := range gf.Rules {
			var sr Rule
			if err := decodeStrict(rraw, &sr); err != nil {
				return nil, fmt.Errorf("shell rules: group %q rule #%d: %w", gf.Name, ri+1, err)
			}
			if sr.Group != "" {
				return nil, fmt.Errorf("shell rules: group %q rule %q: group is set by the enclosing group", gf.Name, sr.Name)
			}
			if _, err := g.add(sr); err != nil {
				return nil, err
			}
		}
		rs.groups = append(rs.groups, g)
	}
	rs.index()
	return rs, nil
}

// add compiles a rule into the group, where its name may stand once.
func (g *ruleGroup) add(sr Rule) (*rule, error) {
	if slices.ContainsFunc(g.rules, func(r *rule) bool { return r.src.Name == sr.Name }) {
		return nil, fmt.Errorf("shell rules: group %q rule %q: defined twice", g.name, sr.Name)
	}
	r, err := compileShellRule(sr, g.name)
	if err == nil {
		g.rules = append(g.rules, r)
	}
	return r, err
}

func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func compileShellRule(sr Rule, group string) (*rule, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("shell rules: group %q rule %q: %s", group, sr.Name, fmt.Sprintf(format, args...))
	}
	if !nameRe.MatchString(sr.Name) {
		return nil, fail("name must match %s", nameRe)
	}
	r := &rule{src: sr, group: group}
	for _, c := range sr.Command {
		c = strings.ToLower(c)
		if _, err := path.Match(c, ""); err != nil || c == "" {
			return nil, fail("command %q is not a valid name or pattern", c)
		}
		if strings.ContainsAny(c, "*?[") {
			r.cmdGlobs = append(r.cmdGlobs, c)
		} else {
			put(&r.cmdSet, c, true)
		}
	}
	for _, c := range sr.ExceptCommand {
		put(&r.except, strings.ToLower(c), true)
	}
	for _, fl := range sr.Flags {
		if !(len(fl) == 2 && fl[0] == '-' && fl[1] != '-') && !(len(fl) > 2 && strings.HasPrefix(fl, "--")) {
			return nil, fail("flag %q must be -x or --name", fl)
		}
	}
	var err error
	compile := func(field, expr string) *ruleRegexp {
		if expr == "" || err != nil {
			return nil
		}
		re, e := compileShRegexp(expr)
		if e != nil {
			err = fail("%s: %v", field, e)
		}
		return re
	}
	r.argRe = compile("arg_regex", sr.ArgRegex)
	r.argExcept = compile("arg_except", sr.ArgExcept)
	r.argsRe = compile("args_regex", sr.ArgsRegex)
	r.argsExcept = compile("args_except", sr.ArgsExcept)
	r.re = compile("regex", sr.Regex)
	r.codeRe = compile("code_regex", sr.CodeRegex)
	if err != nil {
		return nil, err
	}
	if sr.ArgExcept != "" && sr.ArgRegex == "" {
		return nil, fail("arg_except needs arg_regex")
	}
	for _, t := range append(append([]string{}, sr.Targets...), sr.TargetsExcept...) {
		if _, e := path.Match(t, ""); e != nil || t == "" {
			return nil, fail("target %q is not a valid path pattern", t)
		}
	}
	r.targets = compileShTargets(sr.Targets)
	r.targetsExcpt = compileShTargets(sr.TargetsExcept)
	switch sr.Access {
	case "", "any":
	case "write":
		r.write = true
	default:
		return nil, fail("access must be any or write, not %q", sr.Access)
	}
	if r.write && len(sr.Targets) == 0 {
		return nil, fail("access needs targets")
	}
	if sr.Ancestors && len(sr.Targets) == 0 {
		return nil, fail("ancestors needs targets")
	}
	for _, a := range sr.Assign {
		if _, e := path.Match(a, ""); e != nil || a == "" {
			return nil, fail("assign %q is not a valid name or pattern", a)
		}
	}
	switch sr.Detect {
	case "", "fork_bomb", "spawn_loop", "output_to_network", "shell_to_socket", "metadata_address", "git_program_setting":
		if len(sr.Sources) > 0 {
			return nil, fail("sources needs detect: shell_input")
		}
	case "shell_input":
		for _, s := range sr.Sources {
			o, ok := sourceOrigins[s]
			if !ok {
				return nil, fail("unknown source %q (fetch, socket, decode)", s)
			}
			r.sources |= o
		}
		if r.sources == 0 {
			r.sources = originFetch | originSocket | originDecode
		}
	default:
		return nil, fail("unknown detector %q (fork_bomb, spawn_loop, output_to_network, shell_input, shell_to_socket, metadata_address, git_program_setting)", sr.Detect)
	}
	for _, c := range sr.With {
		r.with = append(r.with, strings.ToLower(c))
	}
	primary := len(sr.Command) > 0 || len(sr.Targets) > 0 || len(sr.Assign) > 0 || sr.Regex != "" || sr.CodeRegex != "" || sr.Detect != ""
	if !primary {
		return nil, fail("needs one of command, targets, assign, regex, code_regex or detect")
	}
	if sr.Detect != "" && (len(sr.Command) > 0 || len(sr.Targets) > 0 || len(sr.Assign) > 0 || sr.Regex != "" || sr.CodeRegex != "" || len(sr.Flags) > 0 || sr.ArgRegex != "" || sr.ArgsRegex != "" || sr.ArgsExcept != "") {
		return nil, fail("detect cannot be combined with other conditions")
	}
	if sr.CodeRegex != "" && (len(sr.Targets) > 0 || len(sr.Assign) > 0 || sr.Regex != "" || len(sr.Flags) > 0 || sr.ArgRegex != "" || sr.ArgsRegex != "" || sr.ArgsExcept != "") {
		return nil, fail("code_regex can only be combined with command and with")
	}
	return r, nil
}

// sourceOrigins are the origins the sources of shell_input name.
var sourceOrigins = map[string]originSet{"fetch": originFetch, "socket": originSocket, "decode": originDecode}

// index fills a new rule set's active rules and their indexes.
func (rs *Rules) index() {
	for _, g := range rs.groups {
		if !g.enabled {
			continue
		}
		if g.ask {
			rs.ask.active = append(rs.ask.active, g.rules...)
		} else {
			rs.deny.active = append(rs.deny.active, g.rules...)
		}
	}
	rs.deny.build()
	rs.ask.build()
}

func (rs *ruleIndex) build() {
	rs.byName = map[string][]int{}
	for i, r := range rs.active {
		switch {
		case r.src.Detect != "":
			rs.detects = append(rs.detects, i)
		case r.codeRe != nil:
			rs.codes = append(rs.codes, i)
		case r.cmdSet == nil && r.cmdGlobs == nil:
			rs.noCmd = append(rs.noCmd, i)
		default:
			for name := range r.cmdSet {
				rs.byName[name] = append(rs.byName[name], i)
			}
			if r.cmdGlobs != nil {
				rs.globCmd = append(rs.globCmd, i)
			}
		}
	}
}

// candidates lists, in rule order, the rules that can match a segment.
func (rs *ruleIndex) candidates(seg *segment, buf []int) []int {
	buf = buf[:0]
	switch seg.kind {
	case segDetect:
		return append(buf, rs.detects...)
	case segCode:
		return append(buf, rs.codes...)
	case segFinding:
		return buf
	}
	buf = append(buf, rs.noCmd...)
	if seg.kind == segCmd && seg.name != "" {
		n := len(buf)
		buf = append(buf, rs.byName[seg.name]...)
		for _, i := range rs.globCmd {
			if rs.active[i].nameMatches(seg.name) {
				buf = append(buf, i)
			}
		}
		if len(buf) > n {
			slices.Sort(buf)
		}
	}
	return buf
}

// With returns a copy of the rule set with groups disabled and rules added.
func (rs *Rules) With(opts Options) (*Rules, error) {
	out := &Rules{}
	byName := map[string]*ruleGroup{}
	for _, g := range rs.groups {
		ng := *g
		ng.rules = append([]*rule(nil), g.rules...)
		out.groups = append(out.groups, &ng)
		byName[ng.name] = &ng
	}
	for _, sr := range opts.Extra {
		group := cmp.Or(sr.Group, GroupUser)
		if group == GroupParse {
			return nil, fmt.Errorf("shell rules: rule %q: group %q is built in", sr.Name, group)
		}
		if !nameRe.MatchString(group) {
			return nil, fmt.Errorf("shell rules: rule %q: group name %q must match %s", sr.Name, group, nameRe)
		}
		g := byName[group]
		if g == nil {
			g = &ruleGroup{name: group, enabled: true}
			out.groups = append(out.groups, g)
			byName[group] = g
		}
		sr.Group = ""
		cr, err := g.add(sr)
		if err != nil {
			return nil, err
		}
		cr.src.Group = group
	}
	for _, name := range opts.DisabledGroups {
		if name == GroupParse {
			return nil, fmt.Errorf("shell rules: group %q cannot be disabled", name)
		}
		g := byName[name]
		if g == nil {
			return nil, fmt.Errorf("shell rules: unknown group %q (known: %s)", name, strings.Join(out.Groups(), ", "))
		}
		g.enabled = false
	}
	out.index()
	return out, nil
}

// Groups lists the rule groups in order, "parse" first, enabled or not.
func (rs *Rules) Groups() []string {
	out := []string{GroupParse}
	for _, g := range rs.groups {
		out = append(out, g.name)
	}
	return out
}

// CheckCommand checks a shell command line (the text sh -c runs) and
// returns a *DeniedError for the first rule it breaks, or nil. The rules
// of ask groups are not consulted (CheckCommandProtected).
func (rs *Rules) CheckCommand(cmd string) error { return rs.checkCommand(cmd, false) }

// CheckCommandProtected is CheckCommand with the ask groups' rules on (a
// workspace whose work is protected): a *DeniedError when a deny rule
// matches, else an *AskError for the first ask rule that does, else nil.
// Deny wins over ask.
func (rs *Rules) CheckCommandProtected(cmd string) error { return rs.checkCommand(cmd, true) }

func (rs *Rules) checkCommand(cmd string, ask bool) (err error) {
	if err := checkInput(cmd); err != nil {
		return err
	}
	defer refuseOnPanic(cmd, &err)
	w := newShWalker()
	w.walkScript(cmd, &scope{pos0: arg{e: "sh", p: "sh"}, posKnown: true}, nil)
	return rs.verdict(w, cmd, ask)
}

// CheckArgv checks an argument vector run without a shell. Its words are
// taken literally (no quoting, globbing or expansion happens), but the
// commands wrappers run are followed (env, sudo, xargs, sh -c TEXT...).
func (rs *Rules) CheckArgv(argv []string) error { return rs.checkArgv(argv, false) }

// CheckArgvProtected is CheckArgv with the ask groups' rules on, as
// CheckCommandProtected.
func (rs *Rules) CheckArgvProtected(argv []string) error { return rs.checkArgv(argv, true) }

func (rs *Rules) checkArgv(argv []string, ask bool) (err error) {
	line := strings.Join(argv, " ")
	for _, a := range argv {
		if err := checkInput(a); err != nil {
			err.Segment = truncate(line)
			return err
		}
	}
	if len(line) >= maxInput { // the words, each with its end
		return parseErr("too_long", "command text is longer than 64 KiB", line)
	}
	if len(argv) == 0 {
		return nil
	}
	defer refuseOnPanic(line, &err)
	w := newShWalker()
	sc := &scope{pos0: arg{e: "sh", p: "sh"}, posKnown: true}
	w.runCommand(&segment{kind: segCmd, args: literalArgs(argv)}, sc, nil, pipeCtx{})
	return rs.verdict(w, line, ask)
}

// refuseOnPanic turns a fault in the walk (a bug: perf's option loop once
// stepped past its words) into a refusal with a stable rule name: a
// command the checker could not judge is not run, and one input never
// takes down the process that asked.
func refuseOnPanic(text string, err *error) {
	if r := recover(); r != nil {
		*err = parseErr("checker_fault", fmt.Sprintf("the checker failed on this command (%v), so it is refused", r), text)
	}
}

func (rs *Rules) verdict(w *walker, input string, ask bool) error {
	if w.err == nil {
		w.forkBombs()
	}
	if w.err != nil {
		if w.err.Segment == "" {
			w.err.Segment = truncate(input)
		}
		return w.err
	}
	var buf [64]int
	for _, seg := range w.segs {
		if seg.kind == segFinding {
			return parseErr(seg.rule, seg.desc, seg.text)
		}
		for _, i := range rs.deny.candidates(seg, buf[:0]) {
			if r := rs.deny.active[i]; r.match(seg, w) {
				return &DeniedError{Group: r.group, Rule: r.src.Name, Description: cmp.Or(r.src.Description, r.src.Name), Segment: truncate(seg.text)}
			}
		}
	}
	if !ask {
		return nil
	}
	if r, seg := rs.ask.first(w); r != nil {
		return &AskError{Group: r.group, Rule: r.src.Name, Description: cmp.Or(r.src.Description, r.src.Name), Segment: truncate(seg.text)}
	}
	return nil
}

// first returns the first rule that matches a segment of the walk, in
// segment order, and that segment.
func (rs *ruleIndex) first(w *walker) (*rule, *segment) {
	if len(rs.active) == 0 {
		return nil, nil
	}
	var buf [64]int
	for _, seg := range w.segs {
		for _, i := range rs.candidates(seg, buf[:0]) {
			if r := rs.active[i]; r.match(seg, w) {
				return r, seg
			}
		}
	}
	return nil, nil
}

func parseErr(rule, desc, text string) *DeniedError {
	return &DeniedError{Group: GroupParse, Rule: rule, Description: desc, Segment: truncate(text)}
}

// truncate shortens a segment for messages.
func truncate(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func (r *rule) nameMatches(name string) bool {
	return r.cmdSet[name] || slices.ContainsFunc(r.cmdGlobs, func(g string) bool {
		ok := strings.HasPrefix(name, litPrefix(g)) // a cheap test before the match
		if ok {
			ok, _ = path.Match(g, name)
		}
		return ok
	})
}

// match reports whether the rule matches a segment. It is asked only of
// the segment's candidates, which settle the kind of rule (detector, code
// or command rule) and, for a command rule, the command's name.
func (r *rule) match(seg *segment, w *walker) bool {
	switch seg.kind {
	case segDetect:
		return r.src.Detect == seg.detect && (r.sources == 0 || r.sources&seg.origins != 0) && r.withOK(w)
	case segCode:
		// Command, when set, limits the interpreters.
		return (r.cmdSet == nil && r.cmdGlobs == nil || r.nameMatches(seg.name)) && r.codeRe.MatchString(seg.code) && r.withOK(w)
	}
	if r.except[seg.name] || r.src.ExceptLoopback && onlyLoopback(seg) || r.src.ExceptFiltered && seg.filtered {
		return false
	}
	args := seg.argv[min(1, len(seg.argv)):] // the words after the name
	if len(r.src.Flags) > 0 && !hasFlag(args, r.src.Flags) {
		return false
	}
	if r.argRe != nil && !slices.ContainsFunc(args, func(a string) bool {
		return r.argRe.MatchString(a) && (r.argExcept == nil || !r.argExcept.MatchString(a))
	}) {
		return false
	}
	if r.argsRe != nil || r.argsExcept != nil {
		joined := strings.Join(args, " ")
		if r.argsRe != nil && !r.argsRe.MatchString(joined) || r.argsExcept != nil && r.argsExcept.MatchString(joined) {
			return false
		}
	}
	if len(r.src.Assign) > 0 && !r.assignMatches(seg) {
		return false
	}
	if len(r.targets) > 0 && !r.targetMatches(seg) {
		return false
	}
	if r.re != nil && !r.reMatches(seg) {
		return false
	}
	return r.withOK(w)
}

// reMatches matches Regex against the command text and against each
// assignment as NAME=value.
func (r *rule) reMatches(seg *segment) bool {
	return seg.cmdText != "" && r.re.MatchString(seg.cmdText) ||
		slices.ContainsFunc(seg.assigns, func(a assign) bool { return r.re.MatchString(a.name + "=" + a.value) })
}

func (r *rule) withOK(w *walker) bool {
	return len(r.with) == 0 || slices.ContainsFunc(r.with, w.sawCommand)
}

func (r *rule) assignMatches(seg *segment) bool {
	return slices.ContainsFunc(seg.assigns, func(a assign) bool {
		return slices.ContainsFunc(r.src.Assign, func(p string) bool {
			ok, _ := path.Match(p, a.name)
			return ok
		})
	})
}

// hasFlag reports whether one of the flags is among the options (up to
// "--").
func hasFlag(args, flags []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		long, _, _ := strings.Cut(a[2:], "=") // of --name[=value], the name
		for _, f := range flags {
			// A short flag in a cluster, or a long one by a prefix of its name.
			if f[1] != '-' && a[1] != '-' && strings.IndexByte(a[1:], f[1]) >= 0 ||
				f[1] == '-' && a[1] == '-' && long != "" && strings.HasPrefix(f[2:], long) {
				return true
			}
		}
	}
	return false
}

// Writing commands: which operands they write.
var writers = map[string]string{
	"tee": "all", "cp": "last", "mv": "last", "install": "last", "ln": "last", "rsync": "last",
	"scp": "last", "dd": "of", "sed": "-i", "perl": "-i", "truncate": "all", "touch": "all",
	"shred": "all", "chmod": "all", "chown": "all", "chgrp": "all", "chattr": "all", "setfacl": "all",
	"vi": "all", "vim": "all", "nano": "all", "ed": "all", "ex": "all", "visudo": "all", "vipw": "all",
	"sponge": "all", "patch": "all", "tar": "all", "unzip": "all", "curl": "-o", "wget": "-O",
	"sort": "-o", "uniq": "last", "split": "last", "csplit": "last", "iconv": "-o", "gpg": "-o",
	"find": "-fprint", "gfind": "-fprint", "bfs": "-fprint",
}

// targetMatches reports whether one of the segment's paths is protected:
// a form of it a target covers (or, with ancestors, lies above) and no
// excepted target does.
func (r *rule) targetMatches(seg *segment) bool {
	for _, op := range seg.operands() {
		if r.write && !op.write && (op.redir || !seg.writes(op)) {
			continue
		}
		for _, form := range op.forms {
			if slices.ContainsFunc(r.targetsExcpt, func(t target) bool { return t.matches(form, false) }) {
				continue
			}
			for i := range r.targets {
				t := &r.targets[i]
				if t.matches(form, op.glob) || r.src.Ancestors && !op.glob && ancestorOf(form, t.pat) {
					return true
				}
			}
		}
	}
	return false
}

// operand is a path-like word of a segment, resolved once.
type operand struct {
	forms []string
	glob  bool
	redir bool // a redirection's target
	write bool // an output redirection's
	index int  // operand position (after the command name)
	last  bool // the last non-option operand
	ofArg bool // dd of=
}

// operands resolves the segment's redirection targets and operands (with
// the values of key=value, --opt=value and curl's @file forms) to paths.
func (s *segment) operands() []operand {
	if s.ops != nil {
		return *s.ops
	}
	var out []operand
	add := func(v string, glob bool, op operand) {
		if s.cwd == "" && v != "" && v[0] != '/' && v[0] != '~' && v[0] != '.' {
			return // a name in the tool's own directory: no target is relative
		}
		op.forms = pathForms(v, s.cwd)
		op.glob = glob
		if len(op.forms) > 0 {
			out = append(out, op)
		}
	}
	for _, rd := range s.redirs {
		add(rd.target, rd.glob, operand{redir: true, write: rd.write})
	}
	if s.kind == segCmd {
		args := nonDropped(s.args)
		lastIdx := lastOperand(args)
		for i := 1; i < len(args); i++ {
			a := args[i]
			v := a.e
			base := operand{index: i, last: i == lastIdx}
			// curl -d @FILE, -F name=@FILE and the like.
			if at := strings.IndexByte(v, '@'); at >= 0 && at+1 < len(v) && (v[at+1] == '/' || v[at+1] == '~' || v[at+1] == '.') {
				add(v[at+1:], a.glob, base)
			}
			if strings.HasPrefix(v, "-") {
				if _, val, ok := strings.Cut(v, "="); ok {
					add(val, a.glob, base)
				}
				continue
			}
			add(v, a.glob, base)
			if j := strings.IndexByte(v, '='); j > 0 && !strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "~") {
				vb := base
				vb.ofArg = v[:j] == "of"
				add(v[j+1:], a.glob, vb)
			}
		}
	}
	s.ops = &out
	return out
}

// writes reports whether the segment's command writes an operand.
func (s *segment) writes(op operand) bool {
	mode, ok := writers[s.name]
	if !ok {
		return false
	}
	args := s.argv // the words operands() counts: the arguments less the dropped ones
	switch mode {
	case "last":
		for i, a := range args {
			if (a == "-t" || a == "--target-directory") && i+1 < len(args) {
				return op.index == i+1
			}
		}
		return op.last
	case "of":
		return op.ofArg
	case "-i":
		return hasFlag(args[1:], []string{mode})
	case "-fprint", "-o", "-O":
		// Only an option's value is written (sort -o FILE, curl -o FILE).
		return op.index > 1 && op.index < len(args) && slices.Contains(valueWriters[mode], args[op.index-1])
	}
	return true
}

// valueWriters are, for the modes of writers that name an option, the
// options whose value the command writes.
var valueWriters = map[string][]string{
	"-fprint": {"-fprint", "-fprint0", "-fprintf", "-fls"}, // find -fprintf FILE FORMAT
	"-o":      {"-o", "--output", "--output-document"},
	"-O":      {"-O", "--output", "--output-document"},
}
