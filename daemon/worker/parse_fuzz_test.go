package worker

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolcage/toolcage/daemon/catalog"
)

// FuzzParse checks the worker parser on arbitrary input: it never panics,
// every error is a *ParseError whose problems all carry a file and a
// position, and whatever it accepts survives a round trip through its JSON
// form (what the store keeps).
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		fullWorker,
		"name: ops\n",
		"name: ops\ntool_files: [tools/*.yaml]\napproval: {tools: {lookup: ask}}\n",
		"name: ops\ntool_files: [tools/bad.yaml]\n",
		"name: &a ops\ndescription: *a\n",
		"name: ops\nlimits: {timeout: 1.5, memory: 1.5KiB, output: 1, requests: 3}\n",
		"name: ops\nrate_limit: {per_minute: 1, burst: 0}\nagent_tools: {create: false}\n",
		"name: ops\ntoolsets: {x: {}}\n",
		"name: ops\n---\nname: b\n",
		"{\"name\": \"ops\", \"tools\": [\"a\"]}",
		"[1, 2]", "null", "", "{}", "name: x\nname: y\n", "name: ops\n\t- x\n", "<<: {name: x}\n",
	} {
		f.Add([]byte(s))
	}
	dir := writeFiles(f, map[string]string{
		"tools/lookup.yaml": lookupTool,
		"tools/bad.yaml":    "name: bad\ndescription: x\nkind: http\nhttp: {method: FETCH}\n",
	})
	path := filepath.Join(dir, "w.yaml")
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := Parse(path, data)
		if err != nil {
			if w != nil {
				t.Fatalf("Parse returned both a worker and %v", err)
			}
			var pe *ParseError
			if !errors.As(err, &pe) || len(pe.Problems) == 0 {
				t.Fatalf("error %T %v is no *ParseError with problems", err, err)
			}
			for _, p := range pe.Problems {
				if p.File == "" || p.Line < 1 || p.Column < 1 || p.Message == "" {
					t.Fatalf("problem without a position or message: %#v", p)
				}
			}
			return
		}
		if !workerNameRE.MatchString(w.Name) {
			t.Fatalf("accepted name %q", w.Name)
		}
		b, err := json.Marshal(w)
		if err != nil {
			t.Fatal(err)
		}
		var back Worker
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("unmarshal %s: %v", b, err)
		}
		if b2, _ := json.Marshal(&back); string(b2) != string(b) {
			t.Fatalf("round trip changed the worker:\n%s\n%s", b, b2)
		}
	})
}

// Every example worker parses, so the README never shows one that
// 'toolcage worker check' refuses.
func TestExampleWorkers(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "workers", "*.yaml"))
	if err != nil || len(files) < 3 {
		t.Fatalf("examples: %v (%d files)", err, len(files))
	}
	byName := map[string]*Worker{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		w, err := Parse(f, data)
		if err != nil {
			t.Errorf("%s:\n%v", f, err)
			continue
		}
		byName[w.Name] = w
		for _, lt := range w.LocalTools {
			if _, err := catalog.Compile(&catalog.Tool{Def: lt.Def}); err != nil {
				t.Errorf("%s: %v", lt.File, err)
			}
		}
	}
	// What the issue asks of each example.
	for _, tt := range []struct {
		worker, tool, approval string
	}{
		{"ops", "dns_lookup", "preApproved"},
		{"data", "csv_analyzer", "preApproved"},
		{"data", "word_frequency", "preApproved"},
		{"data", "median", "preApproved"},
		{"web", "weather", "preApproved"},
	} {
		w := byName[tt.worker]
		if w == nil {
			t.Errorf("no example worker %q", tt.worker)
			continue
		}
		if !w.HasTool(tt.tool) {
			t.Errorf("worker %s lacks %s", tt.worker, tt.tool)
		}
		if got := w.ToolApproval(tt.tool, "", "user"); got != tt.approval {
			t.Errorf("worker %s: %s is %s, want %s", tt.worker, tt.tool, got, tt.approval)
		}
	}
	if w := byName["ops"]; w != nil && w.Approval.Default != "ask" {
		t.Errorf("ops default approval %q, want ask", w.Approval.Default)
	}
	if w := byName["web"]; w != nil && (len(w.Secrets) != 1 || w.Secrets[0] != "weather_api_key") {
		t.Errorf("web secrets %v", w.Secrets)
	}
}
