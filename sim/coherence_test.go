package sim_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/profile"
	"github.com/memspy/memspy/sim"
	"github.com/memspy/memspy/trace"
)

// on runs e on thread tid.
func on(tid uint32, e refEvent) refEvent {
	e.Thread = tid
	return e
}

// A worked example of the protocol on two processors with one private
// 4-line direct-mapped cache each (32-byte lines) and memory: every
// counter by hand.
func TestCoherenceWorked(t *testing.T) {
	m := mach(hc("L1", 1, 4, 1, 32, machine.LRU))
	m.Processors = 2
	events := []refEvent{
		on(1, rd(0x100, 8)), // P0: cold miss, E
		on(2, rd(0x108, 8)), // P1: cold miss, both S
		on(1, wr(0x100, 8)), // P0: upgrade, P1's copy invalidated: P1 used 0x108, P0 writes 0x100: false sharing
		on(2, rd(0x108, 8)), // P1: false-sharing miss; P0 holds it dirty: intervention
		on(2, wr(0x100, 4)), // P1: upgrade, invalidates P0, which used 0x100: true sharing
		on(1, rd(0x100, 8)), // P0: true-sharing miss; P1 dirty: intervention
		on(1, wr(0x104, 4)), // P0: upgrade, invalidates P1, which used 0x100-0x103 and 0x108-0x10f: false (no miss follows)
		on(1, wr(0x104, 4)), // P0: hit in M, nothing else
		on(2, rd(0x140, 8)), // P1: cold miss, another line
		on(1, wr(0x140, 8)), // P0: write miss, invalidates P1's copy (used 0x140-0x147): true (no miss follows)
		on(2, rd(0x1c0, 8)), // P1: cold, different line
	}
	p := engineProfile(t, m, sim.Options{Attribute: true}, events, 0)
	want := []profile.ProcessorStats{
		{Processor: 0, Threads: []uint32{1}, Upgrades: 2, Interventions: 1, InvalidationsSent: 3, InvalidationsReceived: 1},
		{Processor: 1, Threads: []uint32{2}, Upgrades: 1, Interventions: 1, InvalidationsSent: 1, InvalidationsReceived: 3},
	}
	for i, w := range want {
		got := p.Processors[i]
		got.Caches = nil
		if got.Processor != w.Processor || got.Upgrades != w.Upgrades || got.Interventions != w.Interventions ||
			got.InvalidationsSent != w.InvalidationsSent || got.InvalidationsReceived != w.InvalidationsReceived ||
			len(got.Threads) != 1 || got.Threads[0] != w.Threads[0] {
			t.Errorf("processor %d: got %+v, want %+v", i, got, w)
		}
	}
	l1 := p.Caches[0]
	if l1.Invalidations != 4 || l1.TrueSharingMisses != 1 || l1.FalseSharingMisses != 1 {
		t.Errorf("L1: invalidations %d, true-sharing misses %d, false-sharing misses %d; want 4, 1, 1",
			l1.Invalidations, l1.TrueSharingMisses, l1.FalseSharingMisses)
	}
	if c := *l1.Causes; c.Invalidation != 2 || c.TrueSharing != 1 || c.FalseSharing != 1 {
		t.Errorf("L1 causes %+v, want 2 invalidations: 1 true, 1 false", c)
	}
	// The final flush writes P0's dirty lines (0x100 and 0x140) back.
	if l1.Writebacks != 2+2 {
		t.Errorf("L1 write-backs %d, want 2 interventions + 2 at the end", l1.Writebacks)
	}
	// Against the reference model too.
	if d := diffCase(t, m, sim.Options{}, events, 0); d != "" {
		t.Errorf("engine and reference differ:\n%s", d)
	}
}

