package profile

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Stats are the where-and-why counters of one entry of the profile (a
// function, an object, a pair or a reference) at one cache. Zero counters
// beyond accesses, hits, misses and stall cycles are left out of the JSON. Accesses count
// touched lines, as in CacheStats. A hit counts in the object of the line
// (the object of the reference that filled it), a miss in the object of the
// missing reference's address.
type Stats struct {
	Accesses     uint64 `json:"accesses"`
	Hits         uint64 `json:"hits"`
	Misses       uint64 `json:"misses"`
	IFetches     uint64 `json:"ifetches,omitempty"`
	Reads        uint64 `json:"reads,omitempty"`
	Writes       uint64 `json:"writes,omitempty"`
	IFetchMisses uint64 `json:"ifetch_misses,omitempty"`
	ReadMisses   uint64 `json:"read_misses,omitempty"`
	WriteMisses  uint64 `json:"write_misses,omitempty"`
	// StallCycles are the cycles the entry's misses at this cache waited
	// for the level below: misses × the latency of the next cache, or of
	// memory for the last one. At the top of an entry it is the entry's
	// total over every cache (MemSpy's memory stall time: hits in the
	// first cache cost nothing beyond the pipeline).
	StallCycles uint64 `json:"stall_cycles"`
	Causes      Causes `json:"causes"`
	// TemporalHits are hits on bytes the line's residency had touched
	// before; SpatialHits hits on a resident line whose referenced bytes
	// were not all touched before (METRIC).
	TemporalHits uint64 `json:"temporal_hits,omitempty"`
	SpatialHits  uint64 `json:"spatial_hits,omitempty"`
	// UnknownHits, in a sampled run, counts the hits whose outcome was not
	// known (a line not referenced since the sample began): they may have
	// been misses.
	UnknownHits uint64 `json:"unknown_hits,omitempty"`
	// EvictedBy counts the entry's lines that fills of each object evicted
	// (the key equal to the entry's own object: self interference): the
	// MaxEvictedBy objects that evicted the most, the lines the others
	// evicted added up in EvictedByOthers. A profile made of others
	// (merged shards, a process tree's total, pooled entries) keeps the
	// most counted after adding them up: a count there may then be short
	// by as much as EvictedByOthers.
	EvictedBy       map[string]uint64 `json:"evicted_by,omitempty"`
	EvictedByOthers uint64            `json:"evicted_by_others,omitempty"`
	// InvalidatedBy counts the entry's lines here that other processors'
	// writes invalidated, by the writing object and processor (the
	// invalidations it suffered); Invalidated the lines of other
	// processors that the entry's writes invalidated, by the lines' object
	// and the processor that held them (those it caused). Most first, at
	// most MaxSharing.
	InvalidatedBy []Sharing `json:"invalidated_by,omitempty"`
	Invalidated   []Sharing `json:"invalidated,omitempty"`
	// UsedBytes and FetchedBytes: of the lines the entry's misses filled
	// that have left the cache (or stayed until the end), the bytes the
	// program touched while they were resident, and their size.
	UsedBytes    uint64 `json:"used_bytes,omitempty"`
	FetchedBytes uint64 `json:"fetched_bytes,omitempty"`
	// SpatialUse is UsedBytes / FetchedBytes (0 when nothing was fetched).
	SpatialUse float64 `json:"spatial_use"`
	// Evictors, for references only: which references' fills evicted the
	// lines this reference filled, most first: at most MaxRefEvictors,
	// the rest added up in an entry of reference OtherEvictors. A profile
	// made of others (merged shards, a process tree's total, pooled
	// entries) keeps the most counted after adding them up: a count listed
	// there may then be short by as much as the list's OtherEvictors entry.
	Evictors []RefEvictor `json:"evictors,omitempty"`
}

// Causes split misses by what removed the line since it was last there
// (MemSpy: the first event that removed it).
type Causes struct {
	Cold         uint64 `json:"cold"`         // never there before
	Replacement  uint64 `json:"replacement"`  // evicted to make room for a fill, here or in an inclusive cache below (back-invalidation)
	Invalidation uint64 `json:"invalidation"` // invalidated by another processor's write or an invalidate record of the trace
	// TrueSharing and FalseSharing split the invalidations by other
	// processors' writes: whether the processor had used bytes of the line
	// that the invalidating write wrote. They sum to Invalidation unless
	// the trace has invalidate records.
	TrueSharing  uint64 `json:"true_sharing,omitempty"`
	FalseSharing uint64 `json:"false_sharing,omitempty"`
	// Unknown, in a sampled run, counts the misses whose outcome was not
	// known (their set not yet primed in the sample): they may have been
	// hits, and their cause is not known either.
	Unknown uint64 `json:"unknown,omitempty"`
}

// Add adds b's counts to c.
func (c *Causes) Add(b Causes) {
	c.Cold += b.Cold
	c.Replacement += b.Replacement
	c.Invalidation += b.Invalidation
	c.TrueSharing += b.TrueSharing
	c.FalseSharing += b.FalseSharing
	c.Unknown += b.Unknown
}

// AddCounts adds the counts of b to *m by key, making *m when b has any.
func AddCounts(m *map[string]uint64, b map[string]uint64) {
	for k, v := range b {
		if *m == nil {
			*m = map[string]uint64{}
		}
		(*m)[k] += v
	}
}

// RefEvictor counts the lines of a reference that the fills of another
// reference evicted.
type RefEvictor struct {
	// Reference is the evicting reference's PC, "0x…", or OtherEvictors.
	Reference string `json:"reference"`
	Object    string `json:"object"` // the object its fill was for
	Count     uint64 `json:"count"`
}

// Function is a code bin: a procedure, from the call stack the tracer
// reports (or from the PC when the trace has no calls).
type Function struct {
	Name   string `json:"name"` // unique in the profile
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Module string `json:"module,omitempty"`
	Entry  uint64 `json:"entry"` // 0 for <unknown>: code outside every traced call
	// Instructions counts the instructions fetched while the function was
	// running (0 when no cache held instructions); ComputeCycles charges
	// one cycle to each.
	Instructions  uint64 `json:"instructions"`
	ComputeCycles uint64 `json:"compute_cycles"`
	// SyncCycles are the cycles its threads waited at synchronization
	// called from it (on a multiprocessor; see ThreadStats).
	SyncCycles uint64 `json:"sync_cycles,omitempty"`
	// Region marks a code region the program named with memspy.h rather
	// than a procedure: a code bin nested in the procedure running when it
	// began.
	Region bool `json:"region,omitempty"`
	Stats
	Levels map[string]*Stats `json:"levels"`
	// Inclusive adds up the function's own counters (above: self) and
	// those of everything it called and every region in it.
	Inclusive *Inclusive `json:"inclusive,omitempty"`
}

// Inclusive are a function's counters including its callees: every
// reference made while the function was on the call stack counts once,
// however deep a recursion went.
type Inclusive struct {
	Instructions  uint64 `json:"instructions"`
	ComputeCycles uint64 `json:"compute_cycles"`
	SyncCycles    uint64 `json:"sync_cycles,omitempty"`
	Stats
	Levels map[string]*Stats `json:"levels"`
}

// Object is a data bin: a data structure of the program.
type Object struct {
	Name     string `json:"name"`      // short, unique in the profile
	FullName string `json:"full_name"` // with the allocation call path, unique
	// Kind is heap, global, stack, manual, freed or other.
	Kind string `json:"kind"`
	// AllocSite is a heap object's allocation site, "file:line".
	AllocSite string `json:"alloc_site,omitempty"`
	// CallPath is a heap object's allocation call path, innermost first,
	// each frame "function file:line" (or its PC when unknown).
	CallPath []string `json:"call_path,omitempty"`
	// Pool, for a small global variable, names the entry its module's
	// small variables are shown in together unless they are hot
	// (PoolColdGlobals); a pool has the kind global and no Pool.
	Pool string `json:"pool,omitempty"`
	// Size is the bytes of a global or manual object, or the bytes
	// allocated into a heap object over the run; Blocks counts those
	// allocations.
	Size   uint64 `json:"size"`
	Blocks uint64 `json:"blocks,omitempty"`
	// SharingWrites, on a multiprocessor, are the writes to the object
	// that invalidated other processors' copies of its lines, by processor
	// and place, most first (at most MaxSharingWrites).
	SharingWrites []SharingWrite `json:"sharing_writes,omitempty"`
	// LineUse, by cache name, counts how many of the lines the object's
	// misses filled there had each byte offset used while resident (as
	// they left, or at the end of the run): entry i for offset i of the
	// line, trailing zeros left out. The lines counted are the level's
	// FetchedBytes / the line size. Nil with --miss-only and in profiles
	// before version 3.
	LineUse map[string][]uint64 `json:"line_use,omitempty"`
	Stats
	Levels map[string]*Stats `json:"levels"`
}

// Pair is one function × object pair.
type Pair struct {
	Function string `json:"function"`
	Object   string `json:"object"`
	// Strides are the most common address strides of the pair's
	// references (absent with --miss-only).
	Strides *Strides `json:"strides,omitempty"`
	Stats
	Levels map[string]*Stats `json:"levels"`
}

// Line is a finer code bin: the references of one source line of one
// function.
type Line struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Function string `json:"function"`
	Stats
	Levels map[string]*Stats `json:"levels"`
}

