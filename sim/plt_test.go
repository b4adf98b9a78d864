package sim_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memspy/memspy/attrib"
	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/sim"
	"github.com/memspy/memspy/trace"
)

// pltCode is the code of pltSymbolizer's program: main, f and g; a PLT
// with a header and entries for f and g; the dynamic linker's resolver
// and the function it calls to bind.
var pltCode = []struct {
	lo, hi uint64
	name   string
	via    attrib.Via
}{
	{0x400500, 0x400510, "", attrib.Stub}, // the PLT header: no symbol
	{0x400510, 0x400520, "f@plt", attrib.Stub},
	{0x400520, 0x400530, "g@plt", attrib.Stub},
	{0x401000, 0x401100, "main", attrib.Direct},
	{0x402000, 0x402100, "f", attrib.Direct},
	{0x403000, 0x403100, "g", attrib.Direct},
	{0x7000000, 0x7000100, "_dl_runtime_resolve_xsavec", attrib.Resolver},
	{0x7001000, 0x7001100, "_dl_fixup", attrib.Direct},
}

// pltSymbolizer is a synthetic symbol table for pltCode.
type pltSymbolizer struct{}

func (pltSymbolizer) Map(string, uint64) []attrib.Var { return nil }
func (pltSymbolizer) Code(pc uint64) sim.Source {
	for _, c := range pltCode {
		if c.lo <= pc && pc < c.hi && c.name != "" {
			return sim.Source{Func: c.name, Entry: c.lo}
		}
	}
	return sim.Source{}
}
func (pltSymbolizer) HeapName([]uint64, uint64) (sim.HeapSite, bool) { return sim.HeapSite{}, false }
func (pltSymbolizer) Locals(uint64) []attrib.Local                   { return nil }
func (pltSymbolizer) Place(uint64) (string, bool)                    { return "", false }
func (pltSymbolizer) Via(pc uint64) (attrib.Via, uint64, uint64) {
	for _, c := range pltCode {
		if c.lo <= pc && pc < c.hi {
			if c.via == attrib.Stub {
				return c.via, 0x400500, 0x400530 // the whole section
			}
			return c.via, c.lo, c.hi
		}
	}
	return attrib.Direct, 0, 0
}

// TestAttributionPLT checks that calls through PLT entries count as calls
// of the functions they reach, in every view: a bound call of f (the
// entry's fetch and GOT load count as f's), and a lazily bound call of g,
// whose entry, lazy entry and PLT header count as g's, whose stack pushes
// are main's, and which goes through the resolver (its own function, with
// its call of _dl_fixup) before g takes its frame over. The first
// references after each jump are hits on the line the code before them
// touched, which the hit bypass must not take while the call is on its
// way.
func TestAttributionPLT(t *testing.T) {
	const top = 0x7fff0000
	b := trace.NewBatch(0)
	call := func(entry, pc, sp uint64) { b.AppendExt(trace.Call, entry, pc, 1, trace.Ext{SP: sp}) }
	ret := func(to, pc, sp uint64) { b.AppendExt(trace.Return, to, pc, 1, trace.Ext{SP: sp}) }
	ref := func(k trace.Kind, a, pc uint64) { b.Append(k, a, 8, pc, 1) }
	fetch := func(pc uint64) { b.Append(trace.IFetch, pc, 4, pc, 1) }

	call(0x401000, 0x400100, top-8) // main
	fetch(0x401000)
	ref(trace.Read, 0x10000, 0x401004)
	// A bound call of f: the entry's jump through its GOT slot, then f,
	// whose first read hits the GOT slot's line.
	call(0x400510, 0x401008, top-64)
	fetch(0x400510)
	ref(trace.Read, 0x600010, 0x400510)
	ref(trace.Read, 0x600030, 0x402004)
	fetch(0x402008)
	ret(0x40100d, 0x40200c, top-56)
	// A lazily bound call of g: its entry, the lazy entry's push, the
	// header's push and jump, the resolver, _dl_fixup, the resolver again,
	// then g, whose first read hits the resolver's last line.
	call(0x400520, 0x401010, top-64)
	ref(trace.Read, 0x600020, 0x400520)
	ref(trace.Write, top-72, 0x400526)
	ref(trace.Read, 0x600008, 0x400500)
	ref(trace.Read, 0x600010, 0x400506)
	ref(trace.Read, 0x10040, 0x7000010)
	call(0x7001000, 0x7000020, top-200)
	ref(trace.Read, 0x10080, 0x7001004)
	ret(0x7000025, 0x7001010, top-192)
	ref(trace.Read, 0x100c0, 0x7000030)
	ref(trace.Read, 0x100c8, 0x403000)
	ref(trace.Read, 0x100d0, 0x403004)
	ret(0x401015, 0x403010, top-56)
	ref(trace.Read, 0x10008, 0x40101c)

	m := mach(hc("L1", 1, 64, 2, 64, machine.LRU))
	h, err := sim.New(m, sim.Options{Attribute: true, Symbols: pltSymbolizer{}})
	if err != nil {
		t.Fatal(err)
	}
	h.Process(b)
	h.Finish()
	p := h.Profile()
	checkAttribution(t, p)

	type counts struct{ Data, Instr, InclData uint64 }
	got := map[string]counts{}
	for _, f := range p.Functions {
		if strings.Contains(f.Name, "@plt") {
			t.Errorf("function %s", f.Name)
		}
		c := counts{Data: f.Reads + f.Writes, Instr: f.Instructions}
		if f.Inclusive != nil {
			c.InclData = f.Inclusive.Reads + f.Inclusive.Writes
		}
		got[f.Name] = c
	}
	want := map[string]counts{
		"main":                       {2, 1, 13},
		"f":                          {2, 2, 2},
		"g":                          {6, 0, 6},
		"_dl_runtime_resolve_xsavec": {2, 0, 3},
		"_dl_fixup":                  {1, 0, 1},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("functions (-want +got):\n%s", d)
	}
	pairs := map[[2]string]uint64{}
	for _, pr := range p.Pairs {
		pairs[[2]string{pr.Function, pr.Object}] += pr.Reads + pr.Writes
	}
	if n := pairs[[2]string{"g", "locals@main"}]; n != 1 {
		t.Errorf("g's lazy-binding push in main's frame: %d, want 1 (pairs %v)", n, pairs)
	}
	for _, r := range p.References {
		if (r.PC == 0x403000 || r.PC == 0x402004) && r.Function != map[uint64]string{0x403000: "g", 0x402004: "f"}[r.PC] {
			t.Errorf("reference %#x counts in %s", r.PC, r.Function)
		}
	}
}
