package sim

import (
	"math/bits"
	"path/filepath"
	"strings"

	"github.com/memspy/memspy/attrib"
	"github.com/memspy/memspy/profile"
	"github.com/memspy/memspy/trace"
)

// DefaultMinObjectSize is the size below which global variables are
// small: the profile shows the cold ones in their module's pool
// (profile.Object.Pool) unless Options say otherwise.
const DefaultMinObjectSize = 64

// stackReach is how far below a thread's innermost frame's entry stack
// pointer an address still counts as that frame's locals.
const stackReach = 1 << 20

// Line states for the causes of misses, per level and line (MemSpy: the
// cause of a miss is the first event that removed the line since it was
// last there).
const (
	neverHeld   uint8 = iota // a miss is cold
	held                     // in the cache since its last fill
	replaced                 // evicted to make room: a miss is a replacement miss
	invalidated              // invalidated by a trace record: an invalidation miss
	// (then trueSharing and falseSharing, in coherence.go)
)

// refKey identifies an access point: the instruction at pc (0 for
// instruction fetches and unknown PCs) running in calling context ctx and
// touching data bin bin. Its counters are kept twice, in its site's and in
// its calling context's (refTable), so that the profile's entries add up
// sites and contexts; nothing is kept per access point (there are
// millions: an instruction runs in many calling contexts), but the lines
// it filled say its site and context (point).
type refKey struct {
	pc  uint64
	ctx int32
	bin int32
}

// siteKey identifies a site: the access points of one instruction in
// every calling context of one procedure (rootProc in the root context),
// touching one data bin. References, pairs, lines and objects add up
// sites; inclusive counters add up calling contexts.
type siteKey struct {
	pc        uint64
	proc, bin int32
}

// point is an access point as the levels' slots and the invalidations
// keep it: its site's id in the high 32 bits and its calling context in
// the low ones. Negative (noPoint) for none.
type point int64

// noPoint stands for no access point: a reference whose access point is
// to be found when needed.
const noPoint point = -1

// pointOf returns the access point of site in calling context ctx.
func pointOf(site, ctx int32) point { return point(int64(site)<<32 | int64(uint32(ctx))) }

// site returns the id of p's site.
func (p point) site() int32 { return int32(p >> 32) }

// ctx returns p's calling context.
func (p point) ctx() int32 { return int32(uint32(p)) }

// pointBin returns the data bin access point p touches (its site's).
func (at *attribution) pointBin(p point) int32 { return at.sites[p.site()].bin }

// rootProc is the procedure of a siteKey in the root context (whose
// counters count inclusively in its function, not in a context).
const rootProc int32 = -1

// hash spreads k over 64 bits.
func (k siteKey) hash() uint64 {
	return (k.pc ^ uint64(uint32(k.proc))<<40 ^ uint64(uint32(k.bin))<<20) * 0x9e3779b97f4a7c15
}

// refCacheSlots is the size of the direct-mapped cache of access points
// (a power of two): 128 KiB of slots, which a second-level cache
// holds. With 256, the lookups behind its misses took 14% of the CPU
// time of a --where simulation of python3.
const refCacheSlots = 4096

// refSlot is an entry of the small direct-mapped cache of access points
// in front of the table of sites: the access point of key, the counters
// of its site at the level whose hits it counted last (the hit path looks
// an access point up at one level: its first for its kind; st is valid
// while that level's refTable stays: forgetStats), and its site's strides
// once looked up (while the strides stay: forgetStats).
type refSlot struct {
	key    refKey
	pt     point
	lvl    *levelAttrib
	st     *refStats
	stride *strideStats
}

// refStats are the counters of one site or calling context at one
// level, which the entries of the profile add up (sums).
type refStats struct {
	acc, miss                       [numAccessKinds]uint64
	cold, replacement, invalidation uint64
	trueSharing, falseSharing       uint64 // of the invalidations, by other processors' writes
	unknown, unknownHits            uint64 // sampling: misses and hits whose outcome is not known
	temporal, spatial               uint64
	used, fetched                   uint64 // bytes touched of the lines it filled, and their size, as they left
}

// add adds b's counters to c's.
func (c *refStats) add(b *refStats) {
	for k := range numAccessKinds {
		c.acc[k] += b.acc[k]
		c.miss[k] += b.miss[k]
	}
	c.cold += b.cold
	c.replacement += b.replacement
	c.invalidation += b.invalidation
	c.trueSharing += b.trueSharing
	c.falseSharing += b.falseSharing
	c.unknown += b.unknown
	c.unknownHits += b.unknownHits
	c.temporal += b.temporal
	c.spatial += b.spatial
	c.used += b.used
	c.fetched += b.fetched
}

// causes returns the causes of c's misses as the profile counts them.
func (c *refStats) causes() profile.Causes {
	return profile.Causes{Cold: c.cold, Replacement: c.replacement, Invalidation: c.invalidation,
		TrueSharing: c.trueSharing, FalseSharing: c.falseSharing, Unknown: c.unknown}
}

// levelAttrib is a level's attribution state.
type levelAttrib struct {
	slots []slotFill // by slot: who filled it
	mask  []uint64
	words int        // mask words per slot: a bit per byte of the line
	state lineStates // line → neverHeld, held, replaced or invalidated
	refs  refTable
}

// slotFill is what the attribution keeps of the line in a slot of a
// level, together so that a fill or an eviction touches one host cache
// line of it: the access point whose miss filled the slot, the line's
// data bin (the reference's, its site's) and whether a miss filled it
// (demand; not a victim from above): then its byte use counts.
type slotFill struct {
	fill   point
	bin    int32
	demand bool
}

// lineStates holds the state of every line a level has held (neverHeld
// for the others), 4 bits a line, in pages of stateLines lines found by a
// map of page numbers: the lines a program touches come in runs, and a
// map of lines would hold 8 bytes of key for each. The page used last,
// then those used lately are found first, the latter in a small
// direct-mapped cache by page number, so that lines far apart (a list
// walk, the misses of a large cache) seldom pay for a map lookup.
type lineStates struct {
	pages  map[uint64]*statePage
	recent *[statePageCache]recentPage // nil before the first page
	last   uint64                      // the number of the page used last
	page   *statePage                  // the page used last, nil before the first
}

