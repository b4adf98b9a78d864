// Package sim is memspy's engine: it routes batches of trace events through
// a simulated cache hierarchy and counts what happens at every level. The
// counting rules (Dinero IV's where a choice exists) are specified in
// docs/semantics.md; a slow reference model in the tests checks this
// implementation against them.
package sim

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"
	"sync/atomic"

	"github.com/memspy/memspy/cache"
	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/profile"
	"github.com/memspy/memspy/sample"
	"github.com/memspy/memspy/trace"
)

// Options select counting conventions.
type Options struct {
	// Classify splits misses into compulsory, capacity and conflict (3C)
	// by running a fully associative cache of the same capacity and policy
	// alongside every cache.
	Classify bool
	// CacheLab applies the CS:APP cache lab conventions: an access touches
	// only the line holding its address, and instruction fetches are
	// ignored.
	CacheLab bool
	// Attribute splits the counters by access point (PC), procedure (from
	// the call and return events) and data bin (from allocations, frees,
	// range markers and globals), with the causes of misses, the evictors
	// and the use of fetched bytes: the where and why of the profile
	// (profile.Function, Object, Pair, Reference).
	Attribute bool
	// MissOnly, when attributing, counts misses only: no bookkeeping per
	// hit (MemSpy's statistics on cache misses only). Misses, their causes
	// and the evictors are as in the full mode.
	MissOnly bool
	// MinObjectSize, when attributing, is the size below which global
	// variables share one bin per module (0: DefaultMinObjectSize).
	MinObjectSize uint64
	// Symbols, when attributing, names code and data and gives the global
	// variables of each object file mapped (trace.Map events). Nil: names
	// by address, no globals.
	Symbols Symbolizer
	// Interleave, Quantum (events; 0: DefaultQuantum) and Window (events;
	// 0: DefaultWindow) say how Run orders the events of several threads on
	// several processors; they do not apply to one processor, nor to
	// Process, which takes events in the order given.
	Interleave Interleave
	Quantum    int
	Window     int
	// Monitor, on a machine of several NUMA nodes, says how the NUMA
	// statistics find the data bin of a miss; MonitorProtocol attributes
	// nothing else (it needs Attribute for the bins, and implies
	// MissOnly).
	Monitor Monitor
	// Sample, when active, simulates only the references it picks (see
	// package sample); SampleTotal is the run's length in references when
	// known (0: unknown), which count= needs.
	Sample      sample.Spec
	SampleTotal uint64
	// SampleShadow simulates every reference but counts only those Sample
	// picks: the truth a sampled run estimates (memspy sample-eval).
	SampleShadow bool
	// TimelineInterval, when attributing and not sampling, is the events
	// a point of the profile's timeline spans at first (0:
	// DefaultTimelineInterval).
	TimelineInterval uint64
}

// noMemo in level.memo arms no hit bypass: no line of 2 bytes or more
// starts at an odd address, and caches with 1-byte lines take no bypass
// (see fastLimit).
const noMemo = 1

// noMRU is a cache whose MRU and Promote never find a line: it stays
// empty.
var noMRU, _ = cache.New(1, 1, string(machine.FIFO), 0)

// access kinds indexing the per-kind counters.
const (
	kIFetch = iota
	kRead
	kWrite
	// numAccessKinds is the number of kinds that attribution and the
	// stall cycles count by: a misc reference counts as a read there.
	numAccessKinds
	// kMisc is a read that the caches count apart, Dinero IV's misc
	// reference (trace.Misc): it does what kRead does everywhere, and
	// its misses fetch as kMisc below.
	kMisc = numAccessKinds
	// numLevelKinds is the number of kinds a level counts by.
	numLevelKinds = kMisc + 1
)

// attribKind is the kind that attribution and the stall cycles count a
// reference of kind k as: a read for a misc one.
func attribKind(k int) int {
	if k == kMisc {
		return kRead
	}
	return k
}

// level is one simulated cache and its place in the hierarchy.
type level struct {
	spec      *machine.Cache
	c         *cache.Cache
	shift     uint   // log2 of the line size
	lineSize  uint64 // bytes
	offMask   uint64 // lineSize-1
	writeBack bool
	allocate  bool
	inclusive bool
	exclusive bool

	// instrNext and dataNext are the next caches on the instruction and
	// data paths (nil: memory); victimNext receives write-backs and, when
	// it is exclusive, every victim.
	instrNext, dataNext, victimNext *level
	// uppers are the caches from which this one is reachable; an
	// inclusive cache back-invalidates them.
	uppers []*level

	// fastLimit bounds offset+size-1 (exclusive) of a reference that the
	// hit bypass may count as one access: the line size, no bound under
	// --cachelab (one line per reference), 0 (no bypass) for 1-byte lines.
	// A size of 0 at the start of a line wraps around and takes the slow
	// path. memoLimit and mruLimit bound the hits that hitRun's loop
	// takes on memo, and on the lines of the set's state: fastLimit at a
	// level without observers, else 0; memoLimit stays fastLimit when the
	// one observer counts runs of hits on memo at once (runObs).
	fastLimit, memoLimit, mruLimit uint64
	// memo is the first address of the line of the last access when nothing
	// has changed the cache's state since (noMemo: none). A repeated access
	// to that line is a hit that changes no replacement state: the fast path
	// only counts it. (An address, not a line number, so that the check
	// needs no shift.)
	memo     uint64
	memoSlot int
	// memo2 is, during a run of bypassed hits (hitRun), the first address
	// of the second most recent line of memo's set (noMemo: not known), in
	// slot memo2Slot. A read of it is a hit that only swaps the two lines'
	// places: the bypass swaps memo and memo2 and flips swapped, and settle
	// makes the cache do the swap (once, if the count was odd) when the
	// run ends. Outside the runs memo2 is noMemo and swapped false.
	memo2     uint64
	memo2Slot int
	swapped   bool
	// obs are the features that see the hits the bypass takes here (see
	// hitObserver, attach); nil: none. runObs is obs[0] when it is the
	// only one and a runObserver, else nil; direct holds obs when they are
	// the attribution's attribHits alone or with the sampling estimate,
	// which the bypass then calls directly.
	obs    []hitObserver
	runObs runObserver
	direct directObservers
	// mruCache is c when a hit on the line last used in a set changes no
	// state that the bypass would skip, and a hit on the line used before
	// it needs only Promote (no 3C twin: see cache.Cache.MRU), else an
	// empty cache whose MRU and Promote always fail.
	mruCache *cache.Cache
	// plain says that a reference to l needs nothing beyond l's own state
	// and counters and the requests it sends below (see plainRef): no 3C
	// twin, attribution, sampling, coherence or NUMA statistics, write-back
	// and write-allocate, not exclusive, and no inclusive cache below that
	// could remove l's lines while it waits for a fill.
	plain bool

	counters

	// 3C classification state.
	shadow *cache.Cache        // fully associative, same capacity and policy
	seen   map[uint64]struct{} // lines ever referenced

	attr *levelAttrib // nil unless attributing

	// cache is the index of the cache in the machine; proc is the processor
	// owning this copy of a private cache, -1 for a shared cache.
	// The rest is kept for private caches holding data on a coherent
	// multiprocessor only (see coherence).
	cache, proc int
	// used holds, per slot, the line's granules the processor used (a bit
	// per coherence granule); mod, in a processor's first data cache when
	// it is write-back, marks the lines in state M.
	used []uint64
	mod  []bool
	// sharing maps the lines that an invalidation by another processor
	// removed, and that have not been filled since, to trueSharing or
	// falseSharing: the kind of a miss on them.
	sharing map[uint64]uint8

	est *estimate // nil unless sampling
}

// counters are a level's counts, which a reset marker zeroes and a
// sample's warm-up leaves as they were.
type counters struct {
	acc, miss                          [numLevelKinds]uint64
	evictions, writebacks, backInval   uint64
	bytesFromBelow, bytesToBelow       uint64
	compulsory, capacity, conflict     uint64
	invalidations, trueMiss, falseMiss uint64
}

