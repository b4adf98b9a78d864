package valgrind

import (
	"bufio"
	"bytes"
	"cmp"
	"debug/elf"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memspy/memspy/trace"
)

// traceProgram runs exe under the tool with opt and returns its events and
// what it wrote on stdout.
func traceProgram(t *testing.T, exe string, opt Options, args ...string) ([]ev, string) {
	t.Helper()
	evs, stdout, _ := traceRun(t, exe, opt, args...)
	return evs, stdout
}

// startTool starts exe under the built tool with opt, its stdout going to
// the buffer returned, its stderr discarded.
func startTool(t *testing.T, exe string, opt Options, args ...string) (*Run, *bytes.Buffer) {
	t.Helper()
	var stdout bytes.Buffer
	opt.ValgrindLib = toolLib(t)
	opt.Stdout, opt.Stderr = &stdout, io.Discard
	run, err := Start(exe, args, opt)
	if err != nil {
		t.Fatal(err)
	}
	return run, &stdout
}

// traceRun is traceProgram that also returns the run, ended.
func traceRun(t *testing.T, exe string, opt Options, args ...string) ([]ev, string, *Run) {
	t.Helper()
	run, stdout := startTool(t, exe, opt, args...)
	evs, err := drain(t, run)
	if err != nil {
		t.Fatal(err)
	}
	if st := wait(t, run); st.Code != 0 {
		t.Fatalf("%s: %v", exe, st)
	}
	return evs, stdout.String(), run
}

// frames returns the call stack of an extended event.
func frames(e ev) []string { return strings.Fields(strings.Trim(e.X.Stack, "[]")) }

// buildExample compiles examples/c/NAME.c with the memspy.h directory on
// the include path and extra gcc arguments.
func buildExample(t testing.TB, name string, extra ...string) string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), name)
	args := append([]string{"-O1", "-g", "-I", filepath.Join("tool"), "-o", exe,
		filepath.Join("..", "..", "examples", "c", name+".c")}, extra...)
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %v: %v\n%s", args, err, out)
	}
	return exe
}

// symbol returns the address range of function name in exe (non-PIE).
func symbol(t *testing.T, exe, name string) (lo, hi uint64) {
	s := elfSymbol(t, exe, name, elf.STT_FUNC)
	return s.Value, s.Value + s.Size
}

// elfSymbol returns the symbol name of type typ in exe.
func elfSymbol(t *testing.T, exe, name string, typ elf.SymType) elf.Symbol {
	t.Helper()
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == name && elf.ST_TYPE(s.Info) == typ {
			return s
		}
	}
	t.Fatalf("%s has no symbol %s of type %v", exe, name, typ)
	return elf.Symbol{}
}

// markerProgram is examples/c/markers.c built statically and not
// position-independent, with the address range of its array g.
type markerProgram struct {
	exe          string
	gLo, gHi     uint64
	kernel, fib  [2]uint64
	other        [2]uint64
	steps, n, nk int // kernel/other loop length N and the last kernel's
}

func buildMarkers(t *testing.T) markerProgram {
	exe := buildExample(t, "markers", "-static")
	p := markerProgram{exe: exe, steps: 3, n: 1000, nk: 10}
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, _ := f.Symbols()
	for _, s := range syms {
		if s.Name == "g" {
			p.gLo, p.gHi = s.Value, s.Value+s.Size
		}
	}
	p.kernel[0], p.kernel[1] = symbol(t, exe, "kernel")
	p.other[0], p.other[1] = symbol(t, exe, "other")
	p.fib[0], p.fib[1] = symbol(t, exe, "fib")
	return p
}

// gReads counts the reads of g made by code in [lo, hi) (all code: 0, ^0).
func (p markerProgram) gReads(evs []ev, lo, hi uint64) int {
	n := 0
	for _, e := range evs {
		if e.K == trace.Read && e.Addr >= p.gLo && e.Addr < p.gHi && e.PC >= lo && e.PC < hi {
			n++
		}
	}
	return n
}

func TestToolMarkers(t *testing.T) {
	p := buildMarkers(t)
	evs, out := traceProgram(t, p.exe, Options{})
	if !strings.HasSuffix(out, " 55\n") {
		t.Errorf("program output %q", out)
	}
	var got []string
	for _, e := range evs {
		if e.K == trace.Marker {
			s := e.X.Mark.String()
			if e.X.Name != "" {
				s += " " + e.X.Name
			}
			if e.X.Mark == trace.MarkRange {
				s += fmt.Sprintf(" %+d %d", int64(e.Addr-p.gLo), e.X.Size)
			}
			got = append(got, s)
		}
	}
	want := []string{"range g +0 8000"}
	for range p.steps {
		want = append(want, "sample-begin", "region-begin step", "region-end step", "sample-end")
	}
	want = append(want, "dump steps", "reset", "stop", "start")
	if !slices.Equal(got, want) {
		t.Errorf("markers\n got %q\nwant %q", got, want)
	}
	// other(N) once, then kernel(N) and other(N) per step; the other(N)
	// after the stop is not traced; then kernel(10).
	if n, want := p.gReads(evs, 0, ^uint64(0)), p.n+2*p.n*p.steps+p.nk; n != want {
		t.Errorf("%d reads of g, want %d", n, want)
	}
	// Each stretch of markers holds what ran between them.
	i := slices.IndexFunc(evs, func(e ev) bool { return e.K == trace.Marker && e.X.Mark == trace.MarkStop })
	j := slices.IndexFunc(evs, func(e ev) bool { return e.K == trace.Marker && e.X.Mark == trace.MarkStart })
	if n := p.gReads(evs[i:j], 0, ^uint64(0)); n != 0 {
		t.Errorf("%d reads of g while stopped", n)
	}
	if n := p.gReads(evs[j:], 0, ^uint64(0)); n != p.nk {
		t.Errorf("%d reads of g after the start, want %d", n, p.nk)
	}
}

