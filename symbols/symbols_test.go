package symbols

import (
	"debug/dwarf"
	"debug/elf"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// testProg is compiled by the tests. Markers in comments name lines.
const testProg = `#include <stdio.h>
#include <stdlib.h>

double A[512];
static int counter;
struct node {
	struct node *next;
	long v;
} *head;
double M[4][8];
double (*pa)[512] = &A;
const char *msg = "hi";
typedef unsigned long ulong_t;
ulong_t total;
int (*handler)(int, char **);

static inline long square_sum(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += i * i * (long)A[i & 511]; /* BODY */
	return s;
}

int bump(void)
{
	static int calls; /* CALLS */
	calls++;
	return calls;
}

int main(int argc, char **argv)
{
	long n = argc * 100;
	for (int i = 0; i < 512; i++)
		A[i] = i;
	struct node *p = malloc(sizeof *p);
	p->next = head;
	head = p;
	long r = square_sum(n); /* CALL */
	counter += bump();
	total += (ulong_t)r;
	handler = main;
	printf("%ld %d %s %f\n", r, counter, msg, (*pa)[3] + M[1][2]);
	return 0;
}
`

const (
	libcPath = "/lib/x86_64-linux-gnu/libc.so.6"
	pieBias  = 0x555555554000
)

func needGCC(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
}

// compile builds src with gcc and the given flags into dir/name.
func compile(t testing.TB, dir, name, src string, flags ...string) string {
	t.Helper()
	cfile := filepath.Join(dir, "prog.c")
	if err := os.WriteFile(cfile, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name)
	args := append(append([]string{}, flags...), "-o", out, cfile)
	if msg, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %v: %v\n%s", args, err, msg)
	}
	return out
}

// lineOf returns the 1-based line of src holding marker.
func lineOf(t testing.TB, src, marker string) int {
	t.Helper()
	for i, l := range strings.Split(src, "\n") {
		if strings.Contains(l, marker) {
			return i + 1
		}
	}
	t.Fatalf("no line with %q", marker)
	return 0
}

// elfSym returns the value and size of a symbol, nm-style.
func elfSym(t testing.TB, path, name string) (uint64, uint64) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, _ := f.Symbols()
	dyn, _ := f.DynamicSymbols()
	for _, s := range append(syms, dyn...) {
		if s.Name == name && s.Value != 0 {
			return s.Value, s.Size
		}
	}
	t.Fatalf("%s: no symbol %s", path, name)
	return 0, 0
}

