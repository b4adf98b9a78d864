package sim_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/profile"
	"github.com/memspy/memspy/sample"
	"github.com/memspy/memspy/sim"
	"github.com/memspy/memspy/trace"
)

func mustSpec(t testing.TB, s string) sample.Spec {
	t.Helper()
	spec, err := sample.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// TestSampledWorked works a time-sampled run out by hand: a direct-mapped
// cache of 4 sets of 16-byte lines, ratio=0.5,length=4: period 8, samples
// at [2, 6) and [10, 14) (the middle of each period).
func TestSampledWorked(t *testing.T) {
	A, B, C, D := uint64(0x00), uint64(0x10), uint64(0x40), uint64(0x20) // A and C share set 0
	ev := []refEvent{
		{Kind: trace.Read, Addr: A, Size: 4}, // 0 off
		{Kind: trace.Read, Addr: B, Size: 4}, // 1 off
		{Kind: trace.Read, Addr: A, Size: 4}, // 2 epoch 1: A misses (0 was not simulated); set 0 not primed: unknown miss
		{Kind: trace.Read, Addr: A, Size: 4}, // 3 known hit
		{Kind: trace.Read, Addr: C, Size: 4}, // 4 miss in set 0, primed by A: known miss (A lived 1, dead 1)
		{Kind: trace.Read, Addr: D, Size: 4}, // 5 miss in set 2, not primed: unknown miss
		{Kind: trace.Read, Addr: A, Size: 4}, // 6 off
		{Kind: trace.Read, Addr: A, Size: 4}, // 7 off
		{Kind: trace.Read, Addr: C, Size: 4}, // 8 off
		{Kind: trace.Read, Addr: B, Size: 4}, // 9 off
		{Kind: trace.Read, Addr: C, Size: 4}, // 10 epoch 2: C hits, a line of epoch 1: unknown hit
		{Kind: trace.Read, Addr: C, Size: 4}, // 11 known hit
		{Kind: trace.Read, Addr: D, Size: 4}, // 12 D hits, a line of epoch 1: unknown hit
		{Kind: trace.Read, Addr: A, Size: 4}, // 13 miss in set 0, primed by C: known miss (C was filled in epoch 1: no generation)
		{Kind: trace.Read, Addr: B, Size: 4}, // 14 off
		{Kind: trace.Read, Addr: B, Size: 4}, // 15 off
	}
	m := mach(hc("L1", 1, 4, 1, 16, machine.LRU))
	p := engineProfile(t, m, sim.Options{Sample: mustSpec(t, "ratio=0.5,length=4")}, ev, 3)
	want := profile.SampledCounts{KnownHits: 2, KnownMisses: 2, UnknownHits: 2, UnknownMisses: 2, LiveTime: 1, DeadTime: 1}
	got := *p.Caches[0].Sampled
	spread := got.Spread
	got.Spread = nil
	if got != want {
		t.Errorf("sampled counts %+v, want %+v", got, want)
	}
	// Each sample: 4 references, 1 known miss, 2 unknown.
	wantSpread := profile.Spread{Samples: 2, NN: 32, KK: 2, UU: 8, KN: 8, UN: 16, KU: 4}
	if spread == nil || *spread != wantSpread {
		t.Errorf("spread %+v, want %+v", spread, wantSpread)
	}
	if c := p.Caches[0]; c.Accesses != 8 || c.Misses != 4 {
		t.Errorf("accesses %d misses %d, want 8 and 4", c.Accesses, c.Misses)
	}
	s := p.Sampling
	if s == nil || s.Counted != 8 || s.Seen != 16 || s.Samples != 2 || s.Ratio() != 0.5 {
		t.Fatalf("sampling %+v, want 8 of 16 counted in 2 samples", s)
	}
	est, lo, hi := p.Caches[0].Sampled.Estimate(0.5)
	if est != 0.5 || lo != 0.25 || hi != 0.75 {
		t.Errorf("estimate %v [%v, %v], want 0.5 [0.25, 0.75]", est, lo, hi)
	}
	if mu, ok := p.Caches[0].Sampled.DeadMu(); !ok || mu != 0.5 {
		t.Errorf("dead mu %v (%v), want 0.5", mu, ok)
	}
}

// TestSampledWarmup: warm-up references prime the sets and count nothing.
func TestSampledWarmup(t *testing.T) {
	A, C := uint64(0x00), uint64(0x40)
	var ev []refEvent
	for _, a := range []uint64{A, A, C, C, A, C, A, A, C, C, A, C} {
		ev = append(ev, refEvent{Kind: trace.Read, Addr: a, Size: 4})
	}
	m := mach(hc("L1", 1, 4, 1, 16, machine.LRU))
	// Period 12, length 4, starts at 4: warm-up [2, 4), sample [4, 8).
	p := engineProfile(t, m, sim.Options{Sample: mustSpec(t, "ratio=0.3333333333333333,length=4,warmup=2")}, ev, 0)
	// Warm-up 2: C miss (fills), 3: C hit. Sample: 4 A miss (set primed
	// by C: known), 5 C known miss, 6 A known miss, 7 A known hit.
	want := profile.SampledCounts{KnownHits: 1, KnownMisses: 3}
	got := *p.Caches[0].Sampled
	got.LiveTime, got.DeadTime, got.Spread = 0, 0, nil
	if got != want || p.Caches[0].Accesses != 4 || p.Caches[0].Misses != 3 {
		t.Errorf("got %+v, %d accesses, %d misses; want %+v, 4, 3", got, p.Caches[0].Accesses, p.Caches[0].Misses, want)
	}
	if s := p.Sampling; s.Warmed != 2 || s.Counted != 4 {
		t.Errorf("warmed %d counted %d, want 2 and 4", s.Warmed, s.Counted)
	}
}

// TestSampledDifferential checks on random machines and traces that
// sampling at ratio 1 changes nothing, that the known and unknown counts
// add up to the accesses, and that the references counted are the
// sample's.
func TestSampledDifferential(t *testing.T) {
	n := envUint("MEMSPY_SAMPLE_CASES", 300)
	for seed := range n {
		ch := rngChooser{rand.New(rand.NewPCG(seed, 61))}
		m := genMachine(ch, false, false)
		events := genTrace(ch, m, 400)
		full := engineProfile(t, m, sim.Options{}, events, 0)
		one := engineProfile(t, m, sim.Options{Sample: mustSpec(t, "ratio=1,length=7")}, events, seed)
		ignore := cmpopts.IgnoreFields(profile.CacheStats{}, "Sampled")
		if d := cmp.Diff(full.Caches, one.Caches, ignore); d != "" {
			t.Fatalf("seed %d: ratio=1 differs from the full run (-full +sampled):\n%s\nmachine: %s", seed, d, describeMachine(m))
		}
		for _, c := range one.Caches {
			if c.Sampled.Unknown() != 0 {
				t.Fatalf("seed %d: ratio=1 has unknown references in %s: %+v", seed, c.Name, c.Sampled)
			}
		}
		spec := mustSpec(t, []string{"ratio=0.25,length=13,first=3", "ratio=0.1,length=5,jitter=1,seed=3", "count=4,ratio=0.3,warmup=3,first=2",
			"sets=1/2", "sets=1/4,vary,length=20", "ratio=0.5,length=9,sets=1/2"}[seed%6])
		p := engineProfile(t, m, sim.Options{Sample: spec, SampleTotal: uint64(len(events))}, events, seed)
		for _, c := range p.Caches {
			s := c.Sampled
			if s.KnownHits+s.KnownMisses+s.UnknownHits+s.UnknownMisses != c.Accesses || s.KnownMisses+s.UnknownMisses != c.Misses {
				t.Fatalf("seed %d (%s): cache %s: %+v do not add up to %d accesses, %d misses\nmachine: %s", seed, spec, c.Name, s, c.Accesses, c.Misses, describeMachine(m))
			}
		}
		var refs uint64
		for k, n := range p.EventsByKind {
			if k == "read" || k == "write" || k == "modify" || k == "ifetch" || k == "misc" {
				refs += n
			}
		}
		if refs != p.Sampling.Counted {
			t.Fatalf("seed %d (%s): %d references simulated, sampling counted %d", seed, spec, refs, p.Sampling.Counted)
		}
	}
}

// TestSampledBoundsLRU checks that, in one LRU cache, the sample's true
// misses (from a full simulation, reference by reference) lie within the
// known misses and the known misses plus the unknown references, and the
// true hits within the same bounds from the other side.
func TestSampledBoundsLRU(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 5))
		c := hc("L1", 1, 1<<rng.IntN(4), 1+rng.IntN(4), 16, machine.LRU)
		c.WriteAllocate = rng.IntN(3) > 0
		m := mach(c)
		var ev []refEvent
		for range 200 + rng.IntN(800) {
			k := trace.Read
			if rng.IntN(4) == 0 {
				k = trace.Write
			}
			ev = append(ev, refEvent{Kind: k, Addr: uint64(rng.IntN(64)) * 8, Size: 8})
		}
		spec := mustSpec(t, []string{"ratio=0.2,length=17,first=4", "ratio=0.1,length=30,jitter=0.5,seed=9", "ratio=0.3,length=11,warmup=4"}[seed%3])
		p := engineProfile(t, m, sim.Options{Sample: spec}, ev, seed)
		// The truth: each reference's outcome in a full simulation, summed
		// over the references a gate like the engine's counts (one L1
		// access each).
		counted, trueMiss := countedTruth(t, m, spec, ev)
		s := p.Caches[0].Sampled
		if counted != p.Caches[0].Accesses {
			t.Fatalf("seed %d: %d counted references, the sampled run has %d accesses", seed, counted, p.Caches[0].Accesses)
		}
		if trueMiss < s.KnownMisses || trueMiss > s.KnownMisses+s.Unknown() || counted-trueMiss < s.KnownHits {
			t.Fatalf("seed %d (%s, %d sets × %d): %d true misses of %d outside %+v", seed, spec, c.Sets, c.Assoc, trueMiss, counted, s)
		}
	}
}