// stateLines is how many lines' states a page holds.
const stateLines = 256

// statePageCache is the number of pages the direct-mapped cache in front
// of lineStates' map holds (a power of two): 4096, a footprint of 1 Mi
// lines (64 MiB of 64-byte lines) in 64 KiB. Without it the map lookups
// took a third of the CPU time of BenchmarkWhere's list walk.
const statePageCache = 4096

// statePage holds the states of stateLines lines, two a byte.
type statePage [stateLines / 2]uint8

// recentPage is a place of lineStates' cache of pages: a page and its
// number (nil: empty).
type recentPage struct {
	n uint64
	p *statePage
}

// pageOf returns the page holding line's state, nil when there is none
// and create is false.
func (s *lineStates) pageOf(line uint64, create bool) *statePage {
	n := line / stateLines
	if s.page != nil && s.last == n {
		return s.page
	}
	if s.recent != nil {
		if r := &s.recent[n%statePageCache]; r.p != nil && r.n == n {
			s.last, s.page = n, r.p
			return r.p
		}
	}
	p := s.pages[n]
	if p == nil {
		if !create {
			return nil
		}
		if s.pages == nil {
			s.pages, s.recent = map[uint64]*statePage{}, new([statePageCache]recentPage)
		}
		p = new(statePage)
		s.pages[n] = p
	}
	s.recent[n%statePageCache] = recentPage{n, p}
	s.last, s.page = n, p
	return p
}

// get returns the state of line.
func (s *lineStates) get(line uint64) uint8 {
	p := s.pageOf(line, false)
	if p == nil {
		return neverHeld
	}
	i := line % stateLines
	return p[i/2] >> (4 * (i % 2)) & 15
}

// set makes v (below 16) the state of line.
func (s *lineStates) set(line uint64, v uint8) {
	p := s.pageOf(line, true)
	i := line % stateLines
	shift := 4 * (i % 2)
	p[i/2] = p[i/2]&^(15<<shift) | v<<shift
}

// refTable holds the counters of the sites that have any at one level
// and of every calling context (fewer, and most count at most levels),
// and who evicted or invalidated whose lines there.
type refTable struct {
	sites counterTable
	ctxs  chunked[refStats] // by calling context
	// ctx and ctxStats are the calling context counted last and its
	// counters (nil before any): consecutive events mostly share one.
	ctx      int32
	ctxStats *refStats
	// evicted counts the lines of each site's fills that other sites'
	// fills evicted (bounded), evictedBins those of each site's fills by
	// evicting data bin (exact), and evictedCtxs holds the calling
	// contexts whose fills were evicted.
	evicted     evictorTable
	evictedBins pairCounts
	evictedCtxs bitset
	// sharing holds, on several processors, the invalidations of the
	// lines of each access point's fills and by each one's writes.
	sharing map[point]*refSharing
	// use counts, per data bin, the byte offsets used of the lines that
	// left (lineuse.go).
	use byteUse
}

// counterTable holds the counters of the sites that have any at one
// level. Most have counters at few levels (instruction fetches at the
// instruction cache, data at the data cache, and at the levels below only
// those that missed), so the counters are kept densely in order of first
// use, found through an index by id. They are kept in chunks, which never
// move: the table grows without copying.
type counterTable struct {
	index []int32           // by id: its place in stats plus one, 0 for none
	stats chunked[refStats] // in order of first use
	n     int32             // counters in use
}

// find returns the counters of id, nil when it has none.
func (t *counterTable) find(id int32) *refStats {
	if int(id) < len(t.index) {
		if k := t.index[id]; k != 0 {
			return t.stats.find(int(k - 1))
		}
	}
	return nil
}

// add makes counters for id, which has none.
func (t *counterTable) add(id int32) *refStats {
	if int(id) >= len(t.index) {
		t.index = append(t.index, make([]int32, int(id)+1-len(t.index)+len(t.index)/2)...)
	}
	t.n++
	t.index[id] = t.n
	return t.stats.at(int(t.n - 1))
}

// at returns the counters of id, made when it has none. The pointer
// stays valid.
func (t *counterTable) at(id int32) *refStats {
	if st := t.find(id); st != nil {
		return st
	}
	return t.add(id)
}

// mark adds to set the ids whose counters count anything.
func (t *counterTable) mark(set bitset) {
	for id, k := range t.index {
		if k != 0 && t.stats.find(int(k-1)).counts() {
			set.set(int32(id))
		}
	}
}

// counts reports whether c counts anything: accesses, misses or bytes
// fetched.
func (c *refStats) counts() bool {
	return c.acc != [numAccessKinds]uint64{} || c.miss != [numAccessKinds]uint64{} || c.fetched != 0
}

// reset zeroes every counter and keeps the sites' and contexts' places.
func (t *refTable) reset() {
	t.sites.stats.reset()
	t.ctxs.reset()
	t.evicted, t.evictedBins, t.evictedCtxs, t.sharing, t.use = evictorTable{}, pairCounts{}, nil, nil, byteUse{}
}

// chunked is a growable array kept in chunks of chunkLen elements that
// never move: it grows without copying, and pointers into it stay valid.
type chunked[T any] struct{ chunks [][]T }

// chunkLen is how many elements a chunk of a chunked array holds.
const chunkLen = 1 << 10

// at returns element i, making room for it.
func (c *chunked[T]) at(i int) *T {
	for i/chunkLen >= len(c.chunks) {
		c.chunks = append(c.chunks, make([]T, chunkLen))
	}
	return &c.chunks[i/chunkLen][i%chunkLen]
}

