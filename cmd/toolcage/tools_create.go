package main

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/daemon/catalog"
)

type toolsCreateOptions struct {
	file string
	json bool
}

func toolsCreateCommand() *cli.Command {
	return &cli.Command{
		Name:  "create",
		Usage: "register a tool from a definition file",
		UsageText: `toolcage tools create -f FILE

Examples:
   toolcage tools create -f examples/dns_lookup.yaml
   cat weather.json | toolcage tools create -f -`,
		Description: `Reads a tool definition (YAML or JSON), checks it locally and registers it
with the daemon as version 1. Every problem in the file is listed at once.
A tool created by an llm caller that asks for a dangerous permission starts
as pending_approval until a person runs 'toolcage tools approve NAME'.`,
		Flags: []cli.Flag{fileFlag(), jsonFlag()},
		Action: func(cCtx *cli.Context) error {
			if err := noFileArgs(cCtx); err != nil {
				return err
			}
			file, err := requireFile(cCtx)
			if err != nil {
				return err
			}
			a := appOf(cCtx)
			return runToolsCreate(cCtx.Context, a, toolsCreateOptions{file: file, json: a.jsonOut(cCtx)})
		},
	}
}

func runToolsCreate(ctx context.Context, a *app, opts toolsCreateOptions) error {
	def, err := a.readDefinition(opts.file)
	if err != nil {
		return err
	}
	body, err := writtenBody(def)
	if err != nil {
		return err
	}
	var tool api.Tool
	raw, err := a.request(ctx, http.MethodPost, "/v1/tools", body, &tool)
	if err != nil {
		return err
	}
	if opts.json {
		return writeJSON(a.out, raw)
	}
	return writeToolChanged(a.out, "Created", &tool)
}

// noFileArgs refuses positional arguments where -f FILE was meant.
func noFileArgs(cCtx *cli.Context) error {
	if cCtx.NArg() > 0 {
		return usageErrorf(cCtx, "unexpected argument %q (did you mean -f %s?)", cCtx.Args().First(), cCtx.Args().First())
	}
	return nil
}

// writeToolChanged reports a tool after a change: "Created tool x: version
// 1, status active", plus what to do next when it waits for approval.
func writeToolChanged(w io.Writer, verb string, t *api.Tool) error {
	name := summarize(t.Definition).Name
	_, err := fmt.Fprintf(w, "%s tool %s: version %d, status %s\n", verb, name, t.Version, t.Status)
	if err == nil && t.Status == catalog.StatusPendingApproval {
		_, err = fmt.Fprintf(w, "It waits for a person's approval: toolcage tools approve %s\n", name)
	}
	return err
}
