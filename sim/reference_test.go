package sim_test

// A slow, deliberately plain model of docs/semantics.md, written from the
// specification and not from the engine, to check package sim against.
// Every cache is a slice of sets, every set a slice of ways; LRU and FIFO
// keep explicit timestamps, PLRU an explicit tree of nodes, RRIP a value
// per way; the hierarchy is walked by straightforward recursion. Nothing
// here is fast, and nothing needs to be.

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/profile"
	"github.com/memspy/memspy/trace"
)

// refEvent is one trace event as the reference model sees it.
type refEvent struct {
	Kind   trace.Kind
	Addr   uint64
	Size   uint32    // not for extended events
	Ext    trace.Ext // extended events only
	Thread uint32
}

func (e refEvent) String() string {
	if e.Kind.IsExtended() {
		return fmt.Sprintf("{%s %#x %+v}", e.Kind, e.Addr, e.Ext)
	}
	return fmt.Sprintf("{%s %#x %d}", e.Kind, e.Addr, e.Size)
}

// refAccess is the kind of a reference at a cache.
type refAccess int

const (
	accIFetch refAccess = iota
	accRead
	accWrite
	accMisc // a read counted apart: Dinero IV's misc reference (din label 3)
)

// refWay is one way of one set.
type refWay struct {
	valid   bool
	line    uint64 // line number: address / line size
	dirty   bool
	lastUse uint64 // LRU: time of the last fill or hit
	filled  uint64 // FIFO: time of the fill
	rrpv    int    // SRRIP, BRRIP
}

// plruNode is a node of a PLRU tree over the ways [lo, hi).
type plruNode struct {
	lo, hi int
	// toUpper is the direction the victim search takes at this node:
	// false is the lower half [lo, mid), true the upper half [mid, hi).
	toUpper      bool
	lower, upper *plruNode // nil at a single way
}

func newPLRUTree(lo, hi int) *plruNode {
	if hi-lo < 2 {
		return nil
	}
	mid := (lo + hi) / 2
	return &plruNode{lo: lo, hi: hi, lower: newPLRUTree(lo, mid), upper: newPLRUTree(mid, hi)}
}

// use points every node on the way's path away from it.
func (n *plruNode) use(way int) {
	for n != nil {
		mid := (n.lo + n.hi) / 2
		if way < mid {
			n.toUpper = true
			n = n.lower
		} else {
			n.toUpper = false
			n = n.upper
		}
	}
}

// victim follows the bits from the root.
func (n *plruNode) victim() int {
	way := n.lo
	for n != nil {
		if n.toUpper {
			way = (n.lo + n.hi) / 2
			n = n.upper
		} else {
			way = n.lo
			n = n.lower
		}
	}
	return way
}

// refCache is one cache of the reference model.
type refCache struct {
	spec     machine.Cache
	lineSize uint64
	sets     [][]refWay
	trees    []*plruNode // PLRU: one tree per set
	rng      uint64      // random: SplitMix64 state
	fills    uint64      // BRRIP: fills so far
	clock    uint64      // LRU, FIFO: a counter advanced by every use

	st profile.CacheStats

	// 3C: the fully associative twin and every line referenced so far.
	twin *refCache
	seen map[uint64]bool

	// Topology, per the "Paths" section.
	instrNext, dataNext *refCache
	uppers              []*refCache // caches from which this one can be reached

	// Several processors: the machine's cache this is a copy of, the
	// processor owning the copy (-1: shared), and for a private cache
	// holding data on a coherent machine, the kind of the last coherence
	// invalidation of each line not filled since.
	idx     int
	proc    int
	sharing map[uint64]uint8
}

func newRefCache(spec machine.Cache) *refCache {
	c := &refCache{spec: spec, lineSize: uint64(spec.Line), rng: spec.Seed}
	c.sets = make([][]refWay, spec.Sets)
	for i := range c.sets {
		c.sets[i] = make([]refWay, spec.Assoc)
	}
	if spec.Replacement == machine.PLRU {
		for range spec.Sets {
			c.trees = append(c.trees, newPLRUTree(0, spec.Assoc))
		}
	}
	c.st.Name, c.st.Level = spec.Name, spec.Level
	return c
}

