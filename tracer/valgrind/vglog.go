package valgrind

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// Valgrind's messages (its --log-fd) pass through memspy, which copies
// them to the program's standard error as they come and watches them for
// an instruction Valgrind cannot decode. These are the lines it looks for
// (valgrind 3.19, with --sigill-diagnostics=yes): VEX's
//
//	vex amd64->IR: unhandled instruction bytes: 0x62 0xF1 0x7D 0x48 0xFE 0xC0 ...
//
// then the core's
//
//	==PID== valgrind: Unrecognised instruction at address 0x109165.
//	==PID==    at 0x109165: main (avx512.c:5)
const (
	unhandledTag = "unhandled instruction bytes:"
	unrecogTag   = "valgrind: Unrecognised instruction at address "
	maxLogLine   = 4096 // longer lines are not looked into past this
)

// vgLog copies Valgrind's messages from r to w and remembers the last
// instruction Valgrind could not decode.
type vgLog struct {
	r    *os.File
	w    io.Writer
	done chan struct{} // closed at the end of the messages

	line    []byte // the line being read
	mu      sync.Mutex
	idle    bool   // the copy waits for more
	insn    []byte // the bytes of the last undecodable instruction, as VEX shows them
	where   string // its address and function ("0x109165: main (avx512.c:5)")
	pid     int    // the process that ran it
	wantLoc bool   // the next "at" line gives where
}

// startLog copies r to w on a goroutine of its own.
func startLog(r *os.File, w io.Writer) *vgLog {
	l := &vgLog{r: r, w: w, done: make(chan struct{})}
	go l.copy()
	return l
}

// copy runs until every process holding the pipe's write end is gone:
// valgrind, its children, and programs they exec'd natively (which inherit
// the descriptor).
func (l *vgLog) copy() {
	defer close(l.done)
	defer l.r.Close()
	buf := make([]byte, 32<<10)
	for {
		l.setIdle(true)
		n, err := l.r.Read(buf)
		l.setIdle(false)
		if n > 0 {
			l.w.Write(buf[:n]) // first: the user sees it as it comes
			l.scan(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

func (l *vgLog) setIdle(idle bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.idle = idle
}

// scan looks into the complete lines of p, keeping the last incomplete one
// for the next call.
func (l *vgLog) scan(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			l.line = append(l.line, p[:min(len(p), maxLogLine-len(l.line))]...)
			return
		}
		l.line = append(l.line, p[:min(i, maxLogLine-len(l.line))]...)
		l.parse(string(l.line))
		l.line, p = l.line[:0], p[i+1:]
	}
}

// parse reads one line of Valgrind's messages.
func (l *vgLog) parse(line string) {
	// The core's lines start with "==PID== "; VEX's do not.
	pid := 0
	if strings.HasPrefix(line, "==") {
		if i := strings.Index(line[2:], "== "); i >= 0 {
			pid, _ = strconv.Atoi(line[2 : 2+i])
			line = line[2+i+3:]
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case strings.HasPrefix(line, "vex ") && strings.Contains(line, unhandledTag):
		_, b, _ := strings.Cut(line, unhandledTag)
		l.insn = l.insn[:0]
		for _, f := range strings.Fields(b) {
			v, err := strconv.ParseUint(strings.TrimPrefix(f, "0x"), 16, 8)
			if err != nil {
				break
			}
			l.insn = append(l.insn, byte(v))
		}
		l.where, l.pid, l.wantLoc = "", 0, false
	case strings.HasPrefix(line, unrecogTag):
		l.where = strings.TrimSuffix(strings.TrimPrefix(line, unrecogTag), ".")
		l.pid, l.wantLoc = pid, true
	case l.wantLoc:
		l.wantLoc = false
		if at, ok := strings.CutPrefix(strings.TrimSpace(line), "at "); ok {
			l.where = at
		}
	}
}

// caughtUp waits, once valgrind has exited, until its messages have all
// been copied: the copy ended, or it waits for more with the pipe empty
// (a process the program started may hold the pipe open: the copy goes on
// for it), or drainGrace passed.
func (l *vgLog) caughtUp() {
	deadline := time.Now().Add(drainGrace)
	for time.Now().Before(deadline) {
		select {
		case <-l.done:
			return
		case <-time.After(time.Millisecond):
		}
		l.mu.Lock()
		idle := l.idle
		l.mu.Unlock()
		if idle && pipeEmpty(l.r) {
			return
		}
	}
}

// pipeEmpty reports whether nothing waits to be read in the pipe f (false
// when that cannot be told).
func pipeEmpty(f *os.File) bool {
	c, err := f.SyscallConn()
	if err != nil {
		return false
	}
	var n int32
	var errno syscall.Errno
	if c.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&n)))
	}) != nil {
		return false
	}
	return errno == 0 && n == 0
}

// avx512 reports whether the last instruction Valgrind could not decode is
// an AVX-512 one (EVEX-encoded: first byte 0x62 after any segment or
// address-size prefix; BOUND, the other meaning of 0x62, does not exist in
// 64-bit mode), where it was and the process that ran it (0: not known).
func (l *vgLog) avx512() (ok bool, where string, pid int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, b := range l.insn {
		switch b {
		case 0x26, 0x2e, 0x36, 0x3e, 0x64, 0x65, 0x67:
			continue
		case 0x62:
			return true, l.where, l.pid
		}
		break
	}
	return false, "", 0
}

// Unsupported returns an error explaining that Valgrind could not run an
// instruction of the program, when Valgrind stopped at one that memspy
// recognises: AVX-512, which it cannot decode (the process gets SIGILL).
// It names the program when the process memspy started died of it (its
// status st says SIGILL), else the process (a child, with
// Options.Children); nil when there was no such instruction, or the
// program survived it. Call it after Wait.
func (r *Run) Unsupported(st ExitStatus) error {
	ok, where, pid := r.log.avx512()
	if !ok {
		return nil
	}
	if where != "" {
		where = " at " + where
	}
	who := r.prog
	switch {
	case pid == 0 || pid == r.cmd.Process.Pid:
		if st.Signal != syscall.SIGILL {
			return nil
		}
	default:
		who = fmt.Sprintf("process %d, of %s's process tree,", pid, r.prog)
	}
	return fmt.Errorf("%s executed an AVX-512 instruction%s, which Valgrind, and so memspy, cannot run: rebuild it without AVX-512 (e.g. with -march=x86-64-v3 instead of -march=native or -mavx512*)",
		who, where)
}

// lockedWriter serializes the writes of Valgrind's messages and of the
// program's standard error to a writer that is not a file.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// sameWriter reports whether a and b are the same writer (false when they
// cannot be compared), as os/exec compares Stdout and Stderr.
func sameWriter(a, b io.Writer) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}
