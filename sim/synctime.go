package sim

import (
	"fmt"

	"github.com/memspy/memspy/attrib"
	"github.com/memspy/memspy/profile"
	"github.com/memspy/memspy/trace"
)

// Simulated time on a multiprocessor (docs/semantics.md, "Interleaving and
// synchronization time"). Each thread has a clock: it starts at the clock
// of the thread that created it and advances one cycle per event, by the
// stall cycles of the misses the event's references make (the penalties of
// the where views), and by the cycles the thread waits at synchronization:
//
//   - acquiring a lock waits until the clock of its last release (a shared
//     acquisition only for the last release of an exclusive holder);
//   - leaving a barrier waits until the last arrival of its episode;
//   - a wake from a condition variable waits for its last signal and for
//     the mutex;
//   - a join waits until the joined thread's exit.
//
// The traced order of the synchronization events is kept (they are
// fences), so each wait is measured against what precedes it in the
// trace.

// timing is the state of the simulated clocks beyond the threads' own.
type timing struct {
	locks    map[uint64]*lockTime
	barriers map[uint64]*barrierTime
	arrived  map[[2]uint64]int // (barrier, thread) → the episode it arrived at
	signals  map[uint64]uint64 // condition → clock of its last signal
	created  map[uint64]uint64 // create token → the creator's clock
	exits    map[uint64]exitTime
	objs     map[syncKey]*syncObj
	stall    map[*processor][]stallLevel
	threads  []*sthread
}

type lockTime struct {
	released, exclusiveReleased uint64 // clocks of the last release, of the last exclusive holder's
	exclusive                   bool   // held exclusively since the last release
}

type barrierTime struct {
	episode int      // the episode threads arrive at now
	latest  uint64   // its latest arrival so far
	opened  []uint64 // per episode that threads have begun to leave: its latest arrival
}

type exitTime struct {
	clock uint64
	tid   uint32
}

type syncKey struct {
	kind string
	addr uint64
}

// syncObj is a synchronization object's statistics and, when attributing,
// where it lies: its data bin (attrib.OtherBin: none) and its offset in
// the bin's range.
type syncObj struct {
	profile.SyncObject
	bin int32
	off uint64
}

// stallLevel is a cache whose misses stall a processor, h.levels[i], with
// its penalty per access kind.
type stallLevel struct {
	i   int
	pen [numAccessKinds]uint64
}

func newTiming() *timing {
	return &timing{locks: map[uint64]*lockTime{}, barriers: map[uint64]*barrierTime{},
		arrived: map[[2]uint64]int{}, signals: map[uint64]uint64{}, created: map[uint64]uint64{},
		exits: map[uint64]exitTime{}, objs: map[syncKey]*syncObj{}, stall: map[*processor][]stallLevel{}}
}

// stallOf returns the stall cycles of every miss counted so far in p's
// private caches and in the shared ones. (A warm-up's references, like
// those left out between samples, take no simulated time.)
func (h *Hierarchy) stallOf(p *processor) uint64 {
	ls, ok := h.timing.stall[p]
	if !ok {
		for i, l := range h.levels {
			if l.proc < 0 || l.proc == p.id {
				sl := stallLevel{i: i}
				for k := range numAccessKinds {
					sl.pen[k] = h.penalty(l, k)
				}
				ls = append(ls, sl)
			}
		}
		h.timing.stall[p] = ls
	}
	var c uint64
	if h.numa != nil {
		c = h.countedNuma().extra[p.id]
	}
	for i := range ls {
		sl := &ls[i]
		m := &h.countedLevel(sl.i).miss
		c += m[kIFetch]*sl.pen[kIFetch] + (m[kRead]+m[kMisc])*sl.pen[kRead] + m[kWrite]*sl.pen[kWrite]
	}
	return c
}

// accesses returns the references and instruction fetches counted so far.
func (h *Hierarchy) accesses() uint64 {
	k := h.countedKinds()
	return k[trace.Read] + k[trace.Write] + k[trace.Modify] + k[trace.IFetch] + k[trace.Misc]
}

// runThread simulates b, a run of thread t's events that the scheduler
// hands out, and advances t's clock.
func (h *Hierarchy) runThread(t *sthread, b *trace.Batch) {
	tm := h.timing
	if !t.started {
		t.started = true
		if t.from != nil {
			t.clock = max(t.clock, t.from.clock)
		}
		t.start = t.clock
		tm.threads = append(tm.threads, t)
	}
	if t.tid != h.curTid || len(h.tids) == 0 {
		h.switchThread(t.tid)
	}
	p := h.cur
	before, events := h.stallOf(p), h.accesses()
	h.Process(b)
	var n uint64
	if after := h.accesses(); after >= events { // else a reset marker cleared the counters
		n = after - events
	}
	var stall uint64
	if after := h.stallOf(p); after >= before { // else a reset marker cleared the counters
		stall = after - before
	}
	t.events += n
	t.compute += n
	t.stall += stall
	t.clock += n + stall
	if b.Len() == 1 && b.Kind[0] == trace.Sync {
		h.syncEvent(t, b.Addr[0], b.ExtOf(0))
	}
}

