package sim

import (
	"context"
	"io"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/profile"
	"github.com/memspy/memspy/trace"
)

// genThreads returns a multi-thread trace in the traced order: events of
// up to 5 threads in runs of random length, with synchronization events on
// a few objects among them (some of them exits). Each event's PC is its
// position in the trace.
func genThreads(rng *rand.Rand, n int) *trace.Batch {
	b := trace.NewBatch(n)
	threads := 1 + rng.IntN(5)
	exited, seen := map[uint32]bool{}, map[uint32]bool{}
	tid := uint32(1)
	for b.Len() < n {
		if rng.IntN(4) == 0 {
			tid = uint32(1 + rng.IntN(threads))
		}
		if exited[tid] {
			continue
		}
		i := uint64(b.Len())
		obj := func() uint64 { return 0x500 + 8*uint64(rng.IntN(4)) }
		if creator := 1 + tid%uint32(threads); !seen[tid] && !exited[creator] && rng.IntN(2) == 0 {
			// Started by a create of another thread.
			b.AppendExt(trace.Sync, 0x900, i, creator, trace.Ext{Sync: trace.SyncCreate})
			b.AppendExt(trace.Sync, 0x900, i+1, tid, trace.Ext{Sync: trace.SyncStart})
			seen[creator], seen[tid] = true, true
			continue
		}
		seen[tid] = true
		switch r := rng.IntN(100); {
		case r < 6:
			k := trace.SyncKind(rng.IntN(int(trace.SyncAtomic) + 1))
			if k == trace.SyncExit {
				k = trace.SyncAtomic // a thread's exit ends it: below
			}
			b.AppendExt(trace.Sync, obj(), i, tid, trace.Ext{Sync: k, Size: obj()})
		case r < 7 && len(exited) < threads-1:
			b.AppendExt(trace.Sync, uint64(tid), i, tid, trace.Ext{Sync: trace.SyncExit})
			exited[tid] = true
		case r < 9:
			b.AppendExt(trace.Call, 0x400000, i, tid, trace.Ext{SP: 0x1000})
		default:
			b.Append(trace.Kind(rng.IntN(3)), 0x1000+8*uint64(rng.IntN(64)), 8, i, tid)
		}
	}
	return b
}

// interleaved runs in through a scheduler whose runs advance the thread's
// clock by a random number of cycles per event (an exit marks the thread
// done), fed in batches of random sizes, and returns the events in the
// order run, checking that each run is of one thread and that a
// synchronization event runs alone.
func interleaved(t *testing.T, rng *rand.Rand, in *trace.Batch, mode Interleave, quantum, window int) *trace.Batch {
	out := trace.NewBatch(in.Len())
	var s *scheduler
	s = newScheduler(mode, quantum, window, func(th *sthread, b *trace.Batch) {
		for i := range b.Len() {
			if b.Thread[i] != th.tid {
				t.Fatalf("a run of thread %d holds an event of thread %d", th.tid, b.Thread[i])
			}
			if b.Kind[i] == trace.Sync && b.Len() != 1 {
				t.Fatalf("a synchronization event runs with %d other events", b.Len()-1)
			}
			if b.Kind[i] == trace.Sync && b.ExtOf(i).Sync == trace.SyncExit {
				th.done = true
			}
			th.clock += 1 + uint64(rng.IntN(50))
		}
		if mode == InterleaveClock && b.Len() > quantum {
			t.Fatalf("a run of %d events, quantum %d", b.Len(), quantum)
		}
		for i := range b.Len() {
			out.AppendEvent(b, i)
		}
	})
	for i := 0; i < in.Len(); {
		j := min(in.Len(), i+1+rng.IntN(300))
		part := trace.NewBatch(j - i)
		for k := i; k < j; k++ {
			part.AppendEvent(in, k)
		}
		s.push(part)
		if s.queued > window+part.Len() {
			t.Fatalf("%d events held back, window %d", s.queued, window)
		}
		i = j
	}
	s.finish()
	return out
}

