package sim

import (
	"cmp"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"sync"

	"github.com/memspy/memspy/attrib"
	"github.com/memspy/memspy/profile"
)

// whereProfile fills the where-and-why part of p from the counters kept
// per site and per calling context: references, then pairs, objects and
// functions adding them up, named through the Symbolizer (or by address
// without one).
//
// The engine counts per site and per calling context (refTable), so
// that this work follows their number, not that of the access points
// (several times more). Every site is given, once, the dense indices of
// the entries it counts in (its function, pair, reference and line); the
// counters of the sites and of the contexts are then added, level by
// level, into dense tables of plain sums, and only the entries of the
// profile are made into profile.Stats. Functions add up their pairs
// (self) and the calling contexts under them (inclusive), objects their
// pairs. Which
// references are listed is settled before their counters are added up:
// beyond profile.MaxReferences, those that come last in the profile's
// order are left out, added up in p.OmittedReferences and in their lines,
// and their evictor lists are never made. Pairs beyond profile.MaxPairs
// (but those of the references listed) are left out likewise, once
// their counters are added up (their functions and objects count them),
// into p.OmittedPairs.
func (h *Hierarchy) whereProfile(p *profile.Profile) {
	at := h.attr
	if at.released {
		panic("sim: the where-and-why profile of a Hierarchy is made once")
	}
	p.Options.Where = true
	p.Options.MissOnly = at.missOnly
	for _, m := range at.modules {
		p.Modules = append(p.Modules, profile.Module{Path: m.path, TextAddr: m.textAddr, TextSize: m.size})
	}
	for i := range p.Caches {
		p.Caches[i].Causes = &profile.Causes{}
	}
	w := h.newWhereBuilder()
	w.mark()
	var keep func(int32) bool
	if at.missOnly {
		// Only the bins of sites with counters: the others are those of
		// hits that took the engine's slow path, which counted nothing
		// (and a tracer that simulates the first caches does not tell of
		// them).
		keep = w.anywhere
	}
	w.nm = h.newNamer(keep)
	w.index()
	w.choose(p.DefaultFocus())
	// Tables let go are collected at once when large: their memory then
	// holds what is made next (the sums, the entries), which would
	// otherwise come on top of them, the collector's own pace being
	// later than that.
	collect := func() {
		if len(at.sites)+len(at.code.Contexts()) >= collectAfterRelease {
			runtime.GC()
		}
	}
	// The strides and the evictions are added up first, on every CPU,
	// and their tables let go; then the counters, and every table.
	var wg sync.WaitGroup
	wg.Go(w.countStrides)
	wg.Go(w.evictions)
	wg.Wait()
	at.releaseStridesAndEvictions(h.levels)
	collect()
	w.count(p)
	w.lineUse = h.lineUse(w.nm)
	at.release(h.levels)
	collect()
	w.choosePairs(p.DefaultFocus())
	counts := w.countingContexts()
	wg.Go(func() {
		p.CallTree = w.callTree(counts) // (before functionEntries adds up the contexts)
		p.Functions = w.functionEntries(counts)
	})
	wg.Go(func() { p.Pairs = w.pairEntries() })
	wg.Go(func() { p.Objects = w.objectEntries() })
	wg.Go(func() { p.References = w.referenceEntries() })
	p.Lines = w.lineEntries()
	wg.Wait()
	p.OmittedReferences = w.omittedEntry()
	p.OmittedPairs = w.omittedPairsEntry()
	p.EvictorsError = w.evictorsError
	if h.timing != nil {
		p.Sync = h.syncObjects(w.nm)
	}
	p.Numa = h.numaStats(w.nm)
	p.TrimLists()
	if err := p.SetFocus(""); err != nil {
		panic(err) // the profile's own caches
	}
	p.SortWhere()
}

// collectAfterRelease is the number of sites and calling contexts from
// which the end of a --where run has the engine's tables collected once
// it lets them go (some 500 bytes each, and more: hundreds of
// megabytes). Below it, the collector's own pace is left alone: the
// engines of a process tree's many small programs would each make every
// engine of the tree be scanned.
const collectAfterRelease = 1 << 18

// whereBuilder makes the where-and-why part of a profile (whereProfile).
type whereBuilder struct {
	h  *Hierarchy
	nm *namer
	// names are the caches' names in level order, each once: the copies
	// of a private cache share one. By level: nameOf is its index in
	// names, pen the cycles a miss of each kind waits there.
	names  []string
	nameOf []int
	pen    [][numAccessKinds]uint64
	// present holds, by level, the sites that have counters there, and
	// ctxPresent the calling contexts: with counts, lines still resident
	// that their access points filled, lines of theirs that others
	// evicted, invalidations.
	present, ctxPresent []bitset

	// The entries, by index.
	funcs   []*profile.Function // as the namer gives them (not to be changed), unique by name
	funcIdx map[string]int32
	procFn  []int32 // by procedure: its function, -1 until known
	pairs   []pairKey
	heads   []refHead
	lines   []lineKey
	// By site: its function, pair and reference (-1: none, for a site
	// without a PC or without counters).
	fnOf, pairOf, headOf []int32
	lineOf               []int32 // by reference: its line, -1 when its source line is unknown
	refOf                []int32 // by reference: its place among those listed, -1 when left out
	listed               int     // references listed
	pairRow              []int32 // by pair: its place among those listed, -1 when left out
	listedPairs          int     // pairs listed

	// The sums of the entries: pairs; non-root calling contexts; the
	// inclusive counters of root-context access points, by function;
	// references listed; lines; the references left out; the pairs left
	// out.
	pairSums, ctxSums, rootSums, refSums, lineSums, omitted, omittedPairs sumTable
	pairStrides, refStrides                                               []*profile.Strides
	// evictedBy counts, by cache name, the lines of each pair's fills
	// that each data bin's fills evicted: (pair, bin) → lines.
	evictedBy []pairCounts
	// refEvictors are the evictor lists of the references listed, by
	// reference and cache name; evictorsError the most their counts may
	// be too high (evictorTable).
	refEvictors   [][]profile.RefEvictor
	evictorsError uint64
	// lineUse is the objects' line use by name (lineUse).
	lineUse map[string]map[string][]uint64
}

