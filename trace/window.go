package trace

import (
	"errors"
	"io"
)

// Window returns a reader of the events of r from number skip (0-based) on,
// at most max of them (0: no limit): METRIC's partial traces. When drain is
// true, the rest of r is read and dropped before the end is reported, so a
// producer writing into a pipe is never left blocked.
func Window(r Reader, skip, max uint64, drain bool) Reader {
	if skip == 0 && max == 0 {
		return r
	}
	return &window{r: r, skip: skip, limited: max > 0, remaining: max, drain: drain}
}

type window struct {
	r          Reader
	skip       uint64 // events still to skip
	limited    bool
	remaining  uint64 // events still to pass, when limited
	drain      bool
	done       bool   // the window is full
	scratch    *Batch // the window's own batch, for skipping and draining
	finalError error
}

func (w *window) Format() string { return w.r.Format() }

func (w *window) Read(b *Batch) error {
	for {
		if w.done {
			b.Reset()
			return w.finish()
		}
		var err error
		if w.skip > 0 {
			// Read into a batch of our own: readers may rely on what they
			// left in b, so b only ever receives copies.
			s := w.batch(b.Cap())
			err = w.r.Read(s)
			k := min(w.skip, uint64(s.Len()))
			w.skip -= k
			b.Reset()
			for i := int(k); i < s.Len(); i++ {
				b.Append(s.Kind[i], s.Addr[i], s.Size[i], s.PC[i], s.Thread[i])
			}
		} else {
			err = w.r.Read(b)
		}
		n := uint64(b.Len())
		if w.limited && n >= w.remaining {
			truncate(b, int(w.remaining))
			n = w.remaining
			w.remaining = 0
			w.done = true
			w.finalError = err
			if n > 0 {
				return nil
			}
			continue
		}
		w.remaining -= n
		if n > 0 || err != nil {
			return err
		}
	}
}

// finish drains the rest of the input when asked to and reports the end.
func (w *window) finish() error {
	err := w.finalError
	if w.drain {
		s := w.batch(BatchSize)
		for err == nil {
			err = w.r.Read(s)
		}
	}
	w.finalError = io.EOF
	if err != nil && !errors.Is(err, io.EOF) {
		w.finalError = err
		return err
	}
	return io.EOF
}

// batch returns the window's own batch, of at least capacity n.
func (w *window) batch(n int) *Batch {
	if w.scratch == nil || w.scratch.Cap() < n {
		w.scratch = NewBatch(max(n, 1))
	}
	return w.scratch
}

// truncate keeps the first n events of b.
func truncate(b *Batch, n int) {
	b.Kind = b.Kind[:n]
	b.Addr = b.Addr[:n]
	b.Size = b.Size[:n]
	b.PC = b.PC[:n]
	b.Thread = b.Thread[:n]
}
