package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/internal/termsafe"
)

// approvalsCommand is the approvals noun: the queue of calls to
// `approval: ask` tools waiting for a person.
func approvalsCommand() *cli.Command {
	return &cli.Command{
		Name:  "approvals",
		Usage: "list, allow and deny calls waiting for a person's approval",
		UsageText: `toolcage approvals command [command options] [arguments...]

Examples:
   toolcage approvals list
   toolcage approvals show k3xq
   toolcage approvals allow k3xq7mfa
   toolcage approvals allow k3xq --always
   toolcage approvals deny k3xq7mfa`,
		Description: `A call of a tool with approval: ask parks in the approval queue and its
caller waits (approvals.timeout in the daemon config, 2 minutes by default)
for a person to allow or deny it; no decision in time denies it. The queue is
kept in the daemon's database and outlives its callers: a call made with
--no-wait, or whose caller gave up or lost the daemon to a restart, stays
pending; once allowed, the caller's retry of the identical call (same tool,
version and definition, same caller and worker, same arguments) within approvals.validity
(10 minutes by default) runs on it, once. allow --always approves every
identical call from then on. 'approvals list --watch' follows the queue.`,
		Subcommands: []*cli.Command{approvalsListCommand(), approvalsShowCommand(), approvalsAllowCommand(), approvalsDenyCommand()},
	}
}

