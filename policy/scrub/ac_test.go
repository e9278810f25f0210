package scrub

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

type acMatch struct {
	end int
	id  int32
}

func acAll(m *acMatcher, text string, split bool) []acMatch {
	var out []acMatch
	fn := func(end int, id int32) { out = append(out, acMatch{end, id}) }
	if split {
		m.scan(text, fn)
	} else {
		m.scanFrom(text, 0, 0, fn)
	}
	return out
}

// The two-walk scan of long text reports exactly what one walk does, in
// the same order, also for literals that straddle the middle.
func TestACSplitScanSameAsOneWalk(t *testing.T) {
	lits := []string{"token", "password", "sk-", "://", "abcdefghij", "a", "tok", strings.Repeat("z", 40)}
	m := newACMatcher(lits)
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 200 {
		size := splitScanMin + rng.IntN(3*splitScanMin)
		var b strings.Builder
		for b.Len() < size {
			if rng.IntN(4) == 0 {
				b.WriteString(lits[rng.IntN(len(lits))])
			} else {
				const alphabet = "abcdefghijklmnopqrstuvwxyz:/-ZTOKEN "
				b.WriteByte(alphabet[rng.IntN(len(alphabet))])
			}
		}
		text := b.String()
		if n%2 == 0 {
			// A literal across the middle.
			mid := len(text) / 2
			text = text[:mid-20] + strings.Repeat("z", 40) + "password" + text[mid+28:]
		}
		one, two := acAll(m, text, false), acAll(m, text, true)
		if !slices.Equal(one, two) {
			t.Fatalf("text %d (%d bytes): one walk %d matches, two walks %d", n, len(text), len(one), len(two))
		}
	}
}

// FuzzACScan checks the same on arbitrary text and literals.
func FuzzACScan(f *testing.F) {
	f.Add(strings.Repeat("password token ", 600), "token", "sk-")
	f.Fuzz(func(t *testing.T, text, a, b string) {
		m := newACMatcher([]string{a, b, "token"})
		for len(text) < splitScanMin {
			text += text + "x"
		}
		if one, two := acAll(m, text, false), acAll(m, text, true); !slices.Equal(one, two) {
			t.Fatalf("one walk %d matches, two walks %d", len(one), len(two))
		}
	})
}

// Small and large automata report every occurrence of every literal, as
// a naive search does, in one walk and in two.
func TestACTablesMatchNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const alphabet = "abcdEFGH01:-_/"
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	small := []string{"ab", "bcd", "abcd", "d0", "EF:", "a"}
	var large []string
	for range 500 {
		large = append(large, word(80)) // ~40,000 states
	}
	large = append(large, small...)
	for _, lits := range [][]string{small, large} {
		m := newACMatcher(lits)
		var b strings.Builder
		for b.Len() < 3*splitScanMin {
			if rng.IntN(8) == 0 {
				b.WriteString(lits[rng.IntN(len(lits))])
			} else {
				b.WriteString(word(1))
			}
		}
		text := b.String()
		var want []acMatch
		for end := 1; end <= len(text); end++ {
			for id, l := range lits {
				if len(l) <= end && strings.EqualFold(text[end-len(l):end], l) {
					want = append(want, acMatch{end, int32(id)})
				}
			}
		}
		for _, split := range []bool{false, true} {
			got := acAll(m, text, split)
			sortHits := func(h []acMatch) {
				slices.SortFunc(h, func(a, b acMatch) int {
					if a.end != b.end {
						return a.end - b.end
					}
					return int(a.id - b.id)
				})
			}
			sortHits(got)
			sortHits(want)
			if !slices.Equal(got, want) {
				t.Fatalf("%d literals, split %v: %d matches, want %d", len(lits), split, len(got), len(want))
			}
		}
	}
}
