package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/memspy/memspy/profile"
)

// samplingText describes a sampled run in one line ("" when every
// reference was simulated).
func samplingText(p *profile.Profile) string {
	s := p.Sampling
	if s == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "SAMPLED (%s): counts cover %s of %s references (%s counted", strings.Join(s.Methods, ", "),
		share(s.Counted, s.Seen), Count(s.Seen), Count(s.Counted))
	if s.Samples > 0 {
		fmt.Fprintf(&b, " in %s", samples(s.Samples))
	}
	if s.Timesteps > 0 {
		fmt.Fprintf(&b, "; %s of %s timesteps", Count(s.TimestepsTaken), Count(s.Timesteps))
	}
	if s.Warmed > 0 {
		fmt.Fprintf(&b, "; %s more for warm-up", Count(s.Warmed))
	}
	fmt.Fprintf(&b, "); --sample %s", s.Spec)
	if slices.Contains(s.Methods, "time") && s.Samples > 0 && s.Samples < minSamples {
		fmt.Fprintf(&b, "\n  only %s: the estimate speaks for the parts of the run sampled; a shorter length= (or count=%d) spreads samples over more of it", samples(s.Samples), minSamples)
	}
	return b.String()
}

// samples says "1 sample" or "N samples".
func samples(n uint64) string {
	if n == 1 {
		return "1 sample"
	}
	return Count(n) + " samples"
}

// minSamples is the number of time samples below which the summary warns
// that the samples may not represent the run, and maxUnknown the share of
// a cache's references unknown above which it warns that the samples are
// short for the cache.
const (
	minSamples = 10
	maxUnknown = 0.10
)

// sampledText describes the known and unknown references of a cache of a
// sampled run and its estimated miss rate with bounds ("" when not
// sampled).
func sampledText(p *profile.Profile, c *profile.CacheStats) string {
	if p.Sampling == nil || c.Sampled == nil {
		return ""
	}
	k := c.Sampled
	mu := p.Sampling.MuOf(k)
	est, lo, hi := k.Estimate(mu)
	how := fmt.Sprintf("μ=%.3g", mu)
	if m, ok := k.DeadMu(); ok && !p.Sampling.DeadMu {
		how += fmt.Sprintf("; dead-line μ would be %.3g", m)
	} else if p.Sampling.DeadMu {
		how += " from dead lines"
	}
	text := fmt.Sprintf("  sampled: known hits %s, known misses %s, unknown %s (%s hits, %s misses)\n  estimated miss rate %.4f%% (bounds %.4f%% to %.4f%%; %s)",
		Count(k.KnownHits), Count(k.KnownMisses), Count(k.Unknown()), Count(k.UnknownHits), Count(k.UnknownMisses),
		100*est, 100*lo, 100*hi, how)
	if se, df, ok := k.SamplingError(mu, p.Sampling.Ratio()); ok {
		lo, hi, wlo, whi, _ := k.Interval(mu, p.Sampling.Ratio())
		text += fmt.Sprintf("\n  sampling error ±%.4f%% (95%%, %s samples): %.4f%% to %.4f%%; with the bounds %.4f%% to %.4f%%",
			100*profile.TQuantile95(df)*se, Count(df+1), 100*lo, 100*hi, 100*wlo, 100*whi)
	}
	if n := k.KnownHits + k.KnownMisses + k.Unknown(); n > 0 && float64(k.Unknown()) > maxUnknown*float64(n) {
		text += fmt.Sprintf("\n  samples short for %s: %s of its references unknown; longer samples (length=, or warmup=) narrow the bounds",
			c.Name, share(k.Unknown(), n))
	}
	return text
}

// sampledStats adds, in a sampled run, an estimated-misses column after
// the misses: known misses plus μ times the unknown references, with
// their bounds.
func (v *viewer) sampledStats(stats []stat) []stat {
	s := v.p.Sampling
	i := slices.IndexFunc(stats, func(st stat) bool { return st.name == statMisses.name })
	if s == nil || i < 0 {
		return stats
	}
	mu := s.Mu
	if c, ok := v.p.Cache(v.p.Focus); ok && c.Sampled != nil {
		mu = s.MuOf(c.Sampled)
	}
	est := stat{"est. misses [bounds]", false, func(st *profile.Stats) Cell {
		e, lo, hi := st.EstimatedMisses(mu)
		return Cell{Text: fmt.Sprintf("%s [%s–%s]", Count(uint64(e+0.5)), Count(uint64(lo)), Count(uint64(hi))), kind: kindFloat, f: e}
	}}
	return slices.Insert(slices.Clone(stats), i+1, est)
}

// sampledNote is the note of every table of a sampled run.
func sampledNote(p *profile.Profile) string {
	s := p.Sampling
	return fmt.Sprintf("sampled: counts cover %s of the references (×%.3g for the whole run); est. misses count unknown references at μ=%.3g",
		share(s.Counted, s.Seen), s.Scale(), s.Mu)
}
