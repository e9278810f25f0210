package main

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon/api"
)

type auditOptions struct {
	tool          string
	admin         bool
	limit, offset int // -1: not given
	json          bool
	// The filters beyond tool; since and until are sent as given (RFC
	// 3339 or a duration before now), after a check here.
	caller, worker, outcome, since, until string
	follow                                bool
	jsonl                                 bool // --export jsonl or -o jsonl
}

func auditCommand() *cli.Command {
	return &cli.Command{
		Name:  "audit",
		Usage: "list recorded calls, newest first; filter, follow or export them",
		UsageText: `toolcage audit [--tool NAME] [--caller ID] [--worker NAME] [--outcome OUTCOME]
                 [--since TIME] [--until TIME] [--limit N] [--offset N]
   toolcage audit --follow [filters]
   toolcage audit --export jsonl [filters] > audit.jsonl
   toolcage audit --admin [--limit N] [--offset N]

Examples:
   toolcage audit
   toolcage audit --tool dns_lookup --limit 10
   toolcage audit --since 1h --outcome refused
   toolcage audit --worker ops --since 2026-03-01T00:00:00Z --until 2026-03-02T00:00:00Z
   toolcage audit --follow --worker ops
   toolcage audit -o jsonl --since 720h | gzip > audit.jsonl.gz
   toolcage audit --admin
   toolcage audit --json | jq '.executions[] | select(.outcome != "ok")'`,
		Description: `Lists the audit log: every call with its caller, outcome, error code, time
taken and start time. Arguments are recorded scrubbed of credentials; see
them with --json. With --admin it lists the administrative acts instead:
approvals decided, tools approved or rejected, secrets, workers and tokens
changed, each with its principal, and every refused attempt by an agent.

Filters combine: --tool, --caller (a caller id: uid:1000, worker:ops, or what
--caller-id said), --worker, --outcome (ok, error, failed, refused), --since
(at or after) and --until (before), each time RFC 3339 or a duration before
now (30m, 1h, 720h).

--follow prints the newest --limit (10) matching calls, or all since --since,
then each new one as it is recorded, until Ctrl-C. --export jsonl (or -o
jsonl) writes every matching call, oldest first, as JSON Lines to stdout,
streamed: any size. Old records go by audit.retention in the daemon config.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "tool", Usage: "only calls of tool `NAME`"},
			&cli.StringFlag{Name: "caller", Usage: "only calls of caller `ID`"},
			&cli.StringFlag{Name: "worker", Usage: "only calls through worker `NAME`"},
			&cli.StringFlag{Name: "outcome", Usage: "only calls with `OUTCOME`: ok, error, failed or refused"},
			&cli.StringFlag{Name: "since", Usage: "only calls started at or after `TIME` (RFC 3339, or a duration before now: 1h)"},
			&cli.StringFlag{Name: "until", Usage: "only calls started before `TIME` (RFC 3339, or a duration before now)"},
			&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep printing calls as they are recorded, until Ctrl-C"},
			&cli.StringFlag{Name: "export", Usage: "write every matching call as `FORMAT` to stdout: jsonl"},
			&cli.BoolFlag{Name: "admin", Usage: "list administrative acts instead of calls"},
			&cli.IntFlag{Name: "limit", Usage: "show at most `N` calls", DefaultText: "50; --follow: 10; --export: all"},
			&cli.IntFlag{Name: "offset", Usage: "skip the newest `N` calls"},
			jsonFlag(),
		},
		Action: func(cCtx *cli.Context) error {
			if err := noArgs(cCtx); err != nil {
				return err
			}
			a := appOf(cCtx)
			opts := auditOptions{tool: cCtx.String("tool"), admin: cCtx.Bool("admin"), json: a.jsonOut(cCtx),
				caller: cCtx.String("caller"), worker: cCtx.String("worker"), outcome: cCtx.String("outcome"),
				since: cCtx.String("since"), until: cCtx.String("until"), follow: cCtx.Bool("follow"), jsonl: a.outputJSONL}
			switch e := cCtx.String("export"); e {
			case "":
			case "jsonl":
				opts.jsonl = true
			default:
				return usageErrorf(cCtx, "--export must be jsonl, not %q", e)
			}
			if opts.admin {
				for _, f := range []string{"tool", "caller", "worker", "outcome", "since", "until", "follow", "export"} {
					if cCtx.IsSet(f) || (f == "export" && opts.jsonl) {
						return usageErrorf(cCtx, "--%s and --admin do not go together: --admin takes only --limit and --offset", f)
					}
				}
			}
			switch {
			case opts.follow && opts.jsonl:
				return usageErrorf(cCtx, "--follow and --export go separately")
			case (opts.follow || opts.jsonl) && cCtx.IsSet("offset"):
				return usageErrorf(cCtx, "--offset pages the list; --follow and --export do not take it")
			case opts.follow && opts.until != "":
				return usageErrorf(cCtx, "--follow has no end: it does not take --until")
			}
			switch opts.outcome {
			case "", "ok", "error", "failed", "refused":
			default:
				return usageErrorf(cCtx, "--outcome must be ok, error, failed or refused, not %q", opts.outcome)
			}
			now := time.Now()
			for name, v := range map[string]string{"since": opts.since, "until": opts.until} {
				if v == "" {
					continue
				}
				if _, err := api.ParseTime(v, now); err != nil {
					return usageErrorf(cCtx, "--%s: %v", name, err)
				}
			}
			var err error
			if opts.limit, err = nonNegative(cCtx, "limit"); err != nil {
				return err
			}
			if opts.offset, err = nonNegative(cCtx, "offset"); err != nil {
				return err
			}
			switch {
			case opts.follow:
				return runAuditFollow(cCtx.Context, a, opts)
			case opts.jsonl:
				return runAuditExport(cCtx.Context, a, opts)
			}
			return runAudit(cCtx.Context, a, opts)
		},
	}
}

// query is opts' filters (and limit, when given) as URL parameters.
func (opts auditOptions) query() url.Values {
	q := url.Values{}
	for k, v := range map[string]string{"tool": opts.tool, "caller": opts.caller, "worker": opts.worker,
		"outcome": opts.outcome, "since": opts.since, "until": opts.until} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if opts.limit >= 0 {
		q.Set("limit", strconv.Itoa(opts.limit))
	}
	return q
}

func runAudit(ctx context.Context, a *app, opts auditOptions) error {
	q := url.Values{}
	if !opts.admin {
		q = opts.query()
	} else if opts.limit >= 0 {
		q.Set("limit", strconv.Itoa(opts.limit))
	}
	if opts.offset >= 0 {
		q.Set("offset", strconv.Itoa(opts.offset))
	}
	path := "/v1/executions"
	if opts.admin {
		path = "/v1/admin-acts"
	}
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	if opts.admin {
		var acts api.AdminActList
		raw, err := a.request(ctx, http.MethodGet, path, nil, &acts)
		if err != nil {
			return err
		}
		if opts.json {
			return writeJSON(a.out, raw)
		}
		return writeAdminActs(a.out, &acts, a.loc)
	}
	var list api.ExecutionList
	raw, err := a.request(ctx, http.MethodGet, path, nil, &list)
	if err != nil {
		return err
	}
	if opts.json {
		return writeJSON(a.out, raw)
	}
	return writeExecutions(a.out, &list, a.loc)
}

// writeExecutions prints the audit table.
func writeExecutions(w io.Writer, list *api.ExecutionList, loc *time.Location) error {
	tw := newTable(w)
	row(tw, "ID", "TOOL", "VER", "CALLER", "OUTCOME", "CODE", "DURATION", "STARTED")
	for _, e := range list.Executions {
		ver := "-"
		if e.Version > 0 {
			ver = strconv.Itoa(e.Version)
		}
		row(tw, e.ID, orDash(e.Tool), ver, caller(e), e.Outcome, orDash(e.ErrorCode), formatMS(e.DurationMS), formatTime(e.StartedAt, loc))
	}
	return tw.Flush()
}

// writeAdminActs prints the admin log.
func writeAdminActs(w io.Writer, list *api.AdminActList, loc *time.Location) error {
	tw := newTable(w)
	row(tw, "ID", "ACT", "TARGET", "CALLER", "TOKEN", "OUTCOME", "CODE", "AT")
	for _, a := range list.AdminActs {
		row(tw, a.ID, a.Act, orDash(a.Target), caller(api.Execution{CallerType: a.CallerType, CallerID: a.CallerID, Worker: a.Worker}),
			orDash(a.TokenID), a.Outcome, orDash(a.ErrorCode), formatTime(a.At, loc))
	}
	return tw.Flush()
}

// caller shows who called: "user:alice", "llm:agent@worker".
func caller(e api.Execution) string {
	s := orDash(e.CallerType)
	if e.CallerID != "" {
		s += ":" + e.CallerID
	}
	if e.Worker != "" {
		s += "@" + e.Worker
	}
	return s
}
