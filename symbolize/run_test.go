package symbolize_test

import (
	"bytes"
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/profile"
	"github.com/memspy/memspy/sim"
	"github.com/memspy/memspy/symbolize"
	"github.com/memspy/memspy/tracer/valgrind"
)

// pltMain calls libc's strlen on a large buffer, and twice and work of
// its own library libtw, all through its PLT.
const pltMain = `#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int twice(int x);
long work(int n);

int main(void)
{
	size_t n = 1 << 20;
	char *buf = malloc(n + 1);
	memset(buf, 'a', n);
	buf[n] = 0;
	size_t total = 0;
	for (int i = 0; i < 16; i++) {
		buf[i] = 'b';
		total += strlen(buf);
	}
	int s = 0;
	for (int i = 0; i < 1000; i++)
		s += twice(i);
	printf("%zu %d %ld\n", total, s, work(100000));
	return 0;
}
`

// pltLib's twice calls half, which the library exports, through the
// library's own PLT; work runs long on its one call.
const pltLib = `__attribute__((noinline)) int half(int x)
{
	volatile int v = x;
	return v / 2;
}

int twice(int x)
{
	return 4 * half(x);
}

long work(int n)
{
	volatile long s = 0;
	for (int i = 0; i < n; i++)
		s += i;
	return s;
}
`

// toolLib returns the directory of the built memspy Valgrind tool,
// skipping the test when it is not built (failing under
// MEMSPY_REQUIRE_TOOL, as make test sets).
func toolLib(t *testing.T) string {
	t.Helper()
	lib := os.Getenv("MEMSPY_VALGRIND_LIB")
	if lib == "" {
		lib, _ = filepath.Abs(filepath.Join("..", "bin", "valgrind"))
	}
	_, err := os.Stat(filepath.Join(lib, valgrind.ToolFile))
	if _, verr := exec.LookPath("valgrind"); err != nil || verr != nil {
		if os.Getenv("MEMSPY_REQUIRE_TOOL") != "" {
			t.Fatalf("the memspy Valgrind tool is required but not usable (lib %s: %v; valgrind: %v)", lib, err, verr)
		}
		t.Skipf("the memspy Valgrind tool is not built in %s (run make)", lib)
	}
	return lib
}

// runWhere runs exe under the memspy Valgrind tool in lib, simulating a
// 32 KiB cache with where-and-why, and returns the profile and the
// program's output.
func runWhere(t *testing.T, lib, exe string) (*profile.Profile, string) {
	t.Helper()
	h, err := sim.New(&machine.Machine{Name: "one", MemoryLatency: 100, Caches: []machine.Cache{{
		Name: "L1", Level: 1, Size: 32768, Sets: 64, Assoc: 8, Line: 64, Replacement: machine.LRU,
		WriteBack: true, WriteAllocate: true, Holds: machine.Unified, Inclusion: machine.NonInclusive, Latency: 1,
	}}}, sim.Options{Attribute: true, Symbols: symbolize.New()})
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	run, err := valgrind.Start(exe, nil, valgrind.Options{ValgrindLib: lib, IFetch: true, Stdout: &stdout, Stderr: &stderr})
	if err != nil {
		t.Fatal(err)
	}
	run.Reader().SetIFetchRuns(h.IFetchRuns())
	runErr := sim.Run(context.Background(), h, run.Reader(), nil)
	st, waitErr := run.Wait()
	if runErr != nil || waitErr != nil || st.Code != 0 {
		t.Fatalf("run: %v, %v, %v\n%s", runErr, waitErr, st, stderr.String())
	}
	h.Finish()
	return h.Profile(), stdout.String()
}

// functions returns the functions of p by name, failing the test for
// every one named after a PLT entry or mangled.
func functions(t *testing.T, p *profile.Profile) map[string]*profile.Function {
	t.Helper()
	funcs := map[string]*profile.Function{}
	for i, f := range p.Functions {
		if strings.Contains(f.Name, "@plt") || strings.Contains(f.Name, "_Z") {
			t.Errorf("function %s holds %d instructions, %d references", f.Name, f.Instructions, f.Accesses)
		}
		funcs[f.Name] = &p.Functions[i]
	}
	return funcs
}

