package dispatch

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/policy/scrub"
)

func TestRenderedCall(t *testing.T) {
	s, err := scrub.New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	code := "return args.a"
	sum := sha256.Sum256([]byte(code))
	for _, tt := range []struct {
		req  *executors.Request
		want string
	}{
		{&executors.Request{Shell: &executors.ShellCall{Argv: []string{"echo", "a&&b"}}}, `["echo","a&&b"]`},
		{&executors.Request{Shell: &executors.ShellCall{Command: "echo 'x' | wc -c"}}, `sh -c "echo 'x' | wc -c"`},
		{&executors.Request{HTTP: &executors.HTTPCall{Method: "GET", URL: "https://bob:hunter2@api.example.com/v1?q=1"}}, "GET https://bob:xxxxx@api.example.com/v1?q=1"},
		{&executors.Request{JS: &executors.JSCall{Code: code}}, "sha256:" + hex.EncodeToString(sum[:])},
	} {
		got := renderedCall(tt.req, s)
		if tt.req.HTTP != nil {
			// Whatever RedactURL writes for the password, it is not the password.
			if got == "" || strings.Contains(got, "hunter2") || !strings.Contains(got, "api.example.com/v1") {
				t.Errorf("http rendered %q", got)
			}
			continue
		}
		if got != tt.want {
			t.Errorf("rendered %q, want %q", got, tt.want)
		}
	}
}

func TestApprovalIDs(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := newApprovalID()
		if len(id) != ApprovalIDLen {
			t.Fatalf("id %q", id)
		}
		for _, r := range id {
			if (r < 'a' || r > 'z') && (r < '2' || r > '7') {
				t.Fatalf("id %q", id)
			}
		}
		seen[id] = true
	}
	if len(seen) < 999 {
		t.Errorf("%d distinct ids of 1000", len(seen))
	}
}
