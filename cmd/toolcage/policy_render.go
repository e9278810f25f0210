package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/policy/template"
)

type policyRenderOptions struct {
	template   string
	argsJSON   string // a JSON object; "" means {}
	configFile string
	allowDash  []string
	json       bool
}

func policyRenderCommand() *cli.Command {
	return &cli.Command{
		Name:  "render",
		Usage: "show what a shell tool's command template would run",
		UsageText: `toolcage policy render --template TEMPLATE [--args-json JSON] [--config FILE] [--allow-dash NAME]... [--json]

Examples:
   toolcage policy render -t 'dig +short {{.type}} {{.domain}}' --args-json '{"type": "A", "domain": "example.com"}'
   toolcage policy render -t 'du -sh {{.dir}} | sort -h' --args-json '{"dir": "/var/log"}' --json
   toolcage policy render -t 'seq {{.from}} 3' --args-json '{"from": -2}' --allow-dash from`,
		Description: `Renders a shell tool's command template with the given arguments, exactly as
the daemon would for a call, and prints what would run:

   argv: ["dig","+short","A","example.com"]   one simple command, run with no shell
   shell: du -sh '/var/log' | sort -h         anything else, run as sh -c TEXT

An argv is printed as a JSON array, one element per argument, so a value with
spaces or quotes in it is visibly one element. With --json the rendering is
printed as {"mode": "argv", "argv": [...]} or {"mode": "shell", "command": "..."}.

The checks a call meets run too: where placeholders may sit in the template,
the option rule (a value may not start with "-" where the program would read
it as an option, unless its parameter is named with --allow-dash, which is
what a schema allowing a leading "-" does), the curl file rule, and the shell
deny rules of the daemon's configuration (--config FILE, else the embedded
defaults). --args-json - reads the arguments from stdin.

Nothing runs and no daemon is needed. A template that does not parse exits 2,
as does a missing argument; a template, value or command refused by policy
exits 3.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "template", Aliases: []string{"t"}, Usage: "the shell command `TEMPLATE`, as in a tool's shell.command (- for stdin)"},
			&cli.StringFlag{Name: "args-json", Usage: "the arguments as one JSON `OBJECT` (- for stdin; default {})"},
			configFlag(),
			&cli.StringSliceFlag{Name: "allow-dash", Usage: "let parameter `NAME` start with \"-\" (repeatable)"},
			jsonFlag(),
		},
		Action: func(cCtx *cli.Context) error {
			if err := noArgs(cCtx); err != nil {
				return err
			}
			a := appOf(cCtx)
			opts := policyRenderOptions{
				template:   cCtx.String("template"),
				configFile: cCtx.String("config"),
				allowDash:  cCtx.StringSlice("allow-dash"),
				json:       a.jsonOut(cCtx),
			}
			if !cCtx.IsSet("template") {
				return usageErrorf(cCtx, "missing --template TEMPLATE (a shell command with {{.name}} placeholders)")
			}
			if opts.template == "-" && cCtx.String("args-json") == "-" {
				return usageErrorf(cCtx, "--template and --args-json cannot both read stdin")
			}
			if opts.template == "-" {
				b, err := a.readInput("-", template.MaxBytes)
				if err != nil {
					return err
				}
				opts.template = strings.TrimSuffix(string(b), "\n")
			}
			if cCtx.IsSet("args-json") {
				var err error
				if opts.argsJSON, err = a.argsJSON(cCtx.String("args-json")); err != nil {
					return err
				}
			}
			return runPolicyRender(cCtx.Context, a, opts)
		},
	}
}

func runPolicyRender(_ context.Context, a *app, opts policyRenderOptions) error {
	args, err := decodeArgsJSON(opts.argsJSON)
	if err != nil {
		return err
	}
	rules, err := loadShellRules(opts.configFile)
	if err != nil {
		return err
	}
	c, err := template.CompileShell(opts.template)
	if err != nil {
		return templateError(opts.template, err)
	}
	dash := make(map[string]bool, len(opts.allowDash))
	for _, n := range opts.allowDash {
		dash[n] = true
	}
	r, err := c.Render(args, template.ShellOptions{AllowDash: dash})
	if err != nil {
		return renderFailure(err)
	}
	if err := checkShellRendering(rules, r); err != nil {
		return policyDenied(err)
	}
	if opts.json {
		return writePlainJSON(a.out, r)
	}
	return writeShellRendering(a.out, r)
}

// decodeArgsJSON decodes the arguments as the daemon does, numbers kept
// exact.
func decodeArgsJSON(s string) (map[string]any, error) {
	if strings.TrimSpace(s) == "" {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, codedErrorf(errdefs.InvalidArguments, "--args-json: %v", err)
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// templateError sorts a template CompileShell refused. Text that does not
// parse as a template or as shell, with or without its placeholders, is the
// author's mistake (exit 2); a template refused only for where its
// placeholders sit (inside quotes, in command position, as code) is a
// policy refusal (exit 3).
func templateError(tmpl string, err error) error {
	t, perr := template.Parse(tmpl)
	if perr != nil {
		return inputErrorf("%v", perr)
	}
	// The same text with every placeholder a plain word: if that is
	// refused too, the placeholders are not the problem.
	var b strings.Builder
	prev := 0
	for _, p := range t.Placeholders() {
		b.WriteString(tmpl[prev:p.Offset])
		b.WriteString("x")
		prev = p.End
	}
	b.WriteString(tmpl[prev:])
	if _, nerr := template.CompileShell(b.String()); nerr != nil {
		return inputErrorf("%v", err)
	}
	return codedErrorf(errdefs.PolicyDenied, "template refused: %v", err)
}

// renderFailure maps a render error as the dispatcher does: a missing
// argument is the caller's mistake (exit 2), a refused value (option rule,
// NUL byte, unavailable secret) a policy matter (exit 3).
func renderFailure(err error) error {
	var miss *template.MissingArgumentError
	if errors.As(err, &miss) {
		return codedErrorf(errdefs.InvalidArguments, "%v", err)
	}
	return policyDenied(err)
}
