package worker

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/toolset"
)

// writeFiles writes name → content under a new temp dir and returns it.
func writeFiles(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const lookupTool = `name: lookup
description: Look something up
kind: js
js: {code: "return 1"}
`

const askTool = `name: asker
description: Asks first
kind: js
approval: ask
js: {code: "return 2"}
`

const fullWorker = `name: ops
description: Tools for the on-call agent
profile: coding
tools: [dns_lookup, weather]
tool_files: [./tools/*.yaml]
secrets: [weather_api_key]
approval: {default: ask, tools: {dns_lookup: preApproved, asker: blocked}}
limits: {timeout: 30s, memory: 128MiB, output: 1MB, requests: 5}
rate_limit: {per_minute: 60, burst: 10}
agent_tools: {create: true}
toolsets: {}
`

func TestParseFull(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"ops.yaml":          fullWorker,
		"tools/lookup.yaml": lookupTool,
		"tools/asker.yaml":  askTool,
		"tools/README.md":   "not matched",
	})
	path := filepath.Join(dir, "ops.yaml")
	data, _ := os.ReadFile(path)
	w, err := Parse(path, data)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	want := &Worker{
		Path:        path,
		Name:        "ops",
		Description: "Tools for the on-call agent",
		Profile:     "coding",
		Tools:       []string{"dns_lookup", "weather"},
		ToolFiles:   []string{"./tools/*.yaml"},
		Secrets:     []string{"weather_api_key"},
		Approval:    Approval{Default: "ask", Tools: map[string]string{"dns_lookup": "preApproved", "asker": "blocked"}},
		Limits:      Limits{Timeout: catalog.Duration(30 * time.Second), Memory: 128 << 20, Output: 1000000, Requests: 5},
		RateLimit:   &RateLimit{PerMinute: 60, Burst: 10},
		AgentTools:  AgentTools{Create: true},
		Toolsets:    map[string]json.RawMessage{},
	}
	locals := w.LocalTools
	w.LocalTools = nil
	if !reflect.DeepEqual(w, want) {
		t.Errorf("Parse =\n%+v\nwant\n%+v", w, want)
	}
	if len(locals) != 2 {
		t.Fatalf("local tools: %d, want 2", len(locals))
	}
	// Glob order: asker.yaml, lookup.yaml.
	if l := locals[0]; l.Def.Name != "asker" || l.WrittenApproval != "ask" || l.File != filepath.Join(dir, "tools", "asker.yaml") {
		t.Errorf("local tool 0: %+v", l)
	}
	if l := locals[1]; l.Def.Name != "lookup" || l.WrittenApproval != "" || l.Def.Approval != catalog.ApprovalPreApproved {
		t.Errorf("local tool 1 = %s written %q approval %q", l.Def.Name, l.WrittenApproval, l.Def.Approval)
	}
	w.LocalTools = locals
	for _, tt := range []struct{ tool, by, want string }{
		{"dns_lookup", catalog.CreatedByUser, "preApproved"},
		{"weather", catalog.CreatedByUser, "ask"},
		{"lookup", catalog.CreatedByUser, "ask"},
		{"asker", catalog.CreatedByUser, "blocked"},
	} {
		written := ""
		if lt := w.LocalTool(tt.tool); lt != nil {
			written = lt.WrittenApproval
		}
		if got := w.ToolApproval(tt.tool, written, tt.by); got != tt.want {
			t.Errorf("ToolApproval(%s) = %s, want %s", tt.tool, got, tt.want)
		}
	}
	if got := w.RateLimit.Bucket(); got.Rate != 1 || got.Burst != 10 {
		t.Errorf("Bucket = %+v", got)
	}

	// The JSON form (what the store keeps) reads back to the same worker.
	b, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	var back Worker
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("unmarshal %s: %v", b, err)
	}
	b2, _ := json.Marshal(&back)
	if string(b) != string(b2) {
		t.Errorf("JSON round trip changed the worker:\n%s\n%s", b, b2)
	}
}

