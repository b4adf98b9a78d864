package sim

import (
	"fmt"

	"github.com/memspy/memspy/trace"
)

// Interleave is the order in which a multiprocessor takes the events of its
// threads (docs/semantics.md, "Interleaving").
type Interleave uint8

const (
	// InterleaveClock re-interleaves the threads in quanta: the thread
	// whose simulated clock is farthest behind runs next, as in Tango Lite.
	// No event crosses a synchronization event: those, and each thread's
	// first event, keep their place in the traced order.
	InterleaveClock Interleave = iota
	// InterleaveTrace keeps the traced order.
	InterleaveTrace
)

// ParseInterleave parses "clock" or "trace".
func ParseInterleave(s string) (Interleave, error) {
	switch s {
	case "clock":
		return InterleaveClock, nil
	case "trace":
		return InterleaveTrace, nil
	}
	return 0, fmt.Errorf("unknown interleaving %q: want clock or trace", s)
}

// String returns "clock" or "trace".
func (i Interleave) String() string {
	if i == InterleaveTrace {
		return "trace"
	}
	return "clock"
}

const (
	// DefaultQuantum is the number of events a thread runs at a time when
	// the engine re-interleaves threads by their clocks.
	DefaultQuantum = 100
	// DefaultWindow is the number of events the engine holds back at most
	// while re-interleaving: beyond it, a thread that has no events in the
	// window no longer holds the others back.
	DefaultWindow = 1 << 22
)

// A scheduler takes the events of a multi-thread trace, in the traced
// order, and hands them to run in the order of its interleaving: a run of
// one thread's events at a time, with every synchronization event in a run
// of its own. Under InterleaveClock:
//
//   - Each thread's events keep their order.
//   - The synchronization events on each object (a lock, barrier or
//     condition variable, an atomically updated word, a thread's creation
//     token or handle) keep their traced order: a thread whose next event
//     is one waits until every earlier event on its objects has run. So an
//     unlock runs before the lock acquisition that follows it in the trace,
//     every arrival at a barrier before the leaves, a create before the
//     start, an exit before the join: every happens-before relation of the
//     traced execution holds, and the clocks measure waits against them.
//   - Each thread's first event, unless it is a start event (ordered after
//     its create), is a fence: it stands for the thread's creation in a
//     trace without synchronization events. The events before it in the
//     trace run before it, those after it after it. Fences cut the trace
//     into epochs, run one after the other.
//
// Within an epoch, the live thread with the smallest clock runs next, for
// up to a quantum of events; when it has no event read yet and the epoch's
// fence has not been read, the scheduler waits for more input, unless the
// window is full; when it waits for another thread's synchronization, the
// runnable thread with the smallest clock runs.
type scheduler struct {
	mode    Interleave
	quantum int
	window  int
	// run simulates the events of b, all of thread t (b is a view of t's
	// queue, valid during the call); it advances t.clock and, for a
	// thread's exit, sets t.done.
	run func(t *sthread, b *trace.Batch)

	threads map[uint32]*sthread
	all     []*sthread // in order of appearance
	last    *sthread   // the thread of the last event read
	queued  int        // events read and not yet run
	cur     uint64     // the epoch being run
	fences  uint64     // fences read: the epoch of the next event read
	fenceQ  []*sthread // the threads of the fences read and not run, in order
	// objs counts, per synchronization object, its events read (a ticket
	// each) and run.
	objs map[syncObject]*objTurn
	view trace.Batch
}

// syncObject names a synchronization object: an address in the memory
// namespace (locks, barriers, condition variables, atomic words), a
// creation token, or a thread handle.
type syncObject struct {
	space uint8
	addr  uint64
}

const (
	memorySpace = iota
	tokenSpace
	handleSpace
)

// objTurn counts the events on one synchronization object.
type objTurn struct{ read, ran uint64 }

// sthread is a thread as the scheduler sees it.
type sthread struct {
	tid   uint32
	clock uint64 // simulated cycles (advanced by run)
	done  bool   // exited: its clock no longer holds the others back
	// exited says its exit was pushed: its later events (the thread
	// library's exit path) order no one (see ordersNoOne).
	exited bool
	// from is the thread whose event preceded its first in the trace (nil
	// for the first thread, and for a thread whose first event is its
	// start): it starts at that thread's clock.
	from *sthread

	// Kept by run (Hierarchy.runThread): whether it has run, its clock
	// then, and its events, compute, stall and synchronization cycles.
	started                      bool
	start                        uint64
	events, compute, stall, sync uint64

	q     *trace.Batch // events read and not yet run, from head on
	head  int
	marks []epochMark // where the epochs of q's events change, in order
	mark  int         // the mark of the event at head
	syncs []queuedSync
}

// epochMark says that q's events from index idx on are of epoch epoch.
type epochMark struct {
	idx   int
	epoch uint64
}

// queuedSync is a synchronization event in a thread's queue, at index idx,
// with its objects and its tickets (its place among their events).
type queuedSync struct {
	idx     int
	n       int
	objs    [2]*objTurn
	tickets [2]uint64
}