// pairKey identifies a pair of the profile: its function's index and its
// object's data bin (a bin has a name of its own).
type pairKey struct{ fn, bin int32 }

// refHead is a reference of the profile: its key and its place in the
// source (the counters that order it are a headRank apart).
type refHead struct {
	pc                     uint64
	fn                     int32
	bin                    int32
	file                   string
	line, column, position int
}

// headRank holds the counters of a reference (or a pair) that order it
// among the others, as the profile's order sees them (profile.ByStall): apart from
// the rest of it, so that adding them up touches less memory.
type headRank struct{ stall, misses, accesses uint64 }

// compare orders the counters of r before s's as profile.ByStall does:
// most stall cycles first, then most misses, then most accesses.
func (r *headRank) compare(s *headRank) int {
	return cmp.Or(cmp.Compare(s.stall, r.stall), cmp.Compare(s.misses, r.misses), cmp.Compare(s.accesses, r.accesses))
}

// entryKey identifies a reference of the profile, its PC, function and
// data bin (access points of one instruction in different calling
// contexts of one function add up), or with PC 0 a pair.
type entryKey struct {
	pc      uint64
	fn, bin int32
}

// hash spreads k over 64 bits.
func (k entryKey) hash() uint64 {
	return (k.pc ^ uint64(uint32(k.fn))<<40 ^ uint64(uint32(k.bin))<<20) * 0x9e3779b97f4a7c15
}

// lineKey identifies a source line of a function.
type lineKey struct {
	file string
	line int
	fn   string
}

// newWhereBuilder starts the where-and-why part of a profile (its namer
// is made once mark has found which sites have counters).
func (h *Hierarchy) newWhereBuilder() *whereBuilder {
	w := &whereBuilder{h: h, funcIdx: map[string]int32{}}
	for _, l := range h.levels {
		j := slices.Index(w.names, l.spec.Name)
		if j < 0 {
			j = len(w.names)
			w.names = append(w.names, l.spec.Name)
		}
		w.nameOf = append(w.nameOf, j)
		var pen [numAccessKinds]uint64
		for k := range pen {
			pen[k] = h.penalty(l, k)
		}
		w.pen = append(w.pen, pen)
	}
	w.procFn = make([]int32, len(h.attr.code.Procs()))
	for i := range w.procFn {
		w.procFn[i] = -1
	}
	return w
}

// mark finds the sites and the calling contexts that have counters at
// each level: counts, lines still resident that their access points
// filled, lines of theirs that others evicted, invalidations.
func (w *whereBuilder) mark() {
	at := w.h.attr
	for _, l := range w.h.levels {
		la, sites, ctxs := l.attr, newBitset(len(at.sites)), newBitset(len(at.code.Contexts()))
		la.refs.sites.mark(sites)
		for c := range int32(len(at.code.Contexts())) {
			if r := la.refs.ctxs.find(int(c)); r != nil && r.counts() {
				ctxs.set(c)
			}
		}
		has := func(p point) {
			sites.set(p.site())
			ctxs.set(p.ctx())
		}
		for id := range la.refs.sharing {
			has(id)
		}
		l.c.ForEachValid(func(slot int) {
			if la.slots[slot].demand {
				has(la.slots[slot].fill)
			}
		})
		for _, e := range la.refs.evictedBins.pairs {
			if e.n != 0 {
				sites.set(e.a)
			}
		}
		ctxs.or(la.refs.evictedCtxs)
		w.present, w.ctxPresent = append(w.present, sites), append(w.ctxPresent, ctxs)
	}
}

// anywhere reports whether site id has counters at any level.
func (w *whereBuilder) anywhere(id int32) bool {
	for _, has := range w.present {
		if has.has(id) {
			return true
		}
	}
	return false
}

// function returns the index of the function of site k.
func (w *whereBuilder) function(k siteKey, pcFn map[uint64]int32) int32 {
	proc := max(k.proc, attrib.UnknownProc)      // (the root context's procedure)
	if proc == attrib.UnknownProc && k.pc != 0 { // named from the PC
		f, ok := pcFn[k.pc]
		if !ok {
			f = w.funcOf(w.nm.function(k.pc, proc))
			pcFn[k.pc] = f
		}
		return f
	}
	return w.procFunc(proc)
}

// procFunc returns the index of procedure proc's function.
func (w *whereBuilder) procFunc(proc int32) int32 {
	if w.procFn[proc] < 0 {
		w.procFn[proc] = w.funcOf(w.nm.procs[proc])
	}
	return w.procFn[proc]
}

// funcOf returns the index of the function t names.
func (w *whereBuilder) funcOf(t *profile.Function) int32 {
	f, ok := w.funcIdx[t.Name]
	if !ok {
		f = int32(len(w.funcs))
		w.funcIdx[t.Name] = f
		w.funcs = append(w.funcs, t)
	}
	return f
}

