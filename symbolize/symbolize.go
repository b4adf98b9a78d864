// Package symbolize names the code and data of a traced program for
// memspy's attribution. It learns the object files the program maps (the
// executable, ld.so, libc, Valgrind's preload objects, dlopen'ed modules),
// reads their ELF symbol tables and DWARF through package memspy/symbols,
// and answers in run-time addresses: which function, file and line an
// instruction belongs to ([Symbolizer.Code]), which global and static
// variables a module brings ([Symbolizer.Map]), what to call the heap
// blocks allocated through a call path ([Symbolizer.HeapName]), and which
// code only passes calls on (PLT entries, the dynamic linker's resolver:
// [Symbolizer.Via]).
//
// A [Symbolizer] satisfies the sim.Symbolizer interface.
package symbolize

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/memspy/memspy/attrib"
	"github.com/memspy/memspy/sim"
	"github.com/memspy/memspy/symbols"
)

// Symbolizer names code and data in the address space of one traced
// process. The zero value is not ready; use [New]. A Symbolizer is not safe
// for concurrent use: the simulator calls it from one goroutine.
type Symbolizer struct {
	modules map[string]*module // every path asked for, opened or not
	paths   []string           // the paths of modules, in the order first asked for
	errs    []error            // open failures, one per path
	live    []mapping          // current mappings, oldest first; no two overlap
	space   symbols.Space      // the live mappings

	lines map[fileLine]lineInfo // what a source line does with an allocation
	sigs  map[uint64]string     // full names of functions by run-time entry
}

// module is one object file, opened once.
type module struct {
	b    *symbols.Binary // nil when the file could not be opened
	err  error           // why it could not be opened
	segs [][2]uint64     // link-time ranges that Space.Add maps (Binary.Segments)
}

// mapping is a module loaded at a bias (run-time minus link-time address).
type mapping struct {
	m    *module
	bias uint64
}

// New returns a Symbolizer with nothing mapped.
func New() *Symbolizer {
	return &Symbolizer{
		modules: map[string]*module{},
		lines:   map[fileLine]lineInfo{},
		sigs:    map[uint64]string{},
	}
}

// Load maps the object file at path at its link-time addresses (bias 0),
// for traces that carry no map events. It is Map(path, 0), but returns the
// error that opening the file gave (also reported by [Symbolizer.Errors]);
// call Map(path, 0) afterwards for its variables, which is cheap.
func (s *Symbolizer) Load(path string) error {
	m, err := s.open(path)
	if err != nil {
		return err
	}
	s.add(m, 0)
	return nil
}

// Map tells that the object file at path was mapped with its .text section
// at run-time address textAddr (0: at its link-time addresses) and returns
// its global and static variables of non-zero size, at run-time addresses,
// and its data regions (attrib.Var.Region: "<bss>@libc.so.6", ...) for the
// addresses no variable covers.
//
// Each path is opened once; a file that cannot be opened (missing,
// deleted, not ELF) gives nil here and one error from [Symbolizer.Errors].
// A mapping that overlaps earlier ones replaces them: a module whose range
// another one now occupies has been unmapped (dlclose then dlopen), so it
// is forgotten whole. Mapping a module again where it already is changes
// nothing.
func (s *Symbolizer) Map(path string, textAddr uint64) []attrib.Var {
	m, err := s.open(path)
	if err != nil {
		return nil
	}
	var bias uint64
	if textAddr != 0 {
		bias = textAddr - m.b.TextAddr()
	}
	s.add(m, bias)
	var vars []attrib.Var
	for _, g := range m.b.Globals() {
		if g.Size == 0 {
			continue
		}
		vars = append(vars, attrib.Var{Name: g.Name, Addr: g.Addr + bias, Size: g.Size})
	}
	base := filepath.Base(path)
	for _, r := range m.b.Regions() {
		vars = append(vars, attrib.Var{Name: "<" + r.Name + ">@" + base, Addr: r.Addr + bias, Size: r.Size, Region: true})
	}
	return vars
}

