package sim

import (
	"fmt"

	"github.com/memspy/memspy/trace"
)

// TracerNotes reports whether a tracer may simulate the first caches of h
// itself when h attributes misses only, and which (as TracerFirstLevels
// does): the tracer then sends the executions of its superblocks without
// addresses (trace.Exec events), each with the accesses of those caches
// that the attribution needs (trace.L1Access: misses with their victims,
// the further lines of references spanning lines, the write hits of a
// write-through cache), and the end-of-trace flush of those caches as
// trace.BelowWrite events. The engine counts the hits in runs and
// simulates the accesses with its own first caches as stores of the lines
// only (the tracer chooses the victims), attributing them as it would
// the references themselves: the profile is the same, byte for byte.
//
// It may when h attributes misses only (Options.MissOnly, not protocol
// monitoring) and the first caches are ones a tracer may simulate (see
// TracerFirstLevels).
func (h *Hierarchy) TracerNotes(ifetch bool) (data, instr int, ok bool) {
	if h.attr == nil || !h.attr.missOnly || h.attr.protocol {
		return 0, 0, false
	}
	return h.tracerFirsts(ifetch)
}

// tracerRun simulates the Exec events of b from i on, up to n, as long
// as they are of one thread, and returns the index of the first other
// event. Between two calls or returns, the calling context holds: the
// executions add up their counts in registers, and look at their
// accesses, unless the thread is passing a call on or a point of the
// timeline falls in one (then tracerExec takes it).
func (h *Hierarchy) tracerRun(b *trace.Batch, i, n int) int {
	at := h.attr
	tid := b.Thread[i]
	at.tid = tid
	at.allocating = len(at.inAlloc) > 0 && at.inAlloc[tid]
	ctx, passing := at.code.At(tid, 0)
	at.ctx, at.hitTid = ctx, tid
	due := h.untilPoint()
	var r, w, f, m uint64
	add := func() {
		h.countRefs(r, w, f, m)
		r, w, f, m = 0, 0, 0, 0
	}
	kinds, thr := b.Kind[:n], b.Thread[:n]
	for ; i < len(kinds) && kinds[i] == trace.Exec && thr[i] == tid; i++ {
		blk, exit, acc := b.ExecOf(i)
		x := &blk.Exits[exit]
		total := uint64(x.Reads) + uint64(x.Writes) + uint64(x.IFetches) + uint64(x.Modifies)
		if passing || total >= due {
			add()
			h.tracerExec(b, i)
			_, passing = at.code.At(tid, 0)
			due = h.untilPoint()
			continue
		}
		due -= total
		for k := range acc {
			h.tracerAccess(blk, &acc[k])
		}
		r, w, f, m = r+uint64(x.Reads), w+uint64(x.Writes), f+uint64(x.IFetches), m+uint64(x.Modifies)
	}
	add()
	return i
}

// untilPoint returns how many events may run before the next point of
// the timeline falls: 0 when one is due, all of them without a timeline.
func (h *Hierarchy) untilPoint() uint64 {
	if h.tl == nil {
		return ^uint64(0)
	}
	c, at := h.counted(), h.tl.last+h.tl.t.Interval
	if c >= at {
		return 0
	}
	return at - c
}

// tracerExec simulates the Exec event i of b (see TracerNotes): the
// accesses the tracer noted, and the counts of its references. The events
// of the superblock are gone through one by one only when they must be:
// while the thread passes a call on (the attribution must see each
// instruction: attrib.Code.At), or when a point of the timeline falls
// among them; otherwise the counts are added at once.
func (h *Hierarchy) tracerExec(b *trace.Batch, i int) {
	at := h.attr
	blk, exit, acc := b.ExecOf(i)
	x := &blk.Exits[exit]
	tid := b.Thread[i]
	at.tid = tid
	at.allocating = len(at.inAlloc) > 0 && at.inAlloc[tid]
	ctx, passing := at.code.At(tid, 0)
	at.ctx, at.hitTid = ctx, tid
	total := uint64(x.Reads) + uint64(x.Writes) + uint64(x.IFetches) + uint64(x.Modifies)
	if !passing && total < h.untilPoint() {
		for k := range acc {
			h.tracerAccess(blk, &acc[k])
		}
		h.countRefs(uint64(x.Reads), uint64(x.Writes), uint64(x.IFetches), uint64(x.Modifies))
		return
	}
	for ev := range int(x.Events) {
		k := blk.Kind[ev]
		if k == trace.Sync {
			continue // an atomic's: its PC moves no call on (runPC)
		}
		at.setRunning(blk.PC[ev])
		for len(acc) > 0 && acc[0].Event == int32(ev) {
			h.tracerAccess(blk, &acc[0])
			acc = acc[1:]
		}
		var one trace.BlockExit
		one.Add(k, blk.Size[ev])
		h.countRefs(uint64(one.Reads), uint64(one.Writes), uint64(one.IFetches), uint64(one.Modifies))
		if h.tl != nil {
			h.tick()
		}
	}
}

