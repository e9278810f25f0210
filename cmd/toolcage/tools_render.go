package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon"
	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
)

// argsFlags are --arg and --args-json, the arguments of a tool call; see
// readArgsFlags and app.toolArgs.
func argsFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "arg", Usage: "an argument `KEY=VALUE`, typed by the tool's schema (repeatable)"},
		&cli.StringFlag{Name: "args-json", Usage: "all arguments as one JSON `OBJECT` (- for stdin)"},
	}
}

// readArgsFlags returns the --arg pairs and the --args-json object (read
// from stdin for "-"); at most one of them is set.
func readArgsFlags(cCtx *cli.Context, a *app) (pairs []string, argsJSON string, err error) {
	pairs = cCtx.StringSlice("arg")
	if len(pairs) > 0 && cCtx.IsSet("args-json") {
		return nil, "", usageErrorf(cCtx, "--arg and --args-json cannot be used together")
	}
	if cCtx.IsSet("args-json") {
		if argsJSON, err = a.argsJSON(cCtx.String("args-json")); err != nil {
			return nil, "", err
		}
	}
	return pairs, argsJSON, nil
}

// toolArgs is the arguments object for a call of tool name: the --arg pairs
// typed and checked by its schema, else the --args-json object, else {}.
func (a *app) toolArgs(ctx context.Context, name string, pairs []string, argsJSON string) (json.RawMessage, error) {
	switch {
	case len(pairs) > 0:
		return a.typedArgs(ctx, name, pairs)
	case argsJSON != "":
		return json.RawMessage(argsJSON), nil
	}
	return json.RawMessage(`{}`), nil
}

type toolsRenderOptions struct {
	name     string
	pairs    []string // --arg k=v
	argsJSON string   // --args-json, already read when "-"
	json     bool
}

func toolsRenderCommand() *cli.Command {
	return &cli.Command{
		Name:      "render",
		Usage:     "show what a call of a shell or http tool would run or send",
		ArgsUsage: "NAME",
		UsageText: `toolcage tools render NAME [--arg KEY=VALUE]... | [--args-json JSON] [--json]

Examples:
   toolcage tools render dns_lookup --arg domain=example.com --arg record_type=MX
   toolcage tools render create_issue --args-json '{"title": "Disk full"}' --json`,
		Description: `Asks the daemon to render tool NAME's command or request with these
arguments, with every check a call would meet (schema, template rules, the
option rule, the shell deny rules, the URL allowlist), and prints it. Nothing
runs, nothing is sent and nothing is recorded.

A shell tool prints as 'toolcage policy render' does:

   argv: ["dig","+short","MX","example.com"]   one simple command, run with no shell
   shell: du -sh '/var/log' | sort -h          anything else, run as sh -c TEXT

An http tool prints its request: the method and URL, the headers, then a blank
line and the body, if any. The URL's host is checked against the tool's
allowed_domains here; its addresses are checked when the call connects (see
'toolcage policy url').

--arg and --args-json work as for 'toolcage call'. With --json the daemon's
answer is printed as is. A refusal by policy exits 3, bad arguments exit 2.`,
		Flags: append(argsFlags(), jsonFlag()),
		Action: func(cCtx *cli.Context) error {
			name, err := oneName(cCtx)
			if err != nil {
				return err
			}
			a := appOf(cCtx)
			opts := toolsRenderOptions{name: name, json: a.jsonOut(cCtx)}
			if opts.pairs, opts.argsJSON, err = readArgsFlags(cCtx, a); err != nil {
				return err
			}
			return runToolsRender(cCtx.Context, a, opts)
		},
	}
}

func runToolsRender(ctx context.Context, a *app, opts toolsRenderOptions) error {
	args, err := a.toolArgs(ctx, opts.name, opts.pairs, opts.argsJSON)
	if err != nil {
		return err
	}
	var r daemon.Rendering
	raw, err := a.request(ctx, http.MethodPost, "/v1/tools/"+api.PathEscape(opts.name)+"/render", api.CallRequest{Arguments: args}, &r)
	if err != nil {
		return err
	}
	if opts.json {
		return writeJSON(a.out, raw)
	}
	return writeRendering(a.out, &r)
}

// writeRendering prints a rendered shell command or HTTP request.
func writeRendering(w io.Writer, r *daemon.Rendering) error {
	switch {
	case r.Shell != nil:
		return writeShellRendering(w, r.Shell)
	case r.HTTP == nil:
		return codedErrorf(errdefs.Internal, "the daemon rendered %s tool %s as neither a command nor a request", r.Kind, r.Tool)
	}
	h := r.HTTP
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", h.Method, h.URL)
	names := make([]string, 0, len(h.Headers))
	for k := range h.Headers {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(&b, "%s: %s\n", k, h.Headers[k])
	}
	if len(h.Body) > 0 {
		b.WriteString("\n")
		if utf8.Valid(h.Body) {
			b.Write(h.Body)
			if h.Body[len(h.Body)-1] != '\n' {
				b.WriteString("\n")
			}
		} else {
			fmt.Fprintf(&b, "(%d bytes, not UTF-8 text; --json shows them base64-encoded)\n", len(h.Body))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
