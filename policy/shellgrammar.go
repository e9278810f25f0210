package policy

import "strings"

// One table of program grammars: which options of a program take a value,
// which take code, which programs run other commands, which interpreters
// run inline code. The deny rules (shellunwrap.go, shellcode.go) and the
// template check (render_shell_rules.go) both read it; it depends on
// neither, so each can move to a package of its own.
//
// Where the two earlier tables disagreed, the stricter, correct reading was
// kept:
//   - perl -M/-m load a module named by the value, and -MFoo;code runs code
//     (the template table had them as code, the deny table as flags);
//   - ruby -r loads a file as code (template: code; deny: a plain value);
//   - php -d sets an ini value, and auto_prepend_file= runs a file; -f FILE
//     is the script (template: both code; deny: plain values);
//   - sudo -s/-i and doas -s run a shell with the operands as its command
//     (deny: yes; template: not known);
//   - python -m runs a module; node -r/--require/--import and lua -l load
//     code before the program.

// shRole says what a program does with its operands.
type shRole uint8

const (
	rolePlain   shRole = iota // operands are data; some options may take code
	roleWrapper               // runs its operands (after leading ones) as a command
	roleShell                 // a shell: -c text, a script file or standard input
	roleInterp                // inline code, a script file or standard input
	roleEval                  // its arguments are shell code (eval, trap, let, alias...)
	roleSource                // the first operand is a script run in this shell
	roleSu                    // su, runuser, sg: -c text run by a shell
	roleXargs                 // runs its operands with words from its input
	roleFind                  // -exec and friends run a command
	roleNames                 // operands are variable names (read, unset...)
	roleDeclare               // declare/typeset: names and attributes
	roleExport                // export/readonly/local: NAME=value words and names
	rolePrintf                // printf -v NAME
	roleTest                  // test/[: -v NAME, -R NAME
	roleCurl                  // an option value starting with @ or < names a file to read
)

// shGrammar is one program's command line.
type shGrammar struct {
	role shRole
	// lang is the code family an interpreter runs, for the code scan
	// (python, perl, js, awk...); empty when the deny rules do not scan it.
	lang string

	valueOpts string   // short options taking a value
	valueLong []string // long options taking a value (unless written --opt=value)
	codeOpts  string   // short options whose value is code
	codeLong  []string
	// modOpts: short options whose value names code the program loads or
	// runs as well as its operands (perl -M, ruby -r, node -r, php -d,
	// python -m, ssh -o ProxyCommand=...).
	modOpts  string
	modLong  []string
	progOpts string // short options whose value is the program file (awk -f)
	progLong []string
	// shellFlags make the operands shell text (sh -c: the first operand is
	// code; sudo -s: the command line is run by a shell).
	shellFlags string
	stdinFlags string // read the program from standard input (sh -s)
	splitOpts  string // the value is split into words put before the command (env -S)
	splitLong  []string
	noExec     string // short flags after which nothing runs (sudo -l)
	leading    int    // operands before the command (timeout DURATION)
	assigns    bool   // NAME=value operands among the options (env, sudo)
	permute    bool   // options may follow operands (GNU getopt)
	plus       bool   // +o style options too (shells)
	numeric    bool   // -N options (nice -5)
	join       bool   // the operands are joined into one shell command line (ssh, watch)
	joinOff    string // short flags that turn join off (watch -x)
	unknownVal bool   // unknown long options take a value
	flagLong   []string
	progArg    bool // the first operand is the program text (awk)
	// subcommand: the first operand names what runs (git: a subcommand,
	// an alias that may be !shell text, or a git-NAME program on PATH).
	subcommand bool
	// cmdLine: the template check refuses any argument among the operands
	// after the leading ones (flock: the command's words are not checked
	// one by one there).
	cmdLine bool
}