// find returns element i, nil when there is no room for it yet.
func (c *chunked[T]) find(i int) *T {
	if i/chunkLen < len(c.chunks) {
		return &c.chunks[i/chunkLen][i%chunkLen]
	}
	return nil
}

// reset zeroes every element.
func (c *chunked[T]) reset() {
	for _, ch := range c.chunks {
		clear(ch)
	}
}

func newLevelAttrib(slots int, lineSize uint64) *levelAttrib {
	words := int(max(1, lineSize/64))
	return &levelAttrib{
		slots: make([]slotFill, slots), mask: make([]uint64, slots*words), words: words,
	}
}

// stats returns the counters of access point p's site and of its
// calling context, which count its every event alike.
func (a *levelAttrib) stats(p point) (site, ctx *refStats) {
	return a.refs.sites.at(p.site()), a.ctxCounters(p.ctx())
}

// ctxCounters returns the counters of calling context ctx.
func (a *levelAttrib) ctxCounters(ctx int32) *refStats {
	t := &a.refs
	if t.ctxStats == nil || ctx != t.ctx {
		t.ctx, t.ctxStats = ctx, t.ctxs.at(int(ctx))
	}
	return t.ctxStats
}

// use marks the bytes of [a, a+s) in the line in slot of l as used and
// reports whether they all were already (a temporal hit, else spatial).
func (a *levelAttrib) use(l *level, slot int, addr, s uint64) bool {
	off := addr & l.offMask
	n := min(s, l.lineSize-off)
	if a.words == 1 && n < 64 {
		// One mask word: touch without the loop.
		bits := (uint64(1)<<n - 1) << off
		m := &a.mask[slot]
		old := *m&bits == bits
		*m |= bits
		return old
	}
	return a.touch(slot, off, n)
}

// touch marks bytes [off, off+n) of the line in slot as used and reports
// whether they all were already.
func (a *levelAttrib) touch(slot int, off, n uint64) bool {
	m := a.mask[slot*a.words : (slot+1)*a.words]
	old := true
	for n > 0 {
		w, o := off/64, off%64
		k := min(n, 64-o)
		bits := ^uint64(0)
		if k < 64 {
			bits = (1<<k - 1) << o
		}
		old = old && m[w]&bits == bits
		m[w] |= bits
		off, n = off+k, n-k
	}
	return old
}

// used returns the bytes of the line in slot touched since its fill.
func (a *levelAttrib) used(slot int) uint64 {
	n := 0
	for _, w := range a.mask[slot*a.words : (slot+1)*a.words] {
		n += bits.OnesCount64(w)
	}
	return uint64(n)
}

// evicted counts a line of access point victim's fill here that the fill
// of access point by evicted.
func (a *levelAttrib) evicted(at *attribution, victim, by point) {
	a.refs.evicted.add(victim.site(), by.site())
	a.refs.evictedBins.add(victim.site(), at.pointBin(by), 1)
	a.refs.evictedCtxs = a.refs.evictedCtxs.grow(victim.ctx())
	a.refs.evictedCtxs.set(victim.ctx())
}

// resetStats zeroes the counters and keeps the line state.
func (a *levelAttrib) resetStats() {
	a.refs.reset()
}

// attribution is the hierarchy's attribution state: who references what.
type attribution struct {
	code     *attrib.Code
	data     *attrib.Data
	sym      Symbolizer // nil: names by address
	missOnly bool
	// spanBlock is the block of the spans of fetches (trace.IFetchRun)
	// that a reader may make for this attribution, 0 when none
	// (Hierarchy.IFetchRuns).
	spanBlock uint64
	// protocol is FlashPoint's monitoring (MonitorProtocol): the profile
	// finds the procedure of a miss from its PC, and the calling context
	// stays the root one. batch and event locate the current reference,
	// whose PC only a miss reads (missPC): reading every reference's would
	// cost more than the misses do.
	protocol bool
	batch    *trace.Batch
	event    int
	minSize  uint64      // globals below it are small: pooled per module when cold
	modules  []moduleMap // object files mapped, in order
	tid      uint32      // thread of the current reference
	// inAlloc holds the threads running the program's allocator (between
	// allocator-begin and -end markers), allocating whether tid is one:
	// their references to freed memory go to the allocator's bin.
	inAlloc    map[uint32]bool
	allocating bool
	// loader is the text of the dynamic loader, whose references to
	// memory of no known structure (its link maps, its own small heap,
	// the TLS blocks it sets up) go to its bin.
	loader [2]uint64
	ctx    int32  // calling context of the current reference
	pc     uint64 // its PC (0 for fetches)
	// hitTid is the thread whose hits the hit bypass may count in ctx:
	// tid, or noThread while tid is passing a call on through a PLT or
	// the dynamic linker's resolver, when its next instruction may change
	// its context (attrib.Code.At must see it).
	hitTid uint32
	// strideAddr is the address of the current data reference from the
	// CPU, noAddr when the current reference counts no stride.
	strideAddr uint64

	sites    []siteKey // sites by id
	siteIDs  keyTable[siteKey]
	refCache [refCacheSlots]refSlot
	// fetchMemo holds the counters of the last fetch hit's access point.
	fetchMemo fetchMemo
	syncWait  []uint64 // cycles waited at synchronization, by calling context
	strides   strideTable
	// procLocals caches the Symbolizer's local variables by procedure.
	procLocals map[int32][]attrib.Local
	// joinSites is join with a Symbolizer, else nil.
	joinSites attrib.Join
	// released is set once the counters per site, context and access
	// point are let go (release).
	released bool
	attribSinks
}

// attribSinks are the counts of the attribution beyond the levels' and
// the strides' (a warm-up swaps them for scratch ones: see sampling).
type attribSinks struct {
	instr []uint64 // instructions fetched, by calling context
	// writes count the writes that invalidated other processors' copies
	// (sharing.go).
	writes map[writeKey]*writeCounts
}

// noAddr marks the absence of a stride address.
const noAddr = ^uint64(0)

// noThread is a thread id no event has: hitTid when no thread's hits may
// bypass.
const noThread = ^uint32(0)

