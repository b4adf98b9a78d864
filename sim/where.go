package sim

import (
	"cmp"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"memspy/attrib"
	"memspy/profile"
)

// whereProfile fills the where-and-why part of p from the counters kept
// per access point: references, then pairs, objects and functions adding
// them up, named through the Symbolizer (or by address without one).
//
// The access points are visited once, in id order, and each one's
// counters at every level are made in scratch space: only references take
// them one by one (their evictor lists depend on the order of additions);
// pairs and calling contexts add them up in counters by cache name, and
// functions, objects, lines and inclusive counters add those up at the
// end, which gives the same sums with far fewer additions.
//
// A first pass finds the references and their order (selectReferences):
// beyond profile.MaxReferences, those that come last are left out, their
// counters added up in p.OmittedReferences and in their lines, and their
// evictor lists never made.
func (h *Hierarchy) whereProfile(p *profile.Profile) {
	at := h.attr
	p.Options.Where = true
	p.Options.MissOnly = at.missOnly
	for _, m := range at.modules {
		p.Modules = append(p.Modules, profile.Module{Path: m.path, TextAddr: m.textAddr, TextSize: m.size})
	}
	nm := h.newNamer()
	for i := range p.Caches {
		p.Caches[i].Causes = &profile.Causes{}
	}
	lc := h.newLevelCounters(nm)
	heads, headOf := lc.selectReferences(p.DefaultFocus())
	var omitted levelSums // the counters of the references left out
	lines := map[lineKey]*profile.Line{}
	funcs := funcTable{}
	objs := map[string]*profile.Object{}
	pairs := map[pairKey]*pairSums{}
	refs := map[refName]int{}                      // index in made
	var made []refEntry                            // the references, small until all are known
	ctxs := map[int32]levelSums{}                  // non-root calling contexts' counters
	rootIncl := map[*profile.Inclusive]levelSums{} // the root context's, by function
	for id, key := range at.refs {
		kept := headOf[id] >= 0 && heads[headOf[id]].kept
		per := lc.of(int32(id), p, kept)
		if per == nil {
			continue
		}
		f := funcs.get(nm.function(key))
		o := nm.bins[key.bin]
		if _, ok := objs[o.Name]; !ok {
			c := *o
			objs[o.Name] = &c
		}
		strides := at.strideSummary(int32(id))
		pr := pairs[pairKey{f, key.bin}]
		if pr == nil {
			pr = &pairSums{Pair: profile.Pair{Function: f.Name, Object: o.Name}, sums: make(levelSums, len(lc.names))}
			pairs[pairKey{f, key.bin}] = pr
		}
		pr.Strides = pr.Strides.Merged(strides)
		pr.sums.add(per)
		switch {
		case key.pc != 0 && !kept:
			if omitted == nil {
				omitted = make(levelSums, len(lc.names))
			}
			omitted.add(per)
			if hd := &heads[headOf[id]]; hd.file != "" && hd.line > 0 {
				ln := lineEntry(lines, hd.file, hd.line, f.Name)
				for j, st := range per {
					if st != nil {
						profile.AddWithoutEvictors(levelEntry(ln.Levels, lc.names[j]), st)
					}
				}
			}
		case key.pc != 0:
			i, ok := refs[refName{key.pc, pairKey{f, key.bin}}]
			if !ok {
				i = len(made)
				refs[refName{key.pc, pairKey{f, key.bin}}] = i
				made = append(made, refEntry{pc: key.pc, fn: f.Name, obj: o.Name, head: headOf[id], levels: map[string]*profile.Stats{}})
			}
			r := &made[i]
			r.strides = r.strides.Merged(strides)
			for j, st := range per {
				if st != nil {
					levelEntry(r.levels, lc.names[j]).Add(st)
				}
			}
		}
		incl := nm.inclusive(key, funcs)
		if key.ctx != attrib.RootContext {
			sumsEntry(ctxs, key.ctx, len(lc.names)).add(per)
			continue
		}
		for _, in := range incl {
			sumsEntry(rootIncl, in, len(lc.names)).add(per)
		}
	}
	for ctx, n := range at.instr {
		if n == 0 {
			continue
		}
		f := funcs.get(nm.function(refKey{ctx: int32(ctx)}))
		f.Instructions += n
		f.ComputeCycles += n
		for _, in := range nm.inclusive(refKey{ctx: int32(ctx)}, funcs) {
			in.Instructions += n
			in.ComputeCycles += n
		}
	}
	for ctx, w := range at.syncWait {
		if w == 0 {
			continue
		}
		funcs.get(nm.function(refKey{ctx: int32(ctx)})).SyncCycles += w
		for _, in := range nm.inclusive(refKey{ctx: int32(ctx)}, funcs) {
			in.SyncCycles += w
		}
	}
	// Functions (self) and objects add up their pairs, inclusive counters
	// the calling contexts under them, lines their references.
	self := map[string]levelSums{}
	byObj := map[string]levelSums{}
	p.Pairs = make([]profile.Pair, 0, len(pairs))
	for _, pr := range pairs {
		sumsEntry(self, pr.Function, len(lc.names)).add(pr.sums)
		sumsEntry(byObj, pr.Object, len(lc.names)).add(pr.sums)
		pr.Levels = pr.sums.levels(lc.names)
		p.Pairs = append(p.Pairs, pr.Pair)
	}
	incl := map[*profile.Inclusive]levelSums{}
	for ctx, s := range ctxs {
		for _, in := range nm.incl[ctx] {
			sumsEntry(incl, in, len(lc.names)).add(s)
		}
	}
	for in, s := range rootIncl {
		sumsEntry(incl, in, len(lc.names)).add(s)
	}
	for in, s := range incl {
		in.Levels = s.levels(lc.names)
	}
	if h.timing != nil {
		p.Sync = h.syncObjects(nm)
	}
	p.Numa = h.numaStats(nm)
	p.Functions = make([]profile.Function, 0, len(funcs))
	for _, f := range funcs {
		if s := self[f.Name]; s != nil {
			f.Levels = s.levels(lc.names)
		}
		p.Functions = append(p.Functions, *f)
	}
	writes := h.sharingWrites(nm)
	p.Objects = make([]profile.Object, 0, len(objs))
	for _, o := range objs {
		o.SharingWrites = writes[o.Name]
		o.Levels = byObj[o.Name].levels(lc.names)
		p.Objects = append(p.Objects, *o)
	}
	p.References = make([]profile.Reference, len(made))
	for i, e := range made {
		hd := &heads[e.head]
		p.References[i] = profile.Reference{PC: e.pc, File: hd.file, Line: hd.line, Column: hd.column, Position: hd.position,
			Function: e.fn, Object: e.obj, Kind: refKind(e.levels, h.levels), Strides: e.strides, Levels: e.levels}
		r := &p.References[i]
		if r.File == "" || r.Line <= 0 {
			continue
		}
		ln := lineEntry(lines, r.File, r.Line, r.Function)
		for name, st := range r.Levels {
			profile.AddWithoutEvictors(levelEntry(ln.Levels, name), st)
		}
	}
	if omitted != nil {
		p.OmittedReferences = &profile.OmittedReferences{References: uint64(len(heads) - len(made)), Levels: omitted.levels(lc.names)}
	}
	p.Lines = make([]profile.Line, 0, len(lines))
	for _, ln := range lines {
		p.Lines = append(p.Lines, *ln)
	}
	p.TrimSharing()
	if err := p.SetFocus(""); err != nil {
		panic(err) // the profile's own caches
	}
	p.SortWhere()
}

