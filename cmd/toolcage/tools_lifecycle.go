package main

import (
	"context"
	"net/http"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon/api"
)

// The four status verbs share one shape: POST /v1/tools/{name}/{verb}
// answering the changed tool.

func toolsEnableCommand() *cli.Command {
	return toolsLifecycleCommand("enable", "Enabled", "make a disabled tool callable again",
		`Sets a disabled tool back to active. A tool that waits for approval or was
rejected needs 'toolcage tools approve NAME' instead.`)
}

func toolsDisableCommand() *cli.Command {
	return toolsLifecycleCommand("disable", "Disabled", "stop a tool from being called, keeping it",
		`Sets the tool to disabled: calls are refused with tool_not_active until
'toolcage tools enable NAME'. The tool and its versions are kept.`)
}

func toolsApproveCommand() *cli.Command {
	return toolsLifecycleCommand("approve", "Approved", "approve a tool that waits for a person's approval",
		`Sets a pending_approval tool to active. Only a person (caller type user)
may approve; an llm-created tool that asks for a dangerous permission (shell,
filesystem, email) waits here. A rejected tool stays rejected.`)
}

func toolsRejectCommand() *cli.Command {
	return toolsLifecycleCommand("reject", "Rejected", "reject a tool that waits for approval",
		`Sets a pending_approval tool to rejected: it cannot be called. Only a
person (caller type user) may reject.`)
}

type toolsLifecycleOptions struct {
	verb string // enable, disable, approve, reject
	done string // "Enabled", … for the message
	name string
	json bool
}

func toolsLifecycleCommand(verb, done, usage, description string) *cli.Command {
	return &cli.Command{
		Name:        verb,
		Usage:       usage,
		ArgsUsage:   "NAME",
		UsageText:   "toolcage tools " + verb + " NAME\n\nExample:\n   toolcage tools " + verb + " dns_lookup",
		Description: description,
		Flags:       []cli.Flag{jsonFlag()},
		Action: func(cCtx *cli.Context) error {
			name, err := oneName(cCtx)
			if err != nil {
				return err
			}
			a := appOf(cCtx)
			return runToolsLifecycle(cCtx.Context, a, toolsLifecycleOptions{verb: verb, done: done, name: name, json: a.jsonOut(cCtx)})
		},
	}
}

func runToolsLifecycle(ctx context.Context, a *app, opts toolsLifecycleOptions) error {
	var tool api.Tool
	raw, err := a.request(ctx, http.MethodPost, "/v1/tools/"+api.PathEscape(opts.name)+"/"+opts.verb, nil, &tool)
	if err != nil {
		return err
	}
	if opts.json {
		return writeJSON(a.out, raw)
	}
	return writeToolChanged(a.out, opts.done, &tool)
}
