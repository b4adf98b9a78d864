package sim_test

import (
	"context"
	"io"
	"testing"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/sim"
	"github.com/memspy/memspy/trace"
)

// abandoningReader gives batches of size reads, n in all, and abandons h
// while it reads the batch numbered at.
type abandoningReader struct {
	h           *sim.Hierarchy
	n, at, size int
	read        int
}

func (r *abandoningReader) Format() string { return "test" }

func (r *abandoningReader) Read(b *trace.Batch) error {
	b.Reset()
	if r.read == r.n {
		return io.EOF
	}
	if r.read == r.at {
		r.h.Abandon()
	}
	for i := range r.size {
		b.Append(trace.Read, uint64(r.read*r.size+i)*64, 8, 0, 1)
	}
	r.read++
	return nil
}

// Once abandoned, Run reads the rest of its input without simulating it:
// what it simulated and what it passed over add up to the input, and the
// batches read after the abandon are all passed over.
func TestRunAbandon(t *testing.T) {
	m, err := machine.Preset("x86-modern")
	if err != nil {
		t.Fatal(err)
	}
	h, err := sim.New(m, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := &abandoningReader{h: h, n: 40, at: 5, size: 1000}
	if err := sim.Run(context.Background(), h, r, nil); err != nil {
		t.Fatal(err)
	}
	h.Finish()
	events, passed := h.Profile().Events, h.PassedOver()
	if total := uint64(r.n * r.size); events+passed != total || passed < uint64((r.n-r.at)*r.size) {
		t.Errorf("%d events simulated and %d passed over, of %d read (abandoned at the %dth of %d batches)",
			events, passed, total, r.at+1, r.n)
	}
}