// testDWARF opens the DWARF data of path with the standard library alone,
// for checks independent of the package.
func testDWARF(t testing.TB, path string) *dwarf.Data {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	d, err := f.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// lineAddrs returns, from an independent read of the line table, the
// addresses whose last line-table row says file (by suffix) and line.
func lineAddrs(t testing.TB, path, file string, line int) []uint64 {
	t.Helper()
	var addrs []uint64
	rows := lineRows(t, path)
	for i, le := range rows {
		last := i+1 == len(rows) || rows[i+1].Address > le.Address
		if last && !le.EndSequence && le.Line == line && strings.HasSuffix(le.File.Name, file) {
			addrs = append(addrs, le.Address)
		}
	}
	return addrs
}

func findGlobal(gs []Global, name string) (Global, bool) {
	for _, g := range gs {
		if g.Name == name {
			return g, true
		}
	}
	return Global{}, false
}

func timedOpen(t testing.TB, path string) *Binary {
	t.Helper()
	start := time.Now()
	b, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Open(%s): %v", filepath.Base(path), time.Since(start))
	return b
}

func TestC(t *testing.T) {
	needGCC(t)
	configs := []struct {
		name   string
		flags  []string
		inline bool // square_sum is inlined into main
		pie    bool
	}{
		{"O0-nopie", []string{"-g", "-O0", "-fno-pie", "-no-pie"}, false, false},
		{"O2-nopie", []string{"-g", "-O2", "-fno-pie", "-no-pie"}, true, false},
		{"O0-pie", []string{"-g", "-O0", "-fpie", "-pie"}, false, true},
		{"O2-pie", []string{"-g", "-O2", "-fpie", "-pie"}, true, true},
		{"O2-pie-dwarf4", []string{"-gdwarf-4", "-O2", "-fpie", "-pie"}, true, true},
		{"O0-nopie-dwarf4", []string{"-gdwarf-4", "-O0", "-fno-pie", "-no-pie"}, false, false},
	}
	body, call := lineOf(t, testProg, "/* BODY */"), lineOf(t, testProg, "/* CALL */")
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := compile(t, dir, "prog", testProg, c.flags...)
			src := filepath.Join(dir, "prog.c")
			b := timedOpen(t, path)
			if b.Path() != path {
				t.Errorf("Path() = %q", b.Path())
			}

			ef, err := elf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := b.TextAddr(), ef.Section(".text").Addr; got != want {
				t.Errorf("TextAddr() = %#x, want %#x", got, want)
			}
			ef.Close()

			// Functions.
			for _, fn := range []string{"main", "bump"} {
				addr, size := elfSym(t, path, fn)
				for _, pc := range []uint64{addr, addr + size/2, addr + size - 1} {
					name, entry, end, ok := b.Func(pc)
					if !ok || name != fn || entry != addr || end != addr+size {
						t.Errorf("Func(%#x) = %q, %#x, %#x, %v; want %q, %#x, %#x", pc, name, entry, end, ok, fn, addr, addr+size)
					}
				}
			}
			if name, _, _, ok := b.Func(0x10); ok {
				t.Errorf("Func(0x10) = %q, want none", name)
			}

			// Globals.
			gs := b.Globals()
			if !slices.IsSortedFunc(gs, func(a, b Global) int {
				if a.Addr < b.Addr {
					return -1
				} else if a.Addr > b.Addr {
					return 1
				}
				return 0
			}) {
				t.Error("Globals not sorted by address")
			}
			seen := map[string]bool{}
			for _, g := range gs {
				if seen[g.Name] {
					t.Errorf("duplicate global %q", g.Name)
				}
				seen[g.Name] = true
			}
			for _, w := range []struct {
				name, sym, typ string
				size           uint64
				marker         string
			}{
				{"A", "A", "double[512]", 4096, "double A[512]"},
				{"counter", "counter", "int", 4, "static int counter"},
				{"head", "head", "struct node *", 8, "} *head"},
				{"M", "M", "double[4][8]", 256, "double M[4][8]"},
				{"pa", "pa", "double (*)[512]", 8, "double (*pa)"},
				{"msg", "msg", "const char *", 8, "const char *msg"},
				{"total", "total", "ulong_t", 8, "ulong_t total"},
				{"handler", "handler", "int (*)(int, char **)", 8, "int (*handler)"},
				{"bump.calls", "calls.0", "int", 4, "CALLS"},
			} {
				g, ok := findGlobal(gs, w.name)
				if !ok {
					t.Errorf("no global %q", w.name)
					continue
				}
				addr, _ := elfSym(t, path, w.sym)
				want := Global{Name: w.name, Addr: addr, Size: w.size, Type: w.typ, File: src, Line: lineOf(t, testProg, w.marker)}
				if g != want {
					t.Errorf("global %s = %+v, want %+v", w.name, g, want)
				}
			}
			if _, ok := findGlobal(gs, "calls.0"); ok {
				t.Error("symbol calls.0 listed although DWARF describes it as bump.calls")
			}
			a, _ := findGlobal(gs, "A")
			for _, off := range []uint64{0, 100, 4095} {
				if g, ok := b.Global(a.Addr + off); !ok || g.Name != "A" {
					t.Errorf("Global(A+%d) = %q, %v", off, g.Name, ok)
				}
			}
			if g, ok := b.Global(a.Addr + 4096); ok && g.Name == "A" {
				t.Error("Global(A+4096) = A")
			}

			// Lines and inlined frames.
			addrs := lineAddrs(t, path, "prog.c", body)
			if len(addrs) == 0 {
				t.Fatal("no code for the BODY line")
			}
			for _, pc := range addrs {
				if f, l, ok := b.Line(pc); !ok || f != src || l != body {
					t.Errorf("Line(%#x) = %s:%d %v, want %s:%d", pc, f, l, ok, src, body)
				}
				got := b.Frames(pc)
				want := []Frame{{"square_sum", src, body}}
				if c.inline {
					want = append(want, Frame{"main", src, call})
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("Frames(%#x) = %v, want %v", pc, got, want)
				}
				fn, _, _, _ := b.Func(pc)
				if wantFn := want[len(want)-1].Func; fn != wantFn {
					t.Errorf("Func(%#x) = %q, want %q", pc, fn, wantFn)
				}
			}

			// A process address space.
			bias := uint64(0)
			if c.pie {
				bias = pieBias
			}
			var sp Space
			sp.Add(b, bias)
			mainAddr, mainSize := elfSym(t, path, "main")
			if name, entry, end, ok := sp.Func(mainAddr + bias + 4); !ok || name != "main" || entry != mainAddr+bias || end != mainAddr+mainSize+bias {
				t.Errorf("Space.Func(main+4) = %q %#x %#x %v", name, entry, end, ok)
			}
			if bb, bbias, ok := sp.Binary(mainAddr + bias); !ok || bb != b || bbias != bias {
				t.Errorf("Space.Binary(main) = %v %#x %v", bb, bbias, ok)
			}
			if g, ok := sp.Global(a.Addr + bias + 8); !ok || g.Name != "A" || g.Addr != a.Addr+bias {
				t.Errorf("Space.Global(A+8) = %+v %v", g, ok)
			}
			if got, want := sp.Frames(addrs[0]+bias), b.Frames(addrs[0]); !reflect.DeepEqual(got, want) {
				t.Errorf("Space.Frames = %v, want %v", got, want)
			}
			if c.pie {
				if _, _, _, ok := sp.Func(mainAddr); ok {
					t.Error("Space.Func found a function at the link-time address of a biased binary")
				}
			}
		})
	}
}