// Strides summarize the distances between consecutive data references of
// an access point (METRIC's stride summary): Samples counts the strides
// seen, Top the most common ones, most first.
type Strides struct {
	Samples uint64   `json:"samples"`
	Top     []Stride `json:"top"`
}

// Stride counts the references that were Bytes after the previous one of
// the same access point. The count is exact unless the access point went
// through more distinct strides than the engine keeps; it is then a lower
// bound.
type Stride struct {
	Bytes int64  `json:"stride"`
	Count uint64 `json:"count"`
}

// MaxStrides bounds the strides listed per reference and pair.
const MaxStrides = 4

// Add adds b's strides to s and keeps the MaxStrides most common.
func (s *Strides) Add(b *Strides) {
	s.Samples += b.Samples
	mergeBy(&s.Top, b.Top, func(x, y *Stride) bool { return x.Bytes == y.Bytes },
		func(into, from *Stride) { into.Count += from.Count })
	SortStrides(s.Top)
	if len(s.Top) > MaxStrides {
		s.Top = s.Top[:MaxStrides]
	}
}

// SortStrides sorts strides most common first, then by distance (by
// insertion: the lists are a few strides, nearly in order).
func SortStrides(ss []Stride) {
	for i := 1; i < len(ss); i++ {
		for k := i; k > 0 && (ss[k].Count > ss[k-1].Count || ss[k].Count == ss[k-1].Count && ss[k].Bytes < ss[k-1].Bytes); k-- {
			ss[k], ss[k-1] = ss[k-1], ss[k]
		}
	}
}

