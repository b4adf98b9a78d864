package sim

import "slices"

// countedPair counts a pair of ids, (a, b); n == 0 marks a free place.
// In the eviction tables a is the site (evictorTable) or access point
// (evicted by bin) whose fill's line was evicted, the victim, and b the
// evicting site or data bin.
type countedPair struct {
	a, b int32
	n    uint64
}

// pairCounts counts pairs exactly: an open-addressing table, probed
// linearly, at most three quarters full, instead of a map per id.
type pairCounts struct {
	pairs []countedPair
	n     int // pairs in use
}

// add counts n more of the pair (a, b).
func (t *pairCounts) add(a, b int32, n uint64) {
	if 4*(t.n+1) > 3*len(t.pairs) {
		old := t.pairs
		t.pairs = make([]countedPair, max(1024, 2*len(old)))
		for _, p := range old {
			if p.n != 0 {
				*t.place(p.a, p.b) = p
			}
		}
	}
	p := t.place(a, b)
	if p.n == 0 {
		*p = countedPair{a: a, b: b}
		t.n++
	}
	p.n += n
}

// place returns the place of the pair (a, b): its own, or the free one
// where it goes.
func (t *pairCounts) place(a, b int32) *countedPair {
	mask := len(t.pairs) - 1
	for i := int(pairHash(a, b)>>32) & mask; ; i = (i + 1) & mask {
		if p := &t.pairs[i]; p.n == 0 || p.a == a && p.b == b {
			return p
		}
	}
}

// pairHash spreads the pair (a, b) over 64 bits.
func pairHash(a, b int32) uint64 {
	return (uint64(uint32(a))<<32 | uint64(uint32(b))) * 0x9e3779b97f4a7c15
}

// evictorTable counts, by site, the lines of its fills that each other
// site's fills evicted, in a table of bounded size: sets of
// evictorWays places, found by the pair's hash. The table doubles while a
// set is full, up to maxEvictorPlaces places; then a pair that finds its
// set full takes the place of the least counted pair there, with that
// count plus its own (space-saving): a count is then too high by at most
// err, the largest count so taken over, and every pair counted more than
// err times is in the table. The sum of the counts stays exact.
type evictorTable struct {
	pairs []countedPair
	n     int    // pairs in use
	err   uint64 // the most a count may be too high (0: exact)
	limit int    // the bound on places (0: maxEvictorPlaces)
}

// evictorWays is the number of places of a set of an evictorTable.
const evictorWays = 8

// maxEvictorPlaces bounds an evictorTable: 32 MiB of pairs per cache.
const maxEvictorPlaces = 1 << 21

// add counts a line of victim's fill that by's fill evicted.
func (t *evictorTable) add(victim, by int32) {
	if t.pairs == nil {
		t.pairs = make([]countedPair, min(1024, t.bound()))
	}
	for !t.put(countedPair{victim, by, 1}, len(t.pairs) >= t.bound()) {
		t.grow()
	}
}

// bound returns the most places the table may have.
func (t *evictorTable) bound() int {
	if t.limit > 0 {
		return t.limit
	}
	return maxEvictorPlaces
}

// put adds pair p's count to the table and reports whether it found a
// place; when its set is full it takes over the least counted pair's
// place if replace is set, else finds none.
func (t *evictorTable) put(p countedPair, replace bool) bool {
	sets := len(t.pairs) / evictorWays
	i := int(pairHash(p.a, p.b)>>32) & (sets - 1) * evictorWays // (sizes are powers of two)
	set := t.pairs[i : i+evictorWays]
	least := 0
	for k := range set {
		q := &set[k]
		if q.n == 0 { // places are taken in order: the pair is not there
			*q = p
			t.n++
			return true
		}
		if q.a == p.a && q.b == p.b {
			q.n += p.n
			return true
		}
		if q.n < set[least].n {
			least = k
		}
	}
	if !replace {
		return false
	}
	q := &set[least]
	t.err = max(t.err, q.n)
	*q = countedPair{p.a, p.b, q.n + p.n}
	return true
}

// grow doubles the table (up to its bound) and puts its
// pairs back, doubling again while a set overflows; at the bound pairs
// that find their set full take over places.
func (t *evictorTable) grow() {
	old := t.pairs
	size := 2 * len(old)
	for {
		t.pairs, t.n = make([]countedPair, size), 0
		atBound := size >= t.bound()
		ok := true
		for _, p := range old {
			if p.n != 0 && !t.put(p, atBound) {
				ok = false
				break
			}
		}
		if ok {
			return
		}
		size *= 2
	}
}

// groupPairs returns the places of the pairs in use (counted) grouped by
// a group of their a, group(a) (below groups; -1 leaves the pair out):
// group g's pairs are pairs[order[k]] for k in start[g]:start[g+1].
func groupPairs(pairs []countedPair, groups int, group func(a int32) int32) (order, start []int32) {
	return groupBy(len(pairs), groups, func(i int) int32 {
		if pairs[i].n == 0 {
			return -1
		}
		return group(pairs[i].a)
	})
}

// groupBy returns the numbers below n grouped by their group (below
// groups; -1: none, left out), in order within a group, and where each
// group begins: group g is order[start[g]:start[g+1]] (a counting sort,
// calling group once for each number).
func groupBy(n, groups int, group func(i int) int32) (order, start []int32) {
	of := make([]int32, n)
	start = make([]int32, groups+1)
	for i := range n {
		g := group(i)
		of[i] = g
		if g >= 0 {
			start[g+1]++
		}
	}
	for g := range groups {
		start[g+1] += start[g]
	}
	order = make([]int32, start[groups])
	next := slices.Clone(start[:groups])
	for i, g := range of {
		if g >= 0 {
			order[next[g]] = int32(i)
			next[g]++
		}
	}
	return order, start
}
