package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPolicyScrub(t *testing.T) {
	const in = "deploy ok\nGITHUB_TOKEN=ghp_R2x8Lq0Zk4Vn7Yt1Ws5Ud9Pb3Mc6Hf2Ja8Ke\ncommit 9fceb02d0ae598e95dc970b74767f19372d61af8\n"
	r := runCLI(t, in, "policy", "scrub")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.err)
	}
	if strings.Contains(r.out, "ghp_R2x8") || !strings.Contains(r.out, "[REDACTED:") {
		t.Fatalf("token not scrubbed:\n%s", r.out)
	}
	if !strings.Contains(r.out, "deploy ok\n") || !strings.Contains(r.out, "9fceb02d0ae598e95dc970b74767f19372d61af8") {
		t.Fatalf("benign text changed:\n%s", r.out)
	}
	if r := runCLI(t, "", "policy", "scrub", "extra"); r.code != exitUsage {
		t.Fatalf("extra argument: exit %d", r.code)
	}
}

// --config adds the daemon config's own rules; a bad rule is a usage error.
func TestPolicyScrubConfig(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	os.WriteFile(good, []byte(`scrub:
  rules:
    - kind: acme-token
      pattern: '\b(acme_[A-Za-z0-9]{32})\b'
      secret_group: 1
      keywords: [acme_]
      min_entropy: 3
`), 0o600)
	const in = "deploy with acme_Zq8vK2mXw9rTj4LpZq8vK2mXw9rTj4Lp done\n"
	if r := runCLI(t, in, "policy", "scrub", "--config", good); r.code != 0 || r.out != "deploy with [REDACTED:acme-token] done\n" {
		t.Fatalf("with the rule: exit %d, %q %s", r.code, r.out, r.err)
	}
	if r := runCLI(t, in, "policy", "scrub"); r.out != in {
		t.Fatalf("without the rule: %q", r.out)
	}
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("scrub:\n  rules:\n    - {kind: \"no spaces\", pattern: x}\n"), 0o600)
	if r := runCLI(t, in, "policy", "scrub", "--config", bad); r.code != exitUsage || !strings.Contains(r.err, "scrub.rules[0]") {
		t.Fatalf("bad rule: exit %d, %s", r.code, r.err)
	}
}
