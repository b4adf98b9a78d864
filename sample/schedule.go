package sample

import (
	"fmt"
	"math"
)

// Window is where one time sample lies, in references counted from the
// start of the run: warm-up in [Warm, Start), the sample in [Start, End).
type Window struct{ Warm, Start, End uint64 }

// Schedule places time samples: sample k lies in period k, the references
// [k·Period, (k+1)·Period). It is a pure function of its fields, so that
// the tracer and the engine agree on it (docs/sampling.md gives it as
// arithmetic).
type Schedule struct {
	Period, Length, Warmup uint64
	Jitter                 float64
	Seed                   uint64
}

// Schedule returns the time schedule of s for a run of total references
// (0: unknown, which count= cannot work with).
func (s Spec) Schedule(total uint64) (Schedule, error) {
	sc := Schedule{Length: s.Length, Warmup: s.Warmup, Jitter: s.Jitter, Seed: s.Seed}
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
		sc.Period, sc.Jitter, sc.Warmup = s.Length, 0, 0
	default:
		return sc, fmt.Errorf("--sample %s: no time sampling", s)
	}
	if sc.Length > sc.Period {
		return sc, fmt.Errorf("--sample %s: a sample of %d references does not fit its period of %d", s, sc.Length, sc.Period)
	}
	return sc, nil
}

// Window returns where sample k lies. Without jitter a sample sits in the
// middle of its period; with jitter J its offset is drawn uniformly from
// the middle J of the free room, and its length is Length·(1±J/2·u),
// plus for even k and minus for odd k with the same u, so that every
// pair of samples holds 2·Length references. Warm-up never reaches into
// the previous period.
func (sc Schedule) Window(k uint64) Window {
	base := k * sc.Period
	n := sc.Length
	if sc.Jitter > 0 {
		d := uint64(sc.Jitter / 2 * Unit(sc.Seed, k/2, 0) * float64(sc.Length))
		if k%2 == 0 {
			n = min(n+d, sc.Period)
		} else {
			n -= d
		}
	}
	slack := float64(sc.Period - n)
	off := uint64(((1-sc.Jitter)/2 + sc.Jitter*Unit(sc.Seed, k, 1)) * slack)
	off = min(off, sc.Period-n)
	w := Window{Start: base + off, End: base + off + n}
	w.Warm = base
	if off > sc.Warmup {
		w.Warm = w.Start - sc.Warmup
	}
	return w
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
