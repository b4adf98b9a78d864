// Package sample says which references of a run the engine simulates:
// MemSpy's time, set and processor sampling and SIGMA's timestep sampling.
// A Spec is what the user asked for (--sample); a Schedule places time
// samples; a Gate follows the event stream and answers, reference by
// reference, whether it is simulated. The engine (package sim) applies the
// gate and counts known and unknown references; the estimator (Estimate)
// turns those counts into a miss rate with bounds.
package sample

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Spec is a sampling request. The zero Spec samples nothing (every
// reference is simulated).
type Spec struct {
	// Time sampling: Ratio of the references in samples of Length
	// references each, or Count samples spread over a run of known length.
	// Jitter (0..1) moves each sample at random within its period and
	// varies its length by up to ±Jitter/2 (in pairs, so the ratio
	// stays); Warmup references before each sample are simulated but not
	// counted. Seed makes the jitter reproducible. First is how many
	// samples, each 1/First as long, the first period is sampled in (0:
	// the default, DefaultFirst and MinFirstLength).
	Ratio  float64
	Length uint64
	Count  int
	Jitter float64
	Warmup uint64
	Seed   uint64
	First  uint64
	// Set sampling: the references to SetNum of every SetDen sets (by line
	// address modulo SetDen); with Vary the subset changes every Length
	// references (or at every time sample).
	SetNum, SetDen uint64
	Vary           bool
	// Processor sampling: the references of ProcNum of every ProcDen
	// processors.
	ProcNum, ProcDen uint64
	// Timesteps is the fraction of timesteps (memspy.h sample markers, or
	// calls of TimestepFn) simulated, spread evenly; references outside
	// every timestep (initialization, finalization) are not simulated.
	Timesteps  float64
	TimestepFn string
	// DeadMu (the default) estimates the miss ratio of unknown references
	// from the fraction of time lines spend dead (Wood, Hill and Kessler);
	// Mu is the ratio assumed instead when mu=X is given, and where the
	// estimate cannot be measured (no line died within a sample).
	Mu     float64
	DeadMu bool
}

// Default sample length when only a ratio is given.
const DefaultLength = 500_000

// DefaultFirst is how many shorter samples the first period is sampled in
// by default, as long as each is at least MinFirstLength references (fewer
// otherwise). A run's start (initialization, every line's first touch) is
// where it changes fastest; one sample in the middle of the first period
// would stand for all of it, and misses it. A shorter sample leaves more
// of its references unknown.
const (
	DefaultFirst   = 10
	MinFirstLength = DefaultLength / DefaultFirst
)

// Active reports whether s samples at all.
func (s Spec) Active() bool {
	return s.Time() || s.SetDen > 0 || s.ProcDen > 0 || s.Timesteps > 0
}

// Time reports whether s samples in time (ratio, length or count).
func (s Spec) Time() bool { return s.Ratio > 0 || s.Count > 0 }

// Parse reads a --sample value: comma-separated key=value pairs among
// ratio (0.1 or 10%), length (references: 500k), count, jitter (0..1),
// warmup (references), first (samples in the first period), seed, sets
// (1/16), vary, procs (1/4), timesteps (2.5% or 0.025), timestep-fn (a
// function name) and mu (0..1 or dead).
// The error names the part that is wrong.
func Parse(text string) (Spec, error) {
	s := Spec{Mu: 0.5, DeadMu: true}
	if strings.TrimSpace(text) == "" {
		return s, fmt.Errorf("--sample: empty")
	}
	lengthGiven := false
	for _, part := range strings.Split(text, ",") {
		key, val, hasVal := strings.Cut(strings.TrimSpace(part), "=")
		bad := func(why string) error { return fmt.Errorf("--sample %q: %s", part, why) }
		if !hasVal && key != "vary" {
			return s, bad("want key=value")
		}
		var err error
		switch key {
		case "ratio":
			s.Ratio, err = fraction(val)
			if err == nil && (s.Ratio <= 0 || s.Ratio > 1) {
				err = fmt.Errorf("not in (0, 1]")
			}
		case "length":
			s.Length, err = count(val)
			if err == nil && s.Length == 0 {
				err = fmt.Errorf("must be at least 1")
			}
			lengthGiven = true
		case "count":
			var n uint64
			n, err = count(val)
			if err == nil && (n == 0 || n > 1<<30) {
				err = fmt.Errorf("not in [1, 2^30]")
			}
			s.Count = int(n)
		case "jitter":
			s.Jitter, err = fraction(val)
			if err == nil && (s.Jitter < 0 || s.Jitter > 1) {
				err = fmt.Errorf("not in [0, 1]")
			}
		case "warmup":
			s.Warmup, err = count(val)
		case "first":
			s.First, err = count(val)
			if err == nil && (s.First == 0 || s.First > 1<<20) {
				err = fmt.Errorf("not in [1, 2^20]")
			}
		case "seed":
			s.Seed, err = strconv.ParseUint(val, 0, 64)
		case "sets":
			s.SetNum, s.SetDen, err = ratio(val)
		case "vary":
			s.Vary = true
			if hasVal {
				s.Vary, err = strconv.ParseBool(val)
			}
		case "procs":
			s.ProcNum, s.ProcDen, err = ratio(val)
		case "timesteps":
			s.Timesteps, err = fraction(val)
			if err == nil && (s.Timesteps <= 0 || s.Timesteps > 1) {
				err = fmt.Errorf("not in (0, 1]")
			}
		case "timestep-fn":
			s.TimestepFn = val
			if val == "" {
				err = fmt.Errorf("empty name")
			}
		case "mu":
			if val == "dead" {
				s.DeadMu = true
				break
			}
			s.DeadMu = false
			s.Mu, err = fraction(val)
			if err == nil && (s.Mu < 0 || s.Mu > 1) {
				err = fmt.Errorf("not in [0, 1]")
			}
		default:
			return s, bad("unknown key (want ratio, length, count, jitter, warmup, first, seed, sets, vary, procs, timesteps, timestep-fn or mu)")
		}
		if err != nil {
			return s, bad(err.Error())
		}
	}
	if lengthGiven && s.Ratio == 0 && s.Count == 0 && s.SetDen == 0 {
		return s, fmt.Errorf("--sample %q: length needs ratio or count (or sets with vary)", text)
	}
	if s.Time() && s.Length == 0 && s.Count == 0 {
		s.Length = DefaultLength
	}
	if s.Count > 0 && s.Ratio == 0 && s.Length == 0 {
		s.Ratio = 0.1
	}
	if s.Vary && s.SetDen == 0 {
		return s, fmt.Errorf("--sample %q: vary needs sets", text)
	}
	if s.Vary && !s.Time() && s.Length == 0 {
		s.Length = DefaultLength
	}
	if s.TimestepFn != "" && s.Timesteps == 0 {
		return s, fmt.Errorf("--sample %q: timestep-fn needs timesteps", text)
	}
	if s.Timesteps > 0 && (s.Time() || s.SetDen > 0) {
		return s, fmt.Errorf("--sample %q: timestep sampling does not combine with time or set sampling", text)
	}
	if s.Warmup > 0 && !s.Time() {
		return s, fmt.Errorf("--sample %q: warmup needs time sampling (ratio or count)", text)
	}
	if s.First > 0 && !s.Time() {
		return s, fmt.Errorf("--sample %q: first needs time sampling (ratio or count)", text)
	}
	if !s.Active() {
		return s, fmt.Errorf("--sample %q: samples nothing: give ratio, count, sets, procs or timesteps", text)
	}
	return s, nil
}

// String returns s in the syntax Parse reads ("" when s samples nothing).
func (s Spec) String() string {
	var parts []string
	add := func(k, v string) { parts = append(parts, k+"="+v) }
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	if s.Ratio > 0 {
		add("ratio", f(s.Ratio))
	}
	if s.Count > 0 {
		add("count", strconv.Itoa(s.Count))
	}
	if s.Length > 0 {
		add("length", strconv.FormatUint(s.Length, 10))
	}
	if s.Jitter > 0 {
		add("jitter", f(s.Jitter))
	}
	if s.Warmup > 0 {
		add("warmup", strconv.FormatUint(s.Warmup, 10))
	}
	if s.First > 0 {
		add("first", strconv.FormatUint(s.First, 10))
	}
	if s.SetDen > 0 {
		add("sets", fmt.Sprintf("%d/%d", s.SetNum, s.SetDen))
	}
	if s.Vary {
		parts = append(parts, "vary")
	}
	if s.ProcDen > 0 {
		add("procs", fmt.Sprintf("%d/%d", s.ProcNum, s.ProcDen))
	}
	if s.Timesteps > 0 {
		add("timesteps", f(s.Timesteps))
	}
	if s.TimestepFn != "" {
		add("timestep-fn", s.TimestepFn)
	}
	if len(parts) == 0 {
		return ""
	}
	if s.Seed != 0 {
		add("seed", strconv.FormatUint(s.Seed, 10))
	}
	if !s.DeadMu {
		add("mu", f(s.Mu))
	}
	return strings.Join(parts, ",")
}

// fraction reads 0.1, 10% or 1/10.
func fraction(v string) (float64, error) {
	if n, d, err := ratio(v); err == nil {
		return float64(n) / float64(d), nil
	} else if strings.Contains(v, "/") {
		return 0, err
	}
	pct := strings.HasSuffix(v, "%")
	x, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("not a number")
	}
	if pct {
		x /= 100
	}
	return x, nil
}

