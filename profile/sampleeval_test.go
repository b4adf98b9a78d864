package profile

import (
	"math"
	"testing"

	"github.com/memspy/memspy/machine"
)

// TestEvaluate works an evaluation out by hand: two caches, three objects
// and two functions.
func TestEvaluate(t *testing.T) {
	m := &machine.Machine{Caches: []machine.Cache{{Name: "L1", Size: 4096}, {Name: "L2", Size: 65536}}}
	full := &Profile{Machine: m,
		Caches: []CacheStats{{Name: "L1", Accesses: 1000, Misses: 100}, {Name: "L2", Accesses: 100, Misses: 40}},
		Objects: []Object{{Name: "a", Stats: Stats{StallCycles: 600}}, {Name: "b", Stats: Stats{StallCycles: 300}},
			{Name: "c", Stats: Stats{StallCycles: 100}}},
		Functions: []Function{{Name: "f", Stats: Stats{StallCycles: 700}}, {Name: "g", Stats: Stats{StallCycles: 300}}},
	}
	// The sample counts 100 of the 1,000 references; at L1, 80 known hits,
	// 8 known misses and 12 unknown (estimate (8 + 0.5·12)/100 = 14%,
	// bounds 8% and 20%); at L2 (20 references), all 20 unknown.
	sampled := &Profile{Machine: m,
		Sampling: &Sampling{Spec: "ratio=0.1", Counted: 100, Seen: 1000, Mu: 0.5},
		Caches: []CacheStats{{Name: "L1", Sampled: &SampledCounts{KnownHits: 80, KnownMisses: 8, UnknownHits: 2, UnknownMisses: 10}},
			{Name: "L2", Sampled: &SampledCounts{UnknownHits: 5, UnknownMisses: 15}}},
		// b now above a: a reordering of two objects above 10%.
		Objects:   []Object{{Name: "a", Stats: Stats{StallCycles: 30}}, {Name: "b", Stats: Stats{StallCycles: 60}}},
		Functions: []Function{{Name: "f", Stats: Stats{StallCycles: 70}}, {Name: "g", Stats: Stats{StallCycles: 30}}},
	}
	shadow := &Profile{Machine: m, Caches: []CacheStats{{Name: "L1", Accesses: 100, Misses: 15}, {Name: "L2", Accesses: 20, Misses: 10}}}

	ev := Evaluate(full, sampled, shadow, "L1")
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	near("ratio", ev.Ratio, 0.1)
	near("true", ev.TrueMissRate, 0.10)
	near("true in samples", ev.TrueMissRateInSamples, 0.15)
	near("estimate", ev.EstimatedMissRate, 0.14)
	near("lower", ev.Lower, 0.08)
	near("upper", ev.Upper, 0.20)
	near("absolute error", ev.AbsoluteError, 0.04)
	near("relative error", ev.RelativeError, 0.4)
	if !ev.BoundsHold || !ev.BoundsHoldInSamples {
		t.Errorf("bounds hold %v, in samples %v; want both", ev.BoundsHold, ev.BoundsHoldInSamples)
	}
	if len(ev.Caches) != 2 || ev.Caches[0].MissRateEvaluation != ev.MissRateEvaluation ||
		ev.Caches[1].Cache != "L2" || ev.Caches[1].Size != 65536 {
		t.Fatalf("caches %+v", ev.Caches)
	}
	l2 := ev.Caches[1]
	near("L2 estimate", l2.EstimatedMissRate, 0.5)
	near("L2 upper", l2.Upper, 1)
	if !l2.BoundsHold || !l2.BoundsHoldInSamples {
		t.Errorf("L2 %+v: want the bounds to hold", l2)
	}
	// Functions: (700, 300) against (70, 30): the same pattern.
	near("r functions", ev.PearsonFunctions, 1)
	// Objects: (600, 300, 100) against (30, 60, 0).
	ma, mb := 1000.0/3, 90.0/3
	da, db := []float64{600 - ma, 300 - ma, 100 - ma}, []float64{30 - mb, 60 - mb, 0 - mb}
	var sab, saa, sbb float64
	for i := range da {
		sab, saa, sbb = sab+da[i]*db[i], saa+da[i]*da[i], sbb+db[i]*db[i]
	}
	near("r objects", ev.PearsonObjects, sab/math.Sqrt(saa*sbb))
	if len(ev.RankingFull) != 3 || ev.RankingFull[0].Name != "a" || ev.RankingSampled[0].Name != "b" {
		t.Errorf("rankings %+v | %+v", ev.RankingFull, ev.RankingSampled)
	}
	// a > b > c in full; sampled b > a and c (0) below both: one
	// reordering, a and b, both above 10%.
	if len(ev.Reorderings) != 1 || ev.Reorderings[0].Above != "a" || ev.Reorderings[0].Below != "b" || !ev.ReorderedAbove10 {
		t.Errorf("reorderings %+v, above 10%% %v", ev.Reorderings, ev.ReorderedAbove10)
	}

	// a and b within 5% of each other: a near tie, listed but not a
	// reordering that misses the target.
	full.Objects[1].StallCycles = 590
	if ev := Evaluate(full, sampled, shadow, "L1"); len(ev.Reorderings) != 1 || !ev.Reorderings[0].Tie || ev.ReorderedAbove10 {
		t.Errorf("near tie: reorderings %+v, above 10%% %v", ev.Reorderings, ev.ReorderedAbove10)
	}

	// Bounds that miss the truth say so.
	shadow.Caches[0].Misses = 25
	if ev := Evaluate(full, sampled, shadow, "L1"); ev.BoundsHoldInSamples || !ev.BoundsHold {
		t.Errorf("true in samples 25%% outside [8%%, 20%%]: bounds hold %v, in samples %v", ev.BoundsHold, ev.BoundsHoldInSamples)
	}
}

