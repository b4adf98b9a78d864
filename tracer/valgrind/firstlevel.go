package valgrind

import (
	"fmt"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/trace"
)

// FirstLevel asks the tool to simulate the machine's first caches itself
// (docs/valgrind-stream.md, "First-level caches"): the stream then carries
// what they send below them (trace.BelowRead, BelowWrite and BelowIFetch
// events) and their counters (trace.FirstLevel events) instead of the
// program's references. The caller decides when that is exact
// (sim.Hierarchy.TracerFirstLevels).
type FirstLevel struct {
	// Data is the machine's index of the first data cache and its
	// description; Instr those of the first instruction cache (Instr nil:
	// instruction fetches are not traced; Instr == Data: one unified
	// cache).
	DataIndex, InstrIndex int
	Data, Instr           *machine.Cache
	// Notes keeps the EXEC records, without addresses, with the accesses
	// of those caches that memspy must simulate to attribute misses
	// (sim.Hierarchy.TracerNotes): they become trace.Exec events, and only
	// the end-of-trace flush comes as requests below.
	Notes bool
}

// args returns the tool's --l1d and --l1i options for f.
func (f *FirstLevel) args() []string {
	a := []string{"--l1d=" + cacheArg(f.DataIndex, f.Data)}
	if f.Instr != nil {
		a = append(a, "--l1i="+cacheArg(f.InstrIndex, f.Instr))
	}
	if f.Notes {
		a = append(a, "--l1-notes=yes")
	}
	return a
}

// cacheArg describes cache c, of index i, as --l1d and --l1i want it.
func cacheArg(i int, c *machine.Cache) string {
	write, alloc := "wt", "nwa"
	if c.WriteBack {
		write = "wb"
	}
	if c.WriteAllocate {
		alloc = "wa"
	}
	return fmt.Sprintf("%d,%d,%d,%d,%s,%s,%s", i, c.Sets, c.Assoc, c.Line, c.Replacement, write, alloc)
}

// Record types and flags of the first-level caches' records.
const (
	recBelow     = 12
	recL1Stats   = 13
	recTentative = 1 << 59 // the record counts only if the stream ends next
	flagL1       = 8       // header flag: the tool simulates the first-level caches
	// maxL1Stats bounds the words of an L1STATS record: 4 counts by kind
	// and 11 words per cache, at most two caches.
	maxL1Stats = 4 + 2*11
)

// belowKinds maps the kind in a BELOW request's low bits (the stream's
// entry kinds; 3: a write of another size) to its event.
var belowKinds = [4]trace.Kind{entRead: trace.BelowRead, entWrite: trace.BelowWrite, entIFetch: trace.BelowIFetch, 3: trace.BelowWrite}

// pendingFinal holds the tentative records read since the last exec
// record: the end-of-trace flush and the counters after it, which count
// only if the exec succeeds (the stream then ends).
type pendingFinal struct {
	kind  []trace.Kind
	addr  []uint64
	size  []uint32
	stats []uint64
}

// FirstLevel reports whether the stream header says the tool simulates
// the first-level caches (false before the first Read).
func (s *StreamReader) FirstLevel() bool { return s.flags&flagL1 != 0 }

// notFirstLevel is the error of a record of the first-level caches (kind)
// in a stream whose header does not say the tool simulates them.
func (s *StreamReader) notFirstLevel(kind string) error {
	return s.corrupt(s.off(), "%s record in a stream whose header does not say that the tool simulates the first-level caches", kind)
}

// belowRecord starts a BELOW record (first word w) at s.pos: a tentative
// one is read whole into s.final, the others are delivered by
// belowEvents.
func (s *StreamReader) belowRecord(w uint64) error {
	start := s.off()
	n := int(w & (1<<32 - 1))
	if w&(1<<60-1)>>32&^(recTentative>>32) != 0 || n > ChunkSize/8 {
		return s.corrupt(start, "BELOW record with bad bits or %d words (word %#016x)", n, w)
	}
	s.pos += 8
	s.below = n
	if w&recTentative == 0 {
		return nil
	}
	for s.below > 0 {
		kind, a, size, err := s.belowRequest()
		if err != nil {
			return err
		}
		s.final.kind = append(s.final.kind, kind)
		s.final.addr = append(s.final.addr, a)
		s.final.size = append(s.final.size, size)
	}
	return nil
}

