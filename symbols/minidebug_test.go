package symbols

import (
	"bytes"
	"debug/elf"
	"os"
	"path/filepath"
	"testing"

	"github.com/ulikunitz/xz"
)

const miniProg = `#include <stdio.h>
__attribute__((noinline)) static int square(int x) { return x * x + 1; }
__attribute__((noinline)) static int cube(int x) { return x * square(x) - 3; }
__attribute__((noinline)) int exported(int x) { return cube(x) + square(x); }
int main(int argc, char **argv) { printf("%d\n", exported(argc)); return 0; }
`

// TestMiniDebugInfo: a stripped binary with Fedora's MiniDebugInfo (the
// functions' symbol table, xz-compressed in .gnu_debugdata) names its
// static functions as the unstripped binary does; a .gnu_debugdata that is
// not xz leaves the dynamic symbols, and opening does not fail.
func TestMiniDebugInfo(t *testing.T) {
	run := binutils(t)
	dir := t.TempDir()
	full := compile(t, dir, "prog", miniProg, "-O1", "-fpie", "-pie", "-rdynamic")
	ref, err := Open(full)
	if err != nil {
		t.Fatal(err)
	}
	// The functions the stripped binary keeps no symbol of.
	want := map[string]uint64{}
	ef, err := elf.Open(full)
	if err != nil {
		t.Fatal(err)
	}
	syms, err := ef.Symbols()
	ef.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if (s.Name == "square" || s.Name == "cube") && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			want[s.Name] = s.Value
		}
	}
	if len(want) != 2 {
		t.Fatalf("the unstripped binary's static functions: %v", want)
	}
	for name, addr := range want {
		if got, _, _, ok := ref.Func(addr + 1); !ok || got != name {
			t.Fatalf("unstripped: Func(%#x) = %q, want %q", addr+1, got, name)
		}
	}

	// Fedora's recipe: the symbol table alone, in an ELF file of its own,
	// xz-compressed into the stripped binary.
	mini := filepath.Join(dir, "mini")
	run("objcopy", "--only-keep-debug", full, mini)
	run("objcopy", "--strip-debug", "--remove-section", ".comment", mini)
	raw, err := os.ReadFile(mini)
	if err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	w, err := xz.NewWriter(&z)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(raw); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	stripped := func(name string, section []byte) *Binary {
		t.Helper()
		path := filepath.Join(dir, name)
		sec := path + ".gnu_debugdata"
		if err := os.WriteFile(sec, section, 0o644); err != nil {
			t.Fatal(err)
		}
		run("strip", "--strip-all", "-o", path, full)
		run("objcopy", "--add-section", ".gnu_debugdata="+sec, path)
		b, err := Open(path)
		if err != nil {
			t.Fatalf("Open(%s): %v", name, err)
		}
		return b
	}

	b := stripped("with-mini", z.Bytes())
	if b.Names() != FromMiniDebugInfo {
		t.Errorf("Names() = %v, want %v", b.Names(), FromMiniDebugInfo)
	}
	for name, addr := range want {
		if got, entry, _, ok := b.Func(addr + 1); !ok || got != name || entry != addr {
			t.Errorf("MiniDebugInfo: Func(%#x) = %q at %#x, %v; want %q at %#x", addr+1, got, entry, ok, name, addr)
		}
	}
	if _, entry, _, ok := ref.Func(want["cube"]); ok {
		if got, _, _, _ := b.Func(entry); got != "cube" {
			t.Errorf("MiniDebugInfo: cube's entry named %q", got)
		}
	}

	for _, c := range []struct {
		name string
		data []byte
	}{
		{"not-xz", []byte("this is not xz data")},
		{"xz-not-elf", func() []byte {
			var bad bytes.Buffer
			w, _ := xz.NewWriter(&bad)
			w.Write([]byte("\x7fELF but not really"))
			w.Close()
			return bad.Bytes()
		}()},
		{"cut", z.Bytes()[:z.Len()/2]},
	} {
		b := stripped(c.name, c.data)
		if b.Names() != FromDynsym {
			t.Errorf("%s: Names() = %v, want %v", c.name, b.Names(), FromDynsym)
		}
		if got, _, _, ok := b.Func(want["square"] + 1); ok && got == "square" {
			t.Errorf("%s: square named without a symbol table", c.name)
		}
		if _, err := miniDebugSymbols(mustELF(t, filepath.Join(dir, c.name))); err == nil {
			t.Errorf("%s: miniDebugSymbols gave no error", c.name)
		}
	}
}

// mustELF opens path as an ELF file, closed when the test ends.
func mustELF(t *testing.T, path string) *elf.File {
	t.Helper()
	ef, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ef.Close() })
	return ef
}
