package sim

import (
	"context"
	"slices"
	"testing"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/profile"
	"github.com/memspy/memspy/trace"
)

// syncMachine has n processors with a private 4-line direct-mapped cache
// each (32-byte lines) and memory at 100 cycles.
func syncMachine(t *testing.T, n int) *machine.Machine {
	m := &machine.Machine{Name: "hand", MemoryLatency: 100, Processors: n, Caches: []machine.Cache{{
		Name: "L1", Level: 1, Size: 128, Sets: 4, Assoc: 1, Line: 32, Replacement: machine.LRU,
		WriteBack: true, WriteAllocate: true, Holds: machine.Unified, Inclusion: machine.NonInclusive, Latency: 1}}}
	if err := m.Normalize(); err != nil {
		t.Fatal(err)
	}
	return m
}

// timed runs b through Run on m in both interleavings, checks that they
// agree on the threads and synchronization objects, and returns them.
func timed(t *testing.T, m *machine.Machine, b *trace.Batch) ([]profile.ThreadStats, []profile.SyncObject) {
	t.Helper()
	var threads []profile.ThreadStats
	var objs []profile.SyncObject
	for _, mode := range []Interleave{InterleaveTrace, InterleaveClock} {
		h, err := New(m, Options{Interleave: mode})
		if err != nil {
			t.Fatal(err)
		}
		if err := Run(context.Background(), h, &batchReader{b: b}, nil); err != nil {
			t.Fatal(err)
		}
		h.Finish()
		p := h.Profile()
		if mode == InterleaveTrace {
			threads, objs = p.Threads, p.Sync
			continue
		}
		if !slices.Equal(p.Threads, threads) || !slices.Equal(p.Sync, objs) {
			t.Errorf("clock interleaving: threads %+v, sync %+v;\ntrace order: threads %+v, sync %+v", p.Threads, p.Sync, threads, objs)
		}
	}
	return threads, objs
}

func syncEv(b *trace.Batch, tid uint32, k trace.SyncKind, a, size uint64) {
	b.AppendExt(trace.Sync, a, 0x400000, tid, trace.Ext{Sync: k, Size: size})
}

func reads(b *trace.Batch, tid uint32, a uint64, n int) {
	for range n {
		b.Append(trace.Read, a, 8, 0x400100, tid)
	}
}

// A lock handed from one thread to another, and a join, worked by hand
// (one cycle per reference, 100 per miss).
func TestSyncTimeLockJoin(t *testing.T) {
	b := trace.NewBatch(0)
	syncEv(b, 1, trace.SyncCreate, 1, 0)      // T1 at 0
	syncEv(b, 2, trace.SyncStart, 1, 7)       // T2 starts at T1's clock, 0
	syncEv(b, 1, trace.SyncAcquire, 0x500, 0) // free: no wait
	reads(b, 1, 0x100, 1000)                  // T1: 1000 + one miss = 1100
	syncEv(b, 1, trace.SyncRelease, 0x500, 0) // released at 1100
	syncEv(b, 2, trace.SyncAcquire, 0x500, 0) // T2 waits 0 → 1100
	reads(b, 2, 0x200, 500)                   // T2: 1100 + 500 + 100 = 1700
	syncEv(b, 2, trace.SyncRelease, 0x500, 0)
	syncEv(b, 2, trace.SyncExit, 7, 0) // T2 ends at 1700
	syncEv(b, 1, trace.SyncJoin, 7, 0) // T1 waits 1100 → 1700
	threads, objs := timed(t, syncMachine(t, 2), b)
	want := []profile.ThreadStats{
		{Thread: 1, Processor: 0, Events: 1000, ComputeCycles: 1000, StallCycles: 100, SyncCycles: 600, Start: 0, End: 1700},
		{Thread: 2, Processor: 1, Events: 500, ComputeCycles: 500, StallCycles: 100, SyncCycles: 1100, Start: 0, End: 1700},
	}
	if !slices.Equal(threads, want) {
		t.Errorf("threads:\n got %+v\nwant %+v", threads, want)
	}
	wantObjs := []profile.SyncObject{
		{Name: "0x500", Addr: 0x500, Kind: "lock", Operations: 2, Waits: 1, WaitCycles: 1100},
		{Name: "thread 2", Addr: 2, Kind: "join", Operations: 1, Waits: 1, WaitCycles: 600},
	}
	if !slices.Equal(objs, wantObjs) {
		t.Errorf("sync objects:\n got %+v\nwant %+v", objs, wantObjs)
	}
}

// Two episodes of a barrier, the first thread arriving at the second
// before the others have left the first.
func TestSyncTimeBarrier(t *testing.T) {
	const bar = 0x700
	b := trace.NewBatch(0)
	syncEv(b, 1, trace.SyncCreate, 1, 0)
	syncEv(b, 2, trace.SyncStart, 1, 0)
	syncEv(b, 1, trace.SyncCreate, 2, 0)
	syncEv(b, 3, trace.SyncStart, 2, 0)
	reads(b, 1, 0x100, 100) // T1 200
	reads(b, 2, 0x200, 200) // T2 300
	reads(b, 3, 0x300, 300) // T3 400
	for tid := uint32(1); tid <= 3; tid++ {
		syncEv(b, tid, trace.SyncBarrierArrive, bar, 3) // episode 0: last arrival at 400
	}
	syncEv(b, 1, trace.SyncBarrierLeave, bar, 0)  // T1 waits 200 → 400
	reads(b, 1, 0x100, 50)                        // T1 450
	syncEv(b, 1, trace.SyncBarrierArrive, bar, 3) // episode 1
	syncEv(b, 2, trace.SyncBarrierLeave, bar, 0)  // T2 waits 100 → 400
	syncEv(b, 3, trace.SyncBarrierLeave, bar, 0)  // T3 does not wait
	reads(b, 2, 0x200, 10)                        // T2 410
	syncEv(b, 2, trace.SyncBarrierArrive, bar, 3)
	syncEv(b, 3, trace.SyncBarrierArrive, bar, 3) // T3 400; episode 1's last arrival at 450
	for tid := uint32(1); tid <= 3; tid++ {
		syncEv(b, tid, trace.SyncBarrierLeave, bar, 0) // T1 0, T2 40, T3 50
	}
	threads, objs := timed(t, syncMachine(t, 3), b)
	var got []uint64
	for _, th := range threads {
		got = append(got, th.SyncCycles, th.End)
	}
	if want := []uint64{200, 450, 140, 450, 50, 450}; !slices.Equal(got, want) {
		t.Errorf("sync cycles and ends by thread = %v, want %v", got, want)
	}
	want := []profile.SyncObject{{Name: "0x700", Addr: bar, Kind: "barrier", Operations: 6, Waits: 4, WaitCycles: 390}}
	if !slices.Equal(objs, want) {
		t.Errorf("sync objects:\n got %+v\nwant %+v", objs, want)
	}
}