// TestSetSamplingExact: sampling 1/4 of the sets gives exactly what the
// full simulation gives on the references to those sets.
func TestSetSamplingExact(t *testing.T) {
	for seed := range uint64(100) {
		rng := rand.New(rand.NewPCG(seed, 8))
		l1 := hc("L1", 1, 4<<rng.IntN(3), 1+rng.IntN(4), 32, machine.LRU)
		l2 := hc("L2", 2, 16<<rng.IntN(2), 2+rng.IntN(4), 32, []machine.Replacement{machine.LRU, machine.FIFO}[rng.IntN(2)])
		m := mach(l1, l2)
		var ev []refEvent
		for range 500 {
			ev = append(ev, refEvent{Kind: []trace.Kind{trace.Read, trace.Write, trace.Modify}[rng.IntN(3)], Addr: uint64(rng.IntN(4096)) &^ 3, Size: 4})
		}
		spec := mustSpec(t, fmt.Sprintf("sets=1/4,seed=%d", seed))
		p := engineProfile(t, m, sim.Options{Sample: spec}, ev, seed)
		g, err := sample.NewGate(spec, 0, 5)
		if err != nil {
			t.Fatal(err)
		}
		var in []refEvent
		for _, e := range ev {
			if g.SetIn(e.Addr) {
				in = append(in, e)
			}
		}
		full := engineProfile(t, m, sim.Options{}, in, 0)
		ignore := cmpopts.IgnoreFields(profile.CacheStats{}, "Sampled")
		if d := cmp.Diff(full.Caches, p.Caches, ignore); d != "" {
			t.Fatalf("seed %d: set sampling differs from the sampled sets' references (-full +sampled):\n%s", seed, d)
		}
	}
}