// Hierarchy simulates one machine. It is not safe for concurrent use,
// but for Abandon.
type Hierarchy struct {
	m   *machine.Machine
	opt Options
	// fault is the first thing a tracer simulating the first caches sent
	// that the engine's copy of them does not allow (disagree): Run ends
	// with it.
	fault error
	// abandoned is set when nobody waits for the rest of the input any
	// more (Abandon); passedOver counts the events Run read after it.
	abandoned  atomic.Bool
	passedOver uint64
	levels     []*level // every cache copy, in machine order (a private cache's copies by processor)
	caches     [][]*level
	// procs are the processors; cur is the one running the current event,
	// the processor of thread curTid (tids places threads on processors).
	procs        []*processor
	cur          *processor
	curTid       uint32
	tids         map[uint32]*processor
	coh          *coherence  // nil unless several processors have private data caches
	ifirst       *level      // first cache holding instructions of cur (nil: not simulated)
	dfirst       *level      // first cache holding data of cur (nil: memory)
	kinds        [256]uint64 // events simulated, by kind (extended events are not)
	notSimulated uint64
	mem          profile.MemoryStats
	dumps        []profile.Dump
	resets       uint64 // reset markers seen
	finished     bool
	attr         *attribution // nil unless attributing
	tl           *timeline    // the counters over the run: nil unless attributing and not sampling
	timing       *timing      // the threads' clocks: nil on one processor
	numa         *numa        // nil unless the machine has several nodes
	samp         *sampling    // nil unless sampling
	// threaded says that the hit bypass's runs stay on one thread: on
	// several processors, or when attributing (see Process).
	threaded bool
	// none stands in for a missing first cache in Process; it never takes
	// the hit bypass.
	none level
}

// New builds a hierarchy for a normalized machine.
func New(m *machine.Machine, opt Options) (*Hierarchy, error) {
	if len(m.Caches) == 0 {
		return nil, fmt.Errorf("sim: machine %q has no caches", m.Name)
	}
	procs := max(1, m.Processors)
	if procs > 1 && opt.CacheLab {
		return nil, fmt.Errorf("sim: the cache lab conventions are for one processor, and machine %q has %d", m.Name, procs)
	}
	if procs > 1 && opt.Classify {
		return nil, fmt.Errorf("sim: 3C classification is for one processor, and machine %q has %d", m.Name, procs)
	}
	h := &Hierarchy{m: m, opt: opt, tids: map[uint32]*processor{}}
	h.none.memo, h.none.memo2 = noMemo, noMemo // and fastLimit 0: never bypassed
	h.none.mruCache = noMRU
	for p := range procs {
		h.procs = append(h.procs, &processor{id: p})
	}
	for i := range m.Caches {
		spec := &m.Caches[i]
		if spec.Line <= 0 || spec.Line&(spec.Line-1) != 0 {
			return nil, fmt.Errorf("sim: cache %q: line size %d is not a power of two", spec.Name, spec.Line)
		}
		copies := 1
		if procs > 1 && !spec.Shared {
			copies = procs
		}
		var cs []*level
		for p := range copies {
			l, err := newLevel(spec, opt)
			if err != nil {
				return nil, err
			}
			l.proc, l.cache = -1, i
			if copies > 1 {
				l.proc = p
			}
			cs = append(cs, l)
			h.levels = append(h.levels, l)
		}
		h.caches = append(h.caches, cs)
	}
	// Paths: the next cache of a kind is the first later-listed cache at a
	// higher level holding that kind: the processor's own copy of a private
	// one.
	nextOf := func(i int, l *level, instr bool) (*level, error) {
		for j := i + 1; j < len(h.caches); j++ {
			s := h.caches[j][0].spec
			if s.Level > l.spec.Level && (instr && s.HoldsInstructions() || !instr && s.HoldsData()) {
				if len(h.caches[j]) == 1 {
					return h.caches[j][0], nil
				}
				if l.proc < 0 {
					return nil, fmt.Errorf("sim: shared cache %q is above private cache %q", l.spec.Name, s.Name)
				}
				return h.caches[j][l.proc], nil
			}
		}
		return nil, nil
	}
	for i, cs := range h.caches {
		for _, l := range cs {
			var err error
			if l.instrNext, err = nextOf(i, l, true); err != nil {
				return nil, err
			}
			if l.dataNext, err = nextOf(i, l, false); err != nil {
				return nil, err
			}
			// A cache sends only down the paths it is on: an
			// instruction-only cache sends everything (fills, write-backs,
			// the writes a merged back-invalidation can bring it) down its
			// instruction path, a data-only cache down its data path.
			switch {
			case !l.spec.HoldsData():
				l.dataNext = l.instrNext
			case !l.spec.HoldsInstructions():
				l.instrNext = l.dataNext
			}
			l.victimNext = l.dataNext // the instruction path of an instruction-only cache
		}
	}
	for _, x := range h.levels {
		if !x.exclusive {
			continue
		}
		for _, u := range h.levels {
			if (u.instrNext == x || u.dataNext == x) && u.victimNext != x {
				return nil, fmt.Errorf("sim: cache %q is exclusive, but %q sends it requests and its victims elsewhere", x.spec.Name, u.spec.Name)
			}
		}
	}
	for _, p := range h.procs {
		for _, l := range h.levels {
			if l.proc >= 0 && l.proc != p.id {
				continue
			}
			if p.ifirst == nil && l.spec.HoldsInstructions() {
				p.ifirst = l
			}
			if p.dfirst == nil && l.spec.HoldsData() {
				p.dfirst = l
			}
			if l.proc == p.id {
				p.private = append(p.private, l)
				if l.spec.HoldsData() || p.outer == nil {
					p.outer = l
				}
			}
		}
	}
	for _, l := range h.levels {
		for _, u := range h.levels {
			if u != l && reaches(u, l) {
				l.uppers = append(l.uppers, u)
			}
		}
	}
	if opt.CacheLab {
		h.procs[0].ifirst = nil // the cache lab ignores instruction fetches
	}
	if err := h.newCoherence(); err != nil {
		return nil, err
	}
	if len(h.procs) > 1 {
		h.timing = newTiming()
	}
	if err := h.newNuma(); err != nil {
		return nil, err
	}
	h.use(h.procs[0])
	if opt.Attribute {
		h.attr = newAttribution(opt)
		for _, l := range h.levels {
			switch {
			case l.attr == nil:
			case h.attr.missOnly && !h.attr.protocol:
				l.attach(attribMissHits{attribHits{h}})
			default:
				l.attach(attribHits{h})
			}
		}
	}
	h.threaded = len(h.procs) > 1 || h.attr != nil
	if opt.Sample.Active() {
		if err := h.newSampling(); err != nil {
			return nil, err
		}
	}
	for _, l := range h.levels {
		l.plain = h.isPlain(l)
	}
	if h.attr != nil && h.samp == nil {
		h.tl = h.newTimeline()
	}
	if h.attr != nil && !h.attr.missOnly {
		h.attr.spanBlock = h.spanBlock()
	}
	return h, nil
}

// isPlain reports whether l is plain (see level.plain).
func (h *Hierarchy) isPlain(l *level) bool {
	if l.shadow != nil || l.attr != nil || l.est != nil && !sampledShortcuts || l.used != nil || h.numa != nil ||
		!l.writeBack || !l.allocate || l.exclusive {
		return false
	}
	for _, x := range h.levels {
		if x.inclusive && slices.Contains(x.uppers, l) {
			return false
		}
	}
	return true
}

// newLevel returns an empty level simulating one copy of the cache spec.
func newLevel(spec *machine.Cache, opt Options) (*level, error) {
	c, err := cache.New(spec.Sets, spec.Assoc, string(spec.Replacement), spec.Seed)
	if err != nil {
		return nil, fmt.Errorf("sim: cache %q: %w", spec.Name, err)
	}
	l := &level{
		spec:      spec,
		c:         c,
		shift:     uint(bits.TrailingZeros(uint(spec.Line))),
		lineSize:  uint64(spec.Line),
		offMask:   uint64(spec.Line - 1),
		fastLimit: uint64(spec.Line),
		memo:      noMemo,
		memo2:     noMemo,
		writeBack: spec.WriteBack,
		allocate:  spec.WriteAllocate,
		inclusive: spec.Inclusion == machine.Inclusive,
		exclusive: spec.Inclusion == machine.Exclusive,
	}
	if opt.Classify {
		l.shadow, err = cache.New(1, spec.Lines(), string(spec.Replacement), spec.Seed)
		if err != nil {
			return nil, fmt.Errorf("sim: cache %q: 3C classification needs a fully associative twin: %w", spec.Name, err)
		}
		l.seen = make(map[uint64]struct{})
	}
	l.mruCache = noMRU
	if l.shadow == nil {
		l.mruCache = c
	}
	if opt.Attribute && opt.Monitor != MonitorProtocol {
		l.attr = newLevelAttrib(spec.Sets*spec.Assoc, uint64(spec.Line))
	}
	switch {
	case l.shift == 0:
		// 1-byte lines: every address starts a line, noMemo too; no bypass.
		l.fastLimit = 0
	case opt.CacheLab:
		l.fastLimit = 1 << 63
	}
	l.memoLimit, l.mruLimit = l.fastLimit, l.fastLimit // until an observer is attached
	return l, nil
}

