package main

import "github.com/urfave/cli/v2"

// commands lists every top-level command. To add one: write a file holding
// its xxxCommand() *cli.Command and runXxx(ctx, a, opts), and list it here
// (or under toolsCommand for a tools verb). Usage errors, --json and the
// exit status are handled for every command by app.go.
func commands() []*cli.Command {
	return []*cli.Command{
		toolsCommand(),
		callCommand(),
		jsCommand(),
		policyCommand(),
		auditCommand(),
		secretsCommand(),
		approvalsCommand(),
		workerCommand(),
		uiCommand(),
		mcpCommand(),
		healthCommand(),
		sandboxCommand(),
		imageCommand(),
		versionCommand(),
		daemonCommand(),
		completionCommand(),
		manCommand(),
	}
}

// toolsCommand is the tools noun: the catalog's verbs.
func toolsCommand() *cli.Command {
	return &cli.Command{
		Name:  "tools",
		Usage: "create, list, change and review tools",
		UsageText: `toolcage tools command [command options] [arguments...]

Examples:
   toolcage tools create -f dns_lookup.yaml
   toolcage tools list --status pending_approval
   toolcage tools show dns_lookup`,
		Subcommands: []*cli.Command{
			toolsCreateCommand(),
			toolsListCommand(),
			toolsShowCommand(),
			toolsRenderCommand(),
			toolsUpdateCommand(),
			toolsDeleteCommand(),
			toolsEnableCommand(),
			toolsDisableCommand(),
			toolsApproveCommand(),
			toolsRejectCommand(),
			toolsHistoryCommand(),
			toolsRollbackCommand(),
			toolsStatsCommand(),
			toolsExportCommand(),
		},
	}
}