// index gives every site with counters its function, pair and
// reference, and every reference its line.
func (w *whereBuilder) index() {
	at := w.h.attr
	n := len(at.sites)
	w.fnOf, w.pairOf, w.headOf = make([]int32, n), make([]int32, n), make([]int32, n)
	pcFn := map[uint64]int32{}
	for id, key := range at.sites {
		w.fnOf[id], w.pairOf[id], w.headOf[id] = -1, -1, -1
		if w.anywhere(int32(id)) {
			w.fnOf[id] = w.function(key, pcFn)
		}
	}
	// The pairs are found while the references are (on two CPUs).
	var wg sync.WaitGroup
	wg.Go(func() {
		var pairIdx keyTable[entryKey]
		for id, key := range at.sites {
			if f := w.fnOf[id]; f >= 0 {
				pr := pairIdx.id(entryKey{0, f, key.bin}, len(w.pairs))
				if int(pr) == len(w.pairs) {
					w.pairs = append(w.pairs, pairKey{f, key.bin})
				}
				w.pairOf[id] = pr
			}
		}
	})
	w.findHeads()
	wg.Wait()
	// The references of one instruction in one function (of different
	// objects) are on one line: found by PC first, their line by name once.
	type instr struct {
		pc uint64
		fn int32
	}
	byPC, lineIdx := map[instr]int32{}, map[lineKey]int32{}
	w.lineOf = make([]int32, len(w.heads))
	for i := range w.heads {
		hd := &w.heads[i]
		w.lineOf[i] = -1
		if hd.file == "" || hd.line <= 0 {
			continue
		}
		ln, ok := byPC[instr{hd.pc, hd.fn}]
		if !ok {
			lk := lineKey{hd.file, hd.line, w.funcs[hd.fn].Name}
			if ln, ok = lineIdx[lk]; !ok {
				ln = int32(len(w.lines))
				lineIdx[lk] = ln
				w.lines = append(w.lines, lk)
			}
			byPC[instr{hd.pc, hd.fn}] = ln
		}
		w.lineOf[i] = ln
	}
}

// findHeads gives every site with counters and a PC its reference, in
// two halves of the references (by their key's hash) on two CPUs, one
// after the other among the references; and every reference its place
// in the source.
func (w *whereBuilder) findHeads() {
	refs := w.h.attr.sites
	var halves [2][]entryKey // the keys of each half's references, in order
	var wg sync.WaitGroup
	for half := range halves {
		wg.Go(func() {
			var idx keyTable[entryKey]
			idx.reserve(len(refs) / 2) // (about as many as the half's sites)
			for id, key := range refs {
				f := w.fnOf[id]
				if f < 0 || key.pc == 0 {
					continue
				}
				k := entryKey{key.pc, f, key.bin}
				if int(k.hash()>>63) != half {
					continue
				}
				hd := idx.id(k, len(halves[half]))
				if int(hd) == len(halves[half]) {
					halves[half] = append(halves[half], k)
				}
				if half == 1 {
					hd = -2 - hd // (its place after the first half's, once known)
				}
				w.headOf[id] = hd
			}
		})
	}
	wg.Wait()
	first := int32(len(halves[0]))
	for id, hd := range w.headOf {
		if hd < -1 {
			w.headOf[id] = first + (-2 - hd)
		}
	}
	w.heads = make([]refHead, 0, len(halves[0])+len(halves[1]))
	for _, keys := range halves {
		for _, k := range keys {
			src := w.nm.code(k.pc) // (kept: an instruction is in several references, 5-13 on python3)
			w.heads = append(w.heads, refHead{pc: k.pc, fn: k.fn, bin: k.bin, file: src.File, line: src.Line, column: src.Column})
		}
	}
}

// choose settles which references the profile lists, with focus as its
// focus cache: all, or the first profile.MaxReferences in its order; and
// numbers the references of each source line (positions).
func (w *whereBuilder) choose(focus string) {
	rank := make([]headRank, len(w.heads))
	var wg sync.WaitGroup // (on two CPUs, each adding up half the references)
	for half := range int32(2) {
		wg.Go(func() { w.rankHalf(rank, half, focus) })
	}
	wg.Wait()
	// The references in the profile's order (as far as these counters
	// tell it: profile.CompareReferences), the first MaxReferences listed
	// in that order, so that the entries come sorted.
	order := make([]int32, len(w.heads))
	for i := range order {
		order[i] = int32(i)
	}
	fnRank, binRank := w.nameRanks()
	compare := func(i, j int32) int {
		a, b := &w.heads[i], &w.heads[j]
		if c := cmp.Or(rank[i].compare(&rank[j]), cmp.Compare(a.pc, b.pc)); c != 0 {
			return c
		}
		return cmp.Or(cmp.Compare(fnRank[a.fn], fnRank[b.fn]), cmp.Compare(binRank[a.bin], binRank[b.bin]))
	}
	w.listed = min(len(order), profile.MaxReferences)
	selectFirst(order, w.listed, compare)
	slices.SortFunc(order[:w.listed], compare)
	w.refOf = make([]int32, len(w.heads))
	for k, i := range order {
		w.refOf[i] = int32(k)
		if k >= w.listed {
			w.refOf[i] = -1
		}
	}
	w.positions()
}

// rankHalf adds up into rank the counters that order the references of
// one half (half 0 or 1 of their indices), focus being the focus cache.
func (w *whereBuilder) rankHalf(rank []headRank, half int32, focus string) {
	missOnly, mid := w.h.attr.missOnly, int32(len(rank)/2)
	for i, l := range w.h.levels {
		la, has, pen, isFocus := l.attr, w.present[i], &w.pen[i], l.spec.Name == focus
		for id, hd := range w.headOf {
			if hd < 0 || (hd < mid) != (half == 0) || !has.has(int32(id)) {
				continue
			}
			r := la.refs.sites.find(int32(id))
			if r == nil {
				continue
			}
			rk := &rank[hd]
			for k := range numAccessKinds {
				rk.stall += r.miss[k] * pen[k]
			}
			if isFocus {
				rk.misses += r.miss[kIFetch] + r.miss[kRead] + r.miss[kWrite]
				if !missOnly {
					rk.accesses += r.acc[kIFetch] + r.acc[kRead] + r.acc[kWrite]
				}
			}
		}
	}
}

