package js

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/policy/jscheck"
)

// corpusArgs are the arguments every corpus snippet is called with.
const corpusArgs = `{
	"text": "Hello, World! Visit https://example.com on 2024-03-15.",
	"items": [{"name": "apple", "price": 1.2, "qty": 3}, {"name": "pear", "price": 0.8, "qty": 5}],
	"n": 7,
	"csv": "a,b\n1,2\n3,4",
	"json": "{\"a\": 1}",
	"date": "2024-03-15T10:00:00Z",
	"email": "ada@example.com",
	"url": "https://api.example.com/v1/users?id=42&q=a%20b"
}`

// readCorpus returns testdata/corpus.txt's snippets by name, in order.
func readCorpus(t *testing.T) (names []string, code map[string]string) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", "corpus.txt"))
	if err != nil {
		t.Fatal(err)
	}
	code = map[string]string{}
	var cur string
	for _, line := range strings.SplitAfter(string(src), "\n") {
		if name, ok := strings.CutPrefix(line, "//// "); ok {
			cur = strings.TrimSpace(name)
			if _, dup := code[cur]; dup {
				t.Fatalf("snippet %q twice", cur)
			}
			names = append(names, cur)
			code[cur] = ""
			continue
		}
		if cur != "" {
			code[cur] += line
		}
	}
	return names, code
}

// TestOrdinaryCorpus runs ordinary tool code through the static check and
// the executor and reports the false-refusal rate, which must be zero:
// every snippet is code that works in this sandbox.
func TestOrdinaryCorpus(t *testing.T) {
	names, code := readCorpus(t)
	if len(names) < 100 {
		t.Fatalf("corpus has %d snippets, want 100 or more", len(names))
	}
	settle(t)
	e := New(Config{})
	refused := 0
	for _, name := range names {
		if err := jscheck.Check(code[name]); err != nil {
			refused++
			t.Errorf("%s: refused by the static check: %v", name, err)
		}
		res, err := e.Execute(context.Background(), &executors.Request{
			Tool: "corpus", Args: json.RawMessage(corpusArgs), JS: &executors.JSCall{Code: code[name]},
		})
		switch {
		case errdefs.CodeOf(err) == errdefs.PolicyDenied:
			// Counted above; the executor runs the same check.
		case err != nil:
			t.Errorf("%s: %v", name, err)
		case res.IsError:
			t.Errorf("%s: tool error %s", name, res.Error)
		}
	}
	rate := float64(refused) / float64(len(names))
	t.Logf("ordinary-JS corpus: %d snippets, %d refused by the static check, false-refusal rate %.1f%%", len(names), refused, 100*rate)
	if refused != 0 {
		t.Errorf("false-refusal rate %.1f%%, want 0", 100*rate)
	}
}