// strideSlots is how many distinct strides a site counts
// (space-saving: a new stride takes the least counted slot and inherits its
// count as possible error, so a count less its error is a lower bound and
// every stride making more than 1/strideSlots of the total is kept).
const strideSlots = 8

// strideTable holds the strides of the sites, by id: the differences
// between the addresses of consecutive data references of a site's
// instruction (touching its data bin, in any calling context: strides
// are the instruction's, as SIGMA's and METRIC's are). Most sites see
// one distinct stride (or none): each keeps its first in place, and those
// that see a second move to a table of strideSlots slots of their own.
type strideTable struct {
	sites chunked[strideStats]
	slots chunked[slotTable]
	n     int32 // slot tables in use
}

// strideStats are the strides of one site's data references: 32 bytes,
// as there are hundreds of thousands.
type strideStats struct {
	last uint64 // address of its previous reference
	// first is its one distinct stride and the strides counted (all of
	// it), while it has no slot table; c == 0 while it has none.
	first struct {
		d int64
		c uint64
	}
	slots   int32 // its slot table in strideTable.slots plus one, 0 while it has seen one distinct stride
	started bool
}

// slotTable holds the strides of a site that saw more than one.
type slotTable struct {
	n     uint64 // strides counted
	slots [strideSlots]strideSlot
}

// strideSlot counts one stride; c == 0 marks a free slot. err is 0 but in
// a slot table (space-saving's error).
type strideSlot struct {
	d      int64
	c, err uint64
}

// reset forgets every stride.
func (t *strideTable) reset() {
	t.sites.reset()
	t.slots.reset()
	t.n = 0
}

// find returns the strides of site id, nil when none were ever counted.
func (t *strideTable) find(id int32) *strideStats { return t.sites.find(int(id)) }

// slotsOf returns the slot table of st, made from its first stride when
// it has none.
func (t *strideTable) slotsOf(st *strideStats) *slotTable {
	if st.slots == 0 {
		t.n++
		st.slots = t.n
		tb := t.slots.at(int(t.n - 1))
		tb.n = st.first.c
		tb.slots[0] = strideSlot{d: st.first.d, c: st.first.c}
		return tb
	}
	return t.slots.find(int(st.slots - 1))
}

// counted returns the strides counted for st, how many and by slot: its
// first stride alone (in one), or its slot table's.
func (t *strideTable) counted(st *strideStats, one *[1]strideSlot) (uint64, []strideSlot) {
	if st.slots == 0 {
		one[0] = strideSlot{d: st.first.d, c: st.first.c}
		return st.first.c, one[:]
	}
	tb := t.slotsOf(st)
	return tb.n, tb.slots[:]
}

// strideOf returns the strides of access point ref's site.
func (at *attribution) strideOf(ref point) *strideStats { return at.strides.sites.at(int(ref.site())) }

// stride counts the stride of access point ref's data reference at a.
func (at *attribution) stride(ref point, a uint64) { at.countStride(at.strideOf(ref), a) }

// countStride counts the stride of a data reference at a in st, a site's
// strides.
func (at *attribution) countStride(st *strideStats, a uint64) {
	if !st.started {
		st.started, st.last = true, a
		return
	}
	d := int64(a - st.last)
	st.last = a
	if st.slots == 0 {
		switch {
		case st.first.c == 0:
			st.first.d, st.first.c = d, 1
			return
		case st.first.d == d:
			st.first.c++
			return
		}
	}
	// A second distinct stride, or more: as with every slot in place.
	tb := at.strides.slotsOf(st)
	tb.n++
	sl := &tb.slots
	least := 0
	for i := range sl {
		if sl[i].c == 0 {
			sl[i] = strideSlot{d: d, c: 1}
			return
		}
		if sl[i].d == d {
			sl[i].c++
			if i > 0 && sl[i].c > sl[i-1].c {
				sl[i], sl[i-1] = sl[i-1], sl[i]
			}
			return
		}
		if sl[i].c < sl[least].c {
			least = i
		}
	}
	sl[least] = strideSlot{d: d, c: sl[least].c + 1, err: sl[least].c}
}

// moduleMap is a mapped object file.
type moduleMap struct {
	path           string
	textAddr, size uint64
}

func newAttribution(opt Options) *attribution {
	protocol := opt.Monitor == MonitorProtocol
	var link attrib.Linkage // calls through PLTs: as a direct call to the function reached
	if opt.Symbols != nil {
		link = opt.Symbols
	}
	at := &attribution{code: attrib.NewCode(link), data: attrib.NewData(), sym: opt.Symbols,
		missOnly: opt.MissOnly || protocol, protocol: protocol,
		minSize: opt.MinObjectSize, procLocals: map[int32][]attrib.Local{},
		inAlloc: map[uint32]bool{}}
	if at.minSize == 0 {
		at.minSize = DefaultMinObjectSize
	}
	if at.sym != nil {
		at.joinSites = at.join
	}
	// Site 0 is the zero key's, so that the access point cache's empty
	// slots (the zero key, point 0) hold the truth.
	at.site(refKey{})
	return at
}

// ref returns the access point of the current reference touching data
// bin bin. The allocator's references to freed memory and to memory of no
// block (chunk headers, the top chunk) are its own.
func (at *attribution) ref(bin int32) point { return at.slot(bin).pt }

// hitStats is ref for a hit at level la, also returning the counters the
// hit counts in: its site's and its calling context's there.
func (at *attribution) hitStats(la *levelAttrib, bin int32) (e *refSlot, site, ctx *refStats) {
	e = at.slot(bin)
	if e.lvl != la {
		e.lvl, e.st = la, la.refs.sites.at(e.pt.site())
	}
	return e, e.st, la.ctxCounters(e.key.ctx)
}