// TestSchedulerOrder checks the interleaving's guarantees on random
// traces: every event runs once; each thread's events keep their order,
// and so do the synchronization events on each object; an event precedes
// a thread's first event (unless it is a start event) in the output
// exactly when it does in the trace.
func TestSchedulerOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for iter := range 300 {
		in := genThreads(rng, 1+rng.IntN(3000))
		mode := InterleaveClock
		if iter%5 == 0 {
			mode = InterleaveTrace
		}
		quantum, window := 1+rng.IntN(40), 1+rng.IntN(2000)
		out := interleaved(t, rng, in, mode, quantum, window)
		if out.Len() != in.Len() {
			t.Fatalf("iteration %d: %d events in, %d out", iter, in.Len(), out.Len())
		}
		pos := make([]int, in.Len()) // input position → output position
		seen := make([]bool, in.Len())
		for o, id := range out.PC {
			if seen[id] {
				t.Fatalf("iteration %d: event %d runs twice", iter, id)
			}
			seen[id], pos[id] = true, o
		}
		if mode == InterleaveTrace && !slices.Equal(out.PC, in.PC) {
			t.Fatalf("iteration %d: --interleave trace changed the order", iter)
		}
		lastOf := map[uint32]int{}
		lastOn := map[syncObject]int{}
		var fences []int
		for i := range in.Len() {
			tid := in.Thread[i]
			p, ok := lastOf[tid]
			if ok && pos[i] < p {
				t.Fatalf("iteration %d: thread %d's event %d runs before its predecessor", iter, tid, i)
			}
			if !ok && !isStart(in, i) {
				fences = append(fences, i)
			}
			lastOf[tid] = pos[i]
			if in.Kind[i] == trace.Sync {
				objs, n := syncObjects(in.Addr[i], in.ExtOf(i))
				for _, o := range objs[:n] {
					if p, ok := lastOn[o]; ok && pos[i] < p {
						t.Fatalf("iteration %d: synchronization event %d on %v runs before an earlier one on it", iter, i, o)
					}
					lastOn[o] = pos[i]
				}
			}
			if in.Kind[i].IsExtended() && !extSame(in.ExtOf(i), out.ExtOf(pos[i])) {
				t.Fatalf("iteration %d: event %d's Ext changed", iter, i)
			}
		}
		for _, f := range fences {
			for i := range in.Len() {
				if (i < f) != (pos[i] < pos[f]) {
					t.Fatalf("iteration %d (quantum %d, window %d): event %d (thread %d) crosses thread %d's first event %d",
						iter, quantum, window, i, in.Thread[i], in.Thread[f], f)
				}
			}
		}
	}
}

func extSame(a, b *trace.Ext) bool {
	return a.Sync == b.Sync && a.SP == b.SP && a.Size == b.Size
}

// TestSchedulerQuanta: two threads traced one after the other, with no
// synchronization, run in alternating quanta when their clocks advance
// alike.
func TestSchedulerQuanta(t *testing.T) {
	in := trace.NewBatch(0)
	in.Append(trace.Read, 0, 8, 0, 1)
	in.Append(trace.Read, 1, 8, 0, 2)
	for tid := uint32(1); tid <= 2; tid++ {
		for range 99 {
			in.Append(trace.Read, uint64(in.Len()), 8, 0, tid)
		}
	}
	var runs []int
	s := newScheduler(InterleaveClock, 10, 0, func(th *sthread, b *trace.Batch) {
		th.clock += uint64(b.Len())
		runs = append(runs, int(th.tid)*1000+b.Len())
	})
	s.push(in)
	s.finish()
	// The first events are fences; then thread 2, whose clock starts at
	// thread 1's, and thread 1 alternate.
	want := []int{1001, 2001}
	for range 9 {
		want = append(want, 1010, 2010)
	}
	want = append(want, 1009, 2009)
	if !slices.Equal(runs, want) {
		t.Errorf("runs (thread*1000 + events) = %v, want %v", runs, want)
	}
}

// falseSharingTrace has threads 1..n each write their own 8-byte counter,
// all in one 64-byte line, count times: traced one thread after another
// after all have started, as Valgrind's long time slices do.
func falseSharingTrace(n, count int, stride uint64) *trace.Batch {
	b := trace.NewBatch(0)
	for tid := uint32(1); tid <= uint32(n); tid++ {
		b.Append(trace.Read, 0x9000, 8, 0, tid) // each thread's first event
	}
	for tid := uint32(1); tid <= uint32(n); tid++ {
		for range count {
			b.Append(trace.Modify, 0x1000+stride*uint64(tid-1), 8, 0, tid)
		}
	}
	return b
}

