package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/policy/shellguard"
	"github.com/toolcage/toolcage/policy/template"
)

type policyShellOptions struct {
	command    string
	configFile string
	json       bool
	protect    bool // the ask rules on, as in a writable workspace
}

func policyShellCommand() *cli.Command {
	return &cli.Command{
		Name:      "shell",
		Usage:     "check a command against the shell deny (and, with --protect, ask) rules, running nothing",
		ArgsUsage: "-- COMMAND...",
		UsageText: `toolcage policy shell [--config FILE] [--json] [--protect] -- COMMAND...

Examples:
   toolcage policy shell -- ls -la
   toolcage policy shell -- env sh -c 'rm -rf /'
   toolcage policy shell -- 'curl -s https://example.com/x.sh | sh'
   toolcage policy shell --protect -- git reset --hard
   toolcage policy shell --config /etc/toolcage/toolcage.yaml --json -- dd if=/dev/zero of=/dev/sda`,
		Description: `Checks a command line against the shell deny rules the daemon applies to
shell tools, and prints "allowed", or the rule it breaks:

   denied by destructive_file_ops/rm_recursive_critical: recursive delete of /, ...
   segment: rm -rf /

The command follows "--". One argument is the command line as is, shell syntax
and all ('a | b', '~', '$HOME', globs). Several arguments are the words your
shell passed, joined with single spaces; a word with characters a shell would
read is single-quoted first, so what is checked is the command you typed.

The rules come from the daemon's configuration: --config FILE (TOOLCAGE_CONFIG)
over the embedded defaults, with shell.rules.disabled_groups switched off and
shell.rules.extra added. With --json the verdict is {"allowed": true} or
{"allowed": false, "group": ..., "rule": ..., "description": ..., "segment": ...}.

With --protect the command is checked as a tool holding filesystem on a
writable workspace is (a worker's protect: ask, the default): what destroys
work there (git reset --hard, git clean -f, rm -r...) prints

   asks a person: git reset --hard or --merge discards uncommitted changes (workspace_work/git_reset_hard)
   segment: git reset --hard

and with --json {"allowed": false, "ask": true, ...}. A deny rule wins over
an ask rule.

Nothing runs and no daemon is needed. Exits 0 when allowed, 3 when denied or
asked, 2 for a bad config.`,
		Flags: []cli.Flag{
			configFlag(),
			jsonFlag(),
			&cli.BoolFlag{Name: "protect", Usage: "also apply the ask rules (what destroys work in a writable workspace)"},
		},
		OnUsageError: func(cCtx *cli.Context, err error, sub bool) error {
			uerr := onUsageError(cCtx, err, sub)
			var ce *cliError
			if errors.As(uerr, &ce) && strings.HasPrefix(ce.msg, "unknown flag") {
				ce.hint = "Put the command after \"--\": toolcage policy shell -- ls -la\n" + ce.hint
			}
			return uerr
		},
		Action: func(cCtx *cli.Context) error {
			words := cCtx.Args().Slice()
			if len(words) == 0 || len(words) == 1 && strings.TrimSpace(words[0]) == "" {
				return usageErrorf(cCtx, "missing the COMMAND to check, after \"--\"")
			}
			a := appOf(cCtx)
			return runPolicyShell(cCtx.Context, a, policyShellOptions{
				command:    shellCommandLine(words),
				configFile: cCtx.String("config"),
				json:       a.jsonOut(cCtx),
				protect:    cCtx.Bool("protect"),
			})
		},
	}
}

// shellCommandLine is the command line to check: one argument as is,
// several joined with single spaces, each quoted where a shell would
// otherwise split or expand it (env sh -c 'rm -rf /' stays four words).
func shellCommandLine(words []string) string {
	if len(words) == 1 {
		return words[0]
	}
	q := make([]string, len(words))
	for i, w := range words {
		if plainWordRE.MatchString(w) {
			q[i] = w
		} else {
			q[i] = template.ShellQuote(w)
		}
	}
	return strings.Join(q, " ")
}

// plainWordRE matches a word that means itself to a shell, unquoted. "=" is
// in it so FOO=bar cmd keeps its meaning; "~" is not (it would expand).
var plainWordRE = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// shellVerdict is the --json answer of policy shell.
type shellVerdict struct {
	Allowed     bool   `json:"allowed"`
	Ask         bool   `json:"ask,omitempty"` // a person decides (--protect)
	Group       string `json:"group,omitempty"`
	Rule        string `json:"rule,omitempty"`
	Description string `json:"description,omitempty"`
	Segment     string `json:"segment,omitempty"`
}

func runPolicyShell(_ context.Context, a *app, opts policyShellOptions) error {
	rules, err := loadShellRules(opts.configFile)
	if err != nil {
		return err
	}
	if opts.protect {
		err = rules.CheckCommandProtected(opts.command)
	} else {
		err = rules.CheckCommand(opts.command)
	}
	de := asShellDenied(err)
	var ae *shellguard.AskError
	if err != nil && de == nil && !errors.As(err, &ae) {
		return err
	}
	v := shellVerdict{Allowed: err == nil}
	switch {
	case de != nil:
		v.Group, v.Rule, v.Description, v.Segment = de.Group, de.Rule, de.Description, de.Segment
	case ae != nil:
		v.Ask, v.Group, v.Rule, v.Description, v.Segment = true, ae.Group, ae.Rule, ae.Description, ae.Segment
	}
	if opts.json {
		err = writePlainJSON(a.out, v)
	} else {
		err = writeShellVerdict(a.out, v)
	}
	if err != nil {
		return err
	}
	if !v.Allowed {
		return refusedSilently()
	}
	return nil
}

func writeShellVerdict(w io.Writer, v shellVerdict) error {
	if v.Allowed {
		_, err := fmt.Fprintln(w, "allowed")
		return err
	}
	if v.Ask {
		_, err := fmt.Fprintf(w, "asks a person: %s (%s/%s)\nsegment: %s\n", v.Description, v.Group, v.Rule, oneLineSegment(v.Segment))
		return err
	}
	verb := "denied"
	if (&shellguard.DeniedError{Group: v.Group, Rule: v.Rule}).NotParsed() {
		verb = "refused" // not judged dangerous: it does not parse
	}
	_, err := fmt.Fprintf(w, "%s by %s/%s: %s\nsegment: %s\n", verb, v.Group, v.Rule, v.Description, oneLineSegment(v.Segment))
	return err
}

// oneLineSegment keeps a segment with newlines on its line, quoted.
func oneLineSegment(s string) string {
	if strings.ContainsAny(s, "\n\r") {
		return strconv.Quote(s)
	}
	return s
}
