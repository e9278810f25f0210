// Package shellguard is the shell deny rules: it loads the rule file,
// parses a command line (with policy/shellsyntax), normalises it, follows
// what it runs (sh -c, eval, wrappers, interpreters' inline code, data
// decoded and piped into a shell) and reports the first rule a command
// breaks (Load, (*Rules).CheckCommand, (*Rules).CheckArgv).
package shellguard
