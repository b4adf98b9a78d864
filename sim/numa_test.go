package sim

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/profile"
	"github.com/memspy/memspy/trace"
)

// numaMachine is syncMachine with its processors in nodes nodes: memory
// at 100 cycles locally, 200 remotely, 300 dirty at another node.
func numaMachine(t *testing.T, procs, nodes int, placement machine.Placement) *machine.Machine {
	m := syncMachine(t, procs)
	m.Nodes, m.Placement, m.PageSize = nodes, placement, 4096
	m.RemoteLatency, m.RemoteDirtyLatency = 200, 300
	if err := m.Normalize(); err != nil {
		t.Fatal(err)
	}
	return m
}

func numaProfile(t *testing.T, m *machine.Machine, opt Options, b *trace.Batch) *profile.Profile {
	t.Helper()
	h, err := New(m, opt)
	if err != nil {
		t.Fatal(err)
	}
	h.Process(b)
	h.Finish()
	return h.Profile()
}

// Local, remote and remote-dirty misses on two nodes, worked by hand.
func TestNumaWorked(t *testing.T) {
	b := trace.NewBatch(0)
	b.Append(trace.Read, 0x10000, 8, 0x400000, 1)  // P0: page 0x10 homed at node 0: local, cold
	b.Append(trace.Read, 0x10020, 8, 0x400004, 2)  // P1: same page, another line: remote, cold
	b.Append(trace.Read, 0x10000, 8, 0x400008, 2)  // P1: P0's line: remote (clean), warm
	b.Append(trace.Write, 0x20000, 8, 0x40000c, 2) // P1: page 0x20 homed at node 1: local, cold
	b.Append(trace.Read, 0x20000, 8, 0x400010, 1)  // P0: P1 holds it dirty: remote-dirty, warm
	p := numaProfile(t, numaMachine(t, 2, 2, machine.FirstTouch), Options{}, b)
	n := p.Numa
	if n == nil {
		t.Fatal("no NUMA statistics")
	}
	want := []profile.NumaEntry{
		{Name: "processor 0", NumaStats: profile.NumaStats{Local: 1, RemoteDirty: 1, Cold: 1, Cycles: 400}},
		{Name: "processor 1", NumaStats: profile.NumaStats{Local: 1, Remote: 2, Cold: 2, Cycles: 500}},
	}
	if !reflect.DeepEqual(n.Processors, want) {
		t.Errorf("processors:\n got %+v\nwant %+v", n.Processors, want)
	}
	if n.PerNode[0].PagesHomed != 1 || n.PerNode[1].PagesHomed != 1 || n.PerNode[1].Remote != 2 {
		t.Errorf("nodes: %+v", n.PerNode)
	}
}

// Placement: interleave homes page k at node k mod nodes; round-robin
// homes pages in the order of their first miss.
func TestNumaPlacement(t *testing.T) {
	b := trace.NewBatch(0)
	for _, page := range []uint64{5, 2, 7, 4} {
		b.Append(trace.Read, page<<12, 8, 0, 1) // all from P0, node 0
	}
	for placement, wantLocal := range map[machine.Placement]uint64{
		machine.Interleave:      2, // pages 2 and 4
		machine.PlaceRoundRobin: 2, // the first and third touched
		machine.FirstTouch:      4,
	} {
		p := numaProfile(t, numaMachine(t, 2, 2, placement), Options{}, b)
		if got := p.Numa.Processors[0].Local; got != wantLocal {
			t.Errorf("%s: %d local misses, want %d", placement, got, wantLocal)
		}
	}
}

// TestNumaProtocolMonitor: on random multi-thread traces with heap blocks
// allocated, freed and allocated again, protocol monitoring (bins kept in
// the directory) gives the per-bin misses of full monitoring (--where).
func TestNumaProtocolMonitor(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for iter := range 40 {
		b := trace.NewBatch(0)
		type block struct{ addr, size uint64 }
		var live []block
		next := uint64(0x100000)
		for range 3000 {
			tid := uint32(1 + rng.IntN(4))
			switch r := rng.IntN(100); {
			case r < 3 || len(live) == 0:
				size := uint64(32 * (1 + rng.IntN(300)))
				addr := next
				if rng.IntN(3) == 0 && len(live) == 0 {
					addr = 0x100000 // reuse freed memory
				}
				next = max(next, addr+size+32*uint64(rng.IntN(4)))
				live = append(live, block{addr, size})
				b.AppendExt(trace.Alloc, addr, uint64(0x400000+64*rng.IntN(8)), tid, trace.Ext{Size: size, Stack: []uint64{uint64(0x400000 + 64*rng.IntN(8))}, Name: "malloc"})
			case r < 5:
				i := rng.IntN(len(live))
				b.AppendExt(trace.Free, live[i].addr, 0x400100, tid, trace.Ext{Name: "free"})
				live = append(live[:i], live[i+1:]...)
			default:
				blk := live[rng.IntN(len(live))]
				a := blk.addr + 8*uint64(rng.IntN(int(blk.size/8)))
				b.Append(trace.Kind(rng.IntN(2)+int(trace.Read)), a, 8, uint64(0x400200+4*rng.IntN(16)), tid)
			}
		}
		m := numaMachine(t, 4, 2, machine.FirstTouch)
		full := numaProfile(t, m, Options{Attribute: true}, b)
		proto := numaProfile(t, m, Options{Attribute: true, Monitor: MonitorProtocol}, b)
		if !reflect.DeepEqual(full.Numa.Objects, proto.Numa.Objects) || !reflect.DeepEqual(full.Numa.Processors, proto.Numa.Processors) {
			t.Fatalf("iteration %d: per-bin NUMA misses differ:\nfull     %+v\nprotocol %+v", iter, full.Numa.Objects, proto.Numa.Objects)
		}
		if len(full.Numa.Objects) < 2 {
			t.Fatalf("iteration %d: only %d bins", iter, len(full.Numa.Objects))
		}
		// And they are the misses the full attribution counts at the
		// outermost cache.
		for _, o := range full.Numa.Objects {
			var misses uint64
			for _, fo := range full.Objects {
				if fo.Name == o.Name {
					misses = fo.Levels["L1"].Misses
				}
			}
			if misses != o.Misses() {
				t.Fatalf("iteration %d: %s: %d NUMA misses, %d misses at L1", iter, o.Name, o.Misses(), misses)
			}
		}
	}
}
