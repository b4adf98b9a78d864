package sim

import (
	"github.com/memspy/memspy/attrib"
	"github.com/memspy/memspy/profile"
)

// Who invalidates whom: when attributing on a multiprocessor, every copy a
// write invalidates counts, at each private cache that loses it, at the
// access point that filled the line (suffered, by the writing access point
// and processor) and at the writing access point (caused, by the filling
// access point and the processor that held the copy). Once per copy
// (line, processor), the write itself counts in its object by processor
// and offset, so that advice can name the bytes each processor writes.

// invKey is the other side of invalidations at an access point: the data
// bin of an access point, a processor, and whether the invalidation was
// false sharing.
type invKey struct {
	bin          int32
	proc         int16
	falseSharing bool
}

// invWriter is a write invalidating other processors' copies of a line:
// its processor, its bytes in the line, and its access point once looked
// up (noPoint before).
type invWriter struct {
	p      *processor
	pa, ps uint64
	ref    point
}

// writeKey identifies the writes of one processor at one place of a data
// bin (see profile.SharingWrite).
type writeKey struct {
	bin       int32
	proc      int16
	own       bool
	off, size uint64
}

// writeCounts are the copies the writes of a writeKey invalidated.
type writeCounts struct {
	copies, falseSharing, neighbour uint64
}

// countInvalidation counts, when attributing, that the write w invalidated
// the copy of its line in slot of l, a private cache of q, with the kind
// of sharing kind.
func (h *Hierarchy) countInvalidation(l *level, slot int, q *processor, kind uint8, w *invWriter) {
	if w.ref < 0 {
		w.ref = h.attr.ref(h.binOf(w.pa))
	}
	fill, isFalse := l.attr.slots[slot].fill, kind == falseSharing
	l.attr.refs.sharingOf(fill).by[invKey{h.attr.pointBin(w.ref), int16(w.p.id), isFalse}]++
	l.attr.refs.sharingOf(w.ref).of[invKey{h.attr.pointBin(fill), int16(q.id), isFalse}]++
}

// refSharing are the invalidations of an access point at one level.
type refSharing struct {
	by map[invKey]uint64 // lines of its fills other processors' writes invalidated
	of map[invKey]uint64 // lines of other processors its writes invalidated
}

// sharingOf returns the invalidations of access point p, made on first
// use.
func (t *refTable) sharingOf(p point) *refSharing {
	sh := t.sharing[p]
	if sh == nil {
		if t.sharing == nil {
			t.sharing = map[point]*refSharing{}
		}
		sh = &refSharing{by: map[invKey]uint64{}, of: map[invKey]uint64{}}
		t.sharing[p] = sh
	}
	return sh
}

// countSharingWrite counts, when attributing, that the write w invalidated
// another processor's copy of line, whose processor had used the granules
// used, with the kind of sharing kind: in the write's object by processor
// and offset (heap blocks, globals and named ranges only).
func (h *Hierarchy) countSharingWrite(w *invWriter, line, used uint64, kind uint8) {
	at, c := h.attr, h.coh
	bin, start, end := at.data.Locate(w.pa)
	if bin == attrib.OtherBin || bin == attrib.FreedBin {
		return
	}
	own := false
	if _, _, t, ok := at.data.Block(w.pa); ok {
		own = t == h.curTid
	}
	lo, hi := max(start, line<<c.shift), min(end, (line+1)<<c.shift)
	if at.writes == nil {
		at.writes = map[writeKey]*writeCounts{}
	}
	k := writeKey{bin, int16(w.p.id), own, w.pa - start, w.ps}
	n := at.writes[k]
	if n == nil {
		n = &writeCounts{}
		at.writes[k] = n
	}
	n.copies++
	if kind == falseSharing {
		n.falseSharing++
	}
	if hi > lo && used&c.granules(lo, hi-lo) == 0 {
		n.neighbour++
	}
}

// sharingLists returns the invalidations an access point suffered and
// caused, by the other side's object and processor (unsorted).
func sharingLists(r *refSharing, nm *namer) (by, of []profile.Sharing) {
	list := func(m map[invKey]uint64) []profile.Sharing {
		var out []profile.Sharing
		for k, n := range m {
			s := profile.Sharing{Object: nm.binName(k.bin), Processor: int(k.proc), Lines: n}
			if k.falseSharing {
				s.FalseSharing = n
			}
			profile.AddSharing(&out, []profile.Sharing{s})
		}
		return out
	}
	return list(r.by), list(r.of)
}

// sharingWrites returns the writes that invalidated other processors'
// copies, by object name.
func (h *Hierarchy) sharingWrites(nm *namer) map[string][]profile.SharingWrite {
	out := map[string][]profile.SharingWrite{}
	for k, n := range h.attr.writes {
		name := nm.binName(k.bin)
		out[name] = append(out[name], profile.SharingWrite{Processor: int(k.proc), Offset: k.off, Size: k.size,
			Copies: n.copies, FalseSharing: n.falseSharing, Neighbour: n.neighbour, OwnBlock: k.own})
	}
	for name, ws := range out {
		profile.SortSharingWrites(ws)
		out[name] = ws[:min(len(ws), profile.MaxSharingWrites)]
	}
	return out
}