// Calls and returns: fib(10) makes 177 calls of fib, each returning.
func TestToolCalls(t *testing.T) {
	p := buildMarkers(t)
	evs, _ := traceProgram(t, p.exe, Options{})
	calls, rets := 0, 0
	depth, maxDepth := 0, 0
	for _, e := range evs {
		switch {
		case e.K == trace.Call && e.Addr == p.fib[0]:
			calls++
			depth++
			maxDepth = max(maxDepth, depth)
			if e.X.SP == 0 || e.X.SP%8 != 0 {
				t.Fatalf("call with stack pointer %#x", e.X.SP)
			}
		case e.K == trace.Return && e.PC >= p.fib[0] && e.PC < p.fib[1]:
			rets++
			depth--
		}
	}
	if calls != 177 || rets != 177 || maxDepth != 10 {
		t.Errorf("fib: %d calls, %d returns, depth %d; want 177, 177, 10", calls, rets, maxDepth)
	}
	// --calls=no leaves them out.
	evs, _ = traceProgram(t, p.exe, Options{ToolArgs: []string{"--calls=no"}})
	for _, e := range evs {
		if e.K == trace.Call || e.K == trace.Return {
			t.Fatalf("a %v with --calls=no", e.K)
		}
	}
}

// Partial tracing by function, and starting stopped.
func TestToolPartial(t *testing.T) {
	p := buildMarkers(t)
	all := func(evs []ev) int { return p.gReads(evs, 0, ^uint64(0)) }
	t.Run("start-fn", func(t *testing.T) {
		evs, _ := traceProgram(t, p.exe, Options{StartFn: "kernel"})
		// Everything from the first kernel on, but the stopped other(N).
		if n, want := all(evs), 2*p.n*p.steps+p.nk; n != want {
			t.Errorf("%d reads of g, want %d", n, want)
		}
		first := slices.IndexFunc(evs, func(e ev) bool { return e.K.IsAccess() })
		if first < 0 || evs[first].PC < p.kernel[0] || evs[first].PC >= p.kernel[1] {
			t.Errorf("the first reference is not in kernel: %+v", evs[max(first, 0)])
		}
	})
	t.Run("trace-fn", func(t *testing.T) {
		evs, _ := traceProgram(t, p.exe, Options{TraceFn: "kernel"})
		if n, want := all(evs), p.n*p.steps+p.nk; n != want {
			t.Errorf("%d reads of g, want %d", n, want)
		}
		for _, e := range evs {
			if e.K.IsAccess() && (e.PC < p.kernel[0] || e.PC >= p.kernel[1]) {
				t.Fatalf("a reference outside kernel: %+v", e)
			}
		}
	})
	t.Run("start-stopped", func(t *testing.T) {
		evs, _ := traceProgram(t, p.exe, Options{Stopped: true})
		if n := all(evs); n != p.nk {
			t.Errorf("%d reads of g, want %d", n, p.nk)
		}
		// Markers are reported while stopped.
		if n := countKind(evs, trace.Marker); n != 5+4*p.steps {
			t.Errorf("%d markers", n)
		}
	})
	t.Run("max-time", func(t *testing.T) {
		// A long program stopped early: it still runs to its end.
		lw := buildExample(t, "listwalk")
		lib := toolLib(t)
		full := toolCounts(t, Options{ValgrindLib: lib}, lw, "20000", "300")[""]
		n := toolCounts(t, Options{ValgrindLib: lib, MaxTime: 200 * time.Millisecond}, lw, "20000", "300")[""]
		if n == 0 || n >= full/2 {
			t.Errorf("--max-time: %d events of %d", n, full)
		}
	})
}

func countKind(evs []ev, k trace.Kind) int {
	n := 0
	for _, e := range evs {
		if e.K == k {
			n++
		}
	}
	return n
}

// --no-stack drops the references through the stack pointer: the pushes
// and pops of fib's recursion, and nothing of g.
func TestToolNoStack(t *testing.T) {
	p := buildMarkers(t)
	full, _ := traceProgram(t, p.exe, Options{})
	evs, _ := traceProgram(t, p.exe, Options{NoStack: true})
	if p.gReads(evs, 0, ^uint64(0)) != p.gReads(full, 0, ^uint64(0)) {
		t.Errorf("--no-stack changed the reads of g")
	}
	stackRefs := func(evs []ev) (n int) {
		for _, e := range evs {
			if e.K.IsAccess() && e.PC >= p.fib[0] && e.PC < p.fib[1] {
				n++
			}
		}
		return n
	}
	if n := stackRefs(full); n < 177*2 {
		t.Errorf("fib made only %d references", n)
	}
	if n := stackRefs(evs); n != 0 {
		t.Errorf("fib made %d references with --no-stack (all are pushes and pops)", n)
	}
}

