// Package symbols reads ELF symbol tables and DWARF debugging information
// and answers the questions memspy asks while attributing cache events to
// the program's own procedures and data structures: which function (and
// which inlined frames, file, line and column) a code address belongs to,
// which global or static variable contains a data address, and which
// variables a function keeps at fixed offsets in its stack frame.
//
// [Open] builds sorted tables once (functions by entry, inlined ranges,
// line-table rows, variables by address, stack variables by function), so
// every lookup is a binary search or a map lookup. A [Binary] answers in
// link-time addresses; a [Space] holds the binaries of one process at their
// load biases and answers in run-time addresses.
//
// When a file carries no DWARF, Open looks for a separate debug file the
// usual way (/usr/lib/debug/.build-id/xx/yyyy.debug from the GNU build ID,
// then the .gnu_debuglink name next to the file, in its .debug directory and
// under /usr/lib/debug) and uses its DWARF and full symbol table. A
// stripped file without one still has functions when it carries
// MiniDebugInfo (.gnu_debugdata: an xz-compressed symbol table).
//
// Static variables declared inside a function are named "func.var" (for
// example "bump.calls"), so that two functions' "static int n" stay apart.
// Names are the DWARF (or symbol table) names: C names as written, Go names
// package-qualified ("main.main", "runtime.mallocgc"); C++ and Rust names
// are their linkage (symbol) names demangled, qualified but without
// parameter lists or template arguments ("std::vector::push_back"), with
// the full form from [Binary.Signature]; Valgrind's replacement and
// wrapper functions ("_vgr10030ZU_VgSoSynsomalloc__Znwm") are named after
// the function they stand for ("operator new"). The PLT entries of an
// x86-64 file are functions named as objdump names them ("puts@plt"), and
// [Binary.PLT] tells the PLT sections' ranges.
package symbols

import (
	"debug/elf"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/memspy/memspy/attrib"
)

// Binary is the symbol and debugging information of one ELF file, in
// link-time addresses. It is immutable after Open and safe for concurrent
// use.
type Binary struct {
	path      string
	debugPath string // file that supplied DWARF, if not path
	textAddr  uint64
	segs      []addrRange // PT_LOAD segments (link-time)
	plt       []addrRange // PLT sections (link-time)

	funcs    ivals
	funcName []string // short names (demangle.go)
	funcLink []string // mangled names, "" for names that are not

	inlSegs  ivals   // elementary ranges with a constant inlined chain
	inlSegNd []int32 // innermost inline node for each segment
	inlNodes []inlNode

	lines []lineRow
	files []string // files[0] == ""

	globals []Global
	gvals   ivals
	regions []Region
	names   Names // where the names came from

	locals map[uint64][]attrib.Local // by link-time function range start

	goTypes *goTypes // a Go executable's type descriptors, nil for others
}

// Frame is one source-level frame at a code address.
type Frame struct {
	Func string // function name (see the package comment)
	File string // source file, joined with the compilation directory when DWARF gives it relative
	Line int    // 0 when unknown
}

// Global is a global or static variable with a fixed address.
type Global struct {
	Name string
	Addr uint64 // link-time address (run-time address from Space.Global)
	Size uint64
	Type string // C-like type name from DWARF, e.g. "double[512]", "struct node *", "int"; "" when only the symbol table knows it
	File string // declaring file, "" when unknown
	Line int    // declaring line, 0 when unknown
}

type addrRange struct{ lo, hi uint64 }

type inlNode struct {
	name     string
	callFile uint32 // index into Binary.files
	callLine int32
	parent   int32 // enclosing inline node, -1 for the outermost
}

type lineRow struct {
	addr uint64
	file uint32 // index into Binary.files
	line int32  // -1 marks the end of a sequence (no line information from addr on)
	col  uint16 // 0 when unknown or beyond 65535
}

// ivals is a table of half-open intervals sorted by start, with the running
// maximum of ends so that lookups also work when intervals nest or overlap.
type ivals struct {
	lo, hi, maxHi []uint64
}

// build fills maxHi; lo and hi must already be sorted by lo.
func (t *ivals) build() {
	t.maxHi = make([]uint64, len(t.hi))
	var m uint64
	for i, h := range t.hi {
		m = max(m, h)
		t.maxHi[i] = m
	}
}

// find returns the index of the interval containing x with the greatest
// start, or -1.
func (t *ivals) find(x uint64) int {
	i := sort.Search(len(t.lo), func(i int) bool { return t.lo[i] > x }) - 1
	for ; i >= 0 && t.maxHi[i] > x; i-- {
		if x < t.hi[i] {
			return i
		}
	}
	return -1
}

// Open reads the ELF file at path: its symbol tables and, when present, its
// DWARF (functions, inlined subroutines, line table, variables), or the DWARF
// of its separate debug file. A file without DWARF still gives functions and
// objects from .symtab and .dynsym. A file that is not ELF, or whose ELF or
// DWARF is malformed, gives an error naming the path.
func Open(path string) (*Binary, error) {
	return open(path, true)
}