// reaches reports whether a request or victim leaving u can arrive at l.
func reaches(u, l *level) bool {
	for _, n := range []*level{u.instrNext, u.dataNext, u.victimNext} {
		if n != nil && (n == l || reaches(n, l)) {
			return true
		}
	}
	return false
}

// Process simulates every event of b, in order. Extended events are not
// memory references: a reset marker zeroes every counter (cache contents
// and 3C state stay), a dump marker saves a snapshot of the counters, the
// others change nothing.
//
// Runs of hits go through the hit bypass (hitRun), the engine's one hot
// loop; every other event takes the slow path (missPlain, else slow). When
// threaded, a run stays on one thread: the processor of the thread of its
// first event is made current, and when attributing a run begins only on
// the thread whose calling context holds (hitTid: otherwise the slow path
// follows the context). With a timeline, b is simulated in parts that end
// where its points fall, each point taken between two parts.
func (h *Hierarchy) Process(b *trace.Batch) {
	if h.tl == nil {
		h.process(b, 0, len(b.Kind))
		return
	}
	// Cut where the next point of the timeline falls (it may fall a
	// little later: extended events count none).
	for i := 0; i < len(b.Kind); {
		j := h.cut(b, i, h.tl.due(h.counted()))
		h.process(b, i, j)
		h.tick()
		i = j
	}
}

// process simulates events [i, n) of b, as Process does.
func (h *Hierarchy) process(b *trace.Batch, i, n int) {
	if h.samp != nil {
		h.processSampled(b)
		return
	}
	end := 0 // when threaded, the end of the run of one thread's events that holds event i
	for i < n {
		if b.Kind[i] == trace.Exec {
			i = h.tracerRun(b, i, n)
			continue
		}
		if len(h.procs) > 1 {
			if t := b.Thread[i]; t != h.curTid || len(h.tids) == 0 {
				h.switchThread(t)
			}
		}
		stop := h.runStop(b, i, n, n, &end)
		j := h.hitRun(b, i, stop, true)
		if j == stop && j > i {
			i = j
			continue
		}
		il, _ := h.firsts()
		h.slow(b, j, il)
		i = j + 1
	}
}

// runStop returns where a run of the hit bypass from event i of b must
// stop, at most at stop: when threaded, within the run of one thread's
// events (*end holds its end, at most n, found once for the events
// after i), and at once unless the bypass may take that thread's hits.
func (h *Hierarchy) runStop(b *trace.Batch, i, stop, n int, end *int) int {
	if !h.threaded {
		return stop
	}
	if i >= *end {
		t, j := b.Thread[i], i+1
		for j < n && b.Thread[j] == t {
			j++
		}
		*end = j
	}
	if at := h.attr; at != nil && !at.protocol && b.Thread[i] != at.hitTid {
		return i // (attributing, the bypass takes the hits of the thread whose calling context holds)
	}
	return min(stop, *end)
}

// hitObserver is a feature that must see the hits that the hit bypass
// takes at a level (attribution, coherence, the sampling estimate). New
// attaches it to the levels it watches (level.obs); levels without one pay
// nothing per hit.
type hitObserver interface {
	// takes reports whether the bypass may take a hit of an event of kind
	// k on slot of l (else the slow path takes it). It changes nothing.
	takes(l *level, k trace.Kind, slot int) bool
	// see counts the hit of event i of b on slot of l.
	see(l *level, b *trace.Batch, i, slot int)
}

// runObserver is a hitObserver that can see a run of hits on one slot at
// once (the sampling estimate, whose hits on a line it knows only count).
// The hits on memo at a level whose one observer is a runObserver are
// counted in hitRun's loop, which gives them to it when it stops; memo is
// armed there only on a line the observer has seen (and so knows).
type runObserver interface {
	hitObserver
	// seeRun counts hits on slot, the level's memo: fetches instruction
	// fetches and data data references.
	seeRun(slot int, fetches, data uint64)
}

// slotFree is a runObserver whose seeRun counts hits whatever their
// slots: hitRun's loop then takes every hit that it takes at a level
// without observers (on the lines of the set's state too), as one run.
type slotFree interface {
	runObserver
	slotFree()
}

// directObservers are a level's observers when they are the
// attribution's attribHits (at.h nil otherwise) and, in a sampled run,
// the estimate (nil otherwise): the most frequent observers of a --where
// run, which observe calls without an interface.
type directObservers struct {
	at  attribHits
	est *estimate
}

// directOf returns obs as directObservers when they are the
// attribution's, alone or with the estimate, else none.
func directOf(obs []hitObserver) directObservers {
	var d directObservers
	for _, o := range obs {
		switch o := o.(type) {
		case attribHits:
			d.at = o
		case *estimate:
			d.est = o
		default:
			return directObservers{}
		}
	}
	return d
}

// attach makes o see the hits that the bypass takes at l.
func (l *level) attach(o hitObserver) {
	l.obs = append(l.obs, o)
	l.direct = directOf(l.obs)
	r, run := o.(runObserver)
	if !run || len(l.obs) > 1 {
		l.memoLimit, l.mruLimit, l.runObs = 0, 0, nil
		return
	}
	l.runObs = r
	if _, ok := o.(slotFree); !ok {
		l.mruLimit = 0
	}
}

// observe gives the observers of l a hit of event i of b (of kind k) on
// slot when all of them take it, and reports whether they did. When they
// are the attribution, alone or with the sampling estimate, they are
// called directly: most hits of a --where run come here.
func (l *level) observe(b *trace.Batch, i int, k trace.Kind, slot int) bool {
	if d := &l.direct; d.at.h != nil {
		if d.est != nil && !d.est.takes(l, k, slot) || !d.at.takes(l, k, slot) {
			return false
		}
		if d.est != nil {
			d.est.see(l, b, i, slot)
		}
		d.at.see(l, b, i, slot)
		return true
	}
	for _, o := range l.obs {
		if !o.takes(l, k, slot) {
			return false
		}
	}
	for _, o := range l.obs {
		o.see(l, b, i, slot)
	}
	return true
}

// seeRuns gives the runObservers of the first caches il and dl the hits on
// memo that hitRun's loop counted: fetches at il, data references at dl
// (a modify is two).
func seeRuns(il, dl *level, fetches, data uint64) {
	if il == dl {
		if il.runObs != nil && fetches+data > 0 {
			il.runObs.seeRun(il.memoSlot, fetches, data)
		}
		return
	}
	if il.runObs != nil && fetches > 0 {
		il.runObs.seeRun(il.memoSlot, fetches, 0)
	}
	if dl.runObs != nil && data > 0 {
		dl.runObs.seeRun(dl.memoSlot, 0, data)
	}
}

// firsts returns the current processor's first instruction and data
// caches, h.none for a missing one.
func (h *Hierarchy) firsts() (il, dl *level) {
	il, dl = h.ifirst, h.dfirst
	if il == nil {
		il = &h.none
	}
	if dl == nil {
		dl = &h.none
	}
	return il, dl
}

