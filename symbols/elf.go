package symbols

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// debugRoots are the directories searched for separate debug files.
var debugRoots = []string{"/usr/lib/debug"}

// load fills b from the ELF file ef.
func (b *Binary) load(ef *elf.File, findDebug bool) error {
	if s := ef.Section(".text"); s != nil && s.Type != elf.SHT_NULL {
		b.textAddr = s.Addr
	}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_LOAD && p.Memsz > 0 && p.Vaddr+p.Memsz > p.Vaddr {
			b.segs = append(b.segs, addrRange{p.Vaddr, p.Vaddr + p.Memsz})
		}
	}
	exec, alloc := sectionRanges(ef)
	b.plt = pltRanges(ef)
	b.regions = regions(ef)

	dwarfFile := ef
	if !hasDWARF(ef) && findDebug {
		if df, c, p := findDebugFile(ef, b.path); df != nil {
			defer c.Close()
			dwarfFile, b.debugPath = df, p
			if len(exec.r) == 0 {
				exec, alloc = sectionRanges(df)
			}
		}
	}
	if len(b.segs) == 0 {
		b.segs = append(b.segs, alloc.r...)
	}

	bld := newBuilder(b, exec, alloc)
	if hasDWARF(dwarfFile) {
		err := bld.readDWARF(dwarfFile)
		if err != nil && dwarfFile == ef {
			return fmt.Errorf("bad DWARF: %w", err)
		}
		if err != nil {
			// A bad separate debug file is not the binary's fault: fall
			// back to its symbol tables.
			b.debugPath = ""
			b.files, b.lines, b.inlNodes = b.files[:1], nil, nil
			bld = newBuilder(b, exec, alloc)
			dwarfFile = ef
		}
	}

	var syms []elf.Symbol
	add := func(s []elf.Symbol, err error) error {
		if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
			return fmt.Errorf("bad symbol table: %w", err)
		}
		syms = append(syms, s...)
		return nil
	}
	if err := add(ef.Symbols()); err != nil {
		return err
	}
	full := len(syms) > 0
	if dwarfFile != ef {
		if s, err := dwarfFile.Symbols(); err == nil {
			syms = append(syms, s...)
		}
	}
	mini := false
	if len(syms) == 0 {
		// A stripped binary's MiniDebugInfo; a bad one is as if absent
		// (the dynamic symbols remain, and Names says so).
		if s, err := miniDebugSymbols(ef); err == nil && len(s) > 0 {
			syms, mini = append(syms, s...), true
		}
	}
	dyn := len(syms)
	if err := add(ef.DynamicSymbols()); err != nil {
		return err
	}
	switch {
	case hasDWARF(dwarfFile):
		b.names = FromDWARF
	case full:
		b.names = FromSymtab
	case mini:
		b.names = FromMiniDebugInfo
	case len(syms) > dyn:
		b.names = FromDynsym
	default:
		b.names = FromNothing
	}
	syms = append(syms, pltSymbols(ef, syms)...)
	bld.finish(syms)
	b.goTypes = readGoTypes(ef, syms)
	return nil
}

// rangeSet is a small set of address ranges (ELF sections or segments).
type rangeSet struct{ r []addrRange }

// contains reports whether a is in the set; an empty set contains every
// address (nothing to filter with).
func (s rangeSet) contains(a uint64) bool {
	if len(s.r) == 0 {
		return true
	}
	for _, r := range s.r {
		if r.lo <= a && a < r.hi {
			return true
		}
	}
	return false
}

// end returns the end of the range containing a, or 0.
func (s rangeSet) end(a uint64) uint64 {
	for _, r := range s.r {
		if r.lo <= a && a < r.hi {
			return r.hi
		}
	}
	return 0
}

// sectionRanges returns the executable and the allocated (non-TLS) address
// ranges of ef, from its section headers or else its PT_LOAD segments.
func sectionRanges(ef *elf.File) (exec, alloc rangeSet) {
	for _, s := range ef.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 || s.Flags&elf.SHF_TLS != 0 || s.Size == 0 || s.Addr+s.Size < s.Addr {
			continue
		}
		r := addrRange{s.Addr, s.Addr + s.Size}
		alloc.r = append(alloc.r, r)
		if s.Flags&elf.SHF_EXECINSTR != 0 {
			exec.r = append(exec.r, r)
		}
	}
	if len(alloc.r) > 0 {
		return exec, alloc
	}
	for _, p := range ef.Progs {
		if p.Type != elf.PT_LOAD || p.Memsz == 0 || p.Vaddr+p.Memsz < p.Vaddr {
			continue
		}
		r := addrRange{p.Vaddr, p.Vaddr + p.Memsz}
		alloc.r = append(alloc.r, r)
		if p.Flags&elf.PF_X != 0 {
			exec.r = append(exec.r, r)
		}
	}
	return exec, alloc
}

