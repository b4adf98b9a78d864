package sim_test

import (
	"testing"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/profile"
	"github.com/memspy/memspy/sim"
	"github.com/memspy/memspy/trace"
)

// A profile lists at most profile.MaxReferences references: those that
// come first in its order (most stall cycles, then the lowest PCs here,
// where the others tie), and adds up the rest in OmittedReferences, so
// that the references listed and left out still add up to the cache's
// counters.
func TestReferencesBounded(t *testing.T) {
	const extra, hot = 500, 300 // references beyond the bound; those of the highest PCs that miss thrice
	n := profile.MaxReferences + extra
	h, err := sim.New(mach(hc("L1", 1, 64, 2, 64, machine.LRU)), sim.Options{Attribute: true})
	if err != nil {
		t.Fatal(err)
	}
	b := trace.NewBatch(1024)
	next := uint64(0) // a fresh line for every reference: each one misses
	ref := func(pc uint64) {
		b.Append(trace.Read, next, 8, pc, 1)
		next += 64
		if b.Len() == 1024 {
			h.Process(b)
			b.Reset()
		}
	}
	pc := func(i int) uint64 { return 0x1000 + 4*uint64(i) }
	for i := range n {
		ref(pc(i))
		if i >= n-hot {
			ref(pc(i))
			ref(pc(i))
		}
	}
	h.Process(b)
	h.Finish()
	p := h.Profile()
	if len(p.References) != profile.MaxReferences {
		t.Fatalf("%d references listed, want %d", len(p.References), profile.MaxReferences)
	}
	o := p.OmittedReferences
	if o == nil || o.References != extra {
		t.Fatalf("omitted references %+v, want %d", o, extra)
	}
	listed := map[uint64]bool{}
	for _, r := range p.References {
		listed[r.PC] = true
	}
	for i := range n {
		if want := i < profile.MaxReferences-hot || i >= n-hot; listed[pc(i)] != want {
			t.Fatalf("reference %d (pc %#x) listed: %v, want %v", i, pc(i), listed[pc(i)], want)
		}
	}
	var sum profile.Stats
	for i := range p.References {
		st := p.References[i].Stats
		st.Evictors = nil // (not compared)
		sum.Add(&st)
	}
	sum.Add(&o.Stats)
	c := p.Caches[0]
	if sum.Accesses != c.Accesses || sum.Misses != c.Misses || sum.Causes != *c.Causes || o.Misses != extra {
		t.Errorf("listed and omitted references: %d accesses, %d misses (%d omitted), causes %+v; the cache: %d, %d, %+v",
			sum.Accesses, sum.Misses, o.Misses, sum.Causes, c.Accesses, c.Misses, *c.Causes)
	}
}

// A profile lists at most profile.MaxPairs function × object pairs, those
// first in its order, and the pairs of the references it lists besides;
// it adds up the rest in OmittedPairs, so that the pairs listed and left
// out still add up to the cache's counters, while the objects count
// them all.
func TestPairsBounded(t *testing.T) {
	const hot, extra = 100, 300 // objects that miss thrice (the others twice); pairs beyond the bound
	n := profile.MaxPairs + extra
	h, err := sim.New(mach(hc("L1", 1, 64, 2, 64, machine.LRU)), sim.Options{Attribute: true})
	if err != nil {
		t.Fatal(err)
	}
	b := trace.NewBatch(1024)
	flush := func() {
		if b.Len() >= 1000 {
			h.Process(b)
			b.Reset()
		}
	}
	// Object i, a heap block of its own allocation site, read without a PC
	// (no reference) once per line: hot ones have three lines, the others
	// two. The last object, of one line, is read by the reference at
	// xPC: its pair comes last in the order, yet is listed.
	const xPC = 0x5000
	addr := func(i int) uint64 { return 0x100000 + 256*uint64(i) }
	for i := range n + 1 {
		lines := 2
		if i < hot {
			lines = 3
		}
		pc := uint64(0)
		if i == n {
			lines, pc = 1, xPC
		}
		b.AppendExt(trace.Alloc, addr(i), 0, 1, trace.Ext{Size: 64 * uint64(lines), Stack: []uint64{0x400000 + 16*uint64(i)}, Name: "malloc"})
		for l := range lines {
			b.Append(trace.Read, addr(i)+64*uint64(l), 8, pc, 1)
		}
		flush()
	}
	h.Process(b)
	h.Finish()
	p := h.Profile()
	if len(p.References) != 1 || p.References[0].PC != xPC {
		t.Fatalf("references %+v, want the one at %#x", p.References, xPC)
	}
	if len(p.Pairs) != profile.MaxPairs+1 {
		t.Fatalf("%d pairs listed, want %d", len(p.Pairs), profile.MaxPairs+1)
	}
	o := p.OmittedPairs
	if o == nil || o.Pairs != extra || o.Misses != 2*extra {
		t.Fatalf("omitted pairs %+v, want %d with %d misses", o, extra, 2*extra)
	}
	var sum profile.Stats
	misses := map[uint64]int{} // pairs listed by misses
	hasX := false
	for i := range p.Pairs {
		pr := &p.Pairs[i]
		sum.Add(&pr.Stats)
		misses[pr.Misses]++
		hasX = hasX || pr.Object == p.References[0].Object
	}
	if misses[3] != hot || misses[2] != profile.MaxPairs-hot || misses[1] != 1 || !hasX {
		t.Errorf("pairs listed by misses %v (the reference's pair listed: %v), want %d with 3, %d with 2, 1 with 1", misses, hasX,
			hot, profile.MaxPairs-hot)
	}
	sum.Add(&o.Stats)
	c := p.Caches[0]
	if sum.Accesses != c.Accesses || sum.Misses != c.Misses || sum.Causes != *c.Causes {
		t.Errorf("listed and omitted pairs: %d accesses, %d misses, causes %+v; the cache: %d, %d, %+v",
			sum.Accesses, sum.Misses, sum.Causes, c.Accesses, c.Misses, *c.Causes)
	}
	var objMisses uint64
	for i := range p.Objects {
		objMisses += p.Objects[i].Misses
	}
	if len(p.Objects) != n+1 || objMisses != c.Misses {
		t.Errorf("%d objects with %d misses, want %d with %d", len(p.Objects), objMisses, n+1, c.Misses)
	}
}