// Every allocation and free the program makes is reported, with its
// routine, address, size and call site; --alloc-fn adds the program's own.
// The mappings it makes with the system call itself (through the C
// library's syscall, called from main) are reported as sys_mmap and
// sys_munmap, with the length unmapped, and so are the dynamic loader's
// (not in main).
func TestToolAllocations(t *testing.T) {
	exe := buildExample(t, "allocs", "-no-pie")
	mainLo, mainHi := symbol(t, exe, "main")
	evs, out := traceProgram(t, exe, Options{AllocFns: []string{"pool_alloc:rsi"}})
	var want, got []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		a, err := strconv.ParseUint(strings.TrimPrefix(f[2], "0x"), 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		line := fmt.Sprintf("%s %s %#x", f[0], f[1], a)
		if len(f) > 3 {
			line += " " + f[3]
		}
		want = append(want, line)
	}
	inMain := func(pc uint64) bool { return pc >= mainLo && pc < mainHi }
	hex := func(s string) uint64 {
		v, _ := strconv.ParseUint(s, 16, 64)
		return v
	}
	for _, e := range evs {
		if e.K != trace.Alloc && e.K != trace.Free {
			continue
		}
		line := fmt.Sprintf("%s %s %#x", e.K, e.X.Name, e.Addr)
		if e.K == trace.Alloc || strings.HasPrefix(e.X.Name, "sys_") {
			line += fmt.Sprint(" ", e.X.Size)
		}
		f := frames(e)
		raw := strings.HasPrefix(e.X.Name, "sys_")
		if raw && !slices.ContainsFunc(f, func(pc string) bool { return inMain(hex(pc)) }) {
			continue // the dynamic loader's
		}
		got = append(got, line)
		if !inMain(e.PC) || len(f) < 2 || f[0] != fmt.Sprintf("%x", e.PC) {
			t.Errorf("%s: call stack %s, want it to start in main [%#x, %#x)", line, e.X.Stack, mainLo, mainHi)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("allocations\n got %q\nwant %q", got, want)
	}
	// The stack depth is configurable, and the stacks can be left out: the
	// same allocations come without them.
	evs, _ = traceProgram(t, exe, Options{StackDepth: 1})
	for _, e := range evs {
		if (e.K == trace.Alloc || e.K == trace.Free) && len(frames(e)) != 1 {
			t.Fatalf("--stack-depth 1: stack %s", e.X.Stack)
		}
	}
	blocks := func(evs []ev) (n int) {
		for _, e := range evs {
			if e.K == trace.Alloc || e.K == trace.Free {
				n++
			}
		}
		return n
	}
	bare, _ := traceProgram(t, exe, Options{NoAllocStacks: true})
	for _, e := range bare {
		if (e.K == trace.Alloc || e.K == trace.Free) && len(frames(e)) != 0 {
			t.Fatalf("NoAllocStacks: %s %s has stack %s", e.K, e.X.Name, e.X.Stack)
		}
	}
	if n, want := blocks(bare), blocks(evs); n != want || n == 0 {
		t.Errorf("NoAllocStacks: %d allocation records, want %d", n, want)
	}
}

const execProg = `
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	char *args[] = {argv[1], "exec", NULL};
	execv("/nonexistent/prog", args); /* fails: tracing goes on */
	printf("after the failed exec\n");
	fflush(stdout);
	if (argv[1][0] == '-')
		return 0;
	execv(argv[1], args);
	return 9;
}
`

// An exec ends the process's stream as a normal end: Exec names the new
// program. A failed exec goes on tracing.
func TestToolExec(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "execs")
	if out, err := exec.Command("gcc", "-O1", "-g", "-o", exe, writeC(t, execProg)).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	for _, tc := range []struct{ arg, exec, out string }{
		{"/bin/echo", "/bin/echo", "after the failed exec\nexec\n"},
		{"-", "", "after the failed exec\n"},
	} {
		run, stdout := startTool(t, exe, Options{}, tc.arg)
		evs, err := drain(t, run)
		if err != nil {
			t.Fatalf("%s: %v", tc.arg, err)
		}
		if st := wait(t, run); st.Code != 0 {
			t.Fatalf("%s: %v", tc.arg, st)
		}
		if got, _ := run.Reader().Exec(); got != tc.exec {
			t.Errorf("%s: Exec() = %q, want %q", tc.arg, got, tc.exec)
		}
		if stdout.String() != tc.out {
			t.Errorf("%s: output %q, want %q", tc.arg, stdout, tc.out)
		}
		// The failed exec's printf is traced: a call into libc after it.
		if n := countKind(evs, trace.Call); n < 10 {
			t.Errorf("%s: %d calls traced", tc.arg, n)
		}
		if run.Reader().Next() != nil {
			t.Errorf("%s: a stream follows the exec without Children", tc.arg)
		}
	}
	// With Children, the exec'd program's stream follows in the same
	// pipe and ring.
	run, stdout := startTool(t, exe, Options{Children: true}, "/bin/echo")
	var counts []int
	for r := run.Reader(); r != nil; r = r.Next() {
		evs, err := readAll(t, r, trace.BatchSize)
		if err != nil {
			t.Fatal(err)
		}
		cmd, _ := r.Command()
		counts = append(counts, len(evs))
		if want := []string{exe + " /bin/echo", "/bin/echo exec"}[min(len(counts)-1, 1)]; cmd != want {
			t.Errorf("stream %d: command %q, want %q", len(counts), cmd, want)
		}
	}
	if st := wait(t, run); st.Code != 0 || stdout.String() != "after the failed exec\nexec\n" {
		t.Errorf("%v, output %q", st, stdout)
	}
	if len(counts) != 2 || counts[1] < 10000 {
		t.Errorf("events of the streams: %v", counts)
	}
}

const forkProg = `
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void)
{
	char *p = malloc(1000);
	pid_t pid = fork();
	if (pid == 0) {
		p[1] = 1; /* the child's own reference */
		execl("/bin/echo", "/bin/echo", "from the child", (char *)NULL);
		return 99;
	}
	int st;
	waitpid(pid, &st, 0);
	printf("child %d\n", WEXITSTATUS(st));
	return 0;
}
`

// With Children, a forked child writes a stream of its own, which goes on
// into the program it execs: the root's stream, the child's and echo's
// each end normally, with their command lines and parents.
func TestToolChildren(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "forks")
	if out, err := exec.Command("gcc", "-O1", "-g", "-o", exe, writeC(t, forkProg)).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	run, stdout := startTool(t, exe, Options{Children: true})
	type proc struct {
		pid, parent int
		cmd, exec   string
		refs        int
	}
	procs := make(chan proc, 8)
	read := func(r *StreamReader) {
		for r != nil {
			evs, err := readAll(t, r, trace.BatchSize)
			if err != nil {
				t.Errorf("stream of %d: %v", r.Pid(), err)
				return
			}
			cmd, parent := r.Command()
			x, _ := r.Exec()
			procs <- proc{r.Pid(), parent, cmd, x, len(evs)}
			next := r.Next()
			if next == nil {
				r.Close()
			}
			r = next
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for c := range run.Children() {
			read(c)
		}
	}()
	read(run.Reader())
	if st := wait(t, run); st.Code != 0 {
		t.Fatalf("%v", st)
	}
	<-done
	close(procs)
	var got []proc
	for p := range procs {
		got = append(got, p)
	}
	if stdout.String() != "from the child\nchild 0\n" {
		t.Errorf("output %q", stdout)
	}
	// The streams come in the order they end.
	slices.SortStableFunc(got, func(a, b proc) int { return cmp.Or(a.pid-b.pid, len(b.exec)-len(a.exec)) })
	if len(got) != 3 {
		t.Fatalf("%d streams: %+v", len(got), got)
	}
	root, child, echo := got[0], got[1], got[2]
	if root.cmd != exe || root.exec != "" || root.pid != run.Pid() || child.cmd != exe || child.parent != root.pid ||
		child.exec != "/bin/echo" || echo.pid != child.pid || echo.cmd != "/bin/echo from the child" || echo.parent != root.pid {
		t.Errorf("streams %+v", got)
	}
	// The child's few references: from fork's return to the exec.
	if root.refs < 10000 || child.refs < 100 || echo.refs < 10000 {
		t.Errorf("events: %+v", got)
	}
}

const fdsProg = `
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
int main(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int below = 0;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.' && atoi(e->d_name) < 1000)
			below++; /* Valgrind's own lie above the program's limit */
	printf("%d open, next %d\n", below, open("/dev/null", O_RDONLY));
	return 0;
}
`

