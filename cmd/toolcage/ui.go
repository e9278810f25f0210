package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon/api"
)

// uiCommand is the ui noun: the review page in the browser.
func uiCommand() *cli.Command {
	return &cli.Command{
		Name:  "ui",
		Usage: "log in to the review page in a browser",
		UsageText: `toolcage ui command [command options]

Example:
   toolcage ui open`,
		Description: `The daemon serves a review page on a loopback address when its config sets
ui.listen (e.g. 127.0.0.1:8765): pending approvals with what exactly each call
would run, pending tools with the change since the last approved version, the
audit log with filters, and the workers with their effective tools.`,
		Subcommands: []*cli.Command{uiOpenCommand()},
	}
}

func uiOpenCommand() *cli.Command {
	return &cli.Command{
		Name:  "open",
		Usage: "print a one-time login link for the review page",
		UsageText: `toolcage ui open [--json]

Example:
   toolcage ui open`,
		Description: `Asks the daemon for a login link and prints it: open it in a browser on this
machine. The link works once, for ui.login_ttl (10 minutes by default); the
login then lasts ui.session_ttl. Only a person may ask for one (not a worker
token, nor --caller-type llm), and each link is recorded in the admin log.`,
		Flags: []cli.Flag{jsonFlag()},
		Action: func(cCtx *cli.Context) error {
			if err := noArgs(cCtx); err != nil {
				return err
			}
			a := appOf(cCtx)
			return runUIOpen(cCtx.Context, a, a.jsonOut(cCtx))
		},
	}
}

func runUIOpen(ctx context.Context, a *app, jsonOut bool) error {
	var out api.UILogin
	raw, err := a.request(ctx, http.MethodPost, "/v1/ui/login", nil, &out)
	if err != nil {
		return err
	}
	if jsonOut {
		return writeJSON(a.out, raw)
	}
	_, err = fmt.Fprintf(a.out, "Open this link in a browser on this machine (it works once, until %s):\n%s\n",
		formatTime(out.ExpiresAt, a.loc), out.URL)
	return err
}
