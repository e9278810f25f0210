package template

import (
	"regexp"
	"slices"
	"strings"

	"github.com/toolcage/toolcage/policy/shellsyntax"
)

// Code through a fixed wrapper: the program text of sh -c, python -c,
// perl -e, node -e, an awk program... is fixed, but when it runs its
// positional arguments as code (eval "$1", exec(sys.argv[1]),
// system(ARGV[1])), a placeholder among those arguments is in code
// position all the same. So is a placeholder among sqlite3's SQL
// operands; one given to an option whose value another program runs as
// its own commands (psql -c, gdb -ex, vim -c) is the grammar's code
// option (policy/shellsyntax), refused in checkOptions.

// runsArgs matches program text that runs its positional arguments (or
// values handed in with awk -v) as code, per language.
var runsArgs = map[string]*regexp.Regexp{
	// eval of anything, a positional parameter in command position, or one
	// handed to a shell, source, or a pipe or here-string into a shell.
	"sh":     regexp.MustCompile(`\beval\b|(^|[;&|({` + "`" + `]|\$\(|\b(then|do|else|exec|command|builtin|xargs|env|nohup|time)\b)\s*"?\$(\{?[0-9@*]|argv)|\b(sh|bash|zsh|dash|ksh|mksh|ash|fish|python[0-9.]*|perl|ruby|node|php|lua)\b[^;|&]*\s-[a-zA-Z]*[ceE]\s+"?\$\{?[0-9@*]|(^|[;&|(]|\bdo|\bthen)\s*(source|\.)\s+("?\$\{?[0-9@*]|<)|\|\s*(sh|bash|zsh|dash|ksh|mksh|ash)\b|\b(sh|bash|zsh|dash|ksh|mksh|ash)\s*(-s\s*)?<<<|\bxargs\b[^;&]*\b(sh|bash|zsh|dash|ksh)\s+-c`),
	"python": regexp.MustCompile(`\b(exec|eval|compile|execfile|system|popen|Popen|run|call|check_call|check_output|getoutput|getstatusoutput|spawn[a-z]*|exec[lv]p?e?|__import__|import_module|runpy)\s*\(`),
	"perl":   regexp.MustCompile(`\b(eval|system|exec|qx|open|do|require)\b|` + "`"),
	"ruby":   regexp.MustCompile(`\b(eval|instance_eval|class_eval|module_eval|system|exec|spawn|popen|send|public_send|require|load)\b|%x|` + "`"),
	"js":     regexp.MustCompile(`\b(eval|Function|execSync|exec|execFile|execFileSync|spawn|spawnSync|fork|runInNewContext|runInThisContext|runInContext|compileFunction|require|import)\b`),
	"php":    regexp.MustCompile(`\b(eval|assert|system|exec|shell_exec|passthru|popen|proc_open|pcntl_exec|create_function|include|require)\b|` + "`"),
	"lua":    regexp.MustCompile(`\b(load|loadstring|dofile|require|os\.execute|io\.popen)\b`),
	"awk":    regexp.MustCompile(`\bsystem\s*\(|\|\s*getline|\bprint[^;}]*\||\bprintf[^;}]*\|`),
	"tcl":    regexp.MustCompile(`\b(exec|spawn|eval|uplevel|subst|source|open|system)\b`),
	"r":      regexp.MustCompile(`\b(eval|parse|system|system2|source)\b`),
}

// readsArgs matches program text that reads its positional arguments.
var readsArgs = map[string]*regexp.Regexp{
	"sh":     regexp.MustCompile(`\$(\{?[0-9@*#]|argv)|\bshift\b|\bfor\s+\w+\s*(;|do\b|$)|\bgetopts\b`),
	"python": regexp.MustCompile(`\bargv\b|\bfileinput\b|\bargparse\b`),
	"perl":   regexp.MustCompile(`\$ARGV\b|@ARGV|\bshift\b|<>|\bpop\b`),
	"ruby":   regexp.MustCompile(`\bARGV\b|\bARGF\b|\$\*`),
	"js":     regexp.MustCompile(`\bprocess\.argv\b|\bDeno\.args\b|\bBun\.argv\b`),
	"php":    regexp.MustCompile(`\$argv\b|\$_SERVER\s*\[\s*['"]argv`),
	"lua":    regexp.MustCompile(`\barg\s*\[|\.\.\.`),
	"awk":    regexp.MustCompile(`\bARGV\b|\bENVIRON\b|\bgetline\b`),
	"tcl":    regexp.MustCompile(`\$argv\b|\bargv\b`),
	"r":      regexp.MustCompile(`\bcommandArgs\b`),
}

// checkPositionalCode refuses a placeholder among the positional
// arguments of a fixed program (sh -c TEXT, python -c TEXT, an awk
// program...) that runs them as code.
func (ck *checker) checkPositionalCode(name string, r shellsyntax.Reading, ws []*word) error {
	lang := r.G.Lang
	if r.G.Role == shellsyntax.RoleShell {
		lang = "sh"
	}
	if runsArgs[lang] == nil {
		return nil
	}
	// The fixed code: option values and the code operand; awk -v
	// NAME={{x}} hands a value in as a variable.
	code := ""
	var vars []*word
	for _, o := range r.Opts {
		switch {
		case o.Kind == shellsyntax.OptCode && o.ValueWord >= 0:
			v, _ := literal(ws[o.ValueWord])
			code += v + "\n"
		case o.Kind == shellsyntax.OptCode:
			code += o.Value + "\n"
		case o.Kind == shellsyntax.OptValue && lang == "awk" && (o.Name == "v" || o.Name == "assign") && o.ValueWord >= 0:
			vars = append(vars, ws[o.ValueWord])
		}
	}
	if r.Code >= 0 {
		c, _ := literal(ws[r.Code])
		code += c
	}
	runs := strings.TrimSpace(runsArgs[lang].FindString(code)) // every pattern needs a character that is not a space
	if runs == "" {
		return nil
	}
	if err := ck.refuseAny(vars, hasPH, "%s's program runs what it is given (%s); a value handed in with -v is code here, so it may not come from an argument", name, runs); err != nil {
		return err
	}
	if !readsArgs[lang].MatchString(code) {
		return nil
	}
	return ck.refuseAny(ws[r.Args:], hasPH, "%s's program runs its arguments as code (%s); no argument may be one", name, runs)
}

// plusCommands read an operand starting with "+" as a command to run at
// start-up (less +!cmd runs a shell, vi +cmd an ex command).
var plusCommands = shellsyntax.WordSet(`less more most pg vi vim nvim view ex vimdiff gvim rvim nano`)

// sqlOperands are programs whose operands after the first are commands.
var sqlOperands = shellsyntax.WordSet(`sqlite3 sqlite duckdb`)

// checkSQLOperands refuses a placeholder as a command operand of sqlite3
// (its options' values are the grammar's, policy/shellsyntax).
func (ck *checker) checkSQLOperands(name string, args []*word) error {
	if !sqlOperands[name] {
		return nil
	}
	ops := slices.DeleteFunc(slices.Clone(args), func(w *word) bool { return strings.HasPrefix(litOf(w.pieces), "-") })
	if len(ops) < 2 {
		return nil
	}
	return ck.refuseAny(ops[1:], hasPH, "%s runs its operands after the database as SQL and dot commands (.shell runs a program); no argument may be one", name)
}
