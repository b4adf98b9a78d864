package symbolize_test

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/profile"
	"github.com/memspy/memspy/sim"
	"github.com/memspy/memspy/symbolize"
	"github.com/memspy/memspy/trace"
)

// strippedLib has an exported function followed by a static one, which a
// stripped library keeps no symbol for.
const strippedLib = `static int hidden(int x);

int exported(int x)
{
	return hidden(x) + 1;
}

__attribute__((noipa)) static int hidden(int x)
{
	volatile int v[16];
	v[x & 15] = x;
	return v[(x + 1) & 15] * 3;
}
`

// TestPlaceStripped checks the names of code in a stripped library: an
// exported function by its .dynsym symbol, but not past that symbol's
// size; code no symbol covers by module and link-time address, which the
// simulator's profile then uses for the procedure and its stack frame.
func TestPlaceStripped(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	if _, err := exec.LookPath("strip"); err != nil {
		t.Skip("strip not installed")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "place.c")
	if err := os.WriteFile(src, []byte(strippedLib), 0o644); err != nil {
		t.Fatal(err)
	}
	full := filepath.Join(dir, "libfull.so")
	lib := filepath.Join(dir, "libplace.so")
	for _, cmd := range [][]string{
		{"gcc", "-O1", "-fPIC", "-shared", "-fno-toplevel-reorder", "-o", full, src},
		{"strip", "-o", lib, full},
	} {
		if msg, err := exec.Command(cmd[0], cmd[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", cmd, err, msg)
		}
	}
	exported, hidden := linkAddr(t, full, "exported"), linkAddr(t, full, "hidden")
	if hidden <= exported {
		t.Fatalf("hidden at %#x is not after exported at %#x", hidden, exported)
	}
	f, err := elf.Open(lib)
	if err != nil {
		t.Fatal(err)
	}
	textLink := f.Section(".text").Addr
	f.Close()

	const bias = 0x7f0000000000
	s := symbolize.New()
	s.Map(lib, textLink+bias)
	if errs := s.Errors(); len(errs) > 0 {
		t.Fatal(errs)
	}
	if got := s.Code(bias + exported + 1); got.Func != "exported" || got.Entry != bias+exported {
		t.Errorf("Code(exported+1) = %+v", got)
	}
	if got := s.Code(bias + hidden); got != (sim.Source{Module: lib}) {
		t.Errorf("Code(hidden) = %+v, want the module alone", got)
	}
	want := fmt.Sprintf("libplace.so+%#x", hidden)
	if got, ok := s.Place(bias + hidden); !ok || got != want {
		t.Errorf("Place(hidden) = %q %v, want %q", got, ok, want)
	}
	if got, ok := s.Place(0x1000); ok {
		t.Errorf("Place(0x1000) = %q, want none", got)
	}

	// The profile of a call to hidden that touches its stack frame.
	h, err := sim.New(&machine.Machine{Name: "one", MemoryLatency: 100, Caches: []machine.Cache{{
		Name: "L1", Level: 1, Size: 4096, Sets: 16, Assoc: 4, Line: 64, Replacement: machine.LRU,
		WriteBack: true, WriteAllocate: true, Holds: machine.Unified, Inclusion: machine.NonInclusive, Latency: 1,
	}}}, sim.Options{Attribute: true, Symbols: s})
	if err != nil {
		t.Fatal(err)
	}
	const sp = 0x7ffc0000
	b := trace.NewBatch(4)
	b.AppendExt(trace.Call, bias+exported, 0, 1, trace.Ext{SP: sp})
	b.AppendExt(trace.Call, bias+hidden, 0, 1, trace.Ext{SP: sp - 0x20})
	b.Append(trace.Write, sp-0x60, 4, bias+hidden+4, 1)
	h.Process(b)
	h.Finish()
	p := h.Profile()
	fn := slices.IndexFunc(p.Functions, func(f profile.Function) bool { return f.Entry == bias+hidden })
	if fn < 0 || p.Functions[fn].Name != want || p.Functions[fn].Module != lib {
		t.Errorf("functions %+v: want %s in %s", p.Functions, want, lib)
	}
	if !slices.ContainsFunc(p.Objects, func(o profile.Object) bool { return o.Name == "locals@"+want }) {
		t.Errorf("objects %+v: want locals@%s", p.Objects, want)
	}
}
