package sim

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/memspy/memspy/profile"
	"github.com/memspy/memspy/trace"
)

// The multiprocessor: every processor has its own copy of each private
// cache, and the private caches are kept coherent by a MESI write-invalidate
// protocol (docs/semantics.md, "Several processors"):
//
//   - A write by processor p to a line other processors hold invalidates
//     their copies (an upgrade when p holds the line too); a dirty copy is
//     first written back from its processor's private caches (an
//     intervention).
//   - A read or instruction fetch by p of a line another processor holds
//     dirty makes that processor write it back (an intervention) and keep
//     it clean.
//   - The first data cache of a processor marks the lines its processor
//     wrote since it became their only holder (M): only a write to any
//     other line looks the line up in the directory. (A dirty line is not
//     always M: an exclusive cache below hands lines up with their dirty
//     bit.)
//
// The directory records, per line, the processors that may hold it (a bit
// set when one of its private caches fills it, cleared when an
// invalidation finds it gone) and the processor that may hold it dirty
// (set by its writes, cleared by an intervention). Every action checks the
// caches themselves, so a stale bit costs a lookup and never changes a
// count.
//
// True and false sharing: each private cache keeps, per slot, the granules
// of the line (bytes for lines up to 64 bytes) that its processor used
// while it held the line in any private cache; the masks of a processor's
// copies add up to that. An invalidation is true sharing when the
// invalidated processor had used a granule the invalidating write writes,
// false sharing otherwise; the processor's next misses on the line, at
// each cache that lost it, have that cause.

// processor is one processor's view of the hierarchy.
type processor struct {
	id             int
	ifirst, dfirst *level   // the first caches of its instruction and data paths (nil: none)
	private        []*level // its private caches, from the CPU outward
	outer          *level   // the last of them holding data (else the last): interventions leave from it
	threads        []uint32 // placed on it, in order of first appearance

	upgrades, interventions, invSent, invRecv uint64
}

// Kinds of invalidation misses (level.sharing, levelAttrib.state).
const (
	trueSharing  = invalidated + 1 + iota // the processor had used bytes the write wrote
	falseSharing                          // it had not
)

// coherence is the state of the coherence protocol.
type coherence struct {
	dir   map[uint64]dirEntry // line → holders
	shift uint                // log2 of the coherence unit: the line size of the private caches
	gran  uint                // log2 of the bytes per bit of a used mask
}

// dirEntry is a directory entry.
type dirEntry struct {
	sharers uint64 // processors that may hold the line
	owner   int8   // 1 + the processor that may hold it dirty; 0: none
}

// newCoherence sets up the protocol when several processors have private
// caches, which must have one line size and not be exclusive (as
// machine.Normalize requires).
func (h *Hierarchy) newCoherence() error {
	if len(h.procs) < 2 || len(h.procs[0].private) == 0 {
		return nil
	}
	if len(h.procs) > 64 {
		return fmt.Errorf("sim: %d processors: at most 64 can share data", len(h.procs))
	}
	l := h.procs[0].private[0]
	for _, o := range h.procs[0].private {
		if o.lineSize != l.lineSize {
			return fmt.Errorf("sim: private caches %q and %q have different line sizes (%d and %d bytes): the coherence unit must be one", l.spec.Name, o.spec.Name, l.lineSize, o.lineSize)
		}
		if o.exclusive {
			return fmt.Errorf("sim: private cache %q is exclusive: not supported with several processors", o.spec.Name)
		}
	}
	c := &coherence{dir: map[uint64]dirEntry{}, shift: l.shift}
	if l.lineSize > 64 {
		c.gran = l.shift - 6
	}
	h.coh = c
	for _, l := range h.levels {
		l.attach(cohHits{c})
		l.mruCache = noMRU
	}
	for _, p := range h.procs {
		for _, l := range p.private {
			l.used = make([]uint64, l.c.Sets()*l.c.Ways())
			l.sharing = map[uint64]uint8{}
			if l == p.dfirst && l.writeBack {
				l.mod = make([]bool, len(l.used))
			}
		}
	}
	return nil
}

// use makes p the processor running the current event.
func (h *Hierarchy) use(p *processor) {
	h.cur, h.ifirst, h.dfirst = p, p.ifirst, p.dfirst
}

// switchThread makes thread tid's processor current, placing the thread on
// one when it first appears.
func (h *Hierarchy) switchThread(tid uint32) {
	p, ok := h.tids[tid]
	if !ok {
		p = h.procs[h.m.ProcessorOf(len(h.tids))]
		h.tids[tid] = p
		p.threads = append(p.threads, tid)
	}
	h.curTid = tid
	h.use(p)
}

