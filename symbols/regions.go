package symbols

import (
	"debug/elf"
	"sort"
)

// Region is a part of an object file's memory image that holds data no
// variable of the symbol tables covers: its writable data (".data",
// ".data.rel.ro", ...), its zeroed data (".bss"), its read-only data
// (".rodata", unwinding tables), its global offset table, or the tables
// the dynamic linker reads (symbols, strings, relocations).
type Region struct {
	Name       string // "data", "bss", "rodata", "got" or "dynamic linking"
	Addr, Size uint64 // link-time
}

// regionOf names the region an allocated, not executable, not TLS
// section belongs to.
func regionOf(s *elf.Section) string {
	switch s.Name {
	case ".got", ".got.plt":
		return "got"
	case ".bss":
		return "bss"
	case ".interp", ".note.gnu.property", ".note.gnu.build-id", ".note.ABI-tag", ".gnu.hash", ".hash",
		".dynsym", ".dynstr", ".gnu.version", ".gnu.version_d", ".gnu.version_r", ".rela.dyn", ".rela.plt",
		".rel.dyn", ".rel.plt", ".dynamic", ".relr.dyn":
		return "dynamic linking"
	}
	switch {
	case s.Type == elf.SHT_NOBITS:
		return "bss"
	case s.Flags&elf.SHF_WRITE != 0:
		return "data"
	}
	return "rodata"
}

// regions returns ef's data regions, adjacent sections of one region
// merged, sorted by address.
func regions(ef *elf.File) []Region {
	var rs []Region
	for _, s := range ef.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 || s.Flags&(elf.SHF_EXECINSTR|elf.SHF_TLS) != 0 || s.Size == 0 || s.Addr+s.Size < s.Addr {
			continue
		}
		rs = append(rs, Region{regionOf(s), s.Addr, s.Size})
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].Addr < rs[j].Addr })
	var out []Region
	for _, r := range rs {
		if n := len(out); n > 0 && out[n-1].Name == r.Name && out[n-1].Addr+out[n-1].Size >= r.Addr {
			out[n-1].Size = max(out[n-1].Size, r.Addr+r.Size-out[n-1].Addr)
			continue
		}
		if n := len(out); n > 0 && out[n-1].Addr+out[n-1].Size > r.Addr {
			continue // overlapping sections of different regions: keep the first
		}
		out = append(out, r)
	}
	return out
}

// Regions returns the object file's data regions (see Region), sorted by
// address, not overlapping. The slice is the Binary's own.
func (b *Binary) Regions() []Region { return b.regions }