// lineEntry returns the line of function fn at file:line in lines, made
// fresh on first use.
func lineEntry(lines map[lineKey]*profile.Line, file string, line int, fn string) *profile.Line {
	return entry(lines, lineKey{file, line, fn}, &profile.Line{File: file, Line: line, Function: fn, Levels: map[string]*profile.Stats{}})
}

// refHead is a reference of the profile as the first pass finds it: its
// place in the source and the counters that order it among the others.
type refHead struct {
	pc                      uint64
	fn, obj                 string
	file                    string
	line, column, position  int
	stall, misses, accesses uint64 // as the profile's order sees them (profile.ByStall)
	kept                    bool   // listed in the profile, not left out
}

// headKey identifies a reference of the profile: access points of one
// instruction in different calling contexts of one function add up.
type headKey struct {
	pc  uint64
	fn  string
	bin int32
}

// selectReferences finds the references of the profile, with focus as its
// focus cache, and which of them it lists: all, or the first
// profile.MaxReferences in its order. It returns them and the index of
// each access point's reference among them (-1 for an access point of
// no reference: without a PC or without counters), and numbers the
// references of each source line (positions).
func (lc *levelCounters) selectReferences(focus string) (heads []refHead, headOf []int32) {
	at, nm := lc.h.attr, lc.nm
	index := map[headKey]int32{}
	headOf = make([]int32, len(at.refs))
	for id, key := range at.refs {
		headOf[id] = -1
		if key.pc == 0 {
			continue
		}
		stall, misses, accesses, ok := lc.sortKey(int32(id), focus)
		if !ok {
			continue
		}
		fn := nm.function(key).Name
		hk := headKey{key.pc, fn, key.bin}
		i, seen := index[hk]
		if !seen {
			i = int32(len(heads))
			index[hk] = i
			src := nm.code(key.pc)
			heads = append(heads, refHead{pc: key.pc, fn: fn, obj: nm.bins[key.bin].Name, file: src.File, line: src.Line,
				column: src.Column, kept: true})
		}
		hd := &heads[i]
		hd.stall += stall
		hd.misses += misses
		hd.accesses += accesses
		headOf[id] = i
	}
	if len(heads) > profile.MaxReferences {
		order := make([]int32, len(heads))
		for i := range order {
			order[i] = int32(i)
		}
		slices.SortFunc(order, func(i, j int32) int {
			a, b := &heads[i], &heads[j]
			return cmp.Or(cmp.Compare(b.stall, a.stall), cmp.Compare(b.misses, a.misses), cmp.Compare(b.accesses, a.accesses),
				cmp.Compare(a.pc, b.pc), cmp.Compare(a.fn, b.fn), cmp.Compare(a.obj, b.obj))
		})
		for _, i := range order[profile.MaxReferences:] {
			heads[i].kept = false
		}
	}
	positions(heads)
	return heads, headOf
}

