package symbols

import (
	"cmp"
	"debug/dwarf"
	"slices"
	"strconv"

	"github.com/memspy/memspy/attrib"
)

// DWARF expression opcodes that Locals understands.
const (
	opFbreg        = 0x91 // DW_OP_fbreg
	opCallFrameCFA = 0x9c // DW_OP_call_frame_cfa
)

// maxLocalSpan bounds the offsets and sizes of stack variables: anything
// larger is a bogus entry, not a frame.
const maxLocalSpan = 1 << 32

// frame collects the stack variables of one subprogram whose frame base is
// its canonical frame address.
type frame struct {
	entries []uint64 // link-time starts of the subprogram's address ranges
	vars    []frameVar
}

type frameVar struct {
	name string
	line int64 // DW_AT_decl_line, 0 when unknown
	off  int64 // from the CFA
	size int64
}

// newFrame returns the frame of a subprogram entry with address ranges rs,
// or nil when its variables cannot be placed relative to the CFA: its
// DW_AT_frame_base is not exactly DW_OP_call_frame_cfa (GCC's choice on
// x86-64; a frame base in a register such as rbp would need the CFA-to-
// register relation of every instruction) or it has no code.
func (bl *builder) newFrame(e *dwarf.Entry, rs [][2]uint64) *frame {
	fb, ok := e.Val(dwarf.AttrFrameBase).([]byte)
	if !ok || len(fb) != 1 || fb[0] != opCallFrameCFA {
		return nil
	}
	fr := &frame{}
	for _, rg := range rs {
		if rg[1] > rg[0] && bl.exec.contains(rg[0]) {
			fr.entries = append(fr.entries, rg[0])
		}
	}
	if len(fr.entries) == 0 {
		return nil
	}
	bl.frames = append(bl.frames, fr)
	return fr
}

// local records a variable or formal parameter of fr whose location is a
// single DW_OP_fbreg expression and whose type has a known, non-zero size.
func (bl *builder) local(e *dwarf.Entry, fr *frame) {
	loc, ok := e.Val(dwarf.AttrLocation).([]byte) // a location list is an offset, not bytes
	if !ok || len(loc) < 2 || loc[0] != opFbreg {
		return
	}
	off, n := sleb128(loc[1:])
	if n != len(loc)-1 || off <= -maxLocalSpan || off >= maxLocalSpan {
		return
	}
	v := bl.res.variable(e)
	if v.name == "" || !v.hasType {
		return
	}
	size := bl.types.size(typeRef{v.typ, true}, int64(bl.addrSize), 0)
	if size <= 0 || size > maxLocalSpan {
		return
	}
	fr.vars = append(fr.vars, frameVar{v.name, v.line, off, size})
}

// sleb128 decodes a signed LEB128 number at the start of b and returns it
// and its length, which is 0 when b holds no complete number of at most 64
// bits.
func sleb128(b []byte) (int64, int) {
	var v int64
	var shift uint
	for i, c := range b {
		if i == 10 {
			break
		}
		v |= int64(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v, i + 1
		}
	}
	return 0, 0
}

// buildLocals turns the collected frames into Binary.locals.
func (bl *builder) buildLocals() {
	for _, fr := range bl.frames {
		ls := frameLocals(fr.vars)
		if len(ls) == 0 {
			continue
		}
		if bl.b.locals == nil {
			bl.b.locals = map[uint64][]attrib.Local{}
		}
		for _, entry := range fr.entries {
			if _, ok := bl.b.locals[entry]; !ok {
				bl.b.locals[entry] = ls
			}
		}
	}
	bl.frames = nil
}

// frameLocals names, sorts and merges the variables of one frame. A name
// at one offset is kept once (the largest size); a name at several offsets
// (variables of different blocks, or of several inlined copies of one
// function) becomes "name@line" from each declaration, with "#1", "#2", …
// added in offset order where that still repeats. Variables that overlap
// (disjoint scopes sharing a stack slot) become one Local spanning them,
// named "a|b".
func frameLocals(vs []frameVar) []attrib.Local {
	slices.SortFunc(vs, func(a, b frameVar) int {
		return cmp.Or(cmp.Compare(a.name, b.name), cmp.Compare(a.off, b.off), cmp.Compare(b.size, a.size), cmp.Compare(a.line, b.line))
	})
	vs = slices.CompactFunc(vs, func(a, b frameVar) bool { return a.name == b.name && a.off == b.off })
	ls := make([]attrib.Local, len(vs))
	for i := 0; i < len(vs); {
		j := i + 1
		for j < len(vs) && vs[j].name == vs[i].name {
			j++
		}
		for k := i; k < j; k++ {
			ls[k] = attrib.Local{Name: vs[k].name, Offset: vs[k].off, Size: uint64(vs[k].size)}
			if j-i > 1 {
				ls[k].Name += "@" + strconv.FormatInt(vs[k].line, 10)
			}
		}
		i = j
	}
	slices.SortFunc(ls, func(a, b attrib.Local) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Offset, b.Offset))
	})
	for i := 0; i < len(ls); {
		j := i + 1
		for j < len(ls) && ls[j].Name == ls[i].Name {
			j++
		}
		if j-i > 1 {
			for k := i; k < j; k++ {
				ls[k].Name += "#" + strconv.Itoa(k-i+1)
			}
		}
		i = j
	}
	slices.SortFunc(ls, func(a, b attrib.Local) int {
		return cmp.Or(cmp.Compare(a.Offset, b.Offset), cmp.Compare(b.Size, a.Size), cmp.Compare(a.Name, b.Name))
	})
	out := ls[:0]
	for _, l := range ls {
		if n := len(out); n > 0 && l.Offset < out[n-1].Offset+int64(out[n-1].Size) {
			last := &out[n-1]
			last.Name += "|" + l.Name
			last.Size = uint64(max(last.Offset+int64(last.Size), l.Offset+int64(l.Size)) - last.Offset)
			continue
		}
		out = append(out, l)
	}
	return slices.Clip(out)
}

// Locals returns the variables and parameters of the function entered at
// link-time address entry (the start of any of its address ranges) that
// live at fixed offsets from its canonical frame address (CFA: the stack
// pointer before the call pushed the return address; on x86-64 the stack
// pointer at entry plus 8), sorted by Offset and not overlapping. Locals
// have negative offsets; a parameter passed in memory has a non-negative
// one. They include the variables of nested blocks and of inlined
// functions. The slice is shared; do not modify it.
//
// Only what DWARF places at a single DW_OP_fbreg offset for the whole
// scope counts, and only in functions whose frame base is
// DW_OP_call_frame_cfa (GCC's); optimized code keeps most scalars in
// registers or location lists, which are left out. Locals returns nil for
// a function with no such variables, or without DWARF.
func (b *Binary) Locals(entry uint64) []attrib.Local { return b.locals[entry] }