// TestInterleaveFalseSharing: re-interleaved by their clocks, threads that
// write neighbouring counters invalidate each other's line, all false
// sharing; in the traced order (long slices) they hardly do; padded, not
// at all.
func TestInterleaveFalseSharing(t *testing.T) {
	run := func(mode Interleave, stride uint64) (inv, falseMiss, trueMiss uint64) {
		m, err := machine.Preset("memspy-par")
		if err != nil {
			t.Fatal(err)
		}
		m.Processors = 4
		if err := m.Normalize(); err != nil {
			t.Fatal(err)
		}
		h, err := New(m, Options{Interleave: mode, Quantum: 20})
		if err != nil {
			t.Fatal(err)
		}
		if err := Run(context.Background(), h, &batchReader{b: falseSharingTrace(4, 2000, stride)}, nil); err != nil {
			t.Fatal(err)
		}
		h.Finish()
		c := h.Profile().Caches[0]
		return c.Invalidations, c.FalseSharingMisses, c.TrueSharingMisses
	}
	inv, f, tr := run(InterleaveClock, 8)
	// 8000 writes in quanta of 20: a quantum begins with a miss.
	if inv < 300 || f < inv*9/10 || tr != 0 {
		t.Errorf("clock, adjacent: %d invalidations, %d false and %d true sharing misses; want ≥ 300, ≥ 90%% false, no true", inv, f, tr)
	}
	if inv, _, _ := run(InterleaveTrace, 8); inv > 10 {
		t.Errorf("trace order, adjacent: %d invalidations, want ≤ 10", inv)
	}
	if inv, _, _ := run(InterleaveClock, 64); inv != 0 {
		t.Errorf("clock, padded: %d invalidations, want 0", inv)
	}
}

// batchReader reads one batch.
type batchReader struct {
	b    *trace.Batch
	done bool
}

func (r *batchReader) Read(b *trace.Batch) error {
	b.Reset()
	if r.done {
		return io.EOF
	}
	for i := range r.b.Len() {
		b.AppendEvent(r.b, i)
	}
	r.done = true
	return nil
}

func (r *batchReader) Format() string { return "test" }

// TestRunInTraceOrder: on several processors, Run with InterleaveTrace
// counts what Process counts on the whole trace.
func TestRunInTraceOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for range 20 {
		in := genThreads(rng, 2000)
		for i := range in.Len() {
			if in.Kind[i].IsAccess() {
				in.Addr[i] = 0x1000 + uint64(rng.IntN(64))*8
			}
		}
		var got [2]*profile.Profile
		for j := range got {
			h, err := New(syncMachine(t, 3), Options{Interleave: InterleaveTrace})
			if err != nil {
				t.Fatal(err)
			}
			if j == 0 {
				h.Process(in)
			} else if err := Run(context.Background(), h, &batchReader{b: in}, nil); err != nil {
				t.Fatal(err)
			}
			h.Finish()
			got[j] = h.Profile()
		}
		if !reflect.DeepEqual(got[0].Caches, got[1].Caches) || !reflect.DeepEqual(got[0].Processors, got[1].Processors) {
			t.Fatalf("Process: %+v\nRun: %+v", got[0].Caches, got[1].Caches)
		}
	}
}

// TestSchedulerAfterExit: a thread's synchronization events after its exit
// are dropped and order no one, while its other events still run; a
// thread started again with the same id synchronizes again.
func TestSchedulerAfterExit(t *testing.T) {
	const word = 0x600
	in := trace.NewBatch(0)
	add := func(tid uint32, k trace.SyncKind, addr uint64) {
		in.AppendExt(trace.Sync, addr, uint64(in.Len()), tid, trace.Ext{Sync: k})
	}
	add(1, trace.SyncCreate, 0x900)
	add(2, trace.SyncStart, 0x900)
	for range 500 {
		in.Append(trace.Write, 0x1000, 8, uint64(in.Len()), 2)
	}
	add(2, trace.SyncExit, 2)
	add(2, trace.SyncAtomic, word) // the exit path: dropped
	in.Append(trace.Modify, word, 8, uint64(in.Len()), 2)
	add(1, trace.SyncAtomic, word) // need not wait for thread 2's
	in.Append(trace.Modify, word, 8, uint64(in.Len()), 1)
	add(1, trace.SyncCreate, 0x908)
	add(2, trace.SyncStart, 0x908) // the id again: a new thread
	add(2, trace.SyncAtomic, word)
	for _, mode := range []Interleave{InterleaveClock, InterleaveTrace} {
		out := interleaved(t, rand.New(rand.NewPCG(1, 2)), in, mode, 10, 1000)
		var atomics []uint64
		for i := range out.Len() {
			if out.Kind[i] == trace.Sync && out.ExtOf(i).Sync == trace.SyncAtomic {
				atomics = append(atomics, out.PC[i])
			}
		}
		if want := []uint64{505, 509}; !slices.Equal(atomics, want) && !slices.Equal(atomics, []uint64{509, 505}) || len(atomics) != 2 {
			t.Errorf("%v: atomics run %v, want those at %v (not 503, after thread 2's exit)", mode, atomics, want)
		}
		if out.Len() != in.Len()-1 {
			t.Errorf("%v: %d events run of %d, want all but the dropped one", mode, out.Len(), in.Len())
		}
	}
}