// The program numbers its descriptors as natively: the stream's, the
// control pipe's and Valgrind's log live in Valgrind's own range, also in
// a program exec'd under Children.
func TestToolDescriptors(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "fds")
	if out, err := exec.Command("gcc", "-O1", "-o", exe, writeC(t, fdsProg)).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	native, err := exec.Command(exe).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, opt := range []Options{{}, {Children: true}} {
		for _, argv := range [][]string{{exe}, {"/bin/sh", "-c", "exec " + exe}} {
			if len(argv) > 1 && !opt.Children {
				continue
			}
			run, stdout := startTool(t, argv[0], opt, argv[1:]...)
			for r := run.Reader(); r != nil; r = r.Next() {
				if _, err := readAll(t, r, trace.BatchSize); err != nil {
					t.Fatal(err)
				}
			}
			if st := wait(t, run); st.Code != 0 || stdout.String() != string(native) {
				t.Errorf("%v (children %v): %v, %q; natively %q", argv, opt.Children, st, stdout, native)
			}
		}
	}
}

// A program whose signal handler was installed with SA_ONSTACK (as
// CPython installs every one) and no alternate stack takes the signal at
// a depth of its stack never reached before, its frame reaching pages not
// yet mapped: natively the kernel grows the stack; Valgrind alone kills
// the program with SIGSEGV at half of the depths below (each deeper than
// the last, at another offset within its page).
const sigDeepProg = `
#include <alloca.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
static volatile sig_atomic_t got;
static void on(int s) { got++; }
__attribute__((noinline)) static int deeper(long n) {
	volatile char *p = alloca(n);
	p[n - 1] = 1;
	raise(SIGINT);
	return p[n - 1];
}
int main(void) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGINT, &sa, 0);
	for (int i = 1; i <= 16; i++)
		deeper(i * 65536L + i * 512);
	printf("%d signals handled\n", (int)got);
	return 0;
}
`

func TestToolSignalAtNewDepth(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "sigdeep")
	if out, err := exec.Command("gcc", "-O1", "-fno-stack-clash-protection", "-o", exe, writeC(t, sigDeepProg)).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	native, err := exec.Command(exe).Output()
	if err != nil || string(native) != "16 signals handled\n" {
		t.Fatalf("natively: %q, %v", native, err)
	}
	_, stdout := traceProgram(t, exe, Options{})
	if stdout != string(native) {
		t.Errorf("under the tool: %q; natively %q", stdout, native)
	}
}

// A Go program's heap objects are reported through runtime.mallocgc,
// with their type and their call stack on the goroutine's stack: the
// runtime function that called mallocgc (newobject), then the program's;
// and the runtime's mappings.
func TestToolGoProgram(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "goalloc")
	if out, err := exec.Command("go", "build", "-o", exe, filepath.Join("..", "..", "examples", "goalloc")).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ef, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	syms, err := ef.Symbols()
	ef.Close()
	if err != nil {
		t.Fatal(err)
	}
	in := func(pc uint64, fn string) bool {
		return slices.ContainsFunc(syms, func(s elf.Symbol) bool { return s.Name == fn && pc >= s.Value && pc < s.Value+s.Size })
	}
	evs, out := traceProgram(t, exe, Options{})
	if out != "499500\n" {
		t.Errorf("output %q", out)
	}
	nodes := map[uint64]bool{}
	var nodeType uint64
	for _, e := range evs {
		if e.K != trace.Alloc || e.X.Size != 48 {
			continue
		}
		if e.X.Name != "runtime.mallocgc" {
			t.Fatalf("allocation by %q", e.X.Name)
		}
		st := stackPCs(t, e)
		if len(st) < 2 || !in(st[1], "main.main") {
			continue // the runtime's
		}
		if !in(st[0], "runtime.newobject") {
			t.Fatalf("a node's call stack %s is not newobject's, then main.main's", e.X.Stack)
		}
		if nodeType == 0 {
			nodeType = e.X.Type
		}
		if e.X.Type == 0 || e.X.Type != nodeType {
			t.Fatalf("a node of type %#x, another of %#x", e.X.Type, nodeType)
		}
		nodes[e.Addr] = true
	}
	if len(nodes) < 1000 {
		t.Fatalf("%d allocations of 48-byte nodes, want at least 1000", len(nodes))
	}
	// The walk reads the next pointer of every node.
	read := map[uint64]bool{}
	for _, e := range evs {
		if e.K == trace.Read && nodes[e.Addr] {
			read[e.Addr] = true
		}
	}
	if len(read) < 1000 {
		t.Errorf("%d nodes read at their start, want at least 1000", len(read))
	}
	// The runtime's mappings, made with system calls of its own, are
	// reported with call stacks from Go's frame pointers: runtime.mmap's
	// call of sysMmap, which makes the system call, then the functions
	// that asked for the memory.
	askers := map[string]bool{"runtime.persistentalloc1": false, "runtime.(*mheap).sysAlloc": false}
	for _, e := range evs {
		if e.K != trace.Alloc || e.X.Name != "sys_mmap" {
			continue
		}
		st := stackPCs(t, e)
		if len(st) < 3 || !in(st[0], "runtime.mmap") || e.X.Size == 0 {
			t.Errorf("a mapping of %d bytes, call stack %s: want runtime.mmap's and its callers", e.X.Size, e.X.Stack)
			continue
		}
		for fn := range askers {
			askers[fn] = askers[fn] || slices.ContainsFunc(st, func(pc uint64) bool { return in(pc, fn) })
		}
	}
	for fn, seen := range askers {
		if !seen {
			t.Errorf("no mapping asked for by %s", fn)
		}
	}
}

// stackPCs returns the call stack of allocation event e.
func stackPCs(t *testing.T, e ev) []uint64 {
	t.Helper()
	var st []uint64
	for _, f := range frames(e) {
		pc, err := strconv.ParseUint(f, 16, 64)
		if err != nil {
			t.Fatalf("call stack %q", e.X.Stack)
		}
		st = append(st, pc)
	}
	return st
}

// mapped is an object file reported by a Map event: its .text, its path
// and the index of the event.
type mapped struct {
	lo, hi uint64
	path   string
	at     int
}