func (c *refCache) instrOnly() bool { return c.spec.Holds == machine.Instructions }
func (c *refCache) dataOnly() bool  { return c.spec.Holds == machine.Data }

// down returns where a request of kind k leaving c goes: an
// instruction-only cache sends everything down its instruction path, a
// data-only cache down its data path, a unified cache instruction fetches
// down the instruction path and data references down the data path.
func (c *refCache) down(k refAccess) *refCache {
	switch {
	case c.instrOnly():
		return c.instrNext
	case c.dataOnly():
		return c.dataNext
	case k == accIFetch:
		return c.instrNext
	default:
		return c.dataNext
	}
}

// victimDown is where write-backs and victims leaving c go: "Write-backs
// are data writes: they go down the data path (of an instruction-only
// cache: its instruction path)."
func (c *refCache) victimDown() *refCache {
	if c.instrOnly() {
		return c.instrNext
	}
	return c.dataNext
}

// targets lists every cache c ever sends something to.
func (c *refCache) targets() []*refCache {
	var out []*refCache
	for _, t := range []*refCache{c.down(accIFetch), c.down(accRead)} {
		if t != nil && (len(out) == 0 || out[0] != t) {
			out = append(out, t)
		}
	}
	return out
}

func (c *refCache) exclusive() bool { return c.spec.Inclusion == machine.Exclusive }
func (c *refCache) inclusive() bool { return c.spec.Inclusion == machine.Inclusive }

func (c *refCache) setOf(line uint64) []refWay {
	return c.sets[line%uint64(len(c.sets))]
}

// find returns the way of its set holding line, or -1.
func (c *refCache) find(line uint64) int {
	for i, w := range c.setOf(line) {
		if w.valid && w.line == line {
			return i
		}
	}
	return -1
}

