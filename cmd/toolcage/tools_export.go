package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/daemon/defs"
)

type toolsExportOptions struct {
	format defs.Format
	worker string
	// wrap prints the daemon's whole answer ({format, worker, tools})
	// rather than the bare list.
	wrap bool
}

func toolsExportCommand() *cli.Command {
	return &cli.Command{
		Name:  "export",
		Usage: "print the active tools as function-calling definitions (OpenAI, Anthropic or MCP)",
		UsageText: `toolcage tools export --format openai|anthropic|mcp [--worker NAME] [--wrap]

Prints a JSON array, one definition per active tool, ready for an agent
framework's tool list: openai {type: function, function: {name, description,
parameters}}, anthropic {name, description, input_schema}, mcp {name,
description, inputSchema, annotations}. With --worker, the tools the worker's
agent sees (its meta-tools included), as that agent would.

Examples:
   toolcage tools export --format openai > tools.json
   toolcage tools export --format anthropic --worker ops
   toolcage tools export --format mcp --wrap`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Usage: "`FORMAT`: openai, anthropic or mcp (required)"},
			&cli.StringFlag{Name: "worker", Usage: "export worker `NAME`'s tools, as its agent sees them"},
			&cli.BoolFlag{Name: "wrap", Usage: "print the daemon's whole answer: {format, worker, tools}"},
		},
		Action: func(cCtx *cli.Context) error {
			if err := noArgs(cCtx); err != nil {
				return err
			}
			if !cCtx.IsSet("format") {
				return usageErrorf(cCtx, "missing --format: openai, anthropic or mcp")
			}
			f, err := defs.ParseFormat(cCtx.String("format"))
			if err != nil {
				return usageErrorf(cCtx, "--format must be openai, anthropic or mcp, not %q", cCtx.String("format"))
			}
			opts := toolsExportOptions{format: f, worker: strings.TrimSpace(cCtx.String("worker")), wrap: cCtx.Bool("wrap")}
			return runToolsExport(cCtx.Context, appOf(cCtx), opts)
		},
	}
}

func runToolsExport(ctx context.Context, a *app, opts toolsExportOptions) error {
	q := url.Values{"format": {string(opts.format)}}
	if opts.worker != "" {
		q.Set("worker", opts.worker)
	}
	var out api.ToolDefinitions
	raw, err := a.request(ctx, http.MethodGet, "/v1/tools/definitions?"+q.Encode(), nil, &out)
	if err != nil {
		return err
	}
	if opts.wrap {
		return writeJSON(a.out, raw)
	}
	if out.Tools == nil {
		out.Tools = []json.RawMessage{}
	}
	list, err := json.Marshal(out.Tools)
	if err != nil {
		return err
	}
	return writeJSON(a.out, list)
}
