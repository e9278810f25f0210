package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon"
	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/internal/termsafe"
)

// app is what every command runs with: where to write, what to read, and the
// daemon client. Commands get it with appOf(cCtx) and never touch os.Stdout,
// os.Stderr or os.Stdin themselves.
type app struct {
	// out and err pass everything through termsafe: what a command prints
	// may hold agent text (a description, an argument, an error), and a
	// terminal must show it, not obey it.
	out io.Writer // results
	err io.Writer // errors, logs, notes
	in  io.Reader // "-f -" reads here
	// rawOut is stdout unfiltered, for the MCP bridge's protocol stream.
	rawOut io.Writer

	// Set from the global flags before any command runs.
	socket     string
	json       bool // global --json; see app.jsonOut for the per-command one
	callerType string
	callerID   string
	client     *api.Client

	loc   *time.Location // times are shown in this zone
	color bool           // err is a terminal that takes ANSI dim

	unknownCommand bool // set when urfave met a command name it does not know

	outputJSON  bool // -o json, --format json or --format TEMPLATE (see format.go)
	outputJSONL bool // -o jsonl: JSON Lines, for commands that export (audit)
	jsonErrors  bool // errors go to stderr as JSON: --json, -o json, --format json
}

const appKey = "toolcage.app"

// appOf returns the app a command runs in.
func appOf(cCtx *cli.Context) *app {
	return cCtx.App.Metadata[appKey].(*app)
}

// jsonOut reports whether the command prints raw JSON: --json before or
// after the command name, -o json, or --format (whose template then reads
// that JSON; see format.go).
func (a *app) jsonOut(cCtx *cli.Context) bool {
	return a.json || cCtx.Bool("json") || a.outputJSON
}

// run runs the CLI with args (args[0] is the program name) and returns the
// exit status; see exitcodes.go. It writes only to stdout and stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runWithInput(ctx, args, os.Stdin, stdout, stderr)
}

// runWithInput is run with stdin injected, for tests.
func runWithInput(ctx context.Context, args []string, stdin io.Reader, rawStdout, rawStderr io.Writer) int {
	stdout, stderr := termsafe.NewWriter(rawStdout), termsafe.NewWriter(rawStderr)
	defer stdout.Flush()
	defer stderr.Flush()
	a := &app{out: stdout, err: stderr, rawOut: rawStdout, in: stdin, loc: time.Local, color: isTerminal(rawStderr)}
	cliApp := newCLI(a)
	if len(args) == 0 {
		args = []string{"toolcage"}
	}
	if args[len(args)-1] != "--generate-bash-completion" { // urfave wants it last
		args = permuteArgs(cliApp, args)
	}
	err := cliApp.RunContext(ctx, args)
	switch {
	case err == nil && a.unknownCommand:
		return exitUsage
	case err == nil:
		return exitOK
	case ctx.Err() != nil:
		fmt.Fprintln(stderr, "Error: interrupted")
		return exitInterrupted
	}
	if a.jsonErrors || jsonFlagsIn(args[1:]) {
		printJSONError(stderr, err)
	} else {
		printError(stderr, err)
	}
	return exitCode(err)
}

// newCLI builds the urfave/cli application around a.
func newCLI(a *app) *cli.App {
	cliApp := &cli.App{
		Name:  "toolcage",
		Usage: "run tools for LLM agents, sandboxed, checked and audited",
		UsageText: `toolcage [global options] command [command options] [arguments...]

Examples:
   toolcage daemon                                 # start the daemon
   toolcage tools create -f dns_lookup.yaml        # register a tool
   toolcage call dns_lookup --arg domain=example.com
   toolcage js --code 'return 6 * 7'
   toolcage audit --tool dns_lookup`,
		Description: `toolcage runs tools (JavaScript, templated shell commands, templated HTTP
calls) for LLM agents. Every call is checked against policy, run in a sandboxed
executor process, scrubbed of credentials and recorded. This CLI talks to the
daemon over its Unix socket.

Exit status: 0 success; 1 the tool or the daemon failed; 2 usage error (bad
flags, file, definition or arguments); 3 refused by policy (denied, needs
approval, rate limited, tool not active).`,
		Version:                   daemon.Version, // --version; the version command says more
		Writer:                    a.out,
		ErrWriter:                 a.err,
		Reader:                    a.in,
		Metadata:                  map[string]any{appKey: a},
		DisableSliceFlagSeparator: true, // --arg tags=a,b stays one value
		EnableBashCompletion:      true, // --generate-bash-completion; see completion.go
		Flags: []cli.Flag{
			&cli.StringFlag{
				Name:    "socket",
				Usage:   "daemon socket `PATH`",
				EnvVars: []string{"TOOLCAGE_SOCKET"},
				Value:   daemon.DefaultSocketPath(),
			},
			jsonFlag(),
			&cli.StringFlag{
				Name:    "caller-type",
				Usage:   "call as `TYPE` user or llm (for testing what an agent may do)",
				EnvVars: []string{"TOOLCAGE_CALLER_TYPE"},
				Value:   "user",
				Hidden:  true,
			},
			&cli.StringFlag{
				Name:    "caller-id",
				Usage:   "caller `ID` recorded in the audit log",
				EnvVars: []string{"TOOLCAGE_CALLER_ID"},
			},
		},
		Commands: commands(),
		Before: func(cCtx *cli.Context) error {
			a.socket = cCtx.String("socket")
			a.json = cCtx.Bool("json")
			a.callerType = cCtx.String("caller-type")
			a.callerID = cCtx.String("caller-id")
			switch a.callerType {
			case "user", "llm":
			default:
				return usageErrorf(cCtx, "--caller-type must be user or llm, not %q", a.callerType)
			}
			if err := daemon.CheckSocketDir(a.socket); err != nil {
				return err
			}
			a.client = api.NewClient(a.socket)
			a.client.CallerType = a.callerType
			a.client.CallerID = a.callerID
			return nil
		},
		CommandNotFound: func(cCtx *cli.Context, name string) {
			a.unknownCommand = true
			msg := fmt.Sprintf("Error: unknown command %q", name)
			if cli.SuggestCommand != nil {
				if s := cli.SuggestCommand(cCtx.Command.Subcommands, name); s != "" {
					msg += ". " + s
				}
			}
			fmt.Fprintln(a.err, msg)
			fmt.Fprintf(a.err, "See '%s --help'.\n", helpPath(cCtx))
		},
		OnUsageError: onUsageError,
		// urfave/cli would print ExitCoder errors and call os.Exit itself;
		// run prints every error and returns the status instead.
		ExitErrHandler: func(*cli.Context, error) {},
	}
	for _, c := range cliApp.Commands {
		setUsageErrorHandler(c)
		addOutputFlags(a, c)
	}
	return cliApp
}

