package sim_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/profile"
	"github.com/memspy/memspy/sim"
	"github.com/memspy/memspy/trace"
)

// workedPCs returns the PCs of the worked tests' events: pg for the
// references while g (entry 0x600) runs, pf for the others (calls,
// returns and fetches have none).
func workedPCs(events []refEvent, pf, pg uint64) []uint64 {
	pcs := make([]uint64, len(events))
	inG := false
	for i, e := range events {
		switch {
		case e.Kind == trace.Call:
			inG = e.Addr == 0x600
		case e.Kind == trace.Return:
			inG = false
		case e.Kind == trace.IFetch:
		case inG:
			pcs[i] = pg
		default:
			pcs[i] = pf
		}
	}
	return pcs
}

// runWorked runs the events of the worked example, with PCs, and returns
// the profile.
func runWorked(t *testing.T, m *machine.Machine, opt sim.Options, events []refEvent, pcs []uint64) *profile.Profile {
	t.Helper()
	h, err := sim.New(m, opt)
	if err != nil {
		t.Fatal(err)
	}
	b := trace.NewBatch(64)
	for i, e := range events {
		if e.Kind.IsExtended() {
			b.AppendExt(e.Kind, e.Addr, 0, 1, e.Ext)
		} else {
			b.Append(e.Kind, e.Addr, e.Size, pcs[i], 1)
		}
	}
	h.Process(b)
	h.Finish()
	p := h.Profile()
	checkAttribution(t, p)
	return p
}

