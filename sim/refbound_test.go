package sim_test

import (
	"testing"

	"memspy/machine"
	"memspy/profile"
	"memspy/sim"
	"memspy/trace"
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
		profile.AddWithoutEvictors(&sum, &p.References[i].Stats)
	}
	sum.Add(&o.Stats)
	c := p.Caches[0]
	if sum.Accesses != c.Accesses || sum.Misses != c.Misses || sum.Causes != *c.Causes || o.Misses != extra {
		t.Errorf("listed and omitted references: %d accesses, %d misses (%d omitted), causes %+v; the cache: %d, %d, %+v",
			sum.Accesses, sum.Misses, o.Misses, sum.Causes, c.Accesses, c.Misses, *c.Causes)
	}
}
