package symbols

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// pltProg calls two library functions through the PLT.
const pltProg = `#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	puts(argv[0]);
	return getenv("MEMSPY_PLT_TEST") != NULL;
}
`

// TestPLT checks that PLT entries are named "NAME@plt" in both x86-64
// layouts: an IBT PLT, whose calls go to .plt.sec (entry i for relocation
// i of .rela.plt), and the classic lazy .plt (entry i+1 for relocation i,
// after the header entry), in a PIE and not; and that every call to a
// PLT entry objdump reports lands in the function objdump names.
func TestPLT(t *testing.T) {
	needGCC(t)
	cases := []struct {
		name, layout string
		flags        []string
	}{
		{"ibt", ".plt.sec", []string{"-fcf-protection", "-Wl,-z,ibtplt", "-Wl,-z,lazy"}},
		{"ibt-now", ".plt.sec", []string{"-fcf-protection", "-Wl,-z,ibtplt", "-Wl,-z,now"}},
		{"lazy", ".plt", []string{"-fcf-protection=none", "-Wl,-z,lazy"}},
		{"lazy-nopie", ".plt", []string{"-fcf-protection=none", "-no-pie", "-Wl,-z,lazy"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := compileOrSkip(t, pltProg, append([]string{"-O2"}, c.flags...)...)
			ef, err := elf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer ef.Close()
			if ef.Machine != elf.EM_X86_64 {
				t.Skip("not x86-64")
			}
			sec := ef.Section(c.layout)
			if sec == nil {
				t.Skipf("the linker made no %s for %v", c.layout, c.flags)
			}
			if c.layout == ".plt" && ef.Section(".plt.sec") != nil {
				t.Fatalf("%v made a .plt.sec", c.flags)
			}
			b := timedOpen(t, path)
			first := uint64(0) // .plt.sec entry of the first relocation
			if c.layout == ".plt" {
				first = 16 // after the header entry
			}
			names := jumpSlotNames(t, ef)
			if len(names) < 2 {
				t.Fatalf(".rela.plt names %v, want puts and getenv", names)
			}
			for i, name := range names {
				addr := sec.Addr + first + 16*uint64(i)
				fn, entry, end, ok := b.Func(addr + 3)
				if !ok || fn != name+"@plt" || entry != addr || end != addr+16 {
					t.Errorf("Func(%s entry %d + 3) = %q %#x %#x %v, want %s@plt %#x %#x", c.layout, i, fn, entry, end, ok, name, addr, addr+16)
				}
				if lo, hi, ok := b.PLT(addr + 3); !ok || lo != sec.Addr || hi != sec.Addr+sec.Size {
					t.Errorf("PLT(%s entry %d + 3) = %#x %#x %v, want the section %#x %#x", c.layout, i, lo, hi, ok, sec.Addr, sec.Addr+sec.Size)
				}
			}
			hdr := ef.Section(".plt")
			if fn, _, _, ok := b.Func(hdr.Addr); ok && strings.HasSuffix(fn, "@plt") {
				t.Errorf("the .plt header entry is named %q", fn)
			}
			if lo, hi, ok := b.PLT(hdr.Addr); !ok || lo != hdr.Addr || hi != hdr.Addr+hdr.Size {
				t.Errorf("PLT(the .plt header) = %#x %#x %v, want %#x %#x", lo, hi, ok, hdr.Addr, hdr.Addr+hdr.Size)
			}
			main, _ := elfSym(t, path, "main")
			if _, _, ok := b.PLT(main); ok {
				t.Error("main is in a PLT")
			}
			if got := objdumpPLTCalls(t, path); got != nil {
				for _, want := range []string{"puts@plt", "getenv@plt"} {
					if _, ok := got[want]; !ok {
						t.Errorf("objdump shows no call to %s: %v", want, got)
					}
				}
				for want, target := range got {
					if fn, entry, _, ok := b.Func(target); !ok || fn != want || entry != target {
						t.Errorf("call to %#x <%s>: Func = %q %#x %v", target, want, fn, entry, ok)
					}
				}
			}
		})
	}
}

