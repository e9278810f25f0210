package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/kind/builtin"
)

type toolsListOptions struct {
	status, category, createdBy, kind string
	profile                           string // only the tools this profile allows
	limit, offset                     int    // -1: not given
	json                              bool
}

func toolsListCommand() *cli.Command {
	return &cli.Command{
		Name:    "list",
		Aliases: []string{"ls"},
		Usage:   "list tools",
		UsageText: `toolcage tools list [--status S] [--category C] [--created-by user|llm] [--kind K] [--profile P] [--limit N] [--offset N]

Examples:
   toolcage tools list
   toolcage tools list --status pending_approval --created-by llm
   toolcage tools list --kind shell --json
   toolcage tools list --profile readonly`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "status", Usage: "only tools in `STATUS`: active, disabled, pending_approval or rejected"},
			&cli.StringFlag{Name: "category", Usage: "only tools in `CATEGORY`"},
			&cli.StringFlag{Name: "created-by", Usage: "only tools created by `WHO`: user or llm"},
			&cli.StringFlag{Name: "kind", Usage: "only tools of `KIND`: js, shell or http"},
			&cli.StringFlag{Name: "profile", Usage: "only the tools tool profile `P` allows (after the global profile): its effective set"},
			&cli.IntFlag{Name: "limit", Usage: "show at most `N` tools", DefaultText: "all"},
			&cli.IntFlag{Name: "offset", Usage: "skip the first `N` tools"},
			jsonFlag(),
		},
		Action: func(cCtx *cli.Context) error {
			if err := noArgs(cCtx); err != nil {
				return err
			}
			a := appOf(cCtx)
			opts := toolsListOptions{
				status: cCtx.String("status"), category: cCtx.String("category"),
				createdBy: cCtx.String("created-by"), kind: cCtx.String("kind"), profile: cCtx.String("profile"),
				limit: -1, offset: -1, json: a.jsonOut(cCtx),
			}
			if err := oneOf(cCtx, "status", opts.status, catalog.StatusActive, catalog.StatusDisabled, catalog.StatusPendingApproval, catalog.StatusRejected); err != nil {
				return err
			}
			if err := oneOf(cCtx, "created-by", opts.createdBy, catalog.CreatedByUser, catalog.CreatedByLLM); err != nil {
				return err
			}
			var kinds []string
			for _, k := range builtin.Kinds().Names() {
				kinds = append(kinds, string(k))
			}
			if err := oneOf(cCtx, "kind", opts.kind, kinds...); err != nil {
				return err
			}
			var err error
			if opts.limit, err = nonNegative(cCtx, "limit"); err != nil {
				return err
			}
			if opts.offset, err = nonNegative(cCtx, "offset"); err != nil {
				return err
			}
			return runToolsList(cCtx.Context, a, opts)
		},
	}
}

func runToolsList(ctx context.Context, a *app, opts toolsListOptions) error {
	q := url.Values{}
	for k, v := range map[string]string{"status": opts.status, "category": opts.category, "created_by": opts.createdBy, "kind": opts.kind, "profile": opts.profile} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if opts.limit >= 0 {
		q.Set("limit", strconv.Itoa(opts.limit))
	}
	if opts.offset >= 0 {
		q.Set("offset", strconv.Itoa(opts.offset))
	}
	path := "/v1/tools"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var list api.ToolList
	raw, err := a.request(ctx, http.MethodGet, path, nil, &list)
	if err != nil {
		return err
	}
	if opts.json {
		return writeJSON(a.out, raw)
	}
	if err := writeToolList(a.out, &list); err != nil {
		return err
	}
	if list.Total > len(list.Tools) {
		fmt.Fprintf(a.err, "Showing %d of %d tools; see --limit and --offset.\n", len(list.Tools), list.Total)
	}
	return nil
}

// writeToolList prints the tools table.
func writeToolList(w io.Writer, list *api.ToolList) error {
	tw := newTable(w)
	row(tw, "NAME", "KIND", "STATUS", "VERSION", "CATEGORY", "CREATED_BY", "USES")
	for _, t := range list.Tools {
		s := summarize(t.Definition)
		row(tw, s.Name, s.Kind, t.Status, strconv.Itoa(t.Version), orDash(s.Category), t.CreatedBy, strconv.FormatInt(t.UsageCount, 10))
	}
	return tw.Flush()
}

// oneOf refuses a flag value outside the allowed set (empty means unset).
func oneOf(cCtx *cli.Context, flag, value string, allowed ...string) error {
	if value == "" {
		return nil
	}
	for _, v := range allowed {
		if value == v {
			return nil
		}
	}
	return usageErrorf(cCtx, "--%s must be one of %s, not %q", flag, strings.Join(allowed, ", "), value)
}

// nonNegative returns an int flag's value, -1 when it was not given.
func nonNegative(cCtx *cli.Context, flag string) (int, error) {
	if !cCtx.IsSet(flag) {
		return -1, nil
	}
	n := cCtx.Int(flag)
	if n < 0 {
		return 0, usageErrorf(cCtx, "--%s must not be negative", flag)
	}
	return n, nil
}
