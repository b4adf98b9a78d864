package sim_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/profile"
	"github.com/memspy/memspy/sample"
	"github.com/memspy/memspy/sim"
	"github.com/memspy/memspy/trace"
)

// TestWarmupAttributionWorked works out by hand a time sample with a
// warm-up under attribution: a direct-mapped cache of 4 sets of 64-byte
// lines, ratio=0.5,length=10,warmup=10: period 20, the sample at [5, 15),
// its warm-up from the run's start at [0, 5), then [15, 20) left out. The
// warm-up's references fill lines, touch bytes and move the strides' last
// addresses; they count nothing.
func TestWarmupAttributionWorked(t *testing.T) {
	const A, B = 0x10000, 0x20000 // the same sets
	alloc := func(a, site uint64) refEvent {
		return refEvent{Kind: trace.Alloc, Addr: a, Ext: trace.Ext{Size: 256, Stack: []uint64{site}, Name: "malloc"}}
	}
	const pf, pg = 0xf10, 0x610 // the PCs of the references in f and in g
	events := []refEvent{
		alloc(A, 0xa00),
		alloc(B, 0xb00),
		{Kind: trace.Call, Addr: 0xf00, Ext: trace.Ext{SP: 0x7000}}, // f
		// Warm-up.
		rd(A, 8),         // f×A fills set 0
		rd(A+8, 8),       // f×A hit
		rd(B+0x40, 8),    // f×B fills set 1
		ifc(0x4001c0, 4), // f×<code> fills set 3
		rd(A+0x10, 8),    // f×A hit: its last address
		rd(A+0x18, 8),    // 5 f×A spatial hit, stride 8
		rd(A+8, 8),       // 6 f×A temporal hit (from the warm-up), stride -16
		ifc(0x4001c4, 4), // 7 f×<code> spatial hit: an instruction of f
		rd(B, 8),         // 8 f×B cold, stride -64; evicts A's line (32 bytes used, filled in the warm-up)
		rd(A, 8),         // 9 f×A replacement, stride -8; evicts B's (8 bytes used)
		{Kind: trace.Call, Addr: 0x600, Ext: trace.Ext{SP: 0x6f00}}, // g
		rd(A+0x40, 8), // 10 g×A cold; evicts f×B's line of the warm-up (8 bytes used)
		rd(A+0x48, 8), // 11 g×A spatial hit, stride 8
		{Kind: trace.Return, Ext: trace.Ext{SP: 0x6f08}}, // back in f
		rd(B+0x80, 8), // 12 f×B cold, stride 128
		wr(A, 8),      // 13 f×A temporal hit, stride 0
		rd(B+0xc0, 8), // 14 f×B cold, stride 64; evicts f×<code>'s line (8 bytes used)
		// Left out.
		rd(A+0x80, 8), rd(A+0x80, 8), rd(B+0x80, 8), wr(B, 8), rd(A+0xc0, 8),
	}
	pcs := workedPCs(events, pf, pg)
	m := mach(hc("L1", 1, 4, 1, 64, machine.LRU))
	spec := mustSpec(t, "ratio=0.5,length=10,warmup=10")
	p := runWorked(t, m, sim.Options{Attribute: true, Sample: spec}, events, pcs)
	if s := p.Sampling; s.Warmed != 5 || s.Counted != 10 || s.Seen != 20 {
		t.Errorf("warmed %d, counted %d, seen %d; want 5, 10 and 20", s.Warmed, s.Counted, s.Seen)
	}
	c := p.Caches[0]
	// At the end, A's dirty line in set 0 is written back; the resident
	// lines count their use: set 0 (f×A, 8 bytes), 1 (g×A, 16), 2 and 3
	// (f×B, 8 each).
	if c.Accesses != 10 || c.Misses != 5 || c.Evictions != 4 || c.Writebacks != 1 || *c.Causes != (profile.Causes{Cold: 4, Replacement: 1}) {
		t.Errorf("L1: %d accesses, %d misses, %d evictions, %d write-backs, causes %+v", c.Accesses, c.Misses, c.Evictions, c.Writebacks, *c.Causes)
	}
	if c.Sampled.Unknown() != 0 {
		t.Errorf("unknown outcomes %+v: nothing was left out before the sample", c.Sampled)
	}
	const a, b, code = "heap@0xa00", "heap@0xb00", "<code>"
	type row struct {
		Name                                    string
		Acc, Hits, Misses, Cold, Repl           uint64
		Temporal, Spatial, Used, Fetched, Stall uint64
		EvictedBy                               map[string]uint64
		Strides                                 *profile.Strides
	}
	mk := func(name string, s *profile.Stats, st *profile.Strides) row {
		return row{name, s.Accesses, s.Hits, s.Misses, s.Causes.Cold, s.Causes.Replacement,
			s.TemporalHits, s.SpatialHits, s.UsedBytes, s.FetchedBytes, s.StallCycles, s.EvictedBy, st}
	}
	var pairs []row
	for _, pr := range p.Pairs {
		pairs = append(pairs, mk(pr.Function+"×"+pr.Object, &pr.Stats, pr.Strides))
	}
	strides := func(top ...profile.Stride) *profile.Strides {
		n := uint64(0)
		for _, s := range top {
			n += s.Count
		}
		return &profile.Strides{Samples: n, Top: top}
	}
	wantPairs := []row{
		{Name: "0xf00×" + b, Acc: 3, Misses: 3, Cold: 3, Used: 8 + 8 + 8 + 8, Fetched: 256, Stall: 300, EvictedBy: map[string]uint64{a: 2},
			Strides: strides(profile.Stride{Bytes: -64, Count: 1}, profile.Stride{Bytes: 64, Count: 1}, profile.Stride{Bytes: 128, Count: 1})},
		{Name: "0xf00×" + a, Acc: 4, Hits: 3, Misses: 1, Repl: 1, Temporal: 2, Spatial: 1, Used: 32 + 8, Fetched: 128, Stall: 100, EvictedBy: map[string]uint64{b: 1},
			Strides: strides(profile.Stride{Bytes: -16, Count: 1}, profile.Stride{Bytes: -8, Count: 1}, profile.Stride{Bytes: 0, Count: 1}, profile.Stride{Bytes: 8, Count: 1})},
		{Name: "0x600×" + a, Acc: 2, Hits: 1, Misses: 1, Cold: 1, Spatial: 1, Used: 16, Fetched: 64, Stall: 100,
			Strides: strides(profile.Stride{Bytes: 8, Count: 1})},
		{Name: "0xf00×" + code, Acc: 1, Hits: 1, Spatial: 1, Used: 8, Fetched: 64, EvictedBy: map[string]uint64{b: 1}},
	}
	if d := cmp.Diff(wantPairs, pairs); d != "" {
		t.Errorf("pairs (-want +got):\n%s", d)
	}
	for _, f := range p.Functions {
		if want := map[string]uint64{"0xf00": 1}[f.Name]; f.Instructions != want {
			t.Errorf("%s: %d instructions, want %d", f.Name, f.Instructions, want)
		}
	}

	// The same counts from replaying the simulated events with a reset
	// marker where the sample begins (a reset forgets the strides' last
	// addresses, so they differ), and from the shadow run without a
	// warm-up, which simulates the references left out before and after
	// the sample (none here after it) and counts the same.
	var replay []refEvent
	var replayPCs []uint64
	refs, simulated := 0, len(events)
	for i, e := range events {
		if !e.Kind.IsExtended() {
			if refs == 5 {
				replay, replayPCs = append(replay, mark(trace.MarkReset, "")), append(replayPCs, 0)
			}
			if refs++; refs > 15 {
				simulated = i
				break
			}
		}
		replay, replayPCs = append(replay, e), append(replayPCs, pcs[i])
	}
	want := runWorked(t, m, sim.Options{Attribute: true}, replay, replayPCs)
	ignore := []cmp.Option{
		cmpopts.IgnoreFields(profile.Profile{}, "Sampling", "Resets", "Timeline"), // (no timeline when sampling)
		cmpopts.IgnoreFields(profile.CacheStats{}, "Sampled"),
		cmpopts.IgnoreFields(profile.Pair{}, "Strides"),
		cmpopts.IgnoreFields(profile.Reference{}, "Strides"),
	}
	if d := cmp.Diff(want, p, ignore...); d != "" {
		t.Errorf("the sample with its warm-up differs from the replay with a reset (-replay +sampled):\n%s", d)
	}
	shadow := runWorked(t, m, sim.Options{Attribute: true, Sample: mustSpec(t, "ratio=0.5,length=10"), SampleShadow: true}, events[:simulated], pcs)
	if d := cmp.Diff(p, shadow, cmpopts.IgnoreFields(profile.Profile{}, "Sampling"), cmpopts.IgnoreFields(profile.CacheStats{}, "Sampled")); d != "" {
		t.Errorf("the shadow run differs (-warm-up +shadow):\n%s", d)
	}
}

