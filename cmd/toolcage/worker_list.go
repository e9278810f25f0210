package main

import (
	"context"
	"net/http"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon/api"
)

func workerListCommand() *cli.Command {
	return &cli.Command{
		Name:    "list",
		Aliases: []string{"ls"},
		Usage:   "list registered workers",
		UsageText: `toolcage worker list [--json]

Example:
   toolcage worker list`,
		Description: `Lists each registered worker with its file and, when the last edit of the
file was refused, why (file:line:col); the last good version stays in force.`,
		Flags: []cli.Flag{jsonFlag()},
		Action: func(cCtx *cli.Context) error {
			if err := noArgs(cCtx); err != nil {
				return err
			}
			a := appOf(cCtx)
			return runWorkerList(cCtx.Context, a, a.jsonOut(cCtx))
		},
	}
}

func runWorkerList(ctx context.Context, a *app, jsonOut bool) error {
	var list api.WorkerList
	raw, err := a.request(ctx, http.MethodGet, "/v1/workers", nil, &list)
	if err != nil {
		return err
	}
	if jsonOut {
		return writeJSON(a.out, raw)
	}
	tw := newTable(a.out)
	row(tw, "NAME", "PATH", "PROFILE", "UPDATED", "RELOAD_ERROR")
	for _, w := range list.Workers {
		row(tw, w.Name, w.Path, orDash(w.Profile), formatTime(w.UpdatedAt, a.loc), orDash(w.ReloadError))
	}
	return tw.Flush()
}