func TestCWithoutDWARF(t *testing.T) {
	needGCC(t)
	dir := t.TempDir()
	path := compile(t, dir, "prog", testProg, "-O2", "-fpie", "-pie")
	b := timedOpen(t, path)
	addr, size := elfSym(t, path, "main")
	if name, entry, end, ok := b.Func(addr + 1); !ok || name != "main" || entry != addr || end != addr+size {
		t.Errorf("Func(main+1) = %q %#x %#x %v", name, entry, end, ok)
	}
	if got, want := b.Frames(addr+1), []Frame{{Func: "main"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Frames(main+1) = %v, want %v", got, want)
	}
	if _, _, ok := b.Line(addr); ok {
		t.Error("Line found a line without DWARF")
	}
	aAddr, _ := elfSym(t, path, "A")
	if g, ok := b.Global(aAddr + 100); !ok || g != (Global{Name: "A", Addr: aAddr, Size: 4096}) {
		t.Errorf("Global(A+100) = %+v %v", g, ok)
	}
	if _, ok := findGlobal(b.Globals(), "calls.0"); !ok {
		t.Error("static local calls.0 missing from the symbol-table globals")
	}
}

func TestGo(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	path := filepath.Join(t.TempDir(), "goalloc")
	cmd := exec.Command(goCmd, "build", "-o", path, "../examples/goalloc")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, msg)
	}
	b := timedOpen(t, path)
	for _, fn := range []string{"main.main", "runtime.mallocgc"} {
		addr, size := elfSym(t, path, fn)
		name, entry, end, ok := b.Func(addr + size/2)
		if !ok || name != fn || entry != addr || end != addr+size {
			t.Errorf("Func(%s+%d) = %q %#x %#x %v, want %#x %#x", fn, size/2, name, entry, end, ok, addr, addr+size)
		}
	}
	addr, _ := elfSym(t, path, "main.main")
	fr := b.Frames(addr)
	if len(fr) == 0 || fr[len(fr)-1].Func != "main.main" || !strings.HasSuffix(fr[len(fr)-1].File, "examples/goalloc/main.go") || fr[len(fr)-1].Line == 0 {
		t.Errorf("Frames(main.main) = %v", fr)
	}
	for _, w := range []struct{ name, typ string }{{"runtime.mheap_", "runtime.mheap"}, {"os.Stdout", "*os.File"}} {
		g, ok := findGlobal(b.Globals(), w.name)
		if !ok || g.Type != w.typ || g.Size == 0 {
			t.Errorf("global %s = %+v %v, want type %s", w.name, g, ok, w.typ)
		}
	}
	// fmt.Println is inlined into main.main: its body's frames name main.main
	// at the line calling it.
	src, err := os.ReadFile("../examples/goalloc/main.go")
	if err != nil {
		t.Fatal(err)
	}
	call := lineOf(t, string(src), "fmt.Println(sum)")
	found := false
	for _, pc := range lineAddrs(t, path, "print.go", lineOf(t, printGo(t), "func Println(")+1) {
		fr := b.Frames(pc)
		if len(fr) >= 2 && fr[0].Func == "fmt.Println" && fr[1].Func == "main.main" && fr[1].Line == call {
			found = true
		}
	}
	if !found {
		t.Error("no inlined fmt.Println frame with main.main as its caller at the call line")
	}
}

