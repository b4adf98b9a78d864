package sim_test

// Randomized differential test: the engine against the reference model of
// reference_test.go, on random machines and random traces.
//
// go test ./sim/ runs 15000 cases (500 with -short) in a few seconds. For a
// soak run set MEMSPY_SOAK to a duration:
//
//	MEMSPY_SOAK=10m go test ./sim/ -run TestDifferential -v -timeout 0
//
// and MEMSPY_SEED to start from a given seed (a failure prints the seed of
// its case; MEMSPY_SEED=that MEMSPY_CASES=1 replays it).

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/profile"
	"github.com/memspy/memspy/sim"
	"github.com/memspy/memspy/trace"
)

// chooser is a source of choices: a PRNG in the differential test, the
// fuzzer's bytes in FuzzHierarchy.
type chooser interface {
	// intn returns a value in [0, n), n > 0.
	intn(n int) int
	// u64 returns an arbitrary 64-bit value.
	u64() uint64
}

type rngChooser struct{ r *rand.Rand }

func (c rngChooser) intn(n int) int { return c.r.IntN(n) }
func (c rngChooser) u64() uint64    { return c.r.Uint64() }

// pick returns true with probability num/den.
func pick(ch chooser, num, den int) bool { return ch.intn(den) < num }

var allPolicies = []machine.Replacement{machine.LRU, machine.FIFO, machine.Random, machine.PLRU, machine.SRRIP, machine.BRRIP}

func isPow2(n int) bool { return n > 0 && n&(n-1) == 0 }

// genMachine returns a random normalized machine of 1 to 4 caches. Under
// classify, plru is only used where the fully associative twin can have it
// too. A parallel machine has 2 to 4 processors, private caches (of one
// line size, none exclusive) and shared ones after them.
func genMachine(ch chooser, classify, parallel bool) *machine.Machine {
	n := 1 + ch.intn(4)
	split := n >= 2 && pick(ch, 1, 3)
	m := &machine.Machine{Name: "random", MemoryLatency: 100}
	level := 1
	for i := range n {
		var c machine.Cache
		c.Name = fmt.Sprintf("C%d", i)
		switch {
		case split && i == 0:
			c.Holds, level = machine.Instructions, 1
		case split && i == 1:
			c.Holds, level = machine.Data, 1
		default:
			if i > 0 {
				switch ch.intn(10) {
				case 0: // same level: a cache no request reaches unless it is first on a path
				case 1:
					level += 2
				default:
					level++
				}
			}
			switch ch.intn(10) {
			case 0, 1:
				c.Holds = machine.Data
			case 2:
				c.Holds = machine.Instructions
			default:
				c.Holds = machine.Unified
			}
		}
		c.Level = level
		switch ch.intn(10) {
		case 0, 1: // fully associative
			c.Sets = 1
			c.Assoc = 1 + ch.intn(40)
		case 2:
			c.Sets = 1 + ch.intn(64)
			c.Assoc = 1 + ch.intn(20)
		default: // small: many evictions
			c.Sets = 1 + ch.intn(8)
			c.Assoc = 1 + ch.intn(6)
			if pick(ch, 1, 4) {
				c.Assoc = 17 + ch.intn(4) // the engine's hashed lookup
			}
		}
		c.Line = 4 << ch.intn(6)
		if i > 0 && pick(ch, 1, 2) {
			c.Line = m.Caches[i-1].Line // equal lines: more legal exclusive caches
		}
		c.Replacement = allPolicies[ch.intn(len(allPolicies))]
		if c.Replacement == machine.PLRU && (!isPow2(c.Assoc) || classify && !isPow2(c.Sets*c.Assoc)) {
			c.Replacement = machine.LRU
		}
		c.Seed = ch.u64()
		c.WriteBack = pick(ch, 2, 3)
		c.WriteAllocate = pick(ch, 2, 3)
		c.Inclusion = machine.NonInclusive
		c.Latency = 1 + i
		c.Size = int64(c.Sets) * int64(c.Assoc) * int64(c.Line)
		m.Caches = append(m.Caches, c)
	}
	if parallel {
		m.Processors = 2 + ch.intn(3)
		if pick(ch, 1, 3) {
			m.Mapping = machine.Pinned
			for range 1 + ch.intn(5) {
				m.Pin = append(m.Pin, ch.intn(m.Processors))
			}
		}
		// A suffix of the caches is shared.
		shared := ch.intn(len(m.Caches) + 1)
		line := 0
		for i := range m.Caches {
			c := &m.Caches[i]
			if i >= shared {
				c.Shared = true
				continue
			}
			if line == 0 {
				line = c.Line
			}
			c.Line = line
			c.Size = int64(c.Sets) * int64(c.Assoc) * int64(c.Line)
		}
	}
	// Inclusion, decided in order once the paths are known.
	for i := range m.Caches {
		c := &m.Caches[i]
		switch ch.intn(4) {
		case 0:
			c.Inclusion = machine.Inclusive
		case 1:
			if m.Processors > 1 && !c.Shared {
				break // not supported
			}
			if line, ok := exclusiveLine(m, i); ok {
				c.Inclusion = machine.Exclusive
				if line != 0 {
					c.Line = line
					c.Size = int64(c.Sets) * int64(c.Assoc) * int64(c.Line)
				}
			}
		}
	}
	return m
}

