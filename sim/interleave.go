package sim

import (
	"fmt"

	"memspy/trace"
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
// one thread's events at a time, with every synchronization event (a
// fence) in a run of its own.
//
// Fences cut the traced order into epochs: epoch e holds the events after
// fence e-1 and up to fence e, which ends it. The scheduler hands out the
// events of one epoch at a time, fence last, so that no event crosses a
// fence: an event precedes a fence in the output exactly when it does in
// the trace. Within an epoch, under InterleaveClock, the live thread with
// the smallest clock runs next, for up to a quantum of events; when that
// thread has no event to run and the epoch's fence has not been read yet,
// the scheduler waits for more input, unless the window is full.
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
	view    trace.Batch
}

// sthread is a thread as the scheduler sees it.
type sthread struct {
	tid   uint32
	clock uint64 // simulated cycles (advanced by run)
	done  bool   // exited: its clock no longer holds the others back
	// from is the thread whose event preceded its first in the trace (nil
	// for the first thread): without a start event, it starts at that
	// thread's clock.
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
}

// epochMark says that q's events from index idx on are of epoch epoch.
type epochMark struct {
	idx   int
	epoch uint64
}

func newScheduler(mode Interleave, quantum, window int, run func(*sthread, *trace.Batch)) *scheduler {
	if quantum <= 0 {
		quantum = DefaultQuantum
	}
	if window <= 0 {
		window = DefaultWindow
	}
	return &scheduler{mode: mode, quantum: quantum, window: window, run: run, threads: map[uint32]*sthread{}}
}

// isFence reports whether event i of b is a synchronization event.
func isFence(b *trace.Batch, i int) bool {
	return b.Kind[i] == trace.Sync
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
		// The run of t's events from i: up to the next fence, the first
		// event of a new thread included.
		j := i
		if fresh || isFence(b, i) {
			j = i + 1
		} else {
			for j < n && b.Thread[j] == t.tid && !isFence(b, j) {
				j++
			}
		}
		if m := len(t.marks); m == 0 || t.marks[m-1].epoch != s.fences {
			t.marks = append(t.marks, epochMark{t.q.Len(), s.fences})
		}
		appendEvents(t.q, b, i, j)
		s.queued += j - i
		if j == i+1 && (fresh || isFence(b, i)) {
			s.fences++
			s.fenceQ = append(s.fenceQ, t)
		}
		i = j
		s.drain(false)
	}
}

// pushInOrder runs b's events in the traced order (InterleaveTrace): a run
// of one thread's events at a time, each fence on its own.
func (s *scheduler) pushInOrder(b *trace.Batch) {
	n := b.Len()
	for i := 0; i < n; {
		t, _ := s.thread(b.Thread[i])
		s.last = t
		j := i + 1
		if !isFence(b, i) {
			for j < n && b.Thread[j] == t.tid && !isFence(b, j) {
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
// head of its queue that are of the current epoch, without its fence.
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
	hasEvents := func(t *sthread) bool { return s.avail(t) > 0 }
	for s.queued > 0 {
		var t *sthread
		if s.cur < s.fences || final {
			// Every event of the epoch has been read.
			if t = s.next(hasEvents); t == nil {
				t = s.fenceQ[0]
				s.fenceQ = s.fenceQ[1:]
				s.runQueued(t, 1)
				s.cur++
				continue
			}
		} else {
			t = s.next(func(t *sthread) bool { return !t.done })
			if t == nil || s.avail(t) == 0 {
				if s.queued < s.window {
					return // t may have more events of this epoch to come
				}
				t = s.next(hasEvents)
			}
		}
		s.runQueued(t, min(s.avail(t), s.quantum))
	}
}

// runQueued runs the n events at the head of t's queue.
func (s *scheduler) runQueued(t *sthread, n int) {
	s.runView(t, t.q, t.head, t.head+n)
	t.head += n
	s.queued -= n
	if t.head == t.q.Len() {
		// Empty: start again at the beginning; the next event read makes
		// its mark.
		t.q.Reset()
		t.head = 0
		t.marks, t.mark = t.marks[:0], 0
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