// sortKey returns what the profile's order sees of access point id's
// counters, with focus as the focus cache: its stall cycles at every
// level, its misses and accesses at focus; ok is false when it has no
// counters at any level (refLevel's test).
func (lc *levelCounters) sortKey(id int32, focus string) (stall, misses, accesses uint64, ok bool) {
	for i, l := range lc.h.levels {
		r := l.attr.refs.find(id)
		if r == nil {
			r = &noRefStats
		}
		if !hasCounters(r, lc.resident[i][id], lc.evictedBy(i, id)) {
			continue
		}
		ok = true
		for k := range numAccessKinds {
			stall += r.miss[k] * lc.h.penalty(l, k)
		}
		if l.spec.Name == focus {
			misses += r.miss[kIFetch] + r.miss[kRead] + r.miss[kWrite]
			if !lc.h.attr.missOnly {
				accesses += r.acc[kIFetch] + r.acc[kRead] + r.acc[kWrite]
			}
		}
	}
	return stall, misses, accesses, ok
}

// lineKey identifies a source line of a function.
type lineKey struct {
	file string
	line int
	fn   string
}

// refEntry is a reference of the profile in the making.
type refEntry struct {
	pc      uint64
	fn, obj string
	head    int32 // its refHead
	strides *profile.Strides
	levels  map[string]*profile.Stats
}