// Undebugged returns the object files opened without debugging
// information, in the order first mapped, each as its base name and where
// its names came from instead ("python3.11 (dynamic symbols only)"):
// their code has functions at best, no source lines, and their data no
// variables.
func (s *Symbolizer) Undebugged() []string {
	var out []string
	for _, path := range s.paths {
		if strings.HasPrefix(filepath.Base(path), "vgpreload_") {
			continue // Valgrind's and memspy's preloads: not the program's
		}
		if m := s.modules[path]; m.b != nil && m.b.Names() != symbols.FromDWARF {
			out = append(out, fmt.Sprintf("%s (%s)", filepath.Base(path), m.b.Names()))
		}
	}
	return out
}

// Errors returns one error for each object file that could not be opened,
// saying which file and why, in the order they were first mapped.
func (s *Symbolizer) Errors() []error {
	return append([]error(nil), s.errs...)
}

// Code describes the instruction at run-time address pc: the function
// containing it (the outermost one when inlined), its run-time entry and
// its full C++ name, the file, line and column, and the object file.
// Fields stay empty when unknown; an address in no mapped module gives
// the zero Source.
func (s *Symbolizer) Code(pc uint64) sim.Source {
	b, _, ok := s.space.Binary(pc)
	if !ok {
		return sim.Source{}
	}
	src := sim.Source{Module: b.Path()}
	if name, entry, _, ok := s.space.Func(pc); ok {
		src.Func, src.Entry = name, entry
		sig, ok := s.sigs[entry]
		if !ok {
			sig = s.space.Signature(pc)
			s.sigs[entry] = sig
		}
		src.Signature = sig
	}
	if file, line, col, ok := s.space.LineCol(pc); ok {
		src.File, src.Line, src.Column = file, line, col
	}
	return src
}

// Place names run-time address pc by the object file mapped there and the
// address's link-time address in that file: "libc.so.6+0x9caa4". That is
// the address objdump -d, nm and addr2line -e show and take for the file:
// for a shared library or a PIE, pc's offset from the load base, as
// glibc's backtrace_symbols prints it ("libc.so.6(+0x9caa4)"); for a
// non-PIE executable, pc itself. It names code that no symbol covers,
// such as the static functions of a stripped library. ok is false when no
// mapped module holds pc.
func (s *Symbolizer) Place(pc uint64) (name string, ok bool) {
	b, bias, ok := s.space.Binary(pc)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("%s+%#x", filepath.Base(b.Path()), pc-bias), true
}

// resolverPrefixes begin the names of the dynamic linker's lazy-binding
// resolvers (glibc's _dl_runtime_resolve_xsavec, _xsave and _fxsave, and
// the _dl_runtime_profile_* of LD_AUDIT), which a PLT reaches on a
// function's first call and which go on to the function once bound.
var resolverPrefixes = []string{"_dl_runtime_resolve", "_dl_runtime_profile"}

// Via says how the code at run-time address pc passes calls on, so that
// a call through a PLT is attributed to the function it reaches: a PLT
// section's code is attrib.Stub, with the section's range; the dynamic
// linker's lazy-binding resolver, known by its name (ld.so's symbols come
// from its separate debug file, libc6-dbg on Debian), is attrib.Resolver,
// with its range; other code is attrib.Direct, with the range of the
// function holding pc (zero when unknown).
func (s *Symbolizer) Via(pc uint64) (v attrib.Via, lo, hi uint64) {
	if lo, hi, ok := s.space.PLT(pc); ok {
		return attrib.Stub, lo, hi
	}
	name, entry, end, ok := s.space.Func(pc)
	if !ok {
		return attrib.Direct, 0, 0
	}
	for _, p := range resolverPrefixes {
		if strings.HasPrefix(name, p) {
			return attrib.Resolver, entry, end
		}
	}
	return attrib.Direct, entry, end
}

