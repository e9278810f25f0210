package main

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/daemon/catalog"
)

type jsOptions struct {
	code     string
	argsJSON string
	timeout  string
	memory   string
	json     bool
}

func jsCommand() *cli.Command {
	return &cli.Command{
		Name:  "js",
		Usage: "run JavaScript once, sandboxed, without storing a tool",
		UsageText: `toolcage js --code CODE | --file FILE [--args-json JSON] [--timeout D] [--memory SIZE]

Examples:
   toolcage js --code 'return 6 * 7'
   toolcage js --code 'return args.a + args.b' --args-json '{"a": 2, "b": 40}'
   toolcage js --file script.js --timeout 5s --memory 64MiB`,
		Description: `Runs code in a js executor with the same sandbox, checks and audit as a tool
call. The code sees its arguments as 'args' and returns the result. Output is
printed as for 'toolcage call'.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "code", Aliases: []string{"c"}, Usage: "the JavaScript `CODE` to run"},
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "read the code from `FILE` (- for stdin)"},
			&cli.StringFlag{Name: "args-json", Usage: "arguments as one JSON `OBJECT` (- for stdin)"},
			&cli.StringFlag{Name: "timeout", Usage: "time limit `DURATION`, e.g. 5s (default: the daemon's)"},
			&cli.StringFlag{Name: "memory", Usage: "memory limit `SIZE`, e.g. 64MiB (default: the daemon's)"},
			jsonFlag(),
		},
		Action: func(cCtx *cli.Context) error {
			if err := noArgs(cCtx); err != nil {
				return err
			}
			a := appOf(cCtx)
			opts := jsOptions{code: cCtx.String("code"), timeout: cCtx.String("timeout"), memory: cCtx.String("memory"), json: a.jsonOut(cCtx)}
			file := cCtx.String("file")
			switch {
			case cCtx.IsSet("code") && file != "":
				return usageErrorf(cCtx, "--code and --file cannot be used together")
			case file == "" && opts.code == "":
				return usageErrorf(cCtx, "missing --code CODE or --file FILE")
			case file == "-" && cCtx.String("args-json") == "-":
				return usageErrorf(cCtx, "--file and --args-json cannot both read stdin")
			}
			if opts.timeout != "" {
				if d, err := time.ParseDuration(opts.timeout); err != nil || d <= 0 {
					return usageErrorf(cCtx, "--timeout %q is not a positive duration like 5s or 1m30s", opts.timeout)
				}
			}
			if opts.memory != "" {
				if n, err := catalog.ParseByteSize(opts.memory); err != nil || n <= 0 {
					return usageErrorf(cCtx, "--memory %q is not a size like 64MiB or 1GB", opts.memory)
				}
			}
			var err error
			if file != "" {
				b, err := a.readInput(file, catalog.MaxDefinitionBytes)
				if err != nil {
					return err
				}
				opts.code = string(b)
			}
			if cCtx.IsSet("args-json") {
				if opts.argsJSON, err = a.argsJSON(cCtx.String("args-json")); err != nil {
					return err
				}
			}
			return runJS(cCtx.Context, a, opts)
		},
	}
}

func runJS(ctx context.Context, a *app, opts jsOptions) error {
	req := api.JSRequest{Code: opts.code, Timeout: opts.timeout, Memory: opts.memory}
	if opts.argsJSON != "" {
		req.Arguments = json.RawMessage(opts.argsJSON)
	}
	var resp api.CallResponse
	raw, err := a.request(ctx, http.MethodPost, "/v1/js", req, &resp)
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
		resp.Tool = "" // ad-hoc code, not a stored tool: "the code reported…"
		return toolError(&resp)
	}
	return nil
}
