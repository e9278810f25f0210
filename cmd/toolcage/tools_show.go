package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/pmezard/go-difflib/difflib"
	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon/api"
)

type toolsShowOptions struct {
	name       string
	definition bool // only the definition, ready for "tools update -f"
	json       bool
}

func toolsShowCommand() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Aliases:   []string{"inspect"},
		Usage:     "show a tool and its definition",
		ArgsUsage: "NAME",
		UsageText: `toolcage tools show NAME [--definition] [--json]

Examples:
   toolcage tools show dns_lookup
   toolcage tools show dns_lookup --definition > dns_lookup.yaml`,
		Description: `Shows the tool's state (status, version, use count) and its whole definition
as YAML: code, command template, URL, headers, env and the secrets it asks
for. For a tool pending approval it also shows what changed since the last
version a person approved, as a unified diff: read this before 'toolcage
tools approve NAME'. With --definition only the definition is printed, ready
to edit and pass to 'toolcage tools update NAME -f FILE'.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "definition", Aliases: []string{"d"}, Usage: "print only the definition (YAML, or JSON with --json)"},
			jsonFlag(),
		},
		Action: func(cCtx *cli.Context) error {
			name, err := oneName(cCtx)
			if err != nil {
				return err
			}
			a := appOf(cCtx)
			return runToolsShow(cCtx.Context, a, toolsShowOptions{name: name, definition: cCtx.Bool("definition"), json: a.jsonOut(cCtx)})
		},
	}
}

func runToolsShow(ctx context.Context, a *app, opts toolsShowOptions) error {
	var tool api.Tool
	raw, err := a.request(ctx, http.MethodGet, "/v1/tools/"+api.PathEscape(opts.name), nil, &tool)
	if err != nil {
		return err
	}
	switch {
	case opts.definition && opts.json:
		return writeJSON(a.out, tool.Definition)
	case opts.definition:
		y, err := definitionYAML(tool.Definition)
		if err != nil {
			return err
		}
		_, err = io.WriteString(a.out, y)
		return err
	case opts.json:
		return writeJSON(a.out, raw)
	}
	if err := writeToolShow(a.out, &tool, a.loc); err != nil {
		return err
	}
	if tool.Status != statusPendingApproval {
		return nil
	}
	var approved json.RawMessage
	if tool.ApprovedVersion > 0 && tool.ApprovedVersion != tool.Version {
		var h api.ToolHistory
		if _, err := a.request(ctx, http.MethodGet, "/v1/tools/"+api.PathEscape(opts.name)+"/history", nil, &h); err != nil {
			return err
		}
		for _, v := range h.Versions {
			if v.Version == tool.ApprovedVersion {
				approved = v.Definition
			}
		}
	}
	return writePendingChange(a.out, opts.name, &tool, approved)
}

const statusPendingApproval = "pending_approval"

// writePendingChange tells the person approving a pending tool what they
// approve: the change since the last approved version (approved, its
// definition), or that nothing of it was ever approved.
func writePendingChange(w io.Writer, name string, t *api.Tool, approved json.RawMessage) error {
	if approved == nil && t.ApprovedVersion > 0 {
		_, err := fmt.Fprintf(w, "\nPending approval: version %d, the last one approved, is no longer kept; read the\nwhole definition above.\n", t.ApprovedVersion)
		return err
	}
	if approved == nil {
		_, err := fmt.Fprintf(w, "\nPending approval: no version of this tool was approved yet; the whole\ndefinition above is what 'toolcage tools approve %s' lets run.\n", name)
		return err
	}
	old, err := definitionYAML(approved)
	if err != nil {
		return err
	}
	cur, err := definitionYAML(t.Definition)
	if err != nil {
		return err
	}
	diff, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(old), B: difflib.SplitLines(cur),
		FromFile: fmt.Sprintf("version %d (approved)", t.ApprovedVersion),
		ToFile:   fmt.Sprintf("version %d (pending)", t.Version),
		Context:  3,
	})
	if err != nil {
		return err
	}
	if diff == "" {
		diff = "(the definition is the same as the approved one)\n"
	}
	_, err = fmt.Fprintf(w, "\nPending approval: changes since version %d, the last one approved:\n%s", t.ApprovedVersion, indent(diff, "  "))
	return err
}

// secretsLine lists a tool's secrets and says which are not set yet.
func secretsLine(declared, missing []string) string {
	if len(declared) == 0 {
		return "-"
	}
	line := strings.Join(declared, ", ")
	if len(missing) > 0 {
		line += " (missing: " + strings.Join(missing, ", ") + "; set with toolcage secrets set NAME)"
	}
	return line
}

// writeToolShow prints a tool as a key/value block, then its definition.
func writeToolShow(w io.Writer, t *api.Tool, loc *time.Location) error {
	s := summarize(t.Definition)
	lastUsed := "never"
	if t.LastUsedAt != nil {
		lastUsed = formatTime(*t.LastUsedAt, loc)
	}
	tw := newKV(w)
	for _, kv := range [][2]string{
		{"Name:", s.Name},
		{"Description:", s.Description},
		{"Kind:", s.Kind},
		{"Status:", t.Status},
		{"Version:", strconv.Itoa(t.Version)},
		{"Category:", orDash(s.Category)},
		{"Permissions:", orDash(strings.Join(s.Permissions, ", "))},
		{"Secrets:", secretsLine(s.Secrets, t.MissingSecrets)},
		{"Approval:", orDash(s.Approval)},
		{"Isolation:", orDefault(s.Isolation)},
		{"Created by:", t.CreatedBy},
		{"Uses:", strconv.FormatInt(t.UsageCount, 10)},
		{"Last used:", lastUsed},
		{"Created:", formatTime(t.CreatedAt, loc)},
		{"Updated:", formatTime(t.UpdatedAt, loc)},
	} {
		row(tw, kv[0], oneLine(kv[1]))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	y, err := definitionYAML(t.Definition)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "\nDefinition:\n%s", indent(y, "  "))
	return err
}

// oneLine keeps a value on its row in a key/value block.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