func approvalsListCommand() *cli.Command {
	return &cli.Command{
		Name:    "list",
		Aliases: []string{"ls"},
		Usage:   "list approvals and what exactly each call would run",
		UsageText: `toolcage approvals list [--status STATUS] [--watch] [--json]

Examples:
   toolcage approvals list
   toolcage approvals list --status all
   toolcage approvals list --watch            # the pending ones, then each new one, until Ctrl-C
   toolcage approvals list --watch --status all --json`,
		Description: `WHAT is what the call would run: a shell tool's argv (JSON) or sh -c
command, an HTTP tool's method and URL, or the sha256 of a JavaScript tool's
code; for a filesystem write, edit or delete, the change's summary, and below
the table the diff against the file as it stood when the call parked (the
first 40 lines; all of it in 'approvals show ID'). Secret values are never
shown.

--watch prints the pending approvals, then each approval as it is made, one
line each, until Ctrl-C (server-sent events from GET /v1/approvals/events).
With --status all it also prints each decision (allowed, denied, expired) as
it happens; with --json each line is one approval as JSON.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "status", Value: "pending", Usage: "show approvals with `STATUS`: pending, allowed, denied, expired or all"},
			&cli.BoolFlag{Name: "watch", Aliases: []string{"w"}, Usage: "keep printing approvals as they come, until Ctrl-C"},
			jsonFlag(),
		},
		Action: func(cCtx *cli.Context) error {
			if err := noArgs(cCtx); err != nil {
				return err
			}
			status := cCtx.String("status")
			switch status {
			case "pending", "allowed", "denied", "expired":
			case "all":
				status = ""
			default:
				return usageErrorf(cCtx, "--status must be pending, allowed, denied, expired or all, not %q", status)
			}
			a := appOf(cCtx)
			if cCtx.Bool("watch") {
				return runApprovalsWatch(cCtx.Context, a, status, a.jsonOut(cCtx))
			}
			return runApprovalsList(cCtx.Context, a, status, a.jsonOut(cCtx))
		},
	}
}

func runApprovalsList(ctx context.Context, a *app, status string, jsonOut bool) error {
	path := "/v1/approvals"
	if status != "" {
		path += "?status=" + url.QueryEscape(status)
	}
	var list api.ApprovalList
	raw, err := a.request(ctx, http.MethodGet, path, nil, &list)
	if err != nil {
		return err
	}
	if jsonOut {
		return writeJSON(a.out, raw)
	}
	tw := newTable(a.out)
	if status == "" {
		row(tw, "ID", "TOOL", "VER", "CALLER", "WHAT", "CREATED", "STATUS")
	} else {
		row(tw, "ID", "TOOL", "VER", "CALLER", "WHAT", "CREATED")
	}
	for _, ap := range list.Approvals {
		caller := ap.CallerType
		if ap.CallerID != "" {
			caller += ":" + ap.CallerID
		}
		cells := []string{ap.ID, ap.Tool, strconv.Itoa(ap.Version), orDash(caller), orDash(clipCell(approvalWhat(ap))), formatTime(ap.CreatedAt, a.loc)}
		if status == "" {
			cells = append(cells, ap.Status)
		}
		row(tw, cells...)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// Each file change below the table, so the person sees the edit
	// they approve; a long one is cut, whole in `approvals show`.
	for _, ap := range list.Approvals {
		if ap.Change == "" || ap.Status != "pending" {
			continue
		}
		fmt.Fprintf(a.out, "\n%s %s:\n", ap.ID, termsafe.Line(ap.Tool))
		writeChange(a.out, ap.Change, maxListedChangeLines, ap.ID)
	}
	return nil
}

// maxListedChangeLines bounds a change's lines under `approvals list`.
const maxListedChangeLines = 40

// approvalWhat is the WHAT cell: what would run, or for a file change
// (which runs nothing the person needs to read) its summary line.
func approvalWhat(ap api.Approval) string {
	if ap.Rendered == "" && ap.Change != "" {
		summary, _, _ := strings.Cut(ap.Change, "\n")
		return summary
	}
	return ap.Rendered
}

// writeChange prints a change's lines, each made safe for the terminal
// (termsafe.Text keeps its tabs), at most max of them (0: all).
func writeChange(w io.Writer, change string, max int, id string) {
	lines := strings.Split(strings.TrimSuffix(change, "\n"), "\n")
	for i, l := range lines {
		if max > 0 && i == max {
			fmt.Fprintf(w, "… %d more lines: toolcage approvals show %s\n", len(lines)-max, id)
			return
		}
		fmt.Fprintln(w, "  "+termsafe.Text(l))
	}
}

func approvalsShowCommand() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "show one approval: what the call would run or change, and its arguments",
		ArgsUsage: "ID",
		UsageText: `toolcage approvals show ID [--json]

Example:
   toolcage approvals show k3xq`,
		Description: `Shows one approval (ID or a unique prefix of at least 4 characters): the
tool, the caller, what would run, the arguments, and for a filesystem
write_file, edit_file or delete_file the whole diff against the file as it
stood when the call parked ("new file", "delete", binary files said so).`,
		Flags: []cli.Flag{jsonFlag()},
		Action: func(cCtx *cli.Context) error {
			id, err := approvalID(cCtx)
			if err != nil {
				return err
			}
			a := appOf(cCtx)
			return runApprovalShow(cCtx.Context, a, id, a.jsonOut(cCtx))
		},
	}
}

func runApprovalShow(ctx context.Context, a *app, ref string, jsonOut bool) error {
	var list api.ApprovalList
	if _, err := a.request(ctx, http.MethodGet, "/v1/approvals", nil, &list); err != nil {
		return err
	}
	ref = strings.ToLower(strings.TrimSpace(ref))
	var found []api.Approval
	for _, ap := range list.Approvals {
		if ap.ID == ref {
			found = []api.Approval{ap}
			break
		}
		if len(ref) >= 4 && strings.HasPrefix(ap.ID, ref) {
			found = append(found, ap)
		}
	}
	switch len(found) {
	case 0:
		return errdefs.Errorf(errdefs.NotFound, "no approval %q", ref)
	case 1:
	default:
		return errdefs.Errorf(errdefs.InvalidRequest, "approval id prefix %q is ambiguous: it matches %s, %s; give more characters", ref, found[0].ID, found[1].ID)
	}
	ap := found[0]
	if jsonOut {
		b, err := json.Marshal(ap)
		if err != nil {
			return err
		}
		return writeJSON(a.out, b)
	}
	caller := ap.CallerType
	if ap.CallerID != "" {
		caller += ":" + ap.CallerID
	}
	kv := newKV(a.out)
	row(kv, "ID:", ap.ID)
	row(kv, "Tool:", fmt.Sprintf("%s (version %d)", ap.Tool, ap.Version))
	row(kv, "Caller:", orDash(caller))
	if ap.Worker != "" {
		row(kv, "Worker:", ap.Worker)
	}
	row(kv, "Status:", ap.Status)
	row(kv, "Created:", formatTime(ap.CreatedAt, a.loc))
	if ap.Rendered != "" {
		row(kv, "Runs:", ap.Rendered)
	}
	row(kv, "Arguments:", string(ap.Arguments))
	if err := kv.Flush(); err != nil {
		return err
	}
	if ap.Change != "" {
		fmt.Fprintln(a.out, "Change:")
		writeChange(a.out, ap.Change, 0, ap.ID)
	}
	return nil
}

// approvalID returns the one ID argument.
func approvalID(cCtx *cli.Context) (string, error) {
	switch n := cCtx.NArg(); {
	case n == 0:
		return "", usageErrorf(cCtx, "missing the approval ID (see 'toolcage approvals list')")
	case n > 1:
		return "", usageErrorf(cCtx, "unexpected argument %q: give one approval ID", cCtx.Args().Get(1))
	}
	return cCtx.Args().First(), nil
}

func approvalsAllowCommand() *cli.Command {
	return &cli.Command{
		Name:      "allow",
		Usage:     "allow a waiting call",
		ArgsUsage: "ID",
		UsageText: `toolcage approvals allow ID [--always]

Examples:
   toolcage approvals allow k3xq7mfa
   toolcage approvals allow k3xq --always`,
		Description: `Allows the call; its waiting caller gets the result. ID may be a unique
prefix of at least 4 characters. --always also approves this exact call from
then on: the same tool with the same definition, through the same worker (or
none), with the same arguments, never the tool or program alone. Changing the
tool (a new version, an edited tool file) voids it.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "always", Usage: "approve this exact call (tool, worker, definition, arguments) from now on"},
			jsonFlag(),
		},
		Action: func(cCtx *cli.Context) error {
			id, err := approvalID(cCtx)
			if err != nil {
				return err
			}
			a := appOf(cCtx)
			return runApprovalDecide(cCtx.Context, a, id, true, cCtx.Bool("always"), a.jsonOut(cCtx))
		},
	}
}

