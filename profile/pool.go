package profile

import (
	"cmp"
	"slices"
	"sync"
)

// HotShare is the share of a cache's stall cycles at which a small global
// variable is hot: PoolColdGlobals keeps it under its own name.
const HotShare = 0.01

// PoolColdGlobals shows the small global variables (those with a Pool)
// that are cold, under HotShare of the stall cycles at every cache, in
// their pools, and keeps the hot ones under their own names, so that a
// hot small variable (a falsely shared counter, a lock) is named and the
// many cold ones do not crowd the views. A pool adds up its variables'
// counters entry by entry (objects, pairs, references, evicted-by and
// sharing tables, NUMA entries): its totals are exact; its references'
// evictor and sharing lists are those of its variables merged (each kept
// its most frequent entries); its size is the bytes of the variables in
// it that the run touched. It returns how many variables it pooled.
func (p *Profile) PoolColdGlobals() (int, error) {
	total := map[string]uint64{}
	for i := range p.Objects {
		for name, s := range p.Objects[i].Levels {
			total[name] += s.StallCycles
		}
	}
	hot := func(o *Object) bool {
		for name, s := range o.Levels {
			if t := total[name]; t > 0 && float64(s.StallCycles) >= HotShare*float64(t) {
				return true
			}
		}
		return false
	}
	names := map[string]string{}
	size := map[string]uint64{}
	for i := range p.Objects {
		o := &p.Objects[i]
		if o.Pool != "" && !hot(o) {
			names[o.Name] = o.Pool
			size[o.Pool] += o.Size
		}
	}
	if len(names) == 0 {
		return 0, nil
	}
	p.renameAll(names, nil)
	// Only the entries of pools can have come to share their keys: they
	// are added up, made settled (focus, sharing lists) and put back in
	// the order of the others, which stays.
	p.Objects = mergeEntries(nil, p.Objects, new(map[string]int), true, addObject)
	for i := range p.Objects {
		if o := &p.Objects[i]; size[o.Name] > 0 {
			o.Size, o.Pool = size[o.Name], ""
		}
		p.settle(&p.Objects[i])
	}
	sortEntries(p.Objects, compareObjects)
	pools := map[string]bool{}
	for _, pool := range names {
		pools[pool] = true
	}
	p.Pairs = mergePooled(p.Pairs, func(pr *Pair) bool { return pools[pr.Object] }, func(prs []Pair) []Pair {
		prs = mergeEntries(nil, prs, new(map[[2]string]int), true, addPair)
		for i := range prs {
			p.settle(&prs[i])
		}
		return prs
	}, comparePairs)
	p.References = mergePooled(p.References, func(r *Reference) bool { return pools[r.Object] }, func(rs []Reference) []Reference {
		rs = mergeEntries(nil, rs, new(map[referenceKey]int), true, addReference)
		for i := range rs {
			p.settle(&rs[i])
		}
		return rs
	}, CompareReferences)
	if n := p.Numa; n != nil {
		pooled := func(e *NumaEntry) bool { return pools[e.Name] }
		merge := func(es []NumaEntry) []NumaEntry { return mergeNumaEntries(nil, es) }
		n.Objects = mergePooled(n.Objects, pooled, merge, compareNumaEntries)
		n.Pairs = mergePooled(n.Pairs, pooled, merge, compareNumaEntries)
	}
	return len(names), nil
}

// settle makes an entry whose counters were added up whole again: its
// evictor lists in order, its sharing lists and evicted_by bounded, its
// top-level counters those of the focus cache.
func (p *Profile) settle(e levelled) {
	sortEvictorLists(e)
	_, levels := e.parts()
	for _, s := range levels {
		s.trimLists()
	}
	focusOn(e, p.Focus) // (the top-level counters are a copy)
}

