package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"

	"github.com/memspy/memspy/trace"
)

// With a second processor, Run keeps readAhead batches of runBatch events
// in flight between its reading goroutine and the engine. Large batches
// make the hand-offs between the two rare: each can cost a goroutine
// wake-up (memspy run on matmul 512: 6.6 s reading in line, 7.0 s ahead in
// batches of 4096 events, 4.5 s in batches of 131072).
const (
	readAhead = 4
	runBatch  = 32 * trace.BatchSize
)

// filled is a batch read by Run's reading goroutine and the error that
// came with it.
type filled struct {
	b   *trace.Batch
	err error
}

// Run feeds every event of r into h, batch by batch, until the end of the
// input, an input error or the cancellation of ctx. progress, if not nil,
// is called after every batch with the number of events read so far. Events
// read before an error are simulated; the error says how many there were.
// Run does not call Finish.
//
// When GOMAXPROCS allows two goroutines to run at once, reading (decoding)
// runs on a goroutine of its own, a few batches ahead of the engine, so that
// the two overlap; Run returns only once that goroutine has stopped using
// r. That goroutine also has the Symbolizer start reading the object files
// that the batches map (when it can: symbolize.Prefetch), so that the
// engine seldom waits for their symbols. With one, Run reads in line, in
// small batches that stay in the processor's caches.
//
// On several processors, Run orders the events of the threads as
// h's Options.Interleave says, keeping each thread's simulated clock. When h does not attribute and simulates one
// processor, Run makes r slim if it is a trace.Slimmer: the engine then
// reads neither PCs, threads, calls nor returns.
func Run(ctx context.Context, h *Hierarchy, r trace.Reader, progress func(events uint64)) error {
	if sr, ok := r.(trace.Slimmer); ok && h.Slim() {
		sr.Slim()
	}
	if runtime.GOMAXPROCS(0) < 2 {
		b := trace.NewBatch(trace.BatchSize)
		next := func() filled { return filled{b, r.Read(b)} }
		return feed(ctx, h, next, func(*trace.Batch) {}, progress)
	}
	full := make(chan filled, readAhead)
	empty := make(chan *trace.Batch, readAhead)
	for range readAhead {
		empty <- trace.NewBatch(runBatch)
	}
	stop, stopped := make(chan struct{}), make(chan struct{})
	var pf prefetcher
	if h.attr != nil && h.attr.sym != nil {
		pf, _ = h.attr.sym.(prefetcher)
	}
	go func() {
		defer close(stopped)
		for {
			var b *trace.Batch
			select {
			case b = <-empty:
			case <-stop:
				return
			}
			err := r.Read(b)
			if pf != nil {
				prefetchMaps(pf, b)
			}
			full <- filled{b, err} // never blocks: there are readAhead batches
			if err != nil {
				return
			}
		}
	}()
	defer func() {
		close(stop)
		<-stopped
	}()
	next := func() filled { return <-full }
	done := func(b *trace.Batch) { empty <- b }
	return feed(ctx, h, next, done, progress)
}

// prefetcher is a Symbolizer that can start reading an object file's
// symbols ahead of its Map.
type prefetcher interface{ Prefetch(path string) }

// prefetchMaps has pf read ahead the object files that b maps: Run's
// reading goroutine sees them some batches before the engine maps them.
func prefetchMaps(pf prefetcher, b *trace.Batch) {
	for i, k := range b.Kind {
		if k == trace.Map {
			pf.Prefetch(b.ExtOf(i).Name)
		}
	}
}

// Slim reports whether h reads only the kinds, addresses and sizes of
// events: it neither attributes (no PCs, threads, calls, returns or
// allocations) nor simulates several processors. Run then makes a
// trace.Slimmer reader slim.
func (h *Hierarchy) Slim() bool { return h.attr == nil && len(h.procs) == 1 }

// feed simulates the batches that next returns, handing each back to done,
// until the input ends (see Run).
func feed(ctx context.Context, h *Hierarchy, next func() filled, done func(*trace.Batch), progress func(events uint64)) error {
	process := h.Process
	if h.timing != nil {
		s := newScheduler(h.opt.Interleave, h.opt.Quantum, h.opt.Window, h.runThread)
		process = s.push
		defer s.finish() // what was read is simulated, whatever ends the input
	}
	var n uint64
	for i := 0; ; i++ {
		if i%64 == 0 && ctx.Err() != nil {
			return fmt.Errorf("interrupted after %d events: %w", n, ctx.Err())
		}
		f := next()
		if h.abandoned.Load() {
			h.passedOver += uint64(f.b.Len())
		} else {
			process(f.b)
			n += uint64(f.b.Len())
		}
		if h.fault != nil {
			return fmt.Errorf("after %d events: %w", n, h.fault)
		}
		if progress != nil {
			progress(n)
		}
		if errors.Is(f.err, io.EOF) {
			return nil
		}
		if f.err != nil {
			return fmt.Errorf("after %d events: %w", n, f.err)
		}
		done(f.b)
	}
}

// Abandon has Run, from its next batch of events on, read the rest of its
// input without simulating it: the user interrupted the run, and the
// events read ahead (up to readAhead batches) are not worth the wait. It
// may be called from any goroutine.
func (h *Hierarchy) Abandon() { h.abandoned.Store(true) }

// PassedOver returns the number of events Run read but did not simulate
// after Abandon; it is final once Run returned.
func (h *Hierarchy) PassedOver() uint64 { return h.passedOver }