// exclusiveLine reports whether cache i of m may be exclusive: it is not at
// level 1, and every cache that sends anything to it sends it its victims
// and has one line size, which it returns (0: no cache above).
func exclusiveLine(m *machine.Machine, i int) (int, bool) {
	if m.Caches[i].Level <= 1 {
		return 0, false
	}
	one := *m
	one.Processors = 1
	r := newRefModel(&one, false, false)
	x := r.caches[i]
	line := 0
	for _, u := range r.caches {
		direct := false
		for _, t := range u.targets() {
			direct = direct || t == x
		}
		if !direct {
			continue
		}
		if u.victimDown() != x || line != 0 && u.spec.Line != line {
			return 0, false
		}
		line = u.spec.Line
	}
	return line, true
}

// genTrace returns up to maxEvents random events over a small footprint
// of m, so that there are hits, evictions and reuse.
func genTrace(ch chooser, m *machine.Machine, maxEvents int) []refEvent {
	var total int64
	for _, c := range m.Caches {
		total += c.Size
	}
	footprint := uint64(total)*uint64(1+ch.intn(3)) + 64
	if pick(ch, 1, 4) {
		footprint = uint64(total)/2 + 64 // mostly fits: hits below the first level
	}
	nregions := 1 + ch.intn(3)
	var bases []uint64
	for range nregions {
		switch ch.intn(6) {
		case 0:
			bases = append(bases, 0)
		case 1: // straddling the top of the address space
			bases = append(bases, -footprint/2)
		case 2:
			bases = append(bases, ch.u64())
		default:
			bases = append(bases, uint64(ch.intn(1<<20))*64)
		}
	}
	n := 1 + ch.intn(maxEvents)
	events := make([]refEvent, 0, n)
	var prev, prev2 uint64
	threads := 1
	if m.Processors > 1 {
		threads = 1 + ch.intn(6)
	}
	var tid uint32
	for range n {
		if pick(ch, 1, 8) { // a run of another thread
			tid = uint32(ch.intn(threads)) * 1000
		}
		if pick(ch, 1, 12) {
			e := genExtended(ch, len(events))
			e.Thread = tid
			events = append(events, e)
			continue
		}
		var e refEvent
		switch r := ch.intn(100); {
		case r < 32:
			e.Kind = trace.Read
		case r < 35:
			e.Kind = trace.Misc
		case r < 60:
			e.Kind = trace.Write
		case r < 80:
			e.Kind = trace.IFetch
		case r < 90:
			e.Kind = trace.Modify
		case r < 95:
			e.Kind = trace.CopyBack
		default:
			e.Kind = trace.Invalidate
		}
		switch {
		case pick(ch, 1, 4): // reuse: the hit bypass
			e.Addr = prev + uint64(ch.intn(9)) - 4
		case pick(ch, 1, 6): // the line before: two lines used in turn
			e.Addr = prev2 + uint64(ch.intn(9)) - 4
		case pick(ch, 1, 8): // another line of the same set of some cache
			c := m.Caches[ch.intn(len(m.Caches))]
			e.Addr = prev + uint64(1+ch.intn(2))*uint64(c.Sets)*uint64(c.Line)
		default:
			e.Addr = bases[ch.intn(len(bases))] + uint64(ch.intn(int(min(footprint, 1<<30))))
		}
		if e.Kind == trace.CopyBack || e.Kind == trace.Invalidate {
			switch ch.intn(5) {
			case 0, 1:
				e.Size = 0
			case 2, 3:
				e.Size = uint32(1 + ch.intn(200))
			default:
				e.Size = uint32(1 + ch.intn(4096))
			}
		} else {
			switch r := ch.intn(100); {
			case r < 3:
				e.Size = 0
			case r < 60:
				e.Size = 1 << ch.intn(4)
			case r < 90:
				e.Size = uint32(1 + ch.intn(64))
			default:
				e.Size = uint32(1 + ch.intn(200))
			}
		}
		if e.Kind == trace.Write && pick(ch, 1, 8) {
			// A write of a whole line of some cache: allocated without a
			// fetch there.
			line := uint64(m.Caches[ch.intn(len(m.Caches))].Line)
			e.Addr &^= line - 1
			e.Size = uint32(line)
		}
		prev, prev2 = e.Addr, prev
		e.Thread = tid
		events = append(events, e)
	}
	return events
}