// maps returns the objects reported in evs, checking every Map event's
// form, and that each comes before the first event whose PC lies in its
// .text.
func maps(t *testing.T, evs []ev) []mapped {
	t.Helper()
	var objs []mapped
	for i, e := range evs {
		if e.K != trace.Map {
			continue
		}
		if e.PC != 0 || e.X.Size == 0 || !strings.HasPrefix(e.X.Name, "/") || e.Addr+e.X.Size < e.Addr || e.T == 0 {
			t.Errorf("map event %d: %+v", i, e)
		}
		objs = append(objs, mapped{e.Addr, e.Addr + e.X.Size, e.X.Name, i})
	}
	for i, o := range objs {
		if slices.ContainsFunc(objs[:i], func(p mapped) bool { return p.lo < o.hi && o.lo < p.hi }) {
			continue // reported again (unloaded and loaded again)
		}
		first := slices.IndexFunc(evs, func(e ev) bool { return e.PC >= o.lo && e.PC < o.hi })
		if first >= 0 && first < o.at {
			t.Errorf("%s [%#x, %#x) is reported at event %d, after event %d in it: %+v", o.path, o.lo, o.hi, o.at, first, evs[first])
		}
	}
	return objs
}

// checkText checks that o is the .text of the ELF file o.path, loaded at a
// page-aligned bias (0 when not position-independent).
func checkText(t *testing.T, o mapped, pie bool) {
	t.Helper()
	f, err := elf.Open(o.path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	text := f.Section(".text")
	if text == nil {
		t.Fatalf("%s has no .text", o.path)
	}
	bias := o.lo - text.Addr
	if o.hi-o.lo != text.Size || bias%4096 != 0 || (bias != 0) != pie {
		t.Errorf("%s: reported .text [%#x, %#x), the file's is [%#x, %#x) (PIE %v)", o.path, o.lo, o.hi, text.Addr, text.Addr+text.Size, pie)
	}
}

// Every object file is reported before its code runs: a dynamically
// linked program's executable (a PIE, which Valgrind loads at 0x108000)
// and libc; a static program is a single object.
func TestToolMaps(t *testing.T) {
	exe := buildExample(t, "listwalk", "-pie", "-fPIE")
	evs, _ := traceProgram(t, exe, Options{IFetch: true}, "100", "1")
	objs := maps(t, evs)
	var prog, libc []mapped
	for _, o := range objs {
		t.Logf("%s [%#x, %#x) at event %d", o.path, o.lo, o.hi, o.at)
		switch base := filepath.Base(o.path); {
		case o.path == exe:
			prog = append(prog, o)
		case strings.HasPrefix(base, "libc.") || strings.HasPrefix(base, "libc-"):
			libc = append(libc, o)
		}
	}
	if len(prog) != 1 || len(libc) != 1 {
		t.Fatalf("the executable is reported %d times, libc %d times, want once each: %+v", len(prog), len(libc), objs)
	}
	checkText(t, prog[0], true)
	checkText(t, libc[0], true)
	if prog[0].lo < 0x108000 || prog[0].lo >= 0x200000 {
		t.Errorf("the executable's .text at %#x, want it just above 0x108000, where Valgrind loads a PIE", prog[0].lo)
	}
	// Code in both ran, and every fetch lies in a reported object.
	for _, o := range []mapped{prog[0], libc[0]} {
		if !slices.ContainsFunc(evs, func(e ev) bool { return e.K == trace.IFetch && e.PC >= o.lo && e.PC < o.hi }) {
			t.Errorf("no instruction of %s ran", o.path)
		}
	}

	static := buildExample(t, "listwalk", "-static")
	evs, _ = traceProgram(t, static, Options{IFetch: true}, "100", "1")
	objs = maps(t, evs)
	if len(objs) != 1 || objs[0].path != static {
		t.Fatalf("a static program: objects %+v, want %s alone", objs, static)
	}
	checkText(t, objs[0], false)
	// All its code is its own: in its executable segment (which holds
	// .plt and .init beside .text).
	f, err := elf.Open(static)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	inCode := func(pc uint64) bool {
		for _, p := range f.Progs {
			if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 && pc >= p.Vaddr && pc < p.Vaddr+p.Memsz {
				return true
			}
		}
		return false
	}
	for _, e := range evs {
		if e.K == trace.IFetch && !inCode(e.PC) {
			t.Fatalf("a static program: a fetch outside its code: %+v", e)
		}
	}
}

// dlopenProg loads libm, calls cos, unloads it, twice.
const dlopenProg = `#include <dlfcn.h>
#include <stdio.h>
int main(void) {
	for (int i = 0; i < 2; i++) {
		void *h = dlopen("libm.so.6", RTLD_NOW);
		if (h == NULL)
			return 1;
		double (*c)(double) = (double (*)(double))dlsym(h, "cos");
		printf("%.0f\n", c(0));
		dlclose(h);
	}
	return 0;
}
`

// A library unloaded and loaded again is reported again, before its code
// runs again.
func TestToolMapsDlopen(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "dl")
	if out, err := exec.Command("gcc", "-O1", "-o", exe, writeC(t, dlopenProg), "-ldl").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	evs, out := traceProgram(t, exe, Options{IFetch: true})
	if out != "1\n1\n" {
		t.Errorf("output %q", out)
	}
	var libm []mapped
	for _, o := range maps(t, evs) {
		if strings.HasPrefix(filepath.Base(o.path), "libm.") {
			libm = append(libm, o)
		}
	}
	if len(libm) != 2 {
		t.Fatalf("libm reported %d times, want 2 (loaded twice): %+v", len(libm), libm)
	}
	t.Logf("libm at %#x, then %#x", libm[0].lo, libm[1].lo)
	for i, o := range libm {
		end := len(evs)
		if i == 0 {
			end = libm[1].at
		}
		if !slices.ContainsFunc(evs[o.at:end], func(e ev) bool { return e.K == trace.IFetch && e.PC >= o.lo && e.PC < o.hi }) {
			t.Errorf("no code of libm ran after its map event %d", i)
		}
	}
}

// syncProgram is examples/c/sync.c (dynamically linked, so that the
// preload's pthread wrappers engage), with the runtime addresses of its
// variables once its .text is known.
type syncProgram struct {
	exe                string
	threads, n, rounds int
	m                  int
}

func (p syncProgram) args() []string {
	return []string{strconv.Itoa(p.n), strconv.Itoa(p.rounds), strconv.Itoa(p.m)}
}

