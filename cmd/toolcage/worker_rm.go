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
		Usage:     "unregister a worker and revoke its tokens",
		ArgsUsage: "NAME",
		UsageText: `toolcage worker rm NAME

Example:
   toolcage worker rm ops`,
		Description: `Unregisters the worker: its tokens stop working at once and its file is no
longer watched. The file itself and the audit log are left as they are.
Only a person may remove workers.`,
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