// genExtended returns a random extended event: an allocation, call or
// return with arbitrary details, or a marker, often a reset or a dump.
func genExtended(ch chooser, n int) refEvent {
	e := refEvent{Kind: []trace.Kind{trace.Alloc, trace.Free, trace.Call, trace.Return, trace.Marker}[ch.intn(5)], Addr: ch.u64()}
	if pick(ch, 1, 2) {
		e.Ext.Size, e.Ext.SP = uint64(ch.intn(1<<16)), ch.u64()
		for range ch.intn(4) {
			e.Ext.Stack = append(e.Ext.Stack, ch.u64())
		}
	}
	if e.Kind == trace.Marker {
		switch ch.intn(3) {
		case 0:
			e.Ext.Mark = trace.MarkReset
		case 1:
			e.Ext.Mark = trace.MarkDump
		default:
			e.Ext.Mark = trace.MarkKind(ch.intn(int(trace.MarkDump) + 1))
		}
	}
	e.Ext.Name = fmt.Sprint("x", n)
	return e
}

// runEngine simulates events on m with package sim, fed in batches whose
// sizes come from batchSeed (0: one batch), and returns its counters.
func runEngine(t testing.TB, m *machine.Machine, opt sim.Options, events []refEvent, batchSeed uint64) refResult {
	t.Helper()
	p := engineProfile(t, m, opt, events, batchSeed)
	var want uint64 // events since the last reset, extended events not counted
	for _, e := range events {
		switch {
		case e.Kind == trace.Marker && e.Ext.Mark == trace.MarkReset:
			want = 0
		case e.Kind == trace.IFetchRun:
			want += uint64(e.Size)
		case !e.Kind.IsExtended():
			want++
		}
	}
	if p.Events != want {
		t.Errorf("profile counts %d events, want %d", p.Events, want)
	}
	if opt.Attribute {
		checkAttribution(t, p)
		for i := range p.Caches {
			p.Caches[i].Causes = nil // the reference model has no attribution
		}
	}
	return refResult{Caches: p.Caches, Memory: p.Memory, NotSimulated: p.NotSimulated, Dumps: p.Dumps, Resets: p.Resets, Processors: p.Processors}
}

// engineProfile runs events through the engine in batches cut at random
// from batchSeed (0: one batch) and returns the profile. References get
// one of a few PCs by the position of their event.
func engineProfile(t testing.TB, m *machine.Machine, opt sim.Options, events []refEvent, batchSeed uint64) *profile.Profile {
	t.Helper()
	h, err := sim.New(m, opt)
	if err != nil {
		t.Fatalf("sim.New: %v\nmachine: %s", err, describeMachine(m))
	}
	rng := rand.New(rand.NewPCG(batchSeed, 7))
	b := trace.NewBatch(64)
	for i := 0; i < len(events); {
		n := len(events) - i
		if batchSeed != 0 {
			n = min(n, 1+rng.IntN(64))
		}
		b.Reset()
		for j, e := range events[i : i+n] {
			if e.Kind.IsExtended() {
				b.AppendExt(e.Kind, e.Addr, 0, e.Thread, e.Ext)
			} else {
				b.Append(e.Kind, e.Addr, e.Size, 0x400000+uint64((i+j)%5)*4, e.Thread)
			}
		}
		h.Process(b)
		i += n
	}
	h.Finish()
	return h.Profile()
}