// hitRun is the hit bypass, the engine's one hot loop. It takes the events
// of b from i on, up to stop, while each is a hit that changes no
// replacement state in the first cache of its path, and returns the index
// of the first event it did not take. It takes fetches (and runs of them),
// reads and, in a write-back cache, writes and modifies that fall in one
// line of the cache (fastLimit) and hit there: the line of the cache's
// last access when nothing has changed its state since (level.memo), the
// line last used in its set (cache.Cache.MRU), or the one used before it,
// which Promote makes the last; from then on until the run ends, reads of
// either of these two lines only swap them in the level (memo2), and the
// cache does the swap once at the end (settle). With misses, hitRun also
// simulates the events that missPlain takes and, when not threaded, every
// other event (slow), and goes on after them.
//
// At levels without observers a hit is only counted, in registers added
// to the levels when the loop stops: the loop makes no calls but to the
// cache, so its counters stay in registers. A hit at a level with
// observers, which must see it (and may refuse it), takes hitsObserved.
func (h *Hierarchy) hitRun(b *trace.Batch, i, stop int, misses bool) int {
	kinds := b.Kind[:stop]
	addrs := b.Addr[:stop]
	sizes := b.Size[:stop]
	il, dl := h.firsts()
	for {
		// (The fetch and data cases repeat the lookup on purpose: as a
		// shared method it exceeds Go's inlining budget and costs a call
		// per event.)
		var iHits, rHits, wHits, mHits uint64
	loop:
		for ; i < len(kinds); i++ {
			a, s := addrs[i], uint64(sizes[i])
			switch kinds[i] {
			case trace.IFetch:
				if a&il.offMask+s-1 < il.memoLimit {
					if il.memo == a&^il.offMask {
						iHits++
						continue
					}
					if a&il.offMask+s-1 >= il.mruLimit {
						break
					}
					il.settle()
					slot := il.mruCache.MRU(a >> il.shift)
					if slot < 0 {
						slot, _ = il.mruCache.Promote(a >> il.shift)
					}
					if slot >= 0 {
						il.memo, il.memoSlot = a&^il.offMask, slot
						iHits++
						continue
					}
				}
			case trace.IFetchRun:
				// s fetches of one line: all hits that change nothing once
				// the first one is.
				if a&il.offMask < il.memoLimit {
					if il.memo == a&^il.offMask {
						iHits += s
						continue
					}
					if a&il.offMask >= il.mruLimit {
						break
					}
					il.settle()
					slot := il.mruCache.MRU(a >> il.shift)
					if slot < 0 {
						slot, _ = il.mruCache.Promote(a >> il.shift)
					}
					if slot >= 0 {
						il.memo, il.memoSlot = a&^il.offMask, slot
						iHits += s
						continue
					}
				}
			case trace.Read:
				if a&dl.offMask+s-1 < dl.memoLimit {
					line := a &^ dl.offMask
					if dl.memo == line {
						rHits++
						continue
					}
					if a&dl.offMask+s-1 >= dl.mruLimit {
						break
					}
					if dl.memo2 == line {
						dl.memo, dl.memo2, dl.memoSlot, dl.memo2Slot = line, dl.memo, dl.memo2Slot, dl.memoSlot
						dl.swapped = !dl.swapped
						rHits++
						continue
					}
					dl.settle()
					slot := dl.mruCache.MRU(a >> dl.shift)
					if slot < 0 {
						var second int
						if slot, second = dl.mruCache.Promote(a >> dl.shift); slot >= 0 {
							dl.memo2, dl.memo2Slot = dl.mruCache.Line(second)<<dl.shift, second
						}
					}
					if slot >= 0 {
						dl.memo, dl.memoSlot = line, slot
						rHits++
						continue
					}
				}
			case trace.Write, trace.Modify:
				// A write hit of a write-back cache only sets the dirty
				// bit; a modify is a read and a write hit of the same line.
				if a&dl.offMask+s-1 < dl.memoLimit && dl.writeBack {
					line := a &^ dl.offMask
					slot := dl.memoSlot
					if dl.memo != line {
						if a&dl.offMask+s-1 >= dl.mruLimit {
							break
						}
						dl.settle()
						if slot = dl.mruCache.MRU(a >> dl.shift); slot < 0 {
							slot, _ = dl.mruCache.Promote(a >> dl.shift)
						}
						if slot < 0 {
							break
						}
						dl.memo, dl.memoSlot = line, slot
					}
					dl.c.SetDirty(slot, true)
					if kinds[i] == trace.Write {
						wHits++
					} else {
						mHits++
					}
					continue
				}
			}
			break loop
		}
		il.acc[kIFetch] += iHits
		dl.acc[kRead] += rHits + mHits
		dl.acc[kWrite] += wHits + mHits
		h.kinds[trace.IFetch] += iHits
		h.kinds[trace.Read] += rHits
		h.kinds[trace.Write] += wHits
		h.kinds[trace.Modify] += mHits
		if il.runObs != nil || dl.runObs != nil {
			seeRuns(il, dl, iHits, rHits+wHits+2*mHits)
		}
		if i < len(kinds) && (il.obs != nil || dl.obs != nil) {
			if j := h.hitsObserved(b, i, len(kinds), il, dl); j > i {
				i = j
				continue
			}
		}
		il.settle()
		dl.settle()
		if i == len(kinds) || !misses {
			return i
		}
		if !h.missPlain(b, i, il, dl) {
			if h.threaded {
				return i // slow may change the processor or the context
			}
			if k := kinds[i]; k >= trace.BelowRead && k <= trace.BelowIFetch {
				i = h.belowRun(b, i, len(kinds))
				continue
			}
			h.slow(b, i, il)
		}
		i++
	}
}

// hitsObserved takes the events of b from i on, up to stop, for hitRun,
// while each is a hit that hitRun may take (see there) at a level with
// observers, and returns the index of the first it did not take. il and
// dl are the first caches (h.firsts).
func (h *Hierarchy) hitsObserved(b *trace.Batch, i, stop int, il, dl *level) int {
	for ; i < stop; i++ {
		k, a, s := b.Kind[i], b.Addr[i], uint64(b.Size[i])
		l := dl
		switch k {
		case trace.IFetch, trace.IFetchRun:
			l = il
			if k == trace.IFetchRun {
				s = 1 // the fetches are of one line
			}
		case trace.Read:
		case trace.Write, trace.Modify:
			if !dl.writeBack {
				return i
			}
		default:
			return i
		}
		if l.obs == nil || a&l.offMask+s-1 >= l.fastLimit {
			return i // hitRun's loop did what can be done
		}
		line := a &^ l.offMask
		if l.memo == line && a&l.offMask+s-1 < l.memoLimit {
			return i // hitRun's loop counts it
		}
		if k == trace.IFetch && l.memo == line {
			if d := &l.direct; d.at.h != nil && (d.est == nil || d.est.takes(l, k, l.memoSlot)) {
				// A run of fetches of memo's line: the attribution (and
				// the estimate, to which they are known hits once the
				// first is) takes them at once (they change nothing but
				// counters).
				j := i + 1
				for j < stop && b.Kind[j] == trace.IFetch && b.Addr[j]&^l.offMask == line && b.Addr[j]&l.offMask+uint64(b.Size[j])-1 < l.fastLimit {
					j++
				}
				n := uint64(j - i)
				if d.est != nil {
					d.est.seeRun(l.memoSlot, n, 0)
				}
				d.at.seeFetches(l, b, i, j, l.memoSlot)
				l.acc[kIFetch] += n
				h.kinds[trace.IFetch] += n
				i = j - 1
				continue
			}
		}
		slot, second := l.memoSlot, -1
		swap, used := false, false // used: the cache recorded the use
		switch {
		case l.memo == line:
		case l.memo2 == line:
			slot, swap = l.memo2Slot, true
		default:
			l.settle()
			if slot = l.mruCache.MRU(a >> l.shift); slot < 0 {
				if slot, second = l.mruCache.Promote(a >> l.shift); slot < 0 {
					return i
				}
			}
			used = true
		}
		// The observers see the hit when all of them take it; memo is
		// armed only on a line they saw (see runObserver).
		if !l.observe(b, i, k, slot) {
			if used {
				l.memo = noMemo // the line of the last access changed
			}
			return i
		}
		switch {
		case swap:
			l.memo, l.memo2, l.memoSlot, l.memo2Slot = line, l.memo, l.memo2Slot, l.memoSlot
			l.swapped = !l.swapped
		case used:
			if second >= 0 && k == trace.Read {
				l.memo2, l.memo2Slot = l.mruCache.Line(second)<<l.shift, second
			}
			l.memo, l.memoSlot = line, slot
		}
		n := uint64(1)
		switch k {
		case trace.IFetch:
			l.acc[kIFetch]++
		case trace.IFetchRun:
			n = uint64(b.Size[i])
			l.acc[kIFetch] += n
			k = trace.IFetch // the kind the fetches count as
		case trace.Read:
			l.acc[kRead]++
		case trace.Write:
			l.acc[kWrite]++
			l.c.SetDirty(slot, true)
		case trace.Modify:
			l.acc[kRead]++
			l.acc[kWrite]++
			l.c.SetDirty(slot, true)
		}
		h.kinds[k] += n
	}
	return i
}

