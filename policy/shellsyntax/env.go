package shellsyntax

import (
	"slices"
	"strings"
)

// Variables whose value a program runs as a command line. A fixed value of
// one is checked like the command it is: by the daemon for a tool's env:
// block, by the deny rules for NAME=value in a command; an argument may
// not set one (policy/template, ValidateShellEnv).

// runEnvNames are variables whose value a program runs as a command line
// (or, prompts, a shell expands, running what $(...) holds).
var runEnvNames = WordSet(`
	PAGER MANPAGER EDITOR VISUAL BROWSER TERMINAL SSH_ASKPASS SUDO_ASKPASS PROMPT_COMMAND LESSOPEN LESSCLOSE
	PS0 PS1 PS4
	GIT_SSH GIT_SSH_COMMAND GIT_PAGER GIT_EDITOR GIT_ASKPASS GIT_EXTERNAL_DIFF GIT_PROXY_COMMAND
	GIT_SEQUENCE_EDITOR RSYNC_RSH CVS_RSH RSYNC_CONNECT_PROG HGEDITOR LESSEDIT FCEDIT NNN_OPENER DIFFPROG MERGE`)

// runEnvSuffixes are the class of such variables.
var runEnvSuffixes = []string{"_COMMAND", "_CMD", "_PAGER", "_EDITOR", "_ASKPASS", "_RSH", "_SHELL", "_PROGRAM", "_HOOK", "_BROWSER", "_VIEWER"}

// EnvRuns reports whether programs run the value of environment variable
// name as a command line, so a fixed value is to be checked like one (see
// EnvCommand).
func EnvRuns(name string) bool {
	if runEnvNames[name] || strings.HasPrefix(name, "BASH_FUNC_") || strings.HasSuffix(name, "%%") {
		return true
	}
	upper := strings.ToUpper(name)
	return slices.ContainsFunc(runEnvSuffixes, func(s string) bool { return strings.HasSuffix(upper, s) })
}

// EnvCommand is the shell command a program runs for variable name set to
// value (for EnvRuns variables): LESSOPEN's "|cmd %s" is cmd, an exported
// function BASH_FUNC_f%%='() { body; }' is the definition f() { body; }
// (whose body the deny rules walk), a pager or editor is run on a file.
func EnvCommand(name, value string) string {
	switch {
	case name == "LESSOPEN" || name == "LESSCLOSE":
		return strings.ReplaceAll(strings.TrimLeft(strings.TrimSpace(value), "|-"), "%s", "file")
	case strings.HasPrefix(name, "BASH_FUNC_") || strings.HasSuffix(name, "%%") || strings.HasSuffix(name, "()"):
		f := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(name, "BASH_FUNC_"), "%%"), "()")
		if f == "" || strings.ContainsAny(f, " \t\n;&|<>()$`'\"\\") {
			f = "f"
		}
		return f + " " + strings.TrimSpace(value)
	}
	return value
}
