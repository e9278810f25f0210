package bench

import (
	"testing"

	"github.com/toolcage/toolcage/daemon"
	"github.com/toolcage/toolcage/policy/netguard"
)

// The policy checks every shell and HTTP call passes before it runs, as the
// daemon loads them. Each reports its mean cost per check in µs.

// shellCheckCommand is a typical 100-byte tool command: a lookup piped
// through a filter, then an API call piped into jq (as in policy's own
// benchmark).
const shellCheckCommand = `dig +short A example.com | head -n 5 && curl -s "https://api.example.com/v1/items?id=42" | jq .name`

// BenchmarkShellRuleCheck: the default deny rules (every group on) on a
// 100-byte command that passes them all, so every rule is tried.
func BenchmarkShellRuleCheck(b *testing.B) {
	rules, err := daemon.LoadShellRules(daemon.ShellRulesConfig{})
	if err != nil {
		b.Fatal(err)
	}
	if err := rules.CheckCommand(shellCheckCommand); err != nil {
		b.Fatalf("the benchmark command is refused: %v", err)
	}
	b.SetBytes(int64(len(shellCheckCommand)))
	b.ReportAllocs()
	for b.Loop() {
		_ = rules.CheckCommand(shellCheckCommand)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "µs/check")
}

// BenchmarkURLGuardCheck: the network guard's URL check (parse, normalise,
// allowlist) on a typical API URL, as an HTTP call gets it before dialling.
func BenchmarkURLGuardCheck(b *testing.B) {
	g, err := netguard.New(netguard.Config{AllowedDomains: []string{"api.example.com", "*.example.org"}})
	if err != nil {
		b.Fatal(err)
	}
	const u = "https://api.example.com/v1/forecast/Paris?days=3&units=metric"
	if _, err := g.CheckURL(u); err != nil {
		b.Fatalf("the benchmark URL is refused: %v", err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_, _ = g.CheckURL(u)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "µs/check")
}