// selectFirst rearranges s so that its first k elements are the k least
// by compare, a total order, in no particular order (quickselect: only
// those k need sorting).
func selectFirst[E any](s []E, k int, compare func(a, b E) int) {
	lo, hi := 0, len(s) // s[:lo] are among the k least, s[hi:] are not
	for lo < k && k < hi {
		// The median of the first, middle and last as the pivot, at the end.
		m := lo + (hi-lo)/2
		if compare(s[m], s[lo]) < 0 {
			s[m], s[lo] = s[lo], s[m]
		}
		if compare(s[hi-1], s[m]) < 0 {
			s[hi-1], s[m] = s[m], s[hi-1]
			if compare(s[m], s[lo]) < 0 {
				s[m], s[lo] = s[lo], s[m]
			}
		}
		s[m], s[hi-1] = s[hi-1], s[m]
		pivot, at := s[hi-1], lo
		for i := lo; i < hi-1; i++ {
			if compare(s[i], pivot) < 0 {
				s[at], s[i] = s[i], s[at]
				at++
			}
		}
		s[at], s[hi-1] = s[hi-1], s[at] // the pivot, in its place in order
		if at < k {
			lo = at + 1
		} else {
			hi = at
		}
	}
}

// nameRanks returns the place of each function's name among the
// functions' names in order, by index, and of each data bin's name among
// the bins' names, by bin: comparing them compares the names.
func (w *whereBuilder) nameRanks() (fnRank []int32, binRank map[int32]int32) {
	byName := make([]int32, len(w.funcs))
	for i := range byName {
		byName[i] = int32(i)
	}
	slices.SortFunc(byName, func(a, b int32) int { return cmp.Compare(w.funcs[a].Name, w.funcs[b].Name) })
	fnRank = make([]int32, len(w.funcs))
	for r, f := range byName {
		fnRank[f] = int32(r)
	}
	bins := slices.SortedFunc(maps.Keys(w.nm.bins), func(a, b int32) int { return cmp.Compare(w.nm.bins[a].Name, w.nm.bins[b].Name) })
	binRank = make(map[int32]int32, len(bins))
	for r, b := range bins {
		binRank[b] = int32(r)
	}
	return fnRank, binRank
}

// positions numbers the references of each source line by column, then
// PC.
func (w *whereBuilder) positions() {
	byLine := map[lineKey][]*refHead{}
	for i := range w.heads {
		r := &w.heads[i]
		if r.file != "" && r.line > 0 {
			k := lineKey{r.file, r.line, ""}
			byLine[k] = append(byLine[k], r)
		}
	}
	for _, rs := range byLine {
		// (References of one PC, in several functions or objects, have
		// one column and one position: their order among themselves does
		// not matter.)
		slices.SortFunc(rs, func(a, b *refHead) int { return cmp.Or(cmp.Compare(a.column, b.column), cmp.Compare(a.pc, b.pc)) })
		pos := 0
		for i, r := range rs {
			if i > 0 && r.pc != rs[i-1].pc {
				pos++ // the same instruction in several functions or objects keeps one position
			}
			r.position = pos
		}
	}
}

// targets returns the sums at cache name j that site id counts in: its
// pair's, in the root context its function's inclusive ones, its
// reference's (or the references left out) and its line's.
func (w *whereBuilder) targets(id int32, j int, buf *[5]*sums) []*sums {
	out := buf[:0]
	out = append(out, w.pairSums.at(w.pairOf[id], j))
	if w.h.attr.sites[id].proc == rootProc {
		out = append(out, w.rootSums.at(w.fnOf[id], j))
	}
	if hd := w.headOf[id]; hd >= 0 {
		if ref := w.refOf[hd]; ref >= 0 {
			out = append(out, w.refSums.at(ref, j))
		} else {
			out = append(out, w.omitted.at(0, j))
		}
		if ln := w.lineOf[hd]; ln >= 0 {
			out = append(out, w.lineSums.at(ln, j))
		}
	}
	return out
}

// apTargets returns the sums at cache name j that access point p counts
// in: its site's targets and, outside the root context, its calling
// context's.
func (w *whereBuilder) apTargets(p point, j int, buf *[5]*sums) []*sums {
	out := w.targets(p.site(), j, buf)
	if c := p.ctx(); c != attrib.RootContext {
		out = append(out, w.ctxSums.at(c, j))
	}
	return out
}

// count adds up the counters of every site and calling context with any,
// level by level, with the byte use of the lines still resident as if they left
// now, and the causes of each cache's misses into p's caches; the caches
// of different names on every CPU.
func (w *whereBuilder) count(p *profile.Profile) {
	at, names := w.h.attr, len(w.names)
	w.pairSums = newSumTable(len(w.pairs), names)
	w.ctxSums = newSumTable(len(at.code.Contexts()), names)
	w.rootSums = newSumTable(len(w.funcs), names)
	w.refSums = newSumTable(w.listed, names)
	w.lineSums = newSumTable(len(w.lines), names)
	w.omitted = newSumTable(1, names)
	var wg sync.WaitGroup
	for j := range names {
		wg.Go(func() {
			for i, l := range w.h.levels {
				if w.nameOf[i] == j {
					w.countLevel(i, p.Caches[l.cache].Causes)
				}
			}
		})
	}
	wg.Wait()
}

// countLevel adds up the counters of every site and calling context
// with any at level i (whose sums only it changes), and the causes of
// their misses into causes.
func (w *whereBuilder) countLevel(i int, causes *profile.Causes) {
	at, l := w.h.attr, w.h.levels[i]
	la, pen, j := l.attr, &w.pen[i], w.nameOf[i]
	// (A site or context counted here but with no counters may have
	// filled lines in a warm-up.)
	stats := func(r *refStats) (*refStats, uint64) {
		if r == nil {
			r = &noRefStats
		}
		var stall uint64
		for k := range numAccessKinds {
			stall += r.miss[k] * pen[k]
		}
		return r, stall
	}
	var buf [5]*sums
	for id := range int32(len(at.sites)) {
		if w.present[i].has(id) {
			r, stall := stats(la.refs.sites.find(id))
			causes.Add(r.causes())
			for _, s := range w.targets(id, j, &buf) {
				s.addCounts(r, stall)
			}
		}
	}
	for c := range int32(len(at.code.Contexts())) {
		if c != attrib.RootContext && w.ctxPresent[i].has(c) {
			w.ctxSums.at(c, j).addCounts(stats(la.refs.ctxs.find(int(c))))
		}
	}
	// The invalidation lists, by access point (site, then context) in order.
	for _, id := range slices.Sorted(maps.Keys(la.refs.sharing)) {
		by, of := sharingLists(la.refs.sharing[id], w.nm)
		for _, s := range w.apTargets(id, j, &buf) {
			s.addSharing(by, of)
		}
	}
	l.c.ForEachValid(func(slot int) {
		if !la.slots[slot].demand {
			return
		}
		used := la.used(slot)
		for _, s := range w.apTargets(la.slots[slot].fill, j, &buf) {
			s.used += used
			s.fetched += l.lineSize
		}
	})
}

