package sim_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memspy/memspy/attrib"
	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/sim"
	"github.com/memspy/memspy/trace"
)

// localsSymbolizer knows only the local variables of one function.
type localsSymbolizer struct {
	entry  uint64
	locals []attrib.Local
}

func (s localsSymbolizer) Map(string, uint64) []attrib.Var { return nil }
func (s localsSymbolizer) Code(uint64) sim.Source          { return sim.Source{} }
func (s localsSymbolizer) HeapName([]uint64, uint64) (sim.HeapSite, bool) {
	return sim.HeapSite{}, false
}
func (s localsSymbolizer) Place(uint64) (string, bool) { return "", false }
func (s localsSymbolizer) Via(uint64) (attrib.Via, uint64, uint64) {
	return attrib.Direct, 0, 0
}
func (s localsSymbolizer) Locals(entry uint64) []attrib.Local {
	if entry == s.entry {
		return s.locals
	}
	return nil
}

// TestAttributionLocalsAndFree checks per-variable stack bins (from the
// frame's canonical frame address, per recursion level) and that hits on
// a freed block's lines count in <freed> until memory is allocated there
// again.
func TestAttributionLocalsAndFree(t *testing.T) {
	m := mach(hc("L1", 1, 64, 2, 64, machine.LRU))
	call := func(entry, sp uint64) refEvent {
		return refEvent{Kind: trace.Call, Addr: entry, Ext: trace.Ext{SP: sp}}
	}
	alloc := func(a, size, site uint64) refEvent {
		return refEvent{Kind: trace.Alloc, Addr: a, Ext: trace.Ext{Size: size, Stack: []uint64{site}, Name: "malloc"}}
	}
	events := []refEvent{
		call(0xf00, 0x7000),        // f: CFA 0x7008
		rd(0x6f80, 8),              // offset -0x88: buf, a line of its own
		rd(0x6f88, 8),              // buf, a hit
		rd(0x6fc0, 8),              // offset -0x48: n
		rd(0x6fc4, 4),              // n, a hit
		rd(0x6f40, 8),              // offset -0xc8: in no variable: locals@f
		call(0xf00, 0x6f00),        // f again (recursion): CFA 0x6f08
		rd(0x6e80, 8),              // buf of the inner level
		rd(0x6f10, 8),              // offset -0xf8 of the outer level: w
		alloc(0x10000, 128, 0xa00), // A: two whole lines
		rd(0x10000, 8),             // A miss
		rd(0x10040, 8),             // A miss
		{Kind: trace.Free, Addr: 0x10000},
		rd(0x10008, 8),            // hit on a freed line: use after free
		alloc(0x10000, 32, 0xb00), // B over part of the first line
		rd(0x10010, 8),            // hit: B
		rd(0x10048, 8),            // hit on the second line, still freed
		alloc(0x20000, 16, 0xc00), // C and D share a line
		alloc(0x20010, 16, 0xc00), // D
		rd(0x20000, 8),            // miss: C's bin (one site)
		{Kind: trace.Free, Addr: 0x20000},
		rd(0x20010, 8), // hit on D: the line is not all freed, it keeps its bin
	}
	pcs := make([]uint64, len(events))
	for i := range pcs {
		pcs[i] = 0xf10
	}
	sym := localsSymbolizer{0xf00, []attrib.Local{{Name: "w", Offset: -0xf8, Size: 8}, {Name: "buf", Offset: -0x88, Size: 0x40}, {Name: "n", Offset: -0x48, Size: 8}}}
	for _, missOnly := range []bool{false, true} {
		p := runWorked(t, m, sim.Options{Attribute: true, MissOnly: missOnly, Symbols: sym}, events, pcs)
		got := map[string][2]uint64{}
		for _, o := range p.Objects {
			got[o.Name+" "+o.Kind] = [2]uint64{o.Accesses, o.Misses}
		}
		want := map[string][2]uint64{
			"0xf00.buf stack": {3, 2}, "0xf00.n stack": {2, 1}, "locals@0xf00 stack": {1, 1}, "0xf00.w stack": {1, 1},
			"heap@0xa00 heap": {2, 2}, "<freed> freed": {2, 0}, "heap@0xb00 heap": {1, 0}, "heap@0xc00 heap": {2, 1},
		}
		if missOnly {
			for k, v := range want {
				if v[1] == 0 {
					delete(want, k)
				} else {
					want[k] = [2]uint64{0, v[1]}
				}
			}
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("miss-only %v: objects' accesses and misses (-want +got):\n%s", missOnly, d)
		}
	}
}
