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
	parent        string // only the nested calls this call made
	admin         bool
	limit, offset int // -1: not given
	json          bool
}

func auditCommand() *cli.Command {
	return &cli.Command{
		Name:  "audit",
		Usage: "list recorded calls, newest first",
		UsageText: `toolcage audit [--tool NAME] [--parent CALL_ID] [--limit N] [--offset N]
   toolcage audit --admin [--limit N] [--offset N]

Examples:
   toolcage audit
   toolcage audit --tool dns_lookup --limit 10
   toolcage audit --admin
   toolcage audit --parent c80db369f8bf623d     # the calls its code made (utils.callTool)
   toolcage audit --json | jq '.executions[] | select(.outcome != "ok")'`,
		Description: `Lists the audit log: every call with its caller, outcome, error code, time
taken and start time. Arguments are recorded scrubbed of credentials; see
them with --json. With --admin it lists the administrative acts instead:
approvals decided, tools approved or rejected, secrets, workers and tokens
changed, each with its principal, and every refused attempt by an agent.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "tool", Usage: "only calls of tool `NAME`"},
			&cli.StringFlag{Name: "parent", Usage: "only the nested calls call `CALL_ID`'s code made (utils.callTool)"},
			&cli.BoolFlag{Name: "admin", Usage: "list administrative acts instead of calls"},
			&cli.IntFlag{Name: "limit", Usage: "show at most `N` calls", DefaultText: "50"},
			&cli.IntFlag{Name: "offset", Usage: "skip the newest `N` calls"},
			jsonFlag(),
		},
		Action: func(cCtx *cli.Context) error {
			if err := noArgs(cCtx); err != nil {
				return err
			}
			a := appOf(cCtx)
			opts := auditOptions{tool: cCtx.String("tool"), parent: cCtx.String("parent"), admin: cCtx.Bool("admin"), json: a.jsonOut(cCtx)}
			if opts.admin && opts.tool != "" {
				return usageErrorf(cCtx, "--tool and --admin do not go together")
			}
			if opts.admin && opts.parent != "" {
				return usageErrorf(cCtx, "--parent and --admin do not go together")
			}
			var err error
			if opts.limit, err = nonNegative(cCtx, "limit"); err != nil {
				return err
			}
			if opts.offset, err = nonNegative(cCtx, "offset"); err != nil {
				return err
			}
			return runAudit(cCtx.Context, a, opts)
		},
	}
}

func runAudit(ctx context.Context, a *app, opts auditOptions) error {
	q := url.Values{}
	if opts.tool != "" {
		q.Set("tool", opts.tool)
	}
	if opts.parent != "" {
		q.Set("parent", opts.parent)
	}
	if opts.limit >= 0 {
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