// hasDWARF reports whether ef carries DWARF debugging information.
func hasDWARF(ef *elf.File) bool {
	for _, name := range []string{".debug_info", ".zdebug_info"} {
		if s := ef.Section(name); s != nil && s.Type != elf.SHT_NOBITS && s.Size > 0 {
			return true
		}
	}
	return false
}

// maxNoteSize bounds the note and debuglink sections read.
const maxNoteSize = 1 << 16

// buildID returns ef's GNU build ID, or nil.
func buildID(ef *elf.File) []byte {
	for _, s := range ef.Sections {
		if s.Type != elf.SHT_NOTE || s.Size > maxNoteSize {
			continue
		}
		data, err := s.Data()
		if err != nil {
			continue
		}
		if id := parseBuildID(data, ef.ByteOrder); id != nil {
			return id
		}
	}
	for _, p := range ef.Progs {
		if p.Type != elf.PT_NOTE || p.Filesz > maxNoteSize {
			continue
		}
		data := make([]byte, p.Filesz)
		if _, err := io.ReadFull(p.Open(), data); err != nil {
			continue
		}
		if id := parseBuildID(data, ef.ByteOrder); id != nil {
			return id
		}
	}
	return nil
}

// parseBuildID finds the NT_GNU_BUILD_ID note in a note section.
func parseBuildID(data []byte, order binary.ByteOrder) []byte {
	align := func(n uint64) uint64 { return (n + 3) &^ 3 }
	for len(data) >= 12 {
		namesz := uint64(order.Uint32(data))
		descsz := uint64(order.Uint32(data[4:]))
		typ := order.Uint32(data[8:])
		data = data[12:]
		if align(namesz) > uint64(len(data)) {
			return nil
		}
		name := data[:namesz]
		data = data[align(namesz):]
		if descsz > uint64(len(data)) {
			return nil
		}
		desc := data[:descsz]
		if typ == 3 && string(name) == "GNU\x00" && len(desc) > 1 {
			return desc
		}
		if align(descsz) > uint64(len(data)) {
			return nil
		}
		data = data[align(descsz):]
	}
	return nil
}

// findDebugFile looks for the separate debug file of ef (opened from path):
// by build ID under each debug root, then by .gnu_debuglink next to path, in
// its .debug directory and under each debug root. The file must carry DWARF
// and, when both have one, the same build ID.
func findDebugFile(ef *elf.File, path string) (*elf.File, io.Closer, string) {
	id := buildID(ef)
	var cands []string
	if len(id) > 1 {
		h := hex.EncodeToString(id)
		for _, root := range debugRoots {
			cands = append(cands, filepath.Join(root, ".build-id", h[:2], h[2:]+".debug"))
		}
	}
	if s := ef.Section(".gnu_debuglink"); s != nil && s.Size <= maxNoteSize {
		if data, err := s.Data(); err == nil {
			if i := bytes.IndexByte(data, 0); i > 0 {
				name := filepath.Base(string(data[:i]))
				dir := filepath.Dir(path)
				if abs, err := filepath.Abs(dir); err == nil {
					dir = abs
				}
				cands = append(cands, filepath.Join(dir, name), filepath.Join(dir, ".debug", name))
				for _, root := range debugRoots {
					cands = append(cands, filepath.Join(root, dir, name))
				}
				if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
					for _, root := range debugRoots {
						cands = append(cands, filepath.Join(root, real, name))
					}
				}
			}
		}
	}
	self, _ := os.Stat(path)
	for _, c := range cands {
		st, err := os.Stat(c)
		if err != nil || !st.Mode().IsRegular() || (self != nil && os.SameFile(self, st)) {
			continue
		}
		f, err := os.Open(c)
		if err != nil {
			continue
		}
		df, err := elf.NewFile(f)
		if err != nil || !hasDWARF(df) {
			f.Close()
			continue
		}
		if did := buildID(df); id != nil && did != nil && !bytes.Equal(id, did) {
			f.Close()
			continue
		}
		return df, f, c
	}
	return nil, nil, ""
}

// symRank orders symbols sharing an address: global before weak before
// local, then fewer leading underscores, then shorter, then by name.
func symRank(a, b elf.Symbol) bool {
	ba, bb := bindRank(elf.ST_BIND(a.Info)), bindRank(elf.ST_BIND(b.Info))
	if ba != bb {
		return ba < bb
	}
	ua := len(a.Name) - len(strings.TrimLeft(a.Name, "_"))
	ub := len(b.Name) - len(strings.TrimLeft(b.Name, "_"))
	if ua != ub {
		return ua < ub
	}
	if len(a.Name) != len(b.Name) {
		return len(a.Name) < len(b.Name)
	}
	return a.Name < b.Name
}

func bindRank(b elf.SymBind) int {
	switch b {
	case elf.STB_GLOBAL:
		return 0
	case elf.STB_WEAK:
		return 1
	}
	return 2
}
