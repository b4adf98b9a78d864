package valgrind

import (
	"encoding/binary"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// waitid(2)'s constants, which package syscall lacks.
const (
	pPID      = 1          // P_PID
	wNoWait   = 0x01000000 // WNOWAIT: leave the child waitable
	cldKilled = 2          // CLD_KILLED: si_code of a child killed by a signal
)

// drainGrace bounds how long Wait lets the drain read what a dead tool
// left in the pipe, in case a process the program started holds the
// pipe's write end open (the end never comes then).
const drainGrace = 100 * time.Millisecond

// source is the StreamReader's input: the pipe from the tool, until the
// run is cut (Drop). Its reads stop at the end of the stream's header and,
// when the data comes through the ring, at the end of each chunk's
// announcement, so that the StreamReader never holds announcements of
// chunks it has not started on: after a cut it decodes at most the rest of
// the chunk in hand, then reads io.EOF, and drain passes over the rest of
// the stream undecoded, handing every chunk back, so that the tool never
// waits for the reader.
type source struct {
	pr   *os.File // the stream's pipe
	free *os.File // the pipe that hands chunks back to the tool

	// Owned by the StreamReader's goroutine until the drain starts.
	hdr    [headerLen]byte // the stream's header, as it passed
	passed int             // bytes passed to the StreamReader

	mu      sync.Mutex
	cut     bool
	drained chan struct{} // closed when the drain ends; nil until it starts
	dropped atomic.Int64  // stream bytes passed over undecoded
}

// ring reports whether the header that passed says the data comes through
// the ring.
func (s *source) ring() bool {
	return s.passed >= headerLen && binary.LittleEndian.Uint64(s.hdr[16:])&flagRing != 0
}

// Read implements io.Reader for the StreamReader.
func (s *source) Read(p []byte) (int, error) {
	if s.isCut() {
		return 0, s.end()
	}
	switch {
	case s.passed < headerLen:
		p = p[:min(len(p), headerLen-s.passed)]
	case s.ring():
		p = p[:min(len(p), 8)] // one chunk's length
	}
	n, err := s.pr.Read(p)
	if s.passed < headerLen {
		copy(s.hdr[s.passed:], p[:n])
	}
	s.passed += n
	if err != nil && s.isCut() {
		return n, s.end() // Drop's deadline woke the read
	}
	return n, err
}

func (s *source) isCut() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cut
}

// drop cuts the stream: a read waiting for the tool returns at once.
func (s *source) drop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.cut {
		s.cut = true
		s.pr.SetReadDeadline(time.Now())
	}
}

// end starts the drain, once, and returns io.EOF: the stream ends here for
// the StreamReader, which then holds no chunk.
func (s *source) end() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.drained == nil {
		s.drained = make(chan struct{})
		s.pr.SetReadDeadline(time.Time{})
		go s.drain()
	}
	return io.EOF
}

// drain reads the rest of the stream until its end or an error, counting
// the bytes of data it passes over, and hands each announced chunk back.
func (s *source) drain() {
	defer close(s.drained)
	for s.passed < headerLen {
		n, err := s.pr.Read(s.hdr[s.passed:])
		s.passed += n
		if err != nil {
			return
		}
	}
	if !s.ring() {
		n, _ := io.Copy(io.Discard, s.pr)
		s.dropped.Add(n)
		return
	}
	var w [8]byte
	for {
		if _, err := io.ReadFull(s.pr, w[:]); err != nil {
			return
		}
		if string(w[:]) == StreamMagic {
			// The header of the stream of a program the process
			// exec'd (a chunk is at most 1 MiB long): the next
			// tool instance starts again at chunk 0.
			if _, err := io.CopyN(io.Discard, s.pr, headerLen-8); err != nil {
				return
			}
			continue
		}
		s.dropped.Add(int64(binary.LittleEndian.Uint64(w[:])))
		s.free.Write([]byte{1}) // an error: the tool is gone
	}
}

// finish waits for the drain, if it started, to read what the tool left in
// the pipe; call it once the tool has exited.
func (s *source) finish() {
	s.mu.Lock()
	d := s.drained
	s.mu.Unlock()
	if d == nil {
		return
	}
	s.pr.SetReadDeadline(time.Now().Add(drainGrace))
	<-d
}

// Drop makes the reader stop where it is, for a run whose remaining events
// nobody waits for (memspy was interrupted): Read delivers the events of
// the data it holds (the rest of the ring chunk it is decoding, at most
// 1 MiB), then an error matching ErrNoEnd, and the rest of the stream,
// buffered or still to come, is passed over undecoded (Dropped counts it),
// so that the program runs on unhindered until it exits. Run drops by
// itself when the program is killed by SIGKILL: the stream cannot end
// then. Drop is safe to call from any goroutine, any number of times.
func (r *Run) Drop() { r.src.drop() }

// Dropped returns the number of bytes of the tool's stream (records, not
// counting the header and the chunks' announcements) passed over undecoded
// since Drop; it is final once Wait returned.
func (r *Run) Dropped() int64 { return r.src.dropped.Load() }

// Exited returns a channel closed when valgrind (the program) has exited,
// before Wait collects its status.
func (r *Run) Exited() <-chan struct{} { return r.exited }

// watch waits for valgrind to exit, without collecting its status (Wait
// does), drops the stream when SIGKILL killed it, then closes r.exited.
func (r *Run) watch() {
	defer close(r.exited)
	var info [128]byte // siginfo_t
	var errno syscall.Errno
	for {
		_, _, errno = syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(r.cmd.Process.Pid),
			uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|wNoWait, 0, 0)
		if errno != syscall.EINTR {
			break
		}
	}
	if errno != 0 {
		return // ECHILD: Wait collected it already
	}
	// si_code at byte 8, si_status at 24 (after si_pid and si_uid).
	code, status := binary.LittleEndian.Uint32(info[8:]), binary.LittleEndian.Uint32(info[24:])
	if code == cldKilled && syscall.Signal(status) == syscall.SIGKILL {
		r.Drop()
	}
}
