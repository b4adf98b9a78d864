package profile

import (
	"fmt"
	"slices"
)

// MaxTimelinePoints bounds a Timeline's points: beyond it, adjacent pairs
// are merged and the interval doubles, so that the whole run stays covered
// at about even spacing. MaxTimelineMarks bounds its marks (the first are
// kept).
const (
	MaxTimelinePoints = 512
	MaxTimelineMarks  = 512
)

// Timeline holds the counters of every cache over the run (with --where):
// the run cut into at most MaxTimelinePoints intervals of about Interval
// events each, and for each interval, what the caches counted in it. The
// counts are in columns, one value per point. Like every counter it starts
// again at a reset marker: its points cover the run from the last one
// (Start) to the end, and add up to the profile's counters (the last
// point holds the final write-back of dirty lines).
type Timeline struct {
	// Interval is the events a point spans (the last one may span fewer,
	// and the points' ends fall where the engine stopped to count, a
	// little after each multiple).
	Interval uint64 `json:"interval"`
	// Start is the event of the run at which the first point begins: 0,
	// or the place of the last reset marker. Events are counted from the
	// start of the run, resets aside.
	Start uint64 `json:"start"`
	// End holds each point's last event: point i spans the events after
	// End[i-1] (Start for the first) up to End[i].
	End []uint64 `json:"end"`
	// Events and Instructions hold each point's events simulated and the
	// instruction fetches among them.
	Events       []uint64 `json:"events"`
	Instructions []uint64 `json:"instructions"`
	// Caches hold each cache's counts, in machine order (the sum of a
	// private cache's copies).
	Caches []TimelineCache `json:"caches"`
	// Processors, on a machine of several, hold each processor's counts
	// at its copies of the private caches (nil on one processor).
	Processors []TimelineProcessor `json:"processors,omitempty"`
	// Marks are the dump and reset markers of the run, in order (at most
	// MaxTimelineMarks).
	Marks []TimelineMark `json:"marks,omitempty"`
}

// TimelineCache holds one cache's counts per point of a Timeline, as
// CacheStats counts them: accesses, misses, and the misses by kind, a
// misc reference's counted as a read's (as the where-and-why entries
// count them: ReadMisses adds up to CacheStats' ReadMisses + MiscMisses).
type TimelineCache struct {
	Name         string   `json:"name"`
	Accesses     []uint64 `json:"accesses"`
	Misses       []uint64 `json:"misses"`
	IFetchMisses []uint64 `json:"ifetch_misses"`
	ReadMisses   []uint64 `json:"read_misses"`
	WriteMisses  []uint64 `json:"write_misses"`
}

// TimelineProcessor holds one processor's counts per point of a
// Timeline at its copies of the private caches, in machine order: over
// every processor they add up to those caches' columns in Caches.
type TimelineProcessor struct {
	Processor int             `json:"processor"`
	Caches    []TimelineCache `json:"caches"`
}

// TimelineMark is a dump or reset marker on the timeline.
type TimelineMark struct {
	Kind  string `json:"kind"` // "dump" or "reset"
	Name  string `json:"name,omitempty"`
	Event uint64 `json:"event"` // events of the run before it
}

// TimelineCounts are one cache's counts in one interval.
type TimelineCounts struct {
	Accesses, Misses, IFetchMisses, ReadMisses, WriteMisses uint64
}

// values returns the counts in the order of TimelineCache's columns.
func (n TimelineCounts) values() [5]uint64 {
	return [5]uint64{n.Accesses, n.Misses, n.IFetchMisses, n.ReadMisses, n.WriteMisses}
}

// columns returns the counts' columns of c, in the order of
// TimelineCounts' fields.
func (c *TimelineCache) columns() [5]*[]uint64 {
	return [5]*[]uint64{&c.Accesses, &c.Misses, &c.IFetchMisses, &c.ReadMisses, &c.WriteMisses}
}

// Len returns the number of points.
func (t *Timeline) Len() int { return len(t.End) }

