package main

import (
	"context"
	"io"
	"net/http"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon/api"
)

type toolsStatsOptions struct {
	json bool
}

func toolsStatsCommand() *cli.Command {
	return &cli.Command{
		Name:      "stats",
		Usage:     "count tools by status and creator, and their uses",
		UsageText: "toolcage tools stats [--json]",
		Flags:     []cli.Flag{jsonFlag()},
		Action: func(cCtx *cli.Context) error {
			if err := noArgs(cCtx); err != nil {
				return err
			}
			a := appOf(cCtx)
			return runToolsStats(cCtx.Context, a, toolsStatsOptions{json: a.jsonOut(cCtx)})
		},
	}
}

func runToolsStats(ctx context.Context, a *app, opts toolsStatsOptions) error {
	var s api.Stats
	raw, err := a.request(ctx, http.MethodGet, "/v1/stats", nil, &s)
	if err != nil {
		return err
	}
	if opts.json {
		return writeJSON(a.out, raw)
	}
	return writeStats(a.out, &s)
}

// writeStats prints the counts as a key/value block.
func writeStats(w io.Writer, s *api.Stats) error {
	tw := newKV(w)
	for _, kv := range []struct {
		k string
		v int64
	}{
		{"Tools:", int64(s.Total)},
		{"  active:", int64(s.Active)},
		{"  disabled:", int64(s.Disabled)},
		{"  pending approval:", int64(s.PendingApproval)},
		{"  rejected:", int64(s.Rejected)},
		{"Created by user:", int64(s.CreatedByUser)},
		{"Created by llm:", int64(s.CreatedByLLM)},
		{"Uses:", s.TotalUsage},
		{"Executions:", int64(s.Executions)},
	} {
		row(tw, kv.k, strconv.FormatInt(kv.v, 10))
	}
	return tw.Flush()
}