// warmupSpecs are time samples with warm-ups, alone and with set
// sampling.
var warmupSpecs = []string{
	"ratio=0.25,length=13,warmup=5,first=3",
	"count=4,ratio=0.3,warmup=3",
	"ratio=0.1,length=5,jitter=1,seed=3,warmup=20,first=5",
	"ratio=0.3,length=11,warmup=100",
	"ratio=0.5,length=9,sets=1/2,warmup=4",
}

// TestWarmupAttributedTotals checks on random machines (one processor or
// several, NUMA nodes or not) and traces that, with warm-ups, the
// attributed counters add up to the caches' (checkAttribution), and that
// attributing changes no cache, memory, processor or NUMA total of the
// sampled run, nor of its shadow run.
func TestWarmupAttributedTotals(t *testing.T) {
	n := envUint("MEMSPY_SAMPLE_CASES", 300)
	warmed := uint64(0)
	for seed := range n {
		ch := rngChooser{rand.New(rand.NewPCG(seed, 67))}
		m := genMachine(ch, false, seed%3 == 0)
		if m.Processors > 1 && pick(ch, 1, 2) {
			m.Nodes, m.Placement, m.PageSize = 2, machine.Placements[ch.intn(3)], 256
			m.RemoteLatency, m.RemoteDirtyLatency = 200, 300
		}
		events := genTrace(ch, m, 600)
		spec := mustSpec(t, warmupSpecs[seed%uint64(len(warmupSpecs))])
		opt := sim.Options{Sample: spec, SampleTotal: uint64(len(events)), SampleShadow: pick(ch, 1, 4)}
		plain := engineProfile(t, m, opt, events, seed)
		opt.Attribute, opt.MissOnly = true, pick(ch, 1, 3)
		p := engineProfile(t, m, opt, events, seed)
		checkAttribution(t, p)
		if t.Failed() {
			t.Fatalf("seed %d (%s, shadow %t): the attribution does not add up\nmachine: %s", seed, spec, opt.SampleShadow, describeMachine(m))
		}
		if plain.Sampling.Warmed > 0 {
			warmed++
		}
		ignore := cmpopts.IgnoreFields(profile.CacheStats{}, "Causes")
		for _, d := range []string{
			cmp.Diff(plain.Caches, p.Caches, ignore),
			cmp.Diff(plain.Memory, p.Memory),
			cmp.Diff(plain.Processors, p.Processors),
			cmp.Diff(plain.Sampling, p.Sampling),
		} {
			if d != "" {
				t.Fatalf("seed %d (%s, shadow %t): attributing changes the totals (-plain +attributed):\n%s\nmachine: %s", seed, spec, opt.SampleShadow, d, describeMachine(m))
			}
		}
		if p.Numa == nil {
			continue
		}
		if d := cmp.Diff(plain.Numa.Processors, p.Numa.Processors); d != "" {
			t.Fatalf("seed %d (%s): attributing changes the NUMA counts (-plain +attributed):\n%s", seed, spec, d)
		}
		var byObject, byProc uint64
		for _, o := range p.Numa.Objects {
			byObject += o.Misses()
		}
		for _, c := range p.Numa.Processors {
			byProc += c.Misses()
		}
		if byObject != byProc {
			t.Fatalf("seed %d (%s): NUMA misses %d by object, %d by processor", seed, spec, byObject, byProc)
		}
	}
	if 2*warmed < n {
		t.Errorf("%d of %d cases warmed up", warmed, n)
	}
}