// checkMissOnly checks that counting misses only gives the misses, causes
// and evictors of the full mode, per object and per reference.
func checkMissOnly(t *testing.T, seed uint64, m *machine.Machine, opt sim.Options, events []refEvent) bool {
	full := opt
	full.MissOnly = false
	p := engineProfile(t, m, full, events, 0)
	opt.MissOnly = true
	q := engineProfile(t, m, opt, events, 0)
	type missStats struct {
		Misses                     uint64
		Causes                     profile.Causes
		EvictedBy                  map[string]uint64
		InvalidatedBy, Invalidated []profile.Sharing
	}
	project := func(p *profile.Profile) map[string]missStats {
		out := map[string]missStats{}
		add := func(key string, levels map[string]*profile.Stats) {
			for c, s := range levels {
				if s.Misses > 0 || len(s.EvictedBy) > 0 || len(s.InvalidatedBy) > 0 || len(s.Invalidated) > 0 {
					out[key+" @"+c] = missStats{s.Misses, s.Causes, s.EvictedBy, s.InvalidatedBy, s.Invalidated}
				}
			}
		}
		for _, o := range p.Objects {
			add("object "+o.Name, o.Levels)
		}
		for _, r := range p.References {
			add(fmt.Sprintf("reference %#x %s %s", r.PC, r.Function, r.Object), r.Levels)
		}
		return out
	}
	if d := cmp.Diff(project(p), project(q)); d != "" {
		t.Errorf("seed %d: counting misses only changes them (-full +miss-only):\n%s\nmachine: %s\nevents:\n%s", seed, d, describeMachine(m), formatEvents(events))
		return false
	}
	// The instructions each function fetched: the hit bypass counts them
	// in runs when only misses are counted. (A function that made only
	// hits and fetched nothing is listed in the full mode alone.)
	instructions := func(p *profile.Profile) map[string]uint64 {
		out := map[string]uint64{}
		for _, f := range p.Functions {
			if f.Instructions > 0 {
				out[f.Name] = f.Instructions
			}
		}
		return out
	}
	if d := cmp.Diff(instructions(p), instructions(q)); d != "" {
		t.Errorf("seed %d: counting misses only changes the functions' instructions (-full +miss-only):\n%s\nmachine: %s\nevents:\n%s", seed, d, describeMachine(m), formatEvents(events))
		return false
	}
	return true
}

// checkAttribution checks that the where-and-why entries add up: the
// pairs, the objects and the functions of every cache to its counters
// (fetched instructions aside, the functions), the causes to its misses,
// the evicted-by tables to its evictions; every entry's hits and misses to
// its accesses, its temporal and spatial hits to its hits, and its used
// bytes stay within its fetched bytes.
func checkAttribution(t testing.TB, p *profile.Profile) {
	t.Helper()
	if !p.Options.Where {
		t.Fatalf("no where-and-why data")
	}
	for _, c := range p.Caches {
		sum := func(what string, n int, at func(int) *profile.Stats) {
			var s profile.Stats
			for i := range n {
				st := at(i)
				if st == nil {
					continue
				}
				s.Add(st)
				if !p.Options.MissOnly && (st.Hits+st.Misses != st.Accesses || st.TemporalHits+st.SpatialHits != st.Hits) {
					t.Errorf("%s: %s %d: %+v: hits and misses do not add up", c.Name, what, i, st)
				}
				if st.Causes.Cold+st.Causes.Replacement+st.Causes.Invalidation+st.Causes.Unknown != st.Misses || st.UsedBytes > st.FetchedBytes {
					t.Errorf("%s: %s %d: %+v: causes or byte use do not add up", c.Name, what, i, st)
				}
			}
			// The entries count misc references as reads.
			if !p.Options.MissOnly && (s.IFetches != c.IFetches || s.Reads != c.Reads+c.Misc || s.Writes != c.Writes) {
				t.Errorf("%s: %s add up to %d/%d/%d accesses, the cache counts %d/%d+%d/%d", c.Name, what, s.IFetches, s.Reads, s.Writes, c.IFetches, c.Reads, c.Misc, c.Writes)
			}
			if s.IFetchMisses != c.IFetchMisses || s.ReadMisses != c.ReadMisses+c.MiscMisses || s.WriteMisses != c.WriteMisses {
				t.Errorf("%s: %s add up to %d/%d/%d misses, the cache counts %d/%d+%d/%d", c.Name, what, s.IFetchMisses, s.ReadMisses, s.WriteMisses, c.IFetchMisses, c.ReadMisses, c.MiscMisses, c.WriteMisses)
			}
			if c.Causes == nil || s.Causes != *c.Causes {
				t.Errorf("%s: %s causes %+v, the cache's %+v", c.Name, what, s.Causes, c.Causes)
			}
			var ev uint64
			for _, n := range s.EvictedBy {
				ev += n
			}
			if ev != c.Evictions {
				t.Errorf("%s: %s evicted-by tables add up to %d, evictions %d", c.Name, what, ev, c.Evictions)
			}
			for _, side := range [][]profile.Sharing{s.InvalidatedBy, s.Invalidated} {
				var lost uint64
				for _, x := range side {
					lost += x.Lines
				}
				if lost != c.Invalidations {
					t.Errorf("%s: %s invalidation tables add up to %d lines, the cache lost %d", c.Name, what, lost, c.Invalidations)
				}
			}
		}
		sum("pairs", len(p.Pairs), func(i int) *profile.Stats { return p.Pairs[i].Levels[c.Name] })
		sum("objects", len(p.Objects), func(i int) *profile.Stats { return p.Objects[i].Levels[c.Name] })
		sum("functions", len(p.Functions), func(i int) *profile.Stats { return p.Functions[i].Levels[c.Name] })
	}
	checkTimelineAndLineUse(t, p)
}

