package sim_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"memspy/attrib"
	"memspy/machine"
	"memspy/sim"
	"memspy/trace"
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
func (tableSymbolizer) HeapName([]uint64, uint64) (string, []string, bool) { return "", nil, false }
func (tableSymbolizer) Locals(uint64) []attrib.Local                       { return nil }
func (tableSymbolizer) Place(uint64) (string, bool)                        { return "", false }
func (tableSymbolizer) Via(uint64) (attrib.Via, uint64, uint64)            { return attrib.Direct, 0, 0 }

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
