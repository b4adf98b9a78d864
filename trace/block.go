package trace

// Block describes a superblock, a straight-line piece of code, for Exec
// events: its events in order, data references without their addresses.
// Kind, Size and PC are as the events the tracer would otherwise deliver
// (IFetch, IFetchRun, Read, Write, Modify, and a Sync before the Modify of
// an atomic); Addr of an IFetch or IFetchRun is its PC.
type Block struct {
	Kind []Kind
	Size []uint32
	PC   []uint64
	// Exits are the ways an execution ends: exit e runs the events before
	// Exits[e].Events; the last one is the end of the superblock.
	Exits []BlockExit
}

// BlockExit counts what an execution of a Block that takes one exit runs:
// its events, and its references by kind (instruction fetches count every
// fetch of a run) as the engine counts events.
type BlockExit struct {
	Events                            int32
	Reads, Writes, IFetches, Modifies uint32
}

// Add counts an event of kind k and size (a run of size fetches for
// IFetchRun) among the references of x; other kinds count none.
func (x *BlockExit) Add(k Kind, size uint32) {
	switch k {
	case IFetch:
		x.IFetches++
	case IFetchRun:
		x.IFetches += size
	case Read:
		x.Reads++
	case Write:
		x.Writes++
	case Modify:
		x.Modifies++
	}
}

// L1Access is an access of a tracer's first-level cache during an Exec
// that the engine must simulate, as memspy's rules make it
// (docs/semantics.md): a miss, a hit on a line after the first of a
// reference spanning lines, or a write hit of a write-through cache. The
// other accesses hit within one line and change nothing the engine keeps
// when it counts misses only.
type L1Access struct {
	// Addr and Size are the bytes of the reference in one line of the
	// cache; Victim is the line address evicted to make room, when Flags
	// has L1Victim.
	Addr, Victim uint64
	Size         uint32
	// Event is the index in Block of the reference; Kind is Read, Write
	// or IFetch (a Modify makes a read, then a write).
	Event int32
	Kind  Kind
	Flags uint8
}

// L1Access flags.
const (
	L1Hit    = 1 << iota // the line was there
	L1Next               // a line after the first of its reference
	L1Victim             // a valid line was evicted (L1Access.Victim)
	L1Dirty              // and it was dirty
)
