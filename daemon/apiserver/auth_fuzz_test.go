package apiserver

import (
	"net/http"
	"testing"

	"github.com/toolcage/toolcage/errdefs"
)

// FuzzReadClaims: any identity headers give claims or a coded error, never
// a panic; a repeated header is always refused; what passes is well formed.
func FuzzReadClaims(f *testing.F) {
	f.Add("Bearer tcw_abc", "llm", "", "ops", "", "s-1", uint8(0))
	f.Add("", "user", "alice", "", "no_shell", "", uint8(0))
	f.Add("Basic x", "", "", "", "", "", uint8(0))
	f.Add("", "llm", "", "", "", "", uint8(2))
	f.Add("bearer  tcw_x ", "robot", "", "", "", "a b", uint8(1))
	f.Fuzz(func(t *testing.T, auth, typ, id, worker, profile, session string, repeat uint8) {
		h := http.Header{}
		vals := []string{auth, typ, id, worker, profile, session}
		repeated := false
		for i, name := range identityHeaders {
			if vals[i] == "" {
				continue
			}
			h.Add(name, vals[i])
			if repeat&(1<<i) != 0 {
				h.Add(name, vals[i])
				repeated = true
			}
		}
		c, err := readClaims(h)
		if err != nil {
			if code := errdefs.CodeOf(err); code != errdefs.InvalidRequest && code != errdefs.Unauthorized {
				t.Fatalf("code %s: %v", code, err)
			}
			return
		}
		if repeated {
			t.Fatalf("a repeated header passed: %v", h)
		}
		if c.typ != "" && c.typ != "user" && c.typ != "llm" {
			t.Fatalf("caller type %q passed", c.typ)
		}
		if c.session != "" && !sessionRE.MatchString(c.session) {
			t.Fatalf("session %q passed", c.session)
		}
		if auth != "" && c.token == "" {
			t.Fatalf("Authorization %q gave no token", auth)
		}
	})
}