// open returns the module of path, opening it on first use. A failure is
// recorded once and returned again on every call.
func (s *Symbolizer) open(path string) (*module, error) {
	if m, ok := s.modules[path]; ok {
		return m, m.err
	}
	m := &module{}
	s.modules[path] = m
	s.paths = append(s.paths, path)
	b, err := opened.open(path)
	if err != nil {
		m.err = err
		s.errs = append(s.errs, err)
		return m, err
	}
	m.b, m.segs = b, b.Segments()
	return m, nil
}

// add maps m at bias, dropping the mappings it overlaps. symbols.Space has
// no way to remove a mapping, and where two overlap it answers from the
// one with the greater start, not the newer; so after an overlap the Space
// is rebuilt from the mappings that remain.
func (s *Symbolizer) add(m *module, bias uint64) {
	nm := mapping{m, bias}
	for _, l := range s.live {
		if l == nm {
			return
		}
	}
	kept := make([]mapping, 0, len(s.live)+1)
	for _, l := range s.live {
		if !overlap(l, nm) {
			kept = append(kept, l)
		}
	}
	if len(kept) == len(s.live) {
		s.live = append(kept, nm)
		s.space.Add(m.b, bias)
		return
	}
	s.live = append(kept, nm)
	s.space = symbols.Space{}
	clear(s.sigs) // entries of the modules dropped
	for _, l := range s.live {
		s.space.Add(l.m.b, l.bias)
	}
}

// binaries are the object files opened, shared by every Symbolizer of the
// process: a Binary is read-only once opened, and the programs of a traced
// process tree (memspy run follows forks and execs, one Symbolizer each)
// map the same libraries again and again. A file is the same while its
// device, inode, size and modification time are.
type binaries struct {
	mu    sync.Mutex
	files map[fileID]*openedFile
}

// fileID identifies a file's contents.
type fileID struct {
	path       string
	dev, ino   uint64
	size, time int64
}

// openedFile is a file opened once: the others asking wait for it.
type openedFile struct {
	done chan struct{}
	b    *symbols.Binary
	err  error
}

var opened = binaries{files: map[fileID]*openedFile{}}

// open returns the Binary of path, opening it on first use; a file that
// cannot be stat'ed is opened each time (and fails then, saying why).
func (c *binaries) open(path string) (*symbols.Binary, error) {
	fi, err := os.Stat(path)
	st, ok := sysStat(fi)
	if err != nil || !ok {
		return symbols.Open(path)
	}
	id := fileID{path: path, dev: st.dev, ino: st.ino, size: fi.Size(), time: fi.ModTime().UnixNano()}
	c.mu.Lock()
	f, ok := c.files[id]
	if !ok {
		f = &openedFile{done: make(chan struct{})}
		c.files[id] = f
	}
	c.mu.Unlock()
	if ok {
		<-f.done
		return f.b, f.err
	}
	f.b, f.err = symbols.Open(path)
	close(f.done)
	return f.b, f.err
}

// devIno is a file's device and inode.
type devIno struct{ dev, ino uint64 }

// sysStat returns fi's device and inode, when the system gives them.
func sysStat(fi os.FileInfo) (devIno, bool) {
	if fi == nil {
		return devIno{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return devIno{}, false
	}
	return devIno{uint64(st.Dev), st.Ino}, true
}

// overlap reports whether two mappings share an address.
func overlap(a, b mapping) bool {
	for _, x := range a.m.segs {
		xlo, xhi := x[0]+a.bias, x[1]+a.bias
		if xhi <= xlo {
			continue // wrapped around: Space.Add skips it too
		}
		for _, y := range b.m.segs {
			ylo, yhi := y[0]+b.bias, y[1]+b.bias
			if yhi > ylo && xlo < yhi && ylo < xhi {
				return true
			}
		}
	}
	return false
}