// fetchStats is hitStats for an instruction fetch hit (PC 0), but for
// the access point: consecutive fetches mostly count at one access
// point (one calling context, one data bin of code), whose counters are
// kept aside (fetchMemo) as long as they are.
func (at *attribution) fetchStats(la *levelAttrib, bin int32) (site, ctx *refStats) {
	m := &at.fetchMemo
	if m.site != nil && m.la == la && m.ctx == at.ctx && m.bin == bin && m.allocating == at.allocating {
		return m.site, m.cs
	}
	_, site, ctx = at.hitStats(la, bin)
	*m = fetchMemo{la: la, ctx: at.ctx, bin: bin, allocating: at.allocating, site: site, cs: ctx}
	return site, ctx
}

// fetchMemo holds the counters of the access point of the last
// instruction fetch that the hit bypass counted (fetchStats), at level
// la, for the current reference's calling context ctx, the line's data
// bin and the allocating flag then; site nil: none.
type fetchMemo struct {
	la         *levelAttrib
	ctx, bin   int32
	allocating bool
	site, cs   *refStats
}

// slot returns the access point cache's slot holding the access point of
// the current reference touching data bin bin (see ref).
func (at *attribution) slot(bin int32) *refSlot {
	if (bin == attrib.FreedBin || bin == attrib.OtherBin) && at.allocating {
		bin = at.data.AllocatorBin()
	}
	k := refKey{at.pc, at.ctx, bin}
	e := &at.refCache[(k.pc^k.pc>>9^uint64(uint32(bin))*0x9e3779b1^uint64(uint32(k.ctx))<<4)&(refCacheSlots-1)]
	if e.key == k {
		return e
	}
	e.key, e.pt, e.lvl, e.st, e.stride = k, pointOf(at.site(k), k.ctx), nil, nil, nil
	return e
}

// forgetStats forgets the counters the access point cache's slots hold:
// a level's refTable or the strides were swapped or let go.
func (at *attribution) forgetStats() {
	at.fetchMemo = fetchMemo{}
	for i := range at.refCache {
		at.refCache[i].lvl, at.refCache[i].st, at.refCache[i].stride = nil, nil, nil
	}
}

// site returns the id of access point k's site, making it when new.
func (at *attribution) site(k refKey) int32 {
	sk := siteKey{pc: k.pc, proc: rootProc, bin: k.bin}
	if k.ctx != attrib.RootContext {
		sk.proc = at.code.Contexts()[k.ctx].Proc
	}
	id := at.siteIDs.id(sk, len(at.sites))
	if int(id) == len(at.sites) {
		at.sites = append(at.sites, sk)
	}
	return id
}

// release lets go of the counters kept per site and calling context
// (and of the index finding sites), once whereProfile has
// added them up: before the profile's entries are made, the largest
// memory of a run. The attribution can then count nothing more.
func (at *attribution) release(levels []*level) {
	at.released = true
	at.forgetStats()
	for _, l := range levels {
		if l.attr != nil {
			l.attr.refs = refTable{}
		}
	}
	at.strides, at.siteIDs = strideTable{}, keyTable[siteKey]{}
}

// releaseStridesAndEvictions lets go of the strides and of who evicted
// whom, once whereProfile has added them up (and of the access point
// cache's pointers into the strides).
func (at *attribution) releaseStridesAndEvictions(levels []*level) {
	at.forgetStats()
	at.strides = strideTable{}
	for _, l := range levels {
		if l.attr != nil {
			l.attr.refs.evicted, l.attr.refs.evictedBins = evictorTable{}, pairCounts{}
		}
	}
}

// waited counts w cycles waited at synchronization in calling context ctx.
func (at *attribution) waited(ctx int32, w uint64) {
	if int(ctx) >= len(at.syncWait) {
		at.syncWait = append(at.syncWait, make([]uint64, int(ctx)+1-len(at.syncWait)+16)...)
	}
	at.syncWait[ctx] += w
}

// fetched counts n instructions fetched in the current calling context.
func (at *attribution) fetched(n uint64) {
	if int(at.ctx) >= len(at.instr) {
		at.instr = append(at.instr, make([]uint64, int(at.ctx)+1-len(at.instr)+16)...)
	}
	at.instr[at.ctx] += n
}

// setCurrent makes event i of b the current reference. Under protocol
// monitoring it only notes where the event is (see missPC): the call
// stacks are not asked for a calling context on every event, and the
// context of hits, always the root one, holds on every thread.
func (at *attribution) setCurrent(b *trace.Batch, i int) {
	if at.protocol {
		if at.batch != b { // once per batch: a pointer stored per event costs a write barrier
			at.batch = b
		}
		at.event = i
		at.hitTid = b.Thread[i]
		return
	}
	at.setContext(b, i)
}

// setContext makes event i of b the current reference, in the calling
// context its thread is in when it runs the event's instruction.
func (at *attribution) setContext(b *trace.Batch, i int) {
	pc := b.PC[i]
	if k := b.Kind[i]; k == trace.IFetch || k == trace.IFetchRun {
		pc = 0
	}
	at.tid = b.Thread[i]
	at.allocating = len(at.inAlloc) > 0 && at.inAlloc[at.tid]
	at.pc = pc
	at.setRunning(runPC(b, i))
}

// setRunning sets the calling context of the current reference's thread
// when it runs the instruction at pc (0: unknown).
func (at *attribution) setRunning(pc uint64) {
	var passing bool
	at.ctx, passing = at.code.At(at.tid, pc)
	at.hitTid = at.tid
	if passing {
		at.hitTid = noThread
	}
}

// runPC returns the address of the instruction that event i of b shows its
// thread running: a reference's (a fetch's own address), 0 for other
// events, whose PC is a call site (or a call or return instruction, which
// Call and Return have seen) and must not move a call through a PLT on.
func runPC(b *trace.Batch, i int) uint64 {
	switch k := b.Kind[i]; {
	case k == trace.IFetch || k == trace.IFetchRun:
		return b.Addr[i]
	case k.IsAccess():
		return b.PC[i]
	}
	return 0
}

