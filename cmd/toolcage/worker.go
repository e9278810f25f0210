package main

import "github.com/urfave/cli/v2"

// workerCommand is the worker noun: worker files, which hold what an agent
// may use. Only check exists so far; add, list, show, token rotate and rm
// come with the daemon's side.
func workerCommand() *cli.Command {
	return &cli.Command{
		Name:  "worker",
		Usage: "check worker files: an agent's tools, rules and limits",
		UsageText: `toolcage worker command [command options] [arguments...]

Examples:
   toolcage worker check examples/workers/ops.yaml`,
		Subcommands: []*cli.Command{
			workerCheckCommand(),
		},
	}
}