// Merged returns s with b's strides added, a fresh Strides when s is nil
// (and s as it is when b is nil).
func (s *Strides) Merged(b *Strides) *Strides {
	if b == nil {
		return s
	}
	if s == nil {
		s = &Strides{}
	}
	s.Add(b)
	return s
}

// Reference is one access point (METRIC): the references of one
// instruction, running in one function, to one object.
type Reference struct {
	PC     uint64 `json:"pc"`
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
	// Position orders the references of one source line by column, then
	// PC, from 0: which of the line's references this is.
	Position int    `json:"position"`
	Function string `json:"function"`
	Object   string `json:"object"`
	Kind     string `json:"kind"` // read, write, modify or ifetch
	// Strides are the reference's most common address strides (absent
	// with --miss-only or for instruction fetches).
	Strides *Strides `json:"strides,omitempty"`
	Stats
	Levels map[string]*Stats `json:"levels"`
}

// MaxReferences bounds the references a profile lists, so that its size
// follows what a person reads rather than the program's number of
// instructions: beyond it, the references that come last in the
// profile's order (CompareReferences: fewest stall cycles first) are left
// out and added up in OmittedReferences. Every reference listed keeps its
// exact counts, and one left out had at most the stall cycles of the last
// one listed (in the profile of one run; after a merge, a reference
// listed may lack what shards that left it out counted for it, at most
// their omitted references' counts).
const MaxReferences = 1 << 15

// OmittedReferences add up the references a profile leaves out (beyond
// MaxReferences): how many, and their counters, without evictor lists.
type OmittedReferences struct {
	References uint64 `json:"references"`
	Stats
	Levels map[string]*Stats `json:"levels"`
}

func (o *OmittedReferences) parts() (*Stats, map[string]*Stats) { return &o.Stats, o.Levels }

// MaxPairs bounds the function × object pairs a profile lists, as
// MaxReferences bounds the references: beyond it, the pairs that come
// last in the profile's order (comparePairs: fewest stall cycles first)
// are left out and added up in OmittedPairs, but for the pairs of the
// references listed, which are always listed (so that every reference
// listed has its pair), and, in the profile of a run, a function's pairs
// with the small globals of one pool (so that pooling them makes a whole
// pair). Every pair listed keeps its exact counts, and
// the functions and objects still count the pairs left out (in the
// profile of one run; after a merge, as for references, a pair listed
// may lack what shards that left it out counted for it).
const MaxPairs = 1 << 13

// OmittedPairs add up the pairs a profile leaves out (beyond MaxPairs):
// how many, and their counters, without strides or evicted-by tables.
type OmittedPairs struct {
	Pairs uint64 `json:"pairs"`
	Stats
	Levels map[string]*Stats `json:"levels"`
}

func (o *OmittedPairs) parts() (*Stats, map[string]*Stats) { return &o.Stats, o.Levels }

// addOmitted adds the counters of levels into into, by cache, without
// evictor lists or evicted-by tables: those of an entry left out.
func addOmitted(into, levels map[string]*Stats) {
	for name, st := range levels {
		if into[name] == nil {
			into[name] = &Stats{}
		}
		evictors, evictedBy, others := st.Evictors, st.EvictedBy, st.EvictedByOthers
		st.Evictors, st.EvictedBy, st.EvictedByOthers = nil, nil, 0
		into[name].Add(st)
		st.Evictors, st.EvictedBy, st.EvictedByOthers = evictors, evictedBy, others
	}
}

// ByStall orders counters most stall cycles first, then most misses, then
// most accesses.
func ByStall(a, b *Stats) int {
	return cmp.Or(cmp.Compare(b.StallCycles, a.StallCycles), cmp.Compare(b.Misses, a.Misses), cmp.Compare(b.Accesses, a.Accesses))
}

// CompareReferences orders references as a profile lists them: ByStall,
// then by PC, function and object.
func CompareReferences(a, b *Reference) int {
	return cmp.Or(ByStall(&a.Stats, &b.Stats), compareReferenceKeys(a, b))
}