// all returns every cache's columns: Caches, then each processor's, in
// order.
func (t *Timeline) all() []*TimelineCache {
	var cs []*TimelineCache
	for i := range t.Caches {
		cs = append(cs, &t.Caches[i])
	}
	for i := range t.Processors {
		for j := range t.Processors[i].Caches {
			cs = append(cs, &t.Processors[i].Caches[j])
		}
	}
	return cs
}

// NewTimeline returns an empty timeline of the caches named, whose first
// point spans interval events from start.
func NewTimeline(names []string, interval, start uint64) *Timeline {
	t := &Timeline{Interval: interval, Start: start}
	for _, n := range names {
		t.Caches = append(t.Caches, TimelineCache{Name: n})
	}
	return t
}

// Append adds a point ending at event end, of events events,
// instructions fetches and caches' counts (one per cache of Caches, in
// order, then one per cache of each processor in Processors), and merges
// adjacent pairs of points when they come to MaxTimelinePoints (so that
// points taken every Interval events stay evenly spaced). A point of no
// events ending where the last one ends adds to the last one.
func (t *Timeline) Append(end, events, instructions uint64, caches []TimelineCounts) {
	if n := t.Len(); n > 0 && events == 0 && t.End[n-1] == end {
		t.addLast(caches) // (no events since: the final write-back)
		return
	}
	t.End = append(t.End, end)
	t.Events = append(t.Events, events)
	t.Instructions = append(t.Instructions, instructions)
	for i, c := range t.all() {
		vals := caches[i].values()
		for j, col := range c.columns() {
			*col = append(*col, vals[j])
		}
	}
	if t.Len() >= MaxTimelinePoints {
		t.halve()
	}
}

// addLast adds caches' counts to the last point.
func (t *Timeline) addLast(caches []TimelineCounts) {
	k := t.Len() - 1
	for i, c := range t.all() {
		vals := caches[i].values()
		for j, col := range c.columns() {
			(*col)[k] += vals[j]
		}
	}
}

// halve merges each adjacent pair of points into one (an odd last point
// stays alone) and doubles the interval.
func (t *Timeline) halve() {
	n := (t.Len() + 1) / 2
	pairs := func(col []uint64, last bool) []uint64 {
		for i := range n {
			j := min(2*i+1, len(col)-1)
			if last {
				col[i] = col[j]
			} else if j != 2*i {
				col[i] = col[2*i] + col[j]
			} else {
				col[i] = col[2*i]
			}
		}
		return col[:n]
	}
	t.End = pairs(t.End, true)
	t.Events = pairs(t.Events, false)
	t.Instructions = pairs(t.Instructions, false)
	for _, c := range t.all() {
		for _, col := range c.columns() {
			*col = pairs(*col, false)
		}
	}
	t.Interval *= 2
}

// Mark adds a marker at event (dropped beyond MaxTimelineMarks).
func (t *Timeline) Mark(kind, name string, event uint64) {
	if len(t.Marks) < MaxTimelineMarks {
		t.Marks = append(t.Marks, TimelineMark{Kind: kind, Name: name, Event: event})
	}
}

// Clone returns a deep copy of t.
func (t *Timeline) Clone() *Timeline {
	if t == nil {
		return nil
	}
	c := *t
	c.End, c.Events, c.Instructions = slices.Clone(t.End), slices.Clone(t.Events), slices.Clone(t.Instructions)
	c.Caches = slices.Clone(t.Caches)
	c.Processors = slices.Clone(t.Processors)
	for i := range c.Processors {
		c.Processors[i].Caches = slices.Clone(t.Processors[i].Caches)
	}
	for _, cc := range c.all() {
		for _, col := range cc.columns() {
			*col = slices.Clone(*col)
		}
	}
	c.Marks = slices.Clone(t.Marks)
	return &c
}

// Counts returns cache i's counts at point k.
func (t *Timeline) Counts(i, k int) TimelineCounts {
	c := &t.Caches[i]
	return TimelineCounts{Accesses: c.Accesses[k], Misses: c.Misses[k], IFetchMisses: c.IFetchMisses[k],
		ReadMisses: c.ReadMisses[k], WriteMisses: c.WriteMisses[k]}
}

