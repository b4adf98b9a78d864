package profile

import (
	"fmt"
	"math"
)

// Sampling describes how a sampled run chose the references it simulated
// (memspy sim/run --sample). Every counter of a sampled profile covers the
// counted references only; Scale extrapolates them to the whole run.
type Sampling struct {
	// Spec is the request, in the syntax of --sample.
	Spec string `json:"spec"`
	// Methods are the kinds of sampling used: time, sets, processors,
	// timesteps.
	Methods []string `json:"methods"`
	// Samples counts the samples begun (time and timestep sampling; with
	// varying sets, the subsets of sets used).
	Samples uint64 `json:"samples"`
	// Counted are the references simulated and counted, Warmed those
	// simulated for a sample's warm-up only, Seen all the references of
	// the run, simulated or not (with the ones the tracer left out).
	Counted uint64 `json:"counted"`
	Warmed  uint64 `json:"warmed,omitempty"`
	Seen    uint64 `json:"seen"`
	// Timesteps and TimestepsTaken count the timesteps of the run and
	// those simulated (timestep sampling).
	Timesteps      uint64 `json:"timesteps,omitempty"`
	TimestepsTaken uint64 `json:"timesteps_taken,omitempty"`
	// Mu is the miss ratio assumed for unknown references; with DeadMu the
	// estimates use each cache's own dead-line estimate instead (its
	// SampledCounts.DeadMu).
	Mu     float64 `json:"mu"`
	DeadMu bool    `json:"dead_mu,omitempty"`
}

// Ratio returns the fraction of the run's references that were counted.
func (s *Sampling) Ratio() float64 { return ratio(s.Counted, s.Seen) }

// Scale returns the factor that extrapolates a sampled count to the whole
// run: Seen / Counted (1 when nothing was counted).
func (s *Sampling) Scale() float64 {
	if s.Counted == 0 {
		return 1
	}
	return float64(s.Seen) / float64(s.Counted)
}

// SampledCounts split the accesses a cache counted in samples by whether
// their outcome is known: a hit on a line referenced since the sample
// began, or a miss in a set primed since then, is known; the rest are
// unknown (docs/sampling.md). Their sum is the cache's Accesses.
type SampledCounts struct {
	KnownHits     uint64 `json:"known_hits"`
	KnownMisses   uint64 `json:"known_misses"`
	UnknownHits   uint64 `json:"unknown_hits"`
	UnknownMisses uint64 `json:"unknown_misses"`
	// LiveTime and DeadTime sum, over the lines filled and replaced within
	// a sample, the references to the cache from fill to last use and
	// from there to the replacement (Wood, Hill and Kessler).
	LiveTime uint64 `json:"live_time"`
	DeadTime uint64 `json:"dead_time"`
	// Spread holds, over the samples, the sums of squares and products
	// of each sample's references, known misses and unknown references,
	// from which SamplingError measures how much the samples differ.
	Spread *Spread `json:"spread,omitempty"`
}

// Spread sums, over the samples i of a cache, products of n_i (the
// references the cache counted in sample i), k_i (its known misses) and
// u_i (its unknown references).
type Spread struct {
	Samples uint64  `json:"samples"`
	NN      float64 `json:"nn"`
	KK      float64 `json:"kk"`
	UU      float64 `json:"uu"`
	KN      float64 `json:"kn"`
	UN      float64 `json:"un"`
	KU      float64 `json:"ku"`
}

// Add adds the counts of one sample.
func (s *Spread) Add(n, k, u uint64) {
	fn, fk, fu := float64(n), float64(k), float64(u)
	s.Samples++
	s.NN += fn * fn
	s.KK += fk * fk
	s.UU += fu * fu
	s.KN += fk * fn
	s.UN += fu * fn
	s.KU += fk * fu
}

func (s *Spread) add(b *Spread) {
	s.Samples += b.Samples
	s.NN += b.NN
	s.KK += b.KK
	s.UU += b.UU
	s.KN += b.KN
	s.UN += b.UN
	s.KU += b.KU
}

// SamplingError returns the standard error of the estimated miss ratio
// with miss ratio mu for unknown references that comes from sampling: the
// ratio estimator's, Σ(m_i − R·n_i)² / (K(K−1)·n̄²) with m_i = k_i + μ·u_i,
// R the estimate and K the samples, times 1 − f for the fraction f of the
// run sampled (Sampling.Ratio); and the samples' degrees of freedom, K−1.
// ok is false with fewer than two samples.
func (c *SampledCounts) SamplingError(mu, f float64) (se float64, df uint64, ok bool) {
	s := c.Spread
	if s == nil || s.Samples < 2 {
		return 0, 0, false
	}
	n := float64(c.KnownHits + c.KnownMisses + c.Unknown())
	if n == 0 {
		return 0, 0, false
	}
	k := float64(s.Samples)
	r := (float64(c.KnownMisses) + mu*float64(c.Unknown())) / n
	mm := s.KK + 2*mu*s.KU + mu*mu*s.UU
	mn := s.KN + mu*s.UN
	ss := max(0, mm-2*r*mn+r*r*s.NN)
	nbar := n / k
	v := max(0, 1-f) * ss / (k * (k - 1) * nbar * nbar)
	return math.Sqrt(v), s.Samples - 1, true
}

