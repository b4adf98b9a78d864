package sim

import (
	"cmp"

	"github.com/memspy/memspy/profile"
	"github.com/memspy/memspy/trace"
)

// DefaultTimelineInterval is the events a point of a profile's timeline
// spans at first; it doubles whenever the points come to
// profile.MaxTimelinePoints.
const DefaultTimelineInterval = 1 << 14

// timeline takes the points of the profile's timeline (with --where,
// unless sampling): every interval events, the caches' counters since the
// last point, and on several processors each one's at its private caches.
// It is looked at between runs of events (Process cuts its batches where
// a point falls), never per event.
type timeline struct {
	t        *profile.Timeline
	interval uint64 // the first points' span
	// base is the events of the run before the last reset marker; last
	// the events counted (since it) at the last point, and prev the
	// caches' counters then (since it: a reset zeroes both).
	base, last, lastInstr uint64
	prev                  []profile.TimelineCounts
}

// newTimeline starts the timeline of h's caches.
func (h *Hierarchy) newTimeline() *timeline {
	tl := &timeline{interval: cmp.Or(h.opt.TimelineInterval, DefaultTimelineInterval)}
	tl.t = h.emptyTimeline(tl.interval, 0)
	tl.prev = make([]profile.TimelineCounts, len(h.timelineCounts()))
	return tl
}

// emptyTimeline returns a timeline of h's caches without points, and on
// several processors of each one's private caches.
func (h *Hierarchy) emptyTimeline(interval, start uint64) *profile.Timeline {
	var names, private []string
	for _, cs := range h.caches {
		names = append(names, cs[0].spec.Name)
		if len(cs) > 1 {
			private = append(private, cs[0].spec.Name)
		}
	}
	t := profile.NewTimeline(names, interval, start)
	if len(h.procs) > 1 {
		for p := range h.procs {
			tp := profile.TimelineProcessor{Processor: p}
			for _, name := range private {
				tp.Caches = append(tp.Caches, profile.TimelineCache{Name: name})
			}
			t.Processors = append(t.Processors, tp)
		}
	}
	return t
}

// counted returns the events counted since the start or the last reset:
// h.events, the kinds that are not extended events alone.
func (h *Hierarchy) counted() uint64 {
	var n uint64
	for _, c := range h.kinds[:trace.Misc+1] {
		n += c
	}
	return n
}

// due returns how many events may run before the next point falls (at
// least 1).
func (tl *timeline) due(counted uint64) uint64 {
	return max(1, tl.last+tl.t.Interval-counted)
}

// cut returns the end of the part of b from event i on that Process
// simulates before it looks at the timeline, due being how many events
// may run before the next point: the event at which they are counted (a
// run of fetches counts every fetch), so that the point falls right after
// it whatever the batches are. A trace.Exec counts none here: it takes the
// points that fall in it itself (tracerExec).
func (h *Hierarchy) cut(b *trace.Batch, i int, due uint64) int {
	sizes := b.Size
	for ; i < len(b.Kind); i++ {
		k := b.Kind[i]
		w := uint64(eventWeight[k])
		if k == trace.IFetchRun {
			w = uint64(sizes[i])
		}
		if w >= due {
			return i + 1
		}
		due -= w
	}
	return len(b.Kind)
}

// eventWeight is, by kind, how many events one of that kind counts for
// the timeline: references, copy-backs and invalidations one, others none
// (a run of fetches counts its size: cut).
var eventWeight = func() (w [256]uint8) {
	for k := trace.Read; k <= trace.Invalidate; k++ {
		w[k] = 1
	}
	w[trace.Misc] = 1
	return w
}()

// tick takes a point if one is due.
func (h *Hierarchy) tick() {
	if tl := h.tl; h.counted() >= tl.last+tl.t.Interval {
		tl.take(h, tl.t)
	}
}

// take appends to t a point of the counts since the last point.
func (tl *timeline) take(h *Hierarchy, t *profile.Timeline) {
	now := h.counted()
	instr := h.kinds[trace.IFetch]
	cur := h.timelineCounts()
	delta := make([]profile.TimelineCounts, len(cur))
	for i, c := range cur {
		p := tl.prev[i]
		delta[i] = profile.TimelineCounts{Accesses: c.Accesses - p.Accesses, Misses: c.Misses - p.Misses,
			IFetchMisses: c.IFetchMisses - p.IFetchMisses, ReadMisses: c.ReadMisses - p.ReadMisses,
			WriteMisses: c.WriteMisses - p.WriteMisses}
	}
	t.Append(tl.base+now, now-tl.last, instr-tl.lastInstr, delta)
	if t == tl.t {
		tl.last, tl.lastInstr, tl.prev = now, instr, cur
	}
}

// timelineCounts returns every cache's counters now (the sum of a private
// cache's copies), then on several processors each one's at its private
// caches, in the order of profile.Timeline's Append; misc misses count as
// read misses.
func (h *Hierarchy) timelineCounts() []profile.TimelineCounts {
	out := make([]profile.TimelineCounts, len(h.caches))
	for i, cs := range h.caches {
		for _, l := range cs {
			addLevel(&out[i], l)
		}
	}
	if len(h.procs) > 1 {
		for p := range h.procs {
			for _, cs := range h.caches {
				if len(cs) > 1 {
					var c profile.TimelineCounts
					addLevel(&c, cs[p])
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// mark puts a dump or reset marker on the timeline; a reset starts it
// again (the counters start again from zero) at the marker.
func (tl *timeline) mark(h *Hierarchy, kind, name string) {
	now := h.counted()
	tl.t.Mark(kind, name, tl.base+now)
	if kind == "reset" {
		tl.base += now
		marks := tl.t.Marks
		tl.t = h.emptyTimeline(tl.interval, tl.base)
		tl.t.Marks = marks
		tl.last, tl.lastInstr = 0, 0
		clear(tl.prev)
	}
}

// profile returns the timeline with a last point of the counts since the
// last point (the final write-back of dirty lines among them).
func (tl *timeline) profile(h *Hierarchy) *profile.Timeline {
	t := tl.t.Clone()
	tl.take(h, t)
	return t
}

// addLevel adds level l's counters to c (misc misses as read misses).
func addLevel(c *profile.TimelineCounts, l *level) {
	for k := range numLevelKinds {
		c.Accesses += l.acc[k]
		c.Misses += l.miss[k]
	}
	c.IFetchMisses += l.miss[kIFetch]
	c.ReadMisses += l.miss[kRead] + l.miss[kMisc]
	c.WriteMisses += l.miss[kWrite]
}
