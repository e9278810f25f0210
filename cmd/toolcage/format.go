package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/template"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
)

// Output selection, as Docker does it: -o json|table and --format TEMPLATE
// on every command that has --json. They are added here, to the command
// tree, so no verb file has to list them; a verb only asks a.jsonOut and
// writes its JSON through writeJSON, which a template then reshapes.

// formatFlags are --format and -o.
func formatFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "format", Usage: "print with a Go `TEMPLATE` over the --json objects, one line per item of a list (e.g. '{{.definition.name}}'); json = -o json"},
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "`FORMAT`: table (the default) or json (toolcage audit: also jsonl)"},
	}
}

// addOutputFlags gives c and its subcommands that take --json the --format
// and -o flags, and reads them before the command's own action runs.
func addOutputFlags(a *app, c *cli.Command) {
	for _, s := range c.Subcommands {
		addOutputFlags(a, s)
	}
	if c.Action == nil || !hasFlag(c.Flags, "json") || hasFlag(c.Flags, "format") {
		return
	}
	c.Flags = append(c.Flags, formatFlags()...)
	action := c.Action
	c.Action = func(cCtx *cli.Context) error {
		if err := a.setOutput(cCtx); err != nil {
			return err
		}
		return action(cCtx)
	}
}

func hasFlag(flags []cli.Flag, name string) bool {
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}

// setOutput reads --json, -o and --format for the command about to run.
func (a *app) setOutput(cCtx *cli.Context) error {
	a.jsonErrors = a.json || cCtx.Bool("json")
	out, format := cCtx.String("output"), cCtx.String("format")
	switch out {
	case "", "table":
	case "json":
		a.jsonErrors = true
	case "jsonl":
		// JSON Lines is an export format: only commands with --export
		// (toolcage audit) write it.
		if !hasFlag(cCtx.Command.Flags, "export") {
			return usageErrorf(cCtx, "-o jsonl is for exports (toolcage audit -o jsonl); here -o must be json or table")
		}
		if format != "" {
			return usageErrorf(cCtx, "-o jsonl and --format do not go together")
		}
		a.jsonErrors, a.outputJSONL = true, true
		return nil
	default:
		return usageErrorf(cCtx, "-o must be json or table, not %q", out)
	}
	switch {
	case format == "" || format == "table":
	case format == "json":
		a.jsonErrors = true
		out = "json"
	case out != "" || a.json || cCtx.Bool("json"):
		return usageErrorf(cCtx, "--format TEMPLATE goes alone, without -o or --json")
	default:
		tmpl, err := template.New("format").Funcs(formatFuncs).Parse(format)
		if err != nil {
			return usageErrorf(cCtx, "--format: %v", strings.TrimPrefix(err.Error(), "template: format:"))
		}
		a.out = &templateWriter{out: a.out, tmpl: tmpl}
		out = "json"
	}
	if out == "json" && cCtx.IsSet("output") && out != cCtx.String("output") {
		return usageErrorf(cCtx, "-o %s and --format json disagree", cCtx.String("output"))
	}
	a.outputJSON = out == "json"
	return nil
}

var formatFuncs = template.FuncMap{
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
	"join":  func(sep string, v []any) string { return joinAny(v, sep) },
	"upper": strings.ToUpper,
	"lower": strings.ToLower,
}

func joinAny(v []any, sep string) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, sep)
}

// templateWriter runs a --format template over each JSON value written to
// it: once per item when the value is a list, or an object whose only list
// of objects is its items ({"tools": [...], "total": 3}), else once.
type templateWriter struct {
	out  io.Writer
	tmpl *template.Template
}

func (w *templateWriter) Write(p []byte) (int, error) {
	dec := json.NewDecoder(bytes.NewReader(p))
	dec.UseNumber() // 42 prints as 42, not 4.2e+01
	var v any
	if err := dec.Decode(&v); err != nil {
		return 0, fmt.Errorf("--format: the answer is not JSON: %w", err)
	}
	var buf bytes.Buffer
	for _, item := range items(v) {
		if err := w.tmpl.Execute(&buf, item); err != nil {
			return 0, &cliError{msg: "--format: " + strings.TrimPrefix(err.Error(), "template: format:"), exit: exitUsage}
		}
		buf.WriteByte('\n')
	}
	if _, err := w.out.Write(buf.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// items is what a template runs over: a list's elements, the elements of an
// object's only list of objects, or the value itself.
func items(v any) []any {
	switch x := v.(type) {
	case []any:
		return x
	case map[string]any:
		var list []any
		n := 0
		for _, f := range x {
			if l, ok := f.([]any); ok && (len(l) == 0 || isObject(l[0])) {
				list = l
				n++
			}
		}
		if n == 1 {
			return list
		}
	}
	return []any{v}
}

func isObject(v any) bool {
	_, ok := v.(map[string]any)
	return ok
}

// jsonFlagsIn reports whether args ask for JSON output (--json, -o json,
// --format json) before any "--": errors found before a command runs (a bad
// flag) are then JSON too.
func jsonFlagsIn(args []string) bool {
	for i, tok := range args {
		next := ""
		if i+1 < len(args) {
			next = args[i+1]
		}
		switch tok {
		case "--":
			return false
		case "--json", "-json", "--json=true", "-o=json", "--output=json", "--format=json":
			return true
		case "-o", "--output", "--format", "-output", "-format":
			if next == "json" {
				return true
			}
		}
	}
	return false
}

// printJSONError writes err as the API does: {"error": {"code", "message",
// ...}}, one line on w. Errors found by the CLI get the code of their exit
// status: invalid_request (2), unavailable (no daemon), failed (1).
func printJSONError(w io.Writer, err error) {
	var (
		ce *cliError
		ae *api.Error
		ee *errdefs.Error
	)
	var xc cli.ExitCoder
	if errors.As(err, &xc) && err.Error() == "" {
		return // an exit status alone: the output already said why
	}
	var d api.ErrorDetail
	switch {
	case errors.As(err, &ae):
		d = ae.ErrorDetail
	case errors.As(err, &ce):
		d = api.ErrorDetail{Code: ce.code, Message: ce.msg, Problems: ce.problems}
	case errors.As(err, &ee):
		d = api.ErrorDetail{Code: ee.Code, Message: err.Error()}
	case errors.Is(err, api.ErrDaemonUnreachable):
		d = api.ErrorDetail{Code: errdefs.Unavailable, Message: requestRE.ReplaceAllString(err.Error(), "")}
	default:
		d = api.ErrorDetail{Message: strings.TrimSpace(strings.TrimPrefix(err.Error(), "Error: "))}
	}
	if d.Code == "" {
		switch exitCode(err) {
		case exitUsage:
			d.Code = errdefs.InvalidRequest
		default:
			d.Code = "failed"
		}
	}
	if d.Message == "" {
		d.Message = string(d.Code)
	}
	b, _ := json.Marshal(api.ErrorBody{Error: d})
	fmt.Fprintf(w, "%s\n", b)
}
