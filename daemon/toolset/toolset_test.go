package toolset

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/daemon/catalog"
)

// New's Check and Tools read the settings with the same decode: what one
// refuses the other refuses, and Tools is given what decode read.
func TestNew(t *testing.T) {
	decode := func(raw json.RawMessage) (int, error) {
		var n int
		if err := json.Unmarshal(raw, &n); err != nil || n < 1 {
			return 0, errors.New("want a positive number")
		}
		return n, nil
	}
	var got int
	ts := New("t", "a test toolset", decode, func(w Worker, n int) ([]*catalog.Definition, error) {
		got = n
		return nil, nil
	})
	if ts.Name != "t" || ts.Description != "a test toolset" {
		t.Fatalf("toolset %+v", ts)
	}
	for _, tc := range []struct {
		raw string
		ok  bool
	}{{"3", true}, {"0", false}, {"{}", false}, {"", false}} {
		checkErr := ts.Check(json.RawMessage(tc.raw))
		_, toolsErr := ts.Tools(Worker{Name: "w"}, json.RawMessage(tc.raw))
		if (checkErr == nil) != tc.ok || (toolsErr == nil) != tc.ok {
			t.Errorf("%q: Check %v, Tools %v, want ok %v", tc.raw, checkErr, toolsErr, tc.ok)
		}
	}
	if got != 3 {
		t.Errorf("Tools was given %d, want 3", got)
	}
}

// Define reads a definition as a toolset writes it; a bad one fails
// naming its tool.
func TestDefine(t *testing.T) {
	d, err := Define(map[string]any{"name": "adder", "description": "adds", "kind": "js", "js": map[string]any{"code": "return 1"}})
	if err != nil || d.Name != "adder" {
		t.Fatalf("Define: %+v %v", d, err)
	}
	if _, err := Define(map[string]any{"name": "bad_one", "description": "d", "kind": "no_such_kind"}); err == nil || !strings.HasPrefix(err.Error(), "bad_one: ") {
		t.Errorf("bad kind: %v", err)
	}
}