func TestParseMinimal(t *testing.T) {
	dir := t.TempDir()
	w, err := Parse(filepath.Join(dir, "w.yaml"), []byte("name: a-b_c9\n"))
	if err != nil {
		t.Fatal(err)
	}
	if w.Name != "a-b_c9" || w.RateLimit != nil || w.Approval.Default != "" || len(w.Tools) != 0 {
		t.Errorf("minimal worker: %+v", w)
	}
	// Keys with nothing after them count as not written.
	if _, err := Parse(filepath.Join(dir, "w.yaml"), []byte("name: x\napproval:\nlimits:\ntoolsets:\n")); err != nil {
		t.Errorf("empty values: %v", err)
	}
}

// TestParseErrors checks that every problem names file:line:col and says
// what is wrong. Each want is line:col: and a part of the message.
func TestParseErrors(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"tools/good.yaml":  lookupTool,
		"tools/good2.yaml": strings.Replace(lookupTool, "return 1", "return 3", 1),
		"tools/bad.yaml":   "name: bad\ndescription: Bad\nkind: http\nhttp:\n  method: FETCH\n  url: https://example.com/\n  allowed_domains: [example.com]\n",
		"tools/typo.yaml":  "name: typo\ndescription: x\nkind: js\njs:\n  code: '1'\n  cod: '2'\n",
		"tools/syn.yaml":   "name: syn\n  description: [\n",
		"tools/lim.yaml":   "name: lim\ndescription: x\nkind: js\njs: {code: '1'}\nlimits:\n  timeout: forever\n",
		"tools/sub":        "",
	})
	tests := []struct {
		name string
		yaml string
		want []string // "line:col: message part", in order
	}{
		{"empty file", "", []string{"1:1: YAML: file is empty"}},
		{"only a comment", "# nothing\n", []string{"1:1: YAML: file is empty"}},
		{"syntax error", "name: ops\ntools: [a, b\n", []string{"1:1: YAML: did not find expected ',' or ']'"}},
		{"bad indentation", "name: ops\n  tools: x\n", []string{"2:1: YAML: mapping values are not allowed"}},
		{"tab", "name: ops\n\ttools: []\n", []string{"2:1: YAML: found a tab character that violates indentation"}},
		{"not a mapping", "- a\n- b\n", []string{"1:1: want a mapping of worker settings"}},
		{"two documents", "name: a\n---\nname: b\n", []string{"2:1: more than one YAML document"}},
		{"missing name", "description: x\n", []string{"1:1: name: is required"}},
		{"null name", "name:\n", []string{"1:1: name: is required"}},
		{"bad name", "name: Ops\n", []string{`1:7: name: "Ops" must match`}},
		{"name starting with a digit", "name: 1ops\n", []string{`1:7: name: "1ops" must match`}},
		{"number name", "name: 12\n", []string{"1:7: name: want a string, got the number 12"}},
		{"long name", "name: " + strings.Repeat("a", 65) + "\n", []string{"1:7: name: is longer than 64"}},
		{"unknown key", "name: ops\ntool: [a]\n", []string{"2:1: tool: unknown field (known: agent_tools, approval, description, limits, mounts, name, profile, protect, rate_limit, readonly, secrets, tool_files, tools, toolsets, workspace)"}},
		{"unknown nested key", "name: ops\nlimits: {timeout: 1s, cpu: 2}\n", []string{"2:23: limits.cpu: unknown field (known: memory, output, requests, timeout)"}},
		{"key twice", "name: ops\nname: ops2\n", []string{"2:1: name: given twice"}},
		{"anchor", "name: &n ops\ndescription: *n\n", []string{"1:7: anchors and aliases are not supported", "2:14: anchors and aliases are not supported"}},
		{"merge key", "name: ops\nlimits:\n  <<: {timeout: 1s}\n", []string{"3:3: merge keys (<<) are not supported"}},
		{"non-string key", "name: ops\n[a]: b\n", []string{"2:1: mapping keys must be strings"}},
		{"tools not a list", "name: ops\ntools: dns_lookup\n", []string{`2:8: tools: want a list of names, got the string "dns_lookup"`}},
		{"bad tool name", "name: ops\ntools: [dns_lookup, Weather, a-b]\n", []string{`2:21: tools: "Weather" is not a valid name`, `2:30: tools: "a-b" is not a valid name`}},
		{"tool twice", "name: ops\ntools:\n  - a\n  - b\n  - a\n", []string{`5:5: tools: "a" is listed twice`}},
		{"secret not a string", "name: ops\nsecrets: [{a: b}]\n", []string{"2:11: secrets: want a string, got a mapping"}},
		{"bad approval", "name: ops\napproval: {default: sometimes}\n", []string{`2:21: approval.default: unknown approval "sometimes" (want preApproved, ask or blocked)`}},
		{"approval case", "name: ops\ntools: [a]\napproval:\n  tools: {a: PreApproved}\n", []string{`4:14: approval.tools.a: unknown approval "PreApproved"`}},
		{"approval not a mapping", "name: ops\napproval: ask\n", []string{`2:11: approval: want a mapping, got the string "ask"`}},
		{"approval for a tool the worker lacks", "name: ops\ntools: [a]\napproval: {tools: {b: ask}}\n", []string{`3:20: approval.tools: "b" is not one of this worker's tools`}},
		{"bad tool name in approval.tools", "name: ops\napproval: {tools: {Bad: ask}}\n", []string{`2:20: approval.tools: "Bad" is not a valid tool name`}},
		{"approval.tools not a mapping", "name: ops\napproval: {tools: [a]}\n", []string{"2:19: approval.tools: want a mapping of tool name to approval, got a list"}},
		{"bad timeout", "name: ops\nlimits: {timeout: soon}\n", []string{`2:19: limits.timeout: bad duration "soon"`}},
		{"negative timeout", "name: ops\nlimits: {timeout: -1s}\n", []string{"2:19: limits.timeout: must be positive"}},
		{"long timeout", "name: ops\nlimits: {timeout: 25h}\n", []string{"2:19: limits.timeout: is longer than 24h"}},
		{"bad size", "name: ops\nlimits:\n  memory: 128 potatoes\n", []string{`3:11: limits.memory: bad size "128 potatoes"`}},
		{"size list", "name: ops\nlimits: {memory: [1]}\n", []string{"2:18: limits.memory: want a value such as"}},
		{"zero size", "name: ops\nlimits: {output: 0}\n", []string{"2:18: limits.output: must be positive"}},
		{"requests float", "name: ops\nlimits: {requests: 1.5}\n", []string{"2:20: limits.requests: want a whole number, got the number 1.5"}},
		{"rate limit zero", "name: ops\nrate_limit: {per_minute: 0}\n", []string{"2:26: rate_limit.per_minute: must be at least 1"}},
		{"rate limit missing", "name: ops\nrate_limit: {burst: 3}\n", []string{"2:13: rate_limit.per_minute: is required"}},
		{"rate limit negative", "name: ops\nrate_limit: {per_minute: -5}\n", []string{"2:26: rate_limit.per_minute: -5 is out of range"}},
		{"rate limit huge", "name: ops\nrate_limit: {per_minute: 99999999999999999999}\n", []string{"2:26: rate_limit.per_minute: want a whole number, got the number 99999999999999999999"}},
		{"agent_tools not bool", "name: ops\nagent_tools: {create: yes}\n", []string{`2:23: agent_tools.create: want true or false, got the string "yes"`}},
		{"unknown toolset", "name: ops\ntoolsets: {nope: {}}\n", []string{`2:12: toolsets: unknown toolset "nope" (known: `}},
		{"filesystem without a workspace", "name: ops\ntoolsets: {filesystem: {}}\n", []string{`2:11: toolsets.filesystem: the filesystem toolset works on the worker's workspace; add workspace: to the worker file`}},
		{"filesystem bad setting", "name: ops\ntoolsets: {filesystem: {max_matches: -1}}\n", []string{`2:24: toolsets.filesystem: max_matches: want 1 to 10000`}},
		{"exec bad rule", "name: ops\ntoolsets: {exec: {rules: [{pattern: 'git status', approval: always}]}}\n", []string{`2:18: toolsets.exec: rules[0].approval: "always" is not preApproved, ask or blocked`}},
		{"fetch unknown method", "name: ops\ntoolsets:\n  fetch:\n    allowed_domains: [api.example.com]\n    methods: [GET, FETCH]\n", []string{`4:5: toolsets.fetch: methods: unknown method "FETCH" (want GET, HEAD, OPTIONS, POST, PUT, PATCH, DELETE)`}},
		{"fetch method twice", "name: ops\ntoolsets: {fetch: {allowed_domains: ['*'], methods: [get, GET]}}\n", []string{`2:19: toolsets.fetch: methods: GET is listed twice`}},
		{"fetch no methods", "name: ops\ntoolsets: {fetch: {allowed_domains: ['*'], methods: []}}\n", []string{`2:19: toolsets.fetch: methods: list at least one method`}},
		{"meta_tools not bool", "name: ops\nagent_tools: {meta_tools: 1}\n", []string{`2:27: agent_tools.meta_tools: want true or false`}},
		{"approval for a meta-tool the worker does not offer", "name: ops\napproval: {tools: {get_tool: blocked}}\n", []string{`2:20: approval.tools: "get_tool" is not one of this worker's tools`}},
		{"toolsets list", "name: ops\ntoolsets: [filesystem]\n", []string{"2:11: toolsets: want a mapping"}},
		{"profile empty", "name: ops\nprofile: ''\n", []string{"2:10: profile: is empty"}},
		{"tool_files absolute", "name: ops\ntool_files: [/etc/*.yaml]\n", []string{`2:14: tool_files: "/etc/*.yaml" is absolute`}},
		{"tool_files up", "name: ops\ntool_files: [../*.yaml]\n", []string{`2:14: tool_files: "../*.yaml" leaves the worker file's directory`}},
		{"tool_files up after down", "name: ops\ntool_files: ['tools/../../x/*.yaml']\n", []string{`2:14: tool_files: "tools/../../x/*.yaml" leaves`}},
		{"tool_files no match", "name: ops\ntool_files: [./nothing/*.yaml]\n", []string{`2:14: tool_files: "./nothing/*.yaml" matches no file`}},
		{"tool_files bad pattern", "name: ops\ntool_files: ['tools/[.yaml']\n", []string{`2:14: tool_files: bad pattern`}},
		{"tool_files directory", "name: ops\ntool_files: [tools]\n", []string{"2:14: tool_files: " + filepath.Join(dir, "tools") + " is not a regular file"}},
		{"tool file defines a listed tool", "name: ops\ntools: [lookup]\ntool_files: [tools/good.yaml]\n", []string{`3:13: tool_files: ` + filepath.Join(dir, "tools", "good.yaml") + ` defines tool "lookup", which tools also names`}},
		{"tool defined twice", "name: ops\ntool_files:\n  - tools/good.yaml\n  - tools/good2.yaml\n", []string{`4:5: tool_files: tool "lookup" is defined twice`}},
		{"several problems in order", "name: Ops\nlimits: {timeout: x}\nrate_limit: {per_minute: 0}\n", []string{"1:7: name:", "2:19: limits.timeout:", "3:26: rate_limit.per_minute:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErrors(t, dir, tt.yaml, "w.yaml", tt.want)
		})
	}

	// Problems in tool files are placed in the tool file.
	toolTests := []struct {
		name, pattern, file string
		want                []string
	}{
		{"catalog validation", "tools/bad.yaml", "bad.yaml", []string{`5:11: tool: http.method: unknown method "FETCH"`}},
		{"unknown field in a tool", "tools/typo.yaml", "typo.yaml", []string{`6:3: tool: bad definition: unknown field "cod"`}},
		{"syntax error in a tool", "tools/syn.yaml", "syn.yaml", []string{"2:1: YAML: mapping values are not allowed"}},
		{"bad limit in a tool", "tools/lim.yaml", "lim.yaml", []string{`6:12: tool: bad definition: bad duration "forever"`}},
	}
	for _, tt := range toolTests {
		t.Run(tt.name, func(t *testing.T) {
			checkErrors(t, dir, "name: ops\ntool_files: ["+tt.pattern+"]\n", filepath.Join("tools", tt.file), tt.want)
		})
	}
}

