package main

import (
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
