package sim

import (
	"fmt"

	"github.com/memspy/memspy/cache"
	"github.com/memspy/memspy/profile"
	"github.com/memspy/memspy/sample"
	"github.com/memspy/memspy/trace"
)

// sampling is the engine's side of sampling (Options.Sample): the gate
// that picks the references, the epoch the caches' states belong to, and
// what keeps a sample's warm-up from counting.
//
// At the start of every sample (a new epoch of the gate) the state of
// every cache is not known: references were left out before it. Each
// cache then counts a reference as known when its outcome is the one a
// full simulation would have given: a hit on a line referenced or filled
// since the sample began, or a miss in a set primed since then (as many
// lines referenced or filled in it as it has ways). The rest are unknown
// (docs/sampling.md; exact for LRU caches).
//
// A warm-up's references move every state (caches, 3C twins, coherence,
// line states and bins, strides' last addresses, NUMA placement and
// directory) and count nothing: the plain counters are saved when it
// begins and put back when its sample begins, and the counts of
// attribution and NUMA statistics, in slices and maps too large to save
// so often, go to scratch sinks swapped in for the warm-up (the counting
// code tests nothing). Strides, whose counts share their slots with the
// last addresses, test counting.
type sampling struct {
	gate     *sample.Gate
	epoch    uint64
	counting bool // the current reference counts: not a warm-up
	warming  bool
	// dropped says whether references were left out in time (between
	// samples) or, with varying sets, outside the sampled sets; exact
	// whether the caches' state is the one a full simulation would have
	// (no reference was dropped before the epoch began): then every
	// outcome is known.
	dropped, exact bool
	vary           bool // the sampled sets change (Spec.Vary)
	saved          saved
	// scratch holds the sinks that take the counts of attribution and
	// NUMA statistics during a warm-up; swapSinks exchanges them with the
	// hierarchy's, so during a warm-up it holds the real ones.
	scratch sinks
	// counted is the number of references simulated and counted: those of
	// the samples, in the sampled sets and on the sampled processors.
	// base holds the gate's counts at the last reset marker.
	counted uint64
	base    struct{ seen, warmed, samples, steps, taken uint64 }
}

// reset starts the counts again from zero (a reset marker).
func (s *sampling) reset() {
	g := s.gate
	s.counted = 0
	s.base.seen, s.base.warmed, s.base.samples, s.base.steps, s.base.taken = g.Seen(), g.Warmed, g.Samples, g.Steps(), g.Taken
}

// saved are the counters as they were when a warm-up began.
type saved struct {
	levels       []counters
	kinds        [256]uint64
	notSimulated uint64
	mem          profile.MemoryStats
	procs        [][4]uint64
}

// sinks are the counts of attribution and NUMA statistics.
type sinks struct {
	refs []refTable // per level (h.levels): levelAttrib.refs
	attr attribSinks
	numa numaSinks
}

// newSampling sets h up for sampling: every level estimates, and the
// estimate sees the hits that the hit bypass takes.
func (h *Hierarchy) newSampling() error {
	spec := h.opt.Sample
	if spec.ProcDen > 0 && len(h.procs) == 1 {
		return fmt.Errorf("sim: --sample procs= needs several processors, and machine %q has one", h.m.Name)
	}
	var shift uint
	if l := h.procs[0].dfirst; l != nil {
		shift = l.shift
	}
	g, err := sample.NewGate(spec, h.opt.SampleTotal, shift)
	if err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	h.samp = &sampling{gate: g, exact: true, vary: spec.Vary}
	h.samp.scratch.refs = make([]refTable, len(h.levels))
	if h.numa != nil {
		h.samp.scratch.numa = newNumaSinks(len(h.procs))
	}
	for _, l := range h.levels {
		l.est = newEstimate(l, h.samp)
		l.attach(l.est)
	}
	return nil
}

