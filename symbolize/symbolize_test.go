package symbolize_test

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/memspy/memspy/attrib"
	"github.com/memspy/memspy/sim"
	"github.com/memspy/memspy/symbolize"
	"github.com/memspy/memspy/symbols"
)

var _ sim.Symbolizer = (*symbolize.Symbolizer)(nil)

// testProg records the return addresses the tracer would report for its
// allocations: my_malloc stands for the allocator (the tracer removes its
// frames), so its return address is site[0]; the functions that call it
// record theirs, site[1]. Markers in comments name lines.
const testProg = `#include <stdio.h>
#include <stdlib.h>

double big[1024];
static void *ra0; /* return address of the last my_malloc call */
static void *ra1; /* return address of the last alloc_matrix or make call */

__attribute__((noipa)) void *my_malloc(size_t n)
{
	ra0 = __builtin_return_address(0);
	return malloc(n);
}

__attribute__((noipa)) double *alloc_matrix(int n)
{
	ra1 = __builtin_return_address(0);
	return my_malloc(n * n * sizeof(double)); /* WRAP */
}

static inline __attribute__((always_inline)) double *alloc_inl(int n)
{
	return my_malloc(n * sizeof(double)); /* INL */
}

__attribute__((noipa)) double *make(int n)
{
	ra1 = __builtin_return_address(0);
	double *x = my_malloc(n * sizeof *x); /* MAKE */
	x[0] = n;
	return x;
}

extern void *ra_dup;
char *dup_str(const char *s);

struct node {
	struct node *next;
	long v;
};

static volatile long sink;

__attribute__((noipa)) void use(void *p)
{
	sink += (long)p;
	free(p);
}

int main(int argc, char **argv)
{
	int n = argc + 3;
	printf("main %p\n", (void *)&main);
	printf("big %p\n", (void *)big);
	double *A = alloc_matrix(n); /* CALLA */
	printf("A %p %p\n", ra0, ra1);
	double *B = alloc_matrix(n); /* CALLB */
	printf("B %p %p\n", ra0, ra1);
	double *y = make(n); /* CALLMAKE */
	printf("make %p %p\n", ra0, ra1);
	double *C = alloc_inl(n); /* CALLC */
	printf("C %p\n", ra0);
	struct node head = {0}, *tail = &head;
	for (int i = 0; i < 3; i++) {
		tail->next = my_malloc(sizeof *tail); /* LOOP */
		printf("loop %p\n", ra0);
		tail = tail->next;
		tail->next = NULL;
		tail->v = i;
	}
	use(my_malloc(16)); /* USE */
	printf("use %p\n", ra0);
	char *copy = dup_str(argv[0]); /* CALLDUP */
	printf("dup %p %p\n", ra0, ra_dup);
	sink += copy[0];
	big[n] = A[0] + B[0] + C[0] + y[0] + head.next->v;
	return 0;
}
`

// libProg is a second source file of the program, deleted once compiled,
// as the source of a library with debugging information usually is.
const libProg = `#include <stdlib.h>
#include <string.h>

void *my_malloc(size_t n);
void *ra_dup;

__attribute__((noipa)) char *dup_str(const char *s)
{
	ra_dup = __builtin_return_address(0);
	size_t n = strlen(s) + 1;
	char *d = my_malloc(n); /* DUP */
	memcpy(d, s, n);
	return d;
}
`

// prog is the compiled test program and what its run printed.
type prog struct {
	path, src string
	bias      uint64              // run-time minus link-time address
	textAddr  uint64              // run-time .text
	out       map[string][]uint64 // printed addresses by label, in order
	err       error
}

var (
	progOnce sync.Once
	theProg  prog
	progDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if progDir != "" {
		os.RemoveAll(progDir)
	}
	os.Exit(code)
}

// build compiles and runs testProg once for all tests.
func build(t *testing.T) *prog {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	progOnce.Do(func() {
		p := &theProg
		p.err = p.build()
	})
	if theProg.err != nil {
		t.Fatal(theProg.err)
	}
	return &theProg
}