// pairKey identifies a pair of the profile by its function's entry and
// its object's data bin (a bin has a name of its own).
type pairKey struct {
	fn  *profile.Function
	bin int32
}

// refName identifies a reference of the profile: access points of one
// instruction in different calling contexts of one function add up.
type refName struct {
	pc uint64
	pairKey
}

// positions numbers the references of each source line by column, then
// PC.
func positions(refs []refHead) {
	byLine := map[lineKey][]*refHead{}
	for i := range refs {
		r := &refs[i]
		if r.file != "" && r.line > 0 {
			k := lineKey{r.file, r.line, ""}
			byLine[k] = append(byLine[k], r)
		}
	}
	for _, rs := range byLine {
		slices.SortFunc(rs, func(a, b *refHead) int {
			return cmp.Or(cmp.Compare(a.column, b.column), cmp.Compare(a.pc, b.pc), cmp.Compare(a.fn, b.fn), cmp.Compare(a.obj, b.obj))
		})
		pos := 0
		for i, r := range rs {
			if i > 0 && r.pc != rs[i-1].pc {
				pos++ // the same instruction in several functions or objects keeps one position
			}
			r.position = pos
		}
	}
}

// maxRefEvictors bounds the evictor references listed per reference and
// level; the rest are added up in one entry.
const maxRefEvictors = 8

// entry returns m[k], made fresh on first use.
func entry[K comparable, T any](m map[K]*T, k K, fresh *T) *T {
	if e, ok := m[k]; ok {
		return e
	}
	m[k] = fresh
	return fresh
}

// levelCounters make the profile counters of one access point at every
// level, in scratch space that the next access point reuses.
type levelCounters struct {
	h  *Hierarchy
	nm *namer
	// names are the caches' names in level order, each once: the copies
	// of a private cache share one.
	names  []string
	nameOf []int // by level: its index in names
	// resident holds, by level, the bytes used and fetched of the lines
	// still there, by the access point that filled them.
	resident []map[int32][2]uint64
	// evictions and evictStart hold, by level, the pairs of its
	// evictTable grouped by victim (evictTable.byVictim).
	evictions  [][]evictPair
	evictStart [][]int32
	scratch    []profile.Stats // by level
	per        levelSums
}

// evictedBy returns the evictors of access point id's lines at level i.
func (lc *levelCounters) evictedBy(i int, id int32) []evictPair {
	if start := lc.evictStart[i]; int(id)+1 < len(start) {
		return lc.evictions[i][start[id]:start[id+1]]
	}
	return nil
}

// newLevelCounters counts the byte use of the lines still resident as if
// they left now.
func (h *Hierarchy) newLevelCounters(nm *namer) *levelCounters {
	lc := &levelCounters{h: h, nm: nm, scratch: make([]profile.Stats, len(h.levels))}
	for _, l := range h.levels {
		j := slices.Index(lc.names, l.spec.Name)
		if j < 0 {
			j = len(lc.names)
			lc.names = append(lc.names, l.spec.Name)
		}
		lc.nameOf = append(lc.nameOf, j)
		la := l.attr
		resident := map[int32][2]uint64{}
		l.c.ForEachValid(func(slot int) {
			if la.demand[slot] {
				u := resident[la.fill[slot]]
				resident[la.fill[slot]] = [2]uint64{u[0] + la.used(slot), u[1] + l.lineSize}
			}
		})
		lc.resident = append(lc.resident, resident)
		pairs, start := la.refs.evicted.byVictim(len(h.attr.refs))
		lc.evictions, lc.evictStart = append(lc.evictions, pairs), append(lc.evictStart, start)
	}
	lc.per = make(levelSums, len(lc.names))
	return lc
}