// processSampled is Process when sampling: the gate decides for every
// reference whether it is simulated; every other event is.
func (h *Hierarchy) processSampled(b *trace.Batch) {
	s, g := h.samp, h.samp.gate
	multi := len(h.procs) > 1
	// The hit bypass, on one processor: it sees the first caches only.
	bypass := sampledShortcuts && !multi && h.coh == nil && h.numa == nil
	end := 0 // when attributing, the end of the run of one thread's events that holds event i
	for i := 0; i < len(b.Kind); i++ {
		if multi {
			if t := b.Thread[i]; t != h.curTid || len(h.tids) == 0 {
				h.switchThread(t)
			}
		}
		// In a sample already entered, a run of hits needs no per-event
		// decision of the gate.
		if bypass && s.counting && s.epoch == g.Epoch {
			if n := g.OnRun(); n > 0 {
				stop := h.runStop(b, i, i+int(min(n, uint64(len(b.Kind)-i))), len(b.Kind), &end)
				j := h.hitRun(b, i, stop, false)
				g.Count(uint64(j - i))
				s.counted += uint64(j - i)
				if i = j; i == len(b.Kind) {
					break
				}
			}
		}
		k := b.Kind[i]
		switch {
		case k == trace.Skip:
			g.Skip(b.Addr[i])
			s.dropped = s.dropped || b.Addr[i] > 0
			continue
		case k.IsAccess() || k == trace.IFetchRun:
			n := uint64(1)
			if k == trace.IFetchRun {
				n = uint64(b.Size[i])
			}
			ph := g.Ref(n)
			if ph == sample.Off || !g.SetIn(b.Addr[i]) || !g.ProcIn(h.cur.id) {
				if !h.opt.SampleShadow {
					// Left out in time, or outside sets that will change:
					// the caches no longer hold what a full run would.
					s.dropped = s.dropped || ph == sample.Off || s.vary && !g.SetIn(b.Addr[i])
					continue
				}
				ph = sample.Warm // the shadow simulates it without counting
			}
			s.enter(h, ph)
			if ph == sample.On {
				s.counted += n
				if bypass && h.hitRun(b, i, h.runStop(b, i, i+1, len(b.Kind), &end), false) > i {
					continue
				}
			}
		case k == trace.CopyBack || k == trace.Invalidate:
			// Cache maintenance belongs to the phase of the reference
			// before it: left out between samples, as they are.
			if g.Phase() == sample.Off {
				if !h.opt.SampleShadow {
					s.dropped = true
					continue
				}
				s.enter(h, sample.Warm)
			}
		case k == trace.Marker:
			switch b.ExtOf(i).Mark {
			case trace.MarkSampleBegin:
				g.Step(true)
			case trace.MarkSampleEnd:
				g.Step(false)
			}
		}
		il, _ := h.firsts() // the processor's
		h.slow(b, i, il)
	}
}

// sampledShortcuts enables the hit bypass and plainRef on levels that
// estimate (tests turn it off to compare with refLine alone).
var sampledShortcuts = true

// takes makes the estimate a hitObserver: it takes every hit but a run of
// fetches (which does not come: IFetchRuns) and, at a level that
// attributes, a hit whose outcome is unknown (the slow path counts it at
// its access point as such).
func (e *estimate) takes(l *level, k trace.Kind, slot int) bool {
	return k != trace.IFetchRun && (l.attr == nil || e.s.exact || e.slots[slot].stamp == e.s.epoch)
}

// see counts a hit that the bypass took, known or unknown (a modify is
// two hits).
func (e *estimate) see(l *level, b *trace.Batch, i, slot int) {
	line := b.Addr[i] >> l.shift
	e.hit(slot, line)
	if b.Kind[i] == trace.Modify {
		e.hit(slot, line)
	}
}

// seeRun counts the hits on slot, memo of its level: known, as memo holds
// a line that the estimate saw in this epoch (enter disarms it when a new
// one begins), during a sample.
func (e *estimate) seeRun(slot int, fetches, data uint64) {
	n := fetches + data
	e.clock += n
	if e.s.counting {
		e.knownHits += n
	}
	e.slots[slot].lastAt = e.clock
}

// enter prepares the caches for a reference of phase ph: a new epoch when
// the gate began a sample, a warm-up begun or ended.
func (s *sampling) enter(h *Hierarchy, ph sample.Phase) {
	if s.epoch != s.gate.Epoch {
		s.epoch = s.gate.Epoch
		s.exact = !s.dropped
		for _, l := range h.levels {
			l.est.begin()
			l.memo = noMemo // a line the estimate knows (see runObserver)
		}
	}
	switch {
	case ph == sample.Warm && !s.warming:
		s.beginWarmup(h)
	case ph == sample.On && s.warming:
		s.endWarmup(h)
	}
	s.counting = ph == sample.On
}

// beginWarmup starts a warm-up: from here on nothing counts.
func (s *sampling) beginWarmup(h *Hierarchy) {
	s.warming = true
	s.save(h)
	s.swapSinks(h)
}

