package sample

import (
	"fmt"
	"math"
)

// Window is where one time sample lies, in references counted from the
// start of the run: warm-up in [Warm, Start), the sample in [Start, End).
type Window struct{ Warm, Start, End uint64 }

// Schedule places time samples. The first period, references [0, Period),
// is cut into First sub-periods of Period/First references, each with a
// sample of Length/First; after them, sample k lies in period k−First+1,
// the references [j·Period, (j+1)·Period) for j = k−First+1. It is a pure
// function of its fields, so that the tracer and the engine agree on it
// (docs/sampling.md gives it as arithmetic).
type Schedule struct {
	Period, Length, Warmup uint64
	Jitter                 float64
	Seed                   uint64
	First                  uint64 // at least 1 and at most Length
}

// Schedule returns the time schedule of s for a run of total references
// (0: unknown, which count= cannot work with).
func (s Spec) Schedule(total uint64) (Schedule, error) {
	sc := Schedule{Length: s.Length, Warmup: s.Warmup, Jitter: s.Jitter, Seed: s.Seed, First: s.First}
	switch {
	case s.Count > 0:
		if total == 0 {
			return sc, fmt.Errorf("--sample count=%d needs the run's length in references, which is not known here: use ratio= and length=", s.Count)
		}
		sc.Period = max(1, total/uint64(s.Count))
		if sc.Length == 0 {
			sc.Length = max(1, uint64(math.Round(s.Ratio*float64(sc.Period))))
		}
	case s.Ratio > 0:
		sc.Period = uint64(math.Round(float64(s.Length) / s.Ratio))
	case s.Vary:
		// Sets change every Length references; every reference is in a sample.
		sc.Period, sc.Jitter, sc.Warmup, sc.First = s.Length, 0, 0, 1
	default:
		return sc, fmt.Errorf("--sample %s: no time sampling", s)
	}
	if sc.Length > sc.Period {
		return sc, fmt.Errorf("--sample %s: a sample of %d references does not fit its period of %d", s, sc.Length, sc.Period)
	}
	if sc.First == 0 {
		sc.First = min(DefaultFirst, max(1, sc.Length/MinFirstLength))
	}
	sc.First = min(sc.First, sc.Length)
	return sc, nil
}

// Window returns where sample k lies. Without jitter a sample sits in the
// middle of its period (or sub-period); with jitter J its offset is drawn
// uniformly from the middle J of the free room, and its length is
// length·(1±J/2·u), plus for even k and minus for odd k with the same u,
// so that every pair of samples of the same length holds twice that.
// Warm-up never reaches into the previous period.
func (sc Schedule) Window(k uint64) Window {
	period, length := sc.Period, sc.Length
	var base uint64
	if f := max(1, sc.First); k < f {
		period, length = sc.Period/f, sc.Length/f
		base = k * period
	} else {
		base = (k - f + 1) * sc.Period
	}
	n := length
	if sc.Jitter > 0 {
		d := uint64(sc.Jitter / 2 * Unit(sc.Seed, k/2, 0) * float64(length))
		if k%2 == 0 {
			n = min(n+d, period)
		} else {
			n -= d
		}
	}
	slack := float64(period - n)
	off := uint64(((1-sc.Jitter)/2 + sc.Jitter*Unit(sc.Seed, k, 1)) * slack)
	off = min(off, period-n)
	w := Window{Start: base + off, End: base + off + n}
	w.Warm = base
	if off > sc.Warmup {
		w.Warm = w.Start - sc.Warmup
	}
	return w
}

// Next returns the first sample whose period (or sub-period) ends after
// reference p. The references of the first period past its sub-periods
// (fewer than First) lie before sample First, the second period's.
func (sc Schedule) Next(p uint64) uint64 {
	f := max(1, sc.First)
	if p >= sc.Period {
		return p/sc.Period + f - 1
	}
	return min(p/(sc.Period/f), f)
}

// Unit returns a pseudo-random number in [0, 1) drawn from seed and the
// pair (k, stream) by SplitMix64: the same everywhere, in Go and in the
// tracer's C.
func Unit(seed, k, stream uint64) float64 {
	return float64(Mix(seed, k, stream)>>11) / (1 << 53)
}

// Mix returns SplitMix64's output for the state seed + (2k+stream+1)·γ.
func Mix(seed, k, stream uint64) uint64 {
	z := seed + (2*k+stream+1)*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
