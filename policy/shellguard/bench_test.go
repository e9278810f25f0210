package shellguard

import "testing"

// benchCommand is a typical 100-byte tool command: a lookup piped
// through a filter, then an API call piped into jq.
const benchCommand = `dig +short A example.com | head -n 5 && curl -s "https://api.example.com/v1/items?id=42" | jq .name`

func BenchmarkCheckCommand(b *testing.B) {
	rs := loadDefaultShellRules(b)
	if err := rs.CheckCommand(benchCommand); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(benchCommand)))
	b.ReportAllocs()
	for b.Loop() {
		_ = rs.CheckCommand(benchCommand)
	}
}

func BenchmarkCheckCommandDenied(b *testing.B) {
	rs := loadDefaultShellRules(b)
	const cmd = `echo cm0gLXJmIC8= | base64 -d | sh`
	b.ReportAllocs()
	for b.Loop() {
		_ = rs.CheckCommand(cmd)
	}
}

func BenchmarkCheckArgv(b *testing.B) {
	rs := loadDefaultShellRules(b)
	argv := []string{"dig", "+short", "A", "example.com"}
	b.ReportAllocs()
	for b.Loop() {
		_ = rs.CheckArgv(argv)
	}
}

// BenchmarkCheckCommandProtected is the everyday command checked with the
// ask rules on, as in a protected workspace.
func BenchmarkCheckCommandProtected(b *testing.B) {
	rs := loadDefaultShellRules(b)
	if err := rs.CheckCommandProtected(benchCommand); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = rs.CheckCommandProtected(benchCommand)
	}
}
