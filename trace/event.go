// Package trace reads and writes memory reference traces. Every format
// decodes into the same batched event stream (Batch), which the simulation
// engine consumes without one interface call per reference.
package trace

import "fmt"

// Kind is the kind of a trace event.
type Kind uint8

// Event kinds. The numeric values are part of the .mst format: never
// renumber them, only append. Values not listed here are reserved for
// later kinds.
//
// Alloc, Free, Call, Return, Marker, Map and Sync are extended events: they are
// not memory references, and what they carry beyond Addr, PC and Thread is
// in Batch.Ext, at the index held in their Size column. Misc, appended
// after them, is a memory reference again.
const (
	Read       Kind = 0  // data load
	Write      Kind = 1  // data store
	IFetch     Kind = 2  // instruction fetch
	Modify     Kind = 3  // read-modify-write: a load then a store of the same bytes
	CopyBack   Kind = 4  // write back dirty lines, keep them valid (Size 0: every line)
	Invalidate Kind = 5  // drop lines without writing them back (Size 0: every line)
	Alloc      Kind = 6  // a heap block was allocated: Addr its start, PC the allocation site
	Free       Kind = 7  // a heap block was freed: Addr its start, PC the call site
	Call       Kind = 8  // a procedure was entered: Addr its entry, PC the call instruction
	Return     Kind = 9  // a procedure returned: Addr where control returns to, PC the return instruction
	Marker     Kind = 10 // a program's own marker (memspy.h): Addr its address argument
	Map        Kind = 11 // an object file is mapped: Addr the runtime address of its .text, Ext.Size its length, Ext.Name its path
	Sync       Kind = 12 // a synchronization operation (Ext.Sync says which): Addr the synchronization object, PC the call site
	Misc       Kind = 13 // Dinero IV's misc reference (din label 3, xdin m): a data load that caches count apart from reads
	numKinds        = 14
)

// IFetchRun is Size instruction fetches in program order, the first at
// Addr (also its PC), all inside one aligned block of a size the reader was
// given, and with only data references between them: a compact form of
// IFetch events that the engine simulates exactly when its first
// instruction cache holds no data (see sim.Hierarchy.IFetchRuns). It
// exists only in memory: a reader makes it only when asked to
// (valgrind.StreamReader.SetIFetchRuns), no trace format stores it, and it
// is not Valid. A run made for an engine that attributes every hit
// (sim.Hierarchy.IFetchRuns says spans) holds only fetches that each begin
// where the one before ended, in a block of at most 64 bytes, and its PC
// gives where its instructions end: bit o is set when the last byte of one
// lies at offset o of the block.
const IFetchRun Kind = 128

// Skip stands for Addr memory references that the tracer did not record
// at this point of the stream: a gap between samples (memspy run
// --sample), where the program ran without instrumentation of its memory
// accesses. Like IFetchRun it exists only in memory: the Valgrind stream
// reader makes it, the sampling gate counts it, no trace format stores it,
// and it is not Valid.
const Skip Kind = 129

// BelowRead, BelowWrite and BelowIFetch are requests that the first-level
// caches, simulated by the tracer itself (memspy run's Valgrind tool, see
// sim.Hierarchy.TracerFirstLevels), sent to the level below them: a fill
// of the first data cache (BelowRead) or of the first instruction cache
// (BelowIFetch), a write-through or write-back of the first data cache
// (BelowWrite), of Size bytes at Addr (0: a whole line of that cache). FirstLevel carries those caches'
// counters so far in Ext.Stack (docs/valgrind-stream.md, L1STATS). Like
// IFetchRun they exist only in memory and are not Valid.
const (
	BelowRead   Kind = 130
	BelowWrite  Kind = 131
	BelowIFetch Kind = 132
	FirstLevel  Kind = 133
)

// Exec is one execution of a superblock whose references the tracer's
// first-level caches took, for the engine when it attributes misses only
// (see sim.Hierarchy.TracerNotes): Batch.Blocks[Size] describes the
// superblock, Addr is the index of the exit taken (Block.Exits), and PC
// holds where the accesses of those caches that the engine must simulate
// are in Batch.Accesses (ExecOf). Like IFetchRun it exists only in
// memory and is not Valid.
const Exec Kind = 134

var kindNames = [numKinds]string{"read", "write", "ifetch", "modify", "copyback", "invalidate",
	"alloc", "free", "call", "return", "marker", "map", "sync", "misc"}