func (p *prog) build() error {
	var err error
	progDir, err = os.MkdirTemp("", "symbolize")
	if err != nil {
		return err
	}
	p.src = filepath.Join(progDir, "prog.c")
	if err := os.WriteFile(p.src, []byte(testProg), 0o644); err != nil {
		return err
	}
	lib := filepath.Join(progDir, "lib", "dup.c")
	if err := os.Mkdir(filepath.Dir(lib), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(lib, []byte(libProg), 0o644); err != nil {
		return err
	}
	p.path = filepath.Join(progDir, "prog")
	args := []string{"-g", "-O1", "-fno-optimize-sibling-calls", "-fpie", "-pie", "-o", p.path, p.src, lib}
	if msg, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("gcc %v: %v\n%s", args, err, msg)
	}
	if err := os.Remove(lib); err != nil {
		return err
	}
	out, err := exec.Command(p.path).Output()
	if err != nil {
		return fmt.Errorf("%s: %v", p.path, err)
	}
	p.out = map[string][]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		for _, w := range f[1:] {
			a, err := strconv.ParseUint(strings.TrimPrefix(w, "0x"), 16, 64)
			if err != nil {
				return fmt.Errorf("bad output line %q", sc.Text())
			}
			p.out[f[0]] = append(p.out[f[0]], a)
		}
	}
	f, err := elf.Open(p.path)
	if err != nil {
		return err
	}
	defer f.Close()
	mainLink, err := symValue(f, "main")
	if err != nil {
		return err
	}
	p.bias = p.out["main"][0] - mainLink
	p.textAddr = f.Section(".text").Addr + p.bias
	return nil
}

