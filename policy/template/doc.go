// Package template is the tool templates: it parses {{placeholders}},
// compiles shell command templates (checking each placeholder's shell
// context) and HTTP request templates, and renders them with a call's
// arguments so that no argument can change what runs (Parse, CompileShell,
// CompileHTTP, ShellQuote).
package template