// mergePooled merges (with merge) the entries of es that pooled says are
// of a pool, which alone may have come to share their keys, and keeps the
// others as they are; then orders them all by compare, the others being
// in that order already (unless the profile was not sorted).
func mergePooled[T any](es []T, pooled func(*T) bool, merge func([]T) []T, compare func(a, b *T) int) []T {
	var in []T
	keep := make([]int32, 0, len(es)) // the others, by index
	for i := range es {
		if pooled(&es[i]) {
			in = append(in, es[i])
		} else {
			keep = append(keep, int32(i))
		}
	}
	if len(in) == 0 {
		return es
	}
	in = merge(in)
	sortEntries(in, compare)
	out := make([]T, 0, len(keep)+len(in))
	for k := 1; k < len(keep); k++ {
		if compare(&es[keep[k]], &es[keep[k-1]]) < 0 {
			for _, i := range keep {
				out = append(out, es[i])
			}
			out = append(out, in...)
			sortEntries(out, compare)
			return out
		}
	}
	for len(keep) > 0 && len(in) > 0 {
		if compare(&in[0], &es[keep[0]]) < 0 {
			out, in = append(out, in[0]), in[1:]
		} else {
			out, keep = append(out, es[keep[0]]), keep[1:]
		}
	}
	for _, i := range keep {
		out = append(out, es[i])
	}
	return append(out, in...)
}

// sortEntries sorts es by compare, keeping the order of equal ones, and
// moves each entry once: the entries of a profile are large, and sorting
// them in place would copy them at every step. Entries already in order
// (as the engine makes references) are only checked.
func sortEntries[T any](es []T, compare func(a, b *T) int) {
	if inOrder(es, compare) {
		return
	}
	order := make([]int32, len(es))
	for i := range order {
		order[i] = int32(i)
	}
	// (Ties in their first order: what a stable sort gives, sooner.)
	slices.SortFunc(order, func(i, j int32) int { return cmp.Or(compare(&es[i], &es[j]), cmp.Compare(i, j)) })
	arrange(es, func(k int) int32 { return order[k] })
}

// arrange puts es in a new order, moving each entry once: the entry at k
// is the one that was at from(k).
func arrange[T any](es []T, from func(k int) int32) {
	sorted := make([]T, len(es))
	for k := range sorted {
		sorted[k] = es[from(k)]
	}
	copy(es, sorted)
}

// renameAll renames objects and functions, old name → new name, wherever
// the profile names them (no new name may be an old one), and makes the
// entries' top-level counters again as a copy of those of the focus
// cache. Entries that come to share a name are not merged
// (PoolColdGlobals merges them), except in evicted-by tables.
func (p *Profile) renameAll(objs, funcs map[string]string) {
	newNames := map[string]bool{}
	for _, n := range objs {
		newNames[n] = true
	}
	// Most names are neither old nor new: those of another length are
	// not looked up.
	oldLen, newLen := keyLengths(objs), keyLengths(newNames)
	isOld := func(s string) bool { return len(s) < len(oldLen) && oldLen[len(s)] }
	// obj renames an object and reports whether its name is a new one
	// (the entry may then be the same as another).
	obj := func(s *string) bool {
		if isOld(*s) {
			if n, ok := objs[*s]; ok {
				*s = n
			}
		}
		return len(*s) < len(newLen) && newLen[len(*s)] && newNames[*s]
	}
	fn := func(s *string) {
		if n, ok := funcs[*s]; ok {
			*s = n
		}
	}
	stats := func(s *Stats) {
		type count struct {
			name  string
			lines uint64
		}
		var moved []count // (added after the loop: a new name may be an old one too)
		for old, n := range s.EvictedBy {
			if !isOld(old) {
				continue
			}
			if new, ok := objs[old]; ok {
				delete(s.EvictedBy, old)
				moved = append(moved, count{new, n})
			}
		}
		for _, m := range moved {
			s.EvictedBy[m.name] += m.lines
		}
		renamed := false
		for i := range s.Evictors {
			renamed = obj(&s.Evictors[i].Object) || renamed
		}
		if renamed { // entries may now be the same
			s.Evictors = settledEvictors(s.Evictors)
		}
		for _, sh := range []*[]Sharing{&s.InvalidatedBy, &s.Invalidated} {
			renamed := false
			for i := range *sh {
				renamed = obj(&(*sh)[i].Object) || renamed
			}
			if renamed {
				var merged []Sharing
				AddSharing(&merged, *sh)
				SortSharing(merged)
				*sh = merged
			}
		}
	}
	for i := range p.Functions {
		fn(&p.Functions[i].Name)
	}
	for i := range p.Objects {
		o := &p.Objects[i]
		if n, ok := objs[o.Name]; ok {
			if o.FullName == o.Name {
				o.FullName = n
			}
			o.Name = n
		}
	}
	for i := range p.Pairs {
		fn(&p.Pairs[i].Function)
		obj(&p.Pairs[i].Object)
	}
	for i := range p.Lines {
		fn(&p.Lines[i].Function)
	}
	if t := p.CallTree; t != nil {
		for i := range t.Nodes {
			fn(&t.Nodes[i].Function)
		}
	}
	for i := range p.References {
		fn(&p.References[i].Function)
		obj(&p.References[i].Object)
	}
	if n := p.Numa; n != nil {
		for i := range n.Objects {
			obj(&n.Objects[i].Name)
		}
		for i := range n.Pairs {
			fn(&n.Pairs[i].Function)
			obj(&n.Pairs[i].Name)
		}
		for i := range n.Hints {
			obj(&n.Hints[i].Object)
		}
	}
	p.forLevelled(func(e levelled) {
		_, levels := e.parts()
		for _, s := range levels {
			stats(s)
		}
		focusOn(e, p.Focus) // (the top-level counters: a copy, made again)
	})
}

