package profile

import (
	"cmp"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// Adding evictor lists and settling them gives the counts by reference
// and object, whether the lists are short or long (their repeats then
// merged on the way), repeats included: they become one.
func TestAddEvictorsRepeats(t *testing.T) {
	list := func(seed, n int) []RefEvictor {
		var es []RefEvictor
		for i := range n {
			k := (seed*7 + i*i*3) % 5
			es = append(es, RefEvictor{Reference: fmt.Sprintf("%#x", 0x10+k), Object: fmt.Sprint("o", k%2), Count: uint64(seed + i + 1)})
		}
		return es
	}
	for seed := range 20 {
		for _, n := range []int{1, 3, 9, 40} {
			a, b := list(seed, n), list(seed+1, n)
			s := Stats{Evictors: slices.Clone(a)}
			for range 3 { // (the list doubles: its repeats are merged on the way)
				s.addEvictors(b)
			}
			s.Evictors = settledEvictors(s.Evictors) // (addEvictors leaves them out of order, with repeats)
			// Counts by reference and object, every repeat one.
			count := map[[2]string]uint64{}
			for _, e := range a {
				count[[2]string{e.Reference, e.Object}] += e.Count
			}
			for _, e := range b {
				count[[2]string{e.Reference, e.Object}] += 3 * e.Count
			}
			var want []RefEvictor
			for k, n := range count {
				want = append(want, RefEvictor{Reference: k[0], Object: k[1], Count: n})
			}
			SortEvictors(want)
			if !slices.Equal(s.Evictors, want) {
				t.Errorf("seed %d, %d evictors: got %v, want %v", seed, n, s.Evictors, want)
			}
		}
	}
}

// A settled evictor list names at most MaxRefEvictors references, the
// most counted (ties in CompareEvictors's order), with their exact counts,
// and adds up the rest with any OtherEvictors entries in one: the total
// stays.
func TestSettledEvictorsBound(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 11))
		count := map[[2]string]uint64{}
		var es []RefEvictor
		var other, total uint64
		for range rng.IntN(60) {
			e := RefEvictor{Reference: fmt.Sprintf("%#x", 0x10+rng.IntN(30)), Object: fmt.Sprint("o", rng.IntN(2)), Count: 1 + rng.Uint64N(5)}
			if rng.IntN(10) == 0 {
				e = RefEvictor{Reference: OtherEvictors, Count: 1 + rng.Uint64N(5)}
				other += e.Count
			} else {
				count[[2]string{e.Reference, e.Object}] += e.Count
			}
			total += e.Count
			es = append(es, e)
		}
		var named []RefEvictor
		for k, n := range count {
			named = append(named, RefEvictor{Reference: k[0], Object: k[1], Count: n})
		}
		SortEvictors(named)
		for _, e := range named[min(len(named), MaxRefEvictors):] {
			other += e.Count
		}
		want := named[:min(len(named), MaxRefEvictors)]
		if other > 0 {
			want = append(want, RefEvictor{Reference: OtherEvictors, Count: other})
		}
		SortEvictors(want)
		got := settledEvictors(es)
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d: got %v, want %v", seed, got, want)
		}
		var sum uint64
		for _, e := range got {
			sum += e.Count
		}
		if sum != total {
			t.Fatalf("seed %d: the list adds up to %d, want %d", seed, sum, total)
		}
	}
}

// Bounded evicted_by tables keep the MaxEvictedBy objects that evicted
// the most (ties by name) with their exact counts and add the others'
// lines to EvictedByOthers; adding two up and bounding again keeps every
// line, and a count kept may be short by at most EvictedByOthers.
func TestTrimEvictedBy(t *testing.T) {
	for seed := range uint64(100) {
		rng := rand.New(rand.NewPCG(seed, 13))
		table := func() (*Stats, map[string]uint64) {
			s := &Stats{EvictedBy: map[string]uint64{}}
			for range rng.IntN(3 * MaxEvictedBy) {
				s.EvictedBy[fmt.Sprint("o", rng.IntN(4*MaxEvictedBy))] += 1 + rng.Uint64N(9)
			}
			return s, maps.Clone(s.EvictedBy)
		}
		a, exactA := table()
		b, exactB := table()
		for _, c := range []struct {
			s     *Stats
			exact map[string]uint64
		}{{a, exactA}, {b, exactB}} {
			c.s.trimEvictedBy()
			var names []string
			for name := range c.exact {
				names = append(names, name)
			}
			slices.SortFunc(names, func(x, y string) int { return cmp.Or(cmp.Compare(c.exact[y], c.exact[x]), cmp.Compare(x, y)) })
			want := map[string]uint64{}
			var others uint64
			for i, name := range names {
				if i < MaxEvictedBy {
					want[name] = c.exact[name]
				} else {
					others += c.exact[name]
				}
			}
			if !maps.Equal(c.s.EvictedBy, want) || c.s.EvictedByOthers != others {
				t.Fatalf("seed %d: kept %v and %d others, want %v and %d", seed, c.s.EvictedBy, c.s.EvictedByOthers, want, others)
			}
		}
		total := a.Evictions() + b.Evictions()
		a.Add(b)
		a.trimEvictedBy()
		if len(a.EvictedBy) > MaxEvictedBy || a.Evictions() != total {
			t.Fatalf("seed %d: after adding up, %d objects and %d lines, want at most %d and %d", seed, len(a.EvictedBy), a.Evictions(), MaxEvictedBy, total)
		}
		for name, n := range a.EvictedBy {
			if exact := exactA[name] + exactB[name]; n > exact || n+a.EvictedByOthers < exact {
				t.Fatalf("seed %d: %s counts %d, exact %d, others %d", seed, name, n, exact, a.EvictedByOthers)
			}
		}
	}
}

