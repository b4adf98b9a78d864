package sim

import "github.com/memspy/memspy/profile"

// sums add up, for one entry of the profile (a pair, a calling context, a
// reference, a line…), the counters of its sites (or contexts) at one
// cache. The profile's entries are made from them only at the end
// (whereProfile), so that adding up a site costs a few additions, not a
// profile.Stats.
type sums struct {
	refStats
	stall uint64 // the cycles the misses waited for the level below
	// present is set when a site or context of the entry has counters at
	// this cache (whereBuilder.mark): the entry then lists the cache.
	present bool
	// share holds the invalidation lists (InvalidatedBy, Invalidated), on
	// several processors; nil without any.
	share *[2][]profile.Sharing
}

// addCounts adds the counters of a site or context whose misses waited
// stall cycles in all.
func (s *sums) addCounts(r *refStats, stall uint64) {
	s.refStats.add(r)
	s.stall += stall
	s.present = true
}

// add adds the sums b to s.
func (s *sums) add(b *sums) {
	s.refStats.add(&b.refStats)
	s.stall += b.stall
	s.present = s.present || b.present
	if b.share != nil {
		s.addSharing(b.share[0], b.share[1])
	}
}

// addSharing adds invalidation lists to s's.
func (s *sums) addSharing(by, of []profile.Sharing) {
	if len(by) == 0 && len(of) == 0 {
		return
	}
	if s.share == nil {
		s.share = &[2][]profile.Sharing{}
	}
	profile.AddSharing(&s.share[0], by)
	profile.AddSharing(&s.share[1], of)
}

// stats sets st to s as the profile's counters; without hits when only
// misses were counted.
func (s *sums) stats(st *profile.Stats, missOnly bool) {
	acc := s.acc[kIFetch] + s.acc[kRead] + s.acc[kWrite]
	miss := s.miss[kIFetch] + s.miss[kRead] + s.miss[kWrite]
	*st = profile.Stats{
		Accesses: acc, Misses: miss,
		IFetches: s.acc[kIFetch], Reads: s.acc[kRead], Writes: s.acc[kWrite],
		IFetchMisses: s.miss[kIFetch], ReadMisses: s.miss[kRead], WriteMisses: s.miss[kWrite],
		StallCycles: s.stall, Causes: s.causes(),
		UnknownHits:  s.unknownHits,
		TemporalHits: s.temporal, SpatialHits: s.spatial,
		UsedBytes: s.used, FetchedBytes: s.fetched,
	}
	if !missOnly {
		st.Hits = acc - miss
	}
	if st.FetchedBytes > 0 {
		st.SpatialUse = float64(st.UsedBytes) / float64(st.FetchedBytes)
	}
	if s.share != nil {
		st.InvalidatedBy, st.Invalidated = s.share[0], s.share[1]
	}
}

// sumTable holds the sums of the entries of one kind, by dense index,
// for each of the profile's cache names: those of one name apart, so
// that goroutines adding up different caches touch different memory.
// Only the sums an entry has at a cache take room (most entries have
// none at some caches: a python3 run's pairs at 38% of their caches),
// made as they are first added to; a sum's place never changes.
type sumTable struct {
	n, names int
	place    [][]int32       // by name, by entry: 1 + the place of its sums in s, 0 for none
	s        []chunked[sums] // by name
	used     []int32         // by name: the places taken
	// slab is where the profile's counters of the entries are made, a
	// chunk at a time (levels).
	slab []profile.Stats
}

// newSumTable makes the sums of n entries for names cache names.
func newSumTable(n, names int) sumTable {
	t := sumTable{n: n, names: names, place: make([][]int32, names), s: make([]chunked[sums], names), used: make([]int32, names)}
	for j := range t.place {
		t.place[j] = make([]int32, n)
	}
	return t
}

// at returns the sums of entry e at cache name j, making them.
func (t *sumTable) at(e int32, j int) *sums {
	k := t.place[j][e]
	if k == 0 {
		t.used[j]++
		k = t.used[j]
		t.place[j][e] = k
	}
	return t.s[j].at(int(k - 1))
}

// get returns the sums of entry e at cache name j, nil when there are
// none (it makes none).
func (t *sumTable) get(e int32, j int) *sums {
	if k := t.place[j][e]; k > 0 {
		return t.s[j].find(int(k - 1))
	}
	return nil
}

// present reports whether entry e has counters at any cache.
func (t *sumTable) present(e int32) bool {
	for j := range t.names {
		if s := t.get(e, j); s != nil && s.present {
			return true
		}
	}
	return false
}

// levels returns entry e's counters by cache name, for the caches where
// it has any.
func (t *sumTable) levels(e int32, names []string, missOnly bool) map[string]*profile.Stats {
	m := map[string]*profile.Stats{}
	for j, name := range names {
		if s := t.get(e, j); s != nil && s.present {
			if len(t.slab) == 0 {
				t.slab = make([]profile.Stats, statsChunk)
			}
			s.stats(&t.slab[0], missOnly)
			m[name], t.slab = &t.slab[0], t.slab[1:]
		}
	}
	return m
}

// statsChunk is how many entries' counters a sumTable makes at once.
const statsChunk = 256

// addEntry adds entry e's sums of table from to entry f's.
func (t *sumTable) addEntry(f int32, from *sumTable, e int32) {
	for j := range t.names {
		if s := from.get(e, j); s != nil && s.present {
			t.at(f, j).add(s)
		}
	}
}

// bitset is a set of small non-negative integers.
type bitset []uint64

// newBitset makes a set for the integers below n.
func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

// set adds i to the set.
func (b bitset) set(i int32) { b[i/64] |= 1 << (i % 64) }

// has reports whether i is in the set.
func (b bitset) has(i int32) bool { return b[i/64]&(1<<(i%64)) != 0 }

// grow returns b with room for i, b itself when it has.
func (b bitset) grow(i int32) bitset {
	if n := int(i)/64 + 1; n > len(b) {
		return append(b, make(bitset, max(n-len(b), len(b)/2))...)
	}
	return b
}

// or adds the members of c below the size of b to b.
func (b bitset) or(c bitset) {
	for i := range min(len(b), len(c)) {
		b[i] |= c[i]
	}
}