// endWarmup ends a warm-up: the counts are again those before it.
func (s *sampling) endWarmup(h *Hierarchy) {
	s.warming = false
	s.restore(h)
	s.swapSinks(h)
}

// swapSinks exchanges the sinks of attribution and NUMA statistics with
// the scratch ones.
func (s *sampling) swapSinks(h *Hierarchy) {
	k := &s.scratch
	if at := h.attr; at != nil {
		at.attribSinks, k.attr = k.attr, at.attribSinks
		at.forgetStats() // (the levels' tables are swapped below)
	}
	for i, l := range h.levels {
		if la := l.attr; la != nil {
			la.refs, k.refs[i] = k.refs[i], la.refs
		}
	}
	if n := h.numa; n != nil {
		n.numaSinks, k.numa = k.numa, n.numaSinks
	}
}

// save keeps the counters that a warm-up must not change.
func (s *sampling) save(h *Hierarchy) {
	v := &s.saved
	v.levels = v.levels[:0]
	for _, l := range h.levels {
		v.levels = append(v.levels, l.counters)
	}
	v.kinds, v.notSimulated, v.mem = h.kinds, h.notSimulated, h.mem
	v.procs = v.procs[:0]
	for _, p := range h.procs {
		v.procs = append(v.procs, [4]uint64{p.upgrades, p.interventions, p.invSent, p.invRecv})
	}
}

// restore puts back the counters save kept.
func (s *sampling) restore(h *Hierarchy) {
	v := &s.saved
	for i, l := range h.levels {
		l.counters = v.levels[i]
	}
	h.kinds, h.notSimulated, h.mem = v.kinds, v.notSimulated, v.mem
	for i, p := range h.procs {
		c := v.procs[i]
		p.upgrades, p.interventions, p.invSent, p.invRecv = c[0], c[1], c[2], c[3]
	}
}

// countedLevel returns the counters of h.levels[i] without those of a
// warm-up under way.
func (h *Hierarchy) countedLevel(i int) *counters {
	if s := h.samp; s != nil && s.warming {
		return &s.saved.levels[i]
	}
	return &h.levels[i].counters
}

// countedKinds returns the events simulated, by kind, without those of a
// warm-up under way.
func (h *Hierarchy) countedKinds() *[256]uint64 {
	if s := h.samp; s != nil && s.warming {
		return &s.saved.kinds
	}
	return &h.kinds
}

// countedNuma returns the counts of the NUMA statistics without those of
// a warm-up under way.
func (h *Hierarchy) countedNuma() *numaSinks {
	if s := h.samp; s != nil && s.warming {
		return &s.scratch.numa
	}
	return &h.numa.numaSinks
}

// estimate tells, in one cache, known references from unknown ones (see
// sampling) and measures how long lines stay live and dead, for Wood,
// Hill and Kessler's estimate of the miss ratio of unknown references.
type estimate struct {
	s    *sampling
	c    *cache.Cache
	ways uint32
	// slots hold, per slot, its stamp and times (slotEstimate); sets
	// count, per set, the slots stamped in an epoch.
	slots []slotEstimate
	sets  []setEstimate

	knownHits, knownMisses, unknownHits, unknownMisses uint64

	// clock counts the references to the cache; start is its value when
	// the epoch began. live and dead sum, over the lines filled and
	// replaced within a sample, the time from fill to last reference and
	// from there to the replacement.
	clock, start uint64
	live, dead   uint64

	// spread sums the counts of the samples ended; inSample says whether
	// a sample began, and at holds the counts at its beginning.
	spread   profile.Spread
	inSample bool
	at       [3]uint64
}

// slotEstimate is what an estimate keeps of one slot, together so that a
// reference touches one host cache line: the epoch in which its line was
// last referenced or filled, and when (estimate.clock) it was filled and
// last referenced.
type slotEstimate struct {
	stamp, fillAt, lastAt uint64
}

// setEstimate counts the slots of a set stamped in epoch.
type setEstimate struct {
	epoch   uint64
	touched uint32
}

// newEstimate returns the estimate of l.
func newEstimate(l *level, s *sampling) *estimate {
	return &estimate{
		s: s, c: l.c, ways: uint32(l.c.Ways()),
		slots: make([]slotEstimate, l.c.Sets()*l.c.Ways()), sets: make([]setEstimate, l.c.Sets()),
	}
}

// begin starts a new epoch: no line is known. The sample that ended adds
// its counts to the spread.
func (e *estimate) begin() {
	e.start = e.clock
	if e.inSample {
		e.spread.Add(e.sampleCounts())
	}
	e.inSample = true
	e.at = e.totals()
}

