package main

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/policy/scrub"
)

// maxScrubInput bounds what `policy scrub` reads from stdin.
const maxScrubInput = 256 << 20

func policyScrubCommand() *cli.Command {
	return &cli.Command{
		Name:  "scrub",
		Usage: "remove credentials from text on stdin, as the daemon does with tool output",
		UsageText: `toolcage policy scrub [--config FILE] < FILE

Examples:
   env | toolcage policy scrub
   kubectl logs pod/api | toolcage policy scrub > api.log
   toolcage policy scrub --config /etc/toolcage/toolcage.yaml < build.log`,
		Description: `Reads stdin and writes it to stdout with every credential the daemon's rules
recognise replaced by [REDACTED:kind]: provider keys (AWS, GitHub, GitLab, Slack,
Stripe, OpenAI, Anthropic, Google, ...), JWTs, PEM private keys, URLs with
passwords, Authorization headers and password=/token: pairs, and the 200-odd
formats of gitleaks' rule set. Git SHAs, UUIDs and lockfile hashes pass
untouched. Nothing else is changed; no daemon is needed.

With --config, the extra rules of the daemon's config (scrub.rules) apply too.`,
		Flags: []cli.Flag{configFlag()},
		Action: func(cCtx *cli.Context) error {
			if err := noArgs(cCtx); err != nil {
				return err
			}
			return runPolicyScrub(cCtx.Context, appOf(cCtx), cCtx.String("config"))
		},
	}
}

func runPolicyScrub(_ context.Context, a *app, configFile string) error {
	cfg, err := loadPolicyConfig(configFile)
	if err != nil {
		return err
	}
	s, err := scrub.New(nil, cfg.ScrubRules())
	if err != nil {
		return err
	}
	in, err := io.ReadAll(io.LimitReader(a.in, maxScrubInput+1))
	if err != nil {
		return fmt.Errorf("reading stdin: %w", err)
	}
	if len(in) > maxScrubInput {
		return inputErrorf("stdin is larger than %d bytes; scrub it in pieces", maxScrubInput)
	}
	_, err = a.out.Write(s.ScrubBytes(in))
	return err
}
