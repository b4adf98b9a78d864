package valgrind

import (
	"errors"
	"io"
	"os"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/memspy/memspy/trace"
	vt "github.com/memspy/memspy/tracer/valgrind/valgrindtest"
)

// readRest reads the reader to its end or an error and returns the number
// of events it delivered and the error.
func readRest(t *testing.T, s *StreamReader) (int, error) {
	t.Helper()
	b := trace.NewBatch(trace.BatchSize)
	n := 0
	for {
		err := s.Read(b)
		n += b.Len()
		if err != nil {
			return n, err
		}
	}
}

// After Drop the reader decodes what it holds and stops, the rest of the
// stream is passed over (the fake valgrind, blocked writing it, goes on
// and runs the program), and Dropped counts it: with what was decoded,
// the whole stream of a run read to its end.
func TestFakeDrop(t *testing.T) {
	const execs = 100_000 // 4 MB of stream, more than the reader's buffer
	full, err := Start("true", nil, fake(t, "", execs))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readRest(t, full.Reader()); err != io.EOF {
		t.Fatal(err)
	}
	wait(t, full)
	total := full.Reader().Offset()
	if full.Dropped() != 0 {
		t.Errorf("a run read to its end dropped %d bytes", full.Dropped())
	}

	run, err := Start("sleep", []string{"60"}, fake(t, "", execs))
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Reader().Read(trace.NewBatch(10)); err != nil {
		t.Fatal(err)
	}
	run.Drop()
	n, err := readRest(t, run.Reader())
	if !errors.Is(err, ErrNoEnd) {
		t.Errorf("after Drop: %d events, then %v, want ErrNoEnd", n, err)
	}
	if off := run.Reader().Offset(); off > bufSize || off >= total {
		t.Errorf("the reader went on to byte %d of %d after Drop (its buffer holds %d)", off, total, bufSize)
	}
	// The program runs (the fake starts it once its stream is written).
	if err := run.Forward(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if st := wait(t, run); st.Signal != syscall.SIGTERM {
		t.Errorf("status %v, want killed by SIGTERM", st)
	}
	if got := run.Reader().Offset() + run.Dropped(); got != total {
		t.Errorf("decoded %d + dropped %d = %d bytes, want the stream's %d", run.Reader().Offset(), run.Dropped(), got, total)
	}
}

// A program killed by SIGKILL cannot end its stream: the reader stops at
// once, what was still in the pipe is dropped.
func TestFakeKilled(t *testing.T) {
	run, err := Start("sleep", []string{"60"}, fake(t, "", 100_000))
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Reader().Read(trace.NewBatch(10)); err != nil {
		t.Fatal(err)
	}
	// The fake refills the pipe as the reader empties it.
	for deadline := time.Now().Add(time.Minute); pipeBytes(t, run.pr) == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the pipe stays empty")
		}
	}
	if err := run.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-run.Exited():
	case <-time.After(time.Minute):
		t.Fatal("Exited is not closed")
	}
	n, err := readRest(t, run.Reader())
	if !errors.Is(err, ErrNoEnd) {
		t.Errorf("%d events, then %v, want ErrNoEnd", n, err)
	}
	if st := wait(t, run); st.Signal != syscall.SIGKILL {
		t.Errorf("status %v, want killed by SIGKILL", st)
	}
	if off := run.Reader().Offset(); off > bufSize || run.Dropped() == 0 {
		t.Errorf("decoded %d bytes (buffer %d), dropped %d: the reader read on after the kill", off, bufSize, run.Dropped())
	}
}

// pipeBytes returns the number of bytes waiting in the pipe f.
func pipeBytes(t *testing.T, f *os.File) int {
	c, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int32
	var errno syscall.Errno
	c.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&n)))
	})
	if errno != 0 {
		t.Fatal(errno)
	}
	return int(n)
}

// Through the ring: after Drop the reader finishes the chunk it decodes
// and stops; a tool writing many more chunks than the ring holds is never
// blocked, and Dropped is the length of the chunks that followed.
func TestDropRing(t *testing.T) {
	ringFile, ring, err := newRing()
	if err != nil {
		t.Fatal(err)
	}
	defer ringFile.Close()
	defer syscall.Munmap(ring)
	chunks := len(ring) / ChunkSize
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	freeR, freeW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer freeR.Close()
	defer freeW.Close()

	// Chunk 0 describes a superblock of one read and runs it; the others
	// run it; END comes in a chunk of its own.
	const perChunk = 60_000 // two words each
	var first vt.Stream
	first.Thread(1).Describe(1, vt.Entry{Kind: vt.Read, Size: 8, PC: 0x401000})
	var payloads [][]byte
	for k := range 3 * chunks {
		s := vt.Stream{}
		if k == 0 {
			s = first
		}
		for i := range perChunk {
			s.Exec(1, 0, uint64(0x10000+8*i))
		}
		payloads = append(payloads, s.B)
	}
	payloads = append(payloads, new(vt.Stream).End(0).B)

	// The tool announces a few chunks before the reader starts: the
	// reader must not take them in advance.
	const ahead = 4
	ready, toolDone := make(chan struct{}), make(chan error, 1)
	go func() {
		defer pw.Close()
		var h vt.Stream
		if _, err := pw.Write(h.Header(flagRing, 1).B); err != nil {
			toolDone <- err
			return
		}
		avail := chunks - 1 // every chunk but the first is free
		for k, p := range payloads {
			if k > 0 {
				if avail == 0 {
					if _, err := freeR.Read(make([]byte, 1)); err != nil {
						toolDone <- err
						return
					}
					avail++
				}
				avail--
			}
			copy(ring[k%chunks*ChunkSize:], p)
			var w vt.Stream
			if _, err := pw.Write(w.Word(uint64(len(p))).B); err != nil {
				toolDone <- err
				return
			}
			if k == ahead-1 {
				close(ready)
			}
		}
		toolDone <- nil
	}()

	<-ready
	src := &source{pr: pr, free: freeW}
	s := NewStreamReader(src)
	s.setRing(ring, freeW)
	if err := s.Read(trace.NewBatch(10)); err != nil {
		t.Fatal(err)
	}
	src.drop()
	n, err := readRest(t, s)
	if !errors.Is(err, ErrNoEnd) || n+10 != perChunk {
		t.Errorf("%d more events, then %v; want the rest of the first chunk (%d), then ErrNoEnd", n, err, perChunk-10)
	}
	select {
	case err := <-toolDone:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the tool is blocked: chunks were not handed back")
	}
	src.finish()
	want := 0
	for _, p := range payloads[1:] {
		want += len(p)
	}
	if got := src.dropped.Load(); got != int64(want) {
		t.Errorf("dropped %d bytes, want %d", got, want)
	}
}
