package shellsyntax

import "strings"

// One table of program grammars: which options of a program take a value,
// which take code, which programs run other commands, which interpreters
// run inline code. The reader (read.go) reads command lines against it for
// the deny rules (policy/shellguard) and the template check
// (policy/template).
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

// Role says what a program does with its operands.
type Role uint8

const (
	RolePlain   Role = iota // operands are data; some options may take code
	RoleWrapper             // runs its operands (after leading ones) as a command
	RoleShell               // a shell: -c text, a script file or standard input
	RoleInterp              // inline code, a script file or standard input
	RoleEval                // its arguments are shell code (eval, trap, let, alias...)
	RoleSource              // the first operand is a script run in this shell
	RoleSu                  // su, runuser, sg: -c text run by a shell
	RoleXargs               // runs its operands with words from its input
	RoleFind                // -exec and friends run a command
	RoleNames               // operands are variable names (read, unset...)
	RoleDeclare             // declare/typeset: names and attributes
	RoleExport              // export/readonly/local: NAME=value words and names
	RolePrintf              // printf -v NAME
	RoleTest                // test/[: -v NAME, -R NAME
	RoleCurl                // an option value starting with @ or < names a file to read
)

// Grammar is one program's command line.
type Grammar struct {
	Role Role
	// lang is the code family an interpreter runs, for the code scan
	// (python, perl, js, awk...); empty when the deny rules do not scan it.
	Lang string

	ValueOpts string   // short options taking a value
	ValueLong []string // long options taking a value (unless written --opt=value)
	// optOpts: short options whose value, if any, is attached (xargs -i,
	// -e, -l); optLong: long ones taking a value only as --opt=value.
	OptOpts  string
	OptLong  []string
	CodeOpts string // short options whose value is code
	CodeLong []string
	// modOpts: short options whose value names code the program loads or
	// runs as well as its operands (perl -M, ruby -r, node -r, php -d,
	// python -m, ssh -o ProxyCommand=...).
	ModOpts  string
	ModLong  []string
	ProgOpts string // short options whose value is the program file (awk -f)
	ProgLong []string
	// shellFlags make the operands shell text (sh -c: the first operand is
	// code; sudo -s: the command line is run by a shell).
	ShellFlags string
	StdinFlags string // read the program from standard input (sh -s)
	SplitOpts  string // the value is split into words put before the command (env -S)
	SplitLong  []string
	NoExec     string // short flags after which nothing runs (sudo -l)
	Leading    int    // operands before the command (timeout DURATION)
	Assigns    bool   // NAME=value operands among the options (env, sudo)
	Permute    bool   // options may follow operands (GNU getopt)
	Plus       bool   // +o style options too (shells)
	Numeric    bool   // -N options (nice -5)
	Join       bool   // the operands are joined into one shell command line (ssh, watch)
	JoinOff    string // short flags that turn join off (watch -x)
	UnknownVal bool   // unknown long options take a value
	DashOpt    bool   // a lone "-" is an option (env -: env -i)
	// clustered: a value option inside a cluster leaves the letters after it
	// flags (sh -oc reads -o, then -c); only the last letter takes a value.
	Clustered bool
	FlagLong  []string
	ProgArg   bool // the first operand is the program text (awk, sed)
	// verbs: a first word that says what the program does, before its
	// options (deno run FILE; eval makes the next operand code).
	Verbs []string
	// subcommand: the first operand names what runs (git: a subcommand,
	// an alias that may be !shell text, or a git-NAME program on PATH);
	// its Subs grammar says only what the verb's options do (Effects).
	Subcommand bool
	// cmdLine: the template check refuses any argument among the operands
	// after the leading ones (flock: the command's words are not checked
	// one by one there).
	CmdLine bool
	OneDash bool // every option is long, written with one dash or two (gdb -ex, emacs -eval)
	// subs: the grammars of a program's verbs, the first operand after
	// its own options (Verb picks one). A Subcommand program's verb is
	// itself what runs, and its grammar is read for Effects (git log
	// --output); any other program's verb is a mode the reader reads the
	// rest of the line in (docker exec, kubectl exec, docker compose run),
	// and a verb not listed runs nothing the reader follows.
	Subs map[string]*Grammar
	// optsAfter: options may follow the leading operands, before the
	// command (ssh HOST -t CMD, kubectl exec POD -c C -- CMD).
	OptsAfter bool
	// operandForms: what makes an operand without a leading "-" an option
	// or a target, whether or not "--" came first: "@" and "+" at its
	// start (dig @server +tcp), ":" before any "/" (rsync and scp read
	// host:path as another host's), "=" after a name (dd of=FILE, make
	// VAR=value set an option or a variable), "a" a letter at its start
	// (ps reads aux, e, eww as BSD options).
	OperandForms string

	// What an option does beyond the program's own words, for Effects
	// (an exec rule does not cover an option that writes a file or names
	// a program unless it names the option): writeOpts/writeLong write a
	// file (their value, or the operands: sed -i); runOpts/runLong make
	// the program run a program or load settings the line does not spell
	// out as code (git --ext-diff, --git-dir). Code, module, split and
	// program options name programs by their kind already.
	WriteOpts string
	WriteLong []string
	RunOpts   string
	RunLong   []string
}