// missPC takes the PC of the access point of a miss from the current
// reference (protocol monitoring): an instruction fetch's PC is its
// address.
func (at *attribution) missPC() {
	b, i := at.batch, at.event
	at.pc = b.PC[i]
	if k := b.Kind[i]; k == trace.IFetch || k == trace.IFetchRun {
		at.pc = b.Addr[i]
	}
}

// attribHits is attribution's hitObserver: the bypass takes fetches,
// reads and writes to lines already dirty (a write hit changes nothing
// else there), and counts each at its access point (attributedHit). The
// current calling context holds while the bypass stays on the thread that
// is not passing a call on (hitTid, see Process).
type attribHits struct{ h *Hierarchy }

// attribMissHits is attribHits when the attribution counts misses only:
// a hit then counts nothing at its access point, only the instruction
// fetched in the current calling context, so the bypass may count hits
// in runs, whatever their lines (a slotFree runObserver).
type attribMissHits struct{ attribHits }

func (o attribMissHits) seeRun(_ int, fetches, _ uint64) {
	if fetches > 0 {
		o.h.attr.fetched(fetches)
	}
}

func (attribMissHits) slotFree() {}

func (o attribHits) takes(l *level, k trace.Kind, slot int) bool {
	switch k {
	case trace.IFetch, trace.Read:
		return true
	case trace.Write:
		return l.c.Dirty(slot)
	case trace.IFetchRun:
		return o.h.attr.spanBlock > 0 // a span
	}
	return false // a modify: the slow path's
}

func (o attribHits) see(l *level, b *trace.Batch, i, slot int) {
	if b.Kind[i] == trace.IFetchRun {
		o.seeSpan(l, b, i, slot)
		return
	}
	kk := kRead
	switch b.Kind[i] {
	case trace.IFetch:
		kk = kIFetch
	case trace.Write:
		kk = kWrite
	}
	// A reference of size 0 touches 1 byte, as in ref.
	o.h.attributedHit(l, kk, slot, b.PC[i], b.Addr[i], max(uint64(b.Size[i]), 1))
}

// seeFetches counts the hits of the instruction fetches i to j-1 of b,
// all on slot of l, as see would one by one: one calling context, one
// line, one access point.
func (o attribHits) seeFetches(l *level, b *trace.Batch, i, j, slot int) {
	at := o.h.attr
	n := uint64(j - i)
	at.fetched(n)
	at.pc = 0
	if at.missOnly {
		return
	}
	la := l.attr
	st, cs := at.fetchStats(la, la.slots[slot].bin)
	var temporal uint64
	if la.words == 1 {
		// use's one-word case with the mask in a register: each fetch
		// lies in the line (hitsObserved), so its bytes are at most 64
		// (1<<64 is 0 in Go: all 64 bits then).
		m, sizes := la.mask[slot], b.Size[i:j]
		for e, a := range b.Addr[i:j] {
			bits := (uint64(1)<<max(uint64(sizes[e]), 1) - 1) << (a & l.offMask)
			if m&bits == bits {
				temporal++
			}
			m |= bits
		}
		la.mask[slot] = m
	} else {
		for e := i; e < j; e++ {
			if la.use(l, slot, b.Addr[e], max(uint64(b.Size[e]), 1)) {
				temporal++
			}
		}
	}
	st.hits(kIFetch, n, temporal)
	cs.hits(kIFetch, n, temporal)
}

// seeSpan counts the hits of the instruction fetches of the span of event
// i of b (see trace.IFetchRun), all on slot of l, as see would one by one:
// one calling context, one line, one access point. Its instructions'
// bytes are apart, so that each one's are used already when they were
// before the span.
func (o attribHits) seeSpan(l *level, b *trace.Batch, i, slot int) {
	at, la := o.h.attr, l.attr
	n := uint64(b.Size[i])
	at.fetched(n)
	at.pc = 0
	if at.missOnly {
		return
	}
	st, cs := at.fetchStats(la, la.slots[slot].bin)
	a, ends := b.Addr[i], b.PC[i]
	off := a & l.offMask
	word := &la.mask[slot*la.words+int(off/64)] // (the block is in one word)
	start := off % 64                           // the first byte's bit in it, its block's at bit 0 or off's
	ends &^= uint64(1)<<start - 1
	last := 63 - uint64(bits.LeadingZeros64(ends))
	span := (uint64(1)<<(last-start)<<1 - 1) << start // bits start..last (1<<64 is 0 in Go)
	var temporal uint64
	switch m := *word & span; m {
	case span:
		temporal = n
	case 0:
	default:
		for ends != 0 {
			e := uint64(bits.TrailingZeros64(ends))
			ends &= ends - 1
			if inst := (uint64(1)<<(e-start)<<1 - 1) << start; m&inst == inst {
				temporal++
			}
			start = e + 1
		}
	}
	*word |= span
	st.hits(kIFetch, n, temporal)
	cs.hits(kIFetch, n, temporal)
}

// attributedHit counts, at its access point, a hit of kind kk on bytes
// [a, a+s) of slot of l that the hit bypass took, made by the instruction
// at pc.
func (h *Hierarchy) attributedHit(l *level, kk, slot int, pc, a, s uint64) {
	at := h.attr
	at.pc = pc
	if kk == kIFetch {
		at.fetched(1)
		at.pc = 0
	}
	switch {
	case at.missOnly:
	case kk == kIFetch:
		st, cs := at.fetchStats(l.attr, l.attr.slots[slot].bin)
		h.countHit(l, kk, slot, st, cs, a, s)
	default:
		e, st, cs := at.hitStats(l.attr, l.attr.slots[slot].bin)
		h.countHit(l, kk, slot, st, cs, a, s)
		if e.stride == nil {
			e.stride = at.strideOf(e.pt)
		}
		at.countStride(e.stride, a)
	}
}

