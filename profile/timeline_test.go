package profile

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// counts returns the counts of a point with a accesses and m read misses.
func counts(a, m uint64) []TimelineCounts {
	return []TimelineCounts{{Accesses: a, Misses: m, ReadMisses: m}}
}

// oneCache returns a profile of events events on one cache, L1.
func oneCache(events uint64) *Profile {
	p := sample(events)
	p.Caches = p.Caches[:1]
	return p
}

// TestTimelineAppend appends the points of 2*MaxTimelinePoints+1 events
// as the engine takes them: the pairs merge twice, evenly, and the
// columns keep their sums.
func TestTimelineAppend(t *testing.T) {
	tl := NewTimeline([]string{"L1"}, 1, 0)
	n := uint64(2*MaxTimelinePoints + 1)
	var last, misses uint64
	for k := uint64(1); k <= n; k++ { // as the engine takes them: every Interval events
		misses += k % 2
		if k-last == tl.Interval || k == n {
			tl.Append(k, k-last, 0, counts(2*(k-last), misses))
			last, misses = k, 0
		}
	}
	// 512 points of 1 became 256 of 2, then 512 of 2 became 256 of 4;
	// the last point holds the 1025th event alone.
	if tl.Interval != 4 || tl.Len() != 257 {
		t.Fatalf("%d points of %d events", tl.Len(), tl.Interval)
	}
	for k := range tl.Len() - 1 {
		if tl.End[k] != uint64(4*(k+1)) || tl.Events[k] != 4 || tl.Caches[0].Accesses[k] != 8 || tl.Caches[0].Misses[k] != 2 {
			t.Fatalf("point %d: end %d, events %d, %+v", k, tl.End[k], tl.Events[k], tl.Counts(0, k))
		}
	}
	if k := tl.Len() - 1; tl.End[k] != n || tl.Events[k] != 1 || tl.Counts(0, k) != counts(2, 1)[0] {
		t.Errorf("last point: end %d, events %d, %+v", tl.End[k], tl.Events[k], tl.Counts(0, k))
	}
	if got := tl.Total(0); got != (TimelineCounts{Accesses: 2 * n, Misses: (n + 1) / 2, ReadMisses: (n + 1) / 2}) {
		t.Errorf("total %+v", got)
	}
	// A point of no events at the last end adds to the last point.
	tl.Append(n, 0, 0, []TimelineCounts{{Accesses: 3, Misses: 3, WriteMisses: 3}})
	if tl.Len() != 257 || tl.Counts(0, 256) != (TimelineCounts{Accesses: 5, Misses: 4, ReadMisses: 1, WriteMisses: 3}) {
		t.Errorf("%d points, last %+v", tl.Len(), tl.Counts(0, tl.Len()-1))
	}
}

// TestTimelineMerge merges profiles of shards: the second's points and
// marks follow the first's, the bound holds, and every column adds up;
// a profile without a timeline makes a merge without one.
func TestTimelineMerge(t *testing.T) {
	shard := func(points int, start uint64) *Profile {
		p := oneCache(0)
		tl := NewTimeline([]string{"L1"}, 10, start)
		for k := range points {
			tl.Append(start+uint64(10*(k+1)), 10, 3, counts(10, uint64(k)))
		}
		tl.Mark("dump", "d", start+5)
		p.Timeline = tl
		return p
	}
	p, q := shard(3, 0), shard(2, 100)
	if err := p.Merge(q); err != nil {
		t.Fatal(err)
	}
	want := &Timeline{Interval: 10, End: []uint64{10, 20, 30, 140, 150}, Events: []uint64{10, 10, 10, 10, 10},
		Instructions: []uint64{3, 3, 3, 3, 3},
		Caches: []TimelineCache{{Name: "L1", Accesses: []uint64{10, 10, 10, 10, 10}, Misses: []uint64{0, 1, 2, 0, 1},
			IFetchMisses: []uint64{0, 0, 0, 0, 0}, ReadMisses: []uint64{0, 1, 2, 0, 1}, WriteMisses: []uint64{0, 0, 0, 0, 0}}},
		Marks: []TimelineMark{{Kind: "dump", Name: "d", Event: 5}, {Kind: "dump", Name: "d", Event: 135}},
	}
	if diff := cmp.Diff(want, p.Timeline); diff != "" {
		t.Errorf("merged (-want +got):\n%s", diff)
	}
	p, q = shard(MaxTimelinePoints-1, 0), shard(MaxTimelinePoints-1, 0)
	if err := p.Merge(q); err != nil {
		t.Fatal(err)
	}
	if n := p.Timeline.Len(); n > MaxTimelinePoints || p.Timeline.Total(0).Accesses != 10*2*(MaxTimelinePoints-1) {
		t.Errorf("%d points, %d accesses", n, p.Timeline.Total(0).Accesses)
	}
	p, q = shard(3, 0), oneCache(0)
	if err := p.Merge(q); err != nil || p.Timeline != nil {
		t.Errorf("merge with a profile without a timeline: %v, %+v", err, p.Timeline)
	}
}