var (
	shShellGrammar  = &shGrammar{role: roleShell, shellFlags: "c", stdinFlags: "s", valueOpts: "oO", valueLong: []string{"rcfile", "init-file"}, codeLong: []string{"command"}, plus: true}
	shPythonGrammar = &shGrammar{role: roleInterp, lang: "python", codeOpts: "c", modOpts: "m", valueOpts: "WXQ"}
	shPerlGrammar   = &shGrammar{role: roleInterp, lang: "perl", codeOpts: "eE", modOpts: "Mm", valueOpts: "I"}
	shRubyGrammar   = &shGrammar{role: roleInterp, lang: "ruby", codeOpts: "e", modOpts: "r", valueOpts: "ICEFK"}
	shNodeGrammar   = &shGrammar{role: roleInterp, lang: "js", codeOpts: "ep", codeLong: []string{"eval", "print"}, modOpts: "r",
		modLong: []string{"require", "import", "loader", "experimental-loader"}, valueLong: []string{"input-type"}}
	shPHPGrammar = &shGrammar{role: roleInterp, lang: "php", codeOpts: "rBRE", modOpts: "d", progOpts: "f", valueOpts: "cz"}
	shLuaGrammar = &shGrammar{role: roleInterp, lang: "lua", codeOpts: "e", modOpts: "l"}
	shAwkGrammar = &shGrammar{role: roleInterp, lang: "awk", permute: true, progArg: true, valueOpts: "Fv", valueLong: []string{"field-separator", "assign"},
		codeOpts: "e", codeLong: []string{"source"}, modOpts: "ilE", modLong: []string{"include", "load", "exec"}, progOpts: "f", progLong: []string{"file"}}
	shSedGrammar = &shGrammar{role: roleInterp, permute: true, valueOpts: "l", valueLong: []string{"line-length"},
		codeOpts: "e", codeLong: []string{"expression"}, progOpts: "f", progLong: []string{"file"}}
	shSudoGrammar = &shGrammar{role: roleWrapper, valueOpts: "ugCDhprtTUR", valueLong: []string{"user", "group", "host", "prompt", "chdir", "chroot", "role", "type", "close-from", "command-timeout", "other-user"},
		shellFlags: "si", noExec: "lVe", assigns: true}
	shSuGrammar = &shGrammar{role: roleSu, valueOpts: "gGsw", codeOpts: "c", codeLong: []string{"command", "session-command"}, leading: 1}
)

