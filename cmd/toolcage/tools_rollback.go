package main

import (
	"context"
	"net/http"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon/api"
)

type toolsRollbackOptions struct {
	name string
	to   int
	json bool
}

func toolsRollbackCommand() *cli.Command {
	return &cli.Command{
		Name:      "rollback",
		Usage:     "bring back an earlier version of a tool",
		ArgsUsage: "NAME",
		UsageText: `toolcage tools rollback NAME --to VERSION

Example:
   toolcage tools history dns_lookup
   toolcage tools rollback dns_lookup --to 2`,
		Description: `Makes the definition of an earlier kept version current again. See the
versions with 'toolcage tools history NAME'.`,
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "to", Usage: "the `VERSION` to bring back; required", DefaultText: "none"},
			jsonFlag(),
		},
		Action: func(cCtx *cli.Context) error {
			name, err := oneName(cCtx)
			if err != nil {
				return err
			}
			if !cCtx.IsSet("to") {
				return usageErrorf(cCtx, "missing --to VERSION (see 'toolcage tools history %s')", name)
			}
			to := cCtx.Int("to")
			if to < 1 {
				return usageErrorf(cCtx, "--to must be a version number of 1 or more, not %d", to)
			}
			a := appOf(cCtx)
			return runToolsRollback(cCtx.Context, a, toolsRollbackOptions{name: name, to: to, json: a.jsonOut(cCtx)})
		},
	}
}

func runToolsRollback(ctx context.Context, a *app, opts toolsRollbackOptions) error {
	var tool api.Tool
	raw, err := a.request(ctx, http.MethodPost, "/v1/tools/"+api.PathEscape(opts.name)+"/rollback", api.RollbackRequest{Version: opts.to}, &tool)
	if err != nil {
		return err
	}
	if opts.json {
		return writeJSON(a.out, raw)
	}
	return writeToolChanged(a.out, "Rolled back", &tool)
}
