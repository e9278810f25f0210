package main

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon/api"
)

type toolsHistoryOptions struct {
	name string
	json bool
}

func toolsHistoryCommand() *cli.Command {
	return &cli.Command{
		Name:      "history",
		Usage:     "list a tool's kept versions",
		ArgsUsage: "NAME",
		UsageText: `toolcage tools history NAME

Examples:
   toolcage tools history dns_lookup
   toolcage tools history dns_lookup --json | jq '.versions[0].definition'`,
		Description: `Lists every kept version of the tool; the current one is marked with *.
Go back with 'toolcage tools rollback NAME --to N'.`,
		Flags: []cli.Flag{jsonFlag()},
		Action: func(cCtx *cli.Context) error {
			name, err := oneName(cCtx)
			if err != nil {
				return err
			}
			a := appOf(cCtx)
			return runToolsHistory(cCtx.Context, a, toolsHistoryOptions{name: name, json: a.jsonOut(cCtx)})
		},
	}
}

func runToolsHistory(ctx context.Context, a *app, opts toolsHistoryOptions) error {
	var h api.ToolHistory
	raw, err := a.request(ctx, http.MethodGet, "/v1/tools/"+api.PathEscape(opts.name)+"/history", nil, &h)
	if err != nil {
		return err
	}
	if opts.json {
		return writeJSON(a.out, raw)
	}
	return writeToolHistory(a.out, &h, a.loc)
}

// writeToolHistory prints the versions table.
func writeToolHistory(w io.Writer, h *api.ToolHistory, loc *time.Location) error {
	tw := newTable(w)
	row(tw, "VERSION", "CREATED", "CURRENT")
	for _, v := range h.Versions {
		cur := ""
		if v.Version == h.Current {
			cur = "*"
		}
		row(tw, strconv.Itoa(v.Version), formatTime(v.CreatedAt, loc), cur)
	}
	return tw.Flush()
}
