package builtin

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/daemon/kind"
	"github.com/toolcage/toolcage/toolspec"
)

// Every registered kind meets the same contract.
func TestKindsConformance(t *testing.T) {
	names := Kinds().Names()
	if got := Kinds().String(); got != "js, shell or http" {
		t.Errorf("String() = %q: toolset-only kinds are not offered", got)
	}
	toolsetOnly := map[toolspec.Kind]bool{"fs": true, "exec": true, "fetch": true, "sql": true, "state": true, "meta": true}
	if len(names) != 3+len(toolsetOnly) {
		t.Fatalf("kinds %v, want js, shell, http and the toolsets' own", names)
	}
	for _, n := range names {
		if only := Kinds().ToolsetOnly(n); only != toolsetOnly[n] {
			t.Errorf("ToolsetOnly(%s) = %v", n, only)
		}
	}
	if Kinds().ExecutorKind("exec") != toolspec.Shell || Kinds().ExecutorKind("fs") != toolspec.FS || Kinds().ExecutorKind("fetch") != toolspec.HTTP {
		t.Error("exec runs on the shell executor, fetch on http's, fs on its own")
	}
	for _, n := range names {
		k, ok := Kinds().Get(n)
		if !ok || k.Name() != n {
			t.Fatalf("Get(%q) = %v, %v", n, k, ok)
		}
		t.Run(string(n), func(t *testing.T) {
			_, toolsetOnly := k.(kind.ToolsetOnly)
			if !Kinds().ExecutorKind(n).Valid() && !toolsetOnly {
				t.Errorf("kind %q runs on no executor kind and is not a toolset's", n)
			}
			if p := k.Required(); p.Message == "" || !strings.HasPrefix(p.Field, string(n)) {
				t.Errorf("Required() = %+v: want a problem on the %s block", p, n)
			}
			if _, err := k.Decode(json.RawMessage(`{"no_such_field": 1}`)); err == nil || !strings.Contains(err.Error(), `unknown field "no_such_field"`) {
				t.Errorf("unknown field: %v", err)
			}
			if _, err := k.Decode(json.RawMessage(`{} {}`)); err == nil {
				t.Error("trailing data accepted")
			}
			if _, err := k.Decode(json.RawMessage(`[1]`)); err == nil {
				t.Error("an array accepted as a block")
			}
			empty, err := k.Decode(json.RawMessage(`{}`))
			if err != nil {
				t.Fatalf("empty block: %v", err)
			}
			empty.Normalize()
			ps := empty.Validate(kind.Tool{Name: "x"})
			if len(ps) == 0 && !optionalBlock[n] {
				t.Fatal("an empty block passes Validate")
			}
			for _, p := range ps {
				if !strings.HasPrefix(p.Field, string(n)+".") || p.Message == "" {
					t.Errorf("problem %+v is not on a field of the %s block", p, n)
				}
			}
			good := goodBlocks[n]
			if good == "" {
				t.Fatalf("no good block for %s in this test", n)
			}
			s, err := k.Decode(json.RawMessage(good))
			if err != nil {
				t.Fatal(err)
			}
			s.Normalize()
			tool := kind.Tool{Name: "x", Permissions: []string{"network"}}
			if ps := s.Validate(tool); len(ps) != 0 {
				t.Fatalf("good block: %+v", ps)
			}
			if err := s.Check(tool); err != nil {
				t.Fatalf("good block: %v", err)
			}
			if _, err := s.Compile(tool); err != nil {
				t.Fatalf("good block: %v", err)
			}
			// The block survives a round trip through JSON, as the store keeps it.
			b1, _ := json.Marshal(s)
			s2, err := k.Decode(b1)
			if err != nil {
				t.Fatalf("decode %s: %v", b1, err)
			}
			if b2, _ := json.Marshal(s2); !bytes.Equal(b1, b2) {
				t.Errorf("round trip: %s vs %s", b1, b2)
			}
		})
	}
}

// optionalBlock are kinds whose every field may be left out.
var optionalBlock = map[toolspec.Kind]bool{"exec": true}

var goodBlocks = map[toolspec.Kind]string{
	"fs":    `{"op": "read_file", "readonly": true, "max_read_bytes": 100}`,
	"exec":  `{"rules": [{"pattern": "git status", "approval": "preApproved"}], "dir": "/workspace"}`,
	"js":    `{"code": "return 1", "allowed_domains": ["api.example.com"]}`,
	"shell": `{"command": "echo {{.x}}", "env": {"A": "{{.x}}"}, "dir": "/tmp"}`,
	"http":  `{"method": "get", "url": "https://api.example.com/{{x}}", "allowed_domains": ["api.example.com"], "max_response_bytes": "1KiB"}`,
	"fetch": `{"allowed_domains": ["*", "api.example.com"], "max_response_bytes": "64KiB"}`,
	"sql":   `{"op": "query", "query_timeout": "2s", "max_bytes": "10MB"}`,
	"state": `{"op": "set", "max_keys": 10, "max_value_bytes": "1KiB"}`,
	"meta":  `{"op": "get_tool"}`,
}

// FuzzDecode: no kind's block decoder panics, and a block it accepts
// encodes to JSON it accepts again, unchanged.
func FuzzDecode(f *testing.F) {
	for _, b := range goodBlocks {
		f.Add([]byte(b))
	}
	f.Add([]byte(`{"code": 1}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, n := range Kinds().Names() {
			k, _ := Kinds().Get(n)
			s, err := k.Decode(data)
			if err != nil {
				continue
			}
			if s == nil {
				t.Fatalf("%s: nil block and no error", n)
			}
			b1, err := json.Marshal(s)
			if err != nil {
				t.Fatalf("%s: marshal: %v", n, err)
			}
			s2, err := k.Decode(b1)
			if err != nil {
				t.Fatalf("%s: decode %s: %v", n, b1, err)
			}
			if b2, _ := json.Marshal(s2); !bytes.Equal(b1, b2) {
				t.Fatalf("%s: round trip %s vs %s", n, b1, b2)
			}
		}
	})
}