// A worked example of attribution: two heap arrays mapping to the same
// sets of a direct-mapped cache, referenced from two procedures; every
// cause of a miss, evictors by reference, spatial hits and byte use,
// freed memory, a stack frame and unknown memory.
func TestAttributionWorked(t *testing.T) {
	m := mach(hc("L1", 1, 4, 1, 64, machine.LRU))
	alloc := func(a, size, site uint64) refEvent {
		return refEvent{Kind: trace.Alloc, Addr: a, Ext: trace.Ext{Size: size, Stack: []uint64{site}, Name: "malloc"}}
	}
	call := func(entry, sp uint64) refEvent {
		return refEvent{Kind: trace.Call, Addr: entry, Ext: trace.Ext{SP: sp}}
	}
	ret := func(sp uint64) refEvent { return refEvent{Kind: trace.Return, Ext: trace.Ext{SP: sp}} }
	const pf, pg = 0xf10, 0x610 // the PCs of the references in f and in g
	events := []refEvent{
		alloc(0x10000, 256, 0xa00), // A
		alloc(0x20000, 256, 0xb00), // B: the same sets as A
		call(0xf00, 0x7000),        // f
		rd(0x10000, 8),             // f×A cold
		rd(0x10008, 8),             // f×A spatial hit
		rd(0x20000, 8),             // f×B cold, evicts A (16 bytes used)
		call(0x600, 0x6f00),        // g
		rd(0x10000, 8),             // g×A replacement, evicts B (8 bytes used)
		inv(0x10000, 64),           // A's line invalidated (8 bytes used)
		rd(0x10000, 8),             // g×A invalidation
		rd(0x10000, 8),             // g×A temporal hit
		rd(0x10008, 8),             // g×A spatial hit
		ret(0x6f08),                // back in f
		rd(0x10010, 8),             // f×A spatial hit (24 bytes used at the end)
		{Kind: trace.Free, Addr: 0x10000},
		rd(0x10040, 8),    // f×<freed> cold
		rd(0x6ff0, 8),     // f×locals@f cold
		rd(0x99999999, 8), // f×<other> cold
	}
	pcs := workedPCs(events, pf, pg)
	p := runWorked(t, m, sim.Options{Attribute: true}, events, pcs)
	if p.Focus != "L1" || *p.Caches[0].Causes != (profile.Causes{Cold: 5, Replacement: 1, Invalidation: 1}) {
		t.Errorf("focus %q, causes %+v", p.Focus, p.Caches[0].Causes)
	}
	const a, b = "heap@0xa00", "heap@0xb00"
	type row struct {
		Name                                    string
		Acc, Hits, Misses, Cold, Repl, Inval    uint64
		Temporal, Spatial, Used, Fetched, Stall uint64
		EvictedBy                               map[string]uint64
	}
	mk := func(name string, s *profile.Stats) row {
		return row{name, s.Accesses, s.Hits, s.Misses, s.Causes.Cold, s.Causes.Replacement, s.Causes.Invalidation,
			s.TemporalHits, s.SpatialHits, s.UsedBytes, s.FetchedBytes, s.StallCycles, s.EvictedBy}
	}
	var objs, pairs, refs []row
	for _, o := range p.Objects {
		objs = append(objs, mk(o.Name+" "+o.Kind, &o.Stats))
	}
	for _, pr := range p.Pairs {
		pairs = append(pairs, mk(pr.Function+"×"+pr.Object, &pr.Stats))
	}
	for _, r := range p.References {
		refs = append(refs, mk(r.Function+" "+r.Object+" "+r.Kind, &r.Stats))
	}
	wantObjs := []row{
		{Name: a + " heap", Acc: 7, Hits: 4, Misses: 3, Cold: 1, Repl: 1, Inval: 1, Temporal: 1, Spatial: 3, Used: 16 + 8 + 24, Fetched: 192, Stall: 300, EvictedBy: map[string]uint64{b: 1}},
		{Name: "<freed> freed", Acc: 1, Misses: 1, Cold: 1, Used: 8, Fetched: 64, Stall: 100},
		{Name: "<other> other", Acc: 1, Misses: 1, Cold: 1, Used: 8, Fetched: 64, Stall: 100},
		{Name: b + " heap", Acc: 1, Misses: 1, Cold: 1, Used: 8, Fetched: 64, Stall: 100, EvictedBy: map[string]uint64{a: 1}},
		{Name: "locals@0xf00 stack", Acc: 1, Misses: 1, Cold: 1, Used: 8, Fetched: 64, Stall: 100},
	}
	if d := cmp.Diff(wantObjs, objs); d != "" {
		t.Errorf("objects (-want +got):\n%s", d)
	}
	wantPairs := []row{
		{Name: "0x600×" + a, Acc: 4, Hits: 2, Misses: 2, Repl: 1, Inval: 1, Temporal: 1, Spatial: 1, Used: 8 + 24, Fetched: 128, Stall: 200},
		{Name: "0xf00×" + a, Acc: 3, Hits: 2, Misses: 1, Cold: 1, Spatial: 2, Used: 16, Fetched: 64, Stall: 100, EvictedBy: map[string]uint64{b: 1}},
		{Name: "0xf00×<freed>", Acc: 1, Misses: 1, Cold: 1, Used: 8, Fetched: 64, Stall: 100},
		{Name: "0xf00×<other>", Acc: 1, Misses: 1, Cold: 1, Used: 8, Fetched: 64, Stall: 100},
		{Name: "0xf00×" + b, Acc: 1, Misses: 1, Cold: 1, Used: 8, Fetched: 64, Stall: 100, EvictedBy: map[string]uint64{a: 1}},
		{Name: "0xf00×locals@0xf00", Acc: 1, Misses: 1, Cold: 1, Used: 8, Fetched: 64, Stall: 100},
	}
	if d := cmp.Diff(wantPairs, pairs); d != "" {
		t.Errorf("pairs (-want +got):\n%s", d)
	}
	if len(refs) != len(pairs) {
		t.Errorf("references %+v, want one per pair here", refs)
	}
	for _, r := range p.References {
		if r.Function == "0xf00" && r.Object == b {
			want := []profile.RefEvictor{{Reference: "0x610", Object: a, Count: 1}}
			if d := cmp.Diff(want, r.Evictors); d != "" || r.PC != pf || r.Kind != "read" {
				t.Errorf("reference %+v: evictors (-want +got):\n%s", r, d)
			}
		}
	}
	var fns []string
	for _, f := range p.Functions {
		fns = append(fns, f.Name)
	}
	if d := cmp.Diff([]string{"0xf00", "0x600"}, fns); d != "" {
		t.Errorf("functions (-want +got):\n%s", d)
	}

	// Inclusive: f includes g, which it called.
	incl := map[string][2]uint64{}
	for _, f := range p.Functions {
		incl[f.Name] = [2]uint64{f.Inclusive.Accesses, f.Inclusive.Misses}
	}
	if d := cmp.Diff(map[string][2]uint64{"0xf00": {11, 7}, "0x600": {4, 2}}, incl); d != "" {
		t.Errorf("inclusive accesses and misses (-want +got):\n%s", d)
	}
	// Strides: f reads A 8 bytes apart; g reads its line twice, then 8
	// bytes on.
	strides := map[string]*profile.Strides{}
	for _, pr := range p.Pairs {
		if pr.Object == a {
			strides[pr.Function] = pr.Strides
		}
	}
	wantStrides := map[string]*profile.Strides{
		"0xf00": {Samples: 2, Top: []profile.Stride{{Bytes: 8, Count: 2}}},
		"0x600": {Samples: 3, Top: []profile.Stride{{Bytes: 0, Count: 2}, {Bytes: 8, Count: 1}}},
	}
	if d := cmp.Diff(wantStrides, strides); d != "" {
		t.Errorf("strides of the pairs on A (-want +got):\n%s", d)
	}

	// Counting misses only gives the same misses, causes and evictors,
	// and no hits.
	q := runWorked(t, m, sim.Options{Attribute: true, MissOnly: true}, events, pcs)
	if !q.Options.MissOnly || len(q.Objects) != len(p.Objects) {
		t.Fatalf("miss-only: options %+v, %d objects", q.Options, len(q.Objects))
	}
	for i, o := range q.Objects {
		w := p.Objects[i]
		if o.Name != w.Name || o.Misses != w.Misses || o.Causes != w.Causes || !cmp.Equal(o.EvictedBy, w.EvictedBy) ||
			o.Accesses != 0 || o.Hits != 0 || o.FetchedBytes != 0 {
			t.Errorf("miss-only object %+v, full %+v", o, w)
		}
	}
	for _, pr := range q.Pairs {
		if pr.Strides != nil {
			t.Errorf("miss-only pair %s×%s has strides", pr.Function, pr.Object)
		}
	}
}