// of returns the counters of access point id by cache name, the copies of
// a private cache added up, or nil when it has none at any level; they
// are valid until the next call, with evictor lists only when evictors
// is set. It adds their causes of misses to those of p's caches.
func (lc *levelCounters) of(id int32, p *profile.Profile, evictors bool) levelSums {
	clear(lc.per)
	found := false
	for i, l := range lc.h.levels {
		st := &lc.scratch[i]
		if !lc.h.refLevel(st, l, id, lc.resident[i][id], lc.evictedBy(i, id), lc.nm, evictors) {
			continue
		}
		p.Caches[l.cache].Causes.Add(st.Causes)
		j := lc.nameOf[i]
		if prev := lc.per[j]; prev != nil {
			prev.Add(st) // another processor's copy
			continue
		}
		lc.per[j], found = st, true
	}
	if !found {
		return nil
	}
	return lc.per
}

// refLevel sets st to the profile counters of access point id at l, whose
// resident lines it filled used u[0] bytes of u[1] and whose lines ev's
// access points evicted, and reports whether it has any. st's evictor
// table and list are reused; the list is made only when evictors is set.
func (h *Hierarchy) refLevel(st *profile.Stats, l *level, id int32, u [2]uint64, ev []evictPair, nm *namer, evictors bool) bool {
	at, la := h.attr, l.attr
	r := la.refs.find(id)
	if r == nil {
		r = &noRefStats // no counts here, but it may have filled lines in a warm-up
	}
	if !hasCounters(r, u, ev) {
		return false
	}
	acc := r.acc[kIFetch] + r.acc[kRead] + r.acc[kWrite]
	miss := r.miss[kIFetch] + r.miss[kRead] + r.miss[kWrite]
	evictedBy, list := st.EvictedBy, st.Evictors[:0]
	clear(evictedBy)
	*st = profile.Stats{
		Accesses: acc, Misses: miss,
		IFetches: r.acc[kIFetch], Reads: r.acc[kRead], Writes: r.acc[kWrite],
		IFetchMisses: r.miss[kIFetch], ReadMisses: r.miss[kRead], WriteMisses: r.miss[kWrite],
		Causes: profile.Causes{Cold: r.cold, Replacement: r.replacement, Invalidation: r.invalidation,
			TrueSharing: r.trueSharing, FalseSharing: r.falseSharing, Unknown: r.unknown},
		UnknownHits:  r.unknownHits,
		TemporalHits: r.temporal, SpatialHits: r.spatial,
		UsedBytes: r.used + u[0], FetchedBytes: r.fetched + u[1],
	}
	if !at.missOnly {
		st.Hits = acc - miss
	}
	if st.FetchedBytes > 0 {
		st.SpatialUse = float64(st.UsedBytes) / float64(st.FetchedBytes)
	}
	for k := range numAccessKinds {
		st.StallCycles += r.miss[k] * h.penalty(l, k)
	}
	for _, e := range ev {
		by, n := e.by, e.n
		obj := nm.binName(at.refs[by].bin)
		if evictedBy == nil {
			evictedBy = map[string]uint64{}
		}
		evictedBy[obj] += n
		if evictors {
			list = append(list, profile.RefEvictor{Reference: "0x" + strconv.FormatUint(at.refs[by].pc, 16), Object: obj, Count: n})
		}
	}
	st.EvictedBy, st.Evictors = evictedBy, list
	st.InvalidatedBy, st.Invalidated = sharingLists(r, at, nm)
	profile.SortEvictors(st.Evictors)
	if len(st.Evictors) > maxRefEvictors {
		rest := profile.RefEvictor{Reference: profile.OtherEvictors}
		for _, e := range st.Evictors[maxRefEvictors:] {
			rest.Count += e.Count
		}
		st.Evictors = append(st.Evictors[:maxRefEvictors], rest)
	}
	return true
}

// noRefStats are the counters of an access point that has none at a
// level (never written).
var noRefStats refStats

// hasCounters reports whether r, with resident lines it filled of u[1]
// bytes and lines ev's access points evicted, has anything for the
// profile at its level.
func hasCounters(r *refStats, u [2]uint64, ev []evictPair) bool {
	return r.acc != [numAccessKinds]uint64{} || r.miss != [numAccessKinds]uint64{} || r.fetched != 0 || u[1] != 0 ||
		len(ev) != 0 || len(r.invBy) != 0 || len(r.invOf) != 0
}