// compareReferenceKeys orders references by their keys: PC, function,
// object.
func compareReferenceKeys(a, b *Reference) int {
	return cmp.Or(cmp.Compare(a.PC, b.PC), cmp.Compare(a.Function, b.Function), cmp.Compare(a.Object, b.Object))
}

// sortReferences puts rs in the profile's order (CompareReferences).
func sortReferences(rs []Reference) {
	sortByStall(rs, func(r *Reference) *Stats { return &r.Stats }, compareReferenceKeys)
}

// TrimReferences keeps the first MaxReferences references in the
// profile's order and adds the others up in OmittedReferences; it does
// nothing (and sorts nothing) when there are not more. The top-level
// counters of the references must be those of the focus cache.
func (p *Profile) TrimReferences() {
	if len(p.References) <= MaxReferences {
		return
	}
	sortReferences(p.References)
	o := p.OmittedReferences
	if o == nil {
		o = &OmittedReferences{Levels: map[string]*Stats{}}
		p.OmittedReferences = o
	}
	for i := range p.References[MaxReferences:] {
		addOmitted(o.Levels, p.References[MaxReferences+i].Levels)
	}
	o.References += uint64(len(p.References) - MaxReferences)
	p.References = slices.Clone(p.References[:MaxReferences])
	focusOn(o, p.Focus)
}

// TrimPairs keeps the first MaxPairs pairs in the profile's order and
// those of the references listed, and adds the others up in
// OmittedPairs; it does nothing (and sorts nothing) when there are not
// more than MaxPairs. The top-level counters of the pairs must be those
// of the focus cache.
func (p *Profile) TrimPairs() {
	if len(p.Pairs) <= MaxPairs {
		return
	}
	sortByStall(p.Pairs, func(a *Pair) *Stats { return &a.Stats }, comparePairKeys)
	referenced := make(map[[2]string]bool, len(p.References))
	for i := range p.References {
		referenced[[2]string{p.References[i].Function, p.References[i].Object}] = true
	}
	o := p.OmittedPairs
	if o == nil {
		o = &OmittedPairs{Levels: map[string]*Stats{}}
	}
	kept := MaxPairs
	for i := MaxPairs; i < len(p.Pairs); i++ {
		if pr := &p.Pairs[i]; referenced[[2]string{pr.Function, pr.Object}] {
			p.Pairs[kept] = *pr
			kept++
		} else {
			addOmitted(o.Levels, pr.Levels)
			o.Pairs++
		}
	}
	if kept == len(p.Pairs) { // (all of them the references' pairs)
		return
	}
	p.Pairs = slices.Clone(p.Pairs[:kept])
	p.OmittedPairs = o
	focusOn(o, p.Focus)
}

// levelled is what everything with counters per cache shares: the focus
// copy at the top and the counters by cache.
type levelled interface {
	parts() (*Stats, map[string]*Stats)
}

// entry is what the kinds of entries share; K is the type of their keys.
type entry[K comparable] interface {
	levelled
	key() K
	// ownLevels gives the entry level counters of its own, copies of those
	// it shares with the entry it was copied from.
	ownLevels()
}

func (f *Function) ownLevels() {
	f.Levels = cloneLevels(f.Levels)
	if f.Inclusive != nil {
		in := *f.Inclusive
		in.Levels = cloneLevels(in.Levels)
		f.Inclusive = &in
	}
}
func (o *Object) ownLevels() {
	o.Levels = cloneLevels(o.Levels)
	o.SharingWrites = slices.Clone(o.SharingWrites)
	if o.LineUse != nil {
		use := make(map[string][]uint64, len(o.LineUse))
		for name, counts := range o.LineUse {
			use[name] = slices.Clone(counts)
		}
		o.LineUse = use
	}
}
func (p *Pair) ownLevels() {
	p.Levels = cloneLevels(p.Levels)
	p.Strides = cloneStrides(p.Strides)
}
func (l *Line) ownLevels() { l.Levels = cloneLevels(l.Levels) }
func (r *Reference) ownLevels() {
	r.Levels = cloneLevels(r.Levels)
	r.Strides = cloneStrides(r.Strides)
}

// cloneStrides returns a copy of s.
func cloneStrides(s *Strides) *Strides {
	if s == nil {
		return nil
	}
	return &Strides{Samples: s.Samples, Top: slices.Clone(s.Top)}
}

func (f *Function) key() string                        { return f.Name }
func (f *Function) parts() (*Stats, map[string]*Stats) { return &f.Stats, f.Levels }
func (o *Object) key() string                          { return o.FullName }
func (o *Object) parts() (*Stats, map[string]*Stats)   { return &o.Stats, o.Levels }
func (p *Pair) key() [2]string                         { return [2]string{p.Function, p.Object} }
func (p *Pair) parts() (*Stats, map[string]*Stats)     { return &p.Stats, p.Levels }
func (l *Line) key() lineKey                           { return lineKey{l.File, l.Line, l.Function} }
func (l *Line) parts() (*Stats, map[string]*Stats)     { return &l.Stats, l.Levels }
func (in *Inclusive) parts() (*Stats, map[string]*Stats) {
	return &in.Stats, in.Levels
}
func (r *Reference) key() referenceKey { return referenceKey{r.PC, r.Function, r.Object} }

