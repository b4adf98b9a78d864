package symbols

import (
	"debug/elf"
	"testing"
)

// The C library's regions: its data, bss, read-only data, GOT and
// dynamic-linking tables, in order, not overlapping, each within the
// sections that make it and outside the executable ones.
func TestRegionsLibc(t *testing.T) {
	const path = "/lib/x86_64-linux-gnu/libc.so.6"
	b, err := Open(path)
	if err != nil {
		t.Skipf("%s: %v", path, err)
	}
	ef, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	seen := map[string]bool{}
	var end uint64
	for _, r := range b.Regions() {
		seen[r.Name] = true
		if r.Addr < end || r.Size == 0 {
			t.Errorf("region %+v overlaps the one before or is empty", r)
		}
		end = r.Addr + r.Size
		for _, s := range ef.Sections {
			if s.Flags&elf.SHF_EXECINSTR != 0 && s.Addr < end && s.Addr+s.Size > r.Addr {
				t.Errorf("region %+v overlaps code section %s", r, s.Name)
			}
		}
	}
	for _, name := range []string{"data", "bss", "rodata", "got", "dynamic linking"} {
		if !seen[name] {
			t.Errorf("no %s region in %+v", name, b.Regions())
		}
	}
	if bss := ef.Section(".bss"); bss != nil {
		found := false
		for _, r := range b.Regions() {
			found = found || r.Name == "bss" && r.Addr <= bss.Addr && bss.Addr+bss.Size <= r.Addr+r.Size
		}
		if !found {
			t.Errorf(".bss %#x+%#x in no bss region: %+v", bss.Addr, bss.Size, b.Regions())
		}
	}
}