// levelSums are counters by cache name (indexed as levelCounters.names),
// nil for a cache without any.
type levelSums []*profile.Stats

// add adds the counters of b to s, but not b's evictor lists (references
// alone keep them).
func (s levelSums) add(b levelSums) {
	for j, st := range b {
		if st == nil {
			continue
		}
		if s[j] == nil {
			s[j] = &profile.Stats{}
		}
		profile.AddWithoutEvictors(s[j], st)
	}
}

// levels returns s as the profile keeps counters by cache.
func (s levelSums) levels(names []string) map[string]*profile.Stats {
	m := map[string]*profile.Stats{}
	for j, st := range s {
		if st != nil {
			m[names[j]] = st
		}
	}
	return m
}

// sumsEntry returns m[k], made fresh for n caches on first use.
func sumsEntry[K comparable](m map[K]levelSums, k K, n int) levelSums {
	s, ok := m[k]
	if !ok {
		s = make(levelSums, n)
		m[k] = s
	}
	return s
}

// levelEntry returns the counters of cache name in levels, made fresh on
// first use.
func levelEntry(levels map[string]*profile.Stats, name string) *profile.Stats {
	st := levels[name]
	if st == nil {
		st = &profile.Stats{}
		levels[name] = st
	}
	return st
}

// pairSums is a pair in the making, with its counters by cache name.
type pairSums struct {
	profile.Pair
	sums levelSums
}

// funcTable holds the functions of the profile by name.
type funcTable map[string]*profile.Function

// get returns the entry of the function t describes, made from t, with
// no counters, on first use.
func (ft funcTable) get(t *profile.Function) *profile.Function {
	if f, ok := ft[t.Name]; ok {
		return f
	}
	f := *t
	f.Levels = map[string]*profile.Stats{}
	ft[t.Name] = &f
	return &f
}

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

// namer names procedures and data bins for the profile, with unique
// names, through the Symbolizer when there is one.
type namer struct {
	h     *Hierarchy
	procs map[int32]*profile.Function // every procedure
	bins  map[int32]*profile.Object   // every bin an access point touches
	src   map[uint64]Source
	incl  map[int32][]*profile.Inclusive // by calling context
	heap  []string                       // hex names of heap bins (attrib.HeapNames)
	taken map[string]bool
}

// newNamer names every bin that an access point touches. Objects whose
// short names collide get the shortest end of their allocation call path
// that tells them apart ("main.86.alloc_matrix.31.m"), else their bin
// number ("info#12").
func (h *Hierarchy) newNamer() *namer {
	n := &namer{h: h, procs: map[int32]*profile.Function{}, bins: map[int32]*profile.Object{}, src: map[uint64]Source{},
		incl: map[int32][]*profile.Inclusive{}, heap: attrib.HeapNames(h.attr.data.Bins()), taken: map[string]bool{}}
	n.nameProcs()
	paths := map[int32][]string{}
	groups := map[string][]int32{}
	for _, r := range h.attr.refs {
		if _, ok := n.bins[r.bin]; ok {
			continue
		}
		o, path := n.newObject(r.bin)
		n.bins[r.bin], paths[r.bin] = o, path
		groups[o.Name] = append(groups[o.Name], r.bin)
	}
	// A small global takes no name from another object: where names
	// meet, the small ones are named after their module too.
	for name, ids := range groups {
		if len(ids) < 2 {
			continue
		}
		var rest []int32
		for _, id := range ids {
			if b := n.h.attr.data.Bin(id); b.Pool != "" {
				o := n.bins[id]
				o.Name = name + "@" + b.Module
				o.FullName = o.Name
				continue
			}
			rest = append(rest, id)
		}
		groups[name] = rest
	}
	suffix := func(id int32, k int) string {
		p := paths[id]
		return strings.Join(append(slices.Clone(p[len(p)-k:]), n.bins[id].Name), ".")
	}
	renamed := map[int32]string{}
	for _, ids := range groups {
		if len(ids) == 1 {
			continue
		}
	member:
		for _, id := range ids {
			for k := 1; k <= len(paths[id]); k++ {
				cand := suffix(id, k)
				if !slices.ContainsFunc(ids, func(j int32) bool { return j != id && k <= len(paths[j]) && suffix(j, k) == cand }) {
					renamed[id] = cand
					continue member
				}
			}
			renamed[id] = fmt.Sprintf("%s#%d", n.bins[id].Name, id)
		}
	}
	ids := slices.Sorted(maps.Keys(n.bins))
	for _, id := range ids {
		o := n.bins[id]
		own := o.FullName == o.Name // no call path: the full name is the name, unique too
		if name, ok := renamed[id]; ok {
			o.Name = name
		}
		if n.taken["o"+o.Name] { // a path-named object meets another's name
			o.Name = fmt.Sprintf("%s#%d", o.Name, id)
		}
		if own {
			o.FullName = o.Name
		}
		n.taken["o"+o.Name] = true
	}
	return n
}