// checkErrors parses content as dir/w.yaml and wants the problems, each
// "line:col: message part", in file (relative to dir).
func checkErrors(t *testing.T, dir, content, file string, want []string) {
	t.Helper()
	w, err := Parse(filepath.Join(dir, "w.yaml"), []byte(content))
	if err == nil {
		t.Fatalf("Parse accepted it: %+v", w)
	}
	if w != nil {
		t.Errorf("Parse returned a worker with its error")
	}
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error %T %v, want *ParseError", err, err)
	}
	if len(pe.Problems) != len(want) {
		t.Fatalf("%d problems, want %d:\n%v", len(pe.Problems), len(want), err)
	}
	for i, p := range pe.Problems {
		prefix := filepath.Join(dir, file) + ":" + want[i]
		if !strings.HasPrefix(p.Error(), prefix) {
			t.Errorf("problem %d:\n got %s\nwant %s…", i, p.Error(), prefix)
		}
	}
	if got := strings.Count(err.Error(), "\n") + 1; got != len(want) {
		t.Errorf("Error() has %d lines, want %d", got, len(want))
	}
}

// A registry with toolsets: names, settings and their checks.
func TestParseToolsets(t *testing.T) {
	reg := []Toolset{
		{Name: "fetch", Description: "HTTP GET"},
		{Name: "filesystem", Description: "files", Check: func(s json.RawMessage) error {
			var c struct {
				Root string `json:"root"`
			}
			if err := json.Unmarshal(s, &c); err != nil || c.Root == "" {
				return fmt.Errorf("root is required")
			}
			return nil
		}},
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "w.yaml")
	w, err := parse(path, []byte("name: a\ntoolsets:\n  fetch:\n  filesystem: {root: ./data}\n"), reg)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(w.Toolsets["fetch"]); got != "{}" {
		t.Errorf("fetch settings %s", got)
	}
	if got := string(w.Toolsets["filesystem"]); got != `{"root":"./data"}` {
		t.Errorf("filesystem settings %s", got)
	}
	for _, tt := range []struct{ yaml, want string }{
		{"name: a\ntoolsets: {sql: {}}\n", `2:12: toolsets: unknown toolset "sql" (known: fetch, filesystem)`},
		{"name: a\ntoolsets: {fetch: {x: 1}}\n", "2:19: toolsets.fetch: takes no settings"},
		{"name: a\ntoolsets: {fetch: true}\n", "2:19: toolsets.fetch: want a mapping of settings, got the boolean true"},
		{"name: a\ntoolsets:\n  filesystem: {}\n", "3:15: toolsets.filesystem: root is required"},
		{"name: a\ntoolsets: {fetch: {}, fetch: {}}\n", "2:23: toolsets.fetch: given twice"},
	} {
		_, err := parse(path, []byte(tt.yaml), reg)
		if err == nil || !strings.HasPrefix(err.Error(), path+":"+tt.want) {
			t.Errorf("%q: got %v, want %s", tt.yaml, err, tt.want)
		}
	}
}

