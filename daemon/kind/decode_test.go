package kind

import (
	"encoding/json"
	"reflect"
	"testing"
)

// DecodeArgs fills in the schema's default for an argument that is
// absent or null, and leaves a given one alone; numbers stay exact.
func TestDecodeArgsDefaults(t *testing.T) {
	defaults := map[string]json.RawMessage{"kind": json.RawMessage(`"A"`), "n": json.RawMessage(`12345678901234567890`)}
	cases := []struct {
		args string
		want map[string]any
	}{
		{`{}`, map[string]any{"kind": "A", "n": json.Number("12345678901234567890")}},
		{`{"kind": null}`, map[string]any{"kind": "A", "n": json.Number("12345678901234567890")}},
		{`{"kind": "MX", "n": 1}`, map[string]any{"kind": "MX", "n": json.Number("1")}},
		{`{"kind": "", "x": true}`, map[string]any{"kind": "", "n": json.Number("12345678901234567890"), "x": true}},
	}
	for _, tc := range cases {
		c := &Call{Args: json.RawMessage(tc.args), Defaults: defaults}
		got, err := c.DecodeArgs()
		if err != nil {
			t.Fatalf("%s: %v", tc.args, err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.args, got, tc.want)
		}
	}
}
