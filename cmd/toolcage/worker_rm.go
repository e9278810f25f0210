package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon/api"
)

func workerRmCommand() *cli.Command {
	return &cli.Command{
		Name:      "rm",
		Aliases:   []string{"delete"},
		Usage:     "unregister a worker, revoke its tokens and delete its state and database",
		ArgsUsage: "NAME",
		UsageText: `toolcage worker rm NAME

Example:
   toolcage worker rm ops`,
		Description: `Unregisters the worker: its tokens stop working at once and its file is no
longer watched. What the worker kept goes with it: its state (the state
toolset) and its SQLite database (the sql toolset, data_dir/workers/NAME/),
so a worker added again under the name starts empty. The file itself, its
workspace and the audit log are left as they are. Only a person may remove
workers.

If the worker's data directory cannot be deleted, the worker is removed all
the same (its tokens no longer work), but rm fails (exit 1) naming the
directory and the cause: fix it and run rm again to delete what is left, or
delete the directory yourself.`,
		Flags:  []cli.Flag{jsonFlag()},
		Action: workerAction(runWorkerRm),
	}
}

func runWorkerRm(ctx context.Context, a *app, name string, jsonOut bool) error {
	raw, err := a.request(ctx, http.MethodDelete, "/v1/workers/"+api.PathEscape(name), nil, nil)
	if err != nil {
		return err
	}
	if jsonOut {
		return writeJSON(a.out, raw) // 204: nothing
	}
	_, err = fmt.Fprintf(a.out, "Removed worker %s\n", name)
	return err
}