// Four threads incrementing adjacent counters of one heap block, their
// increments interleaved one by one, on four processors: the counters'
// invalidation misses are false sharing; padded to a line each, there are
// none.
func TestFalseSharingCounters(t *testing.T) {
	for _, padded := range []bool{false, true} {
		stride := uint64(8)
		if padded {
			stride = 64
		}
		m := mach(hc("L1D", 1, 64, 2, 64, machine.LRU))
		m.Processors = 4
		events := []refEvent{on(0, refEvent{Kind: trace.Alloc, Addr: 0x10000, Ext: trace.Ext{Size: 4 * stride, Stack: []uint64{0x400100}}})}
		for range 1000 {
			for tid := range uint32(4) {
				events = append(events, on(tid, mod(0x10000+uint64(tid)*stride, 8)))
			}
		}
		p := engineProfile(t, m, sim.Options{Attribute: true}, events, 0)
		var counts *profile.Object
		for i := range p.Objects {
			if p.Objects[i].Name == "heap@0x400100" {
				counts = &p.Objects[i]
			}
		}
		if counts == nil {
			t.Fatalf("padded %v: no object for the counters in %+v", padded, p.Objects)
		}
		c := counts.Causes
		t.Logf("padded %v: %d invalidation misses, %d false sharing, %d true", padded, c.Invalidation, c.FalseSharing, c.TrueSharing)
		switch {
		case !padded && (c.Invalidation < 3000 || c.FalseSharing*10 < c.Invalidation*9):
			t.Errorf("adjacent counters: %d invalidation misses, %d false sharing; want most of ~4000 false", c.Invalidation, c.FalseSharing)
		case padded && c.Invalidation != 0:
			t.Errorf("padded counters: %d invalidation misses, want 0", c.Invalidation)
		}
	}
}

// Who invalidates whom, by hand: two heap blocks of different allocation
// sites, each allocated by the thread that writes it, share a 32-byte
// line on two processors.
func TestInvalidatedByWorked(t *testing.T) {
	m := mach(hc("L1", 1, 4, 1, 32, machine.LRU))
	m.Processors = 2
	alloc := func(tid uint32, a, site uint64) refEvent {
		return on(tid, refEvent{Kind: trace.Alloc, Addr: a, Ext: trace.Ext{Size: 16, Stack: []uint64{site}}})
	}
	events := []refEvent{
		alloc(1, 0x1000, 0x400100), // A, on P0
		alloc(2, 0x1010, 0x400200), // B, on P1
		on(1, wr(0x1000, 8)),       // P0: cold miss, a fill for A
		on(2, wr(0x1010, 8)),       // P1: cold miss; invalidates P0's copy (A's fill; P0 used only A's bytes): false, neighbour
		on(1, wr(0x1000, 8)),       // P0: invalidates P1's copy (B's fill): false, neighbour
		on(2, rd(0x1000, 8)),       // P1: miss, a fill for A; P0 supplies it
		on(1, wr(0x1004, 4)),       // P0: upgrade; invalidates P1's copy (A's fill; P1 used 0x1000-0x1007): true
	}
	p := engineProfile(t, m, sim.Options{Attribute: true}, events, 0)
	objs := map[string]*profile.Object{}
	for i := range p.Objects {
		objs[p.Objects[i].Name] = &p.Objects[i]
	}
	a, b := objs["heap@0x400100"], objs["heap@0x400200"]
	if a == nil || b == nil {
		t.Fatalf("objects %v", objs)
	}
	check := func(what string, got, want []profile.Sharing) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s: got %+v, want %+v", what, got, want)
		}
	}
	check("A invalidated by", a.InvalidatedBy, []profile.Sharing{{Object: "heap@0x400100", Processor: 0, Lines: 1, FalseSharing: 0}, {Object: "heap@0x400200", Processor: 1, Lines: 1, FalseSharing: 1}})
	check("A invalidated", a.Invalidated, []profile.Sharing{{Object: "heap@0x400100", Processor: 1, Lines: 1, FalseSharing: 0}, {Object: "heap@0x400200", Processor: 1, Lines: 1, FalseSharing: 1}})
	check("B invalidated by", b.InvalidatedBy, []profile.Sharing{{Object: "heap@0x400100", Processor: 0, Lines: 1, FalseSharing: 1}})
	check("B invalidated", b.Invalidated, []profile.Sharing{{Object: "heap@0x400100", Processor: 0, Lines: 1, FalseSharing: 1}})
	wantA := []profile.SharingWrite{
		{Processor: 0, Offset: 0, Size: 8, Copies: 1, FalseSharing: 1, Neighbour: 1, OwnBlock: true},
		{Processor: 0, Offset: 4, Size: 4, Copies: 1, OwnBlock: true},
	}
	if !slices.Equal(a.SharingWrites, wantA) {
		t.Errorf("A's sharing writes %+v, want %+v", a.SharingWrites, wantA)
	}
	wantB := []profile.SharingWrite{{Processor: 1, Offset: 0, Size: 8, Copies: 1, FalseSharing: 1, Neighbour: 1, OwnBlock: true}}
	if !slices.Equal(b.SharingWrites, wantB) {
		t.Errorf("B's sharing writes %+v, want %+v", b.SharingWrites, wantB)
	}
	// The invalidations each processor received add up to the lines the
	// objects lost.
	var lost uint64
	for _, o := range []*profile.Object{a, b} {
		for _, s := range o.InvalidatedBy {
			lost += s.Lines
		}
	}
	if recv := p.Processors[0].InvalidationsReceived + p.Processors[1].InvalidationsReceived; lost != recv {
		t.Errorf("objects lost %d lines, processors received %d invalidations", lost, recv)
	}
}

