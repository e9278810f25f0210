package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWorkerCheckExamples(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "..", "examples", "workers")
	for file, want := range map[string]string{
		"ops.yaml": "worker ops is valid: 14 tools (dns_lookup, exec, read_file, write_file, edit_file, list_files, glob, search, delete_file, file_info, get_state, set_state, delete_state, list_state_keys), 13 from toolsets; " +
			"workspace ../.. (read-only); approval ask by default; 60 calls/min; timeout 30s; the agent may create tools\n",
		"data.yaml": "worker data is valid: 17 tools (csv_analyzer, word_frequency, median, read_file, write_file, edit_file, list_files, glob, search, delete_file, file_info, db_sql, db_schema, get_state, set_state, delete_state, list_state_keys), 1 from tool files, 14 from toolsets; " +
			"workspace ../../examples/workers/data_files (read-only); 120 calls/min; timeout 10s\n",
		"web.yaml": "worker web is valid: 10 tools (weather, fetch_url, read_file, write_file, edit_file, list_files, glob, search, delete_file, file_info), 9 from toolsets; " +
			"workspace ../../examples/workers/web_notes (writable, protect: ask); approval ask by default; 30 calls/min; timeout 15s; the agent may create tools\n",
	} {
		path := filepath.Join(dir, file)
		r := policyCLI(t, "", "worker", "check", path)
		wantExit(t, r, exitOK)
		if r.out != path+": "+want || r.err != "" {
			t.Errorf("%s:\n%v", file, r)
		}
	}
}

func TestWorkerCheckProblems(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: ops\ntools: [dns_lookup]\nlimits:\n  timeout: soon\napproval: {default: maybe}\ntool_files: [t.yaml]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tool := filepath.Join(dir, "t.yaml")
	if err := os.WriteFile(tool, []byte("name: t\ndescription: x\nkind: js\njs: {code: '1'}\nisolation: vm\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := policyCLI(t, "", "worker", "check", bad)
	wantExit(t, r, exitUsage)
	want := bad + `:4:12: limits.timeout: bad duration "soon": want e.g. "10s"` + "\n" +
		bad + `:5:21: approval.default: unknown approval "maybe" (want preApproved, ask or blocked)` + "\n" +
		tool + `:5:12: tool: isolation: unknown isolation "vm" (want process or docker)` + "\n"
	if r.err != want || r.out != "" {
		t.Errorf("got:\n%v\nwant stderr:\n%s", r, want)
	}

	r = policyCLI(t, "", "worker", "check", "--json", bad)
	wantExit(t, r, exitUsage)
	if r.err != "" {
		t.Errorf("stderr %q", r.err)
	}
	var res struct {
		Valid    bool `json:"valid"`
		Problems []struct {
			File         string
			Line, Column int
			Message      string
		} `json:"problems"`
	}
	if err := json.Unmarshal([]byte(r.out), &res); err != nil {
		t.Fatalf("%v: %s", err, r.out)
	}
	if res.Valid || len(res.Problems) != 3 || res.Problems[2].File != tool || res.Problems[2].Line != 5 || res.Problems[2].Column != 12 ||
		!strings.HasPrefix(res.Problems[0].Message, "limits.timeout: bad duration") {
		t.Errorf("--json: %s", r.out)
	}
}

func TestWorkerCheckJSONValid(t *testing.T) {
	t.Parallel()
	path, _ := filepath.Abs(filepath.Join("..", "..", "examples", "workers", "web.yaml"))
	r := policyCLI(t, "", "--json", "worker", "check", path)
	wantExit(t, r, exitOK)
	var res struct {
		Valid  bool `json:"valid"`
		Worker struct {
			Name    string   `json:"name"`
			Path    string   `json:"path"`
			Secrets []string `json:"secrets"`
		} `json:"worker"`
	}
	if err := json.Unmarshal([]byte(r.out), &res); err != nil {
		t.Fatalf("%v: %s", err, r.out)
	}
	if !res.Valid || res.Worker.Name != "web" || res.Worker.Path != path || len(res.Worker.Secrets) != 1 {
		t.Errorf("--json: %s", r.out)
	}
}

func TestWorkerCheckUsage(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		err  string
	}{
		{[]string{}, "Error: missing the worker FILE\nSee 'toolcage worker check --help'.\n"},
		{[]string{"a.yaml", "b.yaml"}, "Error: want one worker FILE, got 2 arguments: a.yaml b.yaml\n"},
		{[]string{"/nonexistent/w.yaml"}, "Error: /nonexistent/w.yaml: no such file or directory\n"},
	} {
		r := policyCLI(t, "", append([]string{"worker", "check"}, tt.args...)...)
		wantExit(t, r, exitUsage)
		if !strings.HasPrefix(r.err, tt.err) || r.out != "" {
			t.Errorf("%v:\n%v", tt.args, r)
		}
	}
}
