package scrub

import "slices"

// acMatcher is an Aho-Corasick automaton over ASCII-case-folded literals,
// compiled to a DFA over byte classes so that scanning costs one table
// lookup per input byte however many literals it holds.
type acMatcher struct {
	class [256]uint8 // byte → class; 0 is "no literal uses this byte"
	nc    int32      // number of classes
	// trans maps row+class to the next state's row (state*nc); the row is
	// stored as ^row when a literal ends in that state.
	trans  []int32
	out    [][]int32 // literal ids ending in each state, suffix links included
	lens   []int     // literal lengths, by id
	maxLen int       // the longest literal
}

func foldByte(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}

// newACMatcher builds the automaton; empty literals never match.
func newACMatcher(lits []string) *acMatcher {
	m := &acMatcher{lens: make([]int, len(lits))}
	n := 0
	for _, p := range lits {
		for i := 0; i < len(p); i++ {
			c := foldByte(p[i])
			if m.class[c] == 0 {
				n++
				m.class[c] = uint8(n)
			}
		}
	}
	for c := 'A'; c <= 'Z'; c++ {
		m.class[c] = m.class[c+('a'-'A')]
	}
	nc := n + 1
	m.nc = int32(nc)

	// At most one state per literal byte, plus the root: sized once, the
	// tables are not copied as they grow (WithKnown builds one per call).
	states := 1
	for _, p := range lits {
		states += len(p)
	}
	m.trans = make([]int32, 0, states*nc)
	m.out = make([][]int32, 0, states)
	newState := func() int32 {
		k := len(m.trans)
		m.trans = m.trans[:k+nc]
		for i := k; i < k+nc; i++ {
			m.trans[i] = -1
		}
		m.out = append(m.out, nil)
		return int32(len(m.out) - 1)
	}
	newState() // root
	for id, p := range lits {
		m.lens[id] = len(p)
		m.maxLen = max(m.maxLen, len(p))
		if p == "" {
			continue
		}
		s := int32(0)
		for i := 0; i < len(p); i++ {
			k := int(s)*nc + int(m.class[p[i]])
			nx := m.trans[k]
			if nx < 0 {
				nx = newState()
				m.trans[k] = nx
			}
			s = nx
		}
		m.out[s] = append(m.out[s], int32(id))
	}

	fail := make([]int32, len(m.out))
	var queue []int32
	for c := range nc {
		if nx := m.trans[c]; nx < 0 {
			m.trans[c] = 0
		} else {
			queue = append(queue, nx)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if f := fail[s]; len(m.out[f]) > 0 {
			m.out[s] = append(m.out[s][:len(m.out[s]):len(m.out[s])], m.out[f]...)
		}
		for c := range nc {
			k := int(s)*nc + c
			if nx := m.trans[k]; nx < 0 {
				m.trans[k] = m.trans[int(fail[s])*nc+c]
			} else {
				fail[nx] = m.trans[int(fail[s])*nc+c]
				queue = append(queue, nx)
			}
		}
	}
	for k, nx := range m.trans {
		row := nx * int32(nc)
		if len(m.out[nx]) > 0 {
			row = ^row
		}
		m.trans[k] = row
	}
	if cap(m.trans) > 2*len(m.trans) {
		// Literals that share prefixes (the keywords) leave most of the
		// estimate unused: the long-lived automaton keeps only its table.
		m.trans = slices.Clone(m.trans)
	}
	return m
}

// splitScanMin is the text length from which scan walks two halves at
// once. One walk is a chain of dependent loads, a table lookup per byte;
// two independent chains keep the CPU busy while each waits on memory.
const splitScanMin = 4 << 10

// scan calls fn(end, id) for every occurrence of every literal, in order
// of end position; end is exclusive.
func (m *acMatcher) scan(text string, fn func(end int, id int32)) {
	if len(text) < splitScanMin || len(text) < 4*m.maxLen {
		m.scanFrom(text, 0, 0, fn)
		return
	}
	// The second walk starts maxLen-1 bytes before the middle, so it is in
	// the right state by then, and reports only what ends after it. Its
	// matches wait in a buffer to keep the order of end positions.
	mid := len(text) / 2
	trans, class, nc := m.trans, &m.class, m.nc
	var later []acHit
	r1, r2 := int32(0), int32(0)
	i, j := 0, mid-(m.maxLen-1)
	for ; j < mid; j++ {
		r2 = trans[r2+int32(class[text[j]])]
		if r2 < 0 {
			r2 = ^r2
		}
	}
	for ; i < mid; i, j = i+1, j+1 {
		r1 = trans[r1+int32(class[text[i]])]
		r2 = trans[r2+int32(class[text[j]])]
		if r1 < 0 {
			r1 = ^r1
			for _, id := range m.out[r1/nc] {
				fn(i+1, id)
			}
		}
		if r2 < 0 {
			r2 = ^r2
			for _, id := range m.out[r2/nc] {
				later = append(later, acHit{j + 1, id})
			}
		}
	}
	for _, h := range later {
		fn(h.end, h.id)
	}
	m.scanFrom(text, j, r2, fn)
}

type acHit struct {
	end int
	id  int32
}

// scanFrom scans text[from:] from the state whose row is row.
func (m *acMatcher) scanFrom(text string, from int, row int32, fn func(end int, id int32)) {
	trans, class := m.trans, &m.class
	for i := from; i < len(text); i++ {
		row = trans[row+int32(class[text[i]])]
		if row < 0 {
			row = ^row
			for _, id := range m.out[row/m.nc] {
				fn(i+1, id)
			}
		}
	}
}
