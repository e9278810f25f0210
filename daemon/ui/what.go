package ui

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	sigsyaml "sigs.k8s.io/yaml"
)

// What is what a parked call would run, read back from the approval's
// rendered text (dispatch.renderedCall): the environment a shell tool
// sets, then an argv, a `sh -c` command, an HTTP method and URL (already
// redacted) or the sha256 of JavaScript code.
type What struct {
	Kind    string // argv | sh | http | js | text (anything else, shown as is)
	Env     []EnvVar
	Argv    []string
	Command string // sh: the command sh -c runs
	Method  string // http
	URL     string // http
	Hash    string // js: "sha256:<hex>"
	Text    string // the rendered text as stored
}

// EnvVar is one variable a shell tool sets.
type EnvVar struct{ Name, Value string }

// httpMethods are the methods an HTTP tool may use.
var httpMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

// parseWhat reads a rendered call. Text it does not recognise comes back
// as Kind "text", shown verbatim: a person still sees all there is.
func parseWhat(rendered string) What {
	w := What{Kind: "text", Text: rendered}
	rest := rendered
	if strings.HasPrefix(rest, "env {") {
		dec := json.NewDecoder(strings.NewReader(rest[len("env "):]))
		var env map[string]string
		if err := dec.Decode(&env); err != nil {
			return w
		}
		rest = strings.TrimPrefix(rest[len("env ")+int(dec.InputOffset()):], " ")
		names := make([]string, 0, len(env))
		for k := range env {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			w.Env = append(w.Env, EnvVar{Name: k, Value: env[k]})
		}
	}
	switch {
	case strings.HasPrefix(rest, "["):
		var argv []string
		if json.Unmarshal([]byte(rest), &argv) != nil || len(argv) == 0 {
			return What{Kind: "text", Text: rendered}
		}
		w.Kind, w.Argv = "argv", argv
	case strings.HasPrefix(rest, `sh -c "`):
		var cmd string
		if json.Unmarshal([]byte(rest[len("sh -c "):]), &cmd) != nil {
			return What{Kind: "text", Text: rendered}
		}
		w.Kind, w.Command = "sh", cmd
	case strings.HasPrefix(rest, "sha256:") && len(w.Env) == 0:
		w.Kind, w.Hash = "js", rest
	default:
		m, u, ok := strings.Cut(rest, " ")
		if !ok || len(w.Env) > 0 || !slices.Contains(httpMethods, m) || u == "" {
			return What{Kind: "text", Text: rendered}
		}
		w.Kind, w.Method, w.URL = "http", m, u
	}
	return w
}

// definitionYAML shows a definition (JSON) as YAML; a definition that
// does not convert is shown as its JSON, indented.
// Past the bounds of what a page shows (shown.go) it is one cut line.
func definitionYAML(def json.RawMessage) string {
	if !indentable(def, maxShownDefinition) {
		return compactShown(def, maxShownDefinition)
	}
	if y, err := sigsyaml.JSONToYAML(def); err == nil {
		return string(y)
	}
	return indented(def, maxShownDefinition)
}

// DiffLine is one line of a unified diff, with how it changed.
type DiffLine struct {
	Op   string // "+", "-", "@" (hunk header) or " "
	Text string
}

// FileChange is an approval's change (internal/filediff's text) as the
// page shows it: the summary line, then the diff's lines.
type FileChange struct {
	Summary string
	Lines   []DiffLine
}

// fileChange reads a change: its first line is the summary, then come
// the "---" and "+++" headers and the hunks, each line marked by its
// first character (so a removed line reading "-- x" is no header).
func fileChange(change string) FileChange {
	summary, rest, _ := strings.Cut(change, "\n")
	fc := FileChange{Summary: summary}
	n := 0
	for line := range strings.Lines(rest) {
		line = strings.TrimSuffix(line, "\n")
		op := " "
		switch {
		case n < 2 || strings.HasPrefix(line, "@@"):
			op = "@"
		case strings.HasPrefix(line, "+"):
			op = "+"
		case strings.HasPrefix(line, "-"):
			op = "-"
		}
		n++
		fc.Lines = append(fc.Lines, DiffLine{Op: op, Text: line})
	}
	return fc
}

// definitionDiff is the unified diff from the approved definition to the
// pending one, as YAML lines; empty when they are the same.
func definitionDiff(approved, pending json.RawMessage, fromName, toName string) []DiffLine {
	d, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A:        difflib.SplitLines(strings.TrimSuffix(definitionYAML(approved), "\n")),
		B:        difflib.SplitLines(strings.TrimSuffix(definitionYAML(pending), "\n")),
		FromFile: fromName, ToFile: toName, Context: 3,
	})
	if err != nil || d == "" {
		return nil
	}
	var out []DiffLine
	for line := range strings.Lines(d) {
		line = strings.TrimSuffix(line, "\n")
		op := " "
		switch {
		case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
			op = "@"
		case strings.HasPrefix(line, "+"):
			op = "+"
		case strings.HasPrefix(line, "-"):
			op = "-"
		case strings.HasPrefix(line, "@@"):
			op = "@"
		}
		out = append(out, DiffLine{Op: op, Text: line})
	}
	return out
}
