package fetch

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/daemon/kind"
	kfetch "github.com/toolcage/toolcage/daemon/kind/fetch"
	"github.com/toolcage/toolcage/daemon/toolset"
)

// TestMethods: the methods the settings allow (GET and HEAD unless they
// say more, upper-cased) are the tool block's and what its description
// and schema tell the agent; the schema's default method is GET where
// allowed, else the first allowed.
func TestMethods(t *testing.T) {
	for settings, want := range map[string][]string{
		`{"allowed_domains":["*"]}`:                              {"GET", "HEAD"},
		`{"allowed_domains":["*"],"methods":["get"]}`:            {"GET"},
		`{"allowed_domains":["*"],"methods":["Post","delete"]}`:  {"POST", "DELETE"},
		`{"allowed_domains":["*"],"methods":["OPTIONS","head"]}`: {"OPTIONS", "HEAD"},
	} {
		defs, err := Toolset().Tools(toolset.Worker{Name: "w"}, json.RawMessage(settings))
		if err != nil || len(defs) != 1 {
			t.Fatalf("%s: %v", settings, err)
		}
		def := defs[0]
		if got := def.Spec.(*kfetch.Spec).Methods; !slices.Equal(got, want) {
			t.Errorf("%s: block methods %v, want %v", settings, got, want)
		}
		if !strings.Contains(def.Description, "("+strings.Join(want, ", ")+")") {
			t.Errorf("%s: description %q", settings, def.Description)
		}
		var schema struct {
			Properties map[string]struct {
				Default     string   `json:"default"`
				Enum        []string `json:"enum"`
				Description string   `json:"description"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(def.Parameters, &schema); err != nil {
			t.Fatal(err)
		}
		m := schema.Properties["method"]
		if m.Default != kfetch.DefaultMethod(want) || m.Enum != nil || !strings.HasSuffix(m.Description, strings.Join(want, ", ")) {
			t.Errorf("%s: method schema %+v", settings, m)
		}
		if ps := def.Spec.Validate(kind.Tool{Name: def.Name}); len(ps) != 0 {
			t.Errorf("%s: %v", settings, ps)
		}
	}
	if kfetch.DefaultMethod([]string{"POST", "DELETE"}) != "POST" || kfetch.DefaultMethod([]string{"HEAD", "GET"}) != "GET" {
		t.Error("DefaultMethod")
	}
}
