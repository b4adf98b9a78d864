package sim

import (
	"context"
	"reflect"
	"testing"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/profile"
	"github.com/memspy/memspy/sample"
	"github.com/memspy/memspy/trace"
)

// warmupNumaTrace is worked out in TestWarmupNuma: threads 1 and 2 run on
// processors 0 and 1, at nodes 0 and 1.
func warmupNumaTrace() *trace.Batch {
	b := trace.NewBatch(0)
	b.AppendExt(trace.Marker, 0, 0, 1, trace.Ext{Mark: trace.MarkStart}) // thread 1 first, on processor 0
	for i, r := range []struct {
		k   trace.Kind
		a   uint64
		tid uint32
	}{
		{trace.Read, 0x10000, 2}, {trace.Read, 0x20000, 1}, // warm-up
		{trace.Read, 0x10020, 1}, {trace.Read, 0x10000, 1}, {trace.Write, 0x20000, 2}, {trace.Read, 0x20000, 1}, // sample
		{trace.Read, 0x50000, 1}, {trace.Read, 0x60000, 2}, // left out
		{trace.Read, 0x30000, 2}, {trace.Read, 0x40000, 1}, // warm-up
		{trace.Read, 0x30020, 1}, {trace.Read, 0x40020, 2}, {trace.Read, 0x30000, 1}, {trace.Read, 0x40000, 2}, // sample
	} {
		b.Append(r.k, r.a, 8, 0x400000+4*uint64(i), r.tid)
	}
	return b
}

// TestWarmupNuma works out the NUMA statistics of time samples with
// warm-ups: ratio=0.5,length=4,warmup=4 on 2 processors at 2 nodes
// (first touch), L1 of 4 sets of 32-byte lines: period 8, samples at
// [2, 6) and [10, 14), warm-ups at [0, 2) and [8, 10). Every warm-up
// reference misses locally and first touches its page, which the
// samples then miss remotely, some on lines the warm-up made warm. None
// of the warm-up's misses counts, under every monitor; the threads'
// clocks advance by the counted references only.
func TestWarmupNuma(t *testing.T) {
	m := numaMachine(t, 2, 2, machine.FirstTouch)
	spec, err := sample.Parse("ratio=0.5,length=4,warmup=4")
	if err != nil {
		t.Fatal(err)
	}
	// Sample 1: P0 reads 0x10020 (page homed at node 1 by P1's warm-up:
	// remote, cold) and 0x10000 (remote, warm: P1 missed it in the
	// warm-up); P1 writes 0x20000 (homed at node 0 by P0's warm-up:
	// remote, warm); P0 reads it back from P1's cache (remote-dirty).
	// Sample 2: P0 misses 0x30020 (cold) and 0x30000 (warm), P1 0x40020
	// (cold) and 0x40000 (warm), all remote.
	want := []profile.NumaEntry{
		{Name: "processor 0", NumaStats: profile.NumaStats{Remote: 4, RemoteDirty: 1, Cold: 2, Cycles: 4*200 + 300}},
		{Name: "processor 1", NumaStats: profile.NumaStats{Remote: 3, Cold: 1, Cycles: 3 * 200}},
	}
	for _, opt := range []Options{{}, {Attribute: true}, {Attribute: true, Monitor: MonitorProtocol}} {
		opt.Sample = spec
		p := numaProfile(t, m, opt, warmupNumaTrace())
		n := p.Numa
		if !reflect.DeepEqual(n.Processors, want) {
			t.Errorf("%+v: processors:\n got %+v\nwant %+v", opt, n.Processors, want)
		}
		for node, homed := range []uint64{2, 2} { // 0x20000 and 0x40000 at node 0
			if s := n.PerNode[node]; s.PagesHomed != homed || s.NumaStats != want[node].NumaStats {
				t.Errorf("%+v: node %d: %+v", opt, node, s)
			}
		}
		if !opt.Attribute {
			continue
		}
		var misses uint64
		for _, o := range n.Objects {
			misses += o.Misses()
		}
		// Pages 0x10000, 0x30000 and 0x40000 take all their counted
		// misses from the other node.
		if misses != 8 || len(n.Hints) != 3 {
			t.Errorf("%+v: %d misses by object, hints %+v", opt, misses, n.Hints)
		}
		for _, h := range n.Hints {
			if h.Misses != 2 || h.FromNode != 2 {
				t.Errorf("%+v: hint %+v: want 2 misses, both from node %d", opt, h, h.Node)
			}
		}
	}

	// The same run through the scheduler, in trace order: the threads run
	// the 8 counted references and stall for the cycles of their
	// misses, all to memory.
	h, err := New(m, Options{Sample: spec, Interleave: InterleaveTrace})
	if err != nil {
		t.Fatal(err)
	}
	if err := Run(context.Background(), h, &batchReader{b: warmupNumaTrace()}, nil); err != nil {
		t.Fatal(err)
	}
	h.Finish()
	p := h.Profile()
	if !reflect.DeepEqual(p.Numa.Processors, want) {
		t.Errorf("Run: processors:\n got %+v\nwant %+v", p.Numa.Processors, want)
	}
	if len(p.Threads) != 2 {
		t.Fatalf("threads %+v", p.Threads)
	}
	for _, th := range p.Threads {
		// Thread 1 counts 5 references, thread 2 3; each misses to
		// memory, at NUMA latencies (the processors' cycles above).
		want := map[uint32][2]uint64{1: {5, 1100}, 2: {3, 600}}[th.Thread]
		if th.Events != want[0] || th.StallCycles != want[1] || th.End-th.Start != th.ComputeCycles+th.StallCycles {
			t.Errorf("thread %+v: want %d events and %d stall cycles, all of its time", th, want[0], want[1])
		}
	}
}
