package scrub

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchCorpus concatenates testdata files until the text is about 1 MiB.
func benchCorpus(b testing.TB, dir string) string {
	b.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", dir, "*.txt"))
	if err != nil || len(files) == 0 {
		b.Fatalf("no corpus in %s: %v", dir, err)
	}
	var sb strings.Builder
	for sb.Len() < 1<<20 {
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				b.Fatal(err)
			}
			sb.Write(data)
		}
	}
	return sb.String()
}

func benchScrub(b *testing.B, text string, known map[string]string) {
	s, err := New(known, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		s.Scrub(text)
	}
}

// benchKnown are the values of a call that uses three secrets.
var benchKnown = map[string]string{
	"OPENAI_API_KEY": "sk-proj-bench0000000000000000000000000000",
	"GITHUB_TOKEN":   "ghp_bench000000000000000000000000000000",
	"DB_PASSWORD":    "bench-db-password",
}

func BenchmarkScrubClean(b *testing.B)       { benchScrub(b, benchCorpus(b, "benign"), nil) }
func BenchmarkScrubCleanKnown(b *testing.B)  { benchScrub(b, benchCorpus(b, "benign"), benchKnown) }
func BenchmarkScrubSecretLaden(b *testing.B) { benchScrub(b, benchCorpus(b, "secrets"), nil) }

// BenchmarkScrubCleanJSON: the benign corpus as the daemon scrubs a shell
// tool's output, inside a JSON string (every line break escaped), with a
// call's known values.
func BenchmarkScrubCleanJSON(b *testing.B) {
	j, err := json.Marshal(map[string]any{"exit_code": 0, "stdout": benchCorpus(b, "benign"), "stderr": ""})
	if err != nil {
		b.Fatal(err)
	}
	benchScrub(b, string(j), benchKnown)
}

// BenchmarkWithKnown: deriving a call's scrubber from the daemon's.
func BenchmarkWithKnown(b *testing.B) {
	s, err := New(nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		s.WithKnown(benchKnown)
	}
}

// BenchmarkEncodedSpansClean: the walk over encoded runs alone (the dump
// streak rides on it), over the benign corpus with a call's known values.
func BenchmarkEncodedSpansClean(b *testing.B) {
	s, err := New(benchKnown, nil)
	if err != nil {
		b.Fatal(err)
	}
	text := benchCorpus(b, "benign")
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		s.encodedSpans(text)
	}
}