// A processor takes a line dirty from an exclusive shared cache while
// another holds it clean, its hit bypass armed on it: that one's next
// read must still get the intervention (docs/semantics.md, "Several
// processors"). Two processors, a private 1-line L1 each, a shared
// exclusive 4-way L2; A = 0x00, B = 0x10.
func TestCoherenceDirtyFromExclusive(t *testing.T) {
	l2 := with(hc("L2", 2, 1, 4, 16, machine.LRU), func(c *machine.Cache) { c.Inclusion, c.Shared = machine.Exclusive, true })
	m := mach(hc("L1", 1, 1, 1, 16, machine.LRU), l2)
	m.Processors = 2
	events := []refEvent{
		on(1, rd(0x00, 4)),   // P0: miss, passes L2 (miss) to memory; P0 [A]
		on(2, rd(0x00, 4)),   // P1: the same; P1 [A]
		on(1, rd(0x10, 4)),   // P0: miss, evicts A into L2 [A]; B from memory; P0 [B]
		on(2, wr(0x00, 4)),   // P1: hit (P0's directory bit is stale), P1 [A*]: its bypass is armed on A
		on(1, rd(0x00, 4)),   // P0: intervention from P1 writes A into L2 [A*]; P0 evicts B into L2, takes A* up: P0 [A*], P1 [A]
		on(2, rd(0x00, 4)),   // P1: hit, but P0 holds A dirty: intervention, a write miss of L2 that goes to memory
		on(2, inv(0x00, 16)), // drops the clean copies: without that intervention P1's write would be lost here
	}
	p := engineProfile(t, m, sim.Options{}, events, 0)
	for i, want := range []uint64{1, 1} {
		if got := p.Processors[i].Interventions; got != want {
			t.Errorf("processor %d: %d interventions, want %d", i, got, want)
		}
	}
	l1 := profile.CacheStats{Name: "L1", Level: 1, Accesses: 6, Misses: 4, Reads: 5, Writes: 1, ReadMisses: 4,
		Evictions: 2, Writebacks: 2, BytesFromBelow: 64, BytesToBelow: 64}
	l2s := profile.CacheStats{Name: "L2", Level: 2, Accesses: 6, Misses: 4, Reads: 4, Writes: 2, ReadMisses: 3, WriteMisses: 1,
		BytesFromBelow: 48, BytesToBelow: 16}
	mem := profile.MemoryStats{Reads: 3, Writes: 1, BytesRead: 48, BytesWritten: 16}
	if d := cmp.Diff([]profile.CacheStats{l1, l2s}, p.Caches); d != "" {
		t.Errorf("caches (-want +got):\n%s", d)
	}
	if p.Memory != mem {
		t.Errorf("memory %+v, want %+v", p.Memory, mem)
	}
	if d := diffCase(t, m, sim.Options{}, events, 0); d != "" {
		t.Errorf("engine and reference differ:\n%s", d)
	}
}