// ratio reads n/d with 1 <= n <= d.
func ratio(v string) (n, d uint64, err error) {
	a, b, ok := strings.Cut(v, "/")
	if !ok {
		return 0, 0, fmt.Errorf("want n/d, like 1/16")
	}
	n, err1 := strconv.ParseUint(a, 10, 64)
	d, err2 := strconv.ParseUint(b, 10, 64)
	if err1 != nil || err2 != nil || n == 0 || d == 0 || n > d || d > 1<<20 {
		return 0, 0, fmt.Errorf("want n/d with 1 <= n <= d <= 2^20")
	}
	return n, d, nil
}

// count reads a number of references: 500000, 500k, 2m (k = 1000 here:
// these are counts, not bytes).
func count(v string) (uint64, error) {
	mult := uint64(1)
	switch {
	case strings.HasSuffix(v, "k"), strings.HasSuffix(v, "K"):
		mult, v = 1e3, v[:len(v)-1]
	case strings.HasSuffix(v, "m"), strings.HasSuffix(v, "M"):
		mult, v = 1e6, v[:len(v)-1]
	case strings.HasSuffix(v, "g"), strings.HasSuffix(v, "G"):
		mult, v = 1e9, v[:len(v)-1]
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || x < 0 || x*float64(mult) > 1<<62 || math.IsNaN(x) {
		return 0, fmt.Errorf("not a count")
	}
	return uint64(x * float64(mult)), nil
}