// TestSamplingError works the sampling error out by hand: three samples of
// 100 references with 10, 20 and 30 known misses, a tenth of the run.
func TestSamplingError(t *testing.T) {
	var sp Spread
	for _, k := range []uint64{10, 20, 30} {
		sp.Add(100, k, 0)
	}
	c := &SampledCounts{KnownHits: 240, KnownMisses: 60, Spread: &sp}
	// R = 0.2; Σ(m − R·n)² = 100 + 0 + 100; v = 0.9·200/(3·2·100²).
	se, df, ok := c.SamplingError(0.5, 0.1)
	if want := math.Sqrt(0.9 * 200 / (3 * 2 * 1e4)); !ok || df != 2 || math.Abs(se-want) > 1e-12 {
		t.Fatalf("SamplingError = %v, %d, %v; want %v, 2, true", se, df, ok, want)
	}
	lo, hi, wlo, whi, ok := c.Interval(0.5, 0.1)
	h := 4.303 * se // t for 2 degrees of freedom
	if !ok || math.Abs(lo-0) > 1e-12 || math.Abs(hi-(0.2+h)) > 1e-12 || wlo != 0 || math.Abs(whi-(0.2+h)) > 1e-12 {
		t.Errorf("Interval = %v %v %v %v %v; want 0, %v, 0, %v", lo, hi, wlo, whi, ok, 0.2+h, 0.2+h)
	}

	// Unknown references: each sample 100 references, 10 known misses
	// and u = 0, 20, 40 unknown. μ = 0 gives no spread; μ = 1 the spread
	// of 10, 30, 50 misses.
	sp = Spread{}
	for _, u := range []uint64{0, 20, 40} {
		sp.Add(100, 10, u)
	}
	c = &SampledCounts{KnownMisses: 30, KnownHits: 210, UnknownMisses: 60, Spread: &sp}
	// (The sums cancel in floating point: near 0, not exactly.)
	if se, _, _ := c.SamplingError(0, 0); se > 1e-6 {
		t.Errorf("μ=0: standard error %v, want 0", se)
	}
	se1, _, _ := c.SamplingError(1, 0)
	if want := math.Sqrt(800.0 / (3 * 2 * 1e4)); math.Abs(se1-want) > 1e-12 {
		t.Errorf("μ=1: standard error %v, want %v", se1, want)
	}
	_, _, wlo, whi, _ = c.Interval(0.5, 0)
	if math.Abs(wlo-0.1) > 1e-6 || math.Abs(whi-(0.3+4.303*se1)) > 1e-12 {
		t.Errorf("widened bounds %v to %v, want 0.1 to %v", wlo, whi, 0.3+4.303*se1)
	}

	// One sample: no sampling error.
	if _, _, ok := (&SampledCounts{KnownMisses: 1, Spread: &Spread{Samples: 1}}).SamplingError(0.5, 0.1); ok {
		t.Error("one sample: want no sampling error")
	}
	if TQuantile95(1) != 12.706 || TQuantile95(35) != 2.042 || TQuantile95(5000) != 1.962 {
		t.Error("TQuantile95: wrong table")
	}
}