// Total returns the sum of cache i's counts over every point.
func (t *Timeline) Total(i int) TimelineCounts {
	var s TimelineCounts
	for k := range t.Len() {
		c := t.Counts(i, k)
		s.Accesses += c.Accesses
		s.Misses += c.Misses
		s.IFetchMisses += c.IFetchMisses
		s.ReadMisses += c.ReadMisses
		s.WriteMisses += c.WriteMisses
	}
	return s
}

// check reports whether t's columns are as long as its points and name
// the caches cs, in order.
func (t *Timeline) check(cs []CacheStats) error {
	n := t.Len()
	if len(t.Events) != n || len(t.Instructions) != n {
		return fmt.Errorf("profile: timeline: %d points but %d events and %d instructions", n, len(t.Events), len(t.Instructions))
	}
	if len(t.Caches) != len(cs) {
		return fmt.Errorf("profile: timeline: %d caches, the profile %d", len(t.Caches), len(cs))
	}
	for i := range t.Caches {
		if c := &t.Caches[i]; c.Name != cs[i].Name {
			return fmt.Errorf("profile: timeline: cache %d is %q, the profile's %q", i, c.Name, cs[i].Name)
		}
	}
	for _, c := range t.all() {
		for _, col := range c.columns() {
			if len(*col) != n {
				return fmt.Errorf("profile: timeline: cache %q has %d values for %d points", c.Name, len(*col), n)
			}
		}
	}
	return nil
}

// mergeTimeline adds q's timeline to p's as Merge does: q's points and
// marks follow p's, moved by p's last event (the shards ran one after
// the other, as their dumps are listed), and pairs are merged down to
// MaxTimelinePoints; every column still adds up to the total. When
// either profile has none, the merge has none (it could not add up).
func (p *Profile) mergeTimeline(q *Profile) {
	a, b := p.Timeline, q.Timeline
	if a == nil || b == nil {
		p.Timeline = nil
		return
	}
	shift := a.Start
	if a.Len() > 0 {
		shift = a.End[a.Len()-1]
	}
	for k := range b.Len() {
		a.End = append(a.End, b.End[k]+shift)
		a.Events = append(a.Events, b.Events[k])
		a.Instructions = append(a.Instructions, b.Instructions[k])
	}
	if !sameProcessors(a.Processors, b.Processors) {
		a.Processors = nil // (they could not add up)
	}
	all, bs := a.all(), b.all()
	for i := range all {
		colsA, colsB := all[i].columns(), bs[i].columns()
		for j := range colsA {
			*colsA[j] = append(*colsA[j], *colsB[j]...)
		}
	}
	for _, m := range b.Marks {
		a.Mark(m.Kind, m.Name, m.Event+shift)
	}
	a.Interval = max(a.Interval, b.Interval)
	for a.Len() > MaxTimelinePoints {
		a.halve()
	}
}

// sameProcessors reports whether a and b have the same processors with
// the same caches.
func sameProcessors(a, b []TimelineProcessor) bool {
	return slices.EqualFunc(a, b, func(x, y TimelineProcessor) bool {
		return x.Processor == y.Processor && slices.EqualFunc(x.Caches, y.Caches, func(c, d TimelineCache) bool { return c.Name == d.Name })
	})
}

// ProcessorCounts returns processor p's counts at its copy of cache name
// at point k, and whether it has one.
func (t *Timeline) ProcessorCounts(p int, name string, k int) (TimelineCounts, bool) {
	for i := range t.Processors {
		if t.Processors[i].Processor != p {
			continue
		}
		for j := range t.Processors[i].Caches {
			if c := &t.Processors[i].Caches[j]; c.Name == name {
				return TimelineCounts{Accesses: c.Accesses[k], Misses: c.Misses[k], IFetchMisses: c.IFetchMisses[k],
					ReadMisses: c.ReadMisses[k], WriteMisses: c.WriteMisses[k]}, true
			}
		}
	}
	return TimelineCounts{}, false
}
