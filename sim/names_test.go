package sim_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memspy/memspy/attrib"
	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/profile"
	"github.com/memspy/memspy/sim"
	"github.com/memspy/memspy/trace"
)

// tableSymbolizer names the functions of a table, each 0x100 bytes long.
type tableSymbolizer []sim.Source

func (s tableSymbolizer) Map(string, uint64) []attrib.Var { return nil }
func (s tableSymbolizer) Code(pc uint64) sim.Source {
	for _, src := range s {
		if src.Entry <= pc && pc < src.Entry+0x100 {
			return src
		}
	}
	return sim.Source{}
}
func (tableSymbolizer) HeapName([]uint64, uint64) (sim.HeapSite, bool) { return sim.HeapSite{}, false }
func (tableSymbolizer) Locals(uint64) []attrib.Local                   { return nil }
func (tableSymbolizer) Place(uint64) (string, bool)                    { return "", false }
func (tableSymbolizer) Via(uint64) (attrib.Via, uint64, uint64)        { return attrib.Direct, 0, 0 }

// TestProcNameCollisions checks the names of procedures whose short names
// collide: C++ overloads by their full names, functions of different
// modules by their module, and the rest by their entry.
func TestProcNameCollisions(t *testing.T) {
	sym := tableSymbolizer{
		{Func: "twice", Signature: "twice(int)", Entry: 0x1000, Module: "/lib/liba.so"},
		{Func: "twice", Signature: "twice(double)", Entry: 0x2000, Module: "/lib/liba.so"},
		{Func: "init", Entry: 0x3000, Module: "/lib/liba.so"},
		{Func: "init", Entry: 0x4000, Module: "/lib/libb.so"},
		{Func: "dup", Signature: "dup(int)", Entry: 0x5000, Module: "/lib/liba.so"},
		{Func: "dup", Signature: "dup(int)", Entry: 0x6000, Module: "/lib/libb.so"},
		{Func: "st", Entry: 0x7000, Module: "/lib/liba.so"},
		{Func: "st", Entry: 0x7200, Module: "/lib/liba.so"},
		{Func: "one", Signature: "one(char)", Entry: 0x8000, Module: "/lib/liba.so"},
	}
	b := trace.NewBatch(0)
	for i, s := range sym {
		sp := uint64(0x7ff000 - 0x100*i)
		b.AppendExt(trace.Call, s.Entry, 0x400000, 1, trace.Ext{SP: sp})
		b.Append(trace.Read, 0x10000+64*uint64(i), 8, s.Entry+4, 1)
		b.AppendExt(trace.Return, 0x400005, s.Entry+8, 1, trace.Ext{SP: sp + 8})
	}
	h, err := sim.New(mach(hc("L1", 1, 64, 2, 64, machine.LRU)), sim.Options{Attribute: true, Symbols: sym})
	if err != nil {
		t.Fatal(err)
	}
	h.Process(b)
	h.Finish()
	var got []string
	for _, f := range h.Profile().Functions {
		got = append(got, f.Name)
	}
	slices.Sort(got)
	want := []string{"dup@liba.so", "dup@libb.so", "init@liba.so", "init@libb.so", "one", "st@0x7000", "st@0x7200", "twice(double)", "twice(int)"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("function names (-want +got):\n%s", d)
	}
}

// globalsSymbolizer is a tableSymbolizer whose modules have global
// variables, at their offsets from the module's .text address.
type globalsSymbolizer struct {
	tableSymbolizer
	vars map[string][]attrib.Var
}

func (s globalsSymbolizer) Map(path string, text uint64) []attrib.Var {
	var out []attrib.Var
	for _, v := range s.vars[path] {
		v.Addr += text
		out = append(out, v)
	}
	return out
}