// syncEvent applies synchronization event e of thread t on the object at
// a to the clocks.
func (h *Hierarchy) syncEvent(t *sthread, a uint64, e *trace.Ext) {
	tm := h.timing
	var until uint64 // t waits until this clock
	kind, op := "", true
	switch e.Sync {
	case trace.SyncAcquire:
		kind = "lock"
		l := tm.lock(a)
		until = l.released
		if e.Size == 1 {
			until = l.exclusiveReleased
		}
		l.exclusive = e.Size != 1
	case trace.SyncRelease:
		tm.lock(a).release(t.clock)
	case trace.SyncCondWait:
		tm.lock(e.Size).release(t.clock)
	case trace.SyncCondSignal:
		tm.signals[a] = max(tm.signals[a], t.clock)
	case trace.SyncCondWake:
		kind = "condition"
		l := tm.lock(e.Size)
		until = max(tm.signals[a], l.released)
		l.exclusive = true
	case trace.SyncBarrierArrive:
		b := tm.barriers[a]
		if b == nil {
			b = &barrierTime{}
			tm.barriers[a] = b
		}
		if b.episode < len(b.opened) { // its last episode has opened
			b.episode, b.latest = len(b.opened), 0
		}
		b.latest = max(b.latest, t.clock)
		tm.arrived[[2]uint64{a, uint64(t.tid)}] = b.episode
		kind = "barrier"
	case trace.SyncBarrierLeave:
		b := tm.barriers[a]
		ep, ok := tm.arrived[[2]uint64{a, uint64(t.tid)}]
		if b == nil || !ok {
			break // it arrived before tracing began
		}
		delete(tm.arrived, [2]uint64{a, uint64(t.tid)})
		if ep == len(b.opened) { // the first to leave opens the episode
			b.opened = append(b.opened, b.latest)
		}
		kind, op, until = "barrier", false, b.opened[ep] // counted at the arrival
	case trace.SyncCreate:
		tm.created[a] = t.clock
	case trace.SyncStart:
		if c, ok := tm.created[a]; ok {
			delete(tm.created, a)
			t.clock = max(t.clock, c) // not waiting: the thread did not exist
			t.start = max(t.start, c)
		}
	case trace.SyncExit:
		tm.exits[a] = exitTime{t.clock, t.tid}
		t.done = true
	case trace.SyncJoin:
		x, ok := tm.exits[a]
		if !ok {
			break
		}
		delete(tm.exits, a)
		kind, until = "join", x.clock
		a = uint64(x.tid)
	case trace.SyncAtomic:
		kind = "atomic"
	}
	if kind == "" {
		return
	}
	o := tm.objs[syncKey{kind, a}]
	if o == nil {
		o = &syncObj{SyncObject: profile.SyncObject{Kind: kind, Addr: a}, bin: attrib.OtherBin}
		if h.attr != nil && kind != "join" {
			var start uint64
			o.bin, start, _ = h.attr.data.Locate(a)
			o.off = a - start
		}
		tm.objs[syncKey{kind, a}] = o
	}
	if op {
		o.Operations++
	}
	if until > t.clock {
		w := until - t.clock
		t.clock, t.sync = until, t.sync+w
		o.Waits++
		o.WaitCycles += w
		if h.attr != nil {
			h.attr.waited(h.attr.code.Current(t.tid), w)
		}
	}
}

// reset starts the threads' counters and the objects' statistics again
// from zero (a reset marker); the clocks go on.
func (tm *timing) reset() {
	for _, t := range tm.threads {
		t.events, t.compute, t.stall, t.sync = 0, 0, 0, 0
		t.start = t.clock
	}
	clear(tm.objs)
}

func (tm *timing) lock(a uint64) *lockTime {
	l := tm.locks[a]
	if l == nil {
		l = &lockTime{}
		tm.locks[a] = l
	}
	return l
}

func (l *lockTime) release(clock uint64) {
	l.released = max(l.released, clock)
	if l.exclusive {
		l.exclusiveReleased = max(l.exclusiveReleased, clock)
		l.exclusive = false
	}
}

// threadStats returns the threads' simulated times, in order of first
// run.
func (h *Hierarchy) threadStats() []profile.ThreadStats {
	var out []profile.ThreadStats
	for _, t := range h.timing.threads {
		out = append(out, profile.ThreadStats{Thread: t.tid, Processor: h.tids[t.tid].id, Events: t.events,
			ComputeCycles: t.compute, StallCycles: t.stall, SyncCycles: t.sync, Start: t.start, End: t.clock})
	}
	return out
}

// syncObjects returns the synchronization objects, named by their data
// bins when attributing.
func (h *Hierarchy) syncObjects(nm *namer) []profile.SyncObject {
	var out []profile.SyncObject
	for _, o := range h.timing.objs {
		s := o.SyncObject
		switch {
		case s.Kind == "join":
			s.Name = fmt.Sprintf("thread %d", s.Addr)
		case nm != nil && o.bin != attrib.OtherBin:
			s.Name = nm.binName(o.bin)
			if o.off != 0 {
				s.Name += fmt.Sprintf("+%d", o.off)
			}
		default:
			s.Name = fmt.Sprintf("%#x", s.Addr)
		}
		out = append(out, s)
	}
	profile.SortSync(out)
	return out
}