func TestParseToolFileItself(t *testing.T) {
	// A pattern matching the worker file skips it: it is no tool.
	dir := writeFiles(t, map[string]string{"w.yaml": "name: ops\ntool_files: ['*.yaml']\n", "lookup.yaml": lookupTool})
	path := filepath.Join(dir, "w.yaml")
	data, _ := os.ReadFile(path)
	w, err := Parse(path, data)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.LocalTools) != 1 || w.LocalTools[0].Def.Name != "lookup" {
		t.Errorf("local tools %+v", w.LocalTools)
	}
	// A relative path is made absolute.
	t.Chdir(dir)
	w, err = Parse("w.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	if w.Path != path {
		t.Errorf("Path %q, want %q", w.Path, path)
	}
}

func TestParseTooLarge(t *testing.T) {
	data := []byte("name: ops\ndescription: " + strings.Repeat("x", MaxFileBytes) + "\n")
	_, err := Parse(filepath.Join(t.TempDir(), "w.yaml"), data)
	if err == nil || !strings.Contains(err.Error(), ":1:1: file is larger than") {
		t.Errorf("got %v", err)
	}
}

func TestCapLimits(t *testing.T) {
	s := func(d time.Duration) catalog.Duration { return catalog.Duration(d) }
	tests := []struct{ tool, worker, want Limits }{
		{Limits{}, Limits{}, Limits{}},
		{Limits{Timeout: s(10 * time.Second)}, Limits{}, Limits{Timeout: s(10 * time.Second)}},
		{Limits{}, Limits{Timeout: s(30 * time.Second), Memory: 1 << 20}, Limits{Timeout: s(30 * time.Second), Memory: 1 << 20}},
		{Limits{Timeout: s(60 * time.Second), Memory: 1 << 10, Output: 5, Requests: 9}, Limits{Timeout: s(30 * time.Second), Memory: 1 << 20, Output: 3, Requests: 10},
			Limits{Timeout: s(30 * time.Second), Memory: 1 << 10, Output: 3, Requests: 9}},
	}
	for _, tt := range tests {
		if got := CapLimits(tt.tool, tt.worker); got != tt.want {
			t.Errorf("CapLimits(%+v, %+v) = %+v, want %+v", tt.tool, tt.worker, got, tt.want)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := writeFiles(t, map[string]string{"w.yaml": "name: ops\n", "big.yaml": "name: ops\n# " + strings.Repeat("x", MaxFileBytes) + "\n"})
	if w, err := Load(filepath.Join(dir, "w.yaml")); err != nil || w.Name != "ops" {
		t.Errorf("Load = %+v, %v", w, err)
	}
	if _, err := Load(filepath.Join(dir, "none.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	var pathErr *os.PathError
	if _, err := Load(filepath.Join(dir, "big.yaml")); !errors.As(err, &pathErr) || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("big file: %v", err)
	}
}

func BenchmarkParse(b *testing.B) {
	path := filepath.Join("..", "..", "examples", "workers", "data.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Parse(path, data); err != nil {
			b.Fatal(err)
		}
	}
}

// A toolset's tools join the worker's own, marked with their toolset, and
// follow its approval rules; a name given twice is refused.
func TestParseToolsetTools(t *testing.T) {
	def := func(name, approval string) *catalog.Definition {
		src := `{"name":"` + name + `","description":"d","kind":"js","js":{"code":"return 1"}`
		if approval != "" {
			src += `,"approval":"` + approval + `"`
		}
		d, err := catalog.ParseJSON([]byte(src + "}"))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	var told toolset.Worker
	reg := []Toolset{{Name: "notes", Tools: func(w toolset.Worker, _ json.RawMessage) ([]*catalog.Definition, error) {
		told = w
		return []*catalog.Definition{def("read_note", ""), def("write_note", "ask")}, nil
	}}}
	path := filepath.Join(t.TempDir(), "w.yaml")
	w, err := parse(path, []byte("name: a\napproval: {default: preApproved}\ntoolsets: {notes: {}}\n"), reg)
	if err != nil {
		t.Fatal(err)
	}
	if told.Name != "a" {
		t.Errorf("toolset told worker %+v", told)
	}
	got := w.EffectiveTools(func(string) (CatalogTool, bool) { return CatalogTool{}, false })
	want := []EffectiveTool{
		{Name: "read_note", Source: "toolset:notes", Approval: "preApproved"},
		{Name: "write_note", Source: "toolset:notes", Approval: "ask"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("effective tools %+v, want %+v", got, want)
	}
	for _, tt := range []struct{ yaml, want string }{
		{"name: a\ntools: [read_note]\ntoolsets: {notes: {}}\n", `3:11: toolsets.notes: tool "read_note" is also named under tools`},
		{"name: a\ntoolsets: {notes: {}, twice: {}}\n", `2:11: toolsets.twice: tool "read_note" is also defined by toolset:notes`},
		{"name: a\ntoolsets: {broken: {}}\n", `2:11: toolsets.broken: no tools today`},
	} {
		reg := append(reg, Toolset{Name: "twice", Tools: reg[0].Tools},
			Toolset{Name: "broken", Tools: func(toolset.Worker, json.RawMessage) ([]*catalog.Definition, error) {
				return nil, errors.New("no tools today")
			}})
		_, err := parse(path, []byte(tt.yaml), reg)
		if err == nil || !strings.HasPrefix(err.Error(), path+":"+tt.want) {
			t.Errorf("%q: got %v, want %s", tt.yaml, err, tt.want)
		}
	}
}
