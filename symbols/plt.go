package symbols

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
)

// pltSections are the sections whose entries jump through a GOT slot:
// the classic lazy .plt, the second PLT of IBT-enabled code (.plt.sec,
// whose entries the calls go to) and the entries of functions bound at
// load time through the GOT (.plt.got).
var pltSections = []string{".plt", ".plt.sec", ".plt.got"}

// maxPLTSize bounds the PLT and relocation sections read.
const maxPLTSize = 1 << 24

// pltSymbols synthesizes a function symbol "NAME@plt" for every PLT entry
// of an x86-64 file, as objdump -d names them. Each entry is decoded: an
// optional endbr64 and bnd prefix, then jmp *disp32(%rip), whose GOT slot
// a relocation names — R_X86_64_JUMP_SLOT and R_X86_64_GLOB_DAT by their
// dynamic symbol, R_X86_64_IRELATIVE by the GNU indirect function defined
// at its resolver (syms), else "*ABS*+0xADDEND" as objdump writes it.
// Decoding rather than counting entries keeps it right for the .plt and
// .plt.sec layouts alike, skips the .plt's header entry and the lazy
// entries of an IBT .plt (neither jumps through a named slot), and never
// reads past a section. Other machines, and files without a PLT, give
// nil.
func pltSymbols(ef *elf.File, syms []elf.Symbol) []elf.Symbol {
	if ef.Machine != elf.EM_X86_64 || ef.Class != elf.ELFCLASS64 {
		return nil
	}
	slots := gotSlots(ef, syms)
	if len(slots) == 0 {
		return nil
	}
	var out []elf.Symbol
	for i, s := range ef.Sections {
		if !isPLT(s) {
			continue
		}
		data, err := s.Data()
		if err != nil {
			continue
		}
		step := s.Entsize
		if step != 8 && step != 16 {
			step = 16
		}
		for off := uint64(0); off+step <= uint64(len(data)); off += step {
			slot, ok := jmpSlot(data[off:off+step], s.Addr+off)
			if !ok {
				continue
			}
			if name, ok := slots[slot]; ok {
				out = append(out, elf.Symbol{
					Name:    name + "@plt",
					Info:    elf.ST_INFO(elf.STB_LOCAL, elf.STT_FUNC),
					Section: elf.SectionIndex(i),
					Value:   s.Addr + off,
					Size:    step,
				})
			}
		}
	}
	return out
}

// pltRanges returns the link-time ranges of the PLT sections of ef, on
// any machine: the code a call through the PLT passes before the function
// it reaches (the entries, the lazy-binding entries and the header).
func pltRanges(ef *elf.File) []addrRange {
	var out []addrRange
	for _, s := range ef.Sections {
		if isPLT(s) && s.Addr+s.Size > s.Addr {
			out = append(out, addrRange{s.Addr, s.Addr + s.Size})
		}
	}
	return out
}

// PLT returns the link-time range [lo, hi) of the procedure linkage table
// section (.plt, .plt.sec or .plt.got) holding pc: code whose entries jump
// on to the function that a call to them reaches. ok is false when pc is
// in no PLT.
func (b *Binary) PLT(pc uint64) (lo, hi uint64, ok bool) {
	for _, r := range b.plt {
		if r.lo <= pc && pc < r.hi {
			return r.lo, r.hi, true
		}
	}
	return 0, 0, false
}

// isPLT reports whether s is a PLT section with contents to decode.
func isPLT(s *elf.Section) bool {
	if s.Type != elf.SHT_PROGBITS || s.Flags&elf.SHF_EXECINSTR == 0 || s.Size == 0 || s.Size > maxPLTSize {
		return false
	}
	for _, n := range pltSections {
		if s.Name == n {
			return true
		}
	}
	return false
}

// jmpSlot decodes the GOT slot that the PLT entry e, at address addr,
// jumps through: [endbr64] [bnd] jmp *disp32(%rip).
func jmpSlot(e []byte, addr uint64) (uint64, bool) {
	i := 0
	if len(e) >= 4 && e[0] == 0xf3 && e[1] == 0x0f && e[2] == 0x1e && e[3] == 0xfa {
		i = 4 // endbr64
	}
	if i < len(e) && e[i] == 0xf2 {
		i++ // bnd
	}
	if i+6 > len(e) || e[i] != 0xff || e[i+1] != 0x25 {
		return 0, false
	}
	disp := int32(binary.LittleEndian.Uint32(e[i+2:]))
	return addr + uint64(i+6) + uint64(int64(disp)), true
}

// gotSlots maps the GOT slots that relocations of ef fill to the name of
// the function they will hold (see pltSymbols).
func gotSlots(ef *elf.File, syms []elf.Symbol) map[uint64]string {
	dyn, _ := ef.DynamicSymbols() // index i of .dynsym is dyn[i-1]
	var ifuncs map[uint64]elf.Symbol
	slots := map[uint64]string{}
	for _, s := range ef.Sections {
		if s.Type != elf.SHT_RELA || s.Flags&elf.SHF_ALLOC == 0 || s.Size > maxPLTSize {
			continue
		}
		withDyn := int(s.Link) < len(ef.Sections) && ef.Sections[s.Link].Type == elf.SHT_DYNSYM
		data, err := s.Data()
		if err != nil {
			continue
		}
		for ; len(data) >= 24; data = data[24:] {
			slot := ef.ByteOrder.Uint64(data)
			info := ef.ByteOrder.Uint64(data[8:])
			addend := ef.ByteOrder.Uint64(data[16:])
			sym := elf.R_SYM64(info)
			switch elf.R_X86_64(elf.R_TYPE64(info)) {
			case elf.R_X86_64_JMP_SLOT, elf.R_X86_64_GLOB_DAT:
				if withDyn && sym >= 1 && int(sym) <= len(dyn) && dyn[sym-1].Name != "" {
					slots[slot] = dyn[sym-1].Name
				}
			case elf.R_X86_64_IRELATIVE:
				if ifuncs == nil {
					ifuncs = ifuncsByAddr(syms)
				}
				if f, ok := ifuncs[addend]; ok {
					slots[slot] = f.Name
				} else {
					slots[slot] = fmt.Sprintf("*ABS*+%#x", addend)
				}
			}
		}
	}
	return slots
}

// ifuncsByAddr returns the defined GNU indirect functions of syms by
// address (their resolver's), the best-ranked name for each.
func ifuncsByAddr(syms []elf.Symbol) map[uint64]elf.Symbol {
	m := map[uint64]elf.Symbol{}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_GNU_IFUNC || s.Name == "" || s.Section == elf.SHN_UNDEF {
			continue
		}
		if old, ok := m[s.Value]; !ok || symRank(s, old) {
			m[s.Value] = s
		}
	}
	return m
}
