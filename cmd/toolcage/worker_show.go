package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon/api"
)

func workerShowCommand() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "show a worker's tools, each with the approval its calls get",
		ArgsUsage: "NAME",
		UsageText: `toolcage worker show [--json] NAME

Example:
   toolcage worker show ops`,
		Description: `Lists the worker's tools: catalog tools in file order, then its tool files'
tools, each with its effective approval (the tool's and the worker's words
combined; see examples/workers/README.md). A catalog tool the catalog does
not hold is shown as missing.`,
		Flags:  []cli.Flag{jsonFlag()},
		Action: workerAction(runWorkerShow),
	}
}

func runWorkerShow(ctx context.Context, a *app, name string, jsonOut bool) error {
	var w api.Worker
	raw, err := a.request(ctx, http.MethodGet, "/v1/workers/"+api.PathEscape(name), nil, &w)
	if err != nil {
		return err
	}
	if jsonOut {
		return writeJSON(a.out, raw)
	}
	fmt.Fprintf(a.out, "Worker %s (%s)\n", w.Name, w.Path)
	if w.Description != "" {
		fmt.Fprintf(a.out, "  %s\n", w.Description)
	}
	if w.Profile != "" {
		fmt.Fprintf(a.out, "Profile: %s\n", w.Profile)
	}
	if w.Workspace != "" {
		mode := "writable"
		if w.ReadOnly {
			mode = "read-only"
		} else if w.Protect != "" {
			mode += ", protect: " + w.Protect // what destroys work there
		}
		fmt.Fprintf(a.out, "Workspace: %s (%s, at /workspace)\n", w.Workspace, mode)
	}
	if w.ReloadError != "" {
		fmt.Fprintf(a.out, "Last edit refused (the last good version is in force): %s\n", w.ReloadError)
	}
	fmt.Fprintln(a.out)
	tw := newTable(a.out)
	row(tw, "TOOL", "APPROVAL", "SOURCE")
	for _, t := range w.Tools {
		approval := t.Approval
		if t.Missing {
			approval = "missing"
		}
		row(tw, t.Name, approval, t.Source)
	}
	return tw.Flush()
}