// lineKey and referenceKey identify lines and references (entry.key).
type (
	lineKey struct {
		file string
		line int
		fn   string
	}
	referenceKey struct {
		pc         uint64
		fn, object string
	}
)

func (r *Reference) parts() (*Stats, map[string]*Stats) { return &r.Stats, r.Levels }

// Add adds b's counters to s (maps and evictor lists by key) and updates
// SpatialUse.
func (s *Stats) Add(b *Stats) {
	s.add(b)
	if len(b.Evictors) > 0 {
		s.Evictors = settledEvictors(s.Evictors)
	}
}

// add adds b's counters to s as Add does, but leaves s's evictor list out
// of order and with repeats (addEvictors; sortEvictorLists settles the
// lists of a profile once everything was added up).
func (s *Stats) add(b *Stats) {
	s.Accesses += b.Accesses
	s.Hits += b.Hits
	s.Misses += b.Misses
	s.IFetches += b.IFetches
	s.Reads += b.Reads
	s.Writes += b.Writes
	s.IFetchMisses += b.IFetchMisses
	s.ReadMisses += b.ReadMisses
	s.WriteMisses += b.WriteMisses
	s.StallCycles += b.StallCycles
	s.Causes.Add(b.Causes)
	s.TemporalHits += b.TemporalHits
	s.SpatialHits += b.SpatialHits
	s.UnknownHits += b.UnknownHits
	AddCounts(&s.EvictedBy, b.EvictedBy)
	s.EvictedByOthers += b.EvictedByOthers
	AddSharing(&s.InvalidatedBy, b.InvalidatedBy)
	AddSharing(&s.Invalidated, b.Invalidated)
	s.UsedBytes += b.UsedBytes
	s.FetchedBytes += b.FetchedBytes
	s.SpatialUse = ratio(s.UsedBytes, s.FetchedBytes)
	if len(b.Evictors) > 0 {
		s.addEvictors(b.Evictors)
	}
}

// addEvictors adds the evictors es to s's, leaving them out of order and
// with repeats (evictors of one reference and object, which
// settledEvictors makes one). When the list is full, its repeats are
// merged and it gets room for as many evictors again: adding the lists of
// many entries into one (pooling, merges) costs a sort now and then, not
// a search of the whole list at every addition, and the list stays
// within about twice its distinct evictors.
func (s *Stats) addEvictors(es []RefEvictor) {
	if n := len(s.Evictors); n+len(es) > cap(s.Evictors) && n >= 16 {
		merged := mergeRepeats(s.Evictors)
		s.Evictors = slices.Grow(merged, max(len(merged), len(es)))
	}
	s.Evictors = append(s.Evictors, es...)
}

// mergeRepeats returns es (reordered, in place) with the evictors of one
// reference and object made one, their counts added up.
func mergeRepeats(es []RefEvictor) []RefEvictor {
	slices.SortFunc(es, func(a, b RefEvictor) int {
		return cmp.Or(cmp.Compare(a.Reference, b.Reference), cmp.Compare(a.Object, b.Object))
	})
	out := es[:0]
	for _, e := range es {
		if k := len(out) - 1; k >= 0 && out[k].Reference == e.Reference && out[k].Object == e.Object {
			out[k].Count += e.Count
		} else {
			out = append(out, e)
		}
	}
	return out
}

// settledEvictors returns es as a profile lists evictors: repeats made
// one (mergeRepeats), in order (SortEvictors), the MaxRefEvictors most
// counted and the rest added up in one OtherEvictors entry.
func settledEvictors(es []RefEvictor) []RefEvictor {
	es = mergeRepeats(es)
	SortEvictors(es)
	out, named := es[:0], 0
	var other *RefEvictor // (in out)
	for _, e := range es {
		switch {
		case e.Reference != OtherEvictors && named < MaxRefEvictors:
			out = append(out, e)
			named++
		case other == nil:
			out = append(out, RefEvictor{Reference: OtherEvictors, Count: e.Count})
			other = &out[len(out)-1]
		default:
			other.Count += e.Count
		}
	}
	if other != nil {
		SortEvictors(out)
	}
	return out
}

// MaxRefEvictors bounds the evicting references a reference lists per
// cache; the rest are added up in one OtherEvictors entry.
const MaxRefEvictors = 8

// MaxEvictedBy bounds the objects an entry's EvictedBy lists per cache;
// the lines the others evicted are added up in EvictedByOthers.
const MaxEvictedBy = 32

// Evictions returns the entry's lines that fills evicted: EvictedBy's
// and EvictedByOthers's.
func (s *Stats) Evictions() uint64 {
	n := s.EvictedByOthers
	for _, k := range s.EvictedBy {
		n += k
	}
	return n
}

