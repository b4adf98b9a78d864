package sim

import (
	"cmp"
	"path/filepath"
	"slices"

	"memspy/attrib"
	"memspy/profile"
	"memspy/trace"
)

// minGlobalSize is the size below which global variables share their
// module's pooled bin (issue: --min-object-size, default 64 bytes).
const minGlobalSize = 64

// stackReach is how far below a thread's innermost frame's entry stack
// pointer an address still counts as that frame's locals.
const stackReach = 1 << 20

// Line states for the causes of misses, per level and line (MemSpy: the
// cause of a miss is the first event that removed the line since it was
// last there).
const (
	neverHeld   uint8 = iota // a miss is cold
	held                     // in the cache since its last fill
	replaced                 // evicted to make room: a miss is a replacement miss
	invalidated              // invalidated or back-invalidated: an invalidation miss
)

// pairStats are the counters of one procedure × data bin pair at a level.
type pairStats struct {
	acc, miss                       [numAccessKinds]uint64
	cold, replacement, invalidation uint64
}

// levelAttrib is a level's attribution state.
type levelAttrib struct {
	bin      []int32          // data bin of the line in each slot (from the reference that filled it)
	state    map[uint64]uint8 // line → neverHeld (absent), held, replaced or invalidated
	pairs    map[uint64]*pairStats
	lastKey  uint64
	last     *pairStats
	evictors map[uint64]uint64 // victim bin << 32 | evictor bin → evictions
}

func newLevelAttrib(slots int) *levelAttrib {
	return &levelAttrib{bin: make([]int32, slots), state: map[uint64]uint8{}, pairs: map[uint64]*pairStats{}, evictors: map[uint64]uint64{}}
}

// pair returns the counters of proc × bin.
func (a *levelAttrib) pair(proc, bin int32) *pairStats {
	key := uint64(uint32(proc))<<32 | uint64(uint32(bin))
	if a.last != nil && a.lastKey == key {
		return a.last
	}
	p := a.pairs[key]
	if p == nil {
		p = &pairStats{}
		a.pairs[key] = p
	}
	a.lastKey, a.last = key, p
	return p
}

// resetStats zeroes the counters and keeps the line state.
func (a *levelAttrib) resetStats() {
	clear(a.pairs)
	a.last = nil
	clear(a.evictors)
}

// attribution is the hierarchy's attribution state: who references what.
type attribution struct {
	code    *attrib.Code
	data    *attrib.Data
	globals func(path string, textAddr uint64) []attrib.Var
	modules []profile.Module // object files mapped, in order
	tid     uint32           // thread of the current reference
	proc    int32            // procedure of the current reference
}

// processAttributed is Process when attributing. Its hit bypass is that of
// Process (a hit on the line last accessed, or on one of the two most
// recent lines of its set in an LRU cache) with the hit counted in its pair;
// the current procedure holds while events stay on one thread, and
// anything else takes the slow path.
func (h *Hierarchy) processAttributed(b *trace.Batch, il, dl *level) {
	at := h.attr
	for i, k := range b.Kind {
		a, s, kk := b.Addr[i], uint64(b.Size[i]), kRead
		l := dl
		switch k {
		case trace.IFetch:
			l, kk = il, kIFetch
		case trace.Write:
			kk = kWrite
		case trace.Read:
		default:
			l = nil
		}
		if l != nil && l.attr != nil && b.Thread[i] == at.tid && a&l.offMask+s-1 < l.fastLimit {
			slot := -1
			switch {
			case l.memo == a&^l.offMask:
				slot = l.memoSlot
			case kk == kWrite:
			default:
				if slot = l.mruCache.MRU(a >> l.shift); slot < 0 {
					slot = l.mruCache.Promote(a >> l.shift)
				}
				if slot >= 0 {
					l.memo, l.memoSlot = a&^l.offMask, slot
				}
			}
			if slot >= 0 && (kk != kWrite || l.writeBack && l.c.Dirty(slot)) {
				l.acc[kk]++
				h.kinds[k]++
				l.attr.pair(at.proc, l.attr.bin[slot]).acc[kk]++
				continue
			}
		}
		h.slow(b, i, il)
	}
}