// strideSummary returns the strides counted for site id: how
// many, and the most counted ones (their counts less space-saving's
// error; those left with none dropped), most first, at most
// profile.MaxStrides, in buf. samples is 0 when none were ever counted.
func (at *attribution) strideSummary(id int32, buf *[strideSlots]profile.Stride) (samples uint64, top []profile.Stride) {
	st := at.strides.find(id)
	if st == nil {
		return 0, nil
	}
	var one [1]strideSlot
	samples, slots := at.strides.counted(st, &one)
	if samples == 0 {
		return 0, nil
	}
	top = buf[:0]
	for _, sl := range slots {
		if sl.c > sl.err {
			top = append(top, profile.Stride{Bytes: sl.d, Count: sl.c - sl.err})
		}
	}
	profile.SortStrides(top)
	return samples, top[:min(len(top), profile.MaxStrides)]
}

// strideAt counts the stride of access point ref when pa starts the
// current data reference from the CPU (not its part in a second line, nor
// the write half of a modify). A warm-up's reference counts none, but the
// next stride starts from it.
func (h *Hierarchy) strideAt(ref point, pa uint64) {
	at := h.attr
	if pa != at.strideAddr {
		return
	}
	if s := h.samp; s != nil && !s.counting {
		st := at.strideOf(ref)
		st.started, st.last = true, pa
	} else {
		at.stride(ref, pa)
	}
	at.strideAddr = noAddr
}

// attribEvent updates the call stacks and the data bins from an extended
// event with PC pc.
func (h *Hierarchy) attribEvent(k trace.Kind, addr, pc uint64, tid uint32, e *trace.Ext) {
	at := h.attr
	switch k {
	case trace.Call:
		at.code.Call(tid, pc, addr, e.SP)
	case trace.Return:
		at.code.Return(tid, e.SP)
	case trace.Alloc:
		switch {
		case isMapping(e.Name):
			at.data.Map(addr, e.Size, tid, e.Stack, at.joinSites)
		case e.Name == goStackAllocator:
			// Under the frames of the goroutine running on it, like a
			// thread's stack: its other references (the collector's scans,
			// a copy as it grows, its set-up) are the goroutine stacks'.
			at.data.MapStacks(addr, e.Size, tid, e.Stack, "<Go stacks>")
		case e.Name == goAllocator:
			at.data.Alloc(addr, e.Size, tid, e.Stack, e.Type, at.joinSites)
		default:
			at.data.Alloc(addr, e.Size, tid, e.Stack, e.Type, nil)
		}
		if end := addr + e.Size; end > addr {
			h.retag(addr, end, false)
		}
	case trace.Free:
		if isMapping(e.Name) {
			if start, end, ok := at.data.Unmap(addr, e.Size); ok {
				h.retag(start, end, false)
			}
		} else if start, end, ok := at.data.Free(addr); ok {
			h.retag(start, end, true)
		}
	case trace.Marker:
		switch e.Mark {
		case trace.MarkRange:
			at.data.Name(addr, e.Size, e.Name)
		case trace.MarkRegionBegin:
			at.code.RegionBegin(tid, e.Name)
		case trace.MarkRegionEnd:
			at.code.RegionEnd(tid, e.Name)
		case trace.MarkAllocatorBegin:
			at.inAlloc[tid] = true
			at.allocating = true // the thread's next references are the allocator's
		case trace.MarkAllocatorEnd:
			delete(at.inAlloc, tid)
			at.allocating = false
		}
	case trace.Map:
		at.modules = append(at.modules, moduleMap{e.Name, addr, e.Size})
		if isLoader(e.Name) {
			at.loader = [2]uint64{addr, addr + e.Size}
		}
		if at.sym != nil {
			at.data.AddGlobals(at.sym.Map(e.Name, addr), at.minSize, filepath.Base(e.Name))
		}
	}
}

// isMapping reports whether routine, of an allocation or free event,
// maps or unmaps memory: the C library's mmap and munmap, or the system
// calls themselves (the Valgrind tool's sys_mmap and sys_munmap).
func isMapping(routine string) bool {
	switch routine {
	case "mmap", "munmap", "sys_mmap", "sys_munmap":
		return true
	}
	return false
}

// goAllocator is the routine of the Go runtime's allocations, and
// goStackAllocator of its goroutine stacks (the Valgrind tool's built-in
// allocation functions).
const (
	goAllocator      = "runtime.mallocgc"
	goStackAllocator = "runtime.stackalloc"
)

// join gives the call paths of Go's allocations and of mappings the name
// they join under (attrib.Join): the Symbolizer's, when it says the name
// stands for every call path given it (HeapSite.ByName: the Go runtime's
// own allocations and mappings).
func (at *attribution) join(stack []uint64, typ uint64) string {
	if hs, ok := at.sym.HeapName(stack, typ); ok && hs.ByName {
		return hs.Name
	}
	return ""
}

// retag gives the resident lines of [start, end) their new data bin after
// an allocation, a mapping, a free or an unmapping, so that hits count in
// it too (a hit does not look its bin up): after a free, the lines the
// block covers whole become freed (a line shared with live neighbours
// keeps its bin: a hit on it may be theirs); after an allocation or a
// mapping, the lines it covers whole, and those it touches that were
// freed, take the bin of what holds them now (a block's, else the
// mapping's).
func (h *Hierarchy) retag(start, end uint64, freed bool) {
	if h.numa != nil && h.opt.Monitor == MonitorProtocol {
		h.numaRetag(start, end, h.coh.shift)
	}
	at := h.attr
	for _, l := range h.levels {
		la := l.attr
		if la == nil || l.c == nil {
			continue
		}
		first, last := start>>l.shift, (end-1)>>l.shift
		visit := func(line uint64, slot int) {
			whole := line<<l.shift >= start && line<<l.shift+l.lineSize <= end
			switch {
			case freed && whole:
				la.slots[slot].bin = attrib.FreedBin
			case !freed && (whole || la.slots[slot].bin == attrib.FreedBin):
				la.slots[slot].bin, _, _ = at.data.Locate(max(start, line<<l.shift))
			}
		}
		if n := last - first + 1; n > uint64(len(la.slots)) {
			l.c.ForEachValid(func(slot int) {
				if ln := l.c.Line(slot); ln >= first && ln <= last {
					visit(ln, slot)
				}
			})
			continue
		}
		for ln := first; ln <= last; ln++ {
			if slot := l.c.Lookup(ln); slot >= 0 {
				visit(ln, slot)
			}
		}
	}
}