func approvalsDenyCommand() *cli.Command {
	return &cli.Command{
		Name:      "deny",
		Usage:     "deny a waiting call",
		ArgsUsage: "ID",
		UsageText: `toolcage approvals deny ID

Example:
   toolcage approvals deny k3xq7mfa`,
		Description: `Denies the call; its waiting caller gets approval_denied. ID may be a
unique prefix of at least 4 characters.`,
		Flags: []cli.Flag{jsonFlag()},
		Action: func(cCtx *cli.Context) error {
			id, err := approvalID(cCtx)
			if err != nil {
				return err
			}
			a := appOf(cCtx)
			return runApprovalDecide(cCtx.Context, a, id, false, false, a.jsonOut(cCtx))
		},
	}
}

func runApprovalDecide(ctx context.Context, a *app, id string, allow, always, jsonOut bool) error {
	verb := "deny"
	var body any
	if allow {
		verb = "allow"
		body = api.ApprovalDecision{Always: always}
	}
	var ap api.Approval
	raw, err := a.request(ctx, http.MethodPost, "/v1/approvals/"+api.PathEscape(id)+"/"+verb, body, &ap)
	if err != nil {
		return err
	}
	if jsonOut {
		return writeJSON(a.out, raw)
	}
	switch {
	case allow && always:
		_, err = fmt.Fprintf(a.out, "Allowed %s (%s v%d), and the same call from now on\n", ap.ID, ap.Tool, ap.Version)
	case allow:
		_, err = fmt.Fprintf(a.out, "Allowed %s (%s v%d)\n", ap.ID, ap.Tool, ap.Version)
	default:
		_, err = fmt.Fprintf(a.out, "Denied %s (%s v%d)\n", ap.ID, ap.Tool, ap.Version)
	}
	return err
}
