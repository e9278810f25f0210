package policy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/errdefs"
)

func nested(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// Each bound at its edge: at the limit passes, one over fails with
// limit_exceeded naming the limit.
func TestCheckArguments(t *testing.T) {
	b := ArgumentBounds{MaxBytes: 64, MaxDepth: 4}
	for _, tc := range []struct {
		name, args string
		limit      string
	}{
		{"empty object", `{}`, ""},
		{"depth at the limit", `{"a":[[[1]]]}`, ""},
		{"depth one over", `{"a":[[[[1]]]]}`, errdefs.LimitDepth},
		{"brackets in strings do not nest", `{"a":"[[[[[[[[{{{{{{\"[[[["}`, ""},
		{"an escaped quote ends no string", `{"a":"\"[[[[[[["}`, ""},
		{"bytes at the limit", `{"a":"` + strings.Repeat("x", 64-8) + `"}`, ""},
		{"bytes one over", `{"a":"` + strings.Repeat("x", 64-7) + `"}`, errdefs.LimitArguments},
		{"deep past the check's stop", nested(10000), errdefs.LimitArguments},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckArguments([]byte(tc.args), b)
			if tc.limit == "" && err != nil {
				t.Fatalf("%d bytes: %v", len(tc.args), err)
			}
			if tc.limit != "" && (errdefs.CodeOf(err) != errdefs.LimitExceeded || errdefs.LimitOf(err) != tc.limit) {
				t.Fatalf("%d bytes: %v, want limit_exceeded (%s)", len(tc.args), err, tc.limit)
			}
		})
	}
	if err := CheckArguments([]byte(nested(9000)), ArgumentBounds{MaxDepth: 32}); errdefs.LimitOf(err) != errdefs.LimitDepth {
		t.Fatalf("9,000 deep: %v", err)
	}
	if err := CheckArguments([]byte(nested(9000)), ArgumentBounds{}); err != nil {
		t.Fatalf("no bounds: %v", err)
	}
}

// FuzzJSONDepth: the depth of valid JSON is the depth encoding/json's
// decoder nests to, and no text panics the scan.
func FuzzJSONDepth(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,{"b":"]"}]}`, `"\\"`, `[[["\"["]]]`, nested(40), `{"a":`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := JSONDepth([]byte(s), 0)
		if stopped := JSONDepth([]byte(s), 3); stopped > 4 || (got <= 3 && stopped != got) {
			t.Fatalf("%q: depth %d, with stop 3: %d", s, got, stopped)
		}
		var v any
		if len(s) > 1000 || json.Unmarshal([]byte(s), &v) != nil {
			return
		}
		if want := depthOf(v); got != want {
			t.Fatalf("%q: depth %d, want %d", s, got, want)
		}
	})
}

func depthOf(v any) int {
	d := 0
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			d = max(d, depthOf(e))
		}
		return d + 1
	case map[string]any:
		for _, e := range x {
			d = max(d, depthOf(e))
		}
		return d + 1
	}
	return 0
}