func open(path string, findDebug bool) (b *Binary, err error) {
	defer func() {
		// The standard library's parsers are meant to return errors on bad
		// input; this guards the promise that Open never panics.
		if r := recover(); r != nil {
			b, err = nil, fmt.Errorf("symbols: %s: malformed file: %v", path, r)
		}
	}()
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("symbols: %w", err)
	}
	defer f.Close()
	var magic [4]byte
	if _, err := io.ReadFull(f, magic[:]); err != nil || string(magic[:]) != elf.ELFMAG {
		return nil, fmt.Errorf("symbols: %s: not an ELF file", path)
	}
	ef, err := elf.NewFile(f)
	if err != nil {
		return nil, fmt.Errorf("symbols: %s: bad ELF file: %w", path, err)
	}
	b = &Binary{path: path, files: []string{""}}
	if err := b.load(ef, findDebug); err != nil {
		return nil, fmt.Errorf("symbols: %s: %w", path, err)
	}
	return b, nil
}

// Names says where an object file's names come from.
type Names uint8

// The sources of names, best first.
const (
	FromDWARF         Names = iota // debugging information (its own, or a separate debug file): functions, lines, variables
	FromSymtab                     // the full symbol table: functions and globals, no lines or local variables
	FromMiniDebugInfo              // MiniDebugInfo (.gnu_debugdata) and the dynamic symbols: functions, exported variables
	FromDynsym                     // the dynamic symbol table only: exported functions and variables
	FromNothing                    // no symbols at all
)

var namesText = [...]string{"debugging information", "symbol table", "MiniDebugInfo symbols", "dynamic symbols only", "no symbols"}

// String describes the source.
func (n Names) String() string {
	if int(n) < len(namesText) {
		return namesText[n]
	}
	return fmt.Sprintf("names(%d)", uint8(n))
}

// Names says where the Binary's names come from.
func (b *Binary) Names() Names { return b.names }

// Path returns the path the Binary was opened from.
func (b *Binary) Path() string { return b.path }

// TextAddr returns the link-time address of the .text section (0 if none).
// The load bias of a mapped binary is its run-time .text address minus
// TextAddr.
func (b *Binary) TextAddr() uint64 { return b.textAddr }

// Segments returns the link-time ranges [lo, hi) that Space.Add maps: the
// PT_LOAD segments, or the allocated sections of a file without any.
func (b *Binary) Segments() [][2]uint64 {
	out := make([][2]uint64, len(b.segs))
	for i, r := range b.segs {
		out[i] = [2]uint64{r.lo, r.hi}
	}
	return out
}

// Func returns the function containing link-time address pc: its name, entry
// and end (exclusive) — the outermost, non-inlined function. For a function
// split into several address ranges (such as a hot part and a ".cold" part),
// entry and end bound the range that contains pc.
func (b *Binary) Func(pc uint64) (name string, entry, end uint64, ok bool) {
	i := b.funcs.find(pc)
	if i < 0 {
		return "", 0, 0, false
	}
	return b.funcName[i], b.funcs.lo[i], b.funcs.hi[i], true
}

// Signature returns the full demangled name of the C++ or Rust function
// containing link-time address pc, with its parameter types and template
// arguments ("std::vector<int, std::allocator<int> >::push_back(int
// const&)"), which tells apart functions that share the short name Func
// gives (overloads, instantiations of a template). It is "" for a
// function whose name is not mangled, and when no function holds pc.
func (b *Binary) Signature(pc uint64) string {
	i := b.funcs.find(pc)
	if i < 0 {
		return ""
	}
	return fullName(b.funcLink[i])
}

// Line returns the file and line of pc from the line table. ok is false when
// the line table does not cover pc or gives it no line.
func (b *Binary) Line(pc uint64) (file string, line int, ok bool) {
	file, line, _, ok = b.LineCol(pc)
	return file, line, ok
}

// LineCol is Line with the line table's column (1-based, 0 when the table
// gives none).
func (b *Binary) LineCol(pc uint64) (file string, line, col int, ok bool) {
	i := sort.Search(len(b.lines), func(i int) bool { return b.lines[i].addr > pc }) - 1
	if i < 0 || b.lines[i].line < 0 {
		return "", 0, 0, false
	}
	r := b.lines[i]
	return b.files[r.file], int(r.line), int(r.col), r.line > 0
}

// Frames returns the source frames at pc, innermost first: the inlined
// subroutines containing pc (each caller frame's line is the call site
// recorded in DWARF) and then the containing function. The innermost
// frame's file and line come from the line table. Frames returns nil when
// pc is in no known function and has no line.
func (b *Binary) Frames(pc uint64) []Frame {
	file, line, _ := b.Line(pc)
	fn, _, _, fnOK := b.Func(pc)
	var frames []Frame
	if s := b.inlSegs.find(pc); s >= 0 {
		for n := b.inlSegNd[s]; n >= 0; n = b.inlNodes[n].parent {
			nd := &b.inlNodes[n]
			frames = append(frames, Frame{Func: nd.name, File: file, Line: line})
			file, line = b.files[nd.callFile], int(nd.callLine)
		}
	}
	if !fnOK && frames == nil && file == "" && line == 0 {
		return nil
	}
	return append(frames, Frame{Func: fn, File: file, Line: line})
}

// Globals returns the global and static variables with a fixed address —
// DWARF variables located by DW_OP_addr (static locals named "func.var"),
// plus STT_OBJECT symbols no DWARF variable describes — sorted by Addr,
// without duplicates. The slice is shared; do not modify it.
func (b *Binary) Globals() []Global { return b.globals }

// Global returns the variable containing link-time address a (a
// zero-size variable contains only its own address).
func (b *Binary) Global(a uint64) (Global, bool) {
	i := b.gvals.find(a)
	if i < 0 {
		return Global{}, false
	}
	return b.globals[i], true
}

type funcRange struct {
	lo, hi     uint64
	name, link string // link: the mangled name, for Signature ("" when not mangled)
}
