package policy

import (
	"strings"
	"sync"
	"testing"

	"github.com/spf13/viper"
)

// Formats only gitleaks' rules know: the secret must become a gitleaks
// marker, and Scrub must stay idempotent.
func TestScrubGitleaksOnly(t *testing.T) {
	s := newTestScrubber(t, nil)
	for _, tc := range []struct{ rule, secret, text string }{
		{"shippo-api-token", "shippo_live_3f9a1c7e5b2d8f4a6c0e9b1d7f3a5c8e2b4d6f0a", "shipping label via %s\n"},
		{"flutterwave-secret-key", "FLWSECK_TEST-8c1f3a9e7b2d5f4a6c0e9b1d7f3a5c8e-X", "flutterwave: %s\nnext line"},
		{"prefect-api-token", "pnu_Zx8Kq2Lm4Np6Rs0Tv3Wy5Ab7Cd9Ef1Gh3Jk5", "prefect cloud login with %s\n"},
	} {
		text := strings.ReplaceAll(tc.text, "%s", tc.secret)
		out := s.Scrub(text)
		if strings.Contains(out, tc.secret) {
			t.Errorf("%s: secret survives: %q", tc.rule, out)
			continue
		}
		if want := "[REDACTED:gitleaks:" + tc.rule + "]"; !strings.Contains(out, want) {
			t.Errorf("%s: no %s in %q", tc.rule, want, out)
		}
		if again := s.Scrub(out); again != out {
			t.Errorf("%s: not idempotent: %q → %q", tc.rule, out, again)
		}
	}
}

// Our own rules win over gitleaks on the same secret.
func TestScrubGitleaksOwnRuleFirst(t *testing.T) {
	s := newTestScrubber(t, nil)
	out := s.Scrub("LINEAR=lin_api_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0\n")
	if strings.Contains(out, "gitleaks") || !strings.Contains(out, markerPrefix) {
		t.Errorf("got %q", out)
	}
}

// The detector is built from a private viper instance and is safe for
// concurrent use.
func TestScrubGitleaksConcurrent(t *testing.T) {
	s := newTestScrubber(t, nil)
	if keys := viper.AllKeys(); len(keys) != 0 {
		t.Errorf("global viper was written: %v", keys)
	}
	const secret = "shippo_test_0a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3"
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				if out := s.Scrub("key " + secret + "\n"); strings.Contains(out, secret) {
					t.Errorf("secret survives: %q", out)
					return
				}
			}
		})
	}
	wg.Wait()
}