// onUsageError turns a flag parsing error into a usage error (exit 2)
// instead of urfave's usage dump on stdout.
func onUsageError(cCtx *cli.Context, err error, _ bool) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		msg = "unknown flag " + flagDisplay(name)
	}
	// Go's flag package says "flag -limit"; help says "--limit".
	msg = goFlagRE.ReplaceAllStringFunc(msg, func(m string) string {
		return flagDisplay(strings.TrimPrefix(m, "flag -"))
	})
	return usageErrorf(cCtx, "%s", msg)
}

var goFlagRE = regexp.MustCompile(`flag -[A-Za-z0-9][A-Za-z0-9-]*`)

// flagDisplay writes a flag name the way help shows it: -f, --file.
func flagDisplay(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

func setUsageErrorHandler(c *cli.Command) {
	if c.OnUsageError == nil {
		c.OnUsageError = onUsageError
	}
	for _, s := range c.Subcommands {
		setUsageErrorHandler(s)
	}
}

// helpPath is the command line that shows help for the current command.
func helpPath(cCtx *cli.Context) string {
	if cCtx.Command != nil && cCtx.Command.HelpName != "" {
		return cCtx.Command.HelpName
	}
	return cCtx.App.Name
}

// permuteArgs moves a command's flags ahead of its positional arguments, so
// "toolcage call NAME --arg k=v" works: urfave/cli v2 stops reading flags at
// the first positional argument. Tokens after "--" stay positional.
func permuteArgs(root *cli.App, args []string) []string {
	out := []string{args[0]}
	rest := args[1:]
	flags, cmds := root.Flags, root.Commands
	for {
		// This level's own flags, up to the first non-flag token.
		i := 0
		for i < len(rest) && rest[i] != "--" && isFlagToken(rest[i]) {
			n := 1
			if takesValue(flags, rest[i]) && i+1 < len(rest) {
				n = 2
			}
			out = append(out, rest[i:i+n]...)
			i += n
		}
		rest = rest[i:]
		if len(rest) == 0 {
			return out
		}
		if rest[0] != "--" {
			if c := findCommand(cmds, rest[0]); c != nil {
				out = append(out, rest[0])
				rest = rest[1:]
				if c.SkipFlagParsing {
					return append(out, rest...)
				}
				flags, cmds = c.Flags, c.Subcommands
				continue
			}
		}
		if len(cmds) > 0 {
			// Not a leaf: an unknown command or "help"; urfave reports it.
			return append(out, rest...)
		}
		var fl, pos []string
		for j := 0; j < len(rest); j++ {
			tok := rest[j]
			if tok == "--" {
				pos = append(pos, rest[j+1:]...)
				break
			}
			if !isFlagToken(tok) {
				pos = append(pos, tok)
				continue
			}
			fl = append(fl, tok)
			if takesValue(flags, tok) && j+1 < len(rest) {
				j++
				fl = append(fl, rest[j])
			}
		}
		out = append(out, fl...)
		if len(pos) > 0 {
			out = append(append(out, "--"), pos...)
		}
		return out
	}
}

// isFlagToken reports whether tok looks like a flag; "-" alone is stdin.
func isFlagToken(tok string) bool { return len(tok) > 1 && tok[0] == '-' }

// takesValue reports whether the flag in tok (without an inline "=value")
// consumes the next token as its value.
func takesValue(flags []cli.Flag, tok string) bool {
	name := strings.TrimLeft(tok, "-")
	if strings.Contains(name, "=") {
		return false
	}
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				_, isBool := f.(*cli.BoolFlag)
				return !isBool
			}
		}
	}
	return false
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// isTerminal reports whether w is a character device (a terminal) and
// NO_COLOR is unset.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("NO_COLOR") != "" {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
