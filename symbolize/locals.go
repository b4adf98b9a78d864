package symbolize

import "memspy/attrib"

// Locals returns the variables kept at fixed offsets from the frame of the
// function entered at run-time address entry. Not yet read from DWARF.
func (s *Symbolizer) Locals(entry uint64) []attrib.Local { return nil }