// totals returns the references, known misses and unknown references
// counted so far.
func (e *estimate) totals() [3]uint64 {
	u := e.unknownHits + e.unknownMisses
	return [3]uint64{e.knownHits + e.knownMisses + u, e.knownMisses, u}
}

// sampleCounts returns the references, known misses and unknown
// references counted in the current sample.
func (e *estimate) sampleCounts() (n, k, u uint64) {
	t := e.totals()
	return t[0] - e.at[0], t[1] - e.at[1], t[2] - e.at[2]
}

// stampSlot marks slot, holding line, as known in this epoch.
func (e *estimate) stampSlot(slot int, line uint64) {
	ep := e.s.epoch
	if e.slots[slot].stamp == ep {
		return
	}
	e.slots[slot].stamp = ep
	set := &e.sets[e.c.Set(line)]
	if set.epoch != ep {
		set.epoch, set.touched = ep, 0
	}
	set.touched++
}

// hit counts a hit on line in slot and reports whether its outcome was
// unknown.
func (e *estimate) hit(slot int, line uint64) (unknown bool) {
	e.clock++
	unknown = e.slots[slot].stamp != e.s.epoch && !e.s.exact
	if e.s.counting {
		if unknown {
			e.unknownHits++
		} else {
			e.knownHits++
		}
	}
	e.stampSlot(slot, line)
	e.slots[slot].lastAt = e.clock
	return unknown
}

// miss counts a miss on line and reports whether its outcome was unknown:
// whether its set was not yet primed.
func (e *estimate) miss(line uint64) (unknown bool) {
	e.clock++
	set := &e.sets[e.c.Set(line)]
	unknown = (set.epoch != e.s.epoch || set.touched < e.ways) && !e.s.exact
	if e.s.counting {
		if unknown {
			e.unknownMisses++
		} else {
			e.knownMisses++
		}
	}
	return unknown
}

// filled records that line entered slot.
func (e *estimate) filled(slot int, line uint64) {
	e.stampSlot(slot, line)
	e.slots[slot].fillAt, e.slots[slot].lastAt = e.clock, e.clock
}

// replaced records that the line in slot is replaced: a generation that
// began in this sample adds its live and dead time.
func (e *estimate) replaced(slot int) {
	if se := &e.slots[slot]; e.s.counting && se.stamp == e.s.epoch && se.fillAt > e.start {
		e.live += se.lastAt - se.fillAt
		e.dead += e.clock - se.lastAt
	}
}

// resetStats zeroes the counts (a reset marker); what is known stays.
func (e *estimate) resetStats() {
	e.knownHits, e.knownMisses, e.unknownHits, e.unknownMisses = 0, 0, 0, 0
	e.live, e.dead = 0, 0
	e.spread, e.at = profile.Spread{}, [3]uint64{}
}

// counts returns the estimate's counters for the profile.
// The sample under way, if any, is in the spread.
func (e *estimate) counts() *profile.SampledCounts {
	spread := e.spread
	if e.inSample {
		spread.Add(e.sampleCounts())
	}
	return &profile.SampledCounts{
		KnownHits: e.knownHits, KnownMisses: e.knownMisses,
		UnknownHits: e.unknownHits, UnknownMisses: e.unknownMisses,
		LiveTime: e.live, DeadTime: e.dead,
		Spread: &spread,
	}
}

// samplingStats describes the sampling of the run for the profile.
func (h *Hierarchy) samplingStats() *profile.Sampling {
	s := h.samp
	if s == nil {
		return nil
	}
	g := s.gate
	spec := g.Spec()
	p := &profile.Sampling{
		Spec:    spec.String(),
		Samples: g.Samples - s.base.samples, Counted: s.counted, Warmed: g.Warmed - s.base.warmed, Seen: g.Seen() - s.base.seen,
		Mu: spec.Mu, DeadMu: spec.DeadMu,
	}
	if spec.Time() {
		p.Methods = append(p.Methods, "time")
	}
	if spec.SetDen > 0 {
		p.Methods = append(p.Methods, "sets")
	}
	if spec.ProcDen > 0 {
		p.Methods = append(p.Methods, "processors")
	}
	if spec.Timesteps > 0 {
		p.Methods = append(p.Methods, "timesteps")
		p.Timesteps, p.TimestepsTaken = g.Steps()-s.base.steps, g.Taken-s.base.taken
	}
	return p
}
