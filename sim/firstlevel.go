package sim

import (
	"slices"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/trace"
)

// maxTracerLines bounds the lines of a first-level cache that a tracer
// simulates (the Valgrind tool's limit).
const maxTracerLines = 1 << 24

// TracerFirstLevels reports whether a tracer may simulate the first caches
// of h itself and send the engine only what they send below them
// (trace.BelowRead, BelowWrite and BelowIFetch events) and their counters
// (trace.FirstLevel events), with the same result to the last counter, and
// which caches: the machine's index of the first data cache and, when
// instruction fetches are traced (ifetch), of the first instruction cache
// (else -1). The tracer must then follow docs/semantics.md for those
// caches under LRU or FIFO, which is what it supports.
//
// It may not when h attributes, simulates several processors, classifies
// misses (3C), follows the cache lab's rules or samples; when a traced
// kind of reference has no cache, or the first cache of one kind is below
// the other's (an instruction cache above a unified one); when a first cache has another policy or
// more than maxTracerLines lines; or when a cache below can take lines out
// of a first cache or hand lines up to it (inclusive, exclusive).
func (h *Hierarchy) TracerFirstLevels(ifetch bool) (data, instr int, ok bool) {
	if !h.Slim() {
		return 0, 0, false
	}
	return h.tracerFirsts(ifetch)
}

// tracerFirsts is TracerFirstLevels but for attribution: whether the
// first caches are ones a tracer may simulate.
func (h *Hierarchy) tracerFirsts(ifetch bool) (data, instr int, ok bool) {
	if len(h.procs) > 1 || h.opt.Classify || h.opt.CacheLab || h.samp != nil || h.numa != nil || h.coh != nil {
		return 0, 0, false
	}
	dl, il := h.dfirst, h.ifirst
	firsts := []*level{dl}
	instr = -1
	if ifetch {
		firsts = append(firsts, il)
		if il != nil {
			instr = il.cache
		}
	}
	if ifetch && il != dl && (il == nil || il.spec.HoldsData() || dl.spec.HoldsInstructions()) {
		return 0, 0, false // one first cache is below the other
	}
	for _, l := range firsts {
		if l == nil || !tracerModels(l.spec) || l.inclusive || l.exclusive {
			return 0, 0, false
		}
		for _, x := range h.levels {
			if (x.inclusive || x.exclusive) && slices.Contains(x.uppers, l) {
				return 0, 0, false
			}
		}
	}
	return dl.cache, instr, true
}

// tracerModels reports whether a tracer simulates cache c (see
// TracerFirstLevels).
func tracerModels(c *machine.Cache) bool {
	return (c.Replacement == machine.LRU || c.Replacement == machine.FIFO) &&
		c.Line >= 4 && c.Sets*c.Assoc <= maxTracerLines
}

// fromTracer simulates event i of b, which a tracer simulating the first
// caches sent (see TracerFirstLevels): a request below one of them, or
// their counters.
func (h *Hierarchy) fromTracer(b *trace.Batch, i int) {
	a, s := b.Addr[i], uint64(b.Size[i])
	switch b.Kind[i] {
	case trace.BelowIFetch:
		h.requestBelow(h.ifirst, kIFetch, a, s)
	case trace.BelowRead:
		h.requestBelow(h.dfirst, kRead, a, s)
	case trace.BelowWrite:
		if h.attr != nil {
			h.tracerFlush(a) // a tracer noting accesses sends only its flush
			return
		}
		h.requestBelow(h.dfirst, kWrite, a, s)
	case trace.Exec:
		h.tracerExec(b, i)
	case trace.FirstLevel:
		if h.attr == nil { // a tracer noting accesses: the engine counts them itself
			h.setFirstLevels(b.ExtOf(i).Stack)
		}
	}
}

// belowRun simulates the requests below the first caches (see fromTracer)
// from event i of b on, up to stop, and returns the index of the first
// other event: in a run of the Valgrind tool that simulates the first
// caches, nearly every event.
func (h *Hierarchy) belowRun(b *trace.Batch, i, stop int) int {
	il, dl := h.ifirst, h.dfirst
	kinds, addrs, sizes := b.Kind[:stop], b.Addr[:stop], b.Size[:stop]
	for ; i < len(kinds); i++ {
		switch kinds[i] {
		case trace.BelowRead:
			h.requestBelow(dl, kRead, addrs[i], uint64(sizes[i]))
		case trace.BelowWrite:
			h.requestBelow(dl, kWrite, addrs[i], uint64(sizes[i]))
		case trace.BelowIFetch:
			h.requestBelow(il, kIFetch, addrs[i], uint64(sizes[i]))
		default:
			return i
		}
	}
	return i
}

// requestBelow sends a request of kind k for bytes [a, a+s), which the
// first cache l sent, down l's path, as l itself would have: a fill and a
// write-back are whole lines of l (s 0), a write-through a piece of one.
func (h *Hierarchy) requestBelow(l *level, k int, a, s uint64) {
	if l == nil {
		h.ref(nil, k, a, s, true, noPoint)
		return
	}
	next := l.next(k)
	if s == 0 {
		s = l.lineSize
	}
	if a&l.offMask == 0 && s == l.lineSize {
		h.lineBelow(l, next, k, a>>l.shift, noPoint)
		return
	}
	h.ref(next, k, a, s, true, noPoint)
}

// setFirstLevels sets the counters that the tracer keeps: the events by
// kind (read, write, ifetch, modify) and, per first cache (its machine
// index first), its accesses and misses by kind (read, write, ifetch),
// evictions, write-backs and bytes from and to below
// (docs/valgrind-stream.md, L1STATS).
func (h *Hierarchy) setFirstLevels(w []uint64) {
	if len(w) < 4 {
		return
	}
	h.kinds[trace.Read], h.kinds[trace.Write], h.kinds[trace.IFetch], h.kinds[trace.Modify] = w[0], w[1], w[2], w[3]
	for c := w[4:]; len(c) >= 11; c = c[11:] {
		if c[0] >= uint64(len(h.caches)) {
			continue
		}
		l := h.caches[c[0]][0]
		l.acc[kRead], l.acc[kWrite], l.acc[kIFetch] = c[1], c[2], c[3]
		l.miss[kRead], l.miss[kWrite], l.miss[kIFetch] = c[4], c[5], c[6]
		l.evictions, l.writebacks, l.bytesFromBelow, l.bytesToBelow = c[7], c[8], c[9], c[10]
	}
}