// Verb picks the grammar of verb, g's first operand after its options:
// the Subs entry; for a Subcommand program's verb the table does not
// list, one whose options may come anywhere; else nil (and for a nil g, a
// program the table does not know).
func (g *Grammar) Verb(verb string) *Grammar {
	if g == nil {
		return nil
	}
	if sub := g.Subs[verb]; sub != nil {
		return sub
	}
	if g.Subcommand {
		return anyVerb
	}
	return nil
}

// anyVerb is the grammar of a subcommand the table does not list.
var anyVerb = &Grammar{Permute: true}

var (
	shellGrammar  = &Grammar{Role: RoleShell, ShellFlags: "c", StdinFlags: "s", ValueOpts: "oO", ValueLong: []string{"rcfile", "init-file"}, CodeLong: []string{"command"}, Plus: true, Clustered: true}
	pythonGrammar = &Grammar{Role: RoleInterp, Lang: "python", CodeOpts: "c", ModOpts: "m", ValueOpts: "WXQ"}
	rubyGrammar   = &Grammar{Role: RoleInterp, Lang: "ruby", CodeOpts: "e", ModOpts: "r", ValueOpts: "ICEFK"}
	nodeGrammar   = &Grammar{Role: RoleInterp, Lang: "js", CodeOpts: "ep", CodeLong: []string{"eval", "print"}, ModOpts: "r",
		ModLong: []string{"require", "import", "loader", "experimental-loader"}, ValueLong: []string{"input-type"}}
	denoGrammar = &Grammar{Role: RoleInterp, Lang: "js", CodeOpts: "ep", CodeLong: nodeGrammar.CodeLong, ModOpts: "r", ModLong: nodeGrammar.ModLong,
		ValueLong: nodeGrammar.ValueLong, Verbs: []string{"eval", "run", "x"}}
	awkGrammar = &Grammar{Role: RoleInterp, Lang: "awk", Permute: true, ProgArg: true, ValueOpts: "Fv", ValueLong: []string{"field-separator", "assign"},
		CodeOpts: "e", CodeLong: []string{"source"}, ModOpts: "ilE", ModLong: []string{"include", "load", "exec"}, ProgOpts: "f", ProgLong: []string{"file"}}
	sedGrammar = &Grammar{Role: RoleInterp, Permute: true, ProgArg: true, ValueOpts: "l", ValueLong: []string{"line-length"},
		CodeOpts: "e", CodeLong: []string{"expression"}, ProgOpts: "f", ProgLong: []string{"file"}, WriteOpts: "i", WriteLong: []string{"in-place"}}
	sudoGrammar = &Grammar{Role: RoleWrapper, ValueOpts: "ugCDhprtTUR", ValueLong: []string{"user", "group", "host", "prompt", "chdir", "chroot", "role", "type", "close-from", "command-timeout", "other-user"},
		ShellFlags: "si", NoExec: "lVe", Assigns: true}
	tarGrammar   = &Grammar{Role: RolePlain, Permute: true, CodeOpts: "IF", CodeLong: []string{"to-command", "checkpoint-action", "use-compress-program", "rsh-command", "info-script", "new-volume-script"}}
	mysqlGrammar = &Grammar{Role: RolePlain, Permute: true, CodeOpts: "e", CodeLong: []string{"execute"}}
	vimGrammar   = &Grammar{Role: RolePlain, Permute: true, CodeOpts: "c", CodeLong: []string{"cmd"}, ProgOpts: "S"}
	makeGrammar  = &Grammar{Role: RolePlain, Permute: true, ValueOpts: "CIoW", CodeOpts: "E", CodeLong: []string{"eval"}, ProgOpts: "f", ProgLong: []string{"file", "makefile"}, OperandForms: "="}
	// ssh HOST [OPTIONS] [--] COMMAND...: ssh reads options after its host
	// too, and joins the command's words into one command line; autossh
	// takes ssh's options and -M PORT.
	sshGrammar     = &Grammar{Role: RoleWrapper, ValueOpts: "bcDEeIiJLlmOpQRSWwB", ModOpts: "oF", Leading: 1, Join: true, OptsAfter: true}
	autosshGrammar = func() *Grammar { g := *sshGrammar; g.ValueOpts += "M"; return &g }()
	psshGrammar    = &Grammar{Role: RoleWrapper, ValueOpts: "hHlpotOxXe", Join: true}
	// DNS tools: @server picks the server asked, +option sets a query
	// option (dig @169.254.169.254, +tcp).
	digGrammar = &Grammar{Role: RolePlain, Permute: true, ValueOpts: "bcfkpqtxy", OperandForms: "@+"}
)

