package profile

import (
	"cmp"
	"math"
	"slices"
)

// Evaluation compares a sampled run with the full run of the same
// references (memspy sample-eval): the focus cache's miss rate, true and
// estimated, and how well the sample keeps the pattern of memory time
// over data objects (SIGMA) and functions, and the bottleneck ranking
// (MemSpy).
type Evaluation struct {
	Spec  string `json:"spec"`
	Focus string `json:"focus"`
	// Ratio is the fraction of the references the sampled run counted.
	Ratio float64 `json:"ratio"`
	// MissRateEvaluation compares the focus cache's miss rates.
	MissRateEvaluation
	// Caches compares the miss rates of every cache of the machine.
	Caches []CacheEvaluation `json:"caches"`
	// PearsonObjects and PearsonFunctions correlate the memory time
	// (stall cycles) per object and per function of the two runs (0
	// without --where data).
	PearsonObjects   float64 `json:"pearson_r_objects"`
	PearsonFunctions float64 `json:"pearson_r_functions"`
	// RankingFull and RankingSampled rank the objects by memory time;
	// Reorderings are the pairs of objects above 2% of the full run's
	// stall time that the sample ranks the other way round.
	RankingFull    []Ranked     `json:"ranking_full"`
	RankingSampled []Ranked     `json:"ranking_sampled"`
	Reorderings    []Reordering `json:"reorderings"`
	// ReorderedAbove10 says whether a reordering that is not a near tie
	// involves two objects each above 10% of the stall time (the accuracy
	// target).
	ReorderedAbove10 bool `json:"reordered_above_10pct"`
}

// MissRateEvaluation compares one cache's estimated miss rate with the
// truth.
type MissRateEvaluation struct {
	// TrueMissRate is the full run's; TrueMissRateInSamples the full
	// run's over the references the sample counts.
	TrueMissRate          float64 `json:"true_miss_rate"`
	TrueMissRateInSamples float64 `json:"true_miss_rate_in_samples"`
	// EstimatedMissRate, Lower and Upper are the sampled run's estimate
	// and bounds (μ = Mu).
	EstimatedMissRate float64 `json:"estimated_miss_rate"`
	Lower             float64 `json:"lower"`
	Upper             float64 `json:"upper"`
	Mu                float64 `json:"mu"`
	// AbsoluteError and RelativeError compare the estimate with the true
	// miss rate; BoundsHold says whether the bounds contain it, and
	// BoundsHoldInSamples whether they contain the true rate within the
	// samples (what they bound).
	AbsoluteError       float64 `json:"absolute_error"`
	RelativeError       float64 `json:"relative_error"`
	BoundsHold          bool    `json:"bounds_hold"`
	BoundsHoldInSamples bool    `json:"bounds_hold_in_samples"`
	// StdError is the estimate's standard error from the spread of the
	// samples; CILower and CIUpper its 95% confidence interval, and
	// CIHolds whether it contains the true miss rate; WideLower and
	// WideUpper widen the bounds by the sampling error
	// (SampledCounts.Interval), and WideHolds says whether they contain
	// it. With fewer than two samples there is no sampling error: it is 0,
	// the interval is the estimate and the widened bounds are the bounds.
	StdError  float64 `json:"std_error"`
	CILower   float64 `json:"ci_lower"`
	CIUpper   float64 `json:"ci_upper"`
	CIHolds   bool    `json:"ci_holds"`
	WideLower float64 `json:"wide_lower"`
	WideUpper float64 `json:"wide_upper"`
	WideHolds bool    `json:"wide_holds"`
}

// CacheEvaluation is the MissRateEvaluation of one cache.
type CacheEvaluation struct {
	Cache string `json:"cache"`
	Size  int64  `json:"size"` // bytes
	MissRateEvaluation
}

// Ranked is an object in a ranking by memory time.
type Ranked struct {
	Rank  int     `json:"rank"`
	Name  string  `json:"name"`
	Share float64 `json:"stall_share"` // of the run's stall cycles
}

// Reordering is a pair of objects that the sample ranks the other way
// round: the full run puts Above above Below. Tie says that their stall
// times in the full run differ by less than tieShare of the larger: a
// near tie, which the sample may swap without misleading.
type Reordering struct {
	Above      string  `json:"above"`
	Below      string  `json:"below"`
	AboveShare float64 `json:"above_share"`
	BelowShare float64 `json:"below_share"`
	Tie        bool    `json:"tie"`
}

// tieShare is the relative difference of stall time below which two
// objects are a near tie.
const tieShare = 0.05

// Evaluate compares the sampled profile with the full one over the focus
// cache; shadow is the run that simulated every reference and counted
// only the sampled ones (sim.Options.SampleShadow), for the true miss rate
// within the samples.
func Evaluate(full, sampled, shadow *Profile, focus string) Evaluation {
	ev := Evaluation{Focus: focus}
	if s := sampled.Sampling; s != nil {
		ev.Spec, ev.Ratio = s.Spec, s.Ratio()
	}
	ev.MissRateEvaluation = evaluateMissRate(full, sampled, shadow, focus)
	ev.Caches = []CacheEvaluation{}
	for _, c := range sampled.Caches {
		ce := CacheEvaluation{Cache: c.Name, MissRateEvaluation: evaluateMissRate(full, sampled, shadow, c.Name)}
		if mc, ok := sampled.MachineCache(c.Name); ok {
			ce.Size = mc.Size
		}
		ev.Caches = append(ev.Caches, ce)
	}

	fo, so := stallBy(full.Objects, func(o Object) (string, uint64) { return o.Name, o.StallCycles }),
		stallBy(sampled.Objects, func(o Object) (string, uint64) { return o.Name, o.StallCycles })
	ev.PearsonObjects = Pearson(fo, so)
	ev.PearsonFunctions = Pearson(
		stallBy(full.Functions, func(f Function) (string, uint64) { return f.Name, f.StallCycles }),
		stallBy(sampled.Functions, func(f Function) (string, uint64) { return f.Name, f.StallCycles }))
	ev.RankingFull, ev.RankingSampled = ranking(fo), ranking(so)
	ev.Reorderings, ev.ReorderedAbove10 = reorderings(ev.RankingFull, so, 0.02, 0.10)
	return ev
}

