package bench

import (
	shellkind "github.com/toolcage/toolcage/daemon/kind/shell"

	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolcage/toolcage/daemon"
	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/policy"
	"github.com/toolcage/toolcage/policy/scrub"
	"github.com/toolcage/toolcage/policy/template"
)

// corpus joins policy's scrubber corpus files of one kind, repeated to
// about 1 MB so the throughput is over realistic, varied text.
func corpus(b *testing.B, pattern string) []byte {
	files, err := filepath.Glob(filepath.Join("..", "policy", "scrub", "testdata", pattern))
	if err != nil || len(files) == 0 {
		b.Fatalf("no corpus %s: %v", pattern, err)
	}
	var one []byte
	for _, f := range files {
		// The near-miss file is built to trip every rule's keywords (it is
		// there to prove no false positives): it is not clean text, and it
		// scrubs at the secret-laden rate, so the clean figure leaves it out.
		if filepath.Base(f) == "near_misses.txt" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		one = append(one, data...)
	}
	out := make([]byte, 0, 1<<20+len(one))
	for len(out) < 1<<20 {
		out = append(out, one...)
	}
	return out
}

func benchScrub(b *testing.B, text []byte, known map[string]string) {
	s, err := scrub.New(known, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		_ = s.ScrubBytes(text)
	}
	b.ReportMetric(float64(len(text))*float64(b.N)/b.Elapsed().Seconds()/1e6, "MB/s")
}

// callSecrets are the known values of a call that uses three secrets.
var callSecrets = map[string]string{
	"OPENAI_API_KEY": "sk-proj-bench0000000000000000000000000000",
	"GITHUB_TOKEN":   "ghp_bench000000000000000000000000000000",
	"DB_PASSWORD":    "bench-db-password",
}

// BenchmarkScrubClean: the full rule set (ours and gitleaks') over benign
// output (git logs, lockfile hashes, UUIDs, prose, key=value look-alikes),
// as for a call that uses no secret: what nearly every call pays.
func BenchmarkScrubClean(b *testing.B) { benchScrub(b, corpus(b, "benign/*.txt"), nil) }

// BenchmarkScrubCleanKnown: the same for a call that uses three secrets:
// their values, in all their encodings, are looked for in a second pass.
func BenchmarkScrubCleanKnown(b *testing.B) {
	benchScrub(b, corpus(b, "benign/*.txt"), callSecrets)
}

// BenchmarkScrubSecretLaden: the full rule set over output full of
// credentials.
func BenchmarkScrubSecretLaden(b *testing.B) { benchScrub(b, corpus(b, "secrets/*.txt"), nil) }

// BenchmarkPolicyOverhead: every policy step one shell call passes in the
// daemon, in order — argument validation against the JSON Schema, template
// rendering with per-context escaping, the deny rules on the rendering, the
// rate limiter, and scrubbing a 1 KB result — as the p50 of single calls.
func BenchmarkPolicyOverhead(b *testing.B) {
	def, err := catalog.Parse([]byte(`
name: dns_lookup
description: Look up DNS records for a domain
kind: shell
parameters:
  type: object
  properties:
    domain: {type: string}
    record_type: {type: string, enum: [A, AAAA, MX, CNAME, TXT]}
  required: [domain, record_type]
shell: {command: "dig +short {{.record_type}} {{.domain}}"}
`))
	if err != nil {
		b.Fatal(err)
	}
	res, err := catalog.Compile(&catalog.Tool{Def: def, Version: 1})
	if err != nil {
		b.Fatal(err)
	}
	rules, err := daemon.LoadShellRules(daemon.ShellRulesConfig{})
	if err != nil {
		b.Fatal(err)
	}
	scrubber, err := scrub.New(nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	limiter := policy.NewRateLimiter(policy.RateLimitConfig{PerCallerTool: policy.RateLimit{Rate: 1e9, Burst: 1 << 30}, Concurrency: 64})
	rawArgs := json.RawMessage(`{"domain":"example.com","record_type":"MX"}`)
	result := []byte(`{"exit_code":0,"stdout":"` + strings.Repeat("10 mx1.example.com.\\n", 48) + `","stderr":"","truncated":false}`)
	var lat []time.Duration
	for b.Loop() {
		start := time.Now()
		if err := res.Schema.Validate(rawArgs); err != nil {
			b.Fatal(err)
		}
		var args map[string]any
		if err := json.Unmarshal(rawArgs, &args); err != nil {
			b.Fatal(err)
		}
		r, err := res.Compiled.(*shellkind.Compiled).Command.Render(args, template.ShellOptions{AllowDash: res.Schema.AllowDash})
		if err != nil {
			b.Fatal(err)
		}
		if err := rules.CheckArgv(r.Argv); err != nil {
			b.Fatal(err)
		}
		release, err := limiter.Allow("uid:0", "dns_lookup", start)
		if err != nil {
			b.Fatal(err)
		}
		release()
		_ = scrubber.ScrubBytes(result)
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1000, "p50-µs")
}
