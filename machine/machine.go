// Package machine describes simulated memory hierarchies: caches, their
// geometry and policies, and memory. Descriptions come from YAML files,
// inline specs (--cache) or presets, and are validated before use.
package machine

// Replacement names a replacement policy.
type Replacement string

// Replacement policies.
const (
	LRU    Replacement = "lru"
	FIFO   Replacement = "fifo"
	Random Replacement = "random" // reproducible from Cache.Seed
	PLRU   Replacement = "plru"   // tree pseudo-LRU; associativity must be a power of two
	SRRIP  Replacement = "srrip"  // static re-reference interval prediction, 2-bit RRPV
	BRRIP  Replacement = "brrip"  // bimodal RRIP, 2-bit RRPV
)

// Holds says which references a cache holds.
type Holds string

// What a cache holds.
const (
	Instructions Holds = "instructions"
	Data         Holds = "data"
	Unified      Holds = "unified"
)

// Inclusion is a cache's inclusion policy relative to the levels above it.
type Inclusion string

// Inclusion policies.
const (
	NonInclusive Inclusion = "none"
	Inclusive    Inclusion = "inclusive" // evictions back-invalidate upper copies
	Exclusive    Inclusion = "exclusive" // holds only lines not held above (victim cache)
)

// AssocFull is the Cache.Assoc value that asks for a fully associative
// cache before normalization (assoc: full). Machine.Normalize replaces it
// with Size/Line ways in one set.
const AssocFull = -1

// Cache describes one cache. After Machine.Normalize every field is set:
// Size == Sets*Assoc*Line, Sets and Assoc need not be powers of two, Line
// is a power of two. Before Normalize, zero means "not given" for Level,
// Size, Sets, Assoc, Line, Latency, Seed and the string fields; see
// Machine.Normalize for the defaults. WriteBack and WriteAllocate cannot
// tell "not given" from false, so the parsers (ParseCacheSpec, Parse)
// default them to true and Normalize leaves them alone.
type Cache struct {
	Name          string      `yaml:"name" json:"name"`
	Level         int         `yaml:"level" json:"level"`
	Size          int64       `yaml:"size" json:"size"` // bytes
	Sets          int         `yaml:"sets" json:"sets"`
	Assoc         int         `yaml:"assoc" json:"assoc"` // ways; a fully associative cache has Sets == 1
	Line          int         `yaml:"line" json:"line"`   // bytes, a power of two
	Replacement   Replacement `yaml:"replacement" json:"replacement"`
	Seed          uint64      `yaml:"seed" json:"seed,omitempty"`
	WriteBack     bool        `yaml:"-" json:"write_back"`     // false: write-through
	WriteAllocate bool        `yaml:"-" json:"write_allocate"` // fetch the line on a write miss
	Holds         Holds       `yaml:"holds" json:"holds"`
	Inclusion     Inclusion   `yaml:"inclusion" json:"inclusion"`
	Latency       int         `yaml:"latency" json:"latency"` // hit cycles
	// Shared, on a machine of several processors, makes one cache serve
	// every processor; a cache not shared is private: each processor has
	// its own copy, kept coherent with the others (MESI).
	Shared bool `yaml:"shared" json:"shared,omitempty"`
}

// Lines returns the number of lines the cache holds.
func (c *Cache) Lines() int { return c.Sets * c.Assoc }

// HoldsInstructions reports whether c holds instruction fetches.
func (c *Cache) HoldsInstructions() bool { return c.Holds != Data }

// HoldsData reports whether c holds data references.
func (c *Cache) HoldsData() bool { return c.Holds != Instructions }

// Machine is a memory hierarchy: caches ordered from the CPU outward, then
// memory.
type Machine struct {
	Name          string  `json:"name"`
	Description   string  `json:"description,omitempty"`
	Caches        []Cache `json:"caches"`
	MemoryLatency int     `json:"memory_latency"` // cycles
	// Processors is the number of processors (1 after Normalize when not
	// given); each has its own copy of every cache not Shared.
	Processors int `json:"processors,omitempty"`
	// Mapping places threads on processors; Pin lists, for the pinned
	// mapping, the processor of each thread in the order threads first
	// appear (threads beyond the list go round-robin).
	Mapping Mapping `json:"mapping,omitempty"`
	Pin     []int   `json:"pin,omitempty"`
	// Nodes groups the processors into NUMA nodes (0 or 1 after Normalize:
	// one memory, uniform). With several, each node has its own memory; a
	// page of memory is homed at one node by Placement, and a miss that
	// leaves a processor's caches costs MemoryLatency at its own node's
	// memory, RemoteLatency at another node's, RemoteDirtyLatency when
	// another node's processor holds the line dirty (three hops). The
	// processors are split into Nodes contiguous groups (see NodeOf).
	// With one node, Placement, PageSize and the remote latencies are kept
	// as given but change nothing (Normalize leaves them zero when not
	// given).
	Nodes              int       `json:"nodes,omitempty"`
	Placement          Placement `json:"placement,omitempty"`
	PageSize           int       `json:"page_size,omitempty"`            // bytes, a power of two
	RemoteLatency      int       `json:"remote_latency,omitempty"`       // cycles
	RemoteDirtyLatency int       `json:"remote_dirty_latency,omitempty"` // cycles
}

// Placement names a way of homing the pages of memory at the NUMA nodes.
type Placement string

// Page placements.
const (
	FirstTouch      Placement = "first-touch" // a page is homed at the node of the processor that first references it
	PlaceRoundRobin Placement = "round-robin" // the pages are homed at nodes 0, 1, 2, ... in the order they are first referenced
	Interleave      Placement = "interleave"  // a page is homed at node (page number mod Nodes)
)

// Placements lists the page placements (do not modify).
var Placements = []Placement{FirstTouch, PlaceRoundRobin, Interleave}

// NodeOf returns the NUMA node of processor p (from 0) on a normalized
// machine: the processors are split into Nodes contiguous groups,
// processor p being on node p*Nodes/Processors. Every node has
// Processors/Nodes processors, or one more. On a machine of one node it
// is 0.
func (m *Machine) NodeOf(p int) int {
	if m.Nodes <= 1 || m.Processors <= 1 {
		return 0
	}
	return p * m.Nodes / m.Processors
}

// Mapping names a way of placing threads on processors.
type Mapping string

// Thread mappings.
const (
	RoundRobin Mapping = "round-robin" // the i-th thread to appear runs on processor i mod Processors
	Pinned     Mapping = "pinned"      // Machine.Pin gives each thread's processor
)

// ProcessorOf returns the processor of the i-th thread to appear (from 0)
// on a normalized machine.
func (m *Machine) ProcessorOf(i int) int {
	if m.Processors <= 1 {
		return 0
	}
	if m.Mapping == Pinned && i < len(m.Pin) {
		return m.Pin[i]
	}
	return i % m.Processors
}
