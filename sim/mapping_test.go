package sim_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memspy/memspy/attrib"
	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/sim"
	"github.com/memspy/memspy/trace"
)

// mappingSymbolizer names the mappings made through call paths starting
// at 0xe00 "<Go heap arena>", and knows the local variables of one
// function.
type mappingSymbolizer struct{ localsSymbolizer }

func (mappingSymbolizer) HeapName(site []uint64, typ uint64) (sim.HeapSite, bool) {
	if len(site) > 0 && site[0] == 0xe00 {
		return sim.HeapSite{Name: "<Go heap arena>"}, true
	}
	return sim.HeapSite{}, false
}

// A mapping lies under what is inside it: a reference goes to the heap
// block holding it, else to the stack frame of its thread holding it (a
// goroutine's stack in Go's heap arena), else to the mapping; the
// mappings of one name are one object, an unnamed one is named by its
// call path; what is unmapped is no mapping's any more, and a mapping
// made over resident lines takes them.
func TestAttributionMappings(t *testing.T) {
	m := mach(hc("L1", 1, 64, 2, 64, machine.LRU))
	mmap := func(routine string, a, size, site uint64) refEvent {
		return refEvent{Kind: trace.Alloc, Addr: a, Ext: trace.Ext{Size: size, Stack: []uint64{site}, Name: routine}}
	}
	munmap := func(routine string, a, size uint64) refEvent {
		return refEvent{Kind: trace.Free, Addr: a, Ext: trace.Ext{Size: size, Name: routine}}
	}
	events := []refEvent{
		mmap("sys_mmap", 0x100000, 0x100000, 0xe00), // the arena's reservation
		mmap("sys_mmap", 0x140000, 0x10000, 0xe00),  // made usable: the same object
		{Kind: trace.Alloc, Addr: 0x140000, Ext: trace.Ext{Size: 0x100, Stack: []uint64{0xa00}, Name: "runtime.mallocgc"}},
		{Kind: trace.Call, Addr: 0xf00, Ext: trace.Ext{SP: 0x148000}}, // f, on a goroutine stack in the arena: CFA 0x148008
		rd(0x140040, 8),                       // the block
		rd(0x147f80, 8),                       // offset -0x88: f's buf
		rd(0x147000, 8),                       // below f's frame, within reach: f's
		rd(0x148100, 8),                       // above every frame: the arena
		rd(0x1f0000, 8),                       // the arena
		mmap("mmap", 0x300000, 0x1000, 0xb00), // the C library's, unnamed
		rd(0x300000, 8),
		munmap("sys_munmap", 0x1f0000, 0x10000),
		rd(0x1f0040, 8),                           // unmapped: <other>
		mmap("sys_mmap", 0x1f0000, 0x1000, 0xc00), // mapped again, by another path
		rd(0x1f0000, 8),                           // a hit on the resident line: the new mapping's
		munmap("munmap", 0x300000, 0),             // the C library's munmap of the whole mapping
		rd(0x300040, 8),
	}
	pcs := make([]uint64, len(events))
	for i := range pcs {
		pcs[i] = 0xf10
	}
	sym := mappingSymbolizer{localsSymbolizer{0xf00, []attrib.Local{{Name: "buf", Offset: -0x88, Size: 0x40}}}}
	p := runWorked(t, m, sim.Options{Attribute: true, Symbols: sym}, events, pcs)
	got := map[string][2]uint64{}
	for _, o := range p.Objects {
		got[o.Name+" "+o.Kind] = [2]uint64{o.Accesses, o.Misses}
	}
	want := map[string][2]uint64{
		"heap@0xa00 heap": {1, 1}, "0xf00.buf stack": {1, 1}, "locals@0xf00 stack": {1, 1},
		"<Go heap arena> heap": {2, 2}, "heap@0xb00 heap": {1, 1}, "<other> other": {2, 2}, "heap@0xc00 heap": {1, 0},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("objects' accesses and misses (-want +got):\n%s", d)
	}
	for _, o := range p.Objects {
		if o.Name == "<Go heap arena>" && (o.Blocks != 2 || o.Size != 0x110000) {
			t.Errorf("the arena: %d mappings of %#x bytes, want 2 of 0x110000", o.Blocks, o.Size)
		}
	}
}