// printGo returns the source of fmt/print.go of the toolchain.
func printGo(t *testing.T) string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "src", "fmt", "print.go"))
	if err != nil {
		t.Skip(err)
	}
	return string(src)
}

func TestLibc(t *testing.T) {
	if _, err := os.Stat(libcPath); err != nil {
		t.Skip("no system libc at " + libcPath)
	}
	mallocAddr, _ := elfSym(t, libcPath, "malloc")

	// The file alone: symbols only.
	start := time.Now()
	b, err := open(libcPath, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("open(libc, symbols only): %v", time.Since(start))
	if name, entry, _, ok := b.Func(mallocAddr + 8); !ok || name != "malloc" || entry != mallocAddr {
		t.Errorf("Func(malloc+8) = %q %#x %v", name, entry, ok)
	}
	stdout, _ := elfSym(t, libcPath, "stdout")
	if g, ok := b.Global(stdout); !ok || g.Name != "stdout" || g.Size != 8 {
		t.Errorf("Global(stdout) = %+v %v", g, ok)
	}

	// With its separate debug file, when installed (libc6-dbg).
	b = timedOpen(t, libcPath)
	name, _, _, ok := b.Func(mallocAddr + 8)
	if !ok || (name != "malloc" && name != "__libc_malloc") {
		t.Errorf("Func(malloc+8) = %q %v", name, ok)
	}
	if b.debugPath != "" {
		t.Logf("libc debug file: %s", b.debugPath)
		fr := b.Frames(mallocAddr)
		if len(fr) == 0 || !strings.HasSuffix(fr[len(fr)-1].File, "malloc.c") || fr[len(fr)-1].Line == 0 {
			t.Errorf("Frames(malloc) = %v", fr)
		}
		start := time.Now()
		if _, err := Open(b.debugPath); err != nil {
			t.Error(err)
		}
		t.Logf("Open(libc debug file): %v", time.Since(start))
	}

	// Two binaries in one space.
	needGCC(t)
	path := compile(t, t.TempDir(), "prog", testProg, "-g", "-O2", "-fpie", "-pie")
	prog, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var sp Space
	const libcBias = 0x7f0000000000
	sp.Add(prog, pieBias)
	sp.Add(b, libcBias)
	if name, entry, _, ok := sp.Func(libcBias + mallocAddr + 8); !ok || (name != "malloc" && name != "__libc_malloc") || entry != libcBias+mallocAddr {
		t.Errorf("Space.Func(malloc+8) = %q %#x %v", name, entry, ok)
	}
	mainAddr, _ := elfSym(t, path, "main")
	if name, _, _, ok := sp.Func(pieBias + mainAddr); !ok || name != "main" {
		t.Errorf("Space.Func(main) = %q %v", name, ok)
	}
	if bb, bias, ok := sp.Binary(libcBias + mallocAddr); !ok || bb != b || bias != libcBias {
		t.Errorf("Space.Binary(malloc) = %v %#x %v", bb, bias, ok)
	}
	if _, _, ok := sp.Binary(0x1000); ok {
		t.Error("Space.Binary(0x1000) found a binary")
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte("hello, world\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(text); err == nil || !strings.Contains(err.Error(), text) || !strings.Contains(err.Error(), "not an ELF file") {
		t.Errorf("Open(text file) error = %v", err)
	}
	missing := filepath.Join(dir, "missing")
	if _, err := Open(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("Open(missing) error = %v", err)
	}

	needGCC(t)
	path := compile(t, dir, "prog", testProg, "-g", "-O0")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	trunc := filepath.Join(dir, "trunc")
	if err := os.WriteFile(trunc, data[:len(data)/2], 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(trunc); err == nil || !strings.Contains(err.Error(), trunc) {
		t.Errorf("Open(truncated) error = %v", err)
	}

	// Garbage in .debug_info.
	ef, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	s := ef.Section(".debug_info")
	off, size := s.Offset, s.Size
	ef.Close()
	bad := slices.Clone(data)
	for i := off + 11; i < off+size; i++ {
		bad[i] = 0xff
	}
	badPath := filepath.Join(dir, "bad")
	if err := os.WriteFile(badPath, bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(badPath); err == nil || !strings.Contains(err.Error(), "DWARF") {
		t.Errorf("Open(bad DWARF) error = %v", err)
	}
}

func FuzzOpen(f *testing.F) {
	if _, err := exec.LookPath("gcc"); err == nil {
		dir := f.TempDir()
		path := compile(f, dir, "seed", "int g[4];\nstatic inline int sq(int x) { return x * x; }\nint main(int c, char **v) { g[c & 3] = sq(c); return g[1]; }\n", "-g", "-O2")
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data[:4096])
		f.Add(data)
	}
	f.Add([]byte("\x7fELF"))
	f.Add([]byte("not an ELF file"))
	// One file per worker process, rewritten for each input: a fresh
	// temporary directory per input makes fuzzing disk-bound.
	path := filepath.Join(f.TempDir(), "bin")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := open(path, false)
		if err != nil {
			return
		}
		pc := b.TextAddr()
		b.Func(pc)
		b.Frames(pc + 4)
		b.Line(pc + 4)
		for _, g := range b.Globals() {
			b.Global(g.Addr)
		}
		var sp Space
		sp.Add(b, 0x1000)
		sp.Frames(pc + 0x1000)
		sp.Global(pc + 0x1000)
	})
}

// binutils skips t without gcc, objcopy or strip, and returns a function
// that runs a command and fails t when it fails.
func binutils(t *testing.T) func(name string, args ...string) {
	t.Helper()
	needGCC(t)
	for _, tool := range []string{"objcopy", "strip"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool + " not installed")
		}
	}
	return func(name string, args ...string) {
		t.Helper()
		if msg, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, msg)
		}
	}
}

