package profile

import "fmt"

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
