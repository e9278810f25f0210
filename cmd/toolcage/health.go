package main

import (
	"context"
	"io"
	"net/http"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
)

type healthOptions struct {
	json bool
}

func healthCommand() *cli.Command {
	return &cli.Command{
		Name:  "health",
		Usage: "check that the daemon is up",
		UsageText: `toolcage health [--json]

Example:
   toolcage health || toolcage daemon`,
		Description: "Asks the daemon for its status. Exits 0 when it answers \"ok\", 1 otherwise.",
		Flags:       []cli.Flag{jsonFlag()},
		Action: func(cCtx *cli.Context) error {
			if err := noArgs(cCtx); err != nil {
				return err
			}
			a := appOf(cCtx)
			return runHealth(cCtx.Context, a, healthOptions{json: a.jsonOut(cCtx)})
		},
	}
}

func runHealth(ctx context.Context, a *app, opts healthOptions) error {
	var h api.Health
	raw, err := a.request(ctx, http.MethodGet, "/v1/health", nil, &h)
	if err != nil {
		return err
	}
	if opts.json {
		err = writeJSON(a.out, raw)
	} else {
		err = writeHealth(a.out, &h)
	}
	if err != nil {
		return err
	}
	if h.Status != "ok" {
		return codedErrorf(errdefs.Unavailable, "the daemon reports status %q", h.Status)
	}
	return nil
}

// writeHealth prints the daemon's status as a key/value block.
func writeHealth(w io.Writer, h *api.Health) error {
	tw := newKV(w)
	row(tw, "Status:", h.Status)
	row(tw, "Version:", orDash(h.Version))
	row(tw, "Uptime:", formatSeconds(h.UptimeSeconds))
	row(tw, "Socket:", orDash(h.Socket))
	row(tw, "Data dir:", orDash(h.DataDir))
	return tw.Flush()
}