// Synchronization: sync.c's 4 threads lock a mutex N times, meet at a
// barrier ROUNDS times, add to a counter atomically M times and shake
// hands with the main thread through two condition variables; the main
// thread creates and joins them. Every operation is reported, once, with
// its object, its call site in the program and the thread that made it.
func TestToolSync(t *testing.T) {
	p := syncProgram{exe: buildExample(t, "sync", "-pthread"), threads: 4, n: 100, rounds: 3, m: 50}
	evs, out := traceProgram(t, p.exe, Options{}, p.args()...)
	if want := fmt.Sprintf("%d %d\n", p.threads*p.n, p.threads*p.m); out != want {
		t.Errorf("output %q, want %q", out, want)
	}

	// Where code lies: the executable (a PIE: its variables move with
	// its .text), the C library (libc and the dynamic loader), the
	// preload.
	var prog mapped
	var clib, preload []mapped
	for _, o := range maps(t, evs) {
		switch base := filepath.Base(o.path); {
		case o.path == p.exe:
			prog = o
		case strings.HasPrefix(base, "libc.") || strings.HasPrefix(base, "ld-linux"):
			clib = append(clib, o)
		case strings.HasPrefix(base, "vgpreload_"):
			preload = append(preload, o)
		}
	}
	if prog.hi == 0 || len(clib) < 2 || len(preload) == 0 {
		t.Fatalf("objects: program %+v, C library %+v, preload %+v", prog, clib, preload)
	}
	in := func(objs []mapped, pc uint64) bool {
		return slices.ContainsFunc(objs, func(o mapped) bool { return pc >= o.lo && pc < o.hi })
	}
	f, err := elf.Open(p.exe)
	if err != nil {
		t.Fatal(err)
	}
	bias := prog.lo - f.Section(".text").Addr
	f.Close()
	addr := func(name string) uint64 { return elfSymbol(t, p.exe, name, elf.STT_OBJECT).Value + bias }
	lock, hand, barrier := addr("lock"), addr("hand"), addr("barrier")
	doneCV, goCV, counter := addr("done_cv"), addr("go_cv"), addr("atomic_counter")
	work, _ := symbol(t, p.exe, "work")
	work += bias

	// The main thread is the one that creates.
	main := uint32(0)
	for _, e := range evs {
		if e.K == trace.Sync && e.X.Sync == trace.SyncCreate {
			main = e.T
			break
		}
	}
	type key struct {
		k    trace.SyncKind
		addr uint64
	}
	counts := map[key]int{}
	kinds := map[trace.SyncKind]int{}
	var creates, starts, exits, joins []ev
	startAt := map[uint32]int{} // thread -> index of its start
	waiting := map[uint32]ev{}  // thread -> its cond-wait not woken yet
	atomics, progAtomics, clibLocks := 0, 0, 0
	for i, e := range evs {
		if e.K != trace.Sync {
			continue
		}
		k := e.X.Sync
		if in(preload, e.PC) || e.T == 0 {
			t.Errorf("event %d: %v at PC %#x in the preload (thread %d)", i, k, e.PC, e.T)
		}
		if k == trace.SyncAtomic {
			atomics++
			if i+1 == len(evs) || evs[i+1].K != trace.Modify || evs[i+1].Addr != e.Addr || evs[i+1].PC != e.PC || evs[i+1].T != e.T {
				t.Fatalf("event %d: atomic %+v not followed by its modify: %+v", i, e, evs[min(i+1, len(evs)-1)])
			}
			if in([]mapped{prog}, e.PC) {
				progAtomics++
				if e.Addr != counter || e.T == main {
					t.Errorf("event %d: an atomic of the program at %#x by thread %d, want %#x by a worker", i, e.Addr, e.T, counter)
				}
			}
			continue
		}
		if !in([]mapped{prog}, e.PC) {
			// The C library's own locking: the dynamic loader's lock
			// around a new thread's TLS and at exit.
			if !in(clib, e.PC) || (k != trace.SyncAcquire && k != trace.SyncRelease) {
				t.Errorf("event %d: %v at %#x, PC %#x outside the program and the C library's locks", i, k, e.Addr, e.PC)
			}
			clibLocks++
			continue
		}
		kinds[k]++
		counts[key{k, e.Addr}]++
		worker := e.T != main && e.T != 0
		switch k {
		case trace.SyncCreate:
			creates = append(creates, e)
		case trace.SyncStart:
			starts = append(starts, e)
			if _, dup := startAt[e.T]; dup || !worker || e.PC != work {
				t.Errorf("event %d: start %+v (the thread's routine is at %#x)", i, e, work)
			}
			startAt[e.T] = i
		case trace.SyncExit:
			exits = append(exits, e)
		case trace.SyncJoin:
			joins = append(joins, e)
		case trace.SyncBarrierArrive:
			if e.X.Size != uint64(p.threads) || !worker {
				t.Errorf("event %d: barrier arrival %+v, want count %d by a worker", i, e, p.threads)
			}
		case trace.SyncCondWait:
			if _, dup := waiting[e.T]; dup || e.X.Size != hand || worker != (e.Addr == goCV) {
				t.Errorf("event %d: cond-wait %+v", i, e)
			}
			waiting[e.T] = e
		case trace.SyncCondWake:
			if w, ok := waiting[e.T]; !ok || w.Addr != e.Addr || e.X.Size != hand {
				t.Errorf("event %d: cond-wake %+v after wait %+v", i, e, w)
			}
			delete(waiting, e.T)
		case trace.SyncCondSignal:
			if worker != (e.Addr == doneCV) {
				t.Errorf("event %d: cond-signal %+v", i, e)
			}
		}
		if k != trace.SyncStart && k != trace.SyncCreate && k != trace.SyncJoin && k != trace.SyncExit && e.X.Size != 0 &&
			k != trace.SyncBarrierArrive && k != trace.SyncCondWait && k != trace.SyncCondWake {
			t.Errorf("event %d: %v with Ext.Size %d", i, k, e.X.Size)
		}
	}
	t.Logf("in the program: %v; %d atomics (%d in the program); %d lock operations of the C library", kinds, atomics, progAtomics, clibLocks)

	// Locks: the counter's, and the handshake's (each worker once, the
	// main thread once); cond-waits release and take the mutex inside.
	want := map[key]int{
		{trace.SyncAcquire, lock}: p.threads * p.n, {trace.SyncRelease, lock}: p.threads * p.n,
		{trace.SyncAcquire, hand}: p.threads + 1, {trace.SyncRelease, hand}: p.threads + 1,
		{trace.SyncBarrierArrive, barrier}: p.threads * p.rounds, {trace.SyncBarrierLeave, barrier}: p.threads * p.rounds,
		{trace.SyncCondSignal, doneCV}: p.threads, {trace.SyncCondSignal, goCV}: 1,
	}
	for k, n := range want {
		if counts[k] != n {
			t.Errorf("%v of %#x: %d, want %d", k.k, k.addr, counts[k], n)
		}
	}
	if kinds[trace.SyncCondWait] != kinds[trace.SyncCondWake] || len(waiting) != 0 {
		t.Errorf("%d cond-waits, %d cond-wakes", kinds[trace.SyncCondWait], kinds[trace.SyncCondWake])
	}
	if progAtomics != p.threads*p.m || atomics < progAtomics {
		t.Errorf("%d atomics in the program, want %d (%d in all)", progAtomics, p.threads*p.m, atomics)
	}

	// Threads: create, start, exit and join once per thread; the starts
	// name the creates' tokens in order, the exits and joins the handles
	// the starts give.
	if len(creates) != p.threads || len(starts) != p.threads || len(exits) != p.threads || len(joins) != p.threads {
		t.Fatalf("%d creates, %d starts, %d exits, %d joins, want %d each", len(creates), len(starts), len(exits), len(joins), p.threads)
	}
	handles := map[uint64]uint32{} // handle -> thread
	for i, s := range starts {
		c := creates[i]
		if c.Addr != s.Addr || c.T != main || c.X.Size != 0 || s.X.Size == 0 {
			t.Errorf("create %+v, start %+v", c, s)
		}
		handles[s.X.Size] = s.T
	}
	exited := map[uint64]int{}
	for _, e := range exits {
		if th, ok := handles[e.Addr]; !ok || th != e.T || e.PC != work {
			t.Errorf("exit %+v: no start of that handle by that thread", e)
		}
		exited[e.Addr]++
	}
	for _, j := range joins {
		if j.T != main || exited[j.Addr] != 1 {
			t.Errorf("join %+v of a thread that did not exit once", j)
		}
	}
	for i, e := range evs {
		if at, ok := startAt[e.T]; ok && i < at {
			t.Fatalf("event %d of thread %d comes before its start (event %d): %+v", i, e.T, at, e)
		}
	}
	// After its exit a thread runs the thread library's exit path only:
	// none of its events is in the program's code.
	for _, x := range exits {
		after := false
		for _, e := range evs {
			switch {
			case e.T != x.T:
			case e == x:
				after = true
			case after && in([]mapped{prog}, e.PC):
				t.Errorf("thread %d: %+v in the program after its exit", x.T, e)
			}
		}
		if !after {
			t.Errorf("thread %d: its exit %+v is not among its events", x.T, x)
		}
	}
}