// countStrides adds up the strides of the pairs and of the references
// listed, in site order.
func (w *whereBuilder) countStrides() {
	at := w.h.attr
	pairs, refs := make([]strideSum, len(w.pairs)), make([]strideSum, w.listed)
	var buf [strideSlots]profile.Stride
	for site := range int32(len(at.sites)) {
		pr := w.pairOf[site]
		if pr < 0 {
			continue
		}
		samples, top := at.strideSummary(site, &buf)
		if samples == 0 {
			continue
		}
		pairs[pr].add(samples, top)
		if hd := w.headOf[site]; hd >= 0 && w.refOf[hd] >= 0 {
			refs[w.refOf[hd]].add(samples, top)
		}
	}
	w.pairStrides, w.refStrides = stridesOf(pairs), stridesOf(refs)
}

// strideSum adds up stride summaries as profile.Strides.Add does, the
// most counted profile.MaxStrides kept after each addition, without
// making a profile.Strides for each.
type strideSum struct {
	samples uint64
	added   bool // a summary was added
	n       int  // strides in top
	top     [profile.MaxStrides]profile.Stride
}

// add adds a summary: samples strides counted, top the most counted
// (distinct strides, at most profile.MaxStrides).
func (s *strideSum) add(samples uint64, top []profile.Stride) {
	var all [2 * profile.MaxStrides]profile.Stride
	n := copy(all[:], s.top[:s.n])
	for _, b := range top {
		if i := slices.IndexFunc(all[:n], func(a profile.Stride) bool { return a.Bytes == b.Bytes }); i >= 0 {
			all[i].Count += b.Count
		} else {
			all[n] = b
			n++
		}
	}
	profile.SortStrides(all[:n])
	s.samples += samples
	s.added = true
	s.n = copy(s.top[:], all[:n])
}

// stridesOf returns the profile's strides of each sum, nil for one that
// had none added.
func stridesOf(sums []strideSum) []*profile.Strides {
	out := make([]*profile.Strides, len(sums))
	for i := range sums {
		if s := &sums[i]; s.added {
			out[i] = &profile.Strides{Samples: s.samples}
			if s.n > 0 {
				out[i].Top = slices.Clone(s.top[:s.n])
			}
		}
	}
	return out
}

// evictions counts the lines of each pair's fills that each object's
// fills evicted, and makes the evictor lists of the references listed:
// the evicting references (PC and object) of the lines of the
// reference's fills at every cache of a name (the private caches of
// several processors are one), most first, the profile.MaxRefEvictors most
// frequent and the rest added up (from tables of bounded size:
// evictorTable).
func (w *whereBuilder) evictions() {
	at := w.h.attr
	w.evictedBy = make([]pairCounts, len(w.names))
	w.refEvictors = make([][]profile.RefEvictor, w.listed*len(w.names))
	listed := make([]int32, len(w.headOf)) // by site: the reference listed it counts in, or -1
	for id, hd := range w.headOf {
		listed[id] = -1
		if hd >= 0 {
			listed[id] = w.refOf[hd]
		}
	}
	listedRef := func(id int32) int32 { return listed[id] }
	// Each cache name's evictions on a CPU of their own: its evictor
	// tables, their pairs grouped by the reference listed that they count
	// in, make the references' evictor lists there.
	type grouped struct {
		ev           *evictorTable
		order, start []int32
	}
	errs := make([]uint64, len(w.names))
	var wg sync.WaitGroup
	for j := range w.names {
		wg.Go(func() {
			var tables []grouped
			for i, l := range w.h.levels {
				if w.nameOf[i] != j {
					continue
				}
				for _, e := range l.attr.refs.evictedBins.pairs {
					if e.n != 0 {
						w.evictedBy[j].add(w.pairOf[e.a], e.b, e.n)
					}
				}
				ev := &l.attr.refs.evicted
				errs[j] = max(errs[j], ev.err)
				if ev.n != 0 {
					order, start := groupPairs(ev.pairs, w.listed, listedRef)
					tables = append(tables, grouped{ev, order, start})
				}
			}
			var scratch []evictor
			for ref := range w.listed {
				scratch = scratch[:0]
				for _, g := range tables {
					for _, k := range g.order[g.start[ref]:g.start[ref+1]] {
						e := &g.ev.pairs[k]
						by := at.sites[e.b]
						scratch = append(scratch, evictor{by.pc, by.bin, e.n})
					}
				}
				if len(scratch) > 0 {
					w.refEvictors[ref*len(w.names)+j] = w.evictorList(scratch)
				}
			}
		})
	}
	wg.Wait()
	w.evictorsError = slices.Max(append(errs, 0))
}

// evictor counts the lines that the fills of the instruction at pc
// touching data bin bin evicted.
type evictor struct {
	pc  uint64
	bin int32
	n   uint64
}

