package valgrind

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// children receives the streams of a traced program's forked children
// (Options.Children): the tool in a forked child makes the FIFO dir/PID,
// writes PID (a word) on the control pipe, and opens the FIFO for writing,
// which waits until memspy opens it for reading; then it writes its own
// stream there (docs/valgrind-stream.md, "Process trees").
type children struct {
	dir  string
	r, w *os.File // the control pipe: w is fd 6 of the traced program
	c    chan *StreamReader
}

func newChildren() (*children, error) {
	dir, err := os.MkdirTemp("", "memspy-children-")
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &children{dir: dir, r: r, w: w, c: make(chan *StreamReader, 64)}, nil
}

// started is called when the program started (ok) or failed to start. It
// closes memspy's copy of the control pipe's write end: the pipe ends when
// every traced process is gone. Until then it serves the announcements.
func (k *children) started(ok bool) {
	k.w.Close()
	if !ok {
		k.r.Close()
		os.RemoveAll(k.dir)
		close(k.c)
		return
	}
	go k.serve()
}

// serve opens the FIFO of every child announced and hands its reader on,
// until the control pipe ends.
func (k *children) serve() {
	defer os.RemoveAll(k.dir)
	defer close(k.c)
	defer k.r.Close()
	var b [8]byte
	for {
		if _, err := io.ReadFull(k.r, b[:]); err != nil {
			return
		}
		path := filepath.Join(k.dir, strconv.FormatUint(le.Uint64(b[:]), 10))
		f, err := os.OpenFile(path, os.O_RDONLY, 0) // meets the child's open for writing
		os.Remove(path)
		if err != nil {
			continue // the child made no FIFO: it did not announce itself
		}
		r := NewStreamReader(f)
		r.in = f
		r.onFatal = func() { f.Close() } // the child's writes fail: it runs on untraced
		k.c <- r
	}
}

// Children returns the streams of the program's forked children, each as
// its child starts, with Options.Children; the channel is closed when no
// traced process is left (nil without Options.Children). Read every
// stream to its end (the child waits while its stream is not read) and
// Close it.
func (r *Run) Children() <-chan *StreamReader {
	if r.kids == nil {
		return nil
	}
	return r.kids.c
}

// StopChildren stops following the program's forked children: those forked
// from now on run untraced (with Options.Children; the streams already
// delivered go on). The Children channel is then closed.
func (r *Run) StopChildren() {
	if r.kids != nil {
		r.kids.r.Close()
		releaseFIFOs(r.kids.dir)
		os.RemoveAll(r.kids.dir) // now: memspy may exit before serve ends
	}
}

// releaseFIFOs lets go every child whose FIFO is in dir and that memspy
// will never read: one that announced itself just before the control pipe
// closed waits in its open of the FIFO for a reader, and its parent
// waits for it (a traced tree would never end). Each FIFO is opened for
// reading, which lets a waiting open through, then unlinked, so that a
// later open fails, then closed: the child's writes fail, and it runs on
// untraced (as one forked after StopChildren does).
func releaseFIFOs(dir string) {
	entries, _ := os.ReadDir(dir) // (nothing to release when it is gone)
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		os.Remove(path)
		if err == nil {
			f.Close()
		}
	}
}
