package main

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon/api"
)

func workerAddCommand() *cli.Command {
	return &cli.Command{
		Name:      "add",
		Usage:     "register a worker file with the daemon and print its token (once)",
		ArgsUsage: "FILE",
		UsageText: `toolcage worker add [--json] [--save-token | --token-file TFILE] FILE

Examples:
   toolcage worker add examples/workers/ops.yaml
   toolcage worker add --save-token examples/workers/ops.yaml   # for toolcage mcp --worker ops
   TOKEN=$(toolcage worker add --json ~/agents/ops.yaml | jq -r .token)`,
		Description: `Sends the file's absolute path to the daemon, which reads and checks it
(as worker check does, plus: its profile must exist, and neither its path
nor its name may be registered already), watches it for edits, and issues
the worker's token. The token is printed once, here: the daemon keeps only
its hash. Give it to the agent (Authorization: Bearer TOKEN); lost, it is
replaced with 'toolcage worker token rotate NAME'. Only a person may
register workers.

--token-file TFILE writes the token to TFILE (mode 0600) instead of
printing it; --save-token writes it where 'toolcage mcp --worker NAME'
looks by default ($XDG_CONFIG_HOME/toolcage/workers/NAME.token).`,
		Flags: append([]cli.Flag{jsonFlag()}, tokenFileFlags()...),
		Action: func(cCtx *cli.Context) error {
			var file string
			switch n := cCtx.NArg(); {
			case n == 0:
				return usageErrorf(cCtx, "missing the worker FILE")
			case n > 1:
				return usageErrorf(cCtx, "want one worker FILE, got %d arguments: %s", n, strings.Join(cCtx.Args().Slice(), " "))
			default:
				file = cCtx.Args().First()
			}
			a := appOf(cCtx)
			save, err := tokenSaveOf(cCtx)
			if err != nil {
				return err
			}
			return runWorkerAdd(cCtx.Context, a, file, a.jsonOut(cCtx), save)
		},
	}
}

func runWorkerAdd(ctx context.Context, a *app, file string, jsonOut bool, save tokenSave) error {
	abs, err := filepath.Abs(file)
	if err != nil {
		return inputErrorf("%s: %v", file, err)
	}
	var out api.WorkerToken
	raw, err := a.request(ctx, http.MethodPost, "/v1/workers", api.WorkerAddRequest{Path: abs}, &out)
	if err != nil {
		return err
	}
	saved := func(path string) string {
		return fmt.Sprintf("Registered worker %s (%s)\nToken written to %s (mode 0600; the daemon keeps only its hash)\n", out.Worker.Name, out.Worker.Path, path)
	}
	shown := fmt.Sprintf("Registered worker %s (%s)\nToken (shown once; the daemon keeps only its hash):\n%s\n", out.Worker.Name, out.Worker.Path, out.Token)
	return save.answer(a, out.Worker.Name, out, raw, jsonOut, saved, shown)
}