// SortWhere puts the where-and-why entries in the profile's order: most
// stall cycles first (functions with their compute and synchronization
// cycles), then by name.
func (p *Profile) SortWhere() {
	var wg sync.WaitGroup // (the lists apart, on every CPU)
	wg.Go(func() {
		sortEntries(p.Functions, func(a, b *Function) int {
			return cmp.Or(cmp.Compare(b.StallCycles+b.ComputeCycles+b.SyncCycles, a.StallCycles+a.ComputeCycles+a.SyncCycles),
				ByStall(&a.Stats, &b.Stats), cmp.Compare(a.Name, b.Name))
		})
		sortEntries(p.Objects, compareObjects)
	})
	wg.Go(func() { sortByStall(p.Pairs, func(a *Pair) *Stats { return &a.Stats }, comparePairKeys) })
	wg.Go(func() {
		sortByStall(p.Lines, func(a *Line) *Stats { return &a.Stats }, func(a, b *Line) int {
			return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Function, b.Function))
		})
	})
	sortReferences(p.References)
	wg.Wait()
}

// inOrder reports whether es is sorted by compare.
func inOrder[T any](es []T, compare func(a, b *T) int) bool {
	for i := 1; i < len(es); i++ {
		if compare(&es[i-1], &es[i]) > 0 {
			return false
		}
	}
	return true
}

// sortByStall sorts es ByStall of their counters (stats), then by then,
// as sortEntries would, but first on a compact copy of the counters: the
// entries themselves are compared only when those tie.
func sortByStall[T any](es []T, stats func(*T) *Stats, then func(a, b *T) int) {
	if inOrder(es, func(a, b *T) int { return cmp.Or(ByStall(stats(a), stats(b)), then(a, b)) }) {
		return
	}
	type key struct {
		stall, misses, accesses uint64
		i                       int32
	}
	keys := make([]key, len(es))
	for i := range es {
		s := stats(&es[i])
		keys[i] = key{s.StallCycles, s.Misses, s.Accesses, int32(i)}
	}
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(b.stall, a.stall), cmp.Compare(b.misses, a.misses), cmp.Compare(b.accesses, a.accesses),
			then(&es[a.i], &es[b.i]), cmp.Compare(a.i, b.i)) // (ties in their first order, as a stable sort)
	})
	arrange(es, func(k int) int32 { return keys[k].i })
}

// compareObjects orders objects as a profile lists them: ByStall, then
// by name.
func compareObjects(a, b *Object) int {
	return cmp.Or(ByStall(&a.Stats, &b.Stats), cmp.Compare(a.Name, b.Name))
}

// comparePairs orders pairs as a profile lists them: ByStall, then by
// their keys.
func comparePairs(a, b *Pair) int { return cmp.Or(ByStall(&a.Stats, &b.Stats), comparePairKeys(a, b)) }

// comparePairKeys orders pairs by their keys: function, then object.
func comparePairKeys(a, b *Pair) int {
	return cmp.Or(cmp.Compare(a.Function, b.Function), cmp.Compare(a.Object, b.Object))
}

// keyLengths returns which lengths the keys of m have: lengths[n] is set
// when a key has n bytes.
func keyLengths[V any](m map[string]V) []bool {
	var lengths []bool
	for k := range m {
		if len(k) >= len(lengths) {
			lengths = append(lengths, make([]bool, len(k)+1-len(lengths))...)
		}
		lengths[len(k)] = true
	}
	return lengths
}
