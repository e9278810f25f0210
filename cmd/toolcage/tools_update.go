package main

import (
	"context"
	"net/http"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
)

type toolsUpdateOptions struct {
	name string
	file string
	json bool
}

func toolsUpdateCommand() *cli.Command {
	return &cli.Command{
		Name:      "update",
		Usage:     "replace a tool's definition",
		ArgsUsage: "NAME",
		UsageText: `toolcage tools update NAME -f FILE

Examples:
   toolcage tools show dns_lookup --definition > dns_lookup.yaml
   $EDITOR dns_lookup.yaml
   toolcage tools update dns_lookup -f dns_lookup.yaml`,
		Description: `Replaces the whole definition of tool NAME with the one in FILE (YAML or
JSON), checked locally first. The version rises when anything changed; every
version is kept, see 'toolcage tools history' and 'toolcage tools rollback'.
The name in the file must be NAME: tools cannot be renamed.`,
		Flags: []cli.Flag{fileFlag(), jsonFlag()},
		Action: func(cCtx *cli.Context) error {
			name, err := oneName(cCtx)
			if err != nil {
				return err
			}
			file, err := requireFile(cCtx)
			if err != nil {
				return err
			}
			a := appOf(cCtx)
			return runToolsUpdate(cCtx.Context, a, toolsUpdateOptions{name: name, file: file, json: a.jsonOut(cCtx)})
		},
	}
}

func runToolsUpdate(ctx context.Context, a *app, opts toolsUpdateOptions) error {
	def, err := a.readDefinition(opts.file)
	if err != nil {
		return err
	}
	if def.Name != opts.name {
		return codedErrorf(errdefs.InvalidDefinition, "the definition in %s is named %q, not %q (tools cannot be renamed)", displayPath(opts.file), def.Name, opts.name)
	}
	body, err := writtenBody(def)
	if err != nil {
		return err
	}
	var tool api.Tool
	raw, err := a.request(ctx, http.MethodPut, "/v1/tools/"+api.PathEscape(opts.name), body, &tool)
	if err != nil {
		return err
	}
	if opts.json {
		return writeJSON(a.out, raw)
	}
	return writeToolChanged(a.out, "Updated", &tool)
}