// evictorList makes an evictor list of evictors (reordered): each
// instruction and bin once, most first, the profile.MaxRefEvictors first in
// profile.CompareEvictors's order and the rest added up. Only evictors
// counted at least as often as the profile.MaxRefEvictors-th most counted one
// can be among those listed: the others are added up without being
// named.
func (w *whereBuilder) evictorList(evs []evictor) []profile.RefEvictor {
	slices.SortFunc(evs, func(a, b evictor) int { return cmp.Or(cmp.Compare(a.pc, b.pc), cmp.Compare(a.bin, b.bin)) })
	m := 0
	for _, e := range evs {
		if m > 0 && e.pc == evs[m-1].pc && e.bin == evs[m-1].bin {
			evs[m-1].n += e.n
			continue
		}
		evs[m] = e
		m++
	}
	evs = evs[:m]
	var rest uint64
	if len(evs) > profile.MaxRefEvictors {
		selectFirst(evs, profile.MaxRefEvictors, func(a, b evictor) int {
			return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(a.pc, b.pc), cmp.Compare(a.bin, b.bin))
		})
		least := slices.MinFunc(evs[:profile.MaxRefEvictors], func(a, b evictor) int { return cmp.Compare(a.n, b.n) }).n
		kept := 0
		for _, e := range evs {
			if e.n >= least {
				evs[kept] = e
				kept++
			} else {
				rest += e.n
			}
		}
		evs = evs[:kept]
	}
	list := make([]profile.RefEvictor, 0, len(evs)+1)
	for _, e := range evs {
		list = append(list, profile.RefEvictor{Reference: "0x" + strconv.FormatUint(e.pc, 16), Object: w.nm.binName(e.bin), Count: e.n})
	}
	if len(list) > profile.MaxRefEvictors {
		selectFirst(list, profile.MaxRefEvictors, profile.CompareEvictors)
		for _, e := range list[profile.MaxRefEvictors:] {
			rest += e.Count
		}
		list = list[:profile.MaxRefEvictors]
	}
	if rest > 0 {
		list = append(list, profile.RefEvictor{Reference: profile.OtherEvictors, Count: rest})
	}
	profile.SortEvictors(list)
	return list
}

// identity is the entryOf of counts by entry (setEvictedBy).
func identity(e int32) int32 { return e }

// evictedByOf returns the counts of evictedBy at cache name j added up
// by the entry each pair adds up in (entryOf): (entry, bin) → lines.
func (w *whereBuilder) evictedByOf(j int, entryOf func(pair int32) int32) *pairCounts {
	var byEntry pairCounts
	for _, e := range w.evictedBy[j].pairs {
		if e.n != 0 {
			byEntry.add(entryOf(e.a), e.b, e.n)
		}
	}
	return &byEntry
}

// setEvictedBy gives the entries of one kind (entries of them) their
// evicted_by maps from counts, (a, bin) → lines of a's fills that the
// bin's fills evicted, a counting in entry entryOf(a) (-1: none): under
// the bin's name, in the counters stats returns.
func (w *whereBuilder) setEvictedBy(counts *pairCounts, entries int, entryOf func(a int32) int32, stats func(e int32) *profile.Stats) {
	order, start := groupPairs(counts.pairs, entries, entryOf)
	for e := range entries {
		if start[e] == start[e+1] {
			continue
		}
		m := make(map[string]uint64, start[e+1]-start[e])
		for _, i := range order[start[e]:start[e+1]] {
			m[w.nm.binName(counts.pairs[i].b)] += counts.pairs[i].n
		}
		stats(int32(e)).EvictedBy = m
	}
}

// choosePairs settles which pairs the profile lists, focus being its
// focus cache: all, or the first profile.MaxPairs in its order
// (profile.comparePairs, as far as the sums tell it), those of the
// references listed, and the pairs of small globals of one function and
// pool as one (profile.PoolColdGlobals may merge them: a pool's pair then
// has all its counts).
func (w *whereBuilder) choosePairs(focus string) {
	n := len(w.pairs)
	w.pairRow, w.listedPairs = make([]int32, n), n
	if n <= profile.MaxPairs {
		for i := range w.pairRow {
			w.pairRow[i] = int32(i)
		}
		return
	}
	listed := newBitset(n)
	for id, hd := range w.headOf {
		if hd >= 0 && w.refOf[hd] >= 0 {
			listed.set(w.pairOf[id])
		}
	}
	rank := make([]headRank, n)
	for i := range rank {
		for j, name := range w.names {
			s := w.pairSums.get(int32(i), j)
			if s == nil {
				continue
			}
			rank[i].stall += s.stall
			if name == focus {
				rank[i].misses = s.miss[kIFetch] + s.miss[kRead] + s.miss[kWrite]
				rank[i].accesses = s.acc[kIFetch] + s.acc[kRead] + s.acc[kWrite]
			}
		}
	}
	fnRank, binRank := w.nameRanks()
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	selectFirst(order, profile.MaxPairs, func(a, b int32) int {
		pa, pb := w.pairs[a], w.pairs[b]
		return cmp.Or(rank[a].compare(&rank[b]), cmp.Compare(fnRank[pa.fn], fnRank[pb.fn]), cmp.Compare(binRank[pa.bin], binRank[pb.bin]))
	})
	for _, i := range order[:profile.MaxPairs] {
		listed.set(i)
	}
	type poolPair struct {
		fn   int32
		pool string
	}
	pooled := map[poolPair]bool{} // those with a pair listed
	for i, pk := range w.pairs {
		if pool := w.nm.bins[pk.bin].Pool; pool != "" && listed.has(int32(i)) {
			pooled[poolPair{pk.fn, pool}] = true
		}
	}
	for i, pk := range w.pairs {
		if pool := w.nm.bins[pk.bin].Pool; pool != "" && pooled[poolPair{pk.fn, pool}] {
			listed.set(int32(i))
		}
	}
	w.listedPairs = 0
	for i := range int32(n) {
		w.pairRow[i] = -1
		if listed.has(i) {
			w.pairRow[i] = int32(w.listedPairs)
			w.listedPairs++
		}
	}
}

