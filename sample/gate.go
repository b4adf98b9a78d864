package sample

import "math"

// Phase says what the engine does with a reference.
type Phase uint8

// Phases of a reference.
const (
	Off  Phase = iota // not simulated
	Warm              // simulated, not counted: it primes the caches for the next sample
	On                // simulated and counted
)

// Gate follows a run and decides, reference by reference, whether the
// engine simulates it. It counts references (Ref, Skip) for time sampling
// and timesteps (Step) for timestep sampling; set and processor sampling
// are asked per reference (SetIn, ProcIn). Epoch grows at the start of
// every sample (and, with vary, at every change of the sampled sets): the
// caches' state is then not known, and the engine counts references as
// unknown until their set is primed.
type Gate struct {
	spec  Spec
	sched Schedule
	timed bool // time sampling (or sets with vary)

	pos   uint64 // references so far, simulated or not
	k     uint64 // the current sample
	w     Window
	phase Phase
	Epoch uint64

	// timesteps
	depth       int    // sample markers (or timestep-fn calls) open
	steps       uint64 // timesteps begun
	Taken       uint64 // timesteps simulated
	inTakenStep bool

	lineShift uint   // set sampling: log2 of the line size that defines sets
	residue   uint64 // the first sampled set (modulo SetDen)

	// Counted and Warmed are the references counted, and simulated for
	// warm-up only.
	Counted, Warmed uint64
	Samples         uint64 // samples begun
}

// NewGate returns a gate for spec over a run of total references (0:
// unknown). lineShift is log2 of the line size whose sets set sampling
// picks (the first data cache's).
func NewGate(spec Spec, total uint64, lineShift uint) (*Gate, error) {
	g := &Gate{spec: spec, lineShift: lineShift, phase: On}
	if spec.Time() || spec.Vary {
		sc, err := spec.Schedule(total)
		if err != nil {
			return nil, err
		}
		g.sched, g.timed = sc, true
		g.w = sc.Window(0)
		g.phase = Off
		g.move(0)
	}
	if spec.Timesteps > 0 {
		g.phase = Off
	}
	g.chooseSets()
	return g, nil
}

// Spec returns the request the gate follows.
func (g *Gate) Spec() Spec { return g.spec }

// Seen returns the references seen so far, simulated or not.
func (g *Gate) Seen() uint64 { return g.pos }

// Steps returns the timesteps begun so far.
func (g *Gate) Steps() uint64 { return g.steps }

// phaseAt is the phase of reference p in the current window (time
// sampling).
func (g *Gate) phaseAt(p uint64) Phase {
	switch {
	case p >= g.w.Start && p < g.w.End:
		return On
	case p >= g.w.Warm && p < g.w.Start:
		return Warm
	}
	return Off
}

// begin starts a sample.
func (g *Gate) begin() {
	g.Epoch++
	g.Samples++
}

// Ref advances the gate over n references (an instruction-fetch run counts
// its fetches) and returns the phase they fall in (that of the first).
func (g *Gate) Ref(n uint64) Phase {
	p := g.pos
	g.pos += n
	if g.timed && (p >= g.w.End || g.phase != g.phaseAt(p)) {
		g.move(p)
	}
	switch g.phase {
	case On:
		g.Counted += n
	case Warm:
		g.Warmed += n
	}
	return g.phase
}

// Phase returns the phase of the last reference (before the first, that
// of the first).
func (g *Gate) Phase() Phase { return g.phase }

// OnRun returns how many references from the next one on are counted
// (phase On) with nothing to decide per reference, as Ref would find them
// one by one: those left of the current sample, or all when only markers
// can end it (timesteps). It returns 0 when the phase is not On or when
// set or processor sampling decides per reference.
func (g *Gate) OnRun() uint64 {
	if g.phase != On || g.spec.SetDen > 0 || g.spec.ProcDen > 0 {
		return 0
	}
	if !g.timed {
		return math.MaxUint64
	}
	if g.pos < g.w.Start || g.pos >= g.w.End {
		return 0
	}
	return g.w.End - g.pos
}

// Count advances the gate over n references of a run OnRun allowed.
func (g *Gate) Count(n uint64) {
	g.pos += n
	g.Counted += n
}

// Skip advances the gate over n references that the tracer did not record
// (sampling gaps): they are not simulated.
func (g *Gate) Skip(n uint64) { g.pos += n }

// move moves the window to the one holding reference p and sets the
// phase. A sample begins (a new epoch) when references were left out
// before p: coming from Off, or, with vary, at every new subset of sets.
func (g *Gate) move(p uint64) {
	newSets := false
	if p >= g.w.End {
		g.k = g.sched.Next(p)
		g.w = g.sched.Window(g.k)
		if p >= g.w.End { // past this period's sample: the next one's
			g.k++
			g.w = g.sched.Window(g.k)
		}
		if g.spec.Vary {
			g.chooseSets()
			newSets = true
		}
	}
	ph := g.phaseAt(p)
	if ph != Off && (g.phase == Off || newSets) {
		g.begin()
	}
	g.phase = ph
}

// Step follows a timestep marker (or a call or return of the timestep
// function): begin true when a timestep begins, false when it ends. Only
// the outermost timestep counts. Of the timesteps, number i (from 0) is
// simulated when Taken(i, f) (TakesStep).
func (g *Gate) Step(begin bool) {
	if g.spec.Timesteps == 0 {
		return
	}
	if begin {
		g.depth++
		if g.depth > 1 {
			return
		}
		i := g.steps
		g.steps++
		if TakesStep(i, g.spec.Timesteps) {
			g.Taken++
			g.phase = On
			g.begin()
		}
		return
	}
	if g.depth == 0 {
		return // an end without a begin
	}
	g.depth--
	if g.depth == 0 {
		g.phase = Off
	}
}

// chooseSets picks the sampled sets: SetNum consecutive residues modulo
// SetDen, starting at one drawn from the seed (and the window, with vary).
func (g *Gate) chooseSets() {
	if g.spec.SetDen > 0 {
		g.residue = Mix(g.spec.Seed, g.k, 2) % g.spec.SetDen
	}
}

// SetIn reports whether the reference to address a falls in a sampled set
// (always true without set sampling).
func (g *Gate) SetIn(a uint64) bool {
	d := g.spec.SetDen
	return d == 0 || (a>>g.lineShift+d-g.residue)%d < g.spec.SetNum
}

// ProcIn reports whether processor p is sampled (always true without
// processor sampling).
func (g *Gate) ProcIn(p int) bool {
	d := g.spec.ProcDen
	return d == 0 || uint64(p)%d < g.spec.ProcNum
}

// TakesStep reports whether timestep i (from 0) is simulated when a
// fraction f of them is: when ⌊(i+1)·p/10⁹⌋ > ⌊i·p/10⁹⌋ in integers, p
// being f in parts per billion (rounded). That takes every 40th for 2.5%,
// and exactly ⌊n·p/10⁹⌋ of the first n.
func TakesStep(i uint64, f float64) bool {
	p := uint64(math.Round(f * 1e9))
	return (i+1)*p/1e9 > i*p/1e9
}
