// Package trace reads and writes memory reference traces. Every format
// decodes into the same batched event stream (Batch), which the simulation
// engine consumes without one interface call per reference.
package trace

import "fmt"

// Kind is the kind of a trace event.
type Kind uint8

// Event kinds. The numeric values are part of the .mst format: never
// renumber them, only append. Values not listed here are reserved for
// later kinds (alloc, free, call, return, marker, sync, thread).
const (
	Read       Kind = 0 // data load
	Write      Kind = 1 // data store
	IFetch     Kind = 2 // instruction fetch
	Modify     Kind = 3 // read-modify-write: a load then a store of the same bytes
	CopyBack   Kind = 4 // write back dirty lines, keep them valid (Size 0: every line)
	Invalidate Kind = 5 // drop lines without writing them back (Size 0: every line)
	numKinds        = 6
)

var kindNames = [numKinds]string{"read", "write", "ifetch", "modify", "copyback", "invalidate"}

// String returns the kind's lower-case name.
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Valid reports whether k is a kind this version understands.
func (k Kind) Valid() bool { return k < numKinds }

// IsAccess reports whether k is a memory reference (as opposed to a cache
// maintenance operation).
func (k Kind) IsAccess() bool { return k <= Modify }

// BatchSize is the number of events readers put in one batch by default.
const BatchSize = 4096

// Batch is a run of events stored as a struct of slices. All slices have
// the same length. Readers fill batches; the engine consumes them.
// Consumers treat a batch as read-only: a reader may rely on what it left in
// a batch it fills again (the .mst reader does not clear zero PC and thread
// columns twice).
type Batch struct {
	Kind   []Kind
	Addr   []uint64
	Size   []uint32
	PC     []uint64 // 0 when unknown
	Thread []uint32 // 0 when unknown
}

// NewBatch returns an empty batch with room for capacity events.
func NewBatch(capacity int) *Batch {
	return &Batch{
		Kind:   make([]Kind, 0, capacity),
		Addr:   make([]uint64, 0, capacity),
		Size:   make([]uint32, 0, capacity),
		PC:     make([]uint64, 0, capacity),
		Thread: make([]uint32, 0, capacity),
	}
}

// Len returns the number of events in b.
func (b *Batch) Len() int { return len(b.Kind) }

// Cap returns how many events b holds before its slices grow.
func (b *Batch) Cap() int { return cap(b.Kind) }

// Reset empties b, keeping its storage.
func (b *Batch) Reset() {
	b.Kind = b.Kind[:0]
	b.Addr = b.Addr[:0]
	b.Size = b.Size[:0]
	b.PC = b.PC[:0]
	b.Thread = b.Thread[:0]
}

// Append adds one event to b.
func (b *Batch) Append(k Kind, addr uint64, size uint32, pc uint64, thread uint32) {
	b.Kind = append(b.Kind, k)
	b.Addr = append(b.Addr, addr)
	b.Size = append(b.Size, size)
	b.PC = append(b.PC, pc)
	b.Thread = append(b.Thread, thread)
}

// Reader is a source of events.
//
// Read empties b and fills it with up to b.Cap() events (at least one
// unless it returns an error). At the end of the input it returns io.EOF
// with b empty. It may return events together with a non-nil error: callers
// consume b.Len() events first, then handle the error.
type Reader interface {
	Read(b *Batch) error
	// Format returns the name of the trace format being decoded.
	Format() string
}

// Writer is a sink of events, such as an .mst encoder.
type Writer interface {
	Write(b *Batch) error
	// Close flushes buffered events and finishes the output; it does not
	// close the underlying io.Writer.
	Close() error
}