// TestSampleShadow: the shadow run simulates everything and counts what
// the sampled run counts, which a reference-by-reference full run confirms.
func TestSampleShadow(t *testing.T) {
	for seed := range uint64(50) {
		rng := rand.New(rand.NewPCG(seed, 11))
		m := mach(hc("L1", 1, 4, 2, 16, machine.LRU), hc("L2", 2, 8, 4, 16, machine.FIFO))
		var ev []refEvent
		for range 600 {
			ev = append(ev, refEvent{Kind: []trace.Kind{trace.Read, trace.Write}[rng.IntN(2)], Addr: uint64(rng.IntN(128)) * 8, Size: 8})
		}
		spec := mustSpec(t, []string{"ratio=0.2,length=23,jitter=0.7,seed=4,first=3", "sets=1/2,seed=7", "sets=1/4,vary,length=40"}[seed%3])
		p := engineProfile(t, m, sim.Options{Sample: spec, SampleShadow: true}, ev, seed)
		acc, miss := countedTruth(t, m, spec, ev)
		if c := p.Caches[0]; c.Accesses != acc || c.Misses != miss || c.Sampled.Unknown() != 0 {
			t.Fatalf("seed %d (%s): shadow L1 %d accesses %d misses %+v, want %d and %d, all known", seed, spec, c.Accesses, c.Misses, c.Sampled, acc, miss)
		}
	}
}