// missPlain simulates event i of b, which the hit bypass did not take,
// when it is a fetch or a data read or write within one line of a plain
// first cache (most misses), without coherence or attribution, as slow
// would but without its dispatch. It reports whether it did.
func (h *Hierarchy) missPlain(b *trace.Batch, i int, il, dl *level) bool {
	if h.coh != nil || h.attr != nil {
		return false
	}
	a, s := b.Addr[i], uint64(b.Size[i])
	switch k := b.Kind[i]; k {
	case trace.Read, trace.Write:
		if !dl.plain || a&dl.offMask+s-1 >= dl.fastLimit {
			return false
		}
		kk := kRead
		if k == trace.Write {
			kk = kWrite
		}
		h.kinds[k]++
		h.plainRef(dl, kk, a>>dl.shift, -1, dl.wholeWrite(kk, a, s))
	case trace.IFetch:
		if !il.plain || a&il.offMask+s-1 >= il.fastLimit {
			return false
		}
		h.kinds[k]++
		h.plainRef(il, kIFetch, a>>il.shift, -1, false)
	case trace.IFetchRun:
		// As in slow: the first two fetches are simulated, the rest are
		// hits that change nothing.
		if !il.plain || a&il.offMask >= il.fastLimit {
			return false
		}
		h.kinds[trace.IFetch] += s
		for range min(s, 2) {
			h.plainRef(il, kIFetch, a>>il.shift, -1, false)
		}
		il.acc[kIFetch] += s - min(s, 2)
	default:
		return false
	}
	return true
}

// settle ends a run of bypassed hits on l: the cache learns of a pending
// swap of memo and memo2, and memo2 is forgotten.
func (l *level) settle() {
	if l.swapped {
		l.mruCache.Promote(l.memo >> l.shift)
		l.swapped = false
	}
	l.memo2 = noMemo
}

// slow simulates event i of b, which the hit bypass did not take. il is
// the first instruction cache or h.none.
func (h *Hierarchy) slow(b *trace.Batch, i int, il *level) {
	k, a, s := b.Kind[i], b.Addr[i], uint64(b.Size[i])
	if k >= trace.BelowRead && k <= trace.Exec {
		h.fromTracer(b, i)
		return
	}
	if k.IsExtended() {
		if h.attr != nil {
			h.attribEvent(k, a, b.PC[i], b.Thread[i], b.ExtOf(i))
			h.attr.setCurrent(b, i)
		}
		if k == trace.Marker {
			h.mark(b.ExtOf(i))
		}
		return
	}
	if h.attr != nil {
		h.attr.setCurrent(b, i)
		h.attr.strideAddr = noAddr
		if !h.attr.missOnly && (k == trace.Read || k == trace.Write || k == trace.Modify || k == trace.Misc) {
			h.attr.strideAddr = a
		}
	}
	if k == trace.IFetchRun {
		// The first two fetches are simulated: after a hit every policy's
		// state is settled (cache.Access), and nothing but fetches reaches
		// il between them (IFetchRuns), so the rest are hits that
		// change nothing.
		h.kinds[trace.IFetch] += s
		if h.attr != nil && !h.attr.protocol { // protocol monitoring counts no instructions per context
			if !h.attr.missOnly {
				// A span: every fetch counts at its access point.
				h.fetchSpan(b, i, il)
				return
			}
			h.attr.fetched(s)
		}
		for range min(s, 2) {
			h.fetch(il, a, 1)
		}
		if s > 2 {
			if il == &h.none {
				h.notSimulated += s - 2
			} else {
				il.acc[kIFetch] += s - 2
			}
		}
		return
	}
	h.kinds[k]++
	switch k {
	case trace.IFetch:
		if h.attr != nil && !h.attr.protocol {
			h.attr.fetched(1)
		}
		h.fetch(il, a, s)
	case trace.Read:
		h.dataRef(kRead, a, s)
	case trace.Misc:
		h.dataRef(kMisc, a, s)
	case trace.Write:
		h.dataRef(kWrite, a, s)
	case trace.Modify:
		h.dataRef(kRead, a, s)
		if h.attr != nil {
			h.attr.strideAddr = noAddr // one stride for both halves
		}
		h.dataRef(kWrite, a, s)
	case trace.CopyBack:
		h.copyBack(a, s)
	case trace.Invalidate:
		h.invalidate(a, s)
	}
}

// fetchSpan performs the fetches of the span of event i of b (see
// trace.IFetchRun) one by one, each in the calling context its thread runs
// it in, as their IFetch events would be; the first event's context is set.
func (h *Hierarchy) fetchSpan(b *trace.Batch, i int, il *level) {
	at := h.attr
	a, ends := b.Addr[i], b.PC[i]
	base := a &^ (at.spanBlock - 1)
	ends &^= uint64(1)<<(a-base) - 1 // (none before the first)
	for first := true; ends != 0; first = false {
		end := base + uint64(bits.TrailingZeros64(ends)) + 1
		ends &= ends - 1
		if !first {
			at.setRunning(a) // (the thread's, still a fetch)
		}
		at.fetched(1)
		h.fetch(il, a, end-a)
		a = end
	}
}

// fetch performs an instruction fetch of bytes [a, a+s) from the CPU; il
// is the first instruction cache or h.none.
func (h *Hierarchy) fetch(il *level, a, s uint64) {
	switch {
	case il == &h.none:
		h.notSimulated++
	case h.coh != nil:
		h.coherentFetch(il, a, s)
	default:
		h.cpuRef(il, kIFetch, a, s)
	}
}

// IFetchRuns returns the block size within which a reader may fold
// instruction fetches into trace.IFetchRun events without changing any
// result, or 0 when it may not, and whether the runs must be spans (see
// trace.IFetchRun). Folding moves the later fetches of a run before the
// data references between them; that changes nothing when the first
// instruction cache sees only fetches (it holds no data and no inclusive
// cache below can remove its lines on a data miss) and the block lies in
// one of its lines (and, with coherence, in one coherence line: the first
// fetch of a run is a read for the protocol, the others find nothing to
// do). With no instruction cache any block does: fetches are only
// counted. Attribution that counts every hit at its access point needs
// spans, whose bytes it marks used (spanBlock), and gets none when it
// cannot take them. Nor does sampling (its estimate counts every fetch),
// unless there is no instruction cache.
func (h *Hierarchy) IFetchRuns() (block int, spans bool) {
	if h.attr != nil && !h.attr.missOnly {
		return int(h.attr.spanBlock), h.attr.spanBlock > 0
	}
	il := h.ifirst
	if il == nil {
		return 4096, false
	}
	if !h.foldsFetches() {
		return 0, false
	}
	if h.coh != nil {
		// Each coherence line of a fetch is a read for the protocol.
		return int(min(il.lineSize, 1<<h.coh.shift)), false
	}
	return int(il.lineSize), false
}

// foldsFetches reports whether the first instruction cache, which h has,
// allows runs of fetches: it holds no data, the bypass takes its hits, no
// inclusive cache is below it and nothing samples (see IFetchRuns).
func (h *Hierarchy) foldsFetches() bool {
	il := h.ifirst
	if il.spec.HoldsData() || il.fastLimit == 0 || h.samp != nil {
		return false
	}
	for _, l := range h.levels {
		if l.inclusive && slices.Contains(l.uppers, il) {
			return false
		}
	}
	return true
}

// spanBlock returns the block of the spans of fetches that attribution of
// every hit takes (IFetchRuns), or 0 for none: with one processor, no
// coherence, NUMA or sampling, and a first instruction cache that allows
// runs, blocks of its line or of 64 bytes, one word of a line's byte
// mask.
func (h *Hierarchy) spanBlock() uint64 {
	if h.ifirst == nil || h.attr.protocol || len(h.procs) > 1 || h.coh != nil || h.numa != nil || !h.foldsFetches() {
		return 0
	}
	return min(h.ifirst.lineSize, 64)
}