// TrimLists bounds an entry's evicted_by at each cache with every line
// kept, and so does its top-level copy of the focus cache (which shares
// the cache's table) once SetFocus makes it again.
func TestTrimListsKeepsLines(t *testing.T) {
	ev := map[string]uint64{}
	var total uint64
	for i := range 3 * MaxEvictedBy {
		ev[fmt.Sprint("o", i)] = uint64(i + 1)
		total += uint64(i + 1)
	}
	p := &Profile{Version: Version, Options: Options{Where: true}, Caches: []CacheStats{{Name: "L1", Level: 1}},
		Objects: []Object{{Name: "a", Levels: map[string]*Stats{"L1": {Misses: 1, EvictedBy: ev}}}}}
	if err := p.SetFocus("L1"); err != nil {
		t.Fatal(err)
	}
	p.TrimLists()
	if err := p.SetFocus("L1"); err != nil {
		t.Fatal(err)
	}
	o := &p.Objects[0]
	for _, s := range []*Stats{o.Levels["L1"], &o.Stats} {
		if len(s.EvictedBy) != MaxEvictedBy || s.Evictions() != total {
			t.Errorf("%d objects and %d lines, want %d and %d", len(s.EvictedBy), s.Evictions(), MaxEvictedBy, total)
		}
	}
}

