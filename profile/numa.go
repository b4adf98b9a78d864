package profile

import (
	"cmp"
	"slices"
)

// Numa holds the statistics of a machine of several NUMA nodes
// (docs/semantics.md, "NUMA nodes"): the misses that left the processors'
// caches, each served by the memory of its page's home node, split into
// local, remote and remote-dirty (supplied by a processor of another
// node), as FlashPoint counted them in the directory's miss handlers.
type Numa struct {
	Nodes              int    `json:"nodes"`
	Placement          string `json:"placement"` // first-touch, round-robin or interleave
	PageSize           int    `json:"page_size"`
	Monitor            string `json:"monitor"` // full (from --where) or protocol (bins kept in the directory)
	LocalLatency       int    `json:"local_latency"`
	RemoteLatency      int    `json:"remote_latency"`
	RemoteDirtyLatency int    `json:"remote_dirty_latency"`
	// PerNode and Processors count the misses of each node's processors
	// and of each processor.
	PerNode    []NumaNode  `json:"per_node"`
	Processors []NumaEntry `json:"processors"`
	// Objects and Pairs (with --where or protocol monitoring) split the
	// misses by data bin and by procedure × data bin, most cycles first.
	Objects []NumaEntry `json:"objects,omitempty"`
	Pairs   []NumaEntry `json:"pairs,omitempty"`
	// Hints are the pages most of whose misses came from one node other
	// than their home: migrating them there would make those local.
	Hints []MigrationHint `json:"migration_hints,omitempty"`
}

// NumaStats count misses that left the processors' caches.
type NumaStats struct {
	Local       uint64 `json:"local"`
	Remote      uint64 `json:"remote"`       // home at another node, clean
	RemoteDirty uint64 `json:"remote_dirty"` // supplied dirty by another node's processor
	Cold        uint64 `json:"cold"`         // first miss on their line
	Cycles      uint64 `json:"cycles"`       // their latencies
}

// Add adds o's counts to s.
func (s *NumaStats) Add(o *NumaStats) {
	s.Local += o.Local
	s.Remote += o.Remote
	s.RemoteDirty += o.RemoteDirty
	s.Cold += o.Cold
	s.Cycles += o.Cycles
}

// Misses returns all the misses counted.
func (s *NumaStats) Misses() uint64 { return s.Local + s.Remote + s.RemoteDirty }

// NumaNode is one node: its processors, the pages homed at it and its
// processors' misses.
type NumaNode struct {
	Node       int    `json:"node"`
	Processors []int  `json:"processors"`
	PagesHomed uint64 `json:"pages_homed"`
	NumaStats
}

// NumaEntry are the misses of a processor ("processor N"), a data bin
// (Name), or a procedure × bin pair (Function and Name).
type NumaEntry struct {
	Function string `json:"function,omitempty"`
	Name     string `json:"name"`
	NumaStats
}

// MigrationHint is a page used mostly from a node other than its home.
type MigrationHint struct {
	Page     uint64   `json:"page"` // its first address
	Object   string   `json:"object,omitempty"`
	Home     int      `json:"home"`
	Node     int      `json:"node"`      // the node most of its misses came from
	Misses   uint64   `json:"misses"`    // from every node
	FromNode uint64   `json:"from_node"` // from Node
	ByNode   []uint64 `json:"by_node"`
}

// merge adds q's counts to n's: nodes and processors by position, objects
// and pairs by name; the migration hints of both are kept, most misses from
// their node first.
func (n *Numa) merge(q *Numa) {
	for i := range min(len(n.PerNode), len(q.PerNode)) {
		n.PerNode[i].PagesHomed += q.PerNode[i].PagesHomed
		n.PerNode[i].NumaStats.Add(&q.PerNode[i].NumaStats)
	}
	for i := range min(len(n.Processors), len(q.Processors)) {
		n.Processors[i].NumaStats.Add(&q.Processors[i].NumaStats)
	}
	n.Objects = mergeNumaEntries(n.Objects, q.Objects)
	n.Pairs = mergeNumaEntries(n.Pairs, q.Pairs)
	n.Hints = append(n.Hints, q.Hints...)
	slices.SortStableFunc(n.Hints, func(a, b MigrationHint) int { return cmp.Compare(b.FromNode, a.FromNode) })
}

// mergeNumaEntries adds the entries of b into a, matched by function and
// object, and orders them most cycles first.
func mergeNumaEntries(a, b []NumaEntry) []NumaEntry {
	mergeBy(&a, b, func(x, y *NumaEntry) bool { return x.Function == y.Function && x.Name == y.Name },
		func(into, from *NumaEntry) { into.NumaStats.Add(&from.NumaStats) })
	sortEntries(a, compareNumaEntries)
	return a
}

// compareNumaEntries orders NUMA entries most cycles first.
func compareNumaEntries(x, y *NumaEntry) int { return cmp.Compare(y.Cycles, x.Cycles) }
