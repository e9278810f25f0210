package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
)

func definitions(c *api.Client, query string) (api.ToolDefinitions, error) {
	var out api.ToolDefinitions
	err := c.Do(context.Background(), "GET", "/v1/tools/definitions?"+query, nil, &out)
	return out, err
}

// defNames lists the exported tools' names, whatever the format.
func defNames(t *testing.T, d api.ToolDefinitions) []string {
	t.Helper()
	var names []string
	for _, raw := range d.Tools {
		var v struct {
			Name     string `json:"name"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		names = append(names, v.Name+v.Function.Name)
	}
	slices.Sort(names)
	return names
}

// TestToolDefinitions exports through a real daemon: the catalog's active
// tools for a person, a worker's for its agent (and for a person who names
// it), each format matching its schema (daemon/defs/testdata), and the
// refusals.
func TestToolDefinitions(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	create(t, c, jsTool) // adder
	create(t, c, `{"name":"weather","description":"Forecast","kind":"http","http":{"method":"GET","url":"https://api.example.com/f/{{city}}","allowed_domains":["api.example.com"]}}`)
	create(t, c, `{"name":"off","description":"d","kind":"js","js":{"code":"return 1"}}`)
	if err := c.Do(context.Background(), "POST", "/v1/tools/off/disable", nil, nil); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "exp.yaml")
	writeFile(t, path, "name: exp\ntools: [weather, off]\ntool_files: [tools/*.yaml]\n")
	writeFile(t, filepath.Join(dir, "tools", "local_sum.yaml"), localSum)
	added, err := addWorker(c, path)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "other.yaml"), "name: other\n")
	if _, err := addWorker(c, filepath.Join(dir, "other.yaml")); err != nil {
		t.Fatal(err)
	}
	agent := *c
	agent.Token = added.Token

	schemas := map[string]*jsonschema.Schema{}
	for _, f := range []string{"openai", "anthropic", "mcp"} {
		b, err := os.ReadFile(filepath.Join("defs", "testdata", f+".schema.json"))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		jc := jsonschema.NewCompiler()
		if err := jc.AddResource("file:///"+f+".json", doc); err != nil {
			t.Fatal(err)
		}
		if schemas[f], err = jc.Compile("file:///" + f + ".json"); err != nil {
			t.Fatal(err)
		}
	}

	cases := []struct {
		name   string
		client *api.Client
		query  string
		worker string
		want   []string
	}{
		{"person, catalog", c, "", "", []string{"adder", "weather"}},
		{"person names the worker", c, "worker=exp", "exp", []string{"local_sum", "weather"}},
		{"agent, its own worker", &agent, "", "exp", []string{"local_sum", "weather"}},
		{"agent names its own worker", &agent, "worker=exp", "exp", []string{"local_sum", "weather"}},
		{"person narrowed by header", asWorker(c, "exp"), "", "exp", []string{"local_sum", "weather"}},
	}
	for _, tt := range cases {
		for f, schema := range schemas {
			t.Run(tt.name+"/"+f, func(t *testing.T) {
				q := "format=" + f
				if tt.query != "" {
					q += "&" + tt.query
				}
				got, err := definitions(tt.client, q)
				if err != nil {
					t.Fatal(err)
				}
				if got.Format != f || got.Worker != tt.worker || !slices.Equal(defNames(t, got), tt.want) {
					t.Fatalf("got format %q worker %q tools %v, want %s %q %v", got.Format, got.Worker, defNames(t, got), f, tt.worker, tt.want)
				}
				for _, raw := range got.Tools {
					inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
					if err != nil {
						t.Fatal(err)
					}
					if err := schema.Validate(inst); err != nil {
						t.Errorf("%s: %v", raw, err)
					}
				}
			})
		}
	}

	// The http GET tool is read-only and open-world in MCP's hints.
	got, err := definitions(c, "format=mcp")
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range got.Tools {
		var v struct {
			Name        string
			Annotations map[string]bool
		}
		_ = json.Unmarshal(raw, &v)
		if v.Name == "weather" && (!v.Annotations["readOnlyHint"] || !v.Annotations["openWorldHint"] || v.Annotations["destructiveHint"]) {
			t.Errorf("weather annotations: %s", raw)
		}
	}

	refusals := []struct {
		name   string
		client *api.Client
		query  string
		code   errdefs.Code
	}{
		{"no format", c, "", errdefs.InvalidRequest},
		{"unknown format", c, "format=gemini", errdefs.InvalidRequest},
		{"unknown worker", c, "format=mcp&worker=ghost", errdefs.NotFound},
		{"agent names another worker", &agent, "format=mcp&worker=other", errdefs.NotFound},
		{"narrowed person names another worker", asWorker(c, "exp"), "format=mcp&worker=other", errdefs.NotFound},
	}
	for _, tt := range refusals {
		if _, err := definitions(tt.client, tt.query); codeOf(err) != tt.code {
			t.Errorf("%s: %v, want %s", tt.name, err, tt.code)
		}
	}

	// "definitions" is the route's: no tool may take the name.
	var tool api.Tool
	err = c.Do(context.Background(), "POST", "/v1/tools", []byte(`{"name":"definitions","description":"d","kind":"js","js":{"code":"return 1"}}`), &tool)
	if codeOf(err) != errdefs.InvalidDefinition {
		t.Errorf("a tool named definitions: %v", err)
	}
}
