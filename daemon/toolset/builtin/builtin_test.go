package builtin

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/toolset"
)

// Every built-in toolset: sorted by name, its settings checked (good ones
// pass, bad ones are refused with a message naming the setting), and its
// tools are definitions a person could not write (their kinds are the
// toolset's) with the fixed argument names.
func TestToolsets(t *testing.T) {
	sets := Toolsets()
	names := make([]string, len(sets))
	for i, ts := range sets {
		names[i] = ts.Name
	}
	if !slices.IsSorted(names) {
		t.Fatalf("toolsets not sorted: %v", names)
	}
	cases := map[string]struct {
		good  []string
		bad   map[string]string // settings → part of the message
		tools map[string][]string
	}{
		"fetch": {
			good: []string{`{"allowed_domains":["*"]}`, `{"allowed_domains":["api.example.com","*.example.org"],"max_response_bytes":"64KiB"}`,
				`{"allowed_domains":["*"],"methods":["get","Post","DELETE","options","HEAD","put","patch"]}`},
			bad: map[string]string{`{}`: "allowed_domains is required", `{"allowed_domains":["*.com"]}`: "public suffix",
				`{"allowed_domains":["*"],"max_response_bytes":"1GiB"}`: "max_response_bytes", `{"allowed_domains":["*"],"x":1}`: "unknown field",
				`{"allowed_domains":["*"],"methods":[]}`: "methods: list at least one method (GET and HEAD when left out)", `{"allowed_domains":["*"],"methods":["GET","FETCH"]}`: `methods: unknown method "FETCH"`,
				`{"allowed_domains":["*"],"methods":["CONNECT"]}`: `methods: unknown method "CONNECT"`, `{"allowed_domains":["*"],"methods":["post","POST"]}`: "methods: POST is listed twice",
				`{"allowed_domains":["*"],"methods":"GET"}`: "methods", `{"allowed_domains":["*"],"methods":[" GET"]}`: `unknown method " GET"`},
			tools: map[string][]string{"fetch_url": {"body", "headers", "method", "url"}},
		},
		"sql": {
			good: []string{`{}`, `{"query_timeout":"1s","max_bytes":"1MB"}`},
			bad: map[string]string{`{"query_timeout":"1h"}`: "query_timeout", `{"max_bytes":"1KiB"}`: "max_bytes",
				`{"query_timeout":5}`: "duration", `{"path":"/etc"}`: "unknown field"},
			tools: map[string][]string{"db_sql": {"params", "sql"}, "db_schema": {}},
		},
		"state": {
			good: []string{`{}`, `{"max_keys":10,"max_key_bytes":16,"max_value_bytes":"1KiB"}`},
			bad: map[string]string{`{"max_keys":-1}`: "max_keys", `{"max_keys":1000000}`: "max_keys",
				`{"max_value_bytes":"2MiB"}`: "max_value_bytes", `{"nope":1}`: "unknown field"},
			tools: map[string][]string{"get_state": {"key"}, "set_state": {"key", "value"}, "delete_state": {"key"}, "list_state_keys": {"prefix"}},
		},
	}
	for _, ts := range sets {
		tc, ok := cases[ts.Name]
		if !ok {
			continue // another helper's toolset, tested beside it
		}
		t.Run(ts.Name, func(t *testing.T) {
			for _, g := range tc.good {
				if err := ts.Check(json.RawMessage(g)); err != nil {
					t.Errorf("settings %s: %v", g, err)
				}
				defs, err := ts.Tools(toolset.Worker{Name: "w"}, json.RawMessage(g))
				if err != nil {
					t.Fatalf("tools for %s: %v", g, err)
				}
				if len(defs) != len(tc.tools) {
					t.Fatalf("%d tools, want %d", len(defs), len(tc.tools))
				}
				for _, def := range defs {
					want, ok := tc.tools[def.Name]
					if !ok {
						t.Fatalf("unexpected tool %s", def.Name)
					}
					var schema struct{ Properties map[string]any }
					json.Unmarshal(def.Parameters, &schema)
					var got []string
					for k := range schema.Properties {
						got = append(got, k)
					}
					slices.Sort(got)
					if !slices.Equal(got, want) {
						t.Errorf("%s arguments %v, want %v", def.Name, got, want)
					}
					// Written by hand, the same definition is refused.
					b, _ := json.Marshal(def)
					if _, err := catalog.ParseJSON(b); err == nil || !strings.Contains(err.Error(), "toolset") {
						t.Errorf("%s by hand: %v", def.Name, err)
					}
					if err := catalog.Check(def); err != nil {
						t.Errorf("%s: %v", def.Name, err)
					}
				}
			}
			for b, msg := range tc.bad {
				if err := ts.Check(json.RawMessage(b)); err == nil || !strings.Contains(err.Error(), msg) {
					t.Errorf("settings %s: %v, want an error with %q", b, err, msg)
				}
			}
		})
	}
}
