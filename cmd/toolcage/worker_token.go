package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon/api"
)

func workerTokenCommand() *cli.Command {
	return &cli.Command{
		Name:  "token",
		Usage: "manage a worker's token",
		UsageText: `toolcage worker token command NAME

Examples:
   toolcage worker token rotate ops
   toolcage worker token revoke ops`,
		Subcommands: []*cli.Command{workerTokenRevokeCommand(), {
			Name:      "rotate",
			Usage:     "issue a new token for a worker and revoke its old ones",
			ArgsUsage: "NAME",
			UsageText: `toolcage worker token rotate [--json] NAME

Example:
   toolcage worker token rotate ops`,
			Description: `Revokes every token the worker has and prints a new one, once. Agents
holding an old token get unauthorized from then on. Only a person may rotate.`,
			Flags:  []cli.Flag{jsonFlag()},
			Action: workerAction(runWorkerTokenRotate),
		}},
	}
}

func runWorkerTokenRotate(ctx context.Context, a *app, name string, jsonOut bool) error {
	var out api.WorkerToken
	raw, err := a.request(ctx, http.MethodPost, "/v1/workers/"+api.PathEscape(name)+"/token", nil, &out)
	if err != nil {
		return err
	}
	if jsonOut {
		return writeJSON(a.out, raw)
	}
	_, err = fmt.Fprintf(a.out, "New token for worker %s (shown once; old tokens are revoked):\n%s\n", name, out.Token)
	return err
}

func workerTokenRevokeCommand() *cli.Command {
	return &cli.Command{
		Name:      "revoke",
		Usage:     "revoke every token of a worker, issuing none",
		ArgsUsage: "NAME",
		UsageText: `toolcage worker token revoke [--json] NAME

Example:
   toolcage worker token revoke ops`,
		Description: `Revokes every token the worker has: its agent gets unauthorized until a
person issues a new token with 'toolcage worker token rotate NAME'. The
worker stays registered. Only a person may revoke.`,
		Flags:  []cli.Flag{jsonFlag()},
		Action: workerAction(runWorkerTokenRevoke),
	}
}

func runWorkerTokenRevoke(ctx context.Context, a *app, name string, jsonOut bool) error {
	var out api.WorkerTokensRevoked
	raw, err := a.request(ctx, http.MethodDelete, "/v1/workers/"+api.PathEscape(name)+"/token", nil, &out)
	if err != nil {
		return err
	}
	if jsonOut {
		return writeJSON(a.out, raw)
	}
	_, err = fmt.Fprintf(a.out, "Revoked %d token(s) of worker %s\n", out.Revoked, name)
	return err
}