// cohHits is coherence's hitObserver, on every level: the bypass takes
// hits only in a processor's private caches, where no other processor can
// hold the line dirty (a dirty fill elsewhere disarms level.memo, see
// privateFilled, and coherent levels take no hit on a line of the set's
// state: level.mruCache), and writes only to a line in state M; it
// records the bytes that the processor used.
type cohHits struct{ c *coherence }

func (cohHits) takes(l *level, k trace.Kind, slot int) bool {
	switch {
	case l.proc < 0:
		return false
	case k == trace.IFetch || k == trace.Read:
		return true
	case k == trace.Write:
		return l.mod != nil && l.mod[slot] && l.c.Dirty(slot)
	}
	return false // a modify, or a run of fetches: the slow path's
}

func (o cohHits) see(l *level, b *trace.Batch, i, slot int) {
	if k := b.Kind[i]; k != trace.IFetch && l.used != nil {
		l.used[slot] |= o.c.granules(b.Addr[i], uint64(b.Size[i]))
	}
}

// granules returns the used-mask bits of bytes [a, a+s) within their
// coherence line (s is at least 1 and the bytes lie in one line, or the
// mask runs to the line's end).
func (c *coherence) granules(a, s uint64) uint64 {
	off := a & (1<<c.shift - 1)
	first := off >> c.gran
	last := min(off+max(s, 1)-1, 1<<c.shift-1) >> c.gran
	if last-first >= 63 {
		return ^uint64(0)
	}
	return (1<<(last-first+1) - 1) << first
}

// coherentFetch performs an instruction fetch of bytes [a, a+s) from the
// current processor's first instruction cache il: a read for the protocol.
func (h *Hierarchy) coherentFetch(il *level, a, s uint64) {
	c := h.coh
	end := a + max(s, 1) - 1
	if end < a {
		end = ^uint64(0)
	}
	for line := a >> c.shift; ; line++ {
		h.cohRead(h.cur, line)
		if line == end>>c.shift {
			break
		}
	}
	h.cpuRef(il, kIFetch, a, s)
}

// coherentRef performs a data reference of kind k from the current
// processor: the protocol's actions for every line it touches, then the
// reference, then the record of the bytes it used.
func (h *Hierarchy) coherentRef(k int, a, s uint64) {
	c, p := h.coh, h.cur
	s = max(s, 1)
	end := a + s - 1
	if end < a {
		end = ^uint64(0)
	}
	forParts := func(f func(line, pa, ps uint64)) {
		for line := a >> c.shift; ; line++ {
			pa := max(a, line<<c.shift)
			pe := min(end, line<<c.shift|(1<<c.shift-1))
			f(line, pa, pe-pa+1)
			if line == end>>c.shift {
				break
			}
		}
	}
	forParts(func(line, pa, ps uint64) {
		if k == kWrite {
			h.cohWrite(p, line, pa, ps)
		} else {
			h.cohRead(p, line)
		}
	})
	h.cpuRef(p.dfirst, k, a, s)
	forParts(func(line, pa, ps uint64) {
		if l := p.dfirst; k == kWrite && l != nil && l.mod != nil {
			if slot := l.c.Lookup(line); slot >= 0 && l.c.Dirty(slot) {
				l.mod[slot] = true
			}
		}
		for _, l := range p.private {
			if slot := l.c.Lookup(line); slot >= 0 {
				l.used[slot] |= c.granules(pa, ps)
				return
			}
		}
	})
}

// cohWrite acts on a write by p to bytes [pa, pa+ps) of line: the copies
// of every other processor are invalidated, and p may hold it dirty.
func (h *Hierarchy) cohWrite(p *processor, line, pa, ps uint64) {
	c := h.coh
	if l := p.dfirst; l != nil && l.mod != nil {
		if slot := l.c.Lookup(line); slot >= 0 && l.mod[slot] {
			return // modified: no other processor holds it
		}
	}
	e := c.dir[line]
	if others := e.sharers &^ (1 << p.id); others != 0 {
		w := invWriter{p: p, pa: pa, ps: ps, ref: noPoint}
		sent := false
		for o := others; o != 0; o &= o - 1 {
			if h.invalidateCopies(h.procs[bits.TrailingZeros64(o)], line, &w) {
				p.invSent++
				sent = true
			}
		}
		if sent && h.holds(p, line) {
			p.upgrades++
		}
		e.sharers &^= others
	}
	e.owner = int8(p.id + 1)
	c.dir[line] = e
}

