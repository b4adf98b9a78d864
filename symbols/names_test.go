package symbols

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Names says where a binary's names come from: DWARF with -g, the symbol
// table without, the dynamic symbols alone once stripped.
func TestNames(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("needs gcc")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "p.c")
	if err := os.WriteFile(src, []byte("int g = 1; int main(void) { return g; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	build := func(name string, args ...string) string {
		exe := filepath.Join(dir, name)
		if out, err := exec.Command("gcc", append(args, "-o", exe, src)...).CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, out)
		}
		return exe
	}
	stripped := build("stripped", "-O1")
	if out, err := exec.Command("strip", stripped).CombinedOutput(); err != nil {
		t.Skipf("strip: %v\n%s", err, out)
	}
	for path, want := range map[string]Names{
		build("debug", "-O1", "-g"): FromDWARF,
		build("plain", "-O1"):       FromSymtab,
		stripped:                    FromDynsym,
	} {
		b, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := b.Names(); got != want {
			t.Errorf("%s: %v, want %v", filepath.Base(path), got, want)
		}
	}
}