// mark acts on a marker: a reset or a dump. In a warm-up it acts on the
// counts as they were when the warm-up began, which it then goes on from.
func (h *Hierarchy) mark(e *trace.Ext) {
	if s := h.samp; s != nil && s.warming && (e.Mark == trace.MarkReset || e.Mark == trace.MarkDump) {
		s.endWarmup(h)
		defer s.beginWarmup(h)
	}
	switch e.Mark {
	case trace.MarkReset:
		if h.tl != nil {
			h.tl.mark(h, "reset", "")
		}
		h.resetStats()
		h.resets++
	case trace.MarkDump:
		h.dumps = append(h.dumps, profile.Dump{Name: e.Name, Events: h.events(), Caches: h.cacheStats(), Memory: h.mem})
		if h.tl != nil {
			h.tl.mark(h, "dump", e.Name)
		}
	}
}

// resetStats zeroes every counter. Cache contents stay, and so does the 3C
// state (the fully associative twins and the lines seen), which is part of
// what the caches remember.
func (h *Hierarchy) resetStats() {
	h.kinds = [256]uint64{}
	h.notSimulated = 0
	if h.samp != nil {
		h.samp.reset()
	}
	if h.attr != nil {
		clear(h.attr.instr)
		clear(h.attr.syncWait)
		h.attr.strides.reset()
		clear(h.attr.writes)
	}
	if h.timing != nil {
		h.timing.reset()
	}
	if h.numa != nil {
		h.numa.reset()
	}
	h.mem = profile.MemoryStats{}
	for _, p := range h.procs {
		p.upgrades, p.interventions, p.invSent, p.invRecv = 0, 0, 0, 0
	}
	for _, l := range h.levels {
		l.counters = counters{}
		if l.est != nil {
			l.est.resetStats()
		}
		if l.attr != nil {
			l.attr.resetStats()
		}
	}
}

// dataRef performs a data reference of kind k from the CPU.
func (h *Hierarchy) dataRef(k int, a, s uint64) {
	if h.coh != nil {
		h.coherentRef(k, a, s)
		return
	}
	h.cpuRef(h.dfirst, k, a, s)
}

// cpuRef performs a reference of kind k from the CPU to bytes [a, a+s) at
// l (nil: memory): one that falls in one line of a plain level or hits
// what cpuHit takes without ref.
func (h *Hierarchy) cpuRef(l *level, k int, a, s uint64) {
	if l != nil && a&l.offMask+s-1 < l.fastLimit {
		if l.plain {
			h.plainRef(l, k, a>>l.shift, -1, l.wholeWrite(k, a, s))
			return
		}
		if l.cpuHit(k, a, s) {
			l.acc[k]++
			return
		}
	}
	h.ref(l, k, a, s, false, noPoint)
}

// cpuHit handles a reference from the CPU that falls in one line of l (as
// the caller checked against fastLimit) and hits it, when that needs
// nothing beyond l's own state: no 3C twin to update, no estimate to tell
// and no write to send through. It reports whether it did; the caller then
// counts the access. Everything else takes ref.
func (l *level) cpuHit(k int, a, s uint64) bool {
	if l.c == nil || l.shadow != nil || l.attr != nil || l.est != nil || k == kWrite && !l.writeBack {
		return false
	}
	line := a >> l.shift
	slot := l.c.Access(line)
	if slot < 0 {
		return false
	}
	if k == kWrite {
		l.c.SetDirty(slot, true)
	}
	l.memo, l.memoSlot = line<<l.shift, slot // settled after a hit
	return true
}

// next returns the next cache below l for requests of kind k.
func (l *level) next(k int) *level {
	if k == kIFetch {
		return l.instrNext
	}
	return l.dataNext
}

// ref performs a reference of kind k to bytes [a, a+s) at l (nil: memory).
// fromAbove is true when a cache above l makes the request. ref is the
// access point the request is for when attributing and known, else noPoint
// (found on a miss: the data bin is looked up then). It returns whether
// the data came back dirty (a hit in an exclusive cache hands its line,
// dirty or not, up to the requester).
func (h *Hierarchy) ref(l *level, k int, a, s uint64, fromAbove bool, ref point) bool {
	if s == 0 {
		s = 1
	}
	if l == nil {
		if a+s-1 < a {
			s = -a // addresses stop at 2^64-1, as they do in the caches
		}
		if k == kWrite {
			h.mem.Writes++
			h.mem.BytesWritten += s
		} else {
			h.mem.Reads++
			h.mem.BytesRead += s
		}
		return false
	}
	end := a + s - 1
	if end < a {
		end = ^uint64(0)
	}
	first, last := a>>l.shift, end>>l.shift
	if h.opt.CacheLab && !fromAbove {
		last = first
		if lineEnd := first<<l.shift | l.offMask; end > lineEnd {
			end = lineEnd
		}
	}
	dirty := false
	for line := first; ; line++ {
		pa := max(a, line<<l.shift)
		pe := min(end, line<<l.shift|l.offMask)
		if h.refLine(l, k, line, pa, pe-pa+1, fromAbove, ref) {
			dirty = true
		}
		if line == last {
			break
		}
	}
	return dirty
}

// wholeWrite reports whether a reference of kind k to [a, a+s), within
// one line of l or from its start on, writes the whole line: an
// allocating miss then fetches nothing (Dinero IV's rule, docs/semantics.md).
func (l *level) wholeWrite(k int, a, s uint64) bool {
	return k == kWrite && a&l.offMask == 0 && s >= l.lineSize
}

// fetchKind is the kind of the fetch below that a miss of kind k makes: an
// instruction fetch's or a misc reference's own kind (as in Dinero IV),
// else a read.
func fetchKind(k int) int {
	if k == kIFetch || k == kMisc {
		return k
	}
	return kRead
}

// refLine performs the part [pa, pa+ps) of a reference that falls in one
// line of l.
func (h *Hierarchy) refLine(l *level, k int, line, pa, ps uint64, fromAbove bool, ref point) bool {
	if l.plain {
		h.plainRef(l, k, line, ref, l.wholeWrite(k, pa, ps))
		return false
	}
	l.acc[k]++
	slot := l.c.Lookup(line)
	twinSettled := true
	if l.shadow != nil {
		twinSettled = h.classify(l, k, line, slot >= 0)
	}
	if slot >= 0 {
		unknown := l.est != nil && l.est.hit(slot, line)
		// When only misses count, a hit needs its access point only to
		// write through: access points (and their ids) do not then depend
		// on which hits the bypass left to this path.
		if l.attr != nil && (!h.attr.missOnly || unknown || k == kWrite && !l.writeBack) {
			if ref < 0 {
				ref = h.attr.ref(l.attr.slots[slot].bin)
				h.strideAt(ref, pa)
			}
			if !h.attr.missOnly || unknown {
				st, cs := l.attr.stats(ref)
				if !h.attr.missOnly {
					h.countHit(l, attribKind(k), slot, st, cs, pa, ps)
				}
				if unknown {
					st.unknownHits++
					cs.unknownHits++
				}
			}
		}
		if l.exclusive && fromAbove && k != kWrite {
			// The line moves up to the requester.
			d := l.c.Dirty(slot)
			if l.attr != nil {
				h.removed(l, slot, replaced)
			}
			l.c.Remove(slot)
			l.memo = noMemo
			return d
		}
		l.c.Touch(slot)
		// Before the write-through below, which may back-invalidate the line.
		l.setMemo(line, slot, twinSettled)
		if k == kWrite {
			if l.writeBack {
				l.c.SetDirty(slot, true)
			} else {
				l.bytesToBelow += ps
				h.ref(l.dataNext, kWrite, pa, ps, true, ref)
			}
		}
		return false
	}
	l.miss[k]++
	l.memo = noMemo
	unknown := l.est != nil && l.est.miss(line)
	if l.sharing != nil {
		switch l.sharing[line] {
		case trueSharing:
			l.trueMiss++
		case falseSharing:
			l.falseMiss++
		}
	}
	if l.attr != nil {
		switch {
		case ref >= 0:
		case k == kIFetch:
			ref = h.attr.ref(h.attr.data.CodeBin())
		default:
			ref = h.attr.ref(h.binOf(pa))
			h.strideAt(ref, pa)
		}
		h.countMiss(l, attribKind(k), line, ref, unknown)
	}
	if k == kWrite && (!l.allocate || l.exclusive && fromAbove) {
		l.bytesToBelow += ps
		h.ref(l.dataNext, kWrite, pa, ps, true, ref)
		return false
	}
	if l.exclusive && fromAbove {
		// Pass the fill through without keeping a copy.
		l.bytesFromBelow += l.lineSize
		return h.ref(l.next(k), k, line<<l.shift, l.lineSize, true, ref)
	}
	// Allocate. The requests below go in Dinero IV's order: the fetch,
	// then the write-through, then the victim's write-back. The victim is
	// chosen when the fetch has returned: an inclusive cache below may have
	// back-invalidated a line of the set while serving it. A write of the
	// whole line fetches nothing.
	dirty := false
	if !l.wholeWrite(k, pa, ps) {
		l.bytesFromBelow += l.lineSize
		if h.numa != nil && l.next(k) == nil {
			h.numaMiss(l, line, pa, ref)
		}
		dirty = h.ref(l.next(k), fetchKind(k), line<<l.shift, l.lineSize, true, ref)
	}
	// The line is installed with its dirty bit before a write-through
	// below, which may back-invalidate it (its dirty data then merges
	// into the victim below).
	slot, v := h.fill(l, line, dirty, dirty || k == kWrite && l.writeBack, ref, true, pa, ps)
	l.setMemo(line, slot, twinSettled && l.c.FillSettled())
	if k == kWrite && !l.writeBack {
		l.bytesToBelow += ps
		h.ref(l.dataNext, kWrite, pa, ps, true, ref)
	}
	if v.valid {
		h.sendVictim(l, v.line, v.dirty, v.ref)
	}
	return false
}

