package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/internal/termsafe"
)

type callOptions struct {
	name     string
	pairs    []string // --arg k=v
	argsJSON string   // --args-json, already read when "-"
	json     bool
	noWait   bool   // --no-wait: do not wait for a person's approval
	worker   string // --worker: call as that worker's agent would
}

func callCommand() *cli.Command {
	return &cli.Command{
		Name:      "call",
		Usage:     "call a tool",
		ArgsUsage: "NAME",
		UsageText: `toolcage call NAME [--arg KEY=VALUE]... | [--args-json JSON]

Examples:
   toolcage call dns_lookup --arg domain=example.com --arg record_type=MX
   toolcage call add_numbers --arg a=2 --arg b=40
   toolcage call create_issue --args-json '{"title": "Disk full", "labels": ["ops"]}'
   echo '{"city": "Oslo"}' | toolcage call weather --args-json -
   toolcage call --worker ops dns_lookup --arg domain=example.com`,
		Description: `Calls tool NAME through the daemon: policy checks, sandboxed run, audit.

--arg KEY=VALUE reads each value by the type the tool's parameters schema gives
KEY: integer and number as numbers, boolean as true/false/1/0/yes/no, object
and array as JSON, anything else as a string. The arguments are checked against
the schema before they are sent. --args-json passes a JSON object as is (- reads
it from stdin). With neither, the tool gets {}.

The result is printed as JSON on stdout; the tool's logs and a line naming the
call (its id in the audit log, the version and the time taken) go to stderr.
A tool that reports an error exits 1; a call refused by policy exits 3.

A tool with approval: ask waits until a person runs 'toolcage approvals allow'
(or deny) or the daemon's approvals.timeout passes; --no-wait returns at once
with the approval id instead.

--worker NAME makes the call exactly as worker NAME's agent would (caller
type llm): only the worker's tools exist, with its approvals, limits, rate
limit and profile. The audit log records you as the caller, through NAME.`,
		Flags: append(argsFlags(), jsonFlag(),
			&cli.BoolFlag{Name: "no-wait", Usage: "for a tool that asks approval: return at once (exit 3) with the approval id instead of waiting"},
			&cli.StringFlag{Name: "worker", Usage: "call as registered worker `NAME`'s agent would"}),
		Action: func(cCtx *cli.Context) error {
			name, err := oneName(cCtx)
			if err != nil {
				return err
			}
			a := appOf(cCtx)
			opts := callOptions{name: name, json: a.jsonOut(cCtx), noWait: cCtx.Bool("no-wait"), worker: cCtx.String("worker")}
			if opts.pairs, opts.argsJSON, err = readArgsFlags(cCtx, a); err != nil {
				return err
			}
			return runCall(cCtx.Context, a, opts)
		},
	}
}

func runCall(ctx context.Context, a *app, opts callOptions) error {
	if opts.worker != "" {
		// The worker must be registered: an unknown name would be a mere
		// label, and the call not the worker's at all.
		if _, err := a.request(ctx, http.MethodGet, "/v1/workers/"+api.PathEscape(opts.worker), nil, nil); err != nil {
			return err
		}
		a.client.Worker, a.client.CallerType = opts.worker, "llm"
	}
	args, err := a.toolArgs(ctx, opts.name, opts.pairs, opts.argsJSON)
	if err != nil {
		return err
	}
	if opts.noWait {
		a.client.ApprovalWait = "0"
	}
	var resp api.CallResponse
	raw, err := a.request(ctx, http.MethodPost, "/v1/tools/"+api.PathEscape(opts.name)+"/call", api.CallRequest{Arguments: args}, &resp)
	if err != nil {
		return err
	}
	if opts.json {
		err = writeJSON(a.out, raw)
	} else {
		err = writeCallResult(a.out, a.err, &resp, a.color)
	}
	if err != nil {
		return err
	}
	if resp.IsError {
		return toolError(&resp)
	}
	return nil
}

// typedArgs turns --arg pairs into the arguments object, typed by the
// tool's schema and checked against it, so a bad argument is refused here
// with the schema's own message.
func (a *app) typedArgs(ctx context.Context, name string, pairs []string) (json.RawMessage, error) {
	var tool api.Tool
	if _, err := a.request(ctx, http.MethodGet, "/v1/tools/"+api.PathEscape(name), nil, &tool); err != nil {
		return nil, err
	}
	var def struct {
		Parameters json.RawMessage `json:"parameters"`
	}
	_ = json.Unmarshal(tool.Definition, &def)
	// A schema this CLI cannot compile leaves every value a string and the
	// checking to the daemon.
	schema, schemaErr := catalog.CompileSchema(def.Parameters)
	var types map[string]string
	if schemaErr == nil {
		types = schema.Types
	}
	args, err := catalog.ParseArgPairs(pairs, types)
	if err != nil {
		return nil, codedErrorf(errdefs.InvalidArguments, "%v", err)
	}
	if schemaErr == nil {
		if err := schema.Validate(args); err != nil {
			return nil, codedErrorf(errdefs.InvalidArguments, "arguments for %s: %v", name, err)
		}
	}
	return args, nil
}

// argsJSON reads --args-json ("-" for stdin) and checks it is one object.
func (a *app) argsJSON(v string) (string, error) {
	src := "--args-json"
	if v == "-" {
		b, err := a.readInput("-", 4<<20)
		if err != nil {
			return "", err
		}
		v, src = string(b), "--args-json from stdin"
	}
	t := bytes.TrimSpace([]byte(v))
	if !json.Valid(t) || len(t) == 0 || t[0] != '{' {
		return "", codedErrorf(errdefs.InvalidArguments, "%s must be a JSON object, like '{\"domain\": \"example.com\"}'", src)
	}
	return string(t), nil
}

// writeCallResult prints a call for a person: the result as indented JSON
// on out; logs, a truncation note and the dim call line on errw.
func writeCallResult(out, errw io.Writer, r *api.CallResponse, color bool) error {
	res := bytes.TrimSpace(r.Result)
	if len(res) > 0 && !(r.IsError && string(res) == "null") {
		if err := writeJSON(out, res); err != nil {
			return err
		}
	}
	for _, l := range r.Logs {
		fmt.Fprintf(errw, "%s: %s\n", l.Level, l.Message)
	}
	if r.Truncated {
		fmt.Fprintln(errw, "(output truncated at the tool's output limit)")
	}
	line := "call " + r.CallID
	if r.Version > 0 {
		line += fmt.Sprintf(" · v%d", r.Version)
	}
	line += " · " + formatMS(r.DurationMS)
	if color {
		// The dim is ours; the line holds nothing an agent wrote.
		if tw, ok := errw.(*termsafe.Writer); ok {
			errw = tw.Raw()
		}
		line = "\x1b[2m" + line + "\x1b[0m"
	}
	_, err := fmt.Fprintln(errw, line)
	return err
}
