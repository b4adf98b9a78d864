package valgrind

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memspy/memspy/trace"
	vt "github.com/memspy/memspy/tracer/valgrind/valgrindtest"
)

// The test binary doubles as a fake valgrind (see valgrindtest.FakeValgrind)
// when MEMSPY_TEST_FAKE_VALGRIND=1.
func TestMain(m *testing.M) {
	if os.Getenv("MEMSPY_TEST_FAKE_VALGRIND") == "1" {
		os.Exit(vt.FakeValgrind())
	}
	os.Exit(m.Run())
}

// drain reads the run's stream to its end and returns the events.
func drain(t *testing.T, run *Run) ([]ev, error) {
	t.Helper()
	done := make(chan struct{})
	var evs []ev
	var err error
	go func() {
		defer close(done)
		evs, err = readAll(t, run.Reader(), trace.BatchSize)
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the stream does not end")
	}
	return evs, err
}

// readAllOK reads run's stream to its end, handing each batch to each, and
// fails t unless the program then exits with status 0.
func readAllOK(t *testing.T, run *Run, exe string, each func(b *trace.Batch)) {
	t.Helper()
	b := trace.NewBatch(trace.BatchSize)
	for {
		err := run.Reader().Read(b)
		each(b)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if st := wait(t, run); st.Code != 0 {
		t.Fatalf("%s: %v", exe, st)
	}
}

func wait(t *testing.T, run *Run) ExitStatus {
	t.Helper()
	type result struct {
		st  ExitStatus
		err error
	}
	ch := make(chan result, 1)
	go func() {
		st, err := run.Wait()
		ch <- result{st, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("Wait: %v", r.err)
		}
		return r.st
	case <-time.After(2 * time.Minute):
		t.Fatal("Wait hangs")
	}
	return ExitStatus{}
}

// fake returns options that run the test binary as a fake valgrind with
// the given mode (see valgrindtest.FakeValgrind).
func fake(t *testing.T, mode string, execs int) Options {
	t.Setenv("MEMSPY_TEST_FAKE_VALGRIND", "1")
	t.Setenv("MEMSPY_FAKE_MODE", mode)
	t.Setenv("MEMSPY_FAKE_EXECS", strconv.Itoa(execs))
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	lib := fakeLib(t)
	return Options{Valgrind: exe, ValgrindLib: lib, Stdout: io.Discard, Stderr: io.Discard}
}

// fakeLib returns a tool directory holding files in place of the tool (its
// version tag only) and its preload (empty).
func fakeLib(t *testing.T) string {
	return fakeLibVersion(t, StreamVersion)
}

// fakeLibVersion is fakeLib with a tool of stream version v (0: no tag).
func fakeLibVersion(t *testing.T, v int) string {
	lib := t.TempDir()
	tool := ""
	if v > 0 {
		tool = fmt.Sprintf("\x7fELF...%s%d\x00...", toolVersionTag, v)
	}
	if err := os.WriteFile(filepath.Join(lib, ToolFile), []byte(tool), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lib, PreloadFile), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	return lib
}

func TestFakeRun(t *testing.T) {
	for _, ifetch := range []bool{false, true} {
		opt := fake(t, "", 100)
		opt.IFetch = ifetch
		argsFile := filepath.Join(t.TempDir(), "args")
		t.Setenv("MEMSPY_FAKE_ARGS", argsFile)
		var out bytes.Buffer
		opt.Stdout = &out
		opt.Stdin = strings.NewReader("hello\n")
		run, err := Start("sh", []string{"-c", "cat; exit 3"}, opt)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := drain(t, run)
		if err != nil {
			t.Fatal(err)
		}
		st := wait(t, run)
		if st != (ExitStatus{Code: 3}) || st.String() != "exit code 3" || st.ShellCode() != 3 {
			t.Errorf("status %+v (%v)", st, st)
		}
		want := 100 * vt.FakeDataEvents
		if ifetch {
			want = 100 * vt.FakeEvents
		}
		if len(evs) != want {
			t.Errorf("ifetch %v: %d events, want %d", ifetch, len(evs), want)
		}
		if code, ok := run.Reader().Ended(); !ok || code != 3 {
			t.Errorf("Ended() = %d, %v", code, ok)
		}
		if run.Reader().Pid() != run.Pid() {
			t.Errorf("stream pid %d, process %d", run.Reader().Pid(), run.Pid())
		}
		if out.String() != "hello\n" {
			t.Errorf("the program's output is %q", out.String())
		}
		args, _ := os.ReadFile(argsFile)
		if strings.Contains(string(args), "--ifetch=yes") != ifetch || !strings.Contains(string(args), "-q\n--vex-iropt-unroll-thresh=400\n--out-fd=3\n") ||
			!strings.HasSuffix(string(args), "--\nsh\n-c\ncat; exit 3\n") {
			t.Errorf("valgrind's arguments:\n%s", args)
		}
	}
}

func TestFakeSignal(t *testing.T) {
	run, err := Start("sh", []string{"-c", "kill -s SEGV $$"}, fake(t, "noend", 10))
	if err != nil {
		t.Fatal(err)
	}
	evs, err := drain(t, run)
	if !errors.Is(err, ErrNoEnd) || len(evs) != 10*vt.FakeDataEvents {
		t.Errorf("%d events, error %v", len(evs), err)
	}
	st := wait(t, run)
	if st.Signal != syscall.SIGSEGV || st.String() != "killed by signal SIGSEGV" || st.ShellCode() != 128+11 {
		t.Errorf("status %+v (%v)", st, st)
	}
}

// A corrupt stream stops the tool at once: the program is killed.
func TestFakeCorrupt(t *testing.T) {
	run, err := Start("sleep", []string{"60"}, fake(t, "corrupt", 10))
	if err != nil {
		t.Fatal(err)
	}
	evs, err := drain(t, run)
	if !errors.Is(err, ErrCorrupt) || len(evs) != 10*vt.FakeDataEvents {
		t.Errorf("%d events, error %v", len(evs), err)
	}
	if st := wait(t, run); st.Signal != syscall.SIGKILL {
		t.Errorf("status %v", st)
	}
}

func TestFakeVersion(t *testing.T) {
	opt := fake(t, "version", 10)
	run, err := Start("true", nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	_, err = drain(t, run)
	if !errors.Is(err, ErrVersion) || !strings.Contains(err.Error(), fmt.Sprintf("in %s speaks stream version %d, this memspy reads version %d", opt.ValgrindLib, StreamVersion+1, StreamVersion)) ||
		!strings.Contains(err.Error(), "disagree") {
		t.Errorf("error %v", err)
	}
	wait(t, run)
}

// Wait without reading the stream to its end kills the tool rather than
// waiting for it to write into a full pipe forever.
func TestFakeWaitEarly(t *testing.T) {
	run, err := Start("sleep", []string{"60"}, fake(t, "", 100_000))
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Reader().Read(trace.NewBatch(10)); err != nil {
		t.Fatal(err)
	}
	if st := wait(t, run); st.Signal != syscall.SIGKILL {
		t.Errorf("status %v", st)
	}
}

// A forwarded signal reaches the program; the stream ends and the status
// says what killed it.
func TestFakeForward(t *testing.T) {
	run, err := Start("sleep", []string{"60"}, fake(t, "", 10))
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Reader().Read(trace.NewBatch(10)); err != nil {
		t.Fatal(err)
	}
	if err := run.Forward(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	evs, err := drain(t, run)
	if err != nil || len(evs) != 10*vt.FakeDataEvents-10 {
		t.Errorf("%d more events, error %v", len(evs), err)
	}
	if st := wait(t, run); st.Signal != syscall.SIGTERM {
		t.Errorf("status %v", st)
	}
}

func TestStartErrors(t *testing.T) {
	lib, oldLib, untagged := fakeLib(t), fakeLibVersion(t, 3), fakeLibVersion(t, 0)
	dir := t.TempDir()
	notExec := filepath.Join(dir, "data.txt")
	os.WriteFile(notExec, []byte("x"), 0o644)
	for _, tc := range []struct {
		name, prog string
		opt        Options
		want       string
	}{
		{"no tool", "true", Options{ValgrindLib: dir}, "the memspy Valgrind tool is not built (no " + ToolFile + " in " + dir + "): run make"},
		{"old tool", "true", Options{ValgrindLib: oldLib}, "the memspy Valgrind tool in " + oldLib + " speaks stream version 3, this memspy reads version " + strconv.Itoa(StreamVersion) + ": the tool and memspy disagree, rebuild both with make"},
		{"untagged tool", "true", Options{ValgrindLib: untagged}, "the memspy Valgrind tool in " + untagged + " does not say its stream version (it is older than this memspy, which reads version " + strconv.Itoa(StreamVersion) + "): rebuild both with make"},
		{"not found", "./nosuch", Options{ValgrindLib: lib}, "program not found: ./nosuch"},
		{"not in PATH", "nosuch-memspy-prog", Options{ValgrindLib: lib}, "program not found: nosuch-memspy-prog (not in PATH; give its path, e.g. ./nosuch-memspy-prog)"},
		{"not executable", notExec, Options{ValgrindLib: lib}, notExec + " is not executable"},
		{"directory", dir, Options{ValgrindLib: lib}, dir + " is a directory, not a program"},
		{"valgrind", "true", Options{ValgrindLib: lib, Valgrind: "/nosuch/valgrind"}, "valgrind /nosuch/valgrind: exec: \"/nosuch/valgrind\": stat /nosuch/valgrind: no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.opt.Valgrind == "" {
				if _, err := os.Stat("/usr/bin/valgrind"); err != nil {
					t.Skip("valgrind is not installed")
				}
			}
			_, err := Start(tc.prog, nil, tc.opt)
			if err == nil || err.Error() != tc.want {
				t.Errorf("got %v\nwant %s", err, tc.want)
			}
		})
	}
	t.Run("no valgrind", func(t *testing.T) {
		t.Setenv("MEMSPY_VALGRIND", "")
		t.Setenv("PATH", t.TempDir())
		_, err := Start("/bin/true", nil, Options{ValgrindLib: lib})
		want := "valgrind is not installed: apt-get install valgrind (or make, which installs it)"
		if err == nil || err.Error() != want {
			t.Errorf("got %v\nwant %s", err, want)
		}
	})
}

func TestDefaultLib(t *testing.T) {
	t.Setenv("MEMSPY_VALGRIND_LIB", "/x/y")
	if d := DefaultLib(); d != "/x/y" {
		t.Errorf("DefaultLib() = %s with MEMSPY_VALGRIND_LIB set", d)
	}
	t.Setenv("MEMSPY_VALGRIND_LIB", "")
	exe, _ := os.Executable()
	exe, _ = filepath.EvalSymlinks(exe)
	if d := DefaultLib(); d != filepath.Join(filepath.Dir(exe), "valgrind") {
		t.Errorf("DefaultLib() = %s", d)
	}
}

// The rest needs the built tool (toolLib skips without it).

const knownProg = `
#include <stdio.h>
volatile long a[1000];
int main(void) {
	printf("%p\n", (void *)a);
	fflush(stdout);
	for (int i = 0; i < 1000; i++)
		a[i] = i;
	long s = 0;
	for (int i = 0; i < 1000; i++)
		s += a[i];
	return s == 499500 ? 3 : 1;
}
`

func writeC(t *testing.T, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "prog.c")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A program that writes and reads an array of 1000 longs and exits 3:
// exactly those references fall in the array, and the status is 3.
func TestRunKnownProgram(t *testing.T) {
	lib := toolLib(t)
	exe := buildC(t, writeC(t, knownProg))
	for _, ifetch := range []bool{false, true} {
		var out bytes.Buffer
		run, err := Start(exe, nil, Options{ValgrindLib: lib, IFetch: ifetch, Stdout: &out})
		if err != nil {
			t.Fatal(err)
		}
		evs, err := drain(t, run)
		if err != nil {
			t.Fatal(err)
		}
		st := wait(t, run)
		if st != (ExitStatus{Code: 3}) {
			t.Errorf("status %v, want exit code 3", st)
		}
		if _, ok := run.Reader().Ended(); !ok {
			t.Error("no END record")
		}
		base, err := strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(out.String(), "0x")), 16, 64)
		if err != nil {
			t.Fatalf("the program printed %q", out.String())
		}
		counts := map[trace.Kind]int{}
		ifetches := 0
		for _, e := range evs {
			if e.K == trace.IFetch {
				ifetches++
				if e.Addr != e.PC || e.Size == 0 || e.Size > 15 {
					t.Fatalf("bad instruction fetch %+v", e)
				}
			}
			if e.K != trace.IFetch && e.Addr >= base && e.Addr < base+8000 {
				counts[e.K]++
				if e.Size != 8 || e.Addr%8 != 0 || e.T == 0 {
					t.Errorf("bad reference to the array: %+v", e)
				}
			}
		}
		if counts[trace.Write] != 1000 || counts[trace.Read] != 1000 || counts[trace.Modify] != 0 {
			t.Errorf("references to the array: %v, want 1000 reads and 1000 writes", counts)
		}
		if (ifetches > 0) != ifetch {
			t.Errorf("ifetch %v: %d instruction fetches", ifetch, ifetches)
		}
	}
}

// A program killed by SIGSEGV: the events before the crash arrive and the
// status names the signal.
func TestRunSegfault(t *testing.T) {
	lib := toolLib(t)
	exe := buildC(t, filepath.Join("..", "..", "examples", "c", "segv.c"))
	var out, errOut bytes.Buffer
	run, err := Start(exe, []string{"5000"}, Options{ValgrindLib: lib, Stdout: &out, Stderr: &errOut})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := drain(t, run)
	if err != nil && !errors.Is(err, ErrNoEnd) {
		t.Fatal(err)
	}
	st := wait(t, run)
	if st.Signal != syscall.SIGSEGV || st.ShellCode() != 139 {
		t.Errorf("status %v, want killed by SIGSEGV", st)
	}
	writes := 0
	for _, e := range evs {
		if e.K == trace.Write && e.Size == 4 {
			writes++
		}
	}
	if writes < 5000 {
		t.Errorf("%d 4-byte writes, want at least 5000", writes)
	}
	if out.String() != "about to crash\n" {
		t.Errorf("stdout %q", out.String())
	}
}