// TestObjectNameCollisions: global variables of one name in two modules
// get names and full names of their own (a small one its module's), every
// pair and reference names a listed object, and so it stays when the cold
// small globals are pooled.
func TestObjectNameCollisions(t *testing.T) {
	// Each in lines of its own: a hit counts in the object of its line.
	vars := []attrib.Var{{Name: "table", Addr: 0x10000, Size: 256}, {Name: "count", Addr: 0x10100, Size: 8}, {Name: "flag", Addr: 0x10140, Size: 4}}
	sym := globalsSymbolizer{
		tableSymbolizer: tableSymbolizer{{Func: "f", Entry: 0x1000, Module: "/lib/liba.so"}},
		vars:            map[string][]attrib.Var{"/lib/liba.so": vars, "/lib/libb.so": vars},
	}
	b := trace.NewBatch(0)
	b.AppendExt(trace.Map, 0x100000, 0, 0, trace.Ext{Name: "/lib/liba.so", Size: 0x20000})
	b.AppendExt(trace.Map, 0x200000, 0, 0, trace.Ext{Name: "/lib/libb.so", Size: 0x20000})
	for rep := range 50 {
		for _, base := range []uint64{0x100000, 0x200000} {
			for _, off := range []uint64{0x10000, 0x10040, 0x10100} {
				b.Append(trace.Read, base+off, 4, 0x1004, 1)
			}
			if rep < 2 {
				b.Append(trace.Read, base+0x10140, 4, 0x1008, 1) // flag: a few references only
			}
		}
		for i := range 64 { // fill the cache with other lines: every round misses again
			b.Append(trace.Read, 0x900000+64*uint64(i), 8, 0x1010, 1)
		}
	}
	p := attributedProfile(t, sym, b)
	got := listedObjects(t, "as made", p)
	for _, want := range []string{"count@liba.so", "count@libb.so", "flag@liba.so", "flag@libb.so"} {
		if !slices.Contains(got, want) {
			t.Errorf("no object %s among %v", want, got)
		}
	}
	if n, err := p.PoolColdGlobals(); err != nil || n != 2 {
		t.Errorf("PoolColdGlobals pooled %d, %v; want the two flags", n, err)
	}
	got = listedObjects(t, "pooled", p)
	for _, want := range []string{"<small globals>@liba.so", "<small globals>@libb.so", "count@liba.so", "count@libb.so"} {
		if !slices.Contains(got, want) {
			t.Errorf("pooled: no object %s among %v", want, got)
		}
	}
}

// samePathSymbolizer names every heap call path alike: the blocks of two
// allocation sites whose paths read the same (two return addresses of
// one source line, say).
type samePathSymbolizer struct{ tableSymbolizer }

func (samePathSymbolizer) HeapName(site []uint64, typ uint64) (sim.HeapSite, bool) {
	return sim.HeapSite{Name: "heap@x.c:9", Path: []string{"main.4", "alloc.9"}}, true
}

// TestSamePathObjects: objects whose call paths read the same are told
// apart by their bins, in their full names too: merges and pooling find
// objects by full name, and one that took in another would leave the
// other's pairs and references naming no listed object.
func TestSamePathObjects(t *testing.T) {
	sym := samePathSymbolizer{tableSymbolizer{{Func: "main", Entry: 0x1000}}}
	b := trace.NewBatch(0)
	for i, site := range []uint64{0x1010, 0x1014} {
		a := 0x100000 + uint64(i)*0x1000
		b.AppendExt(trace.Alloc, a, 0x1000, 1, trace.Ext{Size: 256, Stack: []uint64{site}, Name: "malloc"})
		for rep := range 3 {
			b.Append(trace.Read, a+64*uint64(rep), 8, 0x1004, 1)
		}
	}
	if got := listedObjects(t, "as made", attributedProfile(t, sym, b)); len(got) != 2 {
		t.Fatalf("objects %v, want the two sites'", got)
	}
}

// attributedProfile returns the where-and-why profile of b on one small
// cache, named by sym.
func attributedProfile(t *testing.T, sym sim.Symbolizer, b *trace.Batch) *profile.Profile {
	t.Helper()
	h, err := sim.New(mach(hc("L1", 1, 16, 2, 64, machine.LRU)), sim.Options{Attribute: true, Symbols: sym})
	if err != nil {
		t.Fatal(err)
	}
	h.Process(b)
	h.Finish()
	return h.Profile()
}

// listedObjects checks that p lists each object once, by name and by full
// name, and that every pair and reference names a listed object (when:
// what was done to p), and returns the objects' names, sorted.
func listedObjects(t *testing.T, when string, p *profile.Profile) []string {
	t.Helper()
	names, full := map[string]bool{}, map[string]bool{}
	var listed []string
	for _, o := range p.Objects {
		if names[o.Name] || full[o.FullName] {
			t.Errorf("%s: object %q (%q) listed twice", when, o.Name, o.FullName)
		}
		names[o.Name], full[o.FullName] = true, true
		listed = append(listed, o.Name)
	}
	for _, pr := range p.Pairs {
		if !names[pr.Object] {
			t.Errorf("%s: pair %s × %s names no listed object", when, pr.Function, pr.Object)
		}
	}
	for _, r := range p.References {
		if !names[r.Object] {
			t.Errorf("%s: reference %#x names no listed object %s", when, r.PC, r.Object)
		}
	}
	slices.Sort(listed)
	return listed
}
