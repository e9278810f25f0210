package daemon

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/daemon/api"
)

// keywordRows reads the positive rows of the scrubber's keyword corpus
// (policy/scrub/testdata/keyword): each row's text and its secrets.
func keywordRows(t *testing.T) (texts []string, secrets [][]string) {
	t.Helper()
	files, err := filepath.Glob("../policy/scrub/testdata/keyword/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no keyword corpus: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if !strings.HasPrefix(l, "+ ") {
				continue
			}
			text := l[2:]
			if u, err := strconv.Unquote(text); err == nil && text[0] == '"' {
				text = u
			}
			var ss []string
			for rest := text; ; {
				i := strings.Index(rest, "⟦")
				j := strings.Index(rest, "⟧")
				if i < 0 || j < i {
					break
				}
				ss = append(ss, rest[i+len("⟦"):j])
				rest = rest[j+len("⟧"):]
			}
			text = strings.NewReplacer("⟦", "", "⟧", "").Replace(text)
			texts = append(texts, text)
			secrets = append(secrets, ss)
		}
	}
	return texts, secrets
}

// Each class of keyword-context secret, printed by a JS tool (its
// result and its log) and by a shell tool (its stdout), comes back
// redacted: the scrubber reads the call's result as the JSON it is,
// with quotes, line breaks and <>& escaped.
func TestScrubKeywordClassesThroughDaemon(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	params := `"parameters":{"type":"object","properties":{"t":{"type":"string"}},"required":["t"]}`
	create(t, c, `{"name":"print_js","description":"prints","kind":"js",`+params+`,
		"js":{"code":"console.log(args.t); return {text: args.t, lines: args.t.split('\\n')}"}}`)
	create(t, c, `{"name":"print_sh","description":"prints","kind":"shell",`+params+`,
		"shell":{"command":"printf '%s\\n' {{.t}}"}}`)
	texts, secrets := keywordRows(t)
	for i, text := range texts {
		for _, tool := range []string{"print_js", "print_sh"} {
			var raw json.RawMessage
			err := c.Do(context.Background(), "POST", "/v1/tools/"+tool+"/call",
				api.CallRequest{Arguments: mustJSON(map[string]any{"t": text})}, &raw)
			if err != nil {
				t.Fatalf("%s %q: %v", tool, text, err)
			}
			var resp api.CallResponse
			if err := json.Unmarshal(raw, &resp); err != nil || resp.IsError {
				t.Fatalf("%s %q: %v %s", tool, text, err, raw)
			}
			// The answer as sent, and its result as a client decodes it.
			var decoded strings.Builder
			decoded.Write(raw)
			var v any
			json.Unmarshal(resp.Result, &v)
			collectStrings(v, &decoded)
			for _, l := range resp.Logs {
				decoded.WriteString(l.Message)
			}
			got := decoded.String()
			for _, s := range secrets[i] {
				enc, _ := json.Marshal(s)
				if strings.Contains(got, s) || strings.Contains(got, string(enc[1:len(enc)-1])) {
					t.Errorf("%s leaked %q of %q:\n%s", tool, s, text, raw)
				}
			}
		}
	}
	t.Logf("%d rows, each through a JS and a shell tool", len(texts))
}

// collectStrings writes every string inside a decoded JSON value.
func collectStrings(v any, sb *strings.Builder) {
	switch x := v.(type) {
	case string:
		sb.WriteString(x)
		sb.WriteByte('\n')
		// A shell tool's result is JSON in a string.
		var inner any
		if json.Unmarshal([]byte(x), &inner) == nil {
			collectStrings(inner, sb)
		}
	case []any:
		for _, e := range x {
			collectStrings(e, sb)
		}
	case map[string]any:
		for _, e := range x {
			collectStrings(e, sb)
		}
	}
}