// TestPLTGot checks the entries of .plt.got, which jump through a GOT
// slot filled at load time (R_X86_64_GLOB_DAT), as a PIE's
// __cxa_finalize is called.
func TestPLTGot(t *testing.T) {
	needGCC(t)
	path := compileOrSkip(t, pltProg, "-O2", "-fpie", "-pie")
	ef, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	s := ef.Section(".plt.got")
	if s == nil || ef.Machine != elf.EM_X86_64 {
		t.Skip("no .plt.got")
	}
	b := timedOpen(t, path)
	if fn, entry, _, ok := b.Func(s.Addr); !ok || fn != "__cxa_finalize@plt" || entry != s.Addr {
		t.Errorf("Func(.plt.got) = %q %#x %v, want __cxa_finalize@plt", fn, entry, ok)
	}
	if lo, hi, ok := b.PLT(s.Addr); !ok || lo != s.Addr || hi != s.Addr+s.Size {
		t.Errorf("PLT(.plt.got) = %#x %#x %v, want %#x %#x", lo, hi, ok, s.Addr, s.Addr+s.Size)
	}
}

// TestPLTOtherMachine checks that a file of another machine gets no PLT
// names and no error: the x86-64 program with its header saying AArch64.
func TestPLTOtherMachine(t *testing.T) {
	needGCC(t)
	path := compileOrSkip(t, pltProg, "-O2", "-fcf-protection=none", "-Wl,-z,lazy")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if elf.Machine(binary.LittleEndian.Uint16(data[18:])) != elf.EM_X86_64 {
		t.Skip("not x86-64")
	}
	binary.LittleEndian.PutUint16(data[18:], uint16(elf.EM_AARCH64))
	other := filepath.Join(t.TempDir(), "other")
	if err := os.WriteFile(other, data, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := Open(other)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range b.funcName {
		if strings.HasSuffix(name, "@plt") {
			t.Errorf("AArch64 file has PLT name %q", name)
		}
	}
	main, _ := elfSym(t, path, "main")
	if fn, _, _, ok := b.Func(main); !ok || fn != "main" {
		t.Errorf("Func(main) = %q %v", fn, ok)
	}
}

// compileOrSkip builds src with gcc and flags, skipping the test when gcc
// rejects the flags (an older gcc or linker).
func compileOrSkip(t *testing.T, src string, flags ...string) string {
	t.Helper()
	dir := t.TempDir()
	cfile := filepath.Join(dir, "prog.c")
	if err := os.WriteFile(cfile, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "prog")
	args := append(append([]string{}, flags...), "-o", out, cfile)
	if msg, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Skipf("gcc %v: %v\n%s", args, err, msg)
	}
	return out
}

// jumpSlotNames returns the symbol names of .rela.plt's R_X86_64_JUMP_SLOT
// relocations, in order, read independently of the package.
func jumpSlotNames(t *testing.T, ef *elf.File) []string {
	t.Helper()
	s := ef.Section(".rela.plt")
	if s == nil {
		t.Fatal("no .rela.plt")
	}
	data, err := s.Data()
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := ef.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for ; len(data) >= 24; data = data[24:] {
		info := binary.LittleEndian.Uint64(data[8:])
		if elf.R_X86_64(elf.R_TYPE64(info)) == elf.R_X86_64_JMP_SLOT {
			names = append(names, dyn[elf.R_SYM64(info)-1].Name)
		}
	}
	return names
}

// objdumpCall matches a call to a PLT entry in objdump -d output.
var objdumpCall = regexp.MustCompile(`\scall\s+([0-9a-f]+) <([^>+]+@plt)>`)

// objdumpPLTCalls returns the targets of the calls to PLT entries in
// path's code by objdump's name for them, or nil without objdump.
func objdumpPLTCalls(t *testing.T, path string) map[string]uint64 {
	t.Helper()
	out, err := exec.Command("objdump", "-d", "--no-show-raw-insn", path).Output()
	if err != nil {
		t.Logf("objdump: %v", err)
		return nil
	}
	calls := map[string]uint64{}
	for _, m := range objdumpCall.FindAllStringSubmatch(string(out), -1) {
		a, err := strconv.ParseUint(m[1], 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		calls[m[2]] = a
	}
	return calls
}
