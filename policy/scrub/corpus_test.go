package scrub

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestScrubCorpus runs the rules over realistic tool output: every fake
// secret listed in secrets/NAME.secrets must vanish from NAME.txt (all of
// them), and nothing in benign/ may change (no false positives).
func TestScrubCorpus(t *testing.T) {
	s := newTestScrubber(t, nil)

	files, err := filepath.Glob("testdata/secrets/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no secret corpus: %v", err)
	}
	total, caught := 0, 0
	for _, f := range files {
		text := readFile(t, f)
		want := strings.Fields(readFile(t, strings.TrimSuffix(f, ".txt")+".secrets"))
		out := s.Scrub(text)
		for _, secret := range want {
			total++
			if strings.Contains(out, secret) {
				t.Logf("%s: missed %q", filepath.Base(f), secret)
			} else {
				caught++
			}
		}
	}
	recall := float64(caught) / float64(total)
	t.Logf("recall: %d/%d = %.1f%%", caught, total, 100*recall)
	if caught < total {
		t.Errorf("recall %.1f%% < 100%%", 100*recall)
	}

	benign, err := filepath.Glob("testdata/benign/*.txt")
	if err != nil || len(benign) == 0 {
		t.Fatalf("no benign corpus: %v", err)
	}
	fp, bytes := 0, 0
	for _, f := range benign {
		text := readFile(t, f)
		bytes += len(text)
		out := s.Scrub(text)
		if n := strings.Count(out, markerPrefix) - strings.Count(text, markerPrefix); n > 0 {
			fp += n
			t.Errorf("%s: %d false positives:\n%s", filepath.Base(f), n, diffLines(text, out))
		}
	}
	t.Logf("false positives: %d in %d benign files (%d bytes)", fp, len(benign), bytes)
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func diffLines(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var sb strings.Builder
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			sb.WriteString("  " + bl[i] + "\n")
		}
	}
	return sb.String()
}