// TestRunPLT runs a dynamically linked program under memspy's Valgrind
// tool, bound lazily, and checks that its calls through PLTs count in the
// functions they reach: libc's strlen (whatever implementation the
// GNU indirect function picked) holds the reads of the buffer, its own
// library's twice, half (called through the library's own PLT) and work
// hold their instructions, no function is named NAME@plt, and, when
// ld.so's symbols are known, the dynamic linker's resolver holds its own
// work but not that of work, which it jumped to on work's one call.
func TestRunPLT(t *testing.T) {
	lib := toolLib(t)
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	dir := t.TempDir()
	for name, src := range map[string]string{"main.c": pltMain, "tw.c": pltLib} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exe := filepath.Join(dir, "prog")
	for _, cmd := range [][]string{
		{"gcc", "-O1", "-g", "-fPIC", "-shared", "-Wl,-z,lazy", "-o", filepath.Join(dir, "libtw.so"), filepath.Join(dir, "tw.c")},
		{"gcc", "-O1", "-g", "-Wl,-z,lazy", "-o", exe, filepath.Join(dir, "main.c"), "-L" + dir, "-ltw", "-Wl,-rpath," + dir},
	} {
		if msg, err := exec.Command(cmd[0], cmd[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", cmd, err, msg)
		}
	}

	p, out := runWhere(t, lib, exe)
	if want := "16777216 "; !strings.HasPrefix(out, want) {
		t.Fatalf("output %q, want %q...", out, want)
	}
	funcs := functions(t, p)
	// The buffer's reader: strlen in libc, about a read per line and call.
	var reader profile.Pair
	for _, pr := range p.Pairs {
		if pr.Object == "buf" && pr.Reads > reader.Reads {
			reader = pr
		}
	}
	if f := funcs[reader.Function]; f == nil || filepath.Base(f.Module) != "libc.so.6" || reader.Reads < 16<<20/64 {
		t.Errorf("buf's reader is %s (%d reads), want libc's strlen", reader.Function, reader.Reads)
	}
	t.Logf("buf's reader: %s in %s", reader.Function, funcs[reader.Function].Module)
	for _, c := range []struct {
		name  string
		instr uint64
	}{{"twice", 2 * 1000}, {"half", 3 * 1000}, {"work", 3 * 100000}} {
		f := funcs[c.name]
		if f == nil || filepath.Base(f.Module) != "libtw.so" || f.Instructions < c.instr {
			t.Errorf("function %s: %+v, want at least %d instructions in libtw.so", c.name, f, c.instr)
		}
	}
	if _, ok := funcs["_dl_relocate_object"]; !ok {
		t.Log("ld.so's functions are not named (no debug symbols): the resolver is not checked")
		return
	}
	var resolver *profile.Function
	for name, f := range funcs {
		if strings.HasPrefix(name, "_dl_runtime_resolve") {
			resolver = f
		}
	}
	if resolver == nil || resolver.Inclusive == nil || resolver.Instructions == 0 || resolver.Instructions > 10000 ||
		resolver.Inclusive.Instructions <= resolver.Instructions {
		t.Errorf("the resolver: %+v, want its own few instructions and those of its calls", resolver)
	}
}

// cxxMain inserts into a std::map (libstdc++'s
// std::_Rb_tree_insert_and_rebalance, through the PLT) and sorts a
// std::vector (std::__introsort_loop, instantiated in the program).
const cxxMain = `#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

int main()
{
	std::map<int, int> m;
	std::vector<int> v;
	std::vector<double> w(5000);
	for (int i = 0; i < 2000; i++) {
		m[i * 7919 % 2003] = i;
		v.push_back(i * 104729 % 2003);
		w[i] = i;
	}
	std::sort(v.begin(), v.end());
	std::printf("%zu %d %g\n", m.size(), v[1000], w[1999]);
	return 0;
}
`

// TestRunCPlusPlus runs a C++ program under memspy's Valgrind tool and
// checks that its functions, libstdc++'s reached through the PLT included,
// have demangled names, and that its containers' blocks are named after
// the containers.
func TestRunCPlusPlus(t *testing.T) {
	lib := toolLib(t)
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ not installed")
	}
	dir := t.TempDir()
	src, exe := filepath.Join(dir, "prog.cc"), filepath.Join(dir, "prog")
	if err := os.WriteFile(src, []byte(cxxMain), 0o644); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command("g++", "-O2", "-g", "-o", exe, src).CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, msg)
	}
	p, out := runWhere(t, lib, exe)
	if want := "2000 "; !strings.HasPrefix(out, want) {
		t.Fatalf("output %q, want %q...", out, want)
	}
	funcs := functions(t, p)
	for name, module := range map[string]string{
		"std::_Rb_tree_insert_and_rebalance": "libstdc++.so.6",
		"std::__introsort_loop":              "prog",
		"main":                               "prog",
	} {
		if f := funcs[name]; f == nil || !strings.HasPrefix(filepath.Base(f.Module), module) || f.Instructions == 0 {
			t.Errorf("function %s: %+v, want instructions in %s", name, f, module)
		}
	}
	objects := map[string]bool{}
	for _, o := range p.Objects {
		objects[o.Name] = o.Kind == "heap"
	}
	for _, name := range []string{"m (std::map<int, int> node)", "v (std::vector<int> buffer)", "w (std::vector<double> buffer)"} {
		if !objects[name] {
			t.Errorf("no heap object %q among %v", name, slices.Collect(maps.Keys(objects)))
		}
	}
}
