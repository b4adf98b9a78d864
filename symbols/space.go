package symbols

import (
	"cmp"
	"slices"

	"github.com/memspy/memspy/attrib"
)

// Space is the address space of a process: binaries loaded at biases.
// Lookups take and return run-time addresses. The zero Space is empty and
// ready to use. Lookups may run concurrently with each other but not with
// Add.
type Space struct {
	ents []spaceEnt // sorted by lo
	iv   ivals
}

type spaceEnt struct {
	lo, hi uint64 // run-time range of one PT_LOAD segment
	b      *Binary
	bias   uint64
}

// Add maps b at bias, the run-time address minus the link-time address
// (0 for a non-PIE executable). The mapped ranges are b's PT_LOAD segments.
func (s *Space) Add(b *Binary, bias uint64) {
	for _, r := range b.segs {
		lo, hi := r.lo+bias, r.hi+bias
		if hi <= lo {
			continue
		}
		s.ents = append(s.ents, spaceEnt{lo, hi, b, bias})
	}
	slices.SortStableFunc(s.ents, func(a, b spaceEnt) int { return cmp.Compare(a.lo, b.lo) })
	s.iv = makeIvals(len(s.ents), func(i int) (uint64, uint64) { return s.ents[i].lo, s.ents[i].hi })
}

// Binary returns the binary whose mapped range (from its PT_LOAD segments)
// contains pc, and its bias.
func (s *Space) Binary(pc uint64) (*Binary, uint64, bool) {
	i := s.iv.find(pc)
	if i < 0 {
		return nil, 0, false
	}
	return s.ents[i].b, s.ents[i].bias, true
}

// Func returns the outermost function containing run-time address pc, with
// entry and end as run-time addresses.
func (s *Space) Func(pc uint64) (name string, entry, end uint64, ok bool) {
	b, bias, ok := s.Binary(pc)
	if !ok {
		return "", 0, 0, false
	}
	name, entry, end, ok = b.Func(pc - bias)
	if !ok {
		return "", 0, 0, false
	}
	return name, entry + bias, end + bias, true
}

// Signature returns the full demangled name of the function containing
// run-time address pc (see Binary.Signature).
func (s *Space) Signature(pc uint64) string {
	b, bias, ok := s.Binary(pc)
	if !ok {
		return ""
	}
	return b.Signature(pc - bias)
}

// PLT returns the run-time range [lo, hi) of the PLT section holding
// run-time address pc (see Binary.PLT).
func (s *Space) PLT(pc uint64) (lo, hi uint64, ok bool) {
	b, bias, ok := s.Binary(pc)
	if !ok {
		return 0, 0, false
	}
	lo, hi, ok = b.PLT(pc - bias)
	if !ok {
		return 0, 0, false
	}
	return lo + bias, hi + bias, true
}

// Frames returns the source frames at run-time address pc, innermost first
// (see Binary.Frames).
func (s *Space) Frames(pc uint64) []Frame {
	b, bias, ok := s.Binary(pc)
	if !ok {
		return nil
	}
	return b.Frames(pc - bias)
}

// LineCol returns the file, line and column of run-time address pc (see
// Binary.LineCol).
func (s *Space) LineCol(pc uint64) (file string, line, col int, ok bool) {
	b, bias, ok := s.Binary(pc)
	if !ok {
		return "", 0, 0, false
	}
	return b.LineCol(pc - bias)
}

// Global returns the variable containing run-time address a, with g.Addr
// as a run-time address.
func (s *Space) Global(a uint64) (g Global, ok bool) {
	b, bias, ok := s.Binary(a)
	if !ok {
		return Global{}, false
	}
	g, ok = b.Global(a - bias)
	if ok {
		g.Addr += bias
	}
	return g, ok
}

// Locals returns the stack variables of the function entered at run-time
// address entry (see Binary.Locals), nil when no mapped binary knows them.
func (s *Space) Locals(entry uint64) []attrib.Local {
	b, bias, ok := s.Binary(entry)
	if !ok {
		return nil
	}
	return b.Locals(entry - bias)
}