// diffCase compares engine and reference on one case and returns the
// difference ("" when they agree).
func diffCase(t testing.TB, m *machine.Machine, opt sim.Options, events []refEvent, batchSeed uint64) string {
	want := runReference(m, opt.Classify, opt.CacheLab, events)
	got := runEngine(t, m, opt, events, batchSeed)
	return cmp.Diff(want, got)
}

// shrink returns a short trace on which engine and reference still
// differ: the shortest failing prefix found by bisection, then chunks
// removed while the difference persists.
func shrink(t testing.TB, m *machine.Machine, opt sim.Options, events []refEvent) []refEvent {
	fails := func(ev []refEvent) bool { return diffCase(t, m, opt, ev, 0) != "" }
	if !fails(events) {
		return events // fails only with its batching; keep it whole
	}
	lo, hi := 0, len(events) // events[:lo] passes (assumed for lo = 0), events[:hi] fails
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if fails(events[:mid]) {
			hi = mid
		} else {
			lo = mid
		}
	}
	ev := append([]refEvent(nil), events[:hi]...)
	for chunk := len(ev) / 2; chunk >= 1; chunk /= 2 {
		for i := 0; i+chunk <= len(ev)-1; { // keep the last event: it is where the prefix starts to fail
			try := append(append([]refEvent(nil), ev[:i]...), ev[i+chunk:]...)
			if fails(try) {
				ev = try
			} else {
				i += chunk
			}
		}
	}
	return ev
}

func formatEvents(ev []refEvent) string {
	var b strings.Builder
	for _, e := range ev {
		if e.Kind.IsExtended() {
			fmt.Fprintf(&b, "\t{Kind: trace.%s, Addr: %#x, Ext: %#v, Thread: %d},\n", kindConst(e.Kind), e.Addr, e.Ext, e.Thread)
		} else {
			fmt.Fprintf(&b, "\t{Kind: trace.%s, Addr: %#x, Size: %d, Thread: %d},\n", kindConst(e.Kind), e.Addr, e.Size, e.Thread)
		}
	}
	return b.String()
}

func kindConst(k trace.Kind) string {
	switch k {
	case trace.Read:
		return "Read"
	case trace.Write:
		return "Write"
	case trace.IFetch:
		return "IFetch"
	case trace.Modify:
		return "Modify"
	case trace.Misc:
		return "Misc"
	case trace.CopyBack:
		return "CopyBack"
	case trace.Invalidate:
		return "Invalidate"
	case trace.Alloc:
		return "Alloc"
	case trace.Free:
		return "Free"
	case trace.Call:
		return "Call"
	case trace.Return:
		return "Return"
	case trace.Marker:
		return "Marker"
	}
	return k.String()
}

