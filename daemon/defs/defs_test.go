package defs

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/errdefs"
)

// formatSchemas compiles testdata/<format>.schema.json for every format.
func formatSchemas(t testing.TB) map[Format]*jsonschema.Schema {
	t.Helper()
	out := map[Format]*jsonschema.Schema{}
	for _, f := range Formats() {
		path := filepath.Join("testdata", string(f)+".schema.json")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		c := jsonschema.NewCompiler()
		url := "file:///" + string(f) + ".schema.json"
		if err := c.AddResource(url, doc); err != nil {
			t.Fatal(err)
		}
		s, err := c.Compile(url)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out[f] = s
	}
	return out
}

func mustParse(t testing.TB, def string) *catalog.Definition {
	t.Helper()
	d, err := catalog.Parse([]byte(def))
	if err != nil {
		t.Fatalf("%s: %v", def, err)
	}
	return d
}

// testDefs are one tool of each shape that changes the hints.
var testDefs = []struct {
	def  string
	want Annotations
}{
	{`{name: add, description: Add two numbers, kind: js, parameters: {type: object, properties: {a: {type: number}, b: {type: number}}, required: [a, b]}, js: {code: "return args.a + args.b"}}`,
		Annotations{ReadOnlyHint: true}},
	{`{name: secret_js, description: Reads its key, kind: js, secrets: [k], js: {code: "return 1"}}`,
		Annotations{ReadOnlyHint: true}},
	{`{name: fetcher, description: Fetch a page, kind: js, permissions: [network], js: {code: "return 1", allowed_domains: [example.com]}}`,
		Annotations{DestructiveHint: true, OpenWorldHint: true}},
	{`{name: mailer, description: Send mail, kind: js, permissions: [email], js: {code: "return 1"}}`,
		Annotations{OpenWorldHint: true}},
	// A shell command is taken at its worst: the hint cannot know whether
	// the sandbox is on.
	{`{name: dns_lookup, description: Look up DNS, kind: shell, parameters: {type: object, properties: {domain: {type: string}}, required: [domain]}, shell: {command: "echo {{domain}}"}}`,
		Annotations{DestructiveHint: true}},
	{`{name: writer, description: Writes files, kind: shell, permissions: [filesystem], shell: {command: "true"}}`,
		Annotations{DestructiveHint: true}},
	{`{name: weather, description: Forecast, kind: http, http: {method: GET, url: "https://api.example.com/forecast/{{city}}", allowed_domains: [api.example.com]}}`,
		Annotations{ReadOnlyHint: true, OpenWorldHint: true}},
	{`{name: post_note, description: Add a note, kind: http, http: {method: POST, url: "https://api.example.com/notes", body: "{{text}}", allowed_domains: [api.example.com]}}`,
		Annotations{OpenWorldHint: true}},
	{`{name: drop_note, description: Delete a note, kind: http, http: {method: DELETE, url: "https://api.example.com/notes/{{id}}", allowed_domains: [api.example.com]}}`,
		Annotations{DestructiveHint: true, OpenWorldHint: true}},
	{`{name: get_db, description: GET with database, kind: http, permissions: [database], http: {method: GET, url: "https://api.example.com/x", allowed_domains: [api.example.com]}}`,
		Annotations{DestructiveHint: true, OpenWorldHint: true}},
}

func TestAnnotations(t *testing.T) {
	for _, tt := range testDefs {
		d := mustParse(t, tt.def)
		if got := AnnotationsOf(d); got != tt.want {
			t.Errorf("%s: annotations %+v, want %+v", d.Name, got, tt.want)
		}
	}
}

