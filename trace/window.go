package trace

import (
	"errors"
	"io"
)

// Window returns a reader of the memory references of r from number skip
// (0-based) on, at most max of them (0: no limit): METRIC's partial traces.
// Memory references here are the events of every kind that is not
// extended, cache maintenance included; a Skip event counts as the Addr
// references it stands for, and one that straddles a limit passes with
// the part inside the window. Extended events (allocations,
// calls, markers, ...) count toward neither limit and are never skipped, so
// that heap and call-stack state built before the window stays right; once
// the window is full nothing more is passed, not even extended events.
// When drain is true, the rest of r is read and dropped before the end is
// reported, so a producer writing into a pipe is never left blocked.
func Window(r Reader, skip, max uint64, drain bool) Reader {
	if skip == 0 && max == 0 {
		return r
	}
	return &window{r: r, skip: skip, limited: max > 0, remaining: max, drain: drain}
}

type window struct {
	r          Reader
	skip       uint64 // references still to skip
	limited    bool
	remaining  uint64 // references still to pass, when limited
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
			b.Reset()
			for i, k := range s.Kind {
				switch {
				case w.skip == 0 || k.IsExtended():
				case k == Skip && s.Addr[i] > w.skip:
					b.AppendEvent(s, i)
					b.Addr[len(b.Addr)-1] -= w.skip
					w.skip = 0
					continue
				case k == Skip:
					w.skip -= s.Addr[i]
					continue
				default:
					w.skip--
					continue
				}
				b.AppendEvent(s, i)
			}
		} else {
			err = w.r.Read(b)
		}
		if w.limited {
			if refs := countRefs(b); refs < w.remaining {
				w.remaining -= refs
			} else {
				keepRefs(b, w.remaining)
				w.remaining = 0
				w.done = true
				w.finalError = err
				if b.Len() > 0 {
					return nil
				}
				continue
			}
		}
		if b.Len() > 0 || err != nil {
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

// countRefs returns the memory references the events of b stand for.
func countRefs(b *Batch) uint64 {
	// Every extended event has one Ext: the rest are references, one
	// each but for Skip events.
	refs := uint64(b.Len() - len(b.Ext))
	for i, k := range b.Kind {
		if k == Skip {
			refs += b.Addr[i] - 1
		}
	}
	return refs
}

// keepRefs keeps the events of b up to its n-th memory reference (n >= 1),
// cutting a Skip event that stands for references beyond it, and drops the
// rest.
func keepRefs(b *Batch, n uint64) {
	end, ext := 0, 0
	for refs := uint64(0); refs < n; end++ {
		switch k := b.Kind[end]; {
		case k.IsExtended():
			ext++
		case k == Skip:
			b.Addr[end] = min(b.Addr[end], n-refs)
			refs += b.Addr[end]
		default:
			refs++
		}
	}
	b.Kind = b.Kind[:end]
	b.Addr = b.Addr[:end]
	b.Size = b.Size[:end]
	b.PC = b.PC[:end]
	b.Thread = b.Thread[:end]
	clear(b.Ext[ext:])
	b.Ext = b.Ext[:ext]
}