// plainRef performs a reference of kind k to line at the plain level l
// for access point ref: refLine's work without what a plain level does not
// need, and with one scan of the set (Access, then Replace on a miss).
// whole says that the reference is a write of the whole line, which fetches
// nothing. Replace installs the new line before the fill request below,
// where refLine chooses the victim when the fill has returned: no one below
// can see l (that is what plain guarantees), so no one can tell. Nor does
// anyone read l.memo before the miss rearms it at the end.
func (h *Hierarchy) plainRef(l *level, k int, line uint64, ref point, whole bool) {
	l.acc[k]++
	if slot := l.c.Access(line); slot >= 0 {
		if l.est != nil {
			l.est.hit(slot, line)
		}
		if k == kWrite {
			l.c.SetDirty(slot, true)
		}
		l.memo, l.memoSlot = line<<l.shift, slot // settled after a hit
		return
	}
	l.miss[k]++
	if l.est != nil {
		l.est.miss(line)
	}
	slot, old, evicted, victimDirty := l.c.Replace(line)
	if evicted {
		l.evictions++
		if l.est != nil {
			l.est.replaced(slot) // the slot's times are still old's
		}
		if l.inclusive && h.backInvalidateUppers(l, old) {
			victimDirty = true
		}
	}
	dirty := false
	if !whole {
		l.bytesFromBelow += l.lineSize
		dirty = h.lineBelow(l, l.next(k), fetchKind(k), line, ref)
	}
	l.c.SetDirty(slot, dirty || k == kWrite)
	if l.est != nil {
		l.est.filled(slot, line)
	}
	if l.c.FillSettled() {
		l.memo, l.memoSlot = line<<l.shift, slot
	} else {
		l.memo = noMemo
	}
	if evicted {
		h.sendVictim(l, old, victimDirty, noPoint)
	}
}

// setMemo arms the hit bypass for line in slot when a repeated access
// would change nothing (settled): neither l's replacement state nor its 3C
// twin's.
func (l *level) setMemo(line uint64, slot int, settled bool) {
	if settled {
		l.memo, l.memoSlot = line<<l.shift, slot
	} else {
		l.memo = noMemo
	}
}

// classify updates the 3C state of l for an access and, on a miss of l,
// counts its class. It reports whether the twin now holds the line and a
// repeated access would not change it (see setMemo).
func (h *Hierarchy) classify(l *level, k int, line uint64, hit bool) (settled bool) {
	sh := l.shadow
	shSlot := sh.Lookup(line)
	if shSlot >= 0 {
		sh.Touch(shSlot)
		settled = true // a repeated use changes nothing (the cache.Policy contract)
	} else if k != kWrite || l.allocate {
		v := sh.Victim(line)
		sh.Remove(v)
		sh.Install(v, line)
		settled = sh.FillSettled()
	}
	if hit {
		if l.exclusive {
			l.seen[line] = struct{}{} // lines can arrive unreferenced, as victims
		}
		return settled
	}
	switch _, seen := l.seen[line]; {
	case !seen:
		l.compulsory++
		l.seen[line] = struct{}{}
	case shSlot < 0:
		l.capacity++
	default:
		l.conflict++
	}
	return settled
}

// victim is a line evicted from a level, waiting to be sent below (see
// sendVictim): valid says there is one, ref is the access point that
// filled it (when attributing, else noPoint).
type victim struct {
	line  uint64
	dirty bool
	valid bool
	ref   point
}

// evict removes the valid line in slot of l to make room for a fill for
// access point by (when attributing), and returns it for sendVictim.
func (h *Hierarchy) evict(l *level, slot int, by point) victim {
	v := victim{line: l.c.Line(slot), dirty: l.c.Dirty(slot), valid: true, ref: noPoint}
	l.evictions++
	if l.est != nil {
		l.est.replaced(slot)
	}
	if l.attr != nil {
		v.ref = l.attr.slots[slot].fill
		l.attr.evicted(h.attr, v.ref, by)
	}
	if l.inclusive && h.backInvalidateUppers(l, v.line) {
		v.dirty = true
	}
	h.drop(l, slot, replaced) // after the copies above have left
	return v
}

// drop takes the line in slot out of l, replaced or invalidated (why):
// the way of a replacement, a back-invalidation and an invalidation
// record (a line moving up from an exclusive level, and one that another
// processor's write invalidates, whose sharing is classified first, are
// their own). The attribution records why and the use of its bytes, the
// coherence monitor what the processor used of it.
func (h *Hierarchy) drop(l *level, slot int, why uint8) {
	if l.attr != nil {
		h.removed(l, slot, why)
	}
	if l.used != nil {
		h.privateRemoving(l, slot)
	}
	l.c.Remove(slot)
	l.memo = noMemo
}

// sendVictim passes a line filled for access point ref leaving l down:
// into an exclusive cache below whether clean or dirty, otherwise as a
// write-back when dirty.
func (h *Hierarchy) sendVictim(l *level, line uint64, dirty bool, ref point) {
	below := l.victimNext
	if dirty {
		l.writebacks++
	}
	if below != nil && below.exclusive {
		l.bytesToBelow += l.lineSize
		h.insertVictim(below, line<<l.shift, dirty, ref)
		return
	}
	if dirty {
		l.bytesToBelow += l.lineSize
		h.lineBelow(l, below, kWrite, line, ref)
	}
}

// lineBelow sends a request of kind k for line, a line of l, to next, a
// cache below l (nil: memory), and reports whether the line came back
// dirty. When next is plain and its lines are no smaller, the request is
// one line of next and goes straight to plainRef: ref and refLine would
// only pass it on (a shortcut worth 5% of BenchmarkMissPath).
func (h *Hierarchy) lineBelow(l, next *level, k int, line uint64, ref point) (dirty bool) {
	if next != nil && next.plain && next.shift >= l.shift {
		h.plainRef(next, k, line>>(next.shift-l.shift), ref, k == kWrite && next.shift == l.shift)
		return false
	}
	return h.ref(next, k, line<<l.shift, l.lineSize, true, ref)
}

// insertVictim places a line evicted above, filled for access point ref,
// into the exclusive cache x.
func (h *Hierarchy) insertVictim(x *level, a uint64, dirty bool, ref point) {
	line := a >> x.shift
	x.memo = noMemo
	if slot := x.c.Lookup(line); slot >= 0 {
		if dirty {
			x.c.SetDirty(slot, true)
		}
		return
	}
	if _, v := h.fill(x, line, dirty, dirty, ref, false, a, 0); v.valid {
		h.sendVictim(x, v.line, v.dirty, v.ref)
	}
}