// splitMix64 draws the next value, exactly as the specification writes it.
func (c *refCache) splitMix64() uint64 {
	c.rng += 0x9E3779B97F4A7C15
	z := c.rng
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// chooseVictim returns the way of line's set to fill: the lowest invalid
// way, else the policy's choice.
func (c *refCache) chooseVictim(line uint64) int {
	set := c.setOf(line)
	for i, w := range set {
		if !w.valid {
			return i
		}
	}
	switch c.spec.Replacement {
	case machine.LRU:
		best := 0
		for i := range set {
			if set[i].lastUse < set[best].lastUse {
				best = i
			}
		}
		return best
	case machine.FIFO:
		best := 0
		for i := range set {
			if set[i].filled < set[best].filled {
				best = i
			}
		}
		return best
	case machine.Random:
		return int(c.splitMix64() % uint64(len(set)))
	case machine.PLRU:
		if len(set) == 1 {
			return 0
		}
		return c.trees[line%uint64(len(c.sets))].victim()
	case machine.SRRIP, machine.BRRIP:
		for {
			for i := range set {
				if set[i].rrpv == 3 {
					return i
				}
			}
			for i := range set {
				set[i].rrpv++
			}
		}
	}
	panic("reference: unknown policy " + string(c.spec.Replacement))
}

// hit records a use of way i of line's set.
func (c *refCache) hit(line uint64, i int) {
	set := c.setOf(line)
	c.clock++
	switch c.spec.Replacement {
	case machine.LRU:
		set[i].lastUse = c.clock
	case machine.PLRU:
		if t := c.trees[line%uint64(len(c.sets))]; t != nil {
			t.use(i)
		}
	case machine.SRRIP, machine.BRRIP:
		set[i].rrpv = 0
	}
}

// fill installs line in way i of its set (which must be invalid).
func (c *refCache) fill(line uint64, i int, dirty bool) {
	set := c.setOf(line)
	if set[i].valid {
		panic("reference: fill over a valid way")
	}
	c.clock++
	set[i] = refWay{valid: true, line: line, dirty: dirty, lastUse: c.clock, filled: c.clock}
	switch c.spec.Replacement {
	case machine.PLRU:
		if t := c.trees[line%uint64(len(c.sets))]; t != nil {
			t.use(i)
		}
	case machine.SRRIP:
		set[i].rrpv = 2
	case machine.BRRIP:
		c.fills++
		if c.fills%32 == 1 { // the 1st, 33rd, 65th, ... fill
			set[i].rrpv = 2
		} else {
			set[i].rrpv = 3
		}
	}
}

// drop empties the way holding line and returns whether it was dirty.
func (c *refCache) drop(line uint64) (present, dirty bool) {
	i := c.find(line)
	if i < 0 {
		return false, false
	}
	set := c.setOf(line)
	dirty = set[i].dirty
	set[i].valid, set[i].dirty = false, false
	return true, dirty
}

// twinAccess is the fully associative twin's view of an access: a hit is
// a use; a miss allocates when allocate is set. It reports the hit.
func (c *refCache) twinAccess(line uint64, allocate bool) bool {
	if i := c.find(line); i >= 0 {
		c.hit(line, i)
		return true
	}
	if allocate {
		v := c.chooseVictim(line)
		c.setOf(line)[v].valid = false
		c.fill(line, v, false)
	}
	return false
}

// refModel is the reference hierarchy.
type refModel struct {
	m            *machine.Machine
	caches       []*refCache // every copy, in machine order, a private cache's by processor
	classify     bool
	cachelab     bool
	ifirst       *refCache // the current processor's
	dfirst       *refCache
	mem          profile.MemoryStats
	notSimulated uint64
	events       uint64 // events simulated since the start or the last reset
	dumps        []profile.Dump
	resets       uint64
	finished     bool

	procs    []*refProc
	cur      *refProc
	tids     map[uint32]*refProc
	coherent bool                 // several processors with private data caches
	used     map[[2]uint64]uint64 // {processor, line} → granules used while it holds the line
}

// refProc is one processor.
type refProc struct {
	id             int
	ifirst, dfirst *refCache
	private        []*refCache // its private caches
	outer          *refCache   // the last of them holding data (else the last)
	st             profile.ProcessorStats
}

func newRefModel(m *machine.Machine, classify, cachelab bool) *refModel {
	r := &refModel{m: m, classify: classify, cachelab: cachelab, tids: map[uint32]*refProc{}, used: map[[2]uint64]uint64{}}
	nproc := max(1, m.Processors)
	for i := range nproc {
		r.procs = append(r.procs, &refProc{id: i, st: profile.ProcessorStats{Processor: i}})
	}
	for i, spec := range m.Caches {
		copies := 1
		if nproc > 1 && !spec.Shared {
			copies = nproc
		}
		for p := range copies {
			c := newRefCache(spec)
			c.idx, c.proc = i, -1
			if copies > 1 {
				c.proc = p
			}
			if classify {
				tw := spec
				tw.Sets, tw.Assoc = 1, spec.Sets*spec.Assoc
				c.twin = newRefCache(tw)
				c.seen = map[uint64]bool{}
			}
			r.caches = append(r.caches, c)
		}
	}
	// The next cache on the instruction (data) path: the first cache
	// listed later, at a higher level, holding instructions (data): a
	// shared one or the processor's own copy.
	for i, c := range r.caches {
		for _, d := range r.caches[i+1:] {
			if d.spec.Level <= c.spec.Level || d.proc >= 0 && d.proc != c.proc {
				continue
			}
			if c.instrNext == nil && !d.dataOnly() {
				c.instrNext = d
			}
			if c.dataNext == nil && !d.instrOnly() {
				c.dataNext = d
			}
		}
	}
	for _, p := range r.procs {
		for _, c := range r.caches {
			if c.proc >= 0 && c.proc != p.id {
				continue
			}
			if p.ifirst == nil && !c.dataOnly() {
				p.ifirst = c
			}
			if p.dfirst == nil && !c.instrOnly() {
				p.dfirst = c
			}
			if c.proc == p.id {
				p.private = append(p.private, c)
				c.sharing = map[uint64]uint8{}
				if !c.instrOnly() || p.outer == nil {
					p.outer = c
				}
			}
		}
	}
	r.coherent = nproc > 1 && len(r.procs[0].private) > 0
	r.use(r.procs[0])
	if cachelab {
		r.ifirst = nil
	}
	// uppers: everything from which a chain of sends arrives at the cache.
	for _, x := range r.caches {
		for _, u := range r.caches {
			if u != x && r.reachable(u, x) {
				x.uppers = append(x.uppers, u)
			}
		}
	}
	return r
}

// use makes p the current processor.
func (r *refModel) use(p *refProc) {
	r.cur, r.ifirst, r.dfirst = p, p.ifirst, p.dfirst
}

func (r *refModel) reachable(from, to *refCache) bool {
	for _, t := range from.targets() {
		if t == to || r.reachable(t, to) {
			return true
		}
	}
	return false
}

// run applies events in order.
func (r *refModel) run(events []refEvent) {
	for _, e := range events {
		r.event(e)
	}
}

func (r *refModel) event(e refEvent) {
	if len(r.procs) > 1 {
		p, ok := r.tids[e.Thread]
		if !ok {
			p = r.procs[r.m.ProcessorOf(len(r.tids))]
			r.tids[e.Thread] = p
			p.st.Threads = append(p.st.Threads, e.Thread)
		}
		r.use(p)
	}
	if e.Kind.IsExtended() {
		// Not a reference; of the markers only reset and dump act.
		if e.Kind == trace.Marker {
			switch e.Ext.Mark {
			case trace.MarkReset:
				r.reset()
				r.resets++
			case trace.MarkDump:
				r.dumps = append(r.dumps, profile.Dump{Name: e.Ext.Name, Events: r.events, Caches: r.result().Caches, Memory: r.mem})
			}
		}
		return
	}
	r.events++
	a, s := e.Addr, uint64(e.Size)
	switch e.Kind {
	case trace.IFetch:
		if r.cachelab || r.ifirst == nil {
			r.notSimulated++
			return
		}
		r.fetch(a, s)
	case trace.Read:
		r.dataReference(accRead, a, s)
	case trace.Misc:
		r.dataReference(accMisc, a, s)
	case trace.Write:
		r.dataReference(accWrite, a, s)
	case trace.Modify:
		r.dataReference(accRead, a, s)
		r.dataReference(accWrite, a, s)
	case trace.CopyBack:
		r.copyBack(a, s)
	case trace.Invalidate:
		r.invalidate(a, s)
	}
}

// reset zeroes every counter, and nothing else: the caches, the twins and
// the lines seen stay.
func (r *refModel) reset() {
	for _, c := range r.caches {
		c.st = profile.CacheStats{Name: c.st.Name, Level: c.st.Level}
	}
	for _, p := range r.procs {
		p.st = profile.ProcessorStats{Processor: p.id, Threads: p.st.Threads}
	}
	r.mem = profile.MemoryStats{}
	r.notSimulated = 0
	r.events = 0
}

// lastByte returns the last byte of [a, a+s), s == 0 meaning 1; addresses
// do not wrap around: a range running past 2^64-1 stops there.
func lastByte(a, s uint64) uint64 {
	if s == 0 {
		s = 1
	}
	if a > math.MaxUint64-(s-1) {
		return math.MaxUint64
	}
	return a + s - 1
}

// reference performs a reference of kind k to [a, a+s) at c (nil:
// memory). fromAbove is set when a cache makes it. The result is the dirty
// bit of data handed up by an exclusive cache.
func (r *refModel) reference(c *refCache, k refAccess, a, s uint64, fromAbove bool) bool {
	last := lastByte(a, s)
	if c == nil {
		n := last - a + 1
		if k == accWrite {
			r.mem.Writes++
			r.mem.BytesWritten += n
		} else {
			r.mem.Reads++
			r.mem.BytesRead += n
		}
		return false
	}
	L := c.lineSize
	first, end := a/L, last/L
	if r.cachelab && !fromAbove {
		end = first // only references from the CPU; fills span as usual
	}
	handedDirty := false
	for line := first; ; line++ {
		lo := max(a, line*L)
		hi := min(last, line*L+(L-1))
		if r.accessLine(c, k, line, lo, hi-lo+1, fromAbove) {
			handedDirty = true
		}
		if line == end {
			break
		}
	}
	return handedDirty
}

// accessLine is one access of kind k to line of c; [pa, pa+ps) is the
// piece of the reference inside the line.
func (r *refModel) accessLine(c *refCache, k refAccess, line, pa, ps uint64, fromAbove bool) bool {
	st := &c.st
	st.Accesses++
	switch k {
	case accIFetch:
		st.IFetches++
	case accRead:
		st.Reads++
	case accWrite:
		st.Writes++
	case accMisc:
		st.Misc++
	}
	way := c.find(line)
	isHit := way >= 0

	if c.twin != nil {
		noAlloc := k == accWrite && !c.spec.WriteAllocate
		twinHit := c.twin.twinAccess(line, !noAlloc)
		if !isHit {
			switch {
			case !c.seen[line]:
				st.Compulsory++
			case !twinHit:
				st.Capacity++
			default:
				st.Conflict++
			}
		}
		c.seen[line] = true
	}

	passToBelow := func(kind refAccess, a, s uint64) bool {
		return r.reference(c.down(kind), kind, a, s, true)
	}
	L := c.lineSize

	if isHit {
		set := c.setOf(line)
		if c.exclusive() && fromAbove && k != accWrite {
			// Move up: drop it here, hand it (and its dirty bit) up.
			_, d := c.drop(line)
			return d
		}
		c.hit(line, way)
		if k == accWrite {
			if c.spec.WriteBack {
				set[way].dirty = true
			} else {
				st.BytesToBelow += ps
				passToBelow(accWrite, pa, ps)
			}
		}
		return false
	}

	st.Misses++
	switch c.sharing[line] {
	case sharingTrue:
		st.TrueSharingMisses++
	case sharingFalse:
		st.FalseSharingMisses++
	}
	switch k {
	case accIFetch:
		st.IFetchMisses++
	case accRead:
		st.ReadMisses++
	case accWrite:
		st.WriteMisses++
	case accMisc:
		st.MiscMisses++
	}
	if k == accWrite && (!c.spec.WriteAllocate || c.exclusive() && fromAbove) {
		st.BytesToBelow += ps
		passToBelow(accWrite, pa, ps)
		return false
	}
	if c.exclusive() && fromAbove {
		// Not kept here: the request goes on down, the data passes through.
		st.BytesFromBelow += L
		return passToBelow(k, line*L, L)
	}
	// Allocate (rules A and B of docs/semantics.md): fetch the line
	// unless the piece writes all of it (a fetch, or a misc reference,
	// fetches as itself, anything else as a read); then choose the victim
	// and evict it, fill; then the write-through; then the victim's
	// write-back.
	dirty := false
	if k != accWrite || ps != L {
		fetch := accRead
		if k == accIFetch || k == accMisc {
			fetch = k
		}
		st.BytesFromBelow += L
		dirty = passToBelow(fetch, line*L, L)
	}
	v := c.chooseVictim(line)
	var out refVictim
	if w := c.setOf(line)[v]; w.valid {
		out = r.evict(c, w.line)
	}
	if k == accWrite && c.spec.WriteBack {
		dirty = true
	}
	c.fill(line, v, dirty)
	delete(c.sharing, line)
	if k == accWrite && !c.spec.WriteBack {
		st.BytesToBelow += ps
		passToBelow(accWrite, pa, ps)
	}
	if out.valid {
		r.sendVictim(c, out.line, out.dirty)
	}
	return false
}

// refVictim is a line evicted from a cache, still to be sent below.
type refVictim struct {
	line         uint64
	valid, dirty bool
}

// evict removes the valid line victim from c to make room for a fill
// (with the back-invalidations of an inclusive c) and returns it.
func (r *refModel) evict(c *refCache, victim uint64) refVictim {
	c.st.Evictions++
	L := c.lineSize
	_, dirty := c.drop(victim)
	r.released(c, victim)
	if c.inclusive() {
		lo, hi := victim*L, victim*L+(L-1)
		for _, u := range c.uppers {
			if r.backInvalidate(u, lo, hi) {
				dirty = true
			}
		}
	}
	return refVictim{line: victim, valid: true, dirty: dirty}
}

// backInvalidate drops u's lines overlapping bytes [lo, hi] and reports
// whether any was dirty.
func (r *refModel) backInvalidate(u *refCache, lo, hi uint64) bool {
	dirty := false
	for si := range u.sets {
		for i := range u.sets[si] {
			w := &u.sets[si][i]
			if !w.valid || !overlaps(w.line, u.lineSize, lo, hi) {
				continue
			}
			dirty = dirty || w.dirty
			w.valid, w.dirty = false, false
			u.st.BackInvalidations++
			r.released(u, w.line)
		}
	}
	return dirty
}

// overlaps reports whether line (of size L) overlaps bytes [lo, hi].
func overlaps(line, L, lo, hi uint64) bool {
	return line >= lo/L && line <= hi/L
}

// sendVictim passes a line leaving c down: into an exclusive cache below
// whether clean or dirty; otherwise written back if dirty.
func (r *refModel) sendVictim(c *refCache, line uint64, dirty bool) {
	L := c.lineSize
	below := c.victimDown()
	if dirty {
		c.st.Writebacks++
	}
	if below != nil && below.exclusive() {
		c.st.BytesToBelow += L
		r.insertVictim(below, line*L, dirty)
		return
	}
	if dirty {
		c.st.BytesToBelow += L
		r.reference(below, accWrite, line*L, L, true)
	}
}

// insertVictim places a line evicted from a cache directly above the
// exclusive cache x into x. x is not accessed. A line x already holds only
// takes the dirty bit.
func (r *refModel) insertVictim(x *refCache, a uint64, dirty bool) {
	line := a / x.lineSize
	if i := x.find(line); i >= 0 {
		if dirty {
			x.setOf(line)[i].dirty = true
		}
		return
	}
	v := x.chooseVictim(line)
	var out refVictim
	if w := x.setOf(line)[v]; w.valid {
		out = r.evict(x, w.line)
	}
	x.fill(line, v, dirty)
	if out.valid {
		r.sendVictim(x, out.line, out.dirty)
	}
}

// copyBack writes back dirty lines, cache by cache from the CPU outward
// (rules E and F): with s > 0 the line of each cache holding a; with
// s == 0 every dirty line, from the last set to the first, within a set
// from the least recently used (LRU) or the oldest fill (FIFO), in way
// order under the other policies.
func (r *refModel) copyBack(a, s uint64) {
	for _, c := range r.caches {
		L := c.lineSize
		writeBack := func(w *refWay) {
			w.dirty = false
			c.st.Writebacks++
			c.st.BytesToBelow += L
			r.reference(c.victimDown(), accWrite, w.line*L, L, true)
		}
		if s > 0 {
			if i := c.find(a / L); i >= 0 && c.setOf(a / L)[i].dirty {
				writeBack(&c.setOf(a / L)[i])
			}
			continue
		}
		for si := len(c.sets) - 1; si >= 0; si-- {
			set := c.sets[si]
			var lines []uint64
			for _, w := range set {
				if w.valid {
					lines = append(lines, w.line)
				}
			}
			age := func(line uint64) uint64 {
				w := set[c.find(line)]
				switch c.spec.Replacement {
				case machine.LRU:
					return w.lastUse
				case machine.FIFO:
					return w.filled
				}
				return 0
			}
			sort.SliceStable(lines, func(i, j int) bool { return age(lines[i]) < age(lines[j]) })
			for _, line := range lines {
				// Earlier write-backs may have back-invalidated it.
				if i := c.find(line); i >= 0 && set[i].dirty {
					writeBack(&set[i])
				}
			}
		}
	}
}

// invalidate drops lines from every cache and every twin, writing nothing
// back (rules D and F): with s > 0 the line of each cache holding a; with
// s == 0 every line, and every cache forgets the lines it has seen.
func (r *refModel) invalidate(a, s uint64) {
	for _, c := range r.caches {
		for _, cc := range []*refCache{c, c.twin} {
			if cc == nil {
				continue
			}
			for si := range cc.sets {
				for i := range cc.sets[si] {
					w := &cc.sets[si][i]
					if w.valid && (s == 0 || w.line == a/cc.lineSize) {
						w.valid, w.dirty = false, false
						if cc == c {
							r.released(c, w.line)
						}
					}
				}
			}
		}
		if s == 0 && c.seen != nil {
			c.seen = map[uint64]bool{}
		}
	}
}

// finish writes back every dirty line, as a copyback of everything.
func (r *refModel) finish() {
	if !r.finished {
		r.finished = true
		r.copyBack(0, 0)
	}
}

// refResult is what the reference model computes, in the engine's terms.
type refResult struct {
	Caches       []profile.CacheStats
	Memory       profile.MemoryStats
	NotSimulated uint64
	Dumps        []profile.Dump
	Resets       uint64
	Processors   []profile.ProcessorStats
}

func (r *refModel) result() refResult {
	var out refResult
	for i := range r.m.Caches {
		var copies []profile.CacheStats
		for _, c := range r.caches {
			if c.idx == i {
				copies = append(copies, c.st)
			}
		}
		out.Caches = append(out.Caches, profile.Sum(copies))
	}
	if len(r.procs) > 1 {
		for _, p := range r.procs {
			st := p.st
			st.Threads = slices.Clone(st.Threads)
			for _, c := range r.caches {
				if c.proc == p.id {
					st.Caches = append(st.Caches, c.st)
				}
			}
			out.Processors = append(out.Processors, st)
		}
	}
	out.Memory = r.mem
	out.NotSimulated = r.notSimulated
	out.Dumps = r.dumps
	out.Resets = r.resets
	return out
}

// runReference simulates events on m with the reference model, including
// the final write-back.
func runReference(m *machine.Machine, classify, cachelab bool, events []refEvent) refResult {
	r := newRefModel(m, classify, cachelab)
	r.run(events)
	r.finish()
	return r.result()
}

// describeMachine prints m as a Go literal for failure reports.
func describeMachine(m *machine.Machine) string {
	var b strings.Builder
	fmt.Fprintf(&b, "&machine.Machine{Name: %q, Processors: %d, Mapping: %q, Pin: %#v, Caches: []machine.Cache{\n", m.Name, m.Processors, m.Mapping, m.Pin)
	for _, c := range m.Caches {
		fmt.Fprintf(&b, "\t{Name: %q, Level: %d, Size: %d, Sets: %d, Assoc: %d, Line: %d, Replacement: %q, Seed: %d, "+
			"WriteBack: %t, WriteAllocate: %t, Holds: %q, Inclusion: %q, Latency: %d, Shared: %t},\n",
			c.Name, c.Level, c.Size, c.Sets, c.Assoc, c.Line, c.Replacement, c.Seed,
			c.WriteBack, c.WriteAllocate, c.Holds, c.Inclusion, c.Latency, c.Shared)
	}
	b.WriteString("}}")
	return b.String()
}