// Merging profiles keeps at most MaxReferences references, those with
// the most stall cycles, and adds the others up in OmittedReferences with
// those the profiles had left out already.
func TestMergeBoundsReferences(t *testing.T) {
	shard := func(first uint64) *Profile {
		p := &Profile{Version: Version, Options: Options{Where: true}, Focus: "L1", Caches: []CacheStats{{Name: "L1", Level: 1}},
			OmittedReferences: &OmittedReferences{References: 2, Levels: map[string]*Stats{"L1": {Misses: 1, StallCycles: 3}}}}
		for i := range uint64(MaxReferences) {
			pc := first + i
			p.References = append(p.References, Reference{PC: pc, Function: "f", Object: "o",
				Levels: map[string]*Stats{"L1": {Accesses: pc, Misses: pc % 7, StallCycles: pc % 7 * 10}}})
		}
		if err := p.SetFocus("L1"); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p, q := shard(0), shard(MaxReferences/2) // half of q's references are p's too
	var all []Reference
	for _, r := range p.References {
		all = append(all, r)
	}
	for _, r := range q.References[MaxReferences/2:] {
		all = append(all, r)
	}
	for j, r := range q.References[:MaxReferences/2] { // the references of both add up
		all[MaxReferences/2+j].Accesses += r.Accesses
		all[MaxReferences/2+j].Misses += r.Misses
		all[MaxReferences/2+j].StallCycles += r.StallCycles
	}
	slices.SortFunc(all, func(a, b Reference) int { return CompareReferences(&a, &b) })
	if err := p.Merge(q); err != nil {
		t.Fatal(err)
	}
	if len(p.References) != MaxReferences {
		t.Fatalf("%d references after the merge, want %d", len(p.References), MaxReferences)
	}
	for i, r := range p.References {
		if r.PC != all[i].PC || r.Misses != all[i].Misses || r.StallCycles != all[i].StallCycles {
			t.Fatalf("reference %d: pc %#x, %d misses, %d stall cycles; want pc %#x, %d, %d", i, r.PC, r.Misses, r.StallCycles,
				all[i].PC, all[i].Misses, all[i].StallCycles)
		}
	}
	var misses, stall uint64
	for _, r := range all[MaxReferences:] {
		misses += r.Misses
		stall += r.StallCycles
	}
	o := p.OmittedReferences
	if want := uint64(len(all) - MaxReferences + 4); o.References != want || o.Misses != misses+2 || o.StallCycles != stall+6 {
		t.Errorf("omitted: %d references, %d misses, %d stall cycles; want %d, %d, %d", o.References, o.Misses, o.StallCycles,
			want, misses+2, stall+6)
	}
}

// Merging profiles keeps at most MaxPairs pairs, those with the most
// stall cycles, and the pairs of the references listed; it adds the
// others up in OmittedPairs with those the profiles had left out already.
func TestMergeBoundsPairs(t *testing.T) {
	shard := func(first int) *Profile {
		p := &Profile{Version: Version, Options: Options{Where: true}, Focus: "L1", Caches: []CacheStats{{Name: "L1", Level: 1}},
			OmittedPairs: &OmittedPairs{Pairs: 3, Levels: map[string]*Stats{"L1": {Misses: 1, StallCycles: 5}}}}
		for i := range MaxPairs {
			k := uint64(first + i)
			p.Pairs = append(p.Pairs, Pair{Function: fmt.Sprintf("f%06d", k), Object: "o",
				Levels: map[string]*Stats{"L1": {Accesses: k + 1, Misses: k % 5, StallCycles: k % 5 * 10}}})
		}
		if err := p.SetFocus("L1"); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p, q := shard(0), shard(MaxPairs/2) // half of q's pairs are p's too
	// A reference of q's names its pair with the fewest stall cycles.
	last := slices.MaxFunc(q.Pairs, func(a, b Pair) int { return comparePairs(&a, &b) })
	q.References = []Reference{{PC: 1, Function: last.Function, Object: last.Object, Levels: map[string]*Stats{"L1": {Accesses: 1}}}}
	byName := map[string]Pair{}
	for _, s := range []*Profile{p, q} {
		for _, pr := range s.Pairs {
			a, ok := byName[pr.Function]
			if ok {
				pr.Accesses += a.Accesses
				pr.Misses += a.Misses
				pr.StallCycles += a.StallCycles
			}
			byName[pr.Function] = pr
		}
	}
	all := slices.Collect(maps.Values(byName))
	slices.SortFunc(all, func(a, b Pair) int { return comparePairs(&a, &b) })
	if err := p.Merge(q); err != nil {
		t.Fatal(err)
	}
	if len(p.Pairs) != MaxPairs+1 {
		t.Fatalf("%d pairs after the merge, want %d", len(p.Pairs), MaxPairs+1)
	}
	for i, pr := range p.Pairs[:MaxPairs] {
		if pr.Function != all[i].Function || pr.Misses != all[i].Misses || pr.StallCycles != all[i].StallCycles {
			t.Fatalf("pair %d: %s, %d misses, %d stall cycles; want %s, %d, %d", i, pr.Function, pr.Misses, pr.StallCycles,
				all[i].Function, all[i].Misses, all[i].StallCycles)
		}
	}
	if pr := p.Pairs[MaxPairs]; pr.Function != last.Function {
		t.Fatalf("pair %d is %s, want the reference's %s", MaxPairs, pr.Function, last.Function)
	}
	var misses, stall uint64
	for _, pr := range all[MaxPairs:] {
		if pr.Function != last.Function {
			misses += pr.Misses
			stall += pr.StallCycles
		}
	}
	o := p.OmittedPairs
	if want := uint64(len(all) - MaxPairs - 1 + 6); o.Pairs != want || o.Misses != misses+2 || o.StallCycles != stall+10 {
		t.Errorf("omitted: %d pairs, %d misses, %d stall cycles; want %d, %d, %d", o.Pairs, o.Misses, o.StallCycles,
			want, misses+2, stall+10)
	}
}

// SortStrides orders strides as a sort by its order does: most counted
// first, then by stride.
func TestSortStrides(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		s := make([]Stride, rng.IntN(16))
		for i := range s {
			s[i] = Stride{Bytes: int64(rng.IntN(40)) - 20, Count: rng.Uint64N(4)}
		}
		want := slices.Clone(s)
		slices.SortFunc(want, func(a, b Stride) int { return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Bytes, b.Bytes)) })
		if SortStrides(s); !slices.Equal(s, want) {
			t.Fatalf("SortStrides: %v, want %v", s, want)
		}
	}
}
