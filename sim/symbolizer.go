package sim

import "github.com/memspy/memspy/attrib"

// Symbolizer names the code and data that attribution finds. It learns the
// object files the traced program maps and answers in run-time addresses.
type Symbolizer interface {
	// Map tells that the object file at path was mapped with its .text
	// section at run-time address textAddr (textAddr 0: at its link-time
	// addresses) and returns its global and static variables, and the
	// regions of its image (attrib.Var.Region), at run-time addresses.
	Map(path string, textAddr uint64) []attrib.Var
	// Code describes the instruction at run-time address pc.
	Code(pc uint64) Source
	// HeapName names the heap blocks allocated through a call path of
	// return addresses, innermost first (the allocation routine's own
	// frames removed), as the type whose descriptor is at run-time
	// address typ (Go's; 0: unknown). ok is false when nothing is known
	// about the call path.
	HeapName(site []uint64, typ uint64) (h HeapSite, ok bool)
	// Locals returns the variables kept at fixed offsets from the frame of
	// the function entered at run-time address entry, sorted by offset
	// (nil when unknown).
	Locals(entry uint64) []attrib.Local
	// Place names the code at run-time address pc by its module and
	// link-time address ("libc.so.6+0x9caa4"), for code in no known
	// function; ok is false when no mapped module holds pc.
	Place(pc uint64) (name string, ok bool)
	// Via says how the code at run-time address pc passes calls on (the
	// attrib.Linkage that follows calls through PLTs): a PLT's code
	// (attrib.Stub), the dynamic linker's lazy-binding resolver
	// (attrib.Resolver) or a function's (attrib.Direct), with the range
	// [lo, hi) of run-time addresses around pc that do so alike (the PLT
	// section, the function; lo = hi = 0 when unknown).
	Via(pc uint64) (v attrib.Via, lo, hi uint64)
}

// Source is what a Symbolizer knows about a code address. Empty fields
// are unknown.
type Source struct {
	Func   string // the function containing it (the outermost, if inlined); C++ names demangled, without parameters
	Entry  uint64 // that function's entry
	File   string
	Line   int
	Column int    // the line table's column, 0 when unknown
	Module string // the object file's path
	// Signature is the function's full name where Func leaves out what
	// tells functions apart: a C++ function's, demangled with its
	// parameter types and template arguments.
	Signature string
}

// HeapSite is what a Symbolizer says of the heap blocks allocated through
// one call path.
type HeapSite struct {
	// Name is short: the variable that receives the pointer, e.g. "Y",
	// else "heap@file:line"; with a type, "v ([]int)", else "main.go:42
	// []int".
	Name string
	// Path is the call path, outermost first, one "func.line" per source
	// frame, so that Path and Name joined with dots make a unique full
	// name ("main.42.AllocMatrix.17.Y").
	Path []string
	// ByName says that Name stands for the blocks of every call path
	// given it, as one object: those of the Go runtime's and standard
	// library's own allocations (no frame in the program's code) and the
	// Go runtime's mappings, whose call paths tell the program nothing.
	ByName bool
	// At is the allocation's "file:line" in the program's own code: its
	// first frame with a line outside the allocator wrappers' library
	// headers and the Go runtime (or, when none is, its first frame with
	// a line); "" when no frame has one.
	At string
}