// Programs that run a command in another machine, container or pod: the
// command is what would run here too, and is judged as such (issue 22).
var (
	// docker exec [OPTIONS] CONTAINER COMMAND...; options end at the
	// container.
	containerExec = &Grammar{Role: RoleWrapper, Leading: 1, ValueOpts: "euw", ValueLong: []string{"env", "env-file", "user", "workdir", "detach-keys"}}
	// docker run [OPTIONS] IMAGE [COMMAND...]: most long options take a
	// value; --entrypoint PROGRAM runs in place of the image's own.
	containerRun = &Grammar{Role: RoleWrapper, Leading: 1, ValueOpts: "acehlmpuvw", ProgLong: []string{"entrypoint"}, UnknownVal: true, FlagLong: []string{
		"detach", "interactive", "tty", "rm", "init", "privileged", "publish-all", "read-only", "no-healthcheck",
		"oom-kill-disable", "sig-proxy", "quiet", "help", "disable-content-trust", "use-api-socket", "replace", "rmi",
		"tls-verify", "http-proxy", "read-only-tmpfs", "env-host", "no-hosts", "passwd"}}
	containerGrammar = &Grammar{Role: RolePlain, ValueOpts: "Hlc", ValueLong: []string{"config", "context", "host", "log-level",
		"tlscacert", "tlscert", "tlskey", "connection", "url", "identity", "root", "runroot", "storage-driver", "namespace", "address"},
		Subs: map[string]*Grammar{"exec": containerExec, "run": containerRun,
			"container": {Role: RolePlain, Subs: map[string]*Grammar{"exec": containerExec, "run": containerRun}},
			"compose":   composeGrammar}}
	// docker compose exec SERVICE COMMAND..., compose run SERVICE COMMAND...
	composeGrammar = &Grammar{Role: RolePlain, ValueOpts: "fp", ValueLong: []string{"file", "project-name", "project-directory",
		"profile", "env-file", "ansi", "progress", "parallel"},
		Subs: map[string]*Grammar{
			"exec": {Role: RoleWrapper, Leading: 1, ValueOpts: "euw", ValueLong: []string{"env", "user", "workdir", "index"}},
			"run": {Role: RoleWrapper, Leading: 1, ValueOpts: "eulpvw", ProgLong: []string{"entrypoint"}, UnknownVal: true, FlagLong: []string{"detach", "rm", "no-deps",
				"service-ports", "use-aliases", "remove-orphans", "build", "no-TTY", "quiet-pull", "interactive", "tty"}}}}
	// kubectl exec POD [-c C] -- COMMAND...; options may come anywhere
	// before "--", and most long options take a value.
	kubeFlags = []string{"stdin", "tty", "quiet", "insecure-skip-tls-verify", "match-server-version", "warnings-as-errors",
		"all-namespaces", "help", "rm", "attach", "command", "privileged", "leave-stdin-open", "share-processes", "same-node"}
	kubeExec    = &Grammar{Role: RoleWrapper, Leading: 1, OptsAfter: true, ValueOpts: "cfnsv", UnknownVal: true, FlagLong: kubeFlags}
	kubeGrammar = &Grammar{Role: RolePlain, ValueOpts: "nsv", UnknownVal: true, FlagLong: kubeFlags,
		Subs: map[string]*Grammar{"exec": kubeExec, "run": kubeExec, "debug": kubeExec,
			"rsh": {Role: RoleWrapper, Leading: 1, OptsAfter: true, ValueOpts: "c", ValueLong: []string{"container", "shell", "timeout", "selector"}}}}
	// lxc exec INSTANCE [--env K=V] -- COMMAND..., multipass exec VM -- ...
	vmExec    = &Grammar{Role: RoleWrapper, Leading: 1, OptsAfter: true, ValueOpts: "d", ValueLong: []string{"env", "user", "group", "cwd", "mode", "project", "working-directory"}}
	vmGrammar = &Grammar{Role: RolePlain, ValueLong: []string{"project"}, Subs: map[string]*Grammar{"exec": vmExec}}
)