// Interval returns the 95% confidence interval of the estimated miss
// ratio for miss ratio mu of unknown references (the sampling error
// only), and the interval that also lets μ range over [0, 1]: from the
// lower bound's interval's low end to the upper bound's high end, within
// [0, 1]. ok is false with fewer than two samples.
func (c *SampledCounts) Interval(mu, f float64) (lo, hi, wideLo, wideHi float64, ok bool) {
	se, df, ok := c.SamplingError(mu, f)
	if !ok {
		return 0, 0, 0, 0, false
	}
	t := TQuantile95(df)
	est, lower, upper := c.Estimate(mu)
	se0, _, _ := c.SamplingError(0, f)
	se1, _, _ := c.SamplingError(1, f)
	clip := func(x float64) float64 { return min(1, max(0, x)) }
	return clip(est - t*se), clip(est + t*se), clip(lower - t*se0), clip(upper + t*se1), true
}

// tTable holds Student's t quantiles for a two-sided 95% interval, by
// degrees of freedom 1 to 30.
var tTable = [...]float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}

// TQuantile95 returns the t quantile of a two-sided 95% interval for df
// degrees of freedom; beyond 30, the quantile at the low end of the
// bracket (30, 40, 60, 120, 1000) df lies in, which errs wide.
func TQuantile95(df uint64) float64 {
	switch {
	case df == 0:
		return math.Inf(1)
	case df <= uint64(len(tTable)):
		return tTable[df-1]
	case df <= 40:
		return 2.042
	case df <= 60:
		return 2.021
	case df <= 120:
		return 2.000
	case df <= 1000:
		return 1.980
	}
	return 1.962
}

// Unknown returns the number of unknown references.
func (c *SampledCounts) Unknown() uint64 { return c.UnknownHits + c.UnknownMisses }

// DeadMu returns Wood, Hill and Kessler's estimate of the miss ratio of
// unknown references, the fraction of time lines spend dead, and whether
// any line lived and died within a sample to measure it.
func (c *SampledCounts) DeadMu() (float64, bool) {
	if c.LiveTime+c.DeadTime == 0 {
		return 0, false
	}
	return float64(c.DeadTime) / float64(c.LiveTime+c.DeadTime), true
}

// MuOf returns the miss ratio the estimates assume for unknown references
// of this cache under s: s.Mu, or the dead-line estimate with s.DeadMu
// (s.Mu when it cannot be measured).
func (s *Sampling) MuOf(c *SampledCounts) float64 {
	if s.DeadMu {
		if m, ok := c.DeadMu(); ok {
			return m
		}
	}
	return s.Mu
}

// Estimate returns the miss ratio estimated from known misses Mk, known
// hits Hk and unknown references U: (Mk + μ·U) / (Hk + Mk + U), with its
// bounds for μ = 0 and μ = 1. All three are 0 when nothing was counted.
func Estimate(knownHits, knownMisses, unknown uint64, mu float64) (est, lower, upper float64) {
	n := float64(knownHits + knownMisses + unknown)
	if n == 0 {
		return 0, 0, 0
	}
	mk, u := float64(knownMisses), float64(unknown)
	return (mk + mu*u) / n, mk / n, (mk + u) / n
}

// Estimate returns the cache's estimated miss ratio with its bounds (see
// the function Estimate).
func (c *SampledCounts) Estimate(mu float64) (est, lower, upper float64) {
	return Estimate(c.KnownHits, c.KnownMisses, c.Unknown(), mu)
}

// add adds b's counts to c.
func (c *SampledCounts) add(b *SampledCounts) {
	c.KnownHits += b.KnownHits
	c.KnownMisses += b.KnownMisses
	c.UnknownHits += b.UnknownHits
	c.UnknownMisses += b.UnknownMisses
	c.LiveTime += b.LiveTime
	c.DeadTime += b.DeadTime
	if b.Spread != nil {
		if c.Spread == nil {
			c.Spread = &Spread{}
		}
		c.Spread.add(b.Spread)
	}
}

// EstimatedMisses returns the entry's misses estimated from its sampled
// counts with miss ratio mu for unknown references, and their bounds:
// known misses plus mu, 0 or 1 times the unknown references.
func (s *Stats) EstimatedMisses(mu float64) (est, lower, upper float64) {
	known := float64(s.Misses - s.Causes.Unknown)
	u := float64(s.Causes.Unknown + s.UnknownHits)
	return known + mu*u, known, known + u
}

// mergeSampling adds q's sampling counts to p's; both are sampled the same
// way, or neither is.
func (p *Profile) mergeSampling(q *Profile) error {
	a, b := p.Sampling, q.Sampling
	switch {
	case a == nil && b == nil:
		return nil
	case a == nil || b == nil || a.Spec != b.Spec:
		return fmt.Errorf("profile: cannot merge profiles sampled differently")
	}
	a.Samples += b.Samples
	a.Counted += b.Counted
	a.Warmed += b.Warmed
	a.Seen += b.Seen
	a.Timesteps += b.Timesteps
	a.TimestepsTaken += b.TimestepsTaken
	return nil
}
