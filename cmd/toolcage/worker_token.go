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
			UsageText: `toolcage worker token rotate [--json] [--save-token | --token-file TFILE] NAME

Examples:
   toolcage worker token rotate ops
   toolcage worker token rotate --save-token ops   # for toolcage mcp --worker ops`,
			Description: `Revokes every token the worker has and prints a new one, once. Agents
holding an old token get unauthorized from then on. Only a person may rotate.
--token-file TFILE writes the new token to TFILE (mode 0600) instead of
printing it; --save-token writes it where 'toolcage mcp --worker NAME'
looks by default ($XDG_CONFIG_HOME/toolcage/workers/NAME.token).`,
			Flags: append([]cli.Flag{jsonFlag()}, tokenFileFlags()...),
			Action: func(cCtx *cli.Context) error {
				save, err := tokenSaveOf(cCtx)
				if err != nil {
					return err
				}
				return workerAction(func(ctx context.Context, a *app, name string, jsonOut bool) error {
					return runWorkerTokenRotate(ctx, a, name, jsonOut, save)
				})(cCtx)
			},
		}},
	}
}

func runWorkerTokenRotate(ctx context.Context, a *app, name string, jsonOut bool, save tokenSave) error {
	var out api.WorkerToken
	raw, err := a.request(ctx, http.MethodPost, "/v1/workers/"+api.PathEscape(name)+"/token", nil, &out)
	if err != nil {
		return err
	}
	saved := func(path string) string {
		return fmt.Sprintf("New token for worker %s written to %s (mode 0600; old tokens are revoked)\n", name, path)
	}
	shown := fmt.Sprintf("New token for worker %s (shown once; old tokens are revoked):\n%s\n", name, out.Token)
	return save.answer(a, name, out, raw, jsonOut, saved, shown)
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