// code returns what the Symbolizer knows of pc.
func (n *namer) code(pc uint64) Source {
	sym := n.h.attr.sym
	if sym == nil {
		return Source{}
	}
	s, ok := n.src[pc]
	if !ok {
		s = sym.Code(pc)
		n.src[pc] = s
	}
	return s
}

// function returns the function entry of access point k, with no
// counters, for funcTable.get (not to be changed): the procedure of its
// calling context, or for code outside every traced call the function
// holding its PC when known.
func (n *namer) function(k refKey) *profile.Function {
	proc := n.h.attr.code.Contexts()[k.ctx].Proc
	if proc == attrib.UnknownProc && k.pc != 0 {
		if s := n.code(k.pc); s.Func != "" {
			return &profile.Function{Name: s.Func, File: s.File, Module: s.Module, Entry: s.Entry}
		}
	}
	return n.procs[proc]
}

// inclusive returns the inclusive counters of every function on the call
// path of access point k, each once, making the functions' entries in
// funcs on first use. Outside every traced call it is k's own function.
func (n *namer) inclusive(k refKey, funcs funcTable) []*profile.Inclusive {
	if in, ok := n.incl[k.ctx]; ok {
		return in
	}
	ctxs := n.h.attr.code.Contexts()
	var out []*profile.Inclusive
	add := func(fn *profile.Function) {
		f := funcs.get(fn)
		if f.Inclusive == nil {
			f.Inclusive = &profile.Inclusive{Levels: map[string]*profile.Stats{}}
		}
		if !slices.Contains(out, f.Inclusive) {
			out = append(out, f.Inclusive)
		}
	}
	if k.ctx == attrib.RootContext {
		add(n.function(k))
		return out // depends on the PC: not kept
	}
	for c := k.ctx; c != attrib.RootContext; c = ctxs[c].Parent {
		add(n.procs[ctxs[c].Proc])
	}
	n.incl[k.ctx] = out
	return out
}