// trimEvictedBy keeps the MaxEvictedBy objects of s.EvictedBy that
// evicted the most (ties by name) and adds the others' lines to
// EvictedByOthers.
func (s *Stats) trimEvictedBy() {
	if len(s.EvictedBy) <= MaxEvictedBy {
		return
	}
	type count struct {
		name  string
		lines uint64
	}
	all := make([]count, 0, len(s.EvictedBy))
	for name, n := range s.EvictedBy {
		all = append(all, count{name, n})
	}
	slices.SortFunc(all, func(a, b count) int { return cmp.Or(cmp.Compare(b.lines, a.lines), cmp.Compare(a.name, b.name)) })
	for _, c := range all[MaxEvictedBy:] {
		s.EvictedByOthers += c.lines
		delete(s.EvictedBy, c.name)
	}
}

// OtherEvictors stands for the evicting references beyond the most
// frequent ones, added up (their Object is empty).
const OtherEvictors = "other"

// SortEvictors sorts evictors by CompareEvictors.
func SortEvictors(es []RefEvictor) { slices.SortFunc(es, CompareEvictors) }

// CompareEvictors orders evictors most first, then by reference and
// object.
func CompareEvictors(a, b RefEvictor) int {
	return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Reference, b.Reference), cmp.Compare(a.Object, b.Object))
}

// SetFocus makes cache the focus level: every entry's top-level counters
// become a copy of its counters at that cache, except StallCycles, which
// is the entry's total over every cache. An empty name picks the first
// cache holding data.
func (p *Profile) SetFocus(cache string) error {
	if cache == "" {
		cache = p.DefaultFocus()
	}
	if _, ok := p.Cache(cache); !ok {
		names := make([]string, len(p.Caches))
		for i, c := range p.Caches {
			names[i] = c.Name
		}
		return fmt.Errorf("no cache %q to focus on (caches: [%s])", cache, printableAll(names, " "))
	}
	p.Focus = cache
	p.forLevelled(func(e levelled) { focusOn(e, cache) })
	return nil
}

// restoreFocusCopies gives the entries of a profile just read their
// top-level counters, the copies of the focus cache's that the compressed
// form leaves out (an entry that has them gets the same again): when p
// has where-and-why entries, SetFocus(p.Focus).
func (p *Profile) restoreFocusCopies() error {
	if !p.Options.Where {
		return nil
	}
	if err := p.SetFocus(p.Focus); err != nil {
		return fmt.Errorf("profile: focus: %w", err)
	}
	return nil
}

// focusOn makes e's top-level counters a copy of its counters at cache,
// except StallCycles, its total over every cache (a nil level counts as
// none).
func focusOn(e levelled, cache string) {
	top, levels := e.parts()
	var stall uint64
	for _, s := range levels {
		if s != nil {
			stall += s.StallCycles
		}
	}
	if s := levels[cache]; s != nil {
		*top = *s
		top.EvictedBy = s.EvictedBy
		top.Evictors = s.Evictors
	} else {
		*top = Stats{}
	}
	top.StallCycles = stall
}

// DefaultFocus returns the first cache holding data, else the first cache.
func (p *Profile) DefaultFocus() string {
	if p.Machine != nil {
		for _, c := range p.Machine.Caches {
			if c.HoldsData() {
				return c.Name
			}
		}
	}
	if len(p.Caches) > 0 {
		return p.Caches[0].Name
	}
	return ""
}

// forLevelled calls f on every function (and its inclusive counters),
// object, pair, line and reference, and on the omitted references and
// pairs: the lists on every CPU at once, so f must change only the entry
// it is given.
func (p *Profile) forLevelled(f func(levelled)) {
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range p.Functions {
			f(&p.Functions[i])
			if in := p.Functions[i].Inclusive; in != nil {
				f(in)
			}
		}
		for i := range p.Objects {
			f(&p.Objects[i])
		}
	})
	wg.Go(func() {
		for i := range p.Pairs {
			f(&p.Pairs[i])
		}
	})
	wg.Go(func() {
		for i := range p.Lines {
			f(&p.Lines[i])
		}
	})
	for i := range p.References {
		f(&p.References[i])
	}
	wg.Wait()
	if p.OmittedReferences != nil {
		f(p.OmittedReferences)
	}
	if p.OmittedPairs != nil {
		f(p.OmittedPairs)
	}
}