func newScheduler(mode Interleave, quantum, window int, run func(*sthread, *trace.Batch)) *scheduler {
	if quantum <= 0 {
		quantum = DefaultQuantum
	}
	if window <= 0 {
		window = DefaultWindow
	}
	return &scheduler{mode: mode, quantum: quantum, window: window, run: run,
		threads: map[uint32]*sthread{}, objs: map[syncObject]*objTurn{}}
}

// syncObjects returns the objects of synchronization event e on address a.
func syncObjects(a uint64, e *trace.Ext) (objs [2]syncObject, n int) {
	switch e.Sync {
	case trace.SyncCondWait, trace.SyncCondWake:
		if e.Size != a { // one object once: its ticket must come up
			return [2]syncObject{{memorySpace, a}, {memorySpace, e.Size}}, 2
		}
	case trace.SyncCreate, trace.SyncStart:
		return [2]syncObject{{tokenSpace, a}}, 1
	case trace.SyncExit, trace.SyncJoin:
		return [2]syncObject{{handleSpace, a}}, 1
	}
	return [2]syncObject{{memorySpace, a}}, 1
}

// isStart reports whether event i of b is a thread's start: ordered after
// its create by their token, it needs no fence.
func isStart(b *trace.Batch, i int) bool {
	return b.Kind[i] == trace.Sync && b.ExtOf(i).Sync == trace.SyncStart
}

// thread returns the scheduler's thread tid, and whether it is new.
func (s *scheduler) thread(tid uint32) (*sthread, bool) {
	if s.last != nil && s.last.tid == tid {
		return s.last, false
	}
	t, ok := s.threads[tid]
	if !ok {
		t = &sthread{tid: tid, q: trace.NewBatch(0), from: s.last}
		s.threads[tid] = t
		s.all = append(s.all, t)
	}
	return t, !ok
}

// push takes the events of b, the next of the trace, and runs what it can.
func (s *scheduler) push(b *trace.Batch) {
	if s.mode == InterleaveTrace {
		s.pushInOrder(b)
		return
	}
	n := b.Len()
	for i := 0; i < n; {
		t, fresh := s.thread(b.Thread[i])
		s.last = t
		if ordersNoOne(t, b, i) {
			i++
			continue
		}
		// The run of t's events from i: up to the next synchronization
		// event; a new thread's first event alone.
		j := i + 1
		if !fresh && b.Kind[i] != trace.Sync {
			for j < n && b.Thread[j] == t.tid && b.Kind[j] != trace.Sync {
				j++
			}
		}
		if m := len(t.marks); m == 0 || t.marks[m-1].epoch != s.fences {
			t.marks = append(t.marks, epochMark{t.q.Len(), s.fences})
		}
		if b.Kind[i] == trace.Sync {
			objs, no := syncObjects(b.Addr[i], b.ExtOf(i))
			qs := queuedSync{idx: t.q.Len(), n: no}
			for k := range no {
				o := s.objs[objs[k]]
				if o == nil {
					o = &objTurn{}
					s.objs[objs[k]] = o
				}
				qs.objs[k], qs.tickets[k] = o, o.read
				o.read++
			}
			t.syncs = append(t.syncs, qs)
		}
		appendEvents(t.q, b, i, j)
		s.queued += j - i
		switch {
		case fresh && isStart(b, i):
			t.from = nil // its clock starts at its create's
		case fresh:
			s.fences++
			s.fenceQ = append(s.fenceQ, t)
		}
		i = j
		s.drain(false)
	}
}

// ordersNoOne reports whether event i of b, of thread t, is a
// synchronization event after t's exit, which is dropped: the thread
// library's exit path after the routine returned (freeing the thread's
// caches, counting the threads down) synchronizes on the library's
// shared words, and Valgrind, running one thread at a time, often runs a
// whole thread before it creates the next, so that these would order the
// later threads after the earlier ones' ends where natively they overlap.
// It keeps t's exit state up to date.
func ordersNoOne(t *sthread, b *trace.Batch, i int) bool {
	if b.Kind[i] != trace.Sync {
		return false
	}
	switch k := b.ExtOf(i).Sync; {
	case k == trace.SyncStart:
		t.exited = false // a new thread with the id of one that ended
	case t.exited:
		return true
	case k == trace.SyncExit:
		t.exited = true
	}
	return false
}

// pushInOrder runs b's events in the traced order (InterleaveTrace): a run
// of one thread's events at a time, each synchronization event on its own.
func (s *scheduler) pushInOrder(b *trace.Batch) {
	n := b.Len()
	for i := 0; i < n; {
		t, _ := s.thread(b.Thread[i])
		s.last = t
		if ordersNoOne(t, b, i) {
			i++
			continue
		}
		j := i + 1
		if b.Kind[i] != trace.Sync {
			for j < n && b.Thread[j] == t.tid && b.Kind[j] != trace.Sync {
				j++
			}
		}
		s.runView(t, b, i, j)
		i = j
	}
}

// finish runs every event still held back, at the end of the input.
func (s *scheduler) finish() {
	s.drain(true)
}

