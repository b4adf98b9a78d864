package valgrind

import (
	"github.com/memspy/memspy/trace"
)

// The records and header flag of a tool that simulates the first-level
// caches and notes the accesses memspy simulates itself (--l1-notes,
// docs/valgrind-stream.md, "Noted accesses").
const (
	recExecL1 = 14
	flagNotes = 16 // header flag: EXEC records without addresses, and EXECL1 records
	// Bits of a note's first word.
	noteFlags      = 0xf
	noteKindShift  = 4
	noteSizeShift  = 8
	noteEntryShift = 32
)

// Notes reports whether the stream header says the tool notes the
// first-level accesses that memspy simulates (false before the first
// Read): EXEC records then carry no addresses and become trace.Exec
// events (see FirstLevel.Notes).
func (s *StreamReader) Notes() bool { return s.flags&flagNotes != 0 }

// noteKinds maps a note's access kind to its event kind.
var noteKinds = [4]trace.Kind{entRead: trace.Read, entWrite: trace.Write, entIFetch: trace.IFetch, 3: 0}

// describeBlock makes sb.block from its events and exits.
func (sb *superblock) describeBlock() {
	b := &trace.Block{Kind: sb.kind, Size: sb.size, PC: sb.pc, Exits: make([]trace.BlockExit, len(sb.exits))}
	var x trace.BlockExit
	ev := 0
	for e := range sb.exits {
		for ; ev < int(sb.exits[e].ev); ev++ {
			x.Add(sb.kind[ev], sb.size[ev])
		}
		x.Events = int32(ev)
		b.Exits[e] = x
	}
	sb.block = b
}

// notedRecord decodes the EXEC or EXECL1 record (first word w) at s.pos
// of a tool that notes first-level accesses into events n and on (the
// Exec event, then its final call or return), reading more of the stream
// if need be. full reports that its events do not fit the columns.
func (s *StreamReader) notedRecord(c columns, n int, w uint64) (m int, full bool, err error) {
	for {
		m, need, err := s.notedExec(c, n, w)
		switch {
		case err != nil || m > n:
			return m, false, err
		case need == 0:
			return n, true, nil
		}
		if err := s.more(need); err != nil {
			return n, false, s.endError(err, false)
		}
	}
}

// notedExec is notedRecord without reading: it returns n when the record
// is not whole in the buffer, with the bytes it needs, or when its events
// do not fit (need 0).
func (s *StreamReader) notedExec(c columns, n int, w uint64) (m, need int, err error) {
	start := s.off()
	id := w >> 16 & idMask
	sb := s.lookup(id)
	if sb == nil {
		return n, 0, s.corrupt(start, "EXEC of superblock %d, which was not described", id)
	}
	e := int(w & 0xffff)
	if e >= len(sb.exits) {
		return n, 0, s.corrupt(start, "EXEC of superblock %d takes exit %d, but it has %d exits (exit %[3]d means it ran to its end)", id, e, len(sb.exits)-1)
	}
	final := int(sb.exits[e].final)
	head, count, words := 8, 0, 0
	if w>>60 == recExecL1 {
		if s.end-s.pos < 16 {
			return n, 16, nil
		}
		cw := le.Uint64(s.buf[s.pos+8:])
		count, words, head = int(uint32(cw)), int(cw>>32), 16
		if count == 0 || words < 2*count || words > 3*count || words > ChunkSize/8 {
			return n, 0, s.corrupt(start, "EXECL1 record with %d notes in %d words", count, words)
		}
	}
	need = head + 16*final + 8*words
	switch {
	case n == len(c.kind):
		return n, 0, nil
	case need > s.end-s.pos:
		return n, need, nil
	}
	p := s.buf[s.pos+head : s.pos+need]
	base := len(*c.acc)
	if count > 0 {
		q := p[16*final:]
		lim := sb.exits[e].ev
		for range count {
			if len(q) < 16 {
				return n, 0, s.corrupt(start, "EXECL1 record whose notes overrun it")
			}
			a := le.Uint64(q)
			entry := a >> noteEntryShift
			k := noteKinds[a>>noteKindShift&3]
			var ev int32 = -1
			if entry < uint64(len(sb.entryEv)) {
				ev = sb.entryEv[entry]
			}
			if a>>noteKindShift&3 == 3 || a>>(noteKindShift+2)&3 != 0 || ev < 0 || ev >= lim {
				return n, 0, s.corrupt(start, "bad note %#016x of superblock %d, exit %d", a, id, e)
			}
			x := trace.L1Access{Addr: le.Uint64(q[8:]), Size: uint32(a >> noteSizeShift & (1<<24 - 1)), Event: ev, Kind: k, Flags: uint8(a & noteFlags)}
			q = q[16:]
			if x.Flags&trace.L1Victim != 0 {
				if len(q) < 8 {
					return n, 0, s.corrupt(start, "EXECL1 record whose notes overrun it")
				}
				x.Victim = le.Uint64(q)
				q = q[8:]
			}
			*c.acc = append(*c.acc, x)
		}
		if len(q) != 0 {
			*c.acc = (*c.acc)[:base]
			return n, 0, s.corrupt(start, "EXECL1 record with %d words after its notes", len(q)/8)
		}
	}
	c.kind[n], c.addr[n], c.size[n], c.pc[n], c.thr[n] = trace.Exec, uint64(e), uint32(len(*c.blocks)), uint64(base)<<32|uint64(count), s.tid
	*c.blocks = append(*c.blocks, sb.block)
	n++
	if final > 0 && !s.slim {
		s.call = heldFinal{sb.final, le.Uint64(p), sb.finalPC, le.Uint64(p[8:])}
		n = s.deliverHeld(c, n)
	}
	s.pos += need
	return n, need, nil
}

// heldFinal is the final call or return of an Exec event delivered
// without it: its batch was full (kind 0: none).
type heldFinal struct {
	kind           trace.Kind
	target, pc, sp uint64
}

// deliverHeld delivers the held final call or return as event n, if there
// is one and room for it, and returns the new number of events.
func (s *StreamReader) deliverHeld(c columns, n int) int {
	if h := s.call; h.kind != 0 && n < len(c.kind) {
		c.setExt(n, h.kind, h.target, h.pc, s.tid, trace.Ext{SP: h.sp})
		s.call.kind = 0
		n++
	}
	return n
}