// grammars maps a program's base name to its grammar (init adds the
// programs that share one).
var grammars = map[string]*Grammar{
	// Interpreters.
	"python": pythonGrammar, "pypy": pythonGrammar,
	"perl": {Role: RoleInterp, Lang: "perl", CodeOpts: "eE", ModOpts: "Mm", ValueOpts: "I", WriteOpts: "i"},
	"ruby": rubyGrammar, "irb": rubyGrammar, "jruby": rubyGrammar, "truffleruby": rubyGrammar,
	"node": nodeGrammar, "nodejs": nodeGrammar, "deno": denoGrammar, "bun": denoGrammar, "qjs": nodeGrammar, "d8": nodeGrammar,
	"php":       {Role: RoleInterp, Lang: "php", CodeOpts: "rBRE", ModOpts: "d", ProgOpts: "f", ValueOpts: "cz"},
	"lua":       {Role: RoleInterp, Lang: "lua", CodeOpts: "e", ModOpts: "l"},
	"luajit":    {Role: RoleInterp, Lang: "lua", CodeOpts: "ej", ModOpts: "l"},
	"rscript":   {Role: RoleInterp, Lang: "r", CodeOpts: "e"},
	"r":         {Role: RoleInterp, Lang: "r", CodeOpts: "e", ValueLong: []string{"file"}},
	"julia":     {Role: RoleInterp, Lang: "julia", CodeOpts: "eEL"},
	"osascript": {Role: RoleInterp, Lang: "applescript", CodeOpts: "e"},
	"tclsh":     {Role: RoleInterp, Lang: "tcl"},
	"wish":      {Role: RoleInterp, Lang: "tcl"},
	"expect":    {Role: RoleInterp, Lang: "tcl", CodeOpts: "cf"},
	"guile":     {Role: RoleInterp, CodeOpts: "cels"},
	"awk":       awkGrammar, "gawk": awkGrammar, "mawk": awkGrammar, "nawk": awkGrammar, "busybox-awk": awkGrammar,
	"sed": sedGrammar, "gsed": sedGrammar,
	// Builtins (the others are in init): read -a takes an array name.
	"read": {Role: RoleNames, ValueOpts: "dinNptu", CodeOpts: "a"},
	// Wrappers: they run a command.
	"env":              {Role: RoleWrapper, ValueOpts: "uCP", ValueLong: []string{"unset", "chdir"}, SplitOpts: "S", SplitLong: []string{"split-string"}, Assigns: true, DashOpt: true},
	"sudo":             sudoGrammar,
	"run0":             {Role: RoleWrapper, ValueOpts: "ugDM", ValueLong: []string{"user", "group", "chdir", "machine", "property", "description", "slice", "setenv", "nice", "background", "unit"}, Assigns: true},
	"doas":             {Role: RoleWrapper, ValueOpts: "uC", ShellFlags: "s", NoExec: "L"},
	"pkexec":           {Role: RoleWrapper, ValueLong: []string{"user"}},
	"nice":             {Role: RoleWrapper, ValueOpts: "n", ValueLong: []string{"adjustment"}, Numeric: true},
	"timeout":          {Role: RoleWrapper, ValueOpts: "sk", ValueLong: []string{"signal", "kill-after"}, Leading: 1},
	"stdbuf":           {Role: RoleWrapper, ValueOpts: "ioe", ValueLong: []string{"input", "output", "error"}},
	"ionice":           {Role: RoleWrapper, ValueOpts: "cnpPu", ValueLong: []string{"class", "classdata"}, NoExec: "pPu"},
	"chroot":           {Role: RoleWrapper, ValueLong: []string{"userspec", "groups"}, Leading: 1},
	"command":          {Role: RoleWrapper, NoExec: "vV"},
	"exec":             {Role: RoleWrapper, ValueOpts: "a"},
	"time":             {Role: RoleWrapper, ValueOpts: "fo", ValueLong: []string{"format", "output"}},
	"unshare":          {Role: RoleWrapper, ValueOpts: "SGRw", ValueLong: []string{"setgroups", "propagation", "map-user", "map-group", "map-users", "map-groups", "root", "wd", "setuid", "setgid"}},
	"nsenter":          {Role: RoleWrapper, ValueOpts: "tSG", ValueLong: []string{"target", "setuid", "setgid", "env"}},
	"systemd-run":      {Role: RoleWrapper, ValueOpts: "upEMH", UnknownVal: true, FlagLong: []string{"user", "system", "scope", "pty", "pipe", "quiet", "wait", "collect", "no-block", "remain-after-exit", "same-dir", "send-sighup", "no-ask-password", "shell", "ignore-failure"}},
	"chrt":             {Role: RoleWrapper, ValueOpts: "TPD", Leading: 1, NoExec: "pm"},
	"taskset":          {Role: RoleWrapper, Leading: 1, NoExec: "p"},
	"prlimit":          {Role: RoleWrapper, NoExec: "p", ValueLong: []string{"pid"}},
	"strace":           {Role: RoleWrapper, ValueOpts: "abeEIoOpPsSuUX"},
	"ltrace":           {Role: RoleWrapper, ValueOpts: "AaDeEFiLlnopsuwxX"},
	"numactl":          {Role: RoleWrapper, ValueOpts: "CNmiPp"},
	"torsocks":         {Role: RoleWrapper, ValueOpts: "upaP"},
	"proxychains":      {Role: RoleWrapper, ValueOpts: "f"},
	"proxychains4":     {Role: RoleWrapper, ValueOpts: "f"},
	"faketime":         {Role: RoleWrapper, ValueOpts: "m", Leading: 1},
	"xvfb-run":         {Role: RoleWrapper, ValueOpts: "nsfepw"},
	"dbus-run-session": {Role: RoleWrapper, ValueLong: []string{"config-file", "dbus-daemon"}},
	"caffeinate":       {Role: RoleWrapper, ValueOpts: "tw"},
	"chpst":            {Role: RoleWrapper, ValueOpts: "uUbe/nlLmdofpcr"},
	"setpriv":          {Role: RoleWrapper, ValueLong: []string{"reuid", "regid", "groups", "inh-caps", "ambient-caps", "bounding-set", "securebits", "pdeathsig", "selinux-label", "apparmor-profile", "landlock-access", "landlock-rule"}},
	"screen":           {Role: RoleWrapper, ValueOpts: "SsctehpTX"},
	"flock":            {Role: RoleWrapper, ValueOpts: "wE", ValueLong: []string{"timeout", "wait", "conflict-exit-code"}, CodeOpts: "c", CodeLong: []string{"command"}, Leading: 1, CmdLine: true},
	"script":           {Role: RoleWrapper, ValueOpts: "EIOBTm", ValueLong: []string{"echo", "log-in", "log-out", "log-io", "log-timing", "logging-format", "output-limit"}, CodeOpts: "c", CodeLong: []string{"command"}, NoExec: "V", Permute: true},
	"tini":             {Role: RoleWrapper, ValueOpts: "peg"},
	"dumb-init":        {Role: RoleWrapper, ValueLong: []string{"rewrite"}},
	"entr":             {Role: RoleWrapper, ShellFlags: "s"},
	"rlwrap":           {Role: RoleWrapper, ValueOpts: "bCDefFgHlMOpPqsStwz"},
	"trickle":          {Role: RoleWrapper, ValueOpts: "duwtlnLP"},
	"cpulimit":         {Role: RoleWrapper, ValueOpts: "lpe", ValueLong: []string{"limit", "pid", "exe", "cpu"}, NoExec: "pe"},
	"systemd-inhibit":  {Role: RoleWrapper, ValueLong: []string{"what", "who", "why", "mode"}},
	"dbus-launch":      {Role: RoleWrapper, ValueLong: []string{"config-file", "autolaunch"}},
	"ssh-agent":        {Role: RoleWrapper, ValueOpts: "aEPtO", NoExec: "kD"},
	"cgexec":           {Role: RoleWrapper, ValueOpts: "g"},
	"runcon":           {Role: RoleWrapper, ValueOpts: "turl", ValueLong: []string{"type", "user", "role", "range"}},
	"sem":              {Role: RoleWrapper, ValueOpts: "jP", ValueLong: []string{"id", "jobs", "semaphorename", "semaphoretimeout", "st"}},
	"daemonize":        {Role: RoleWrapper, ValueOpts: "ceEoplu"},
	"softlimit":        {Role: RoleWrapper, ValueOpts: "amdosflcrpt"},
	"lckdo":            {Role: RoleWrapper, ValueOpts: "w", Leading: 1},
	"xargs":            {Role: RoleXargs, ValueOpts: "adEILnPs", ValueLong: []string{"arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"}, OptOpts: "iel", OptLong: []string{"replace", "eof", "max-lines"}},
	"git": {Role: RolePlain, Subcommand: true, ValueOpts: "C", ValueLong: []string{"git-dir", "work-tree", "namespace"}, CodeOpts: "c", CodeLong: []string{"config-env", "exec-path"},
		RunOpts: "C", RunLong: []string{"git-dir", "work-tree"}, Subs: gitSubcommands},
	// Commands that join their operands into a shell command line.
	"ssh":      sshGrammar,
	"watch":    {Role: RoleWrapper, ValueOpts: "nq", ValueLong: []string{"interval", "equexit"}, Join: true, JoinOff: "x"},
	"parallel": {Role: RolePlain, Join: true},
	"su":       {Role: RoleSu, ValueOpts: "gGsw", CodeOpts: "c", CodeLong: []string{"command", "session-command"}, Leading: 1},
	"runuser":  {Role: RoleSu, ValueOpts: "gGsuw", CodeOpts: "c", CodeLong: []string{"command", "session-command"}, Leading: 1},
	"sg":       {Role: RoleSu, CodeOpts: "c", Leading: 1},
	"ksu":      {Role: RoleSu, CodeOpts: "c", Leading: 1},
	"curl": {Role: RoleCurl, Permute: true, WriteOpts: "oODc", WriteLong: []string{"output", "remote-name", "remote-name-all", "output-dir", "dump-header",
		"cookie-jar", "trace", "trace-ascii", "stderr", "libcurl", "etag-save", "hsts", "alt-svc"}, RunOpts: "K", RunLong: []string{"config"}},
	// Options that run commands.
	"tar": tarGrammar, "gtar": tarGrammar, "bsdtar": tarGrammar,
	"rsync": {Role: RolePlain, Permute: true, CodeOpts: "e", CodeLong: []string{"rsh", "rsync-path"}, WriteLong: []string{"log-file", "write-batch", "only-write-batch"}, OperandForms: ":"},
	"sort": {Role: RolePlain, Permute: true, ValueOpts: "kStTo", ValueLong: []string{"key", "field-separator", "buffer-size", "temporary-directory", "output",
		"files0-from", "parallel", "batch-size", "random-source"}, CodeLong: []string{"compress-program"}, WriteOpts: "o", WriteLong: []string{"output"}},
	"wget": {Role: RolePlain, Permute: true, ValueOpts: "oOaPeiUtTwQ", WriteOpts: "oOaP", WriteLong: []string{"output-document", "output-file", "append-output", "directory-prefix"},
		RunOpts: "e", RunLong: []string{"execute", "config"}},
	"less": {Role: RolePlain, Permute: true, ValueOpts: "bhjkoOpPTxyz", WriteOpts: "oO", WriteLong: []string{"log-file", "LOG-FILE"}},
	"npm":  {Role: RolePlain, Permute: true, CodeOpts: "c", CodeLong: []string{"script-shell", "call", "shell"}, RunLong: []string{"userconfig", "globalconfig"}},
	"scp":  {Role: RolePlain, Permute: true, ValueOpts: "cDiJlP", ModOpts: "oSF", OperandForms: ":"},
	"sftp": {Role: RolePlain, Permute: true, ValueOpts: "BciJlPR", ModOpts: "oSFbD"},
	"man":  {Role: RolePlain, Permute: true, CodeOpts: "P", CodeLong: []string{"pager", "html"}},
	"zip":  {Role: RolePlain, Permute: true, OneDash: true, CodeLong: []string{"TT", "unzip-command"}},
	// Programs whose option values are commands of their own: SQL with \!
	// escapes, debugger, editor and make commands, Lisp.
	"psql":    {Role: RolePlain, Permute: true, CodeOpts: "c", CodeLong: []string{"command"}, ProgOpts: "f", ProgLong: []string{"file"}},
	"mysql":   mysqlGrammar,
	"mariadb": mysqlGrammar,
	"sqlite3": {Role: RolePlain, Permute: true, OneDash: true, CodeLong: []string{"cmd"}, ProgLong: []string{"init"}},
	"gdb":     {Role: RolePlain, Permute: true, OneDash: true, CodeLong: []string{"ex", "iex", "eval-command", "init-eval-command"}, ProgLong: []string{"x", "command", "ix"}},
	"lldb":    {Role: RolePlain, Permute: true, OneDash: true, CodeLong: []string{"o", "one-line", "O", "one-line-before-file", "k"}, ProgLong: []string{"s", "source"}},
	"vim":     vimGrammar, "vi": vimGrammar, "nvim": vimGrammar, "ex": vimGrammar, "view": vimGrammar, "vimdiff": vimGrammar, "gvim": vimGrammar, "rvim": vimGrammar,
	"emacs": {Role: RolePlain, Permute: true, OneDash: true, CodeLong: []string{"eval", "execute", "f", "funcall"}, ProgLong: []string{"l", "load"}},
	"make":  makeGrammar, "gmake": makeGrammar, "bmake": makeGrammar, "remake": makeGrammar,
	"redis-cli": {Role: RolePlain, Permute: true, CodeLong: []string{"eval"}},
	"dig":       digGrammar, "kdig": digGrammar, "delv": digGrammar, "drill": digGrammar,
	"dd": {Role: RolePlain, OperandForms: "="},
	"ps": {Role: RolePlain, Permute: true, ValueOpts: "CGgOopstUuN", OperandForms: "a"},
	// Commands run in a container, a pod or a virtual machine.
	"docker": containerGrammar, "podman": containerGrammar, "nerdctl": containerGrammar,
	"docker-compose": composeGrammar, "podman-compose": composeGrammar,
	"kubectl": kubeGrammar, "oc": kubeGrammar,
	"lxc": vmGrammar, "incus": vmGrammar, "multipass": vmGrammar,
	"sshpass":        {Role: RoleWrapper, ValueOpts: "pfdP"},
	"autossh":        autosshGrammar,
	"mosh":           {Role: RoleWrapper, Leading: 1, OptsAfter: true, ValueOpts: "p", ValueLong: []string{"ssh", "port", "predict", "family", "server", "client", "bind-server", "experimental-remote-ip"}},
	"pdsh":           {Role: RoleWrapper, ValueOpts: "wxRlutfgN", Join: true},
	"pssh":           psshGrammar,
	"parallel-ssh":   psshGrammar,
	"clush":          {Role: RoleWrapper, ValueOpts: "wxgXlfuotR", Join: true},
	"systemd-nspawn": {Role: RoleWrapper, ValueOpts: "DiMuEUSZLa", UnknownVal: true, FlagLong: []string{"boot", "quiet", "ephemeral", "read-only", "private-network", "as-pid2", "pipe", "keep-unit", "private-users-chown", "volatile"}},
	"flatpak-spawn":  {Role: RoleWrapper, ValueLong: []string{"env", "directory", "forward-fd", "unset-env", "app-path", "usr-path"}},
	// ansible HOSTS -m shell -a CMD: -a is the module's arguments, shell
	// text for shell, command and raw.
	"ansible": {Role: RoleWrapper, Leading: 1, CodeOpts: "a", CodeLong: []string{"args"}, ValueOpts: "BcefiklMmPtTu",
		ValueLong: []string{"inventory", "module-name", "user", "extra-vars", "forks", "limit", "become-user", "become-method", "connection", "timeout", "private-key", "module-path", "vault-id", "vault-password-file"}},
	"docker-machine": {Role: RolePlain, Subs: map[string]*Grammar{"ssh": {Role: RoleWrapper, Leading: 1, Join: true}}},
	"limactl":        {Role: RolePlain, Subs: map[string]*Grammar{"shell": {Role: RoleWrapper, Leading: 1, ValueLong: []string{"workdir", "shell"}}}},
	"toolbox":        {Role: RolePlain, Subs: map[string]*Grammar{"run": {Role: RoleWrapper, ValueOpts: "cdr", ValueLong: []string{"container", "distro", "release"}}}},
	// gcloud compute ssh VM --command CMD (or -- CMD), az vm run-command
	// invoke --scripts CMD: most long options take a value.
	"gcloud": {Role: RolePlain, UnknownVal: true, FlagLong: []string{"quiet", "log-http", "help"}, Subs: map[string]*Grammar{"compute": {Role: RolePlain, UnknownVal: true,
		FlagLong: []string{"quiet", "log-http", "help"}, Subs: map[string]*Grammar{"ssh": {Role: RoleWrapper, Leading: 1, OptsAfter: true, CodeLong: []string{"command"}, UnknownVal: true,
			FlagLong: []string{"quiet", "tunnel-through-iap", "internal-ip", "dry-run", "plain", "troubleshoot", "force-key-file-overwrite", "help", "log-http"}}}}}},
	"az": {Role: RolePlain, Subs: map[string]*Grammar{"vm": {Role: RolePlain, Subs: map[string]*Grammar{"run-command": {Role: RolePlain, Subs: map[string]*Grammar{
		"invoke": {Role: RoleWrapper, ValueOpts: "gn", CodeLong: []string{"scripts"}, UnknownVal: true, FlagLong: []string{"no-wait", "help", "verbose", "debug", "only-show-errors"}}}}}}}},
	"crictl":  {Role: RolePlain, ValueOpts: "ir", ValueLong: []string{"config", "image-endpoint", "runtime-endpoint", "timeout"}, Subs: map[string]*Grammar{"exec": {Role: RoleWrapper, Leading: 1, ValueLong: []string{"timeout"}}}},
	"vagrant": {Role: RolePlain, Subs: map[string]*Grammar{"ssh": {Role: RoleWrapper, CodeOpts: "c", CodeLong: []string{"command"}}}},
}