// TestReadOldVersions reads profiles of versions 1 and 2, which have no
// timeline and no line use, and writes version 3 with both, which reads
// back the same, compressed or not; a timeline that does not match the
// caches does not read.
func TestReadOldVersions(t *testing.T) {
	for _, v := range []string{"1", "2"} {
		p, err := Read(strings.NewReader(`{"version": ` + v + `, "tool": "memspy", "caches": [{"name": "L1", "accesses": 4}],
			"options": {"where": true}, "focus": "L1",
			"objects": [{"name": "A", "full_name": "A", "kind": "heap", "size": 64, "levels": {"L1": {"accesses": 4}}}]}`))
		if err != nil {
			t.Fatalf("version %s: %v", v, err)
		}
		if p.Timeline != nil || p.Objects[0].LineUse != nil || p.Objects[0].Accesses != 4 {
			t.Errorf("version %s: timeline %+v, line use %v, accesses %d", v, p.Timeline, p.Objects[0].LineUse, p.Objects[0].Accesses)
		}
	}
	p := oneCache(5)
	p.Options.Where, p.Focus = true, "L1"
	p.Timeline = NewTimeline([]string{"L1"}, 8, 0)
	p.Timeline.Append(8, 8, 2, counts(8, 4))
	p.Timeline.Mark("dump", "phase 1", 3)
	p.Objects = []Object{{Name: "A", FullName: "A", Kind: "heap", Size: 64,
		LineUse: map[string][]uint64{"L1": {2, 2, 0, 1}}, Levels: map[string]*Stats{"L1": {Accesses: 5, FetchedBytes: 128}}}}
	for _, c := range []Compression{Uncompressed, Zstd, Gzip} {
		var b bytes.Buffer
		if err := p.WriteCompressed(&b, c); err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b.Bytes(), []byte(`"version": 3`)) && c == Uncompressed {
			t.Errorf("not version 3: %.60s", b.Bytes())
		}
		q, err := Read(&b)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(p.Timeline, q.Timeline); diff != "" {
			t.Errorf("timeline read back (-wrote +read):\n%s", diff)
		}
		if diff := cmp.Diff(p.Objects[0].LineUse, q.Objects[0].LineUse); diff != "" {
			t.Errorf("line use read back (-wrote +read):\n%s", diff)
		}
	}
	for _, bad := range []string{
		`"timeline": {"end": [1], "events": [], "instructions": [], "caches": []}`,
		`"timeline": {"end": [1], "events": [1], "instructions": [0], "caches": [{"name": "L2", "accesses": [1], "misses": [0], "ifetch_misses": [0], "read_misses": [0], "write_misses": [0]}]}`,
		`"timeline": {"end": [1], "events": [1], "instructions": [0], "caches": [{"name": "L1", "accesses": [1, 2], "misses": [0], "ifetch_misses": [0], "read_misses": [0], "write_misses": [0]}]}`,
	} {
		if _, err := Read(strings.NewReader(`{"version": 3, "caches": [{"name": "L1"}], ` + bad + `}`)); err == nil || !strings.Contains(err.Error(), "timeline") {
			t.Errorf("%s: err %v", bad, err)
		}
	}
}