// countedTruth simulates ev fully, reference by reference, and sums the
// L1 accesses and misses of the references that a gate of spec counts
// (in a sample and in the sampled sets).
func countedTruth(t *testing.T, m *machine.Machine, spec sample.Spec, ev []refEvent) (acc, miss uint64) {
	t.Helper()
	h, err := sim.New(m, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := sample.NewGate(spec, 0, 4)
	if err != nil {
		t.Fatal(err)
	}
	b := trace.NewBatch(1)
	for _, e := range ev {
		before := h.Profile().Caches[0]
		b.Reset()
		b.Append(e.Kind, e.Addr, e.Size, 0, 0)
		h.Process(b)
		if g.Ref(1) == sample.On && g.SetIn(e.Addr) {
			after := h.Profile().Caches[0]
			acc += after.Accesses - before.Accesses
			miss += after.Misses - before.Misses
		}
	}
	return acc, miss
}

// TestSampledBypass checks on random machines and traces that the sampled
// hit bypass and plainRef on levels that estimate change nothing: every
// profile, sampled counts and their spread included, is the one refLine
// alone gives; with attribution too (every counter of the where-and-why
// profile), on traces of several threads.
func TestSampledBypass(t *testing.T) {
	n := envUint("MEMSPY_SAMPLE_CASES", 300)
	specs := []string{"ratio=0.25,length=13,first=3", "ratio=0.1,length=5,jitter=1,seed=3", "count=4,ratio=0.3,warmup=3,first=2",
		"sets=1/2", "sets=1/4,vary,length=20", "ratio=0.5,length=9,sets=1/2", "ratio=1,length=7", "timesteps=50%"}
	for seed := range n {
		ch := rngChooser{rand.New(rand.NewPCG(seed, 67))}
		m := genMachine(ch, seed%3 == 0, false)
		events := genTrace(ch, m, 600)
		if seed%2 == 0 {
			// Twice the first cache: lines hit, then replaced within a
			// sample (the live and dead times).
			fold := 2 * uint64(m.Caches[0].Size)
			for i := range events {
				if !events[i].Kind.IsExtended() {
					events[i].Addr %= fold
				}
			}
		}
		spec := specs[seed%uint64(len(specs))]
		opt := sim.Options{Sample: mustSpec(t, spec), SampleTotal: uint64(len(events)), Classify: seed%3 == 0}
		if seed%4 == 1 {
			opt.Attribute, opt.MissOnly = true, seed%8 == 5
			// Runs of three threads on the one processor: the bypass
			// takes those of the thread whose calling context holds.
			var tid uint32
			for i := range events {
				if ch.intn(6) == 0 {
					tid = uint32(ch.intn(3))
				}
				events[i].Thread = tid
			}
		}
		fast := engineProfile(t, m, opt, events, seed)
		old := sim.SetSampledShortcuts(false)
		slow := engineProfile(t, m, opt, events, seed)
		sim.SetSampledShortcuts(old)
		if d := cmp.Diff(slow, fast); d != "" {
			t.Fatalf("seed %d (%s): the bypass changes the profile (-slow +bypass):\n%s\nmachine: %s", seed, spec, d, describeMachine(m))
		}
	}
}

// TestSampledMaintenance: cache maintenance between samples is left out
// with the references there; within a sample it counts. Dirty lines are
// written back at the end of the run.
func TestSampledMaintenance(t *testing.T) {
	A, B := uint64(0x00), uint64(0x10)
	ev := []refEvent{
		{Kind: trace.Read, Addr: B, Size: 4},       // 0 off
		{Kind: trace.Read, Addr: B, Size: 4},       // 1 off
		{Kind: trace.Write, Addr: A, Size: 4},      // 2 sample: A dirty
		{Kind: trace.Write, Addr: B, Size: 4},      // 3 B dirty
		{Kind: trace.CopyBack, Addr: B, Size: 4},   // within the sample: B written back
		{Kind: trace.Read, Addr: A, Size: 4},       // 4
		{Kind: trace.Read, Addr: A, Size: 4},       // 5
		{Kind: trace.Read, Addr: B, Size: 4},       // 6 off
		{Kind: trace.Invalidate, Addr: A, Size: 4}, // between samples: left out
		{Kind: trace.Read, Addr: B, Size: 4},       // 7 off
	}
	m := mach(hc("L1", 1, 4, 1, 16, machine.LRU))
	spec := mustSpec(t, "ratio=0.5,length=4")
	p := engineProfile(t, m, sim.Options{Sample: spec}, ev, 0)
	if c := p.Caches[0]; c.Writebacks != 2 {
		t.Errorf("%d write-backs, want 2 (B's copy-back, A at the end)", c.Writebacks)
	}
	if n, m := p.EventsByKind["copyback"], p.EventsByKind["invalidate"]; n != 1 || m != 0 {
		t.Errorf("%d copy-backs and %d invalidations simulated, want 1 and 0", n, m)
	}
	// The shadow run simulates the invalidation without counting it: A
	// is not written back.
	p = engineProfile(t, m, sim.Options{Sample: spec, SampleShadow: true}, ev, 0)
	if c := p.Caches[0]; c.Writebacks != 1 || p.EventsByKind["invalidate"] != 0 {
		t.Errorf("shadow: %d write-backs and %d invalidations counted, want 1 and 0", c.Writebacks, p.EventsByKind["invalidate"])
	}
}
