package symbolize

import "github.com/memspy/memspy/attrib"

// Locals returns the variables kept at fixed offsets from the canonical
// frame address of the function entered at run-time address entry, sorted
// by offset and not overlapping, or nil when unknown (see
// symbols.Binary.Locals). The slice is shared; do not modify it.
func (s *Symbolizer) Locals(entry uint64) []attrib.Local { return s.space.Locals(entry) }
