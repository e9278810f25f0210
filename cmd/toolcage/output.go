package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/internal/termsafe"
)

// request sends one API request and returns the raw answer body, decoding it
// into out as well when out is not nil. The raw body is what --json prints.
func (a *app) request(ctx context.Context, method, path string, in, out any) (json.RawMessage, error) {
	var raw json.RawMessage
	if err := a.client.Do(ctx, method, path, in, &raw); err != nil {
		return nil, err
	}
	// The daemon answers approval_required with 202 Accepted and an error
	// body; api.Client only treats 4xx/5xx as errors.
	if e := errorBody(raw); e != nil {
		return nil, e
	}
	if out != nil && len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			return nil, fmt.Errorf("decoding the daemon's answer: %w", err)
		}
	}
	return raw, nil
}

// errorBody returns the *api.Error in a body shaped {"error": {"code": …}},
// or nil. A call response's "error" is a string and never matches.
func errorBody(raw json.RawMessage) error {
	var probe struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &probe) != nil || len(probe.Error) == 0 || probe.Error[0] != '{' {
		return nil
	}
	var eb api.ErrorBody
	if json.Unmarshal(raw, &eb) != nil || eb.Error.Code == "" {
		return nil
	}
	return &api.Error{Status: 202, ErrorDetail: eb.Error}
}

// writeJSON prints an API body as indented JSON, unchanged otherwise.
func writeJSON(w io.Writer, raw json.RawMessage) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, bytes.TrimSpace(raw), "", "  "); err != nil {
		return fmt.Errorf("the daemon's answer is not JSON: %w", err)
	}
	buf.WriteByte('\n')
	// The same JSON, with what a terminal would obey escaped.
	_, err := w.Write(termsafe.JSON(buf.Bytes()))
	return err
}

// writeValueJSON prints a value as indented JSON.
func writeValueJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeJSON(w, b)
}

// table aligns tab-separated cells into columns, with no trailing blanks.
type table struct {
	tw  *tabwriter.Writer
	buf bytes.Buffer
	out io.Writer
}

// newTable returns a table with columns three spaces apart.
func newTable(w io.Writer) *table { return newAligned(w, 3) }

// newKV returns a table for a "Key: value" block.
func newKV(w io.Writer) *table { return newAligned(w, 1) }

func newAligned(w io.Writer, padding int) *table {
	t := &table{out: w}
	t.tw = tabwriter.NewWriter(&t.buf, 0, 8, padding, ' ', 0)
	return t
}

func (t *table) Write(p []byte) (int, error) { return t.tw.Write(p) }

// Flush writes the aligned rows.
func (t *table) Flush() error {
	if err := t.tw.Flush(); err != nil {
		return err
	}
	lines := strings.SplitAfter(t.buf.String(), "\n")
	var b strings.Builder
	for _, l := range lines {
		if strings.HasSuffix(l, "\n") {
			b.WriteString(strings.TrimRight(l, " "+"\n") + "\n")
		} else {
			b.WriteString(strings.TrimRight(l, " "))
		}
	}
	t.buf.Reset()
	_, err := io.WriteString(t.out, b.String())
	return err
}

// row writes one table row. Each cell is termsafe.Line: a newline or tab
// an agent wrote would forge a row or shift a column.
func row(tw io.Writer, cells ...string) {
	safe := make([]string, len(cells))
	for i, c := range cells {
		safe[i] = termsafe.Line(c)
	}
	fmt.Fprintln(tw, strings.Join(safe, "\t"))
}

// maxCell bounds a table cell an agent's call fills (what an approval
// would run): one row stays one screenful however large the call; the
// whole value is in --json.
const maxCell = 1000

// clipCell cuts s past maxCell bytes, at a rune's start, saying what was
// left out.
func clipCell(s string) string {
	if len(s) <= maxCell {
		return s
	}
	cut := maxCell
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d more bytes: --json)", s[:cut], len(s)-cut)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// orDefault shows an unset isolation as the daemon's default.
func orDefault(s string) string {
	if s == "" {
		return "default"
	}
	return s
}

// formatTime shows a time to the second in loc; the zero time is "-".
func formatTime(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return "-"
	}
	return t.In(loc).Format("2006-01-02 15:04:05")
}

// formatMS shows a duration in milliseconds with sensible precision.
func formatMS(ms float64) string {
	switch {
	case ms < 10:
		return strconv.FormatFloat(ms, 'f', 1, 64) + " ms"
	default:
		return strconv.FormatFloat(ms, 'f', 0, 64) + " ms"
	}
}