// locals returns the local variables of procedure p that the Symbolizer
// knows, by offset from the frame's canonical frame address.
func (at *attribution) locals(p int32) []attrib.Local {
	if at.sym == nil {
		return nil
	}
	ls, ok := at.procLocals[p]
	if !ok {
		if e := at.code.Proc(p).Entry; e != 0 {
			ls = at.sym.Locals(e)
		}
		at.procLocals[p] = ls
	}
	return ls
}

// binOf returns the data bin of address a for the current reference: a
// named range, heap block or global holding it, else the stack frame of the
// current thread holding it, else the dynamic loader's bin for the
// loader's references, else the mapping holding it (so that the frames of
// a stack inside a mapping, Go's goroutine stacks in its heap arenas, are
// frames), else the other bin. It is called on misses only.
func (h *Hierarchy) binOf(a uint64) int32 {
	at := h.attr
	if b := at.data.Lookup(a); b != attrib.OtherBin {
		return b
	}
	if at.protocol {
		// Protocol monitoring shows the call stacks no reference but
		// this one: a call through a PLT takes its frame here.
		at.code.At(at.tid, runPC(at.batch, at.event))
	}
	if p, sp, ok := at.code.FrameOf(at.tid, a, stackReach); ok {
		// The canonical frame address is the stack pointer before the
		// call pushed the return address.
		if v, ok := attrib.FindLocal(at.locals(p), int64(a-(sp+8))); ok {
			return at.data.LocalBin(p, v)
		}
		return at.data.StackBin(p)
	}
	if at.pc >= at.loader[0] && at.pc < at.loader[1] {
		return at.data.LoaderBin()
	}
	return at.data.Mapping(a)
}

// isLoader reports whether the object file at path is the dynamic loader
// (glibc's ld-linux-x86-64.so.2, musl's ld-musl-x86_64.so.1).
func isLoader(path string) bool {
	base := filepath.Base(path)
	return strings.HasPrefix(base, "ld-linux") || strings.HasPrefix(base, "ld-musl") || base == "ld.so"
}

// countHit counts a hit on bytes [a, a+s) of slot of l in the counters
// of its access point's site and calling context there.
func (h *Hierarchy) countHit(l *level, k int, slot int, st, cs *refStats, a, s uint64) {
	var temporal uint64
	if l.attr.use(l, slot, a, s) {
		temporal = 1
	}
	st.hits(k, 1, temporal)
	cs.hits(k, 1, temporal)
}

// hits counts n hits of kind k, temporal of them on bytes already used.
func (c *refStats) hits(k int, n, temporal uint64) {
	c.acc[k] += n
	c.temporal += temporal
	c.spatial += n - temporal
}

// countMiss counts a miss of access point ref on line of l, with its cause
// (unknown when sampling could not tell whether it was one).
func (h *Hierarchy) countMiss(l *level, k int, line uint64, ref point, unknown bool) {
	st, cs := l.attr.stats(ref)
	state := l.attr.state.get(line)
	st.missed(k, state, unknown, h.attr.missOnly)
	cs.missed(k, state, unknown, h.attr.missOnly)
}

// missed counts a miss of kind k on a line in state (unknown when
// sampling could not tell whether it was one); an access too unless only
// misses are counted.
func (st *refStats) missed(k int, state uint8, unknown, missOnly bool) {
	if !missOnly {
		st.acc[k]++
	}
	st.miss[k]++
	if unknown {
		st.unknown++
		return
	}
	switch state {
	case neverHeld, held: // held: a write that did not allocate, missing again
		st.cold++
	case replaced:
		st.replacement++
	case invalidated:
		st.invalidation++
	case trueSharing:
		st.invalidation++
		st.trueSharing++
	case falseSharing:
		st.invalidation++
		st.falseSharing++
	}
}

// removed records that the line in slot left l, by replacement or
// invalidation, and the use of its bytes.
func (h *Hierarchy) removed(l *level, slot int, why uint8) {
	a := l.attr
	line := l.c.Line(slot)
	if a.state.get(line) == held {
		a.state.set(line, why)
	}
	if a.slots[slot].demand {
		used := a.used(slot)
		a.refs.use.add(h.attr.pointBin(a.slots[slot].fill), a.mask[slot*a.words:(slot+1)*a.words])
		st, cs := a.stats(a.slots[slot].fill)
		st.used += used
		st.fetched += l.lineSize
		cs.used += used
		cs.fetched += l.lineSize
		a.slots[slot].demand = false
	}
}

// filled records that line entered slot of l for access point ref: by a
// miss touching bytes [a, a+s) (demand), or as a victim from above.
func (h *Hierarchy) filled(l *level, slot int, line uint64, ref point, demand bool, a, s uint64) {
	at := l.attr
	at.slots[slot].bin = h.attr.pointBin(ref)
	at.slots[slot].fill = ref
	at.state.set(line, held)
	at.slots[slot].demand = demand && !h.attr.missOnly
	if at.slots[slot].demand {
		clear(at.mask[slot*at.words : (slot+1)*at.words])
		at.touch(slot, a&l.offMask, min(s, l.lineSize-a&l.offMask))
	}
}

// Map tells the attribution that the object file at path is mapped with
// its .text section at textAddr (0: at its link-time addresses), as a
// trace.Map event does: for the binaries of a trace that has no map
// events. It does nothing unless attributing.
func (h *Hierarchy) Map(path string, textAddr uint64) {
	if h.attr != nil {
		h.attribEvent(trace.Map, textAddr, 0, 0, &trace.Ext{Name: path})
	}
}
