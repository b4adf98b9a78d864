package main

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memspy/memspy/profile"
)

// binaryProg has a global array big enough to be an object of its own and
// a function sweeping it.
const binaryProg = `double grid[4096];
__attribute__((noipa)) double sweep(void)
{
	double s = 0;
	for (int i = 0; i < 4096; i++)
		s += grid[i];
	return s;
}
int main(void) { return sweep() > 1; }
`

// memspy sim --where --binary names the functions of a trace without call
// events by the PCs of its references, and its globals from the binary.
func TestSimBinaryNames(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("needs gcc")
	}
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "prog.c"), filepath.Join(dir, "prog")
	if err := os.WriteFile(src, []byte(binaryProg), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-O1", "-g", "-no-pie", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.Symbols()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	addr := map[string]uint64{}
	for _, s := range syms {
		addr[s.Name] = s.Value
	}
	if addr["grid"] == 0 || addr["sweep"] == 0 {
		t.Fatalf("symbols grid and sweep not found")
	}
	// A pinatrace of sweep reading grid twice, and main writing
	// somewhere no object holds.
	var tr bytes.Buffer
	for range 2 {
		for i := uint64(0); i < 4096; i++ {
			fmt.Fprintf(&tr, "%#x: R %#x\n", addr["sweep"]+4, addr["grid"]+8*i)
		}
	}
	fmt.Fprintf(&tr, "%#x: W 0x7ff000\n", addr["main"]+4)
	tracePath, jsonPath := filepath.Join(dir, "prog.pinatrace"), filepath.Join(dir, "p.json")
	if err := os.WriteFile(tracePath, tr.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	root := newRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs([]string{"sim", tracePath, "--where", "--binary", bin, "--cache", "L1D:size=4K,assoc=1,line=64", "--json", jsonPath})
	if err := root.Execute(); err != nil {
		t.Fatalf("memspy sim: %v\n%s", err, out.String())
	}
	p, err := profile.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var pairs []string
	for _, pr := range p.Pairs {
		pairs = append(pairs, fmt.Sprintf("%s×%s:%d/%d", pr.Function, pr.Object, pr.Accesses, pr.Misses))
	}
	// 4096 reads of 512 lines, twice: the 32 KiB grid does not fit.
	want := []string{"sweep×grid:8192/1024", "main×<other>:1/1"}
	if strings.Join(pairs, " ") != strings.Join(want, " ") {
		t.Errorf("pairs %v, want %v", pairs, want)
	}
	if len(p.References) != 2 || p.References[0].File != src || p.References[0].Function != "sweep" {
		t.Errorf("references %+v", p.References)
	}

	// Without --where, --binary is an error.
	root = newRoot()
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs([]string{"sim", tracePath, "--binary", bin})
	if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "--where") {
		t.Errorf("--binary without --where: %v", err)
	}
}
