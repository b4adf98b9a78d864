package sim_test

// The reference model's multiprocessor, written from docs/semantics.md
// ("Several processors"): no directory, every action scans the other
// processors' caches; a processor's used bytes of a line are kept per
// (processor, line) from its first reference after the line enters its
// private caches until it holds the line in none of them. Instruction
// fetches are reads for the protocol, and instruction caches are kept
// coherent too.

// Kinds of coherence invalidation, as refCache.sharing records them.
const (
	sharingTrue uint8 = 1 + iota
	sharingFalse
)

// fetch performs an instruction fetch from the current processor: on a
// coherent machine a read for the protocol.
func (r *refModel) fetch(a, s uint64) {
	if r.coherent {
		L := r.cur.private[0].lineSize
		for line := a / L; ; line++ {
			r.coherentRead(r.cur, line)
			if line == lastByte(a, s)/L {
				break
			}
		}
	}
	r.reference(r.ifirst, accIFetch, a, s, false)
}

// dataReference performs a data reference of kind k from the current
// processor: on a coherent machine the protocol acts on every line it
// touches first, and the bytes it used are recorded after.
func (r *refModel) dataReference(k refAccess, a, s uint64) {
	if !r.coherent {
		r.reference(r.dfirst, k, a, s, false)
		return
	}
	p := r.cur
	L := p.private[0].lineSize
	last := lastByte(a, s)
	parts := func(f func(line, lo, hi uint64)) {
		for line := a / L; ; line++ {
			f(line, max(a, line*L), min(last, line*L+L-1))
			if line == last/L {
				break
			}
		}
	}
	parts(func(line, lo, hi uint64) {
		if k == accWrite {
			r.coherentWrite(p, line, lo, hi)
		} else {
			r.coherentRead(p, line)
		}
	})
	r.reference(p.dfirst, k, a, s, false)
	parts(func(line, lo, hi uint64) {
		if r.holds(p, line) {
			r.used[[2]uint64{uint64(p.id), line}] |= r.granules(L, lo, hi)
		}
	})
}

// granules returns the bits of the granules of bytes [lo, hi] of a line
// of L bytes: a bit per byte up to 64-byte lines, per L/64 bytes beyond.
func (r *refModel) granules(L, lo, hi uint64) uint64 {
	per := max(1, L/64)
	var m uint64
	for b := lo; ; b++ {
		m |= 1 << (b % L / per)
		if b == hi {
			break
		}
	}
	return m
}

// holds reports whether one of p's private caches holds line.
func (r *refModel) holds(p *refProc, line uint64) bool {
	for _, c := range p.private {
		if c.find(line) >= 0 {
			return true
		}
	}
	return false
}

// released notes that line left c: when c is private and its processor
// holds the line in no private cache any more, its use of the line ends.
func (r *refModel) released(c *refCache, line uint64) {
	if c.sharing == nil {
		return
	}
	if p := r.procs[c.proc]; !r.holds(p, line) {
		delete(r.used, [2]uint64{uint64(p.id), line})
	}
}

// coherentRead: every other processor holding line dirty writes it back
// and keeps it clean.
func (r *refModel) coherentRead(p *refProc, line uint64) {
	for _, q := range r.procs {
		if q == p {
			continue
		}
		dirty := false
		for _, c := range q.private {
			if i := c.find(line); i >= 0 && c.setOf(line)[i].dirty {
				c.setOf(line)[i].dirty = false
				dirty = true
			}
		}
		if dirty {
			r.intervention(q, line)
		}
	}
}

// coherentWrite: every other processor holding line loses it (after
// writing it back if dirty); it is true sharing when that processor had
// used a granule of [lo, hi].
func (r *refModel) coherentWrite(p *refProc, line, lo, hi uint64) {
	L := p.private[0].lineSize
	sent := false
	for _, q := range r.procs {
		if q == p || !r.holds(q, line) {
			continue
		}
		dirty := false
		for _, c := range q.private {
			if i := c.find(line); i >= 0 && c.setOf(line)[i].dirty {
				dirty = true
			}
		}
		if dirty {
			r.intervention(q, line)
		}
		kind := sharingFalse
		if r.used[[2]uint64{uint64(q.id), line}]&r.granules(L, lo, hi) != 0 {
			kind = sharingTrue
		}
		for _, c := range q.private {
			if present, _ := c.drop(line); present {
				c.st.Invalidations++
				c.sharing[line] = kind
			}
		}
		delete(r.used, [2]uint64{uint64(q.id), line})
		q.st.InvalidationsReceived++
		p.st.InvalidationsSent++
		sent = true
	}
	if sent && r.holds(p, line) {
		p.st.Upgrades++
	}
}

// intervention writes q's dirty line back from its outermost private
// cache to the level below.
func (r *refModel) intervention(q *refProc, line uint64) {
	q.st.Interventions++
	c := q.outer
	c.st.Writebacks++
	c.st.BytesToBelow += c.lineSize
	r.reference(c.victimDown(), accWrite, line*c.lineSize, c.lineSize, true)
}