// checkCase runs one random case from seed and reports a shrunk failure.
func checkCase(t *testing.T, seed uint64) bool {
	maxEvents := 400
	if seed%10 == 0 {
		maxEvents = 3000 // now and then a long trace
	}
	rng := rand.New(rand.NewPCG(seed, 0x6d656d737079))
	ch := rngChooser{rng}
	opt := sim.Options{Classify: pick(ch, 1, 2), CacheLab: pick(ch, 1, 5), Attribute: pick(ch, 1, 3)}
	opt.MissOnly = opt.Attribute && pick(ch, 1, 2)
	parallel := pick(ch, 1, 3)
	if parallel {
		opt.Classify, opt.CacheLab = false, false // for one processor
	}
	m := genMachine(ch, opt.Classify, parallel)
	events := genTrace(ch, m, maxEvents)
	batchSeed := rng.Uint64() | 1
	d := diffCase(t, m, opt, events, batchSeed)
	if d == "" {
		if opt.Attribute && !checkMissOnly(t, seed, m, opt, events) {
			return false
		}
		return checkRuns(t, seed, m, opt, events, batchSeed)
	}
	short := shrink(t, m, opt, events)
	t.Errorf("seed %d: engine and reference differ (-reference +engine):\n%s\noptions: %+v\nmachine: %s\n"+
		"%d events, shrunk to %d (-reference +engine on the shrunk trace):\n%s\nevents:\n%s",
		seed, d, opt, describeMachine(m), len(events), len(short), diffCase(t, m, opt, short, 0), formatEvents(short))
	return false
}

// foldRuns folds events into trace.IFetchRun events as the Valgrind reader
// does with SetIFetchRuns(block): a fetch lying inside one block joins the
// run of the last fetch when it is in the same block and only data
// references of its thread came between them; a run of one stays an
// IFetch.
func foldRuns(events []refEvent, block uint64) []refEvent {
	var out []refEvent
	open := -1 // index in out of the run the next fetch may join
	for _, e := range events {
		if open >= 0 && e.Thread != out[open].Thread {
			open = -1 // runs are one thread's
		}
		switch {
		case e.Kind == trace.Read || e.Kind == trace.Write || e.Kind == trace.Modify || e.Kind == trace.Misc:
		case e.Kind == trace.IFetch && e.Size > 0 && e.Addr&(block-1)+uint64(e.Size) <= block:
			if open >= 0 && out[open].Addr/block == e.Addr/block {
				if r := &out[open]; r.Kind == trace.IFetch {
					r.Kind, r.Size = trace.IFetchRun, 2
				} else {
					r.Size++
				}
				continue
			}
			open = len(out)
		default:
			open = -1
		}
		out = append(out, e)
	}
	return out
}

// checkRuns checks that folding the fetches of events into runs changes no
// result on m, when the engine says folding is exact there.
func checkRuns(t *testing.T, seed uint64, m *machine.Machine, opt sim.Options, events []refEvent, batchSeed uint64) bool {
	h, err := sim.New(m, opt)
	if err != nil {
		t.Fatal(err)
	}
	block, spans := h.IFetchRuns()
	if block == 0 || spans {
		return true // (spans: TestFetchSpans)
	}
	folded := foldRuns(events, uint64(block))
	want := runReference(m, opt.Classify, opt.CacheLab, events)
	if d := cmp.Diff(want, runEngine(t, m, opt, folded, batchSeed)); d != "" {
		t.Errorf("seed %d: fetches folded into runs of %d-byte blocks change the results (-unfolded +folded):\n%s\noptions: %+v\nmachine: %s\nfolded events:\n%s",
			seed, block, d, opt, describeMachine(m), formatEvents(folded))
		return false
	}
	return true
}

func envUint(name string, def uint64) uint64 {
	if s := os.Getenv(name); s != "" {
		if v, err := strconv.ParseUint(s, 0, 64); err == nil {
			return v
		}
	}
	return def
}

func TestDifferential(t *testing.T) {
	cases := 15000
	if testing.Short() {
		cases = 500
	}
	cases = int(envUint("MEMSPY_CASES", uint64(cases)))
	seed := envUint("MEMSPY_SEED", 1)
	var deadline time.Time
	if s := os.Getenv("MEMSPY_SOAK"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("MEMSPY_SOAK: %v", err)
		}
		deadline = time.Now().Add(d)
		cases = math.MaxInt
	}
	failures, ran := 0, 0
	for i := 0; i < cases; i++ {
		if !deadline.IsZero() && time.Now().After(deadline) {
			break
		}
		ran++
		if !checkCase(t, seed+uint64(i)) {
			failures++
			if failures >= 3 {
				t.Fatalf("stopping after %d failures", failures)
			}
		}
	}
	t.Logf("%d random cases from seed %d", ran, seed)
}