// pairEntries makes the pairs the profile lists.
func (w *whereBuilder) pairEntries() []profile.Pair {
	missOnly := w.h.attr.missOnly
	out := make([]profile.Pair, w.listedPairs)
	w.omittedPairs = newSumTable(1, len(w.names))
	for i, pk := range w.pairs {
		row := w.pairRow[i]
		if row < 0 {
			w.omittedPairs.addEntry(0, &w.pairSums, int32(i))
			continue
		}
		out[row] = profile.Pair{Function: w.funcs[pk.fn].Name, Object: w.nm.bins[pk.bin].Name, Strides: w.pairStrides[i],
			Levels: w.pairSums.levels(int32(i), w.names, missOnly)}
	}
	for j, name := range w.names {
		w.setEvictedBy(&w.evictedBy[j], len(out), func(pr int32) int32 { return w.pairRow[pr] }, func(e int32) *profile.Stats {
			return out[e].Levels[name]
		})
	}
	return out
}

// omittedPairsEntry adds up the pairs left out, nil when none is.
func (w *whereBuilder) omittedPairsEntry() *profile.OmittedPairs {
	if len(w.pairs) == w.listedPairs {
		return nil
	}
	return &profile.OmittedPairs{Pairs: uint64(len(w.pairs) - w.listedPairs),
		Levels: w.omittedPairs.levels(0, w.names, w.h.attr.missOnly)}
}

// contextCycles returns the instructions and the synchronization cycles
// counted in calling context c.
func (w *whereBuilder) contextCycles(c int32) (instr, wait uint64) {
	at := w.h.attr
	if int(c) < len(at.instr) {
		instr = at.instr[c]
	}
	if int(c) < len(at.syncWait) {
		wait = at.syncWait[c]
	}
	return instr, wait
}

// countingContexts returns the calling contexts that count: with
// counters, instructions or synchronization cycles; and gives the
// functions on their call paths an index (the last to name functions:
// the entries are then made concurrently).
func (w *whereBuilder) countingContexts() bitset {
	ctxs := w.h.attr.code.Contexts()
	counts, named := newBitset(len(ctxs)), newBitset(len(ctxs))
	for c := range int32(len(ctxs)) {
		if instr, wait := w.contextCycles(c); instr != 0 || wait != 0 || c != attrib.RootContext && w.ctxSums.present(c) {
			counts.set(c)
			if c == attrib.RootContext {
				w.procFunc(ctxs[c].Proc)
			}
			// The call path up to a context already named (whose
			// callers' functions are named too).
			for k := c; k != attrib.RootContext && !named.has(k); k = ctxs[k].Parent {
				named.set(k)
				w.procFunc(ctxs[k].Proc)
			}
		}
	}
	return counts
}

// cycles are the instructions and synchronization cycles of a calling
// context, or of a function.
type cycles struct{ instr, sync uint64 }

// functionEntries makes the functions of the profile: their own counters
// (their pairs added up), their inclusive counters (the calling contexts
// under them, each once however often its function is on its call path),
// their instructions and synchronization cycles; counts holds the calling
// contexts that count (countingContexts). It adds every context's
// counters into its caller's (w.ctxSums then holds each context's
// subtree): a function's inclusive counters are those of its contexts
// that have no caller of the same function.
func (w *whereBuilder) functionEntries(counts bitset) []profile.Function {
	at, ctxs, names := w.h.attr, w.h.attr.code.Contexts(), len(w.names)
	nf := len(w.funcs)
	self, incl := newSumTable(nf, names), newSumTable(nf, names)
	selfCycles, inclCycles := make([]cycles, nf), make([]cycles, nf)
	used, hasIncl := newBitset(nf), newBitset(nf)
	for i, pk := range w.pairs {
		self.addEntry(pk.fn, &w.pairSums, int32(i))
		used.set(pk.fn)
	}
	for f := range int32(w.rootSums.n) {
		if w.rootSums.present(f) {
			incl.addEntry(f, &w.rootSums, f)
			hasIncl.set(f)
		}
	}
	// Every context after its caller: the subtrees, callees first.
	sub, counting := make([]cycles, len(ctxs)), newBitset(len(ctxs))
	for c := int32(len(ctxs)) - 1; c >= 0; c-- {
		if counts.has(c) {
			n, s := w.contextCycles(c)
			if n != 0 || s != 0 {
				f := w.procFunc(ctxs[c].Proc) // the context's own function (no PC)
				selfCycles[f].instr += n
				selfCycles[f].sync += s
				used.set(f)
			}
			sub[c].instr += n
			sub[c].sync += s
			counting.set(c)
		}
		if p := ctxs[c].Parent; c != attrib.RootContext && p != attrib.RootContext && counting.has(c) {
			sub[p].instr += sub[c].instr
			sub[p].sync += sub[c].sync
			counting.set(p)
			w.ctxSums.addEntry(p, &w.ctxSums, c)
		}
	}
	if counts.has(attrib.RootContext) { // (its own function, no callers)
		f := w.procFunc(ctxs[attrib.RootContext].Proc)
		hasIncl.set(f)
		inclCycles[f].instr += sub[attrib.RootContext].instr
		inclCycles[f].sync += sub[attrib.RootContext].sync
	}
	w.outermostContexts(counting, func(c, f int32) {
		hasIncl.set(f)
		inclCycles[f].instr += sub[c].instr
		inclCycles[f].sync += sub[c].sync
		incl.addEntry(f, &w.ctxSums, c)
	})
	missOnly := at.missOnly
	out := make([]profile.Function, 0, nf)
	for i, t := range w.funcs {
		f := int32(i)
		if !used.has(f) && !hasIncl.has(f) {
			continue
		}
		e := *t
		e.Levels = self.levels(f, w.names, missOnly)
		e.Instructions += selfCycles[f].instr
		e.ComputeCycles += selfCycles[f].instr
		e.SyncCycles += selfCycles[f].sync
		if hasIncl.has(f) {
			e.Inclusive = &profile.Inclusive{Instructions: inclCycles[f].instr, ComputeCycles: inclCycles[f].instr,
				SyncCycles: inclCycles[f].sync, Levels: incl.levels(f, w.names, missOnly)}
		}
		out = append(out, e)
	}
	entryOf := make([]int32, nf) // by function: its place in out
	for i := range out {
		entryOf[w.funcIdx[out[i].Name]] = int32(i)
	}
	for j, name := range w.names {
		w.setEvictedBy(w.evictedByOf(j, func(pr int32) int32 { return w.pairs[pr].fn }), nf, identity, func(f int32) *profile.Stats {
			return out[entryOf[f]].Levels[name]
		})
	}
	return out
}