// TestWarmupReplay checks on random machines and traces that a run whose
// one sample's warm-up starts with the run (nothing left out before it:
// every outcome known) counts what the simulated events count when
// replayed in full with a reset marker where the sample begins (but for
// the strides: a reset forgets their last addresses, a warm-up does not),
// and exactly what the shadow run without a warm-up counts when the
// references after the sample are left out.
func TestWarmupReplay(t *testing.T) {
	n := envUint("MEMSPY_SAMPLE_CASES", 300)
	for seed := range n {
		ch := rngChooser{rand.New(rand.NewPCG(seed, 71))}
		parallel := seed%3 == 0
		classify := !parallel && pick(ch, 1, 3)
		m := genMachine(ch, classify, parallel)
		if parallel && pick(ch, 1, 2) {
			m.Nodes, m.Placement, m.PageSize = 2, machine.Placements[ch.intn(3)], 256
			m.RemoteLatency, m.RemoteDirtyLatency = 200, 300
		}
		events := genTrace(ch, m, 600)
		// The warm-up begins with its first reference: cache maintenance
		// before it counts, and the replay's reset would not count it.
		first := slices.IndexFunc(events, func(e refEvent) bool { return e.Kind.IsAccess() })
		if first < 0 {
			first = len(events)
		}
		var kept []refEvent
		for i, e := range events {
			if i >= first || e.Kind.IsExtended() {
				kept = append(kept, e)
			}
		}
		events = kept
		refs := 0
		for _, e := range events {
			if e.Kind.IsAccess() {
				refs++
			}
		}
		length := refs/2 + 1 + ch.intn(refs/2+1) // the next sample's warm-up begins at 2·length
		spec := mustSpec(t, fmt.Sprintf("ratio=0.5,length=%d,warmup=%d", length, length))
		g, err := sample.NewGate(spec, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		// Each reference keeps its PC (its index in events) in the replay
		// and the shadow run.
		pcs := make([]uint64, len(events))
		for i := range pcs {
			pcs[i] = 0x400000 + uint64(i%7)*4
		}
		var replay, simulated []refEvent
		var replayPCs, simulatedPCs []uint64
		began := false
		for i, e := range events {
			if e.Kind.IsAccess() {
				ph := g.Ref(1)
				if ph == sample.Off {
					// Left out, but its thread is placed on a processor.
					e = refEvent{Kind: trace.Marker, Ext: trace.Ext{Mark: trace.MarkStart}, Thread: e.Thread}
				}
				if ph == sample.On && !began {
					reset := mark(trace.MarkReset, "")
					reset.Thread = e.Thread // places no other thread
					replay, replayPCs, began = append(replay, reset), append(replayPCs, 0), true
				}
			} else if (e.Kind == trace.CopyBack || e.Kind == trace.Invalidate) && g.Phase() == sample.Off {
				// Left out between samples, as references are.
				e = refEvent{Kind: trace.Marker, Ext: trace.Ext{Mark: trace.MarkStart}, Thread: e.Thread}
			}
			replay, replayPCs = append(replay, e), append(replayPCs, pcs[i])
			simulated, simulatedPCs = append(simulated, e), append(simulatedPCs, pcs[i])
		}
		if !began && len(events) > 0 {
			reset := mark(trace.MarkReset, "")
			reset.Thread = events[len(events)-1].Thread
			replay, replayPCs = append(replay, reset), append(replayPCs, 0)
		}
		opt := sim.Options{Classify: classify, Attribute: true, MissOnly: pick(ch, 1, 4)}
		want := profileWithPCs(t, m, opt, replay, replayPCs, seed)
		opt.Sample = spec
		p := profileWithPCs(t, m, opt, events, pcs, seed)
		ignore := []cmp.Option{
			cmpopts.IgnoreFields(profile.Profile{}, "Sampling", "Resets", "Dumps", "Timeline"), // (no timeline when sampling)
			cmpopts.IgnoreFields(profile.CacheStats{}, "Sampled"),
			cmpopts.IgnoreFields(profile.Pair{}, "Strides"),
			cmpopts.IgnoreFields(profile.Reference{}, "Strides"),
		}
		if d := cmp.Diff(want, p, ignore...); d != "" {
			t.Fatalf("seed %d (%s): the sample with its warm-up differs from the replay with a reset (-replay +sampled):\n%s\nmachine: %s\nevents:\n%s",
				seed, spec, d, describeMachine(m), formatEvents(events))
		}
		if u := p.Caches[0].Sampled.Unknown(); u != 0 {
			t.Fatalf("seed %d (%s): %d unknown outcomes in %s", seed, spec, u, p.Caches[0].Name)
		}
		opt.Sample, opt.SampleShadow = mustSpec(t, fmt.Sprintf("ratio=0.5,length=%d", length)), true
		shadow := profileWithPCs(t, m, opt, simulated, simulatedPCs, seed)
		if d := cmp.Diff(p, shadow, cmpopts.IgnoreFields(profile.Profile{}, "Sampling"), cmpopts.IgnoreFields(profile.CacheStats{}, "Sampled")); d != "" {
			t.Fatalf("seed %d (%s): the shadow run differs (-warm-up +shadow):\n%s\nmachine: %s", seed, spec, d, describeMachine(m))
		}
	}
}

// profileWithPCs is engineProfile with the PC of each event given.
func profileWithPCs(t *testing.T, m *machine.Machine, opt sim.Options, events []refEvent, pcs []uint64, batchSeed uint64) *profile.Profile {
	t.Helper()
	h, err := sim.New(m, opt)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(batchSeed, 7))
	b := trace.NewBatch(64)
	for i := 0; i < len(events); {
		n := min(len(events)-i, 1+rng.IntN(64))
		b.Reset()
		for j, e := range events[i : i+n] {
			if e.Kind.IsExtended() {
				b.AppendExt(e.Kind, e.Addr, pcs[i+j], e.Thread, e.Ext)
			} else {
				b.Append(e.Kind, e.Addr, e.Size, pcs[i+j], e.Thread)
			}
		}
		h.Process(b)
		i += n
	}
	h.Finish()
	return h.Profile()
}
