package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/policy/shellguard"
	"github.com/toolcage/toolcage/policy/template"
)

// policyCommand is the policy noun: the daemon's checks, run here without
// a daemon and without running anything.
func policyCommand() *cli.Command {
	return &cli.Command{
		Name:  "policy",
		Usage: "check commands, templates and URLs against policy, running nothing",
		UsageText: `toolcage policy command [command options] [arguments...]

Examples:
   toolcage policy render --template 'dig +short {{.type}} {{.domain}}' --args-json '{"type": "A", "domain": "example.com"}'
   toolcage policy shell -- rm -rf /
   toolcage policy url http://169.254.169.254/latest/meta-data/`,
		Description: `Runs the checks the daemon applies to shell and HTTP tools, here and now:
nothing is executed or fetched and no daemon is needed. The shell deny rules and
http.allow_private_hosts come from the daemon's configuration: the embedded
defaults, then --config FILE (TOOLCAGE_CONFIG), then TOOLCAGE_* environment
variables, as 'toolcage daemon' reads them.

Exit status: 0 allowed; 2 usage error (bad flags, config or template syntax);
3 refused by policy; 1 anything else (such as a failed DNS look-up).`,
		Subcommands: []*cli.Command{
			policyRenderCommand(),
			policyShellCommand(),
			policyURLCommand(),
			policyScrubCommand(),
		},
	}
}

// configFlag is --config for the policy commands: the daemon's config file,
// read exactly as the daemon reads it.
func configFlag() cli.Flag {
	return &cli.StringFlag{
		Name:    "config",
		Aliases: []string{"c"},
		Usage:   "the daemon's YAML config `FILE` (default: the embedded defaults)",
		EnvVars: []string{"TOOLCAGE_CONFIG"},
	}
}

// loadPolicyConfig reads the daemon configuration: the embedded defaults,
// then file when not empty, then TOOLCAGE_* variables. A bad file is a
// usage error (exit 2).
func loadPolicyConfig(file string) (daemon.Config, error) {
	cfg, err := daemon.LoadConfig(file, nil)
	if err != nil {
		return daemon.Config{}, inputErrorf("%v", err)
	}
	return cfg, nil
}

// loadShellRules returns the deny rules the daemon would use with the
// configuration in file.
func loadShellRules(file string) (*shellguard.Rules, error) {
	cfg, err := loadPolicyConfig(file)
	if err != nil {
		return nil, err
	}
	rules, err := daemon.LoadShellRules(cfg.Shell.Rules)
	if err != nil {
		return nil, inputErrorf("%v", err)
	}
	return rules, nil
}

// checkShellRendering applies the deny rules to a rendering as the
// dispatcher does: an argv word by word, a shell command as sh -c text.
func checkShellRendering(rules *shellguard.Rules, r *template.ShellRendering) error {
	if r.Mode == template.ShellModeArgv {
		return rules.CheckArgv(r.Argv)
	}
	return rules.CheckCommand(r.Command)
}

// policyDenied is a refusal by policy (exit 3), with the daemon's code.
func policyDenied(err error) error {
	return codedErrorf(errdefs.PolicyDenied, "%v", err)
}

// writeShellRendering prints a shell rendering for a person: the argv as a
// JSON array, one element per word, or the sh -c text as is.
func writeShellRendering(w io.Writer, r *template.ShellRendering) error {
	if len(r.Env) > 0 {
		b, err := marshalJSON(r.Env)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "env: %s\n", b); err != nil {
			return err
		}
	}
	if r.Mode == template.ShellModeArgv {
		b, err := marshalJSON(r.Argv)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "argv: %s\n", b)
		return err
	}
	_, err := fmt.Fprintf(w, "shell: %s\n", r.Command)
	return err
}

// marshalJSON encodes v compactly, leaving <, > and & as they are (json.
// Marshal writes them as \u003c, \u003e and \u0026, which in a shell
// command only hides what it does).
func marshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// writePlainJSON prints v as indented JSON, <, > and & left as they are.
func writePlainJSON(w io.Writer, v any) error {
	b, err := marshalJSON(v)
	if err != nil {
		return err
	}
	return writeJSON(w, b)
}

// refusedSilently exits 3 with nothing more printed: the verdict is already
// on stdout.
func refusedSilently() error {
	return cli.Exit("", exitRefused)
}

// asShellDenied returns err as a *shellguard.ShellDeniedError, or nil.
func asShellDenied(err error) *shellguard.DeniedError {
	var de *shellguard.DeniedError
	if errors.As(err, &de) {
		return de
	}
	return nil
}