// TestLineUseAdds merges two profiles' line use of an object offset by
// offset (the longer's tail kept), and pools small globals' likewise.
func TestLineUseAdds(t *testing.T) {
	mk := func(use map[string][]uint64, pool string) *Profile {
		p := oneCache(4)
		p.Options.Where, p.Focus = true, "L1"
		for _, name := range []string{"a", "b"} {
			own := map[string][]uint64{}
			for c, n := range use {
				own[c] = slices.Clone(n)
			}
			p.Objects = append(p.Objects, Object{Name: name, FullName: name, Kind: "global", Size: 8, Pool: pool, LineUse: own,
				Levels: map[string]*Stats{"L1": {Accesses: 2, FetchedBytes: 64}}})
		}
		return p
	}
	p, q := mk(map[string][]uint64{"L1": {1, 1}}, ""), mk(map[string][]uint64{"L1": {2, 0, 3}, "L2": {1}}, "")
	if err := p.Merge(q); err != nil {
		t.Fatal(err)
	}
	want := map[string][]uint64{"L1": {3, 1, 3}, "L2": {1}}
	for _, o := range p.Objects {
		if diff := cmp.Diff(want, o.LineUse); diff != "" {
			t.Errorf("%s merged (-want +got):\n%s", o.Name, diff)
		}
	}
	p = mk(map[string][]uint64{"L1": {1, 0, 1}}, "<small globals>@m")
	if n, err := p.PoolColdGlobals(); err != nil || n != 2 || len(p.Objects) != 1 {
		t.Fatalf("pooled %d: %v, %+v", n, err, p.Objects)
	}
	if diff := cmp.Diff(map[string][]uint64{"L1": {2, 0, 2}}, p.Objects[0].LineUse); diff != "" {
		t.Errorf("pooled (-want +got):\n%s", diff)
	}
}

// TestTimelineProcessors appends points with two processors' L1 counts
// after the caches' (halving them too), and merges them processor by
// processor; profiles of other processors merge without them.
func TestTimelineProcessors(t *testing.T) {
	mk := func(procs ...int) *Profile {
		p := oneCache(0)
		tl := NewTimeline([]string{"L1"}, 1, 0)
		for _, n := range procs {
			tl.Processors = append(tl.Processors, TimelineProcessor{Processor: n, Caches: []TimelineCache{{Name: "L1"}}})
		}
		for k := range uint64(MaxTimelinePoints) {
			counts := counts(3, 2)
			for range procs {
				counts = append(counts, TimelineCounts{Accesses: 1 + k%2, Misses: 1, ReadMisses: 1})
			}
			tl.Append(k+1, 1, 0, counts)
		}
		p.Timeline = tl
		return p
	}
	p := mk(0, 1)
	if n := p.Timeline.Len(); n != MaxTimelinePoints/2 || len(p.Timeline.Processors[1].Caches[0].Accesses) != n {
		t.Fatalf("%d points, processor 1's %d", n, len(p.Timeline.Processors[1].Caches[0].Accesses))
	}
	if c, ok := p.Timeline.ProcessorCounts(1, "L1", 3); !ok || c != (TimelineCounts{Accesses: 3, Misses: 2, ReadMisses: 2}) {
		t.Errorf("processor 1 at point 3: %+v, %v", c, ok)
	}
	if err := p.Merge(mk(0, 1)); err != nil {
		t.Fatal(err)
	}
	if n := p.Timeline.Len(); n != MaxTimelinePoints || len(p.Timeline.Processors[0].Caches[0].Misses) != n ||
		p.Timeline.Processors[0].Caches[0].Misses[n/2] != 2 || p.Timeline.End[n-1] != 2*MaxTimelinePoints {
		t.Errorf("merged: %d points, processor 0 %v", n, p.Timeline.Processors[0].Caches[0].Misses[n/2:n/2+1])
	}
	p = mk(0, 1)
	if err := p.Merge(mk(0, 2)); err != nil {
		t.Fatal(err)
	}
	if p.Timeline.Processors != nil || p.Timeline.Total(0).Accesses != 2*3*MaxTimelinePoints {
		t.Errorf("merged with other processors: %+v, %d accesses", p.Timeline.Processors, p.Timeline.Total(0).Accesses)
	}
}
