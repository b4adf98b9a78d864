package sim

import (
	"context"
	"errors"
	"fmt"
	"io"

	"memspy/trace"
)

// Run feeds every event of r into h, batch by batch, until the end of the
// input, an input error or the cancellation of ctx. progress, if not nil,
// is called after every batch with the number of events read so far. Events
// read before an error are simulated; the error says how many there were.
// Run does not call Finish.
func Run(ctx context.Context, h *Hierarchy, r trace.Reader, progress func(events uint64)) error {
	b := trace.NewBatch(trace.BatchSize)
	var n uint64
	for i := 0; ; i++ {
		if i%64 == 0 && ctx.Err() != nil {
			return fmt.Errorf("interrupted after %d events: %w", n, ctx.Err())
		}
		err := r.Read(b)
		h.Process(b)
		n += uint64(b.Len())
		if progress != nil {
			progress(n)
		}
		if errors.Is(err, io.EOF) && b.Len() == 0 {
			return nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("after %d events: %w", n, err)
		}
	}
}
