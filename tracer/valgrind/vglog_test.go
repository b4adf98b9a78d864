package valgrind

import (
	"bytes"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
)

// What valgrind 3.19 -q --sigill-diagnostics=yes says when a program runs
// vpaddd %zmm0,%zmm0,%zmm0.
const avx512Log = `vex amd64->IR: unhandled instruction bytes: 0x62 0xF1 0x7D 0x48 0xFE 0xC0 0x48 0x8D 0x3D 0x99
vex amd64->IR:   REX=0 REX.W=0 REX.R=0 REX.X=0 REX.B=0
vex amd64->IR:   VEX=0 VEX.L=0 VEX.nVVVV=0x0 ESC=NONE
vex amd64->IR:   PFX.66=0 PFX.F2=0 PFX.F3=0
==19752== valgrind: Unrecognised instruction at address 0x109165.
==19752==    at 0x109165: main (avx512.c:5)
==19752== Your program just tried to execute an instruction that Valgrind
==19752== did not recognise.  There are two possible reasons for this.
==19752== 
==19752== Process terminating with default action of signal 4 (SIGILL)
==19752==  Illegal opcode at address 0x109165
==19752==    at 0x109165: main (avx512.c:5)
`

// logThrough passes text through a vgLog in pieces of n bytes and returns
// what came out and the log.
func logThrough(t *testing.T, text string, n int) (string, *vgLog) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	l := startLog(r, &out)
	for s := text; s != ""; s = s[min(n, len(s)):] {
		if _, err := w.Write([]byte(s[:min(n, len(s))])); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	<-l.done
	return out.String(), l
}

// Valgrind's messages pass unchanged, however they are cut; the AVX-512
// instruction is recognised with where it was.
func TestLogAVX512(t *testing.T) {
	for _, n := range []int{1, 7, 64, len(avx512Log)} {
		out, l := logThrough(t, avx512Log, n)
		if out != avx512Log {
			t.Errorf("pieces of %d: the messages came out as\n%s", n, out)
		}
		if ok, where, pid := l.avx512(); !ok || where != "0x109165: main (avx512.c:5)" || pid != 19752 {
			t.Errorf("pieces of %d: avx512() = %v, %q, %d", n, ok, where, pid)
		}
	}
}

func TestLogNotAVX512(t *testing.T) {
	for _, tc := range []struct {
		log  string
		want bool
	}{
		{"vex amd64->IR: unhandled instruction bytes: 0x67 0x62 0xF1 0x7D 0x48\n", true},                                          // address-size prefix
		{"vex amd64->IR: unhandled instruction bytes: 0xC4 0xE2 0x79 0xB4 0x00\n", false},                                         // VEX, not EVEX
		{"vex amd64->IR: unhandled instruction bytes: 0x66 0x62 0xF1 0x7D 0x48\n", false},                                         // 0x66 0x62 is not EVEX
		{"==1== valgrind: Unrecognised instruction at address 0x109165.\n", false},                                                // the bytes were not shown
		{"vex amd64->IR: unhandled instruction bytes: 0x62 0xF1\nvex amd64->IR: unhandled instruction bytes: 0x0F 0x0B\n", false}, // the last one counts
		{"program output: unhandled instruction bytes: 0x62\n", false},
	} {
		_, l := logThrough(t, tc.log, 5)
		if ok, _, _ := l.avx512(); ok != tc.want {
			t.Errorf("%q: avx512 %v, want %v", tc.log, ok, tc.want)
		}
	}
}

const avx512Prog = `
#include <stdio.h>
int main(void) {
	printf("before\n");
	fflush(stdout);
	__asm__ volatile("vpaddd %%zmm0, %%zmm0, %%zmm0" ::: "xmm0");
	printf("after\n");
	return 0;
}
`

// runSIGILL runs exe under the tool to its end, its output to stdout and
// stderr, and fails t unless SIGILL killed it.
func runSIGILL(t *testing.T, exe string, stdout, stderr io.Writer) (*Run, ExitStatus) {
	t.Helper()
	run, err := Start(exe, nil, Options{ValgrindLib: toolLib(t), Stdout: stdout, Stderr: stderr})
	if err != nil {
		t.Fatal(err)
	}
	drain(t, run)
	st := wait(t, run)
	if st.Signal != syscall.SIGILL {
		t.Fatalf("status %v, want killed by SIGILL", st)
	}
	return run, st
}

// A program that runs an AVX-512 instruction dies of SIGILL under
// Valgrind, whatever the processor: Unsupported says why and where, and
// Valgrind's messages still reach the program's standard error.
func TestRunAVX512(t *testing.T) {
	exe := buildC(t, writeC(t, avx512Prog), "-mavx512f")
	var out, errOut bytes.Buffer
	run, st := runSIGILL(t, exe, &out, &errOut)
	err := run.Unsupported(st)
	want := exe + " executed an AVX-512 instruction at 0x"
	if err == nil || !strings.HasPrefix(err.Error(), want) ||
		!strings.Contains(err.Error(), ": main (prog.c:6), which Valgrind, and so memspy, cannot run: rebuild it without AVX-512 (e.g. with -march=x86-64-v3") {
		t.Errorf("Unsupported: %v", err)
	}
	if out.String() != "before\n" {
		t.Errorf("stdout %q", out.String())
	}
	if !strings.Contains(errOut.String(), "Process terminating with default action of signal 4 (SIGILL)") {
		t.Errorf("Valgrind's messages are missing from stderr:\n%s", errOut.String())
	}
}

// Another illegal instruction (ud2, which Valgrind decodes) is not
// explained as AVX-512.
func TestRunIllegal(t *testing.T) {
	exe := buildC(t, writeC(t, "int main(void) { __builtin_trap(); }\n"))
	run, st := runSIGILL(t, exe, &bytes.Buffer{}, &bytes.Buffer{})
	if err := run.Unsupported(st); err != nil {
		t.Errorf("Unsupported: %v", err)
	}
}

// The messages of a valgrind whose program left a process holding their
// pipe open are all out once caughtUp returns, without waiting for that
// process; the copy goes on for it.
func TestLogHeldOpen(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var out lockedWriter
	var buf bytes.Buffer
	out.w = &buf
	l := startLog(r, &out)
	msg := strings.Repeat("==1== message\n", 10000)
	w.Write([]byte(msg))
	l.caughtUp()
	out.mu.Lock()
	got := buf.String()
	out.mu.Unlock()
	if got != msg {
		t.Errorf("caughtUp returned after %d bytes of %d", len(got), len(msg))
	}
	w.Write([]byte("==2== later\n"))
	w.Close()
	<-l.done
	if !strings.HasSuffix(buf.String(), "==2== later\n") {
		t.Errorf("a message after caughtUp is lost")
	}
}
