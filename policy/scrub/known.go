package scrub

import "strings"

// KnownOnly returns a Scrubber that redacts the known values (name →
// value) alone, in every form Scrub finds known values in (raw, encoded,
// escaped, folded over lines), and no rule's match. Whether its Scrub
// changes a text tells whether the text carries one of the values: the
// daemon refuses a nested call that would hand a calling tool's secret on,
// and a rule's match there (any token-shaped argument) must not count.
func KnownOnly(known map[string]string) *Scrubber {
	// The keyword automaton keeps only what the passes need: the one
	// keyword that finds earlier passes' markers, and the escape triggers.
	kws := append([]string{strings.ToLower(markerPrefix)}, escapeTriggers...)
	s := &Scrubber{nkw: 1, kwRules: [][]int{nil}}
	return s.build(kws, known)
}