// mergeWhere adds the where-and-why entries of q to p's, entry by entry
// (by name; objects by full name, references by PC, function and object).
func (p *Profile) mergeWhere(q *Profile, ix *whereIndex) {
	if renames := p.objectRenames(q); len(renames) > 0 {
		// The full names stay: merges find objects by them.
		full := make([]string, len(q.Objects))
		for i := range q.Objects {
			full[i] = q.Objects[i].FullName
		}
		q.renameAll(renames, nil)
		for i := range q.Objects {
			q.Objects[i].FullName = full[i]
		}
	}
	switch {
	case q.CallTree == nil:
	case p.CallTree == nil:
		p.CallTree = &CallTree{}
		fallthrough
	default:
		p.CallTree.merge(q.CallTree)
	}
	p.Functions = mergeEntries(p.Functions, q.Functions, &ix.functions, ix.take, func(a, b *Function) {
		a.Instructions += b.Instructions
		a.ComputeCycles += b.ComputeCycles
		a.SyncCycles += b.SyncCycles
		if b.Inclusive == nil {
			return
		}
		if a.Inclusive == nil {
			a.Inclusive = &Inclusive{Levels: map[string]*Stats{}}
		}
		a.Inclusive.Instructions += b.Inclusive.Instructions
		a.Inclusive.ComputeCycles += b.Inclusive.ComputeCycles
		a.Inclusive.SyncCycles += b.Inclusive.SyncCycles
		addLevels(a.Inclusive.Levels, b.Inclusive.Levels)
	})
	p.Objects = mergeEntries(p.Objects, q.Objects, &ix.objects, ix.take, addObject)
	p.Pairs = mergeEntries(p.Pairs, q.Pairs, &ix.pairs, ix.take, addPair)
	p.Lines = mergeEntries(p.Lines, q.Lines, &ix.lines, ix.take, nil)
	p.References = mergeEntries(p.References, q.References, &ix.references, ix.take, addReference)
	if b := q.OmittedReferences; b != nil {
		a := p.OmittedReferences
		if a == nil {
			a = &OmittedReferences{Levels: map[string]*Stats{}}
			p.OmittedReferences = a
		}
		a.References += b.References
		addLevels(a.Levels, b.Levels)
	}
	if b := q.OmittedPairs; b != nil {
		a := p.OmittedPairs
		if a == nil {
			a = &OmittedPairs{Levels: map[string]*Stats{}}
			p.OmittedPairs = a
		}
		a.Pairs += b.Pairs
		addLevels(a.Levels, b.Levels)
	}
	for _, m := range q.Modules {
		if !slices.Contains(p.Modules, m) {
			p.Modules = append(p.Modules, m)
		}
	}
}

// objectRenames returns the names that q's objects must take before q is
// added to p for every object's name to stay unique (the profiles of a
// process tree's programs each name their objects apart): an object p
// has (the same full name) takes p's name for it; another one that p's
// objects' names take (an allocation call path of its own) takes the
// shortest end of its allocation call path that tells it apart from
// that object (pathName), else its full name (with "#2", "#3"... when
// that is taken too).
func (p *Profile) objectRenames(q *Profile) map[string]string {
	byFull, used := make(map[string]string, len(p.Objects)), make(map[string]bool, len(p.Objects)+len(q.Objects))
	byName := make(map[string]*Object, len(p.Objects))
	for i := range p.Objects {
		o := &p.Objects[i]
		byFull[o.FullName] = o.Name
		byName[o.Name] = o
		used[o.Name] = true
	}
	var renames map[string]string
	rename := func(old, new string) {
		if renames == nil {
			renames = map[string]string{}
		}
		renames[old] = new
	}
	var clash []*Object // q's objects whose name p's take
	for i := range q.Objects {
		o := &q.Objects[i]
		switch name, ok := byFull[o.FullName]; {
		case ok:
			if name != o.Name {
				rename(o.Name, name)
			}
		case used[o.Name]:
			clash = append(clash, o)
		default:
			used[o.Name] = true
		}
	}
	for _, o := range clash {
		// The shortest end of its call path that p's object of its name
		// has not.
		name, other := o.FullName, byName[o.Name]
		for k := 1; k <= len(o.CallPath); k++ {
			cand := pathName(o.CallPath[:k], o.Name)
			if !used[cand] && (other == nil || k > len(other.CallPath) || pathName(other.CallPath[:k], o.Name) != cand) {
				name = cand
				break
			}
		}
		for k := 2; used[name]; k++ {
			name = fmt.Sprintf("%s#%d", o.FullName, k)
		}
		used[name] = true
		rename(o.Name, name)
	}
	return renames
}

// pathName names an object name after the end of its allocation call
// path, frames innermost first ("function file:line" each), as the
// engine tells objects of one name apart: "main.86.alloc_matrix.31.m".
func pathName(frames []string, name string) string {
	parts := []string{name}
	for _, f := range frames {
		fn, line := f, ""
		if i := strings.LastIndexByte(f, ' '); i >= 0 {
			fn, line = f[:i], f[i+1:]
			if j := strings.LastIndexByte(line, ':'); j >= 0 {
				line = line[j+1:]
			}
		}
		parts = append(parts, line, fn)
	}
	slices.Reverse(parts)
	return strings.Join(slices.DeleteFunc(parts, func(s string) bool { return s == "" }), ".")
}

// addObject, addPair and addReference add the fields of b that are not
// counters by cache to a, an entry of the same key (mergeEntries adds
// those): a heap object's size and blocks (a global's size is the same in
// each profile), writes that shared lines, strides.
func addObject(a, b *Object) {
	if a.Kind == "heap" {
		a.Size += b.Size
		a.Blocks += b.Blocks
	}
	AddSharingWrites(&a.SharingWrites, b.SharingWrites)
	AddLineUse(&a.LineUse, b.LineUse)
}