// An instruction's strides are counted across its calling contexts: g,
// called from f and from h, reads A 8 bytes on each time (SIGMA's and
// METRIC's strides are per instruction). Counted per calling context,
// f→g would see strides of 8 and 16, h→g none.
func TestStridesAcrossContexts(t *testing.T) {
	m := mach(hc("L1", 1, 4, 1, 64, machine.LRU))
	call := func(entry, sp uint64) refEvent {
		return refEvent{Kind: trace.Call, Addr: entry, Ext: trace.Ext{SP: sp}}
	}
	ret := func(sp uint64) refEvent { return refEvent{Kind: trace.Return, Ext: trace.Ext{SP: sp}} }
	alloc := refEvent{Kind: trace.Alloc, Addr: 0x10000, Ext: trace.Ext{Size: 256, Stack: []uint64{0xa00}, Name: "malloc"}}
	const A = 0x10000
	events := []refEvent{alloc,
		call(0xf00, 0x7000), call(0x600, 0x6f00), rd(A, 8), rd(A+8, 8), ret(0x6f08), ret(0x7008),
		call(0xe00, 0x7000), call(0x600, 0x6f00), rd(A+16, 8), ret(0x6f08), ret(0x7008),
		call(0xf00, 0x7000), call(0x600, 0x6f00), rd(A+24, 8), ret(0x6f08), ret(0x7008),
	}
	p := runWorked(t, m, sim.Options{Attribute: true}, events, workedPCs(events, 0xf10, 0x610))
	var got *profile.Strides
	for _, pr := range p.Pairs {
		if pr.Function == "0x600" {
			got = pr.Strides
		}
	}
	want := &profile.Strides{Samples: 3, Top: []profile.Stride{{Bytes: 8, Count: 3}}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("strides of g×A (-want +got):\n%s", d)
	}
}

// A reference's evictor list at a cache name covers the private caches of
// every processor together: each evicting reference once, the
// profile.MaxRefEvictors most frequent named and the rest added up in one
// "other" entry. Two processors each read line A at one PC and then
// twelve conflicting lines at twelve PCs, evicting A's fill each time.
func TestEvictorListsOverProcessors(t *testing.T) {
	m := mach(hc("L1D", 1, 1, 1, 64, machine.LRU))
	m.Processors = 2
	h, err := sim.New(m, sim.Options{Attribute: true})
	if err != nil {
		t.Fatal(err)
	}
	const pcA, evictors = 0x400000, 12
	b := trace.NewBatch(64)
	for tid := range uint32(2) {
		b.Reset()
		for k := range uint64(evictors) {
			b.Append(trace.Read, 0x10000, 8, pcA, tid+1)
			b.Append(trace.Read, 0x20000+64*k, 8, 0x400100+4*k, tid+1)
		}
		h.Process(b)
	}
	h.Finish()
	p := h.Profile()
	var list []profile.RefEvictor
	for _, r := range p.References {
		if r.PC == pcA {
			list = r.Levels["L1D"].Evictors
		}
	}
	seen := map[[2]string]bool{}
	var named, other uint64
	for _, e := range list {
		k := [2]string{e.Reference, e.Object}
		if seen[k] {
			t.Errorf("evictor %v listed twice: %v", k, list)
		}
		seen[k] = true
		switch {
		case e.Reference == profile.OtherEvictors:
			other += e.Count
		case e.Count != 2:
			t.Errorf("evictor %+v, want one that evicted A once on each processor: %v", e, list)
		default:
			named++
		}
	}
	if named != 8 || other != 2*(evictors-8) {
		t.Errorf("evictors of A: %v, want 8 named and other with %d", list, 2*(evictors-8))
	}
}