func TestSeparateDebugFile(t *testing.T) {
	run := binutils(t)
	dir := t.TempDir()
	full := compile(t, dir, "prog", testProg, "-g", "-O2", "-fpie", "-pie", "-Wl,--build-id")
	src := filepath.Join(dir, "prog.c")
	body := lineOf(t, testProg, "/* BODY */")
	pc := lineAddrs(t, full, "prog.c", body)[0]
	ref, err := Open(full)
	if err != nil {
		t.Fatal(err)
	}
	wantFrames := ref.Frames(pc)
	wantA, _ := findGlobal(ref.Globals(), "A")

	ef, err := elf.Open(full)
	if err != nil {
		t.Fatal(err)
	}
	id := buildID(ef)
	ef.Close()
	if len(id) < 2 {
		t.Fatal("no build ID")
	}

	debug := filepath.Join(dir, "prog.debug")
	run("objcopy", "--only-keep-debug", full, debug)
	bin := filepath.Join(dir, "bin", "prog")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	run("strip", "--strip-debug", "-o", bin, full)

	root := t.TempDir()
	old := debugRoots
	debugRoots = []string{root}
	defer func() { debugRoots = old }()

	check := func(what, wantDebug string) {
		t.Helper()
		b, err := Open(bin)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if b.debugPath != wantDebug {
			t.Errorf("%s: debug file %q, want %q", what, b.debugPath, wantDebug)
		}
		if wantDebug == "" {
			if f := b.Frames(pc); len(f) != 1 || f[0].Line != 0 {
				t.Errorf("%s: Frames = %v, want the function alone", what, f)
			}
			return
		}
		if got := b.Frames(pc); !reflect.DeepEqual(got, wantFrames) {
			t.Errorf("%s: Frames = %v, want %v", what, got, wantFrames)
		}
		if g, ok := b.Global(wantA.Addr + 8); !ok || g != wantA {
			t.Errorf("%s: Global(A+8) = %+v, want %+v", what, g, wantA)
		}
		if f, l, _ := b.Line(pc); f != src || l != body {
			t.Errorf("%s: Line = %s:%d", what, f, l)
		}
	}
	check("no debug file", "")

	// By build ID.
	h := hex.EncodeToString(id)
	byID := filepath.Join(root, ".build-id", h[:2], h[2:]+".debug")
	if err := os.MkdirAll(filepath.Dir(byID), 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(debug)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(byID, data, 0o644); err != nil {
		t.Fatal(err)
	}
	check("build ID", byID)

	// A corrupt debug file falls back to the symbol tables.
	df, err := elf.Open(debug)
	if err != nil {
		t.Fatal(err)
	}
	s := df.Section(".debug_info")
	bad := slices.Clone(data)
	for i := s.Offset + 11; i < s.Offset+s.FileSize; i++ {
		bad[i] = 0xff
	}
	df.Close()
	if err := os.WriteFile(byID, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	check("corrupt debug file", "")
	os.Remove(byID)

	// By .gnu_debuglink, next to the binary.
	run("objcopy", "--add-gnu-debuglink="+debug, bin)
	linked := filepath.Join(filepath.Dir(bin), "prog.debug")
	if err := os.WriteFile(linked, data, 0o644); err != nil {
		t.Fatal(err)
	}
	check("debuglink", linked)
}

// TestRelativeSourcePath: gcc compiling a source named by a relative path
// writes a relative directory into the DWARF 5 line table; file names come
// out joined with the compilation directory all the same.
func TestRelativeSourcePath(t *testing.T) {
	needGCC(t)
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	src := "int twice(int x) { return 2 * x; }\nint main(void) { return twice(3); }\n"
	if err := os.WriteFile(filepath.Join(dir, "src", "rel.c"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("gcc", "-g", "-O0", "-o", "rel", "src/rel.c")
	cmd.Dir = dir
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, msg)
	}
	b, err := Open(filepath.Join(dir, "rel"))
	if err != nil {
		t.Fatal(err)
	}
	entry, _ := elfSym(t, filepath.Join(dir, "rel"), "twice")
	file, line, ok := b.Line(entry)
	if want := filepath.Join(dir, "src", "rel.c"); !ok || file != want || line != 1 {
		t.Errorf("Line(twice) = %q %d %v, want %q 1", file, line, ok, want)
	}
}
