package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

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
		Description: `Shows the tool's state (status, version, use count) and its definition as
YAML. With --definition only the definition is printed, ready to edit and
pass to 'toolcage tools update NAME -f FILE'.`,
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
	return writeToolShow(a.out, &tool, a.loc)
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
		{"Isolation:", orDash(s.Isolation)},
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