// nameProcs names every procedure and region. A procedure in a known
// module but in no function the Symbolizer knows (a stripped library's
// static function) is named by its module and link-time entry
// ("libc.so.6+0x9caa4", the Symbolizer's Place). Procedures whose names
// collide get their full C++ name when that tells them apart (overloads
// and template instantiations, whose short names leave parameters and
// template arguments out: "max(int, int)", "max(double, double)"), else
// their module's name (static functions of different modules or files:
// "init@libc.so.6"), else their entry ("init@0x1091e5"); a region keeps
// the name the program gave it (regions are one per name). The procedure
// of a PLT entry is the function its calls reached (attrib.Proc.Reaches),
// so that a call through the PLT counts as a call of that function.
func (n *namer) nameProcs() {
	groups := map[string][]int32{}
	sigs := map[int32]string{}
	procs := n.h.attr.code.Procs()
	for id, p := range procs {
		if p.Reaches != attrib.UnknownProc {
			continue
		}
		f := &profile.Function{Name: p.Name, Entry: p.Entry, Region: p.Region}
		if p.Entry != 0 {
			switch s := n.code(p.Entry); {
			case s.Func != "":
				f.Name, f.File, f.Line, f.Module = s.Func, s.File, s.Line, s.Module
				sigs[int32(id)] = s.Signature
			case s.Module != "": // (only with a Symbolizer)
				if name, ok := n.place(p.Entry); ok {
					f.Name, f.Module = name, s.Module
				}
			}
		}
		n.procs[int32(id)] = f
		groups[f.Name] = append(groups[f.Name], int32(id))
	}
	for _, ids := range groups {
		if len(ids) == 1 {
			continue
		}
		mods, nsig := map[string]int{}, map[string]int{}
		for _, id := range ids {
			mods[n.procs[id].Module]++
			nsig[sigs[id]]++
		}
		for _, id := range ids {
			f := n.procs[id]
			if f.Region {
				continue // the program's own name for it
			}
			if sig := sigs[id]; sig != "" && nsig[sig] == 1 {
				f.Name = sig
			} else if m := f.Module; m != "" && mods[m] == 1 {
				f.Name += "@" + filepath.Base(m)
			} else if place, ok := n.place(f.Entry); ok {
				f.Name += "@" + place
			} else {
				f.Name = fmt.Sprintf("%s@%#x", f.Name, f.Entry)
			}
		}
	}
	for id, p := range procs {
		if p.Reaches != attrib.UnknownProc {
			n.procs[int32(id)] = n.procs[p.Reaches]
		}
	}
}

// place names run-time address pc by its module and link-time address
// ("ld-linux-x86-64.so.2+0x1bc0"), when a Symbolizer knows the module.
func (n *namer) place(pc uint64) (string, bool) {
	if n.h.attr.sym == nil {
		return "", false
	}
	return n.h.attr.sym.Place(pc)
}

// binName returns the name of data bin id in the profile.
func (n *namer) binName(id int32) string {
	if o, ok := n.bins[id]; ok {
		return o.Name
	}
	o, _ := n.newObject(id)
	return o.Name
}

// newObject makes the object entry of data bin id, with its allocation
// call path as "func.line" elements for a heap bin the Symbolizer knows.
func (n *namer) newObject(id int32) (o *profile.Object, path []string) {
	b := n.h.attr.data.Bin(id)
	o = &profile.Object{Name: b.Name, Kind: b.Kind.String(), Size: b.Bytes, Pool: b.Pool}
	switch b.Kind {
	case attrib.Stack:
		o.Name = "locals@" + n.procs[b.Proc].Name
		if b.Name != "" {
			o.Name = n.procs[b.Proc].Name + "." + b.Name
		}
	case attrib.Heap:
		o.Name, o.FullName = n.heap[id], n.heap[id]
		o.Blocks = b.Blocks
		if sym := n.h.attr.sym; sym != nil {
			if name, p, ok := sym.HeapName(b.Site, b.Type); ok {
				o.Name, o.FullName, path = name, strings.Join(append(slices.Clone(p), name), "."), p
			}
		}
		for i, pc := range b.Site {
			s := n.code(pc - 1) // a return address: the call is just before it
			frame := fmt.Sprintf("%#x", pc)
			if s.Func != "" {
				frame = s.Func
			}
			if s.File != "" {
				frame += fmt.Sprintf(" %s:%d", filepath.Base(s.File), s.Line)
				if i == 0 {
					o.AllocSite = fmt.Sprintf("%s:%d", filepath.Base(s.File), s.Line)
				}
			}
			o.CallPath = append(o.CallPath, frame)
		}
	}
	if o.FullName == "" {
		o.FullName = o.Name
	}
	return o, path
}