// attribEvent updates the call stacks and the data bins from an extended
// event.
func (h *Hierarchy) attribEvent(k trace.Kind, addr uint64, tid uint32, e *trace.Ext) {
	at := h.attr
	switch k {
	case trace.Call:
		at.code.Call(tid, addr, e.SP)
	case trace.Return:
		at.code.Return(tid, e.SP)
	case trace.Alloc:
		at.data.Alloc(addr, e.Size, e.Stack)
	case trace.Free:
		at.data.Free(addr)
	case trace.Marker:
		if e.Mark == trace.MarkRange {
			at.data.Name(addr, e.Size, e.Name)
		}
	case trace.Map:
		at.modules = append(at.modules, profile.Module{Path: e.Name, TextAddr: addr, TextSize: e.Size})
		if at.globals != nil {
			at.data.AddGlobals(at.globals(e.Name, addr), minGlobalSize, "<small globals>@"+filepath.Base(e.Name))
		}
	}
}

// binOf returns the data bin of address a for the current reference: a
// named range, heap block or global holding it, else the stack frame of the
// current thread holding it, else the other bin. It is called on misses
// only.
func (h *Hierarchy) binOf(a uint64) int32 {
	at := h.attr
	if b := at.data.Lookup(a); b != attrib.OtherBin {
		return b
	}
	if p, ok := at.code.FrameOf(at.tid, a, stackReach); ok {
		return at.data.StackBin(p, "")
	}
	return attrib.OtherBin
}

// countHit counts a hit of the current reference on slot of l.
func (h *Hierarchy) countHit(l *level, k int, slot int) {
	p := l.attr.pair(h.attr.proc, l.attr.bin[slot])
	p.acc[k]++
}

// countMiss counts a miss of the current reference on line of l, in data
// bin bin, with its cause.
func (h *Hierarchy) countMiss(l *level, k int, line uint64, bin int32) {
	p := l.attr.pair(h.attr.proc, bin)
	p.acc[k]++
	p.miss[k]++
	switch l.attr.state[line] {
	case neverHeld, held: // held: a write that did not allocate, missing again
		p.cold++
	case replaced:
		p.replacement++
	case invalidated:
		p.invalidation++
	}
}

// removed records that line left l, by replacement or invalidation.
func (l *level) removed(line uint64, why uint8) {
	if l.attr.state[line] == held {
		l.attr.state[line] = why
	}
}

// filled records that line entered slot of l with data of bin.
func (l *level) filled(slot int, line uint64, bin int32) {
	l.attr.bin[slot] = bin
	l.attr.state[line] = held
}

// attributionProfile returns the attribution part of the profile.
func (h *Hierarchy) attributionProfile() *profile.Attribution {
	at := h.attr
	out := &profile.Attribution{Modules: slices.Clone(at.modules)}
	for _, p := range at.code.Procs() {
		out.Procs = append(out.Procs, profile.Proc{Name: p.Name, Entry: p.Entry})
	}
	names := attrib.HeapNames(at.data.Bins())
	for i, b := range at.data.Bins() {
		name := b.Name
		switch b.Kind {
		case attrib.Stack:
			name = "locals@" + at.code.Proc(b.Proc).Name
		case attrib.Heap:
			name = names[i]
		}
		out.Bins = append(out.Bins, profile.Bin{Kind: b.Kind.String(), Name: name, Site: slices.Clone(b.Site), Blocks: b.Blocks, Bytes: b.Bytes})
	}
	for _, l := range h.levels {
		ca := profile.CacheAttribution{Name: l.spec.Name}
		for key, p := range l.attr.pairs {
			ps := profile.PairStats{
				Proc: int32(key >> 32), Bin: int32(uint32(key)),
				IFetches: p.acc[kIFetch], Reads: p.acc[kRead], Writes: p.acc[kWrite],
				IFetchMisses: p.miss[kIFetch], ReadMisses: p.miss[kRead], WriteMisses: p.miss[kWrite],
				Cold: p.cold, Replacement: p.replacement, Invalidation: p.invalidation,
			}
			ca.Pairs = append(ca.Pairs, ps)
			ca.Cold += p.cold
			ca.Replacement += p.replacement
			ca.Invalidation += p.invalidation
		}
		slices.SortFunc(ca.Pairs, func(a, b profile.PairStats) int {
			return cmp.Or(cmp.Compare(b.Misses(), a.Misses()), cmp.Compare(b.Accesses(), a.Accesses()),
				cmp.Compare(a.Proc, b.Proc), cmp.Compare(a.Bin, b.Bin))
		})
		for key, n := range l.attr.evictors {
			ca.Evictors = append(ca.Evictors, profile.Evictor{Victim: int32(key >> 32), By: int32(uint32(key)), Evictions: n})
		}
		slices.SortFunc(ca.Evictors, func(a, b profile.Evictor) int {
			return cmp.Or(cmp.Compare(b.Evictions, a.Evictions), cmp.Compare(a.Victim, b.Victim), cmp.Compare(a.By, b.By))
		})
		out.Caches = append(out.Caches, ca)
	}
	return out
}