// Programs that share a grammar with no options of its own, or one of
// the grammars above.
func init() {
	for g, names := range map[*Grammar]string{
		shellGrammar: "sh bash rbash dash zsh ksh ksh93 mksh pdksh oksh lksh ash yash posh fish csh tcsh bash5 hush msh",
		// Shell builtins that evaluate their arguments, or run a script.
		{Role: RoleEval}:   "eval trap let alias bind complete compgen fc enable hash",
		{Role: RoleSource}: "source .",
		// Builtins whose operands are variable names or NAME=value words.
		{Role: RoleNames}:   "unset mapfile readarray getopts",
		{Role: RoleDeclare}: "declare typeset",
		{Role: RoleExport}:  "export readonly local",
		{Role: RolePrintf}:  "printf",
		{Role: RoleTest}:    "test [",
		// Wrappers that run their operands after a few options of their own
		// (moreutils, expect, LD_PRELOAD shims, sandboxes and daemon tools),
		// or after one leading operand (a user, a lock, a directory).
		{Role: RoleWrapper}: "nohup busybox toybox builtin setsid valgrind catchsegv fakeroot coproc chronic unbuffer " +
			"ifne eatmydata nocache tsocks torify firejail",
		{Role: RoleWrapper, Leading: 1}: "gosu su-exec setuidgid envuidgid envdir setlock with-lock-ex",
		{Role: RoleFind, WriteLong: []string{"fprint", "fprint0", "fprintf", "fls", "delete"}}: "find gfind bfs",
	} {
		for _, name := range strings.Fields(names) {
			grammars[name] = g
		}
	}
}

// GrammarOf finds a program's grammar by its base name; an interpreter's
// version suffix (python3.12, perl5.36, lua5.4, pypy3) is ignored.
func GrammarOf(name string) *Grammar {
	// The table's names are lower case.
	base := strings.ToLower(name[strings.LastIndexByte(name, '/')+1:])
	if g := grammars[base]; g != nil {
		return g
	}
	if g := grammars[strings.TrimRight(base, "0123456789.-")]; g != nil && g.Role == RoleInterp {
		return g
	}
	return nil
}