// evaluateMissRate compares the miss rate of the cache name in the three
// runs of Evaluate.
func evaluateMissRate(full, sampled, shadow *Profile, name string) MissRateEvaluation {
	var ev MissRateEvaluation
	if c, ok := full.Cache(name); ok {
		ev.TrueMissRate = ratio(c.Misses, c.Accesses)
	}
	if c, ok := shadow.Cache(name); ok {
		ev.TrueMissRateInSamples = ratio(c.Misses, c.Accesses)
	}
	if c, ok := sampled.Cache(name); ok && c.Sampled != nil && sampled.Sampling != nil {
		ev.Mu = sampled.Sampling.MuOf(c.Sampled)
		ev.EstimatedMissRate, ev.Lower, ev.Upper = c.Sampled.Estimate(ev.Mu)
		ev.CILower, ev.CIUpper, ev.WideLower, ev.WideUpper = ev.EstimatedMissRate, ev.EstimatedMissRate, ev.Lower, ev.Upper
		f := sampled.Sampling.Ratio()
		if se, _, ok := c.Sampled.SamplingError(ev.Mu, f); ok {
			ev.StdError = se
			ev.CILower, ev.CIUpper, ev.WideLower, ev.WideUpper, _ = c.Sampled.Interval(ev.Mu, f)
		}
	}
	ev.AbsoluteError = math.Abs(ev.EstimatedMissRate - ev.TrueMissRate)
	if ev.TrueMissRate > 0 {
		ev.RelativeError = ev.AbsoluteError / ev.TrueMissRate
	}
	const slack = 1e-12 // rounding
	ev.BoundsHold = ev.Lower-slack <= ev.TrueMissRate && ev.TrueMissRate <= ev.Upper+slack
	ev.BoundsHoldInSamples = ev.Lower-slack <= ev.TrueMissRateInSamples && ev.TrueMissRateInSamples <= ev.Upper+slack
	ev.CIHolds = ev.CILower-slack <= ev.TrueMissRate && ev.TrueMissRate <= ev.CIUpper+slack
	ev.WideHolds = ev.WideLower-slack <= ev.TrueMissRate && ev.TrueMissRate <= ev.WideUpper+slack

	return ev
}

// stallBy returns the stall cycles of each entry by name.
func stallBy[T any](xs []T, f func(T) (string, uint64)) map[string]float64 {
	m := map[string]float64{}
	for _, x := range xs {
		n, v := f(x)
		m[n] += float64(v)
	}
	return m
}

// Pearson returns the correlation coefficient of two vectors given by
// name, a name missing from one counting 0 there: 1 for one name that
// both have, 0 when either has no variance otherwise.
func Pearson(a, b map[string]float64) float64 {
	var names []string
	for n := range a {
		names = append(names, n)
	}
	for n := range b {
		if _, ok := a[n]; !ok {
			names = append(names, n)
		}
	}
	k := float64(len(names))
	if len(names) == 1 && a[names[0]] > 0 && b[names[0]] > 0 {
		return 1 // one object: the same pattern
	}
	if k < 2 {
		return 0
	}
	var sa, sb float64
	for _, n := range names {
		sa += a[n]
		sb += b[n]
	}
	ma, mb := sa/k, sb/k
	var cov, va, vb float64
	for _, n := range names {
		da, db := a[n]-ma, b[n]-mb
		cov += da * db
		va += da * da
		vb += db * db
	}
	if va == 0 || vb == 0 {
		return 0
	}
	return cov / math.Sqrt(va*vb)
}

// ranking ranks names by value, most first (ties by name), with their
// shares of the total.
func ranking(m map[string]float64) []Ranked {
	var total float64
	for _, v := range m {
		total += v
	}
	var r []Ranked
	for n, v := range m {
		if v > 0 {
			r = append(r, Ranked{Name: n, Share: v / total})
		}
	}
	slices.SortFunc(r, func(a, b Ranked) int { return cmp.Or(cmp.Compare(b.Share, a.Share), cmp.Compare(a.Name, b.Name)) })
	for i := range r {
		r[i].Rank = i + 1
	}
	return r
}

// reorderings returns the pairs among the full ranking's objects above
// minShare that the sampled values order the other way round, and
// whether one of them, not a near tie, has both objects above bigShare.
func reorderings(full []Ranked, sampled map[string]float64, minShare, bigShare float64) ([]Reordering, bool) {
	out := []Reordering{} // [] rather than null in the JSON
	big := false
	for i, a := range full {
		if a.Share < minShare {
			break
		}
		for _, b := range full[i+1:] {
			if b.Share < minShare {
				break
			}
			if sampled[a.Name] < sampled[b.Name] {
				tie := a.Share-b.Share < tieShare*a.Share
				out = append(out, Reordering{Above: a.Name, Below: b.Name, AboveShare: a.Share, BelowShare: b.Share, Tie: tie})
				big = big || b.Share >= bigShare && !tie
			}
		}
	}
	return out, big
}