// fill puts line into l, for access point ref, into the slot the policy
// chooses: it evicts the line there, which it returns for sendVictim, and
// installs line with the dirty bit dirty. A demand fill is for a miss
// touching bytes [pa, pa+ps), whose line came back from below dirty or not
// (fetched); the other fills are victims from above (insertVictim). This
// is the one way a line enters a level but for plainRef's.
func (h *Hierarchy) fill(l *level, line uint64, fetched, dirty bool, ref point, demand bool, pa, ps uint64) (int, victim) {
	slot := l.c.Victim(line)
	var v victim
	if l.c.Valid(slot) {
		v = h.evict(l, slot, ref)
	}
	l.c.Install(slot, line)
	if l.est != nil {
		l.est.filled(slot, line)
	}
	if l.used != nil {
		h.privateFilled(l, slot, line, fetched)
	}
	if l.attr != nil {
		h.filled(l, slot, line, ref, demand, pa, ps)
	}
	l.c.SetDirty(slot, dirty)
	return slot, v
}

// backInvalidateUppers removes line, leaving the inclusive cache l, from
// every cache above l and reports whether any copy was dirty.
func (h *Hierarchy) backInvalidateUppers(l *level, line uint64) (dirty bool) {
	lo := line << l.shift
	for _, u := range l.uppers {
		if h.backInvalidate(u, lo, lo|l.offMask) {
			dirty = true
		}
	}
	return dirty
}

// backInvalidate removes from u every line overlapping bytes [lo, hi] and
// reports whether any of them was dirty.
func (h *Hierarchy) backInvalidate(u *level, lo, hi uint64) bool {
	dirty := false
	for line := lo >> u.shift; line <= hi>>u.shift; line++ {
		if slot := u.c.Lookup(line); slot >= 0 {
			dirty = dirty || u.c.Dirty(slot)
			h.drop(u, slot, replaced) // by a replacement below
			u.backInval++
		}
		if line == ^uint64(0) {
			break
		}
	}
	return dirty
}

// copyBack writes back dirty lines, cache by cache from the CPU outward,
// each cache's write-backs done (with everything they cause below) before
// the next cache's; lines stay valid. With s > 0 it writes back the line of
// each cache holding a (Dinero IV's D4XCOPYB acts on one block), with
// s == 0 every dirty line: from the highest-numbered set down, within a set
// from the oldest line to the newest (cache.AgeOrder), the order in which
// Dinero IV's LIFO list of pending requests sends them.
func (h *Hierarchy) copyBack(a, s uint64) {
	var order []int
	for _, l := range h.levels {
		l.memo = noMemo
		if s > 0 {
			if slot := l.c.Lookup(a >> l.shift); slot >= 0 && l.c.Dirty(slot) {
				h.writeBack(l, slot)
			}
			continue
		}
		for set := l.c.Sets() - 1; set >= 0; set-- {
			order = l.c.AgeOrder(set, order[:0])
			for _, slot := range order {
				// Earlier write-backs may have back-invalidated it.
				if l.c.Valid(slot) && l.c.Dirty(slot) {
					h.writeBack(l, slot)
				}
			}
		}
	}
}

// writeBack writes the dirty line in slot of l back to the level below and
// leaves it clean.
func (h *Hierarchy) writeBack(l *level, slot int) {
	l.c.SetDirty(slot, false)
	l.writebacks++
	l.bytesToBelow += l.lineSize
	ref := noPoint
	if l.attr != nil {
		ref = l.attr.slots[slot].fill
	}
	h.ref(l.victimNext, kWrite, l.c.Line(slot)<<l.shift, l.lineSize, true, ref)
}

// invalidate drops lines from every cache and its 3C twin without writing
// anything back: with s > 0 the line of each cache holding a (Dinero IV's
// D4XINVAL acts on one block), with s == 0 every line, and then the 3C
// state also forgets which lines were ever seen (their next misses are
// compulsory again).
func (h *Hierarchy) invalidate(a, s uint64) {
	for _, l := range h.levels {
		l.memo = noMemo
		drop := func(slot int) { h.drop(l, slot, invalidated) }
		if s > 0 {
			line := a >> l.shift
			if slot := l.c.Lookup(line); slot >= 0 {
				drop(slot)
			}
			if l.shadow != nil {
				if slot := l.shadow.Lookup(line); slot >= 0 {
					l.shadow.Remove(slot)
				}
			}
			continue
		}
		l.c.ForEachValid(drop)
		if l.shadow != nil {
			l.shadow.ForEachValid(l.shadow.Remove)
			clear(l.seen)
		}
	}
}

// Finish writes back every dirty line at the end of the trace (the
// write-backs count as accesses of the levels below). It is idempotent.
func (h *Hierarchy) Finish() {
	if h.finished {
		return
	}
	h.finished = true
	if s := h.samp; s != nil {
		// A warm-up that no sample followed counts nothing; the final
		// write-backs count like the sample's references.
		if s.warming {
			s.endWarmup(h)
		}
		s.counting = true
	}
	h.copyBack(0, 0)
}

// Profile returns the counters so far as a Profile.
func (h *Hierarchy) Profile() *profile.Profile {
	p := &profile.Profile{
		Version:      profile.Version,
		Tool:         "memspy",
		Machine:      h.m,
		Options:      profile.Options{CacheLab: h.opt.CacheLab},
		EventsByKind: map[string]uint64{},
		NotSimulated: h.notSimulated,
		Memory:       h.mem,
		Complete:     true,
	}
	if h.opt.Classify {
		p.Options.Classify = "3c"
	}
	for k, n := range h.kinds {
		if n > 0 {
			p.EventsByKind[trace.Kind(k).String()] = n
		}
	}
	p.Events = h.events()
	p.Caches = h.cacheStats()
	p.Processors = h.processorStats()
	if h.timing != nil {
		p.Threads = h.threadStats()
		p.Interleave = h.opt.Interleave.String()
		if h.opt.Interleave == InterleaveClock {
			p.Quantum = cmp.Or(h.opt.Quantum, DefaultQuantum)
		}
		p.Sync = h.syncObjects(nil)
	}
	p.Dumps = slices.Clone(h.dumps)
	p.Resets = h.resets
	if h.tl != nil {
		p.Timeline = h.tl.profile(h)
	}
	p.Sampling = h.samplingStats()
	switch {
	case h.attr != nil && h.opt.Monitor == MonitorProtocol && h.numa != nil:
		p.Numa = h.numaStats(h.newNamer(nil))
	case h.attr != nil:
		h.whereProfile(p) // with the NUMA statistics
	default:
		p.Numa = h.numaStats(nil)
	}
	return p
}

// events returns the number of events simulated.
func (h *Hierarchy) events() uint64 {
	var n uint64
	for _, c := range h.kinds {
		n += c
	}
	return n
}

// cacheStats returns the counters of every cache, in machine order: of a
// private cache, the sum over its copies.
func (h *Hierarchy) cacheStats() []profile.CacheStats {
	var out []profile.CacheStats
	for _, cs := range h.caches {
		var copies []profile.CacheStats
		for _, l := range cs {
			copies = append(copies, l.stats())
		}
		out = append(out, profile.Sum(copies))
	}
	return out
}

// stats returns the counters of l.
func (l *level) stats() profile.CacheStats {
	return profile.CacheStats{
		Name:               l.spec.Name,
		Level:              l.spec.Level,
		Accesses:           l.acc[kIFetch] + l.acc[kRead] + l.acc[kWrite] + l.acc[kMisc],
		Misses:             l.miss[kIFetch] + l.miss[kRead] + l.miss[kWrite] + l.miss[kMisc],
		IFetches:           l.acc[kIFetch],
		Reads:              l.acc[kRead],
		Writes:             l.acc[kWrite],
		IFetchMisses:       l.miss[kIFetch],
		ReadMisses:         l.miss[kRead],
		WriteMisses:        l.miss[kWrite],
		Misc:               l.acc[kMisc],
		MiscMisses:         l.miss[kMisc],
		Compulsory:         l.compulsory,
		Capacity:           l.capacity,
		Conflict:           l.conflict,
		Evictions:          l.evictions,
		Writebacks:         l.writebacks,
		BackInvalidations:  l.backInval,
		BytesFromBelow:     l.bytesFromBelow,
		BytesToBelow:       l.bytesToBelow,
		Invalidations:      l.invalidations,
		TrueSharingMisses:  l.trueMiss,
		FalseSharingMisses: l.falseMiss,
		Sampled:            l.sampledCounts(),
	}
}

// sampledCounts returns l's known and unknown counts (nil unless
// sampling).
func (l *level) sampledCounts() *profile.SampledCounts {
	if l.est == nil {
		return nil
	}
	return l.est.counts()
}