// AddLineUse adds the line use counts of b to *a, offset by offset.
func AddLineUse(a *map[string][]uint64, b map[string][]uint64) {
	for name, counts := range b {
		if *a == nil {
			*a = map[string][]uint64{}
		}
		sum := (*a)[name]
		if len(sum) < len(counts) {
			sum = append(sum, make([]uint64, len(counts)-len(sum))...)
		}
		for i, n := range counts {
			sum[i] += n
		}
		(*a)[name] = sum
	}
}
func addPair(a, b *Pair)           { a.Strides = a.Strides.Merged(b.Strides) }
func addReference(a, b *Reference) { a.Strides = a.Strides.Merged(b.Strides) }

// settleWhere puts the evictor lists in order, bounds the sharing tables
// and the references after entries were added up, and makes the
// top-level counters those of the focus cache again.
func (p *Profile) settleWhere() error {
	p.forLevelled(sortEvictorLists)
	p.TrimLists()
	if err := p.SetFocus(p.Focus); err != nil {
		return err
	}
	p.TrimReferences()
	p.TrimPairs()
	if p.CallTree != nil {
		p.CallTree.bound()
	}
	return nil
}

// sortEvictorLists settles the evictor lists of e's counters by cache
// (settledEvictors: repeats merged, in order). The top-level copy may no
// longer match its cache's: focusOn must make it again.
func sortEvictorLists(e levelled) {
	_, levels := e.parts()
	for _, s := range levels {
		if len(s.Evictors) > 1 {
			s.Evictors = settledEvictors(s.Evictors)
		}
	}
}

// whereIndex finds a profile's where-and-why entries by key, by kind:
// their indices, kept from one merge to the next (a nil map is made from
// the entries when needed).
type whereIndex struct {
	// take says that the entries added may be kept as they are (the
	// profiles they come from are let go), not copied.
	take               bool
	functions, objects map[string]int
	pairs              map[[2]string]int
	lines              map[lineKey]int
	references         map[referenceKey]int
}

// mergeEntries adds the entries of b to those of a with the same key
// (calling more for their own fields) and appends the others, with
// counters of their own unless take is set; *at finds a's entries by key
// (made from a when nil), and finds those appended too on return.
func mergeEntries[T any, K comparable, PT interface {
	*T
	entry[K]
}](a, b []T, at *map[K]int, take bool, more func(x, y PT)) []T {
	if *at == nil {
		*at = make(map[K]int, len(a)+len(b))
		for i := range a {
			(*at)[PT(&a[i]).key()] = i
		}
	}
	index := *at
	for i := range b {
		y := PT(&b[i])
		k := y.key()
		j, ok := index[k]
		if !ok {
			a = append(a, b[i])
			if !take {
				PT(&a[len(a)-1]).ownLevels()
			}
			index[k] = len(a) - 1
			continue
		}
		x := PT(&a[j])
		_, xl := x.parts()
		_, yl := y.parts()
		addLevels(xl, yl)
		if more != nil {
			more(x, y)
		}
	}
	return a
}

// addLevels adds the counters of b to a, cache by cache.
func addLevels(a, b map[string]*Stats) {
	for name, s := range b {
		if a[name] == nil {
			a[name] = &Stats{}
		}
		a[name].add(s)
	}
}

// cloneLevels returns a copy of counters by cache.
func cloneLevels(levels map[string]*Stats) map[string]*Stats {
	fresh := map[string]*Stats{}
	addLevels(fresh, levels)
	return fresh
}

// Module is an object file mapped into the traced process.
type Module struct {
	Path     string `json:"path"`
	TextAddr uint64 `json:"text_addr"` // run-time address of its .text
	TextSize uint64 `json:"text_size"`
}

// Rename renames objects and functions, old name → new name, everywhere
// the profile names them (pairs, references, evicted-by tables, evictor
// lists, invalidation tables). An old name that names nothing, or a new name already taken, is
// an error.
func (p *Profile) Rename(names map[string]string) error {
	if len(names) == 0 {
		return nil // nothing to look for in every entry
	}
	objs, funcs := map[string]string{}, map[string]string{}
	taken := map[string]bool{}
	for _, o := range p.Objects {
		taken["o"+o.Name] = true
	}
	for _, f := range p.Functions {
		taken["f"+f.Name] = true
	}
	for old, new := range names {
		switch {
		case taken["o"+old]:
			objs[old] = new
			if taken["o"+new] {
				return fmt.Errorf("--rename %s=%s: there is already an object %q", old, new, new)
			}
		case taken["f"+old]:
			funcs[old] = new
			if taken["f"+new] {
				return fmt.Errorf("--rename %s=%s: there is already a function %q", old, new, new)
			}
		default:
			return fmt.Errorf("--rename %s=%s: no object or function is called %q", old, new, old)
		}
	}
	p.renameAll(objs, funcs)
	return nil
}