// belowRequest decodes the request at s.pos, of the current BELOW record:
// its event kind, address and size (0: a whole line of the cache that
// sent it).
func (s *StreamReader) belowRequest() (trace.Kind, uint64, uint32, error) {
	start := s.off()
	if err := s.more(8); err != nil {
		return 0, 0, 0, s.endError(err, false)
	}
	w := le.Uint64(s.buf[s.pos:])
	if w&3 != 3 {
		s.pos += 8
		s.below--
		return belowKinds[w&3], w &^ 3, 0, nil
	}
	if s.below < 2 || w>>34 != 0 || w>>2 == 0 {
		return 0, 0, 0, s.corrupt(start, "bad BELOW request %#016x", w)
	}
	if err := s.more(16); err != nil {
		return 0, 0, 0, s.endError(err, false)
	}
	a := le.Uint64(s.buf[s.pos+8:])
	s.pos += 16
	s.below -= 2
	return trace.BelowWrite, a, uint32(w >> 2), nil
}

// belowEvents delivers the requests left of the current BELOW record into
// the columns from index n on, until the record or the room ends.
func (s *StreamReader) belowEvents(c columns, n int) (int, error) {
	// Whole lines, one word each, as long as they are in the buffer.
	buf, pos, tid := s.buf[:s.end], s.pos, s.tid
	kind, addr, size, pc, thr := c.kind, c.addr[:len(c.kind)], c.size[:len(c.kind)], c.pc[:len(c.kind)], c.thr[:len(c.kind)]
	for s.below > 0 && n < len(kind) && len(buf)-pos >= 8 {
		w := le.Uint64(buf[pos:])
		if w&3 == 3 {
			break
		}
		kind[n], addr[n], size[n], pc[n], thr[n] = belowKinds[w&3], w&^3, 0, 0, tid
		n++
		pos += 8
		s.below--
	}
	s.pos = pos
	for s.below > 0 && n < len(c.kind) {
		kind, a, size, err := s.belowRequest()
		if err != nil {
			return n, err
		}
		c.kind[n], c.addr[n], c.size[n], c.pc[n], c.thr[n] = kind, a, size, 0, s.tid
		n++
	}
	return n, nil
}

// statsRecord decodes an L1STATS record (first word w) at s.pos into
// event n, and reports whether it made one (a tentative record waits in
// s.final).
func (s *StreamReader) statsRecord(c columns, n int, w uint64) (bool, error) {
	start := s.off()
	words := int(w & (1<<32 - 1))
	if w&(1<<60-1)>>32&^(recTentative>>32) != 0 || (words-4)%11 != 0 || words < 15 || words > maxL1Stats {
		return false, s.corrupt(start, "L1STATS record with bad bits or %d words (word %#016x)", words, w)
	}
	if err := s.more(8 + 8*words); err != nil {
		return false, s.endError(err, false)
	}
	stats := make([]uint64, words)
	for i := range stats {
		stats[i] = le.Uint64(s.buf[s.pos+8+8*i:])
	}
	s.pos += 8 + 8*words
	if w&recTentative != 0 {
		s.final.stats = stats
		return false, nil
	}
	c.setExt(n, trace.FirstLevel, 0, 0, s.tid, trace.Ext{Stack: stats})
	return true, nil
}

// deliverFinal moves the tentative records into the columns from index n
// on, as the stream ends with an exec, and reports whether all of them
// fit.
func (s *StreamReader) deliverFinal(c columns, n int) (int, bool) {
	f := &s.final
	for len(f.kind) > 0 && n < len(c.kind) {
		c.kind[n], c.addr[n], c.size[n], c.pc[n], c.thr[n] = f.kind[0], f.addr[0], f.size[0], 0, s.tid
		f.kind, f.addr, f.size = f.kind[1:], f.addr[1:], f.size[1:]
		n++
	}
	if len(f.kind) > 0 || f.stats != nil && n == len(c.kind) {
		return n, false
	}
	if f.stats != nil {
		c.setExt(n, trace.FirstLevel, 0, 0, s.tid, trace.Ext{Stack: f.stats})
		n++
	}
	*f = pendingFinal{}
	return n, true
}