// shGrammars maps a program's base name to its grammar.
var shGrammars = map[string]*shGrammar{
	// Shells.
	"sh": shShellGrammar, "bash": shShellGrammar, "rbash": shShellGrammar, "dash": shShellGrammar, "zsh": shShellGrammar,
	"ksh": shShellGrammar, "ksh93": shShellGrammar, "mksh": shShellGrammar, "pdksh": shShellGrammar, "oksh": shShellGrammar,
	"lksh": shShellGrammar, "ash": shShellGrammar, "yash": shShellGrammar, "posh": shShellGrammar, "fish": shShellGrammar,
	"csh": shShellGrammar, "tcsh": shShellGrammar, "bash5": shShellGrammar, "hush": shShellGrammar, "msh": shShellGrammar,
	// Interpreters.
	"python": shPythonGrammar, "pypy": shPythonGrammar,
	"perl": shPerlGrammar, "ruby": shRubyGrammar, "irb": shRubyGrammar, "jruby": shRubyGrammar, "truffleruby": shRubyGrammar,
	"node": shNodeGrammar, "nodejs": shNodeGrammar, "deno": shNodeGrammar, "bun": shNodeGrammar, "qjs": shNodeGrammar, "d8": shNodeGrammar,
	"php":       shPHPGrammar,
	"lua":       shLuaGrammar,
	"luajit":    {role: roleInterp, lang: "lua", codeOpts: "ej", modOpts: "l"},
	"rscript":   {role: roleInterp, lang: "r", codeOpts: "e"},
	"r":         {role: roleInterp, lang: "r", codeOpts: "e", valueLong: []string{"file"}},
	"julia":     {role: roleInterp, codeOpts: "eEL"},
	"osascript": {role: roleInterp, lang: "applescript", codeOpts: "e"},
	"tclsh":     {role: roleInterp, lang: "tcl"},
	"wish":      {role: roleInterp, lang: "tcl"},
	"expect":    {role: roleInterp, lang: "tcl", codeOpts: "cf"},
	"guile":     {role: roleInterp, codeOpts: "cels"},
	"awk":       shAwkGrammar, "gawk": shAwkGrammar, "mawk": shAwkGrammar, "nawk": shAwkGrammar, "busybox-awk": shAwkGrammar,
	"sed": shSedGrammar, "gsed": shSedGrammar,
	// Shell builtins that evaluate their arguments.
	"eval": {role: roleEval}, "trap": {role: roleEval}, "let": {role: roleEval}, "alias": {role: roleEval},
	"bind": {role: roleEval}, "complete": {role: roleEval}, "compgen": {role: roleEval}, "fc": {role: roleEval},
	"enable": {role: roleEval}, "hash": {role: roleEval},
	"source": {role: roleSource}, ".": {role: roleSource},
	// Builtins whose operands are variable names.
	"read":      {role: roleNames, valueOpts: "dinNptu", codeOpts: "a"},
	"unset":     {role: roleNames},
	"mapfile":   {role: roleNames},
	"readarray": {role: roleNames},
	"getopts":   {role: roleNames},
	"declare":   {role: roleDeclare}, "typeset": {role: roleDeclare},
	"export": {role: roleExport}, "readonly": {role: roleExport}, "local": {role: roleExport},
	"printf": {role: rolePrintf},
	"test":   {role: roleTest}, "[": {role: roleTest},
	// Wrappers: they run a command.
	"env":              {role: roleWrapper, valueOpts: "uCP", valueLong: []string{"unset", "chdir"}, splitOpts: "S", splitLong: []string{"split-string"}, assigns: true},
	"sudo":             shSudoGrammar,
	"run0":             {role: roleWrapper, valueOpts: "ugDM", valueLong: []string{"user", "group", "chdir", "machine", "property", "description", "slice", "setenv", "nice", "background", "unit"}, assigns: true},
	"doas":             {role: roleWrapper, valueOpts: "uC", shellFlags: "s", noExec: "L"},
	"pkexec":           {role: roleWrapper, valueLong: []string{"user"}},
	"nice":             {role: roleWrapper, valueOpts: "n", valueLong: []string{"adjustment"}, numeric: true},
	"nohup":            {role: roleWrapper},
	"timeout":          {role: roleWrapper, valueOpts: "sk", valueLong: []string{"signal", "kill-after"}, leading: 1},
	"stdbuf":           {role: roleWrapper, valueOpts: "ioe", valueLong: []string{"input", "output", "error"}},
	"ionice":           {role: roleWrapper, valueOpts: "cnpPu", valueLong: []string{"class", "classdata"}, noExec: "pPu"},
	"chroot":           {role: roleWrapper, valueLong: []string{"userspec", "groups"}, leading: 1},
	"busybox":          {role: roleWrapper},
	"toybox":           {role: roleWrapper},
	"command":          {role: roleWrapper, noExec: "vV"},
	"builtin":          {role: roleWrapper},
	"exec":             {role: roleWrapper, valueOpts: "a"},
	"time":             {role: roleWrapper, valueOpts: "fo", valueLong: []string{"format", "output"}},
	"setsid":           {role: roleWrapper},
	"unshare":          {role: roleWrapper, valueOpts: "SGRw", valueLong: []string{"setgroups", "propagation", "map-user", "map-group", "map-users", "map-groups", "root", "wd", "setuid", "setgid"}},
	"nsenter":          {role: roleWrapper, valueOpts: "tSG", valueLong: []string{"target", "setuid", "setgid", "env"}},
	"systemd-run":      {role: roleWrapper, valueOpts: "upEMH", unknownVal: true, flagLong: []string{"user", "system", "scope", "pty", "pipe", "quiet", "wait", "collect", "no-block", "remain-after-exit", "same-dir", "send-sighup", "no-ask-password", "shell", "ignore-failure"}},
	"chrt":             {role: roleWrapper, valueOpts: "TPD", leading: 1, noExec: "pm"},
	"taskset":          {role: roleWrapper, leading: 1, noExec: "p"},
	"prlimit":          {role: roleWrapper, noExec: "p", valueLong: []string{"pid"}},
	"strace":           {role: roleWrapper, valueOpts: "abeEIoOpPsSuUX"},
	"ltrace":           {role: roleWrapper, valueOpts: "AaDeEFiLlnopsuwxX"},
	"valgrind":         {role: roleWrapper},
	"numactl":          {role: roleWrapper, valueOpts: "CNmiPp"},
	"torsocks":         {role: roleWrapper, valueOpts: "upaP"},
	"proxychains":      {role: roleWrapper, valueOpts: "f"},
	"proxychains4":     {role: roleWrapper, valueOpts: "f"},
	"faketime":         {role: roleWrapper, valueOpts: "m", leading: 1},
	"xvfb-run":         {role: roleWrapper, valueOpts: "nsfepw"},
	"dbus-run-session": {role: roleWrapper, valueLong: []string{"config-file", "dbus-daemon"}},
	"catchsegv":        {role: roleWrapper},
	"caffeinate":       {role: roleWrapper, valueOpts: "tw"},
	"gosu":             {role: roleWrapper, leading: 1},
	"su-exec":          {role: roleWrapper, leading: 1},
	"chpst":            {role: roleWrapper, valueOpts: "uUbe/nlLmdofpcr"},
	"setpriv":          {role: roleWrapper, valueLong: []string{"reuid", "regid", "groups", "inh-caps", "ambient-caps", "bounding-set", "securebits", "pdeathsig", "selinux-label", "apparmor-profile", "landlock-access", "landlock-rule"}},
	"fakeroot":         {role: roleWrapper},
	"coproc":           {role: roleWrapper},
	"screen":           {role: roleWrapper, valueOpts: "SsctehpTX"},
	"flock":            {role: roleWrapper, valueOpts: "wE", valueLong: []string{"timeout", "wait", "conflict-exit-code"}, codeOpts: "c", codeLong: []string{"command"}, leading: 1, cmdLine: true},
	"script":           {role: roleWrapper, valueOpts: "EIOBTm", valueLong: []string{"echo", "log-in", "log-out", "log-io", "log-timing", "logging-format", "output-limit"}, codeOpts: "c", codeLong: []string{"command"}, noExec: "V", permute: true},
	"xargs":            {role: roleXargs, valueOpts: "adEILnPs", valueLong: []string{"arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"}},
	"git":              {role: rolePlain, subcommand: true, valueOpts: "C", valueLong: []string{"git-dir", "work-tree", "namespace"}, codeOpts: "c", codeLong: []string{"config-env", "exec-path"}},
	// Commands that join their operands into a shell command line.
	"ssh":      {role: roleWrapper, valueOpts: "bcDEeIiJLlmOpQRSWwB", modOpts: "oF", leading: 1, join: true},
	"watch":    {role: roleWrapper, valueOpts: "nq", valueLong: []string{"interval", "equexit"}, join: true, joinOff: "x"},
	"parallel": {role: rolePlain, join: true},
	"su":       shSuGrammar,
	"runuser":  {role: roleSu, valueOpts: "gGsuw", codeOpts: "c", codeLong: []string{"command", "session-command"}, leading: 1},
	"sg":       {role: roleSu, codeOpts: "c", leading: 1},
	"ksu":      {role: roleSu, codeOpts: "c", leading: 1},
	"curl":     {role: roleCurl},
	// Options that run commands.
	"find":  {role: roleFind},
	"gfind": {role: roleFind},
	"bfs":   {role: roleFind},
	"tar":   {role: rolePlain, permute: true, codeOpts: "IF", codeLong: []string{"to-command", "checkpoint-action", "use-compress-program", "rsh-command", "info-script", "new-volume-script"}},
	"rsync": {role: rolePlain, permute: true, codeOpts: "e", codeLong: []string{"rsh", "rsync-path"}},
	"scp":   {role: rolePlain, permute: true, valueOpts: "cDiJlP", modOpts: "oSF"},
	"sftp":  {role: rolePlain, permute: true, valueOpts: "BciJlPR", modOpts: "oSFbD"},
}

// shGrammarOf finds a program's grammar by its base name; an interpreter's
// version suffix (python3.12, perl5.36, lua5.4, pypy3) is ignored.
func shGrammarOf(name string) *shGrammar {
	base := name[strings.LastIndexByte(name, '/')+1:]
	if g, ok := shGrammars[base]; ok {
		return g
	}
	lower := strings.ToLower(base)
	if g, ok := shGrammars[lower]; ok {
		return g
	}
	trimmed := strings.TrimRight(lower, "0123456789.-")
	if trimmed != lower && trimmed != "" {
		if g, ok := shGrammars[trimmed]; ok && g.role == roleInterp {
			return g
		}
	}
	return nil
}
