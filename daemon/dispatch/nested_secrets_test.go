package dispatch

import (
	"maps"
	"testing"
)

// TestWithSecrets: a nested call knows every value above it and its own;
// a name two calls hold with different values keeps both.
func TestWithSecrets(t *testing.T) {
	for _, tt := range []struct {
		name       string
		above, own map[string]string
		want       map[string]string
	}{
		{"none above", nil, map[string]string{"a": "v1"}, map[string]string{"a": "v1"}},
		{"none own", map[string]string{"a": "v1"}, nil, map[string]string{"a": "v1"}},
		{"both", map[string]string{"a": "v1"}, map[string]string{"b": "v2"}, map[string]string{"a": "v1", "b": "v2"}},
		{"same name, same value", map[string]string{"a": "v1"}, map[string]string{"a": "v1"}, map[string]string{"a": "v1"}},
		{"same name, other value", map[string]string{"a": "v1", "a_2": "v3"}, map[string]string{"a": "v2"},
			map[string]string{"a": "v1", "a_2": "v3", "a_3": "v2"}},
	} {
		above := maps.Clone(tt.above)
		got := withSecrets(tt.above, tt.own)
		if !maps.Equal(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
		if !maps.Equal(tt.above, above) {
			t.Errorf("%s: the calls above lost or gained values: %v", tt.name, tt.above)
		}
	}
}