// formatSeconds shows a number of seconds as a duration: 1h2m3s.
func formatSeconds(s float64) string {
	return (time.Duration(s * float64(time.Second))).Round(time.Second).String()
}

// definitionSummary is the part of a stored definition the tables show.
type definitionSummary struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Kind        string   `json:"kind"`
	Category    string   `json:"category"`
	Permissions []string `json:"permissions"`
	Secrets     []string `json:"secrets"`
	Approval    string   `json:"approval"`
	Isolation   string   `json:"isolation"`
}

func summarize(def json.RawMessage) definitionSummary {
	var s definitionSummary
	_ = json.Unmarshal(def, &s) // a broken definition shows as blanks
	return s
}

// definitionYAML renders a JSON definition as YAML in its own key order,
// with multi-line strings (code) as literal blocks and short lists of
// scalars inline.
func definitionYAML(def json.RawMessage) (string, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(def, &doc); err == nil && len(doc.Content) == 1 {
		restyle(doc.Content[0])
		var buf bytes.Buffer
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		if err := enc.Encode(doc.Content[0]); err == nil && enc.Close() == nil {
			return yamlSafe(buf.String()), nil
		}
	}
	// Fall back to sorted keys rather than fail.
	b, err := sigsyaml.JSONToYAML(def)
	return yamlSafe(string(b)), err
}

// yamlSafe escapes what the YAML encoder leaves raw and a terminal would
// obey (bidirectional controls and other format characters, which YAML
// counts as printable). restyle put every string holding one in double
// quotes, where the escape reads back as the character itself.
func yamlSafe(y string) string {
	if !termsafe.Needs(strings.NewReplacer("\n", "", "\t", "").Replace(y)) {
		return y
	}
	var b strings.Builder
	for _, r := range y {
		switch {
		case r == '\n' || r == '\t' || !termsafe.Unsafe(r):
			b.WriteRune(r)
		case r > 0xffff:
			fmt.Fprintf(&b, `\U%08x`, r) // YAML has no surrogate pairs
		default:
			b.WriteString(termsafe.Escape(r))
		}
	}
	return b.String()
}

// restyle turns the JSON flow style into block YAML.
func restyle(n *yaml.Node) {
	switch n.Kind {
	case yaml.ScalarNode:
		n.Tag = n.ShortTag() // keep "123" a string once unquoted
		n.Style = 0
		switch {
		case n.Tag != "!!str":
		case termsafe.Needs(strings.NewReplacer("\n", "", "\t", "").Replace(n.Value)):
			// Escaped where the encoder leaves it raw (yamlSafe), which only
			// a double-quoted scalar reads back as the same string.
			n.Style = yaml.DoubleQuotedStyle
		case strings.Contains(n.Value, "\n"):
			n.Style = yaml.LiteralStyle
		case !plainReadsAsString(n.Value):
			n.Style = yaml.DoubleQuotedStyle
		}
	case yaml.MappingNode:
		n.Style = 0
		for _, c := range n.Content {
			restyle(c)
		}
	case yaml.SequenceNode:
		n.Style = 0
		width := 0
		flow := true
		for _, c := range n.Content {
			restyle(c)
			flow = flow && c.Kind == yaml.ScalarNode && c.Style != yaml.LiteralStyle
			width += len(c.Value) + 2
		}
		if flow && width <= 60 {
			n.Style = yaml.FlowStyle
		}
	}
}

// plainReadsAsString reports whether s, written as a plain scalar, reads
// back as the string s where definitions are read (catalog.Parse, through
// sigs.k8s.io/yaml). That reader is YAML 1.1: yes, no, on, off, y and n are
// booleans there and 1:20 is a number, while the YAML 1.2 encoder used here
// leaves them unquoted. Without quotes, a property named y or an enum of
// on/off would come back changed from 'tools update -f'.
func plainReadsAsString(s string) bool {
	j, err := sigsyaml.YAMLToJSON([]byte(s))
	if err != nil || len(j) == 0 || j[0] == '{' || j[0] == '[' {
		return true // not a plain scalar at all: the encoder quotes it itself
	}
	var got string
	return json.Unmarshal(j, &got) == nil && got == s
}

// indent prefixes every non-empty line of s.
func indent(s, prefix string) string {
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			b.WriteString(prefix)
		}
		b.WriteString(l)
	}
	return b.String()
}