// avail returns the number of t's events that can run now: those at the
// head of its queue that are of the current epoch, without its fence, up to
// its next synchronization event, or that event alone when every earlier
// event on its objects has run.
func (s *scheduler) avail(t *sthread) int {
	q := t.q.Len()
	if t.head == q {
		return 0
	}
	for t.mark+1 < len(t.marks) && t.marks[t.mark+1].idx <= t.head {
		t.mark++
	}
	if t.marks[t.mark].epoch != s.cur {
		return 0
	}
	end := q
	if t.mark+1 < len(t.marks) {
		end = t.marks[t.mark+1].idx
	}
	if s.cur < s.fences && s.fenceQ[0] == t {
		end-- // the fence: the last event of the epoch
	}
	if len(t.syncs) > 0 && t.syncs[0].idx < end {
		qs := &t.syncs[0]
		if qs.idx > t.head {
			return qs.idx - t.head
		}
		for k := range qs.n {
			if qs.objs[k].ran != qs.tickets[k] {
				return 0 // waits for another thread
			}
		}
		return 1
	}
	return end - t.head
}

// next returns the thread with the smallest clock among those that ok
// accepts (the first to appear among equals), or nil.
func (s *scheduler) next(ok func(*sthread) bool) *sthread {
	var best *sthread
	for _, t := range s.all {
		if ok(t) && (best == nil || t.clock < best.clock) {
			best = t
		}
	}
	return best
}

// drain runs events while the interleaving allows it without more input;
// final says the input has ended.
func (s *scheduler) drain(final bool) {
	runnable := func(t *sthread) bool { return s.avail(t) > 0 }
	for s.queued > 0 {
		var t *sthread
		if s.cur < s.fences || final {
			// Every event of the epoch has been read.
			if t = s.next(runnable); t == nil {
				t = s.fenceQ[0]
				s.fenceQ = s.fenceQ[1:]
				s.runQueued(t, 1)
				s.cur++
				continue
			}
		} else {
			t = s.next(func(t *sthread) bool { return !t.done && (t.head == t.q.Len() || s.avail(t) > 0) })
			if t == nil || s.avail(t) == 0 {
				// The thread farthest behind has no event read yet: read
				// on, unless the window is full.
				if s.queued < s.window {
					return
				}
				if t = s.next(runnable); t == nil {
					return
				}
			}
		}
		s.runQueued(t, min(s.avail(t), s.quantum))
	}
}

// runQueued runs the n events at the head of t's queue.
func (s *scheduler) runQueued(t *sthread, n int) {
	s.runView(t, t.q, t.head, t.head+n)
	if len(t.syncs) > 0 && t.syncs[0].idx == t.head {
		qs := &t.syncs[0]
		for k := range qs.n {
			qs.objs[k].ran++
		}
		t.syncs = t.syncs[1:]
	}
	t.head += n
	s.queued -= n
	if t.head == t.q.Len() {
		// Empty: start again at the beginning; the next event read makes
		// its mark.
		t.q.Reset()
		t.head = 0
		t.marks, t.mark = t.marks[:0], 0
		t.syncs = t.syncs[:0]
	} else if t.head >= 1<<16 && 2*t.head >= t.q.Len() {
		t.compact()
	}
}

// compact drops the events before head from t's queue.
func (t *sthread) compact() {
	old := t.q
	t.q = trace.NewBatch(old.Len() - t.head)
	appendEvents(t.q, old, t.head, old.Len())
	marks := t.marks[t.mark:]
	for i := range marks {
		marks[i].idx = max(marks[i].idx-t.head, 0)
	}
	t.marks = append(t.marks[:0], marks...)
	for i := range t.syncs {
		t.syncs[i].idx -= t.head
	}
	t.syncs = append([]queuedSync(nil), t.syncs...)
	t.mark, t.head = 0, 0
}

// runView hands events [i, j) of b, all of thread t, to run.
func (s *scheduler) runView(t *sthread, b *trace.Batch, i, j int) {
	v := &s.view
	v.Kind, v.Addr, v.Size = b.Kind[i:j], b.Addr[i:j], b.Size[i:j]
	v.PC, v.Thread, v.Ext = b.PC[i:j], b.Thread[i:j], b.Ext
	s.run(t, v)
}

// appendEvents appends events [i, j) of src to dst, column by column; the
// extended ones get their Ext copied and re-indexed.
func appendEvents(dst, src *trace.Batch, i, j int) {
	base := dst.Len()
	dst.Kind = append(dst.Kind, src.Kind[i:j]...)
	dst.Addr = append(dst.Addr, src.Addr[i:j]...)
	dst.Size = append(dst.Size, src.Size[i:j]...)
	dst.PC = append(dst.PC, src.PC[i:j]...)
	dst.Thread = append(dst.Thread, src.Thread[i:j]...)
	for x, k := range src.Kind[i:j] {
		if k.IsExtended() {
			dst.Size[base+x] = uint32(len(dst.Ext))
			dst.Ext = append(dst.Ext, *src.ExtOf(i + x))
		}
	}
}