// TestRenderMatchesFormatSchemas checks every format's output against a
// JSON Schema of that format (testdata), and the fields each carries.
func TestRenderMatchesFormatSchemas(t *testing.T) {
	schemas := formatSchemas(t)
	var tools []Tool
	for _, tt := range testDefs {
		tools = append(tools, FromDefinition(mustParse(t, tt.def)))
	}
	for _, f := range Formats() {
		out, err := Render(f, tools)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != len(tools) {
			t.Fatalf("%s: %d entries for %d tools", f, len(out), len(tools))
		}
		for i, raw := range out {
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			if err := schemas[f].Validate(inst); err != nil {
				t.Errorf("%s %s does not match its format: %v\n%s", f, tools[i].Name, err, raw)
			}
			var m map[string]any
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			var name, desc any
			var schema any
			switch f {
			case OpenAI:
				fn := m["function"].(map[string]any)
				name, desc, schema = fn["name"], fn["description"], fn["parameters"]
			case Anthropic:
				name, desc, schema = m["name"], m["description"], m["input_schema"]
			case MCP:
				name, desc, schema = m["name"], m["description"], m["inputSchema"]
				var a struct{ Annotations Annotations }
				if err := json.Unmarshal(raw, &a); err != nil || a.Annotations != testDefs[i].want {
					t.Errorf("mcp %s: annotations %s, want %+v", tools[i].Name, raw, testDefs[i].want)
				}
			}
			if name != tools[i].Name || desc != tools[i].Description {
				t.Errorf("%s: name/description %v/%v, want %s/%s", f, name, desc, tools[i].Name, tools[i].Description)
			}
			var want any
			_ = json.Unmarshal(tools[i].Parameters, &want)
			if gb, wb := mustMarshal(schema), mustMarshal(want); !bytes.Equal(gb, wb) {
				t.Errorf("%s %s: schema %s, want the tool's %s", f, tools[i].Name, gb, wb)
			}
		}
	}
}

// TestSchemasRefuseWrongShapes proves the format schemas can fail: each
// format's output is refused by the other formats' schemas.
func TestSchemasRefuseWrongShapes(t *testing.T) {
	schemas := formatSchemas(t)
	tools := []Tool{FromDefinition(mustParse(t, testDefs[0].def))}
	for _, f := range Formats() {
		out, err := Render(f, tools)
		if err != nil {
			t.Fatal(err)
		}
		inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(out[0]))
		for _, g := range Formats() {
			if g == f {
				continue
			}
			if schemas[g].Validate(inst) == nil {
				t.Errorf("the %s schema accepts %s output %s", g, f, out[0])
			}
		}
	}
}

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]Format{"openai": OpenAI, "Anthropic": Anthropic, " mcp ": MCP} {
		if got, err := ParseFormat(in); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "gemini", "openai,mcp"} {
		if _, err := ParseFormat(in); !errdefs.Is(err, errdefs.InvalidRequest) {
			t.Errorf("ParseFormat(%q): %v, want invalid_request", in, err)
		}
	}
	// The format is checked before the tools: even none is refused.
	if _, err := Render("gemini", nil); !errdefs.Is(err, errdefs.InvalidRequest) {
		t.Errorf("Render in an unknown format: %v, want invalid_request", err)
	}
}

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// FuzzRender: any definition the catalog accepts renders, in every
// format, to JSON its format's schema accepts.
func FuzzRender(f *testing.F) {
	for _, tt := range testDefs {
		f.Add(tt.def)
	}
	f.Add(`{name: a, description: "<&>\u2028", kind: js, parameters: {type: object, properties: {"x y": {type: string, description: "\"q\""}}}, js: {code: "1"}}`)
	schemas := formatSchemas(f)
	f.Fuzz(func(t *testing.T, def string) {
		d, err := catalog.Parse([]byte(def))
		if err != nil {
			return
		}
		tools := []Tool{FromDefinition(d)}
		for _, fm := range Formats() {
			out, err := Render(fm, tools)
			if err != nil {
				t.Fatalf("%s: %v", fm, err)
			}
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(out[0]))
			if err != nil {
				t.Fatalf("%s: not JSON: %v", fm, err)
			}
			if err := schemas[fm].Validate(inst); err != nil {
				t.Fatalf("%s: %v\n%s", fm, err, out[0])
			}
		}
	})
}