// linkAddr returns the link-time address of symbol name in the ELF file
// at path.
func linkAddr(t *testing.T, path, name string) uint64 {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	a, err := symValue(f, name)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func symValue(f *elf.File, name string) (uint64, error) {
	syms, err := f.Symbols()
	if err != nil {
		return 0, err
	}
	for _, s := range syms {
		if s.Name == name && s.Value != 0 {
			return s.Value, nil
		}
	}
	return 0, fmt.Errorf("no symbol %s", name)
}

// line returns the 1-based line of testProg (or libProg) holding marker.
func line(t *testing.T, marker string) int {
	t.Helper()
	src := testProg
	if marker == "DUP" {
		src = libProg
	}
	for i, l := range strings.Split(src, "\n") {
		if strings.Contains(l, "/* "+marker+" */") {
			return i + 1
		}
	}
	t.Fatalf("no line with %q", marker)
	return 0
}

func (p *prog) addrs(t *testing.T, label string, n int) []uint64 {
	t.Helper()
	a := p.out[label]
	if len(a) != n {
		t.Fatalf("program printed %d addresses for %q, want %d", len(a), label, n)
	}
	return a
}

// mapped returns a Symbolizer with the program mapped where it ran.
func (p *prog) mapped(t *testing.T) (*symbolize.Symbolizer, []attrib.Var) {
	t.Helper()
	s := symbolize.New()
	vars := s.Map(p.path, p.textAddr)
	if errs := s.Errors(); len(errs) > 0 {
		t.Fatalf("Map: %v", errs)
	}
	return s, vars
}

func TestHeapName(t *testing.T) {
	p := build(t)
	s, _ := p.mapped(t)
	wrap, callA, callB := line(t, "WRAP"), line(t, "CALLA"), line(t, "CALLB")
	makeL, callMake := line(t, "MAKE"), line(t, "CALLMAKE")
	useL := line(t, "USE")
	siteA := p.addrs(t, "A", 2)
	siteB := p.addrs(t, "B", 2)
	siteMake := p.addrs(t, "make", 2)
	loop := p.addrs(t, "loop", 3)
	use := p.addrs(t, "use", 1)[0]
	loopName, ok := symbols.AssignedVariable(p.src, line(t, "LOOP"))
	if !ok || loopName == "" {
		t.Fatalf("AssignedVariable(LOOP line) = %q, %v", loopName, ok)
	}
	tests := []struct {
		name  string
		site  []uint64
		short string
		full  string
	}{
		// A wrapper returning the pointer: the caller's variable.
		{"A", siteA, "A", fmt.Sprintf("main.%d.alloc_matrix.%d.A", callA, wrap)},
		{"B", siteB, "B", fmt.Sprintf("main.%d.alloc_matrix.%d.B", callB, wrap)},
		// Only the innermost frame given: the wrapper's line returns,
		// there is nowhere further out to look.
		{"A innermost only", siteA[:1], fmt.Sprintf("heap@prog.c:%d", wrap), fmt.Sprintf("alloc_matrix.%d.heap@prog.c:%d", wrap, wrap)},
		// A frame without symbols (a library without debugging information)
		// is passed through.
		{"A through unknown frame", append([]uint64{0x10}, siteA...), "A", fmt.Sprintf("main.%d.alloc_matrix.%d.0x10.A", callA, wrap)},
		// Unknown outer frames appear in hex.
		{"A unknown outer frame", append(append([]uint64{}, siteA...), 0x7000), "A", fmt.Sprintf("0x7000.main.%d.alloc_matrix.%d.A", callA, wrap)},
		// An inlined wrapper.
		{"C", p.addrs(t, "C", 1), "C", fmt.Sprintf("main.%d.alloc_inl.%d.C", line(t, "CALLC"), line(t, "INL"))},
		// A local variable assigned and returned: the caller's variable.
		{"make", siteMake, "y", fmt.Sprintf("main.%d.make.%d.y", callMake, makeL)},
		{"make innermost only", siteMake[:1], "x", fmt.Sprintf("make.%d.x", makeL)},
		// A list node in a loop.
		{"loop 0", loop[:1], loopName, fmt.Sprintf("main.%d.%s", line(t, "LOOP"), loopName)},
		{"loop 2", loop[2:], loopName, fmt.Sprintf("main.%d.%s", line(t, "LOOP"), loopName)},
		// Neither assigned nor returned.
		{"use", []uint64{use}, fmt.Sprintf("heap@prog.c:%d", useL), fmt.Sprintf("main.%d.heap@prog.c:%d", useL, useL)},
		// A frame whose source cannot be read is passed through.
		{"dup", p.addrs(t, "dup", 2), "copy", fmt.Sprintf("main.%d.dup_str.%d.copy", line(t, "CALLDUP"), line(t, "DUP"))},
		{"dup innermost only", p.addrs(t, "dup", 2)[:1], fmt.Sprintf("heap@dup.c:%d", line(t, "DUP")), fmt.Sprintf("dup_str.%d.heap@dup.c:%d", line(t, "DUP"), line(t, "DUP"))},
		{"use under unknown caller", []uint64{use, 0x20}, fmt.Sprintf("heap@prog.c:%d", useL), fmt.Sprintf("0x20.main.%d.heap@prog.c:%d", useL, useL)},
	}
	for _, tc := range tests {
		h, ok := s.HeapName(tc.site, 0)
		name, full := h.Name, strings.Join(append(h.Path, h.Name), ".")
		if !ok || name != tc.short || full != tc.full {
			t.Errorf("%s: HeapName(%#x) = %q, %q, %v; want %q, %q, true", tc.name, tc.site, name, full, ok, tc.short, tc.full)
		}
	}
	// The site is the innermost line of the program's own.
	for _, tc := range []struct {
		site []uint64
		at   string
	}{{siteA, fmt.Sprintf("prog.c:%d", wrap)}, {[]uint64{use}, fmt.Sprintf("prog.c:%d", useL)}, {[]uint64{0x10}, ""}} {
		if h, _ := s.HeapName(tc.site, 0); h.At != tc.at {
			t.Errorf("HeapName(%#x).At = %q, want %q", tc.site, h.At, tc.at)
		}
	}
	if loop[0] != loop[1] || loop[1] != loop[2] {
		t.Errorf("loop sites differ: %#x", loop)
	}
	for _, site := range [][]uint64{nil, {0x10}, {0x10, 0x20}} {
		if h, ok := s.HeapName(site, 0); ok || h.Name != "" || h.Path != nil || h.At != "" {
			t.Errorf("HeapName(%#x) = %+v, %v; want nothing", site, h, ok)
		}
	}
}

func TestMapGlobals(t *testing.T) {
	p := build(t)
	_, vars := p.mapped(t)
	bigAddr := p.addrs(t, "big", 1)[0]
	var found bool
	for _, v := range vars {
		if v.Size == 0 {
			t.Errorf("Map returned a variable of size 0: %+v", v)
		}
		if v.Name == "big" {
			found = true
			if v.Addr != bigAddr || v.Size != 8192 {
				t.Errorf("big = %+v, want Addr %#x Size 8192", v, bigAddr)
			}
		}
	}
	if !found {
		t.Errorf("Map returned no variable big: %+v", vars)
	}
}

func TestCode(t *testing.T) {
	p := build(t)
	s, _ := p.mapped(t)
	entry := linkAddr(t, p.path, "alloc_matrix")
	pc := p.addrs(t, "A", 2)[0] - 1
	got := s.Code(pc)
	want := sim.Source{Func: "alloc_matrix", Entry: entry + p.bias, File: p.src, Line: line(t, "WRAP"), Column: column(t, "WRAP", "my_malloc"), Module: p.path}
	if got != want {
		t.Errorf("Code(%#x) = %+v, want %+v", pc, got, want)
	}
	pc = p.addrs(t, "A", 2)[1] - 1
	if got := s.Code(pc); got.Func != "main" || got.Line != line(t, "CALLA") {
		t.Errorf("Code(%#x) = %+v, want main line %d", pc, got, line(t, "CALLA"))
	}
	for _, pc := range []uint64{0, 0x10, p.textAddr - 1<<30, 1 << 63} {
		if got := s.Code(pc); got != (sim.Source{}) {
			t.Errorf("Code(%#x) = %+v, want the zero Source", pc, got)
		}
	}

	// Load maps at link-time addresses.
	l := symbolize.New()
	if err := l.Load(p.path); err != nil {
		t.Fatal(err)
	}
	if got := l.Code(entry); got.Func != "alloc_matrix" || got.Entry != entry {
		t.Errorf("after Load, Code(%#x) = %+v, want alloc_matrix at its link-time entry", entry, got)
	}
}

func TestMapErrors(t *testing.T) {
	s := symbolize.New()
	missing := filepath.Join(t.TempDir(), "gone.so")
	notELF := filepath.Join(t.TempDir(), "text.so")
	if err := os.WriteFile(notELF, []byte("hello, world\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		for _, path := range []string{missing, notELF} {
			if vars := s.Map(path, 0x400000); vars != nil {
				t.Errorf("Map(%s) = %v, want nil", path, vars)
			}
		}
	}
	errs := s.Errors()
	if len(errs) != 2 || !strings.Contains(errs[0].Error(), missing) || !strings.Contains(errs[1].Error(), notELF) {
		t.Errorf("Errors() = %v, want one naming %s and one naming %s", errs, missing, notELF)
	}
	if err := s.Load(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("Load(%s) = %v, want an error naming it", missing, err)
	}
	if len(s.Errors()) != 2 {
		t.Errorf("Load of a failed path reported again: %v", s.Errors())
	}
	if got := s.Code(0x400000); got != (sim.Source{}) {
		t.Errorf("Code after failed maps = %+v", got)
	}
}

func TestRemap(t *testing.T) {
	p := build(t)
	siteA := p.addrs(t, "A", 2)
	bigAddr := p.addrs(t, "big", 1)[0]
	for _, shift := range []int64{-0x1000, 0x1000, -0x3000, -0x800, 0x800} {
		t.Run(fmt.Sprint(shift), func(t *testing.T) {
			s, _ := p.mapped(t)
			old := s.Code(siteA[0] - 1)
			vars := s.Map(p.path, p.textAddr+uint64(shift))
			// A fresh Symbolizer that knows only the new mapping.
			fresh := symbolize.New()
			fresh.Map(p.path, p.textAddr+uint64(shift))

			// The new mapping answers at its own addresses ...
			moved := []uint64{siteA[0] + uint64(shift), siteA[1] + uint64(shift)}
			if got := s.Code(moved[0] - 1); got.Func != "alloc_matrix" || got.Line != line(t, "WRAP") {
				t.Errorf("Code(%#x) after remap = %+v, want alloc_matrix", moved[0]-1, got)
			}
			if h, _ := s.HeapName(moved, 0); h.Name != "A" {
				t.Errorf("HeapName(%#x) after remap = %q, want A", moved, h.Name)
			}
			if v, ok := findVar(vars, "big"); !ok || v.Addr != bigAddr+uint64(shift) {
				t.Errorf("big after remap = %+v, %v; want Addr %#x", v, ok, bigAddr+uint64(shift))
			}
			// ... and in the overlap the old one is gone.
			pc := siteA[0] - 1
			got, want := s.Code(pc), fresh.Code(pc)
			if got != want {
				t.Errorf("Code(%#x) after remap = %+v, want the new mapping's %+v", pc, got, want)
			}
			if got == old {
				t.Errorf("Code(%#x) after remap = %+v, the old mapping's answer", pc, got)
			}
			for _, site := range [][]uint64{siteA, moved} {
				h1, ok1 := s.HeapName(site, 0)
				h2, ok2 := fresh.HeapName(site, 0)
				n1, f1, n2, f2 := h1.Name, h1.Path, h2.Name, h2.Path
				if n1 != n2 || !slices.Equal(f1, f2) || ok1 != ok2 {
					t.Errorf("HeapName(%#x) after remap = %q, %q, %v; want the new mapping's %q, %q, %v", site, n1, f1, ok1, n2, f2, ok2)
				}
			}
		})
	}

	// Mappings that do not overlap both stay.
	s, _ := p.mapped(t)
	far := uint64(1 << 40)
	s.Map(p.path, p.textAddr+far)
	for _, d := range []uint64{0, far} {
		if got := s.Code(siteA[0] - 1 + d); got.Func != "alloc_matrix" {
			t.Errorf("two mappings: Code(%#x) = %+v, want alloc_matrix", siteA[0]-1+d, got)
		}
	}
}

func findVar(vars []attrib.Var, name string) (attrib.Var, bool) {
	for _, v := range vars {
		if v.Name == name {
			return v, true
		}
	}
	return attrib.Var{}, false
}

func BenchmarkHeapName(b *testing.B) {
	if _, err := exec.LookPath("gcc"); err != nil {
		b.Skip("gcc not installed")
	}
	progOnce.Do(func() { theProg.err = theProg.build() })
	p := &theProg
	if p.err != nil {
		b.Fatal(p.err)
	}
	s := symbolize.New()
	s.Map(p.path, p.textAddr)
	site := p.out["A"]
	for b.Loop() {
		if _, ok := s.HeapName(site, 0); !ok {
			b.Fatal("no name")
		}
	}
}