// cohRead acts on a read by p of line: a processor holding it dirty writes
// it back and keeps it clean.
func (h *Hierarchy) cohRead(p *processor, line uint64) {
	c := h.coh
	e, ok := c.dir[line]
	if !ok || e.owner == 0 || int(e.owner) == p.id+1 {
		return
	}
	q := h.procs[e.owner-1]
	dirty, ref := false, noPoint
	for _, l := range q.private {
		slot := l.c.Lookup(line)
		if slot < 0 {
			continue
		}
		if l.mod != nil {
			l.mod[slot] = false
		}
		if l.c.Dirty(slot) {
			l.c.SetDirty(slot, false)
			if !dirty && l.attr != nil {
				ref = l.attr.slots[slot].fill
			}
			dirty = true
		}
	}
	if dirty {
		h.intervene(q, line, ref)
	}
	e.owner = 0
	c.dir[line] = e
}

// holds reports whether one of p's private caches holds line.
func (h *Hierarchy) holds(p *processor, line uint64) bool {
	for _, l := range p.private {
		if l.c.Lookup(line) >= 0 {
			return true
		}
	}
	return false
}

// invalidateCopies removes line from every private cache of q for the
// write w by another processor, and reports whether q held it. A dirty
// copy is written back first.
func (h *Hierarchy) invalidateCopies(q *processor, line uint64, w *invWriter) bool {
	var used uint64
	held, dirty, ref := false, false, noPoint
	for _, l := range q.private {
		if slot := l.c.Lookup(line); slot >= 0 {
			held = true
			used |= l.used[slot]
			if l.c.Dirty(slot) && !dirty {
				dirty = true
				if l.attr != nil {
					ref = l.attr.slots[slot].fill
				}
			}
		}
	}
	if !held {
		return false
	}
	if dirty {
		h.intervene(q, line, ref)
	}
	kind := falseSharing
	if used&h.coh.granules(w.pa, w.ps) != 0 {
		kind = trueSharing
	}
	attributed := false
	for _, l := range q.private {
		if slot := l.c.Lookup(line); slot >= 0 {
			if l.attr != nil {
				h.countInvalidation(l, slot, q, kind, w)
				h.removed(l, slot, kind)
				attributed = true
			}
			l.c.Remove(slot)
			l.memo = noMemo
			l.invalidations++
			l.sharing[line] = kind
		}
	}
	if attributed {
		h.countSharingWrite(w, line, used, kind)
	}
	q.invRecv++
	return true
}

// intervene writes the dirty line back from q's private caches to the
// level below them, for access point ref (when attributing): counted as a
// write-back of q's outermost private cache.
func (h *Hierarchy) intervene(q *processor, line uint64, ref point) {
	q.interventions++
	if h.numa != nil {
		h.numa.dirtyLine, h.numa.dirtyProc = line, q.id
	}
	l := q.outer
	l.writebacks++
	l.bytesToBelow += l.lineSize
	h.ref(l.victimNext, kWrite, line<<l.shift, l.lineSize, true, ref)
}

// privateFilled records that the private cache l filled line into slot,
// dirty when an exclusive cache below handed it up dirty: its processor
// holds the line (not modified since), and has used none of the slot's
// bytes. A dirty fill disarms the hit bypass of the other processors on
// the line: their next reference of it must find the new owner.
func (h *Hierarchy) privateFilled(l *level, slot int, line uint64, dirty bool) {
	l.used[slot] = 0
	if l.mod != nil {
		l.mod[slot] = false
	}
	delete(l.sharing, line)
	e := h.coh.dir[line]
	e.sharers |= 1 << l.proc
	if dirty {
		e.owner = int8(l.proc + 1)
		for o := e.sharers &^ (1 << l.proc); o != 0; o &= o - 1 {
			for _, u := range h.procs[bits.TrailingZeros64(o)].private {
				if u.memo == line<<u.shift {
					u.memo = noMemo
				}
			}
		}
	}
	h.coh.dir[line] = e
}

// privateRemoving passes the used bytes of the line in slot of the private
// cache l, which is leaving it, to another private cache of its processor
// that holds the line; when none does, the processor's use of the line
// ends and they are forgotten.
func (h *Hierarchy) privateRemoving(l *level, slot int) {
	line := l.c.Line(slot)
	for _, o := range h.procs[l.proc].private {
		if o == l {
			continue
		}
		if s := o.c.Lookup(line); s >= 0 {
			o.used[s] |= l.used[slot]
			return
		}
	}
}

// processorStats returns the counters of every processor (nil on one).
func (h *Hierarchy) processorStats() []profile.ProcessorStats {
	if len(h.procs) < 2 {
		return nil
	}
	var out []profile.ProcessorStats
	for _, p := range h.procs {
		ps := profile.ProcessorStats{Processor: p.id, Threads: slices.Clone(p.threads),
			Upgrades: p.upgrades, Interventions: p.interventions, InvalidationsSent: p.invSent, InvalidationsReceived: p.invRecv}
		for _, l := range h.levels {
			if l.proc == p.id {
				ps.Caches = append(ps.Caches, l.stats())
			}
		}
		out = append(out, ps)
	}
	return out
}
