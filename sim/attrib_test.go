package sim_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"memspy/machine"
	"memspy/profile"
	"memspy/sim"
	"memspy/trace"
)

// A worked example of attribution: two heap arrays mapping to the same
// sets of a direct-mapped cache, referenced from two procedures; every
// cause of a miss, freed memory, a stack frame and unknown memory.
func TestAttributionWorked(t *testing.T) {
	m := mach(hc("L1", 1, 4, 1, 64, machine.LRU))
	alloc := func(a, size, site uint64) refEvent {
		return refEvent{Kind: trace.Alloc, Addr: a, Ext: trace.Ext{Size: size, Stack: []uint64{site}, Name: "malloc"}}
	}
	call := func(entry, sp uint64) refEvent {
		return refEvent{Kind: trace.Call, Addr: entry, Ext: trace.Ext{SP: sp}}
	}
	ret := func(sp uint64) refEvent { return refEvent{Kind: trace.Return, Ext: trace.Ext{SP: sp}} }
	events := []refEvent{
		alloc(0x10000, 256, 0xa00), // A
		alloc(0x20000, 256, 0xb00), // B: the same sets as A
		call(0xf00, 0x7000),        // f
		rd(0x10000, 8),             // f×A cold
		rd(0x10008, 8),             // f×A hit
		rd(0x20000, 8),             // f×B cold, evicts A
		call(0x600, 0x6f00),        // g
		rd(0x10000, 8),             // g×A replacement, evicts B
		inv(0x10000, 64),           // A's line invalidated
		rd(0x10000, 8),             // g×A invalidation
		rd(0x10008, 8),             // g×A hit
		ret(0x6f08),                // back in f
		rd(0x10010, 8),             // f×A hit
		{Kind: trace.Free, Addr: 0x10000},
		rd(0x10040, 8),    // f×<freed> cold
		rd(0x6ff0, 8),     // f×locals@f cold
		rd(0x99999999, 8), // f×<other> cold
	}
	h, err := sim.New(m, sim.Options{Attribute: true})
	if err != nil {
		t.Fatal(err)
	}
	b := trace.NewBatch(64)
	for _, e := range events {
		if e.Kind.IsExtended() {
			b.AppendExt(e.Kind, e.Addr, 0, 1, e.Ext)
		} else {
			b.Append(e.Kind, e.Addr, e.Size, 0, 1)
		}
	}
	h.Process(b)
	h.Finish()
	p := h.Profile()
	checkAttribution(t, p)
	a := p.Attribution
	procs := []profile.Proc{{Name: "<unknown>"}, {Name: "0xf00", Entry: 0xf00}, {Name: "0x600", Entry: 0x600}}
	if d := cmp.Diff(procs, a.Procs); d != "" {
		t.Errorf("procs (-want +got):\n%s", d)
	}
	bins := []profile.Bin{
		{Kind: "other", Name: "<other>"}, {Kind: "freed", Name: "<freed>"},
		{Kind: "heap", Name: "heap@0xa00", Site: []uint64{0xa00}, Blocks: 1, Bytes: 256},
		{Kind: "heap", Name: "heap@0xb00", Site: []uint64{0xb00}, Blocks: 1, Bytes: 256},
		{Kind: "stack", Name: "locals@0xf00"},
	}
	if d := cmp.Diff(bins, a.Bins); d != "" {
		t.Errorf("bins (-want +got):\n%s", d)
	}
	const f, g, other, freed, binA, binB, stack = 1, 2, 0, 1, 2, 3, 4
	want := profile.CacheAttribution{
		Name: "L1", Cold: 5, Replacement: 1, Invalidation: 1,
		Pairs: []profile.PairStats{
			{Proc: g, Bin: binA, Reads: 3, ReadMisses: 2, Replacement: 1, Invalidation: 1},
			{Proc: f, Bin: binA, Reads: 3, ReadMisses: 1, Cold: 1},
			{Proc: f, Bin: other, Reads: 1, ReadMisses: 1, Cold: 1},
			{Proc: f, Bin: freed, Reads: 1, ReadMisses: 1, Cold: 1},
			{Proc: f, Bin: binB, Reads: 1, ReadMisses: 1, Cold: 1},
			{Proc: f, Bin: stack, Reads: 1, ReadMisses: 1, Cold: 1},
		},
		Evictors: []profile.Evictor{{Victim: binA, By: binB, Evictions: 1}, {Victim: binB, By: binA, Evictions: 1}},
	}
	if d := cmp.Diff(want, a.Caches[0]); d != "" {
		t.Errorf("L1 attribution (-want +got):\n%s", d)
	}
}