// outermostContexts calls visit with each calling context in counting
// (but the root one) that no caller on its call path shares its function
// with, and that function: walking the contexts from the root, callers
// before callees, counting each function's contexts on the path.
func (w *whereBuilder) outermostContexts(counting bitset, visit func(c, f int32)) {
	ctxs := w.h.attr.code.Contexts()
	callees, first := groupBy(len(ctxs), len(ctxs), func(i int) int32 {
		if c := int32(i); c != attrib.RootContext && counting.has(c) {
			return ctxs[c].Parent
		}
		return -1
	})
	onPath := make([]int32, len(w.funcs)) // by function: its contexts on the path walked
	type step struct {
		c     int32
		leave bool
	}
	var stack []step
	push := func(caller int32) {
		for _, c := range slices.Backward(callees[first[caller]:first[caller+1]]) {
			stack = append(stack, step{c: c})
		}
	}
	push(attrib.RootContext)
	for len(stack) > 0 {
		st := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		f := w.procFn[ctxs[st.c].Proc]
		if st.leave {
			onPath[f]--
			continue
		}
		if onPath[f] == 0 {
			visit(st.c, f)
		}
		onPath[f]++
		stack = append(stack, step{c: st.c, leave: true})
		push(st.c)
	}
}

// objectEntries makes the objects of the profile, adding up their pairs.
func (w *whereBuilder) objectEntries() []profile.Object {
	objIdx := map[string]int32{}
	var out []profile.Object
	objOf := make([]int32, len(w.pairs))
	for i, pk := range w.pairs {
		o := w.nm.bins[pk.bin]
		k, ok := objIdx[o.Name]
		if !ok {
			k = int32(len(out))
			objIdx[o.Name] = k
			out = append(out, *o)
		}
		objOf[i] = k
	}
	sums := newSumTable(len(out), len(w.names))
	for i := range w.pairs {
		sums.addEntry(objOf[i], &w.pairSums, int32(i))
	}
	writes := w.h.sharingWrites(w.nm)
	for i := range out {
		o := &out[i]
		o.SharingWrites = writes[o.Name]
		o.LineUse = w.lineUse[o.Name]
		o.Levels = sums.levels(int32(i), w.names, w.h.attr.missOnly)
	}
	for j, name := range w.names {
		w.setEvictedBy(w.evictedByOf(j, func(pr int32) int32 { return objOf[pr] }), len(out), identity, func(o int32) *profile.Stats {
			return out[o].Levels[name]
		})
	}
	return out
}

// referenceEntries makes the references the profile lists.
func (w *whereBuilder) referenceEntries() []profile.Reference {
	out := make([]profile.Reference, w.listed)
	for hd, ref := range w.refOf {
		if ref < 0 {
			continue
		}
		h := &w.heads[hd]
		levels := w.refSums.levels(ref, w.names, w.h.attr.missOnly)
		for j, name := range w.names {
			if st := levels[name]; st != nil {
				st.Evictors = w.refEvictors[int(ref)*len(w.names)+j]
			}
		}
		out[ref] = profile.Reference{PC: h.pc, File: h.file, Line: h.line, Column: h.column, Position: h.position,
			Function: w.funcs[h.fn].Name, Object: w.nm.bins[h.bin].Name, Kind: refKind(levels, w.h.levels),
			Strides: w.refStrides[ref], Levels: levels}
	}
	return out
}

// lineEntries makes the source lines of the profile.
func (w *whereBuilder) lineEntries() []profile.Line {
	out := make([]profile.Line, len(w.lines))
	for i, lk := range w.lines {
		out[i] = profile.Line{File: lk.file, Line: lk.line, Function: lk.fn, Levels: w.lineSums.levels(int32(i), w.names, w.h.attr.missOnly)}
	}
	return out
}

// omittedEntry adds up the references left out, nil when none is.
func (w *whereBuilder) omittedEntry() *profile.OmittedReferences {
	if len(w.heads) == w.listed {
		return nil
	}
	return &profile.OmittedReferences{References: uint64(len(w.heads) - w.listed),
		Levels: w.omitted.levels(0, w.names, w.h.attr.missOnly)}
}

// noRefStats are the counters of a site or context that has none at a
// level (never written).
var noRefStats refStats

// penalty returns the cycles a miss of kind k at l waits for the level
// below: its latency, or memory's.
func (h *Hierarchy) penalty(l *level, k int) uint64 {
	if n := l.next(k); n != nil {
		return uint64(n.spec.Latency)
	}
	return uint64(h.m.MemoryLatency)
}

// refKind says what an access point does, from its counters at the first
// level that has any: read, write, modify (both) or ifetch.
func refKind(per map[string]*profile.Stats, levels []*level) string {
	for _, l := range levels {
		st, ok := per[l.spec.Name]
		if !ok {
			continue
		}
		r, w := st.Reads+st.ReadMisses, st.Writes+st.WriteMisses
		switch {
		case st.IFetches+st.IFetchMisses > 0:
			return "ifetch"
		case r > 0 && w > 0:
			return "modify"
		case w > 0:
			return "write"
		}
		return "read"
	}
	return "read"
}
