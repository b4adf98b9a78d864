package symbols

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// goTypesProgram prints the run-time addresses of the descriptors of some
// of its types, each with the name Go gives the type: those of a slice, a
// struct, a pointer, a map and the map's slot groups (from the map type's
// Group field, checked against its GroupSize). It is built as a non-PIE
// executable, so run-time addresses are link-time addresses.
const goTypesProgram = `package main

import (
	"fmt"
	"unsafe"
)

type node struct {
	next *node
	val  [5]int64
}

// typeOf returns the address of the descriptor of x's dynamic type.
func typeOf(x any) uintptr { return uintptr((*[2]unsafe.Pointer)(unsafe.Pointer(&x))[0]) }

func main() {
	fmt.Printf("%#x []int\n", typeOf([]int(nil)))
	fmt.Printf("%#x main.node\n", typeOf(node{}))
	fmt.Printf("%#x *main.node\n", typeOf(&node{}))
	fmt.Printf("%#x map[string]int\n", typeOf(map[string]int(nil)))
	// internal/abi.MapType: the Type (48 bytes), Key, Elem, Group, Hasher,
	// GroupSize; the group's own Size_ comes first in its Type.
	mt := (*[11]uintptr)(unsafe.Pointer(typeOf(map[string]int(nil))))
	if group := mt[8]; group != 0 && *(*uintptr)(unsafe.Pointer(group)) == mt[10] {
		fmt.Printf("%#x group\n", group)
	}
}
`

// buildGoTypes builds goTypesProgram and returns its path and what it
// prints: descriptor addresses and the names of their types.
func buildGoTypes(t *testing.T) (string, map[uint64]string) {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no Go toolchain:", err)
	}
	dir := t.TempDir()
	for name, text := range map[string]string{"go.mod": "module gotypes\n\ngo 1.21\n", "main.go": goTypesProgram} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exe := filepath.Join(dir, "gotypes")
	build := exec.Command(gobin, "build", "-buildmode=exe", "-o", exe, ".")
	build.Dir, build.Env = dir, append(os.Environ(), "GOTOOLCHAIN=local", "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(exe).Output()
	if err != nil {
		t.Fatal(err)
	}
	types := map[uint64]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		addr, name, _ := strings.Cut(sc.Text(), " ")
		a, err := strconv.ParseUint(addr, 0, 64)
		if err != nil {
			t.Fatalf("bad line %q", sc.Text())
		}
		types[a] = name
	}
	return exe, types
}

// The names of a Go binary's type descriptors are decoded as Go names
// them; nothing else reads as a type.
func TestGoType(t *testing.T) {
	exe, types := buildGoTypes(t)
	b, err := Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	var group uint64
	for a, want := range types {
		got, ok := b.GoType(a)
		if want == "group" {
			group = a
			if !ok || !strings.HasSuffix(got, "map.group[string]int") {
				t.Errorf("GoType(%#x) = %q, %v; want the slot group of map[string]int", a, got, ok)
			}
			continue
		}
		if !ok || got != want {
			t.Errorf("GoType(%#x) = %q, %v; want %q", a, got, ok, want)
		}
	}
	if group == 0 {
		t.Errorf("the program found no slot group type (printed %v)", types)
	}
	// Inside a descriptor, or in the text: no type.
	for a := range types {
		for _, off := range []uint64{8, 24, 1} {
			if name, ok := b.GoType(a + off); ok {
				t.Errorf("GoType(%#x) = %q, a type inside a descriptor", a+off, name)
			}
		}
	}
	if name, ok := b.GoType(b.TextAddr()); ok {
		t.Errorf("GoType(.text) = %q", name)
	}
	// The same at a bias, through a Space.
	var s Space
	const bias = 0x10000000
	s.Add(b, bias)
	for a, want := range types {
		if got, ok := s.GoType(a + bias); want != "group" && (!ok || got != want) {
			t.Errorf("Space.GoType(%#x) = %q, %v; want %q", a+bias, got, ok, want)
		}
	}
}

// A binary of a Go version whose layout is not known gives no types.
func TestGoTypeVersions(t *testing.T) {
	for v, want := range map[string]bool{
		"go1.26.8": true, "go1.17": true, "go1.21rc2": true, "go1.26.8 X:boringcrypto": true,
		"go1.16.15": false, "go1.27.0": false, "go1.27rc1": false, "devel go1.27-abcdef": false, "": false, "go2": false,
	} {
		if got := knownGoVersion(v); got != want {
			t.Errorf("knownGoVersion(%q) = %v, want %v", v, got, want)
		}
	}
}

// A truncated Go binary, or one whose type section is garbage, gives no
// type and never panics.
func TestGoTypeBadInput(t *testing.T) {
	exe, types := buildGoTypes(t)
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(exe)
	if err != nil || b.goTypes == nil {
		t.Fatalf("no types in %s: %v", exe, err)
	}
	// The file offsets of the descriptors.
	ef, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	var lo, hi int
	for _, s := range ef.Sections {
		if a := b.goTypes.start; a >= s.Addr && a < s.Addr+s.Size {
			lo = int(s.Offset + a - s.Addr)
			hi = lo + len(b.goTypes.data)
		}
	}
	if lo == 0 {
		t.Fatal("no section holds runtime.types")
	}
	open := func(what string, data []byte) {
		t.Helper()
		path := filepath.Join(t.TempDir(), "bad")
		if err := os.WriteFile(path, data, 0o755); err != nil {
			t.Fatal(err)
		}
		bad, err := Open(path)
		if err != nil {
			return // an error is fine; a panic or a wrong name is not
		}
		for a, want := range types {
			if got, ok := bad.GoType(a); ok && got != want && want != "group" {
				t.Errorf("%s: GoType(%#x) = %q, want %q or none", what, a, got, want)
			}
		}
	}
	for _, n := range []int{4096, (lo + hi) / 2, len(data) / 2, len(data) - 1} {
		open(fmt.Sprintf("cut at %d", n), data[:n])
	}
	zeroed := bytes.Clone(data)
	clear(zeroed[lo:hi])
	open("descriptors zeroed", zeroed)
	if bad, err := Open(exe); err == nil {
		bad.goTypes.data = zeroed[lo:hi]
		for a := range types {
			if name, ok := bad.GoType(a); ok {
				t.Errorf("zeroed descriptors: GoType(%#x) = %q", a, name)
			}
		}
	}
	// Garbage where the descriptors are: every address, no panic, and
	// only printable names.
	rng := rand.New(rand.NewPCG(5, 6))
	garbage := &goTypes{start: 0x1000, data: make([]byte, 1<<12)}
	for range 200 {
		for i := range garbage.data {
			garbage.data[i] = byte(rng.Uint32())
		}
		for a := uint64(0xff8); a < 0x1000+uint64(len(garbage.data))+16; a += 8 {
			if name, ok := garbage.name(a); ok && name == "" {
				t.Fatalf("an empty name at %#x", a)
			}
		}
	}
	var none *goTypes
	if _, ok := none.name(0x1000); ok {
		t.Error("a type from a binary without types")
	}
}