// countRefs counts r reads, w writes, f instruction fetches and m
// modifies of the current calling context that the tracer's first caches
// took: as events, as accesses of those caches, and the fetches as
// instructions of the context.
func (h *Hierarchy) countRefs(r, w, f, m uint64) {
	if f > 0 { // (there are none unless there is an instruction cache)
		h.attr.fetched(f)
		h.ifirst.acc[kIFetch] += f
	}
	h.kinds[trace.Read] += r
	h.kinds[trace.Write] += w
	h.kinds[trace.IFetch] += f
	h.kinds[trace.Modify] += m
	h.dfirst.acc[kRead] += r + m
	h.dfirst.acc[kWrite] += w + m
}

// tracerAccess simulates an access a of the tracer's first caches during
// an execution of blk, as refLine would the part of a reference it is,
// when attributing misses only: a hit counts nothing but, when it writes
// through, the write below; a miss is attributed with its cause, evicts
// the victim the tracer chose (attributed to the access point that filled
// it), fills its slot and sends below what the rules say, in Dinero IV's
// order. The access of the first line of a reference was counted with
// the execution's references.
func (h *Hierarchy) tracerAccess(blk *trace.Block, a *trace.L1Access) {
	at := h.attr
	l, k := h.dfirst, kRead
	at.pc = blk.PC[a.Event]
	switch a.Kind {
	case trace.IFetch:
		l, k, at.pc = h.ifirst, kIFetch, 0
	case trace.Write:
		k = kWrite
	}
	pa, ps := a.Addr, uint64(a.Size)
	line := pa >> l.shift
	if a.Flags&trace.L1Next != 0 {
		l.acc[k]++
	}
	if a.Flags&trace.L1Hit != 0 {
		if k == kWrite && !l.writeBack {
			slot := l.c.Lookup(line)
			if slot < 0 {
				h.disagree("hit", l, line<<l.shift)
				return
			}
			l.bytesToBelow += ps
			h.ref(l.dataNext, kWrite, pa, ps, true, at.ref(l.attr.slots[slot].bin))
		}
		return
	}
	l.miss[k]++
	var ref point
	if k == kIFetch {
		ref = at.ref(at.data.CodeBin())
	} else {
		ref = at.ref(h.binOf(pa))
	}
	h.countMiss(l, attribKind(k), line, ref, false)
	if k == kWrite && !l.allocate {
		l.bytesToBelow += ps
		h.ref(l.dataNext, kWrite, pa, ps, true, ref)
		return
	}
	if !l.wholeWrite(k, pa, ps) {
		l.bytesFromBelow += l.lineSize
		h.ref(l.next(k), fetchKind(k), line<<l.shift, l.lineSize, true, ref)
	}
	var v victim
	var slot int
	if a.Flags&trace.L1Victim != 0 {
		// As evict and drop, but the line replaces the victim's in
		// place: the replacement state of l is the tracer's.
		if slot = l.c.Lookup(a.Victim >> l.shift); slot < 0 {
			h.disagree("evicted", l, a.Victim)
			return
		}
		v = victim{line: l.c.Line(slot), dirty: a.Flags&trace.L1Dirty != 0, valid: true, ref: l.attr.slots[slot].fill}
		l.evictions++
		l.attr.evicted(at, v.ref, ref)
		h.removed(l, slot, replaced)
		l.c.Retag(slot, line)
	} else {
		if slot = l.c.Victim(line); l.c.Valid(slot) { // (else the lowest invalid way)
			h.disagree("filled a full set with", l, line<<l.shift)
			return
		}
		l.c.Install(slot, line)
	}
	h.filled(l, slot, line, ref, true, pa, ps)
	if k == kWrite && !l.writeBack {
		l.bytesToBelow += ps
		h.ref(l.dataNext, kWrite, pa, ps, true, ref)
	}
	if v.valid {
		h.sendVictim(l, v.line, v.dirty, v.ref)
	}
}

// tracerFlush writes back the line at a of the first data cache, which
// the tracer noting accesses flushes at the end of the trace (rule E), as
// copyBack would: attributed to the access point that filled it.
func (h *Hierarchy) tracerFlush(a uint64) {
	l := h.dfirst
	slot := l.c.Lookup(a >> l.shift)
	if slot < 0 {
		h.disagree("wrote back", l, a)
		return
	}
	h.writeBack(l, slot)
}

// disagree records, unless one was, that the tracer's first cache l did
// what to the line at a, which the engine's copy of l does not allow (it
// does not hold the line, or it has no room for it): the stream is not
// what the tracer's rules make, and the run ends with this error (Fault).
func (h *Hierarchy) disagree(what string, l *level, a uint64) {
	if h.fault == nil {
		h.fault = fmt.Errorf("the tracer's %s %s line %#x, which memspy's copy of it does not allow: the stream does not follow the first caches' rules (a tracer bug; memspy run --l1-in-tool=false simulates them in memspy)", l.spec.Name, what, a)
	}
}
