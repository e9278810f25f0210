package mcp

import "testing"

func TestIsLoopbackOrigin(t *testing.T) {
	for origin, want := range map[string]bool{
		"http://127.0.0.1:8766":         true,
		"http://127.9.9.9":              true,
		"https://localhost:3000":        true,
		"http://LOCALHOST":              true,
		"http://[::1]:8766":             true,
		"http://[::ffff:127.0.0.1]":     true,
		"http://127.0.0.1:8766/":        true,
		"null":                          false,
		"":                              false,
		"http://evil.example":           false,
		"http://localhost.evil.example": false,
		"http://127.0.0.1.evil.example": false,
		"http://0.0.0.0:8766":           false,
		"http://10.0.0.1":               false,
		"file://localhost":              false,
		"http://user@127.0.0.1":         false,
		"http://127.0.0.1/x":            false,
		"http://127.0.0.1?x=1":          false,
		"ws://127.0.0.1":                false,
	} {
		if got := isLoopbackOrigin(origin); got != want {
			t.Errorf("isLoopbackOrigin(%q) = %v, want %v", origin, got, want)
		}
	}
}