// countingReader counts the references its reader delivers.
type countingReader struct {
	trace.Reader
	refs int
}

func (c *countingReader) Read(b *trace.Batch) error {
	err := c.Reader.Read(b)
	c.refs += b.Len() - len(b.Ext)
	return err
}

// --max-events counts references only, as trace.Window does: the tool
// stops after the buffer that reached the limit, which then holds at least
// as many references as the window keeps; synchronization events (SYNC
// records, the sync event of an atomic) do not count, and a window never
// separates an atomic from its modify.
func TestToolSyncMaxEvents(t *testing.T) {
	p := syncProgram{exe: buildExample(t, "sync", "-pthread"), threads: 4, n: 10000, rounds: 30, m: 10000}
	lib := toolLib(t)
	full := toolCounts(t, Options{ValgrindLib: lib}, p.exe, p.args()...)[""]
	const max = 400_000
	run, err := Start(p.exe, p.args(), Options{ValgrindLib: lib, MaxEvents: max, Stdout: io.Discard, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	raw := &countingReader{Reader: run.Reader()}
	w := trace.Window(raw, 0, max, true)
	b := trace.NewBatch(trace.BatchSize)
	refs, syncs := 0, 0
	atomic := false // the last event is an atomic's sync event
	for {
		err := w.Read(b)
		for i, k := range b.Kind {
			if atomic && k != trace.Modify {
				t.Fatalf("an atomic followed by a %v", k)
			}
			atomic = false
			if !k.IsExtended() {
				refs++
			} else if k == trace.Sync {
				syncs++
				atomic = b.ExtOf(i).Sync == trace.SyncAtomic
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if atomic {
		t.Errorf("the window ends with an atomic's sync event")
	}
	if st := wait(t, run); st.Code != 0 {
		t.Fatalf("%v", st)
	}
	t.Logf("%d events in all; the tool wrote %d references, the window kept %d and %d sync events", full, raw.refs, refs, syncs)
	if refs != max || raw.refs < max || raw.refs >= full-2*max || syncs == 0 {
		t.Errorf("the window kept %d references (want %d), the tool wrote %d of %d events", refs, max, raw.refs, full)
	}
}

// wrapsProg calls every function the preload wraps once (or twice), and
// prints its objects' addresses.
const wrapsProg = `#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <time.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_spinlock_t s;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t b;
static void *quit(void *arg) { pthread_exit(arg); }
int main(void) {
	struct timespec past = {0, 0}, far = {1L << 40, 0};
	pthread_mutex_trylock(&m);
	pthread_mutex_trylock(&m);           /* busy: no acquire */
	pthread_mutex_unlock(&m);
	pthread_mutex_timedlock(&m, &far);
	pthread_mutex_unlock(&m);
	pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &far);
	pthread_mutex_unlock(&m);
	pthread_spin_init(&s, 0);            /* glibc: the same function as unlock */
	pthread_spin_lock(&s);
	pthread_spin_unlock(&s);
	pthread_spin_trylock(&s);
	pthread_spin_trylock(&s);            /* busy */
	pthread_spin_unlock(&s);
	pthread_rwlock_rdlock(&rw);
	pthread_rwlock_unlock(&rw);
	pthread_rwlock_tryrdlock(&rw);
	pthread_rwlock_unlock(&rw);
	pthread_rwlock_timedrdlock(&rw, &far);
	pthread_rwlock_unlock(&rw);
	pthread_rwlock_clockrdlock(&rw, CLOCK_MONOTONIC, &far);
	pthread_rwlock_unlock(&rw);
	pthread_rwlock_wrlock(&rw);
	pthread_rwlock_trywrlock(&rw);       /* busy */
	pthread_rwlock_unlock(&rw);
	pthread_rwlock_trywrlock(&rw);
	pthread_rwlock_unlock(&rw);
	pthread_rwlock_timedwrlock(&rw, &far);
	pthread_rwlock_unlock(&rw);
	pthread_rwlock_clockwrlock(&rw, CLOCK_MONOTONIC, &far);
	pthread_rwlock_unlock(&rw);
	pthread_mutex_lock(&m);
	pthread_cond_timedwait(&c, &m, &past);
	pthread_cond_clockwait(&c, &m, CLOCK_MONOTONIC, &past);
	pthread_mutex_unlock(&m);
	pthread_cond_signal(&c);
	pthread_cond_broadcast(&c);
	pthread_barrier_init(&b, NULL, 1);
	pthread_barrier_wait(&b);
	pthread_t t;
	pthread_create(&t, NULL, quit, NULL);
	pthread_join(t, NULL);
	printf("%p %p %p %p %p\n", (void *)&m, (void *)&s, (void *)&rw, (void *)&c, (void *)&b);
	return 0;
}
`

// Every wrapper engages (the functions of several versions included),
// reports an acquisition only when the lock was obtained, and gives the
// call site in the program.
func TestToolSyncWrappers(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "wraps")
	if out, err := exec.Command("gcc", "-O1", "-g", "-pthread", "-o", exe, writeC(t, wrapsProg)).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	evs, out := traceProgram(t, exe, Options{})
	names := map[uint64]string{}
	var addrs [5]uint64
	if _, err := fmt.Sscanf(out, "%v %v %v %v %v", &addrs[0], &addrs[1], &addrs[2], &addrs[3], &addrs[4]); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	for i, n := range []string{"m", "s", "rw", "c", "b"} {
		names[addrs[i]] = n
	}
	var prog mapped
	for _, o := range maps(t, evs) {
		if o.path == exe {
			prog = o
		}
	}
	var got []string
	for _, e := range evs {
		if e.K != trace.Sync || e.X.Sync == trace.SyncAtomic || e.PC < prog.lo || e.PC >= prog.hi {
			continue
		}
		s := e.X.Sync.String()
		switch e.X.Sync {
		case trace.SyncCreate, trace.SyncStart, trace.SyncExit, trace.SyncJoin:
		case trace.SyncCondWait, trace.SyncCondWake:
			s += fmt.Sprintf(" %s %s", names[e.Addr], names[e.X.Size])
		default:
			s += fmt.Sprintf(" %s %d", names[e.Addr], e.X.Size)
		}
		got = append(got, s)
	}
	want := []string{
		"acquire m 0", "release m 0", "acquire m 0", "release m 0", "acquire m 0", "release m 0",
		"release s 0", "acquire s 0", "release s 0", "acquire s 0", "release s 0",
		"acquire rw 1", "release rw 0", "acquire rw 1", "release rw 0", "acquire rw 1", "release rw 0", "acquire rw 1", "release rw 0",
		"acquire rw 0", "release rw 0", "acquire rw 0", "release rw 0", "acquire rw 0", "release rw 0", "acquire rw 0", "release rw 0",
		"acquire m 0", "cond-wait c m", "cond-wake c m", "cond-wait c m", "cond-wake c m", "release m 0",
		"cond-signal c 0", "cond-signal c 0",
		"barrier-arrive b 1", "barrier-leave b 0",
		"create", "start", "exit", "join",
	}
	if !slices.Equal(got, want) {
		t.Errorf("sync events\n got %q\nwant %q", got, want)
	}
}

// numberThreads renumbers the threads of evs by first appearance: thread
// ids differ between runs.
func numberThreads(evs []ev) {
	tids := map[uint32]uint32{}
	for i := range evs {
		if _, ok := tids[evs[i].T]; !ok {
			tids[evs[i].T] = uint32(len(tids))
		}
		evs[i].T = tids[evs[i].T]
	}
}

// streamCase is an example that sameEvents traces two ways.
type streamCase struct {
	name   string
	args   []string
	extra  []string // gcc arguments
	shrink float64  // the stream is at most this fraction of the stream traced with base
}

// sameEvents builds each case's example statically (the dynamic loader's
// work differs from run to run), traces it with base and with opt (both
// describing instruction fetches), calling each, if not nil, on every run,
// and checks that the events are the same, threads numbered by first
// appearance, in a stream at most shrink times as long. how names opt in
// messages.
func sameEvents(t *testing.T, how string, base, opt Options, each func(*testing.T, *Run), cases []streamCase) {
	trace := func(t *testing.T, exe string, opt Options, args ...string) ([]ev, int64) {
		t.Helper()
		opt.IFetch = true
		evs, _, run := traceRun(t, exe, opt, args...)
		if each != nil {
			each(t, run)
		}
		numberThreads(evs)
		return evs, run.Reader().Offset()
	}
	for _, tc := range cases {
		t.Run(strings.Join(append([]string{tc.name}, tc.args...), " "), func(t *testing.T) {
			exe := buildExample(t, tc.name, append(tc.extra, "-static")...)
			want, full := trace(t, exe, base, tc.args...)
			got, short := trace(t, exe, opt, tc.args...)
			for i := range min(len(got), len(want)) {
				if got[i] != want[i] {
					t.Fatalf("event %d is %+v %s, %+v without", i, got[i], how, want[i])
				}
			}
			if len(got) != len(want) {
				t.Fatalf("%d events %s, %d without", len(got), how, len(want))
			}
			if float64(short) > tc.shrink*float64(full) {
				t.Errorf("the stream is %d bytes %s, %d without: want at most %.0f%%", short, how, full, 100*tc.shrink)
			}
			t.Logf("%d events; stream %d bytes %s, %d without", len(got), short, how, full)
		})
	}
}

// Derived addresses (--derive, the default) change no event: every example
// gives exactly the events it gives with an address word per data entry,
// in a stream that is shorter.
func TestToolDerived(t *testing.T) {
	sameEvents(t, "with derived addresses", Options{ToolArgs: []string{"--derive=no"}}, Options{}, nil, []streamCase{
		{"matmul", []string{"48"}, []string{"-O2"}, 0.5},
		{"matmul", []string{"48", "16"}, []string{"-O3", "-march=x86-64-v2"}, 0.7},
		{"listwalk", []string{"2000", "3"}, []string{"-O2"}, 0.9},
		{"allocs", nil, nil, 1},
		{"markers", nil, nil, 1},
	})
}
