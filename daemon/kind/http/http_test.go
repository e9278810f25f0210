package http

import (
	"testing"

	"github.com/toolcage/toolcage/daemon/kind"
)

// When a tool is made, a literal private address is left to the daemon's
// allow_private_hosts, applied when the call dials (as a host name that
// resolves there is); addresses no setting can allow are refused at once.
func TestCheckLeavesPrivateLiteralsToTheCall(t *testing.T) {
	for _, tc := range []struct {
		url, allowed string
		ok           bool
	}{
		{"http://127.0.0.1:8080/x", "127.0.0.1", true},
		{"http://10.1.2.3/x", "10.1.2.3", true},
		{"http://[::1]:9000/x", "::1", true},
		{"http://192.168.0.10/{{p}}", "192.168.0.10", true},
		{"http://localhost:8080/x", "localhost", true},
		{"http://169.254.169.254/latest/", "169.254.169.254", false},
		{"http://0.0.0.0/x", "0.0.0.0", false},
		{"http://224.0.0.1/x", "224.0.0.1", false},
		{"http://[fe80::1]/x", "fe80::1", false},
		{"http://127.0.0.1/x", "10.0.0.1", false}, // not in the allowlist
		{"http://2130706433/x", "127.0.0.1", false},
	} {
		s := &Spec{Method: "GET", URL: tc.url, AllowedDomains: []string{tc.allowed}}
		err := s.Check(kind.Tool{})
		if (err == nil) != tc.ok {
			t.Errorf("%s with %s: %v, want ok=%v", tc.url, tc.allowed, err, tc.ok)
		}
	}
}
