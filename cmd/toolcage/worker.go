package main

import (
	"context"
	"strings"

	"github.com/urfave/cli/v2"
)

// workerCommand is the worker noun: worker files, which hold what an agent
// may use, and their registration with the daemon.
func workerCommand() *cli.Command {
	return &cli.Command{
		Name:  "worker",
		Usage: "check, register and manage workers: an agent's tools, rules, limits and token",
		UsageText: `toolcage worker command [command options] [arguments...]

Examples:
   toolcage worker check examples/workers/ops.yaml
   toolcage worker add examples/workers/ops.yaml
   toolcage worker show ops
   toolcage call --worker ops dns_lookup --arg domain=example.com`,
		Subcommands: []*cli.Command{
			workerCheckCommand(),
			workerAddCommand(),
			workerListCommand(),
			workerShowCommand(),
			workerTokenCommand(),
			workerRmCommand(),
		},
	}
}

// workerName returns the one NAME argument.
// workerAction is the Action of a verb that takes one worker NAME.
func workerAction(run func(ctx context.Context, a *app, name string, jsonOut bool) error) cli.ActionFunc {
	return func(cCtx *cli.Context) error {
		name, err := workerName(cCtx)
		if err != nil {
			return err
		}
		a := appOf(cCtx)
		return run(cCtx.Context, a, name, a.jsonOut(cCtx))
	}
}

func workerName(cCtx *cli.Context) (string, error) {
	switch n := cCtx.NArg(); {
	case n == 0:
		return "", usageErrorf(cCtx, "missing the worker NAME")
	case n > 1:
		return "", usageErrorf(cCtx, "want one worker NAME, got %d arguments: %s", n, strings.Join(cCtx.Args().Slice(), " "))
	}
	return cCtx.Args().First(), nil
}