// String returns the kind's lower-case name.
func (k Kind) String() string {
	switch {
	case k < numKinds:
		return kindNames[k]
	case k == IFetchRun:
		return "ifetch-run"
	case k == Skip:
		return "skip"
	case k == BelowRead:
		return "below-read"
	case k == BelowWrite:
		return "below-write"
	case k == BelowIFetch:
		return "below-ifetch"
	case k == FirstLevel:
		return "first-level"
	case k == Exec:
		return "exec"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Valid reports whether k is a kind this version understands.
func (k Kind) Valid() bool { return k < numKinds }

// IsAccess reports whether k is a memory reference (as opposed to a cache
// maintenance operation or an extended event).
func (k Kind) IsAccess() bool { return k <= Modify || k == Misc }

// IsExtended reports whether k is an extended event, whose details are in
// Batch.Ext.
func (k Kind) IsExtended() bool { return k >= Alloc && k <= Sync }

// MarkKind says what a Marker event marks.
type MarkKind uint8

// Marker kinds, from the client requests of memspy.h. The values are part of
// the .mst format and of the Valgrind tool's stream: only append.
const (
	MarkStart       MarkKind = 0 // tracing starts (again)
	MarkStop        MarkKind = 1 // tracing stops until the next start
	MarkRange       MarkKind = 2 // Ext.Name names the range [Addr, Addr+Ext.Size): a manual data bin
	MarkRegionBegin MarkKind = 3 // the named code region Ext.Name begins
	MarkRegionEnd   MarkKind = 4 // the named code region Ext.Name ends
	MarkSampleBegin MarkKind = 5 // a sample (timestep) begins
	MarkSampleEnd   MarkKind = 6 // a sample (timestep) ends
	MarkReset       MarkKind = 7 // statistics restart from zero (cache contents stay)
	MarkDump        MarkKind = 8 // statistics so far are saved under Ext.Name
	// The thread runs the program's allocator (a malloc, free, new ... the
	// tracer wraps) from allocator-begin to allocator-end: its references
	// to freed memory are the allocator's own (its free lists), not a use
	// after free. Written by the tracer, not by memspy.h.
	MarkAllocatorBegin MarkKind = 9
	MarkAllocatorEnd   MarkKind = 10
	numMarkKinds                = 11
)

var markNames = [numMarkKinds]string{"start", "stop", "range", "region-begin", "region-end",
	"sample-begin", "sample-end", "reset", "dump", "allocator-begin", "allocator-end"}

// String returns the marker kind's name.
func (m MarkKind) String() string {
	if m < numMarkKinds {
		return markNames[m]
	}
	return fmt.Sprintf("mark(%d)", uint8(m))
}

// Valid reports whether m is a marker kind this version understands.
func (m MarkKind) Valid() bool { return m < numMarkKinds }

// SyncKind says which synchronization operation a Sync event is. Events
// that make a thread wait (Acquire, BarrierLeave, CondWake, Start, Join)
// are traced when the wait is over; those that let other threads go on
// (Release, BarrierArrive, CondWait, CondSignal, Create, Exit) before the
// operation.
type SyncKind uint8

// Synchronization kinds. The values are part of the .mst format and of the
// Valgrind tool's stream: only append.
const (
	SyncAcquire       SyncKind = 0  // a lock was acquired: Addr the lock; Ext.Size 1 when shared (a read lock), else 0
	SyncRelease       SyncKind = 1  // a lock is released: Addr the lock
	SyncBarrierArrive SyncKind = 2  // a thread arrives at a barrier: Addr the barrier; Ext.Size its count, 0 when unknown
	SyncBarrierLeave  SyncKind = 3  // a thread leaves a barrier: Addr the barrier
	SyncCondWait      SyncKind = 4  // a thread waits on a condition variable: Addr the condition, Ext.Size the mutex it releases
	SyncCondWake      SyncKind = 5  // a wait on a condition variable returned: Addr the condition, Ext.Size the mutex it holds again
	SyncCondSignal    SyncKind = 6  // a condition variable is signalled or broadcast: Addr the condition
	SyncCreate        SyncKind = 7  // a thread creates another: Addr a token that the new thread's Start names
	SyncStart         SyncKind = 8  // a new thread starts: Addr its creator's token; Ext.Size the thread's handle (pthread_t)
	SyncExit          SyncKind = 9  // a thread ends: Addr its handle
	SyncJoin          SyncKind = 10 // a thread joined another: Addr the joined thread's handle
	SyncAtomic        SyncKind = 11 // an atomic read-modify-write of the bytes at Addr (its Modify event follows)
	numSyncKinds               = 12
)

var syncNames = [numSyncKinds]string{"acquire", "release", "barrier-arrive", "barrier-leave",
	"cond-wait", "cond-wake", "cond-signal", "create", "start", "exit", "join", "atomic"}

// String returns the synchronization kind's name.
func (s SyncKind) String() string {
	if s < numSyncKinds {
		return syncNames[s]
	}
	return fmt.Sprintf("sync(%d)", uint8(s))
}

// Valid reports whether s is a synchronization kind this version understands.
func (s SyncKind) Valid() bool { return s < numSyncKinds }

// Ext is what an extended event carries beyond the common columns. Its
// Stack and Name belong to the batch like the columns do: a consumer that
// keeps them past the batch's next refill copies them.
type Ext struct {
	Size  uint64   // Alloc, Free: the block's size in bytes; Marker (range): the range's length; Map: the length of the .text; Sync: see SyncKind
	SP    uint64   // Call: the stack pointer after the call; Return: after the return
	Stack []uint64 // Alloc, Free: the call stack, innermost first (PC first, then return addresses)
	Type  uint64   // Alloc: the address of the allocated type's descriptor (a Go runtime type), 0 when unknown
	Name  string   // Alloc, Free: the routine ("malloc", "free", an --alloc-fn); Marker: the name given; Map: the object file's path
	Mark  MarkKind // Marker: what it marks
	Sync  SyncKind // Sync: which operation
}

// BatchSize is the number of events readers put in one batch by default.
const BatchSize = 4096

// Batch is a run of events stored as a struct of slices. All slices but
// Ext have the same length; Ext has one entry per extended event, in the
// order of the events, each event's Size holding the index of its entry.
// Readers fill batches; the engine consumes them.
// Consumers treat a batch as read-only: a reader may rely on what it left in
// a batch it fills again (the .mst reader does not clear zero PC and thread
// columns twice).
type Batch struct {
	Kind   []Kind
	Addr   []uint64
	Size   []uint32 // access size; for extended events, the index of their Ext
	PC     []uint64 // 0 when unknown
	Thread []uint32 // 0 when unknown
	Ext    []Ext    // details of the batch's extended events, in order
	// Blocks and Accesses hold the details of the batch's Exec events.
	Blocks   []*Block
	Accesses []L1Access
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
	clear(b.Ext) // drop references to stacks and names
	b.Ext = b.Ext[:0]
	b.Blocks, b.Accesses = b.Blocks[:0], b.Accesses[:0]
}

// Append adds one event to b.
func (b *Batch) Append(k Kind, addr uint64, size uint32, pc uint64, thread uint32) {
	b.Kind = append(b.Kind, k)
	b.Addr = append(b.Addr, addr)
	b.Size = append(b.Size, size)
	b.PC = append(b.PC, pc)
	b.Thread = append(b.Thread, thread)
}

// AppendExt adds one extended event (k.IsExtended()) to b.
func (b *Batch) AppendExt(k Kind, addr, pc uint64, thread uint32, e Ext) {
	b.Append(k, addr, uint32(len(b.Ext)), pc, thread)
	b.Ext = append(b.Ext, e)
}

// AppendExec adds an Exec event to b: an execution of blk on thread that
// took exit, with the accesses acc.
func (b *Batch) AppendExec(blk *Block, exit int, thread uint32, acc []L1Access) {
	b.Append(Exec, uint64(exit), uint32(len(b.Blocks)), uint64(len(b.Accesses))<<32|uint64(len(acc)), thread)
	b.Blocks = append(b.Blocks, blk)
	b.Accesses = append(b.Accesses, acc...)
}

// ExecOf returns the block of Exec event i of b, the exit it took and
// its accesses.
func (b *Batch) ExecOf(i int) (blk *Block, exit int, acc []L1Access) {
	start, n := b.PC[i]>>32, b.PC[i]&(1<<32-1)
	return b.Blocks[b.Size[i]], int(b.Addr[i]), b.Accesses[start : start+n]
}

// ExtOf returns the details of extended event i of b.
func (b *Batch) ExtOf(i int) *Ext { return &b.Ext[b.Size[i]] }

// AppendEvent adds a copy of event i of src to b, with its Ext if it is an
// extended event (its Size then becomes the index of the Ext in b).
func (b *Batch) AppendEvent(src *Batch, i int) {
	if k := src.Kind[i]; k == Exec {
		blk, exit, acc := src.ExecOf(i)
		b.AppendExec(blk, exit, src.Thread[i], acc)
	} else if k.IsExtended() {
		b.AppendExt(k, src.Addr[i], src.PC[i], src.Thread[i], *src.ExtOf(i))
	} else {
		b.Append(k, src.Addr[i], src.Size[i], src.PC[i], src.Thread[i])
	}
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

// Slimmer is implemented by readers that can do less for a consumer that
// uses neither the PC and Thread columns nor Call and Return events, nor
// the Sync events of atomics (the engine when it does not attribute and
// simulates one processor).
type Slimmer interface {
	// Slim makes later Reads leave the PC and Thread columns of the
	// events they deliver unspecified and drop Call and Return events;
	// they may also drop Sync events of kind SyncAtomic (the Modify that
	// follows each stays). The other events and columns are as before.
	Slim()
}

// Writer is a sink of events, such as an .mst encoder.
type Writer interface {
	Write(b *Batch) error
	// Close flushes buffered events and finishes the output; it does not
	// close the underlying io.Writer.
	Close() error
}
