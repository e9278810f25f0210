package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon/api"
)

type toolsDeleteOptions struct {
	name string
	json bool
}

func toolsDeleteCommand() *cli.Command {
	return &cli.Command{
		Name:      "delete",
		Aliases:   []string{"rm"},
		Usage:     "delete a tool and all its versions",
		ArgsUsage: "NAME",
		UsageText: `toolcage tools delete NAME

Example:
   toolcage tools delete dns_lookup`,
		Description: `Deletes the tool and every kept version. Its past calls stay in the audit
log. An llm caller may not delete a tool a user created. To stop a tool from
being called but keep it, use 'toolcage tools disable NAME'.`,
		Flags: []cli.Flag{jsonFlag()},
		Action: func(cCtx *cli.Context) error {
			name, err := oneName(cCtx)
			if err != nil {
				return err
			}
			a := appOf(cCtx)
			return runToolsDelete(cCtx.Context, a, toolsDeleteOptions{name: name, json: a.jsonOut(cCtx)})
		},
	}
}

func runToolsDelete(ctx context.Context, a *app, opts toolsDeleteOptions) error {
	raw, err := a.request(ctx, http.MethodDelete, "/v1/tools/"+api.PathEscape(opts.name), nil, nil)
	if err != nil {
		return err
	}
	if opts.json {
		return writeJSON(a.out, raw) // 204: nothing
	}
	_, err = fmt.Fprintf(a.out, "Deleted tool %s\n", opts.name)
	return err
}
