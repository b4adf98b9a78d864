package sim_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/profile"
	"github.com/memspy/memspy/sim"
	"github.com/memspy/memspy/trace"
)

// TestTimelineWorked follows the points of a timeline of 4 events per
// point through a dump and a reset, on a direct-mapped cache of four
// 64-byte lines.
func TestTimelineWorked(t *testing.T) {
	m := mach(hc("L1", 1, 4, 1, 64, machine.LRU))
	events := []refEvent{
		rd(0x000, 8), // miss
		rd(0x008, 8), // hit
		rd(0x100, 8), // miss (set 0)
		rd(0x000, 8), // miss: a point after 4 events, 3 misses
		rd(0x040, 8), // miss (set 1)
		mark(trace.MarkDump, "d1"),
		rd(0x040, 8),
		rd(0x048, 8),
		rd(0x050, 8), // a point after 8 events: 4 accesses, 1 miss
		mark(trace.MarkReset, ""),
		rd(0x100, 8), // miss
		rd(0x000, 8), // miss: the last point, from the reset at 8 to 10
	}
	p := runWorked(t, m, sim.Options{Attribute: true, TimelineInterval: 4}, events, make([]uint64, len(events)))
	want := &profile.Timeline{
		Interval: 4, Start: 8, End: []uint64{10}, Events: []uint64{2}, Instructions: []uint64{0},
		Caches: []profile.TimelineCache{{Name: "L1", Accesses: []uint64{2}, Misses: []uint64{2},
			IFetchMisses: []uint64{0}, ReadMisses: []uint64{2}, WriteMisses: []uint64{0}}},
		Marks: []profile.TimelineMark{{Kind: "dump", Name: "d1", Event: 5}, {Kind: "reset", Event: 8}},
	}
	if diff := cmp.Diff(want, p.Timeline); diff != "" {
		t.Errorf("timeline (-want +got):\n%s", diff)
	}
	// Without the reset, the points before it stay.
	events = append(events[:9:9], events[10:]...)
	p = runWorked(t, m, sim.Options{Attribute: true, TimelineInterval: 4}, events, make([]uint64, len(events)))
	want = &profile.Timeline{
		Interval: 4, End: []uint64{4, 8, 10}, Events: []uint64{4, 4, 2}, Instructions: []uint64{0, 0, 0},
		Caches: []profile.TimelineCache{{Name: "L1", Accesses: []uint64{4, 4, 2}, Misses: []uint64{3, 1, 2},
			IFetchMisses: []uint64{0, 0, 0}, ReadMisses: []uint64{3, 1, 2}, WriteMisses: []uint64{0, 0, 0}}},
		Marks: []profile.TimelineMark{{Kind: "dump", Name: "d1", Event: 5}},
	}
	if diff := cmp.Diff(want, p.Timeline); diff != "" {
		t.Errorf("timeline without the reset (-want +got):\n%s", diff)
	}
	// Without --where there is none.
	h, err := sim.New(m, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p := h.Profile(); p.Timeline != nil {
		t.Errorf("a timeline without attribution: %+v", p.Timeline)
	}
}

// TestTimelineBounded runs 8 M events with a first interval of 16: the
// timeline keeps at most profile.MaxTimelinePoints points, evenly spaced
// but the last, and its columns add up to the profile's counters, the
// final write-back included.
func TestTimelineBounded(t *testing.T) {
	m := mach(hc("L1", 1, 16, 2, 64, machine.LRU), hc("L2", 2, 64, 4, 64, machine.LRU))
	h, err := sim.New(m, sim.Options{Attribute: true, TimelineInterval: 16})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	b := trace.NewBatch(4096)
	for range 2000 {
		b.Reset()
		for range 4096 {
			k := trace.Read
			if rng.IntN(4) == 0 {
				k = trace.Write
			}
			b.Append(k, 0x10000+rng.Uint64N(1<<16), 8, 0x400, 1)
		}
		h.Process(b)
	}
	h.Finish()
	p := h.Profile()
	tl := p.Timeline
	if p.Sampling != nil || tl == nil {
		if (p.Sampling == nil) != (tl != nil) {
			t.Errorf("timeline %v in a sampled run: %v", tl != nil, p.Sampling != nil)
		}
		return
	}
	n := tl.Len()
	if n >= profile.MaxTimelinePoints || n < profile.MaxTimelinePoints/2 {
		t.Fatalf("%d points", n)
	}
	// 8,192,000 events in 500 points of 16 << 10 events.
	if tl.Interval != 16<<10 || n != 500 {
		t.Errorf("%d points of %d events, want 500 of %d", n, tl.Interval, 16<<10)
	}
	var events uint64
	for k := range n {
		if k < n-1 && tl.End[k] != uint64(k+1)*tl.Interval {
			t.Fatalf("point %d ends at %d, want %d", k, tl.End[k], uint64(k+1)*tl.Interval)
		}
		events += tl.Events[k]
	}
	if events != p.Events || tl.End[n-1] != p.Events {
		t.Errorf("events %d, last end %d, want %d", events, tl.End[n-1], p.Events)
	}
	for i, c := range p.Caches {
		got := tl.Total(i)
		want := profile.TimelineCounts{Accesses: c.Accesses, Misses: c.Misses, IFetchMisses: c.IFetchMisses,
			ReadMisses: c.ReadMisses + c.MiscMisses, WriteMisses: c.WriteMisses}
		if got != want {
			t.Errorf("%s: timeline adds up to %+v, the profile has %+v", c.Name, got, want)
		}
	}
	if p.Caches[1].Writes == 0 {
		t.Error("no write-backs to L2: the test does not check the final one")
	}
}

// TestLineUseWorked counts the byte offsets used of two objects' lines on
// a direct-mapped cache of four 64-byte lines: as lines leave, and those
// resident at the end.
func TestLineUseWorked(t *testing.T) {
	m := mach(hc("L1", 1, 4, 1, 64, machine.LRU))
	alloc := func(a, site uint64) refEvent {
		return refEvent{Kind: trace.Alloc, Addr: a, Ext: trace.Ext{Size: 256, Stack: []uint64{site}, Name: "malloc"}}
	}
	events := []refEvent{
		alloc(0x10000, 0xa00), // A
		alloc(0x20000, 0xb00), // B: the same sets
		rd(0x10000, 8),        // A's line 0: bytes 0-7
		rd(0x10010, 4),        // bytes 16-19
		rd(0x20000, 8),        // B's line 0 (0-7) evicts A's: {0-7, 16-19}
		rd(0x10000, 2),        // A's line 0 (0-1) evicts B's: {0-7}
		rd(0x10041, 1),        // A's line 1: byte 1
	}
	p := runWorked(t, m, sim.Options{Attribute: true}, events, make([]uint64, len(events)))
	wantA := make([]uint64, 20)
	for i := range wantA {
		switch {
		case i == 0:
			wantA[i] = 2 // the first residency, and at the end
		case i == 1:
			wantA[i] = 3 // and line 1
		case i < 8 || i >= 16:
			wantA[i] = 1
		}
	}
	want := map[string]map[string][]uint64{
		"heap@0xa00": {"L1": wantA},
		"heap@0xb00": {"L1": {1, 1, 1, 1, 1, 1, 1, 1}},
	}
	got := map[string]map[string][]uint64{}
	for _, o := range p.Objects {
		if o.LineUse != nil {
			got[o.Name] = o.LineUse
		}
		// The lines counted are those the byte use counts.
		if lines, fetched := sumOf(o.LineUse["L1"]), o.Levels["L1"].FetchedBytes/64; o.LineUse != nil && lines > 0 && fetched == 0 {
			t.Errorf("%s: line use %d without fetched bytes", o.Name, lines)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("line use (-want +got):\n%s", diff)
	}
	if n := p.Objects[0].Levels["L1"].FetchedBytes; n == 0 {
		t.Errorf("no bytes fetched")
	}
	// Used bytes add up to the offsets' counts.
	for _, o := range p.Objects {
		if use := o.LineUse["L1"]; sumOf(use) != o.Levels["L1"].UsedBytes {
			t.Errorf("%s: line use adds up to %d, used bytes %d", o.Name, sumOf(use), o.Levels["L1"].UsedBytes)
		}
	}
}

// checkTimelineAndLineUse checks that p has a timeline unless sampled,
// which adds up to its caches' counters and events (and its processors'),
// and that each object's line use adds up to its
// used bytes, no offset counting more lines than it fetched.
func checkTimelineAndLineUse(t testing.TB, p *profile.Profile) {
	t.Helper()
	tl := p.Timeline
	if p.Sampling != nil || tl == nil {
		if (p.Sampling == nil) != (tl != nil) {
			t.Errorf("timeline %v in a sampled run: %v", tl != nil, p.Sampling != nil)
		}
		return
	}
	if events := sumOf(tl.Events); events != p.Events {
		t.Errorf("timeline: %d events, the profile %d", events, p.Events)
	}
	for i, c := range p.Caches {
		want := profile.TimelineCounts{Accesses: c.Accesses, Misses: c.Misses, IFetchMisses: c.IFetchMisses,
			ReadMisses: c.ReadMisses + c.MiscMisses, WriteMisses: c.WriteMisses}
		if got := tl.Total(i); got != want {
			t.Errorf("%s: timeline adds up to %+v, the profile has %+v", c.Name, got, want)
		}
	}
	if len(tl.Processors) != len(p.Processors) {
		t.Errorf("timeline: %d processors, the profile %d", len(tl.Processors), len(p.Processors))
	}
	for _, pr := range p.Processors {
		for _, c := range pr.Caches {
			var got profile.TimelineCounts
			for k := range tl.Len() {
				n, ok := tl.ProcessorCounts(pr.Processor, c.Name, k)
				if !ok {
					t.Fatalf("timeline: no %s of processor %d", c.Name, pr.Processor)
				}
				got.Accesses, got.Misses, got.ReadMisses = got.Accesses+n.Accesses, got.Misses+n.Misses, got.ReadMisses+n.ReadMisses
				got.IFetchMisses, got.WriteMisses = got.IFetchMisses+n.IFetchMisses, got.WriteMisses+n.WriteMisses
			}
			want := profile.TimelineCounts{Accesses: c.Accesses, Misses: c.Misses, IFetchMisses: c.IFetchMisses,
				ReadMisses: c.ReadMisses + c.MiscMisses, WriteMisses: c.WriteMisses}
			if got != want {
				t.Errorf("processor %d %s: timeline adds up to %+v, the profile has %+v", pr.Processor, c.Name, got, want)
			}
		}
	}
	for _, o := range p.Objects {
		for name, use := range o.LineUse {
			s, mc := o.Levels[name], p.Machine.Caches[slices.IndexFunc(p.Machine.Caches, func(c machine.Cache) bool { return c.Name == name })]
			if sumOf(use) != s.UsedBytes || len(use) > mc.Line || slices.Max(append(use, 0)) > s.FetchedBytes/uint64(mc.Line) {
				t.Errorf("%s at %s: line use %v, used bytes %d of %d", o.Name, name, use, s.UsedBytes, s.FetchedBytes)
			}
		}
		if o.LineUse == nil && o.UsedBytes > 0 {
			t.Errorf("%s: used bytes without line use", o.Name)
		}
	}
}

func sumOf(s []uint64) uint64 {
	var n uint64
	for _, v := range s {
		n += v
	}
	return n
}

// TestTimelineProcessors runs two threads on two processors with private
// L1s and a shared L2: the timeline has each processor's L1 apart, adding
// up to the processor's counters and, over both, to the cache's.
func TestTimelineProcessors(t *testing.T) {
	l1 := hc("L1", 1, 4, 2, 64, machine.LRU)
	m := mach(l1, with(hc("L2", 2, 64, 4, 64, machine.LRU), func(c *machine.Cache) { c.Shared = true }))
	m.Processors = 2
	h, err := sim.New(m, sim.Options{Attribute: true, TimelineInterval: 64})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	b := trace.NewBatch(1000)
	for range 1000 {
		b.Append(trace.Write, 0x10000+rng.Uint64N(1<<12), 8, 0x400, 1+uint32(rng.IntN(2)))
	}
	h.Process(b)
	h.Finish()
	p := h.Profile()
	checkTimelineAndLineUse(t, p)
	tl := p.Timeline
	if len(tl.Processors) != 2 || len(tl.Processors[1].Caches) != 1 || tl.Processors[1].Caches[0].Name != "L1" || tl.Len() < 10 {
		t.Errorf("processors %+v, %d points", tl.Processors, tl.Len())
	}
}
