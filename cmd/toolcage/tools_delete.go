package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon/api"
)

type toolsDeleteOptions struct {
	name    string
	confirm bool
	json    bool
}

func toolsDeleteCommand() *cli.Command {
	return &cli.Command{
		Name:      "delete",
		Aliases:   []string{"rm"},
		Usage:     "delete a tool and all its versions",
		ArgsUsage: "NAME",
		UsageText: `toolcage tools delete NAME [--confirm]

Example:
   toolcage tools delete dns_lookup
   toolcage --caller-type llm tools delete my_tool --confirm`,
		Description: `Deletes the tool and every kept version. Its past calls stay in the audit
log. An llm caller may not delete a tool a user created, and deletes its own
only with --confirm (sent as ?confirm=true). To stop a tool from being called
but keep it, use 'toolcage tools disable NAME'.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "confirm", Usage: "confirm the delete (needed when acting as an llm)"},
			jsonFlag(),
		},
		Action: func(cCtx *cli.Context) error {
			name, err := oneName(cCtx)
			if err != nil {
				return err
			}
			a := appOf(cCtx)
			return runToolsDelete(cCtx.Context, a, toolsDeleteOptions{name: name, confirm: cCtx.Bool("confirm"), json: a.jsonOut(cCtx)})
		},
	}
}

func runToolsDelete(ctx context.Context, a *app, opts toolsDeleteOptions) error {
	path := "/v1/tools/" + api.PathEscape(opts.name)
	if opts.confirm {
		path += "?confirm=true"
	}
	raw, err := a.request(ctx, http.MethodDelete, path, nil, nil)
	if err != nil {
		return err
	}
	if opts.json {
		return writeJSON(a.out, raw) // 204: nothing
	}
	_, err = fmt.Fprintf(a.out, "Deleted tool %s\n", opts.name)
	return err
}
