package web

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/profile"
)

// Limits bound what a page holds of a profile, so that its size follows
// what a person reads rather than the size of the profile: the entries
// with the most cycles of each list, and what those entries lead to.
type Limits struct {
	Functions int // procedures, most cycles first
	Objects   int // data objects, most stall cycles first
	// PairsPer is the most function × object pairs taken per procedure
	// and per object shown, most stall cycles first, and Pairs the most
	// of those kept, most stall cycles first.
	PairsPer int
	Pairs    int
	// RefsPer is the most references taken per pair kept, and References
	// the most of those kept, most stall cycles first.
	RefsPer    int
	References int
	// EvictedBy is the most evicting objects listed per entry and cache,
	// Evictors the most evicting references per reference and cache (the
	// rest are added up as others).
	EvictedBy int
	Evictors  int
	// Context is the source lines shown either side of a reference.
	Context int
	// Processes, Processors, Threads, Sync and Dumps bound those lists.
	Processes  int
	Processors int
	Threads    int
	Sync       int
	Dumps      int
	// CallNodes bounds the nodes of the call tree (those with the most
	// cycles, their callees' included), and CallDepth its depth; the
	// others count in their nearest caller shown.
	CallNodes int
	CallDepth int
}

// DefaultLimits are the limits of memspy report --html and memspy serve.
var DefaultLimits = Limits{Functions: 25, Objects: 40, PairsPer: 6, Pairs: 150, RefsPer: 4, References: 250, EvictedBy: 8, Evictors: 4, Context: 3,
	Processes: 200, Processors: 64, Threads: 64, Sync: 20, Dumps: 200, CallNodes: 600, CallDepth: 40}

// Model is what a page shows of one profile: numbers copied from it,
// bounded by Limits. Counts are those of the profile; nothing is
// estimated.
type Model struct {
	// Name is the profile's file as given; Download, when the page is
	// served, the address of the file itself.
	Name     string `json:"name"`
	Download string `json:"download,omitempty"`
	Source   string `json:"source"`
	Format   string `json:"format"`
	Machine  string `json:"machine"`
	Events   uint64 `json:"events"`
	Complete bool   `json:"complete"`
	Error    string `json:"error,omitempty"`
	// Sampled, for a sampled run, is the share of the references counted
	// (Counted / Seen), which every count covers.
	Sampled *Sampled `json:"sampled,omitempty"`
	// Where says the profile has where-and-why entries; MissOnly that it
	// counted misses only (accesses, hits and line use unknown);
	// ComputeKnown that some cache held instructions, so that compute
	// cycles were counted.
	Where        bool `json:"where"`
	MissOnly     bool `json:"miss_only"`
	ComputeKnown bool `json:"compute_known"`
	// Focus is the cache the page shows first.
	Focus  string              `json:"focus"`
	Caches []Cache             `json:"caches"`
	Memory profile.MemoryStats `json:"memory"`
	// Totals are the whole run's cycles, over every function, and how
	// many entries the profile has of each kind (the page shows the
	// first of each).
	Totals Totals `json:"totals"`
	// Functions, Objects, Pairs and References are the entries shown.
	// Each function and object lists its pairs shown, and each pair its
	// references shown, as indices into Pairs and References, most stall
	// cycles first.
	Functions  []Function  `json:"functions"`
	Objects    []Object    `json:"objects"`
	Pairs      []Pair      `json:"pairs"`
	References []Reference `json:"references"`
	// Sources holds the source lines around the references shown, by
	// file and line number, read when the page was made; a file that
	// could not be read is absent.
	Sources    map[string]map[int]string `json:"sources,omitempty"`
	Processes  []Process                 `json:"processes,omitempty"`
	Processors []profile.ProcessorStats  `json:"processors,omitempty"`
	Threads    []profile.ThreadStats     `json:"threads,omitempty"`
	Sync       []profile.SyncObject      `json:"sync,omitempty"`
	Dumps      []Dump                    `json:"dumps,omitempty"`
	// Timeline is the profile's: the caches' counters over the run (at
	// most profile.MaxTimelinePoints points; nil when it has none).
	Timeline *profile.Timeline `json:"timeline,omitempty"`
	// CallTree is the profile's call tree, at most Limits.CallNodes nodes
	// of it, callers first (nil when it has none).
	CallTree []CallNode `json:"call_tree,omitempty"`
}

// CallNode is a calling context: its function, called from the node
// Caller (-1 at the top), its calls, and its cycles: its own (with those
// of the calling contexts under it that the page leaves out) and with
// everything it called. Stall cycles add up every cache's.
type CallNode struct {
	Function  string `json:"function"`
	Caller    int32  `json:"caller"`
	Calls     uint64 `json:"calls"`
	Compute   uint64 `json:"compute"`
	Stall     uint64 `json:"stall"`
	Sync      uint64 `json:"sync"`
	InCompute uint64 `json:"in_compute"`
	InStall   uint64 `json:"in_stall"`
	InSync    uint64 `json:"in_sync"`
}

// Sampled says how much of a sampled run was counted.
type Sampled struct {
	Counted uint64 `json:"counted"`
	Seen    uint64 `json:"seen"`
}

// Cache is one cache: its description and its counters.
type Cache struct {
	profile.CacheStats
	Size    int64  `json:"size"`
	Assoc   int    `json:"assoc"`
	Line    int    `json:"line"`
	Holds   string `json:"holds"`
	Latency int    `json:"latency"`
	Shared  bool   `json:"shared"`
	// MissLatency is what each miss here waits: the latency of the next
	// level, or of memory after the last (a miss's stall cycles).
	MissLatency int `json:"miss_latency"`
}

// Totals are the whole run's cycles and the number of entries of each
// kind in the profile.
type Totals struct {
	ComputeCycles uint64 `json:"compute_cycles"`
	StallCycles   uint64 `json:"stall_cycles"`
	SyncCycles    uint64 `json:"sync_cycles"`
	Functions     int    `json:"functions"`
	Objects       int    `json:"objects"`
	Pairs         int    `json:"pairs"`
	References    int    `json:"references"`
	// OmittedPairs and OmittedReferences are those the profile itself
	// left out (beyond its bounds).
	OmittedPairs      uint64 `json:"omitted_pairs"`
	OmittedReferences uint64 `json:"omitted_references"`
	Processes         int    `json:"processes"`
	Processors        int    `json:"processors"`
	Threads           int    `json:"threads"`
	Sync              int    `json:"sync"`
	Dumps             int    `json:"dumps"`
}

// Level is an entry's counters at one cache; counters that are 0 are
// left out of the JSON.
type Level struct {
	Accesses     uint64         `json:"accesses,omitempty"`
	Hits         uint64         `json:"hits,omitempty"`
	Misses       uint64         `json:"misses,omitempty"`
	StallCycles  uint64         `json:"stall_cycles,omitempty"`
	Causes       profile.Causes `json:"causes,omitzero"`
	TemporalHits uint64         `json:"temporal_hits,omitempty"`
	SpatialHits  uint64         `json:"spatial_hits,omitempty"`
	UsedBytes    uint64         `json:"used_bytes,omitempty"`
	FetchedBytes uint64         `json:"fetched_bytes,omitempty"`
	// EvictedBy lists the objects whose fills evicted the entry's lines,
	// most first; Others adds up those beyond Limits.EvictedBy.
	EvictedBy []Count `json:"evicted_by,omitempty"`
	Others    *Others `json:"others,omitempty"`
	// InvalidatedBy and Invalidated are the profile's sharing lists.
	InvalidatedBy []profile.Sharing `json:"invalidated_by,omitempty"`
	Invalidated   []profile.Sharing `json:"invalidated,omitempty"`
	// Evictors, for references, are the evicting references.
	Evictors []Evictor `json:"evictors,omitempty"`
}

// Count is a number of lines by the name of an object.
type Count struct {
	Name  string `json:"name"`
	Lines uint64 `json:"lines"`
}

// Others adds up the evicting objects not listed.
type Others struct {
	Objects int    `json:"objects"`
	Lines   uint64 `json:"lines"`
	// More says that Lines also holds the lines of objects the profile
	// itself does not list (profile.Stats.EvictedByOthers): Objects
	// counts only those beyond Limits.EvictedBy.
	More bool `json:"more,omitempty"`
}

// Evictor is a reference whose fills evicted a reference's lines, or
// (Reference profile.OtherEvictors, no Object) the others added up, last.
type Evictor struct {
	Reference string `json:"reference"` // "0x…" or profile.OtherEvictors
	Object    string `json:"object"`
	Lines     uint64 `json:"lines"`
}

// Cycles are compute, memory stall and synchronization cycles.
type Cycles struct {
	ComputeCycles uint64 `json:"compute_cycles"`
	StallCycles   uint64 `json:"stall_cycles"`
	SyncCycles    uint64 `json:"sync_cycles"`
}

// Function is a procedure (or region) shown.
type Function struct {
	Name   string `json:"name"`
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Module string `json:"module,omitempty"`
	Region bool   `json:"region,omitempty"`
	Cycles
	// Inclusive are its cycles with its callees' (nil when the profile
	// has none).
	Inclusive *Cycles          `json:"inclusive,omitempty"`
	Levels    map[string]Level `json:"levels"`
	// Pairs are its pairs kept (indices into Model.Pairs), PairsTotal
	// how many the profile lists.
	Pairs      []int `json:"pairs"`
	PairsTotal int   `json:"pairs_total"`
}

// Object is a data structure shown.
type Object struct {
	Name          string                 `json:"name"`
	FullName      string                 `json:"full_name"`
	Kind          string                 `json:"kind"`
	AllocSite     string                 `json:"alloc_site,omitempty"`
	CallPath      []string               `json:"call_path,omitempty"`
	Size          uint64                 `json:"size"`
	Blocks        uint64                 `json:"blocks,omitempty"`
	StallCycles   uint64                 `json:"stall_cycles"`
	SharingWrites []profile.SharingWrite `json:"sharing_writes,omitempty"`
	// LineUse is the profile's: by cache, how many of the object's lines
	// had each byte offset used.
	LineUse    map[string][]uint64 `json:"line_use,omitempty"`
	Levels     map[string]Level    `json:"levels"`
	Pairs      []int               `json:"pairs"`
	PairsTotal int                 `json:"pairs_total"`
}

// Pair is a function × object pair shown.
type Pair struct {
	Function    string           `json:"function"`
	Object      string           `json:"object"`
	StallCycles uint64           `json:"stall_cycles"`
	Strides     *profile.Strides `json:"strides,omitempty"`
	Levels      map[string]Level `json:"levels"`
	// References are those of the pair shown; RefsTotal how many the
	// profile lists.
	References []int `json:"references"`
	RefsTotal  int   `json:"refs_total"`
}

// Reference is an access point shown.
type Reference struct {
	PC          string           `json:"pc"`
	File        string           `json:"file,omitempty"`
	Line        int              `json:"line,omitempty"`
	Column      int              `json:"column,omitempty"`
	Function    string           `json:"function"`
	Object      string           `json:"object"`
	Kind        string           `json:"kind"`
	StallCycles uint64           `json:"stall_cycles"`
	Strides     *profile.Strides `json:"strides,omitempty"`
	Levels      map[string]Level `json:"levels"`
	Pair        int              `json:"pair"`
}

// Process is a program of a process tree, with its own cache counters.
type Process struct {
	Pid     int           `json:"pid"`
	Parent  int           `json:"parent"`
	Command string        `json:"command"`
	Exit    string        `json:"exit"`
	Events  uint64        `json:"events"`
	Caches  []CacheCounts `json:"caches"`
}

// CacheCounts are the counters of a cache that the page shows of a
// process, or at a dump marker.
type CacheCounts struct {
	Name       string `json:"name"`
	Accesses   uint64 `json:"accesses"`
	Misses     uint64 `json:"misses"`
	Evictions  uint64 `json:"evictions"`
	Writebacks uint64 `json:"writebacks"`
}

// Dump is the counters of the caches at a dump marker.
type Dump struct {
	Name   string        `json:"name"`
	Caches []CacheCounts `json:"caches"`
}

// cacheCounts copies the counters of cs the page shows.
func cacheCounts(cs []profile.CacheStats) []CacheCounts {
	out := make([]CacheCounts, len(cs))
	for i, c := range cs {
		out[i] = CacheCounts{Name: c.Name, Accesses: c.Accesses, Misses: c.Misses, Evictions: c.Evictions, Writebacks: c.Writebacks}
	}
	return out
}

// NewModel makes the model of profile p, read from the file name, within
// lim. It reads the source files its references name for their context
// lines; p is not changed.
func NewModel(p *profile.Profile, name string, lim Limits) (*Model, error) {
	if len(p.Caches) == 0 {
		return nil, fmt.Errorf("%s: the profile has no caches", name)
	}
	m := &Model{Name: name, Source: p.Source.Name, Format: p.Source.Format, Events: p.Events, Complete: p.Complete,
		Error: p.Error, Where: p.Options.Where, MissOnly: p.Options.MissOnly, Focus: cmp.Or(p.Focus, p.DefaultFocus()),
		Memory: p.Memory, ComputeKnown: true, Functions: []Function{}, Objects: []Object{}, Pairs: []Pair{},
		References: []Reference{}}
	if s := p.Sampling; s != nil {
		m.Sampled = &Sampled{Counted: s.Counted, Seen: s.Seen}
	}
	if mc := p.Machine; mc != nil {
		m.Machine = mc.Name
		m.ComputeKnown = slices.ContainsFunc(mc.Caches, func(c machine.Cache) bool { return c.HoldsInstructions() })
	}
	m.addCaches(p)
	m.addWhere(p, lim)
	m.Sources = readSources(m.References, lim.Context)
	m.addProcesses(p, lim)
	m.Timeline = p.Timeline
	m.addCallTree(p.CallTree, lim.CallNodes, lim.CallDepth)
	return m, nil
}

// addCallTree copies the nodes of t with the most cycles, at most max of
// them (profile.KeepCallers) and none deeper than depth (a recursion
// through several functions makes a path of thousands), those left out
// adding their own cycles into their nearest caller kept. A node kept
// keeps its inclusive cycles (t.Inclusive): those it takes in are of its
// subtree.
func (m *Model) addCallTree(t *profile.CallTree, max, depth int) {
	if t == nil || len(t.Nodes) == 0 {
		return
	}
	// cycles returns n's compute (when known), stall and sync cycles.
	cycles := func(n *profile.CallNode) (compute, stall, sync uint64) {
		if m.ComputeKnown {
			compute = n.Instructions
		}
		for _, s := range n.Levels {
			stall += s.StallCycles
		}
		return compute, stall, n.SyncCycles
	}
	incl := t.Inclusive()
	own := make([]CallNode, len(t.Nodes))
	callers, weights := make([]int32, len(t.Nodes)), make([]uint64, len(t.Nodes))
	for i := range t.Nodes {
		n := &t.Nodes[i]
		c := CallNode{Function: n.Function, Caller: n.Caller, Calls: n.Calls}
		c.Compute, c.Stall, c.Sync = cycles(n)
		c.InCompute, c.InStall, c.InSync = cycles(&incl[i])
		own[i], callers[i], weights[i] = c, n.Caller, c.Compute+c.Stall+c.Sync
	}
	into, kept := profile.KeepCallers(callers, weights, max)
	level := make([]int, len(own)) // by node: its depth, 1 at the top
	for i, c := range callers {
		level[i] = 1
		if c >= 0 {
			level[i] = level[c] + 1
			if level[i] > depth {
				into[i] = into[c] // (callers first: into[c] is settled)
			}
		}
	}
	place := make([]int32, len(own)) // by node kept: its index in m.CallTree
	m.CallTree = make([]CallNode, 0, kept)
	for i, c := range own {
		if k := into[i]; k != int32(i) {
			n := &m.CallTree[place[k]]
			n.Compute += c.Compute
			n.Stall += c.Stall
			n.Sync += c.Sync
			continue
		}
		place[i] = int32(len(m.CallTree))
		if c.Caller >= 0 {
			c.Caller = place[c.Caller]
		}
		m.CallTree = append(m.CallTree, c)
	}
}

// addCaches copies the caches' counters and descriptions.
func (m *Model) addCaches(p *profile.Profile) {
	for i := range p.Caches {
		c := Cache{CacheStats: p.Caches[i]}
		if d, ok := p.MachineCache(c.Name); ok {
			c.Size, c.Assoc, c.Line, c.Holds, c.Latency, c.Shared = d.Size, d.Assoc, d.Line, string(d.Holds), d.Latency, d.Shared
			c.MissLatency = missLatency(p, d)
		}
		m.Caches = append(m.Caches, c)
	}
}

// missLatency is what a miss at cache c of p waits: the latency of the
// next level out, or of memory after the last.
func missLatency(p *profile.Profile, c *machine.Cache) int {
	cs := p.Machine.Caches
	i := slices.IndexFunc(cs, func(d machine.Cache) bool { return d.Name == c.Name })
	for _, d := range cs[i+1:] {
		if d.Level > c.Level {
			return d.Latency
		}
	}
	return p.Machine.MemoryLatency
}

// addWhere picks the entries shown: the functions with the most cycles
// and the objects with the most stall cycles; of the pairs of each, the
// first PairsPer, of which the Pairs with the most stall cycles; of the
// references of each pair kept, the first RefsPer, of which the
// References with the most. Objects of kind code (the lines instruction
// fetches bring in) and their pairs are left out, as memspy report's views
// of data leave them out.
func (m *Model) addWhere(p *profile.Profile, lim Limits) {
	code := map[string]bool{}
	for i := range p.Objects {
		if p.Objects[i].Kind == "code" {
			code[p.Objects[i].Name] = true
		}
	}
	t := &m.Totals
	t.Functions, t.References = len(p.Functions), len(p.References)
	if o := p.OmittedPairs; o != nil {
		t.OmittedPairs = o.Pairs
	}
	if o := p.OmittedReferences; o != nil {
		t.OmittedReferences = o.References
	}
	for i := range p.Functions {
		f := &p.Functions[i]
		t.ComputeCycles += f.ComputeCycles
		t.StallCycles += f.StallCycles
		t.SyncCycles += f.SyncCycles
	}
	fns := pointers(p.Functions)
	slices.SortStableFunc(fns, func(a, b *profile.Function) int {
		return cmp.Or(cmp.Compare(cycles(b), cycles(a)), cmp.Compare(a.Name, b.Name))
	})
	fns = fns[:min(len(fns), lim.Functions)]
	var objs []*profile.Object
	for i := range p.Objects {
		if !code[p.Objects[i].Name] {
			objs = append(objs, &p.Objects[i])
		}
	}
	t.Objects = len(objs)
	slices.SortStableFunc(objs, func(a, b *profile.Object) int {
		return cmp.Or(profile.ByStall(&a.Stats, &b.Stats), cmp.Compare(a.Name, b.Name))
	})
	objs = objs[:min(len(objs), lim.Objects)]

	// The pairs of each function and object shown, most stall cycles first.
	byFn, byObj := map[string][]*profile.Pair{}, map[string][]*profile.Pair{}
	for _, f := range fns {
		byFn[f.Name] = nil
	}
	for _, o := range objs {
		byObj[o.Name] = nil
	}
	for i := range p.Pairs {
		pr := &p.Pairs[i]
		if code[pr.Object] {
			continue
		}
		t.Pairs++
		if l, ok := byFn[pr.Function]; ok {
			byFn[pr.Function] = append(l, pr)
		}
		if l, ok := byObj[pr.Object]; ok {
			byObj[pr.Object] = append(l, pr)
		}
	}
	seen := map[*profile.Pair]bool{}
	var kept []*profile.Pair
	for _, lists := range []map[string][]*profile.Pair{byFn, byObj} {
		for _, l := range lists {
			slices.SortStableFunc(l, comparePairs)
			for _, pr := range l[:min(len(l), lim.PairsPer)] {
				if !seen[pr] {
					seen[pr] = true
					kept = append(kept, pr)
				}
			}
		}
	}
	slices.SortStableFunc(kept, comparePairs)
	kept = kept[:min(len(kept), lim.Pairs)]
	m.addPairs(p, kept, lim)

	at := map[[2]string]int{}
	for i, pr := range m.Pairs {
		at[[2]string{pr.Function, pr.Object}] = i
	}
	// pairsOf are the indices of the pairs kept of l, in its order.
	pairsOf := func(l []*profile.Pair) []int {
		is := []int{}
		for _, pr := range l {
			if i, ok := at[[2]string{pr.Function, pr.Object}]; ok {
				is = append(is, i)
			}
		}
		return is
	}
	for _, f := range fns {
		mf := Function{Name: f.Name, File: f.File, Line: f.Line, Module: f.Module, Region: f.Region,
			Cycles: Cycles{f.ComputeCycles, f.StallCycles, f.SyncCycles},
			Levels: levels(f.Levels, lim), Pairs: pairsOf(byFn[f.Name]), PairsTotal: len(byFn[f.Name])}
		if in := f.Inclusive; in != nil {
			mf.Inclusive = &Cycles{in.ComputeCycles, in.StallCycles, in.SyncCycles}
		}
		m.Functions = append(m.Functions, mf)
	}
	for _, o := range objs {
		m.Objects = append(m.Objects, Object{Name: o.Name, FullName: o.FullName, Kind: o.Kind, AllocSite: o.AllocSite,
			CallPath: o.CallPath, Size: o.Size, Blocks: o.Blocks, StallCycles: o.StallCycles, SharingWrites: o.SharingWrites,
			LineUse: o.LineUse,
			Levels:  levels(o.Levels, lim), Pairs: pairsOf(byObj[o.Name]), PairsTotal: len(byObj[o.Name])})
	}
}

// comparePairs orders pairs as a profile lists them: most stall cycles
// first, then by function and object.
func comparePairs(a, b *profile.Pair) int {
	return cmp.Or(profile.ByStall(&a.Stats, &b.Stats), cmp.Compare(a.Function, b.Function), cmp.Compare(a.Object, b.Object))
}

// addPairs adds the pairs prs, in order, and the references kept of each:
// of its first RefsPer (in the profile's order, most stall cycles first),
// the References with the most stall cycles.
func (m *Model) addPairs(p *profile.Profile, prs []*profile.Pair, lim Limits) {
	at := map[[2]string]int{}
	for _, pr := range prs {
		at[[2]string{pr.Function, pr.Object}] = len(m.Pairs)
		m.Pairs = append(m.Pairs, Pair{Function: pr.Function, Object: pr.Object, StallCycles: pr.StallCycles,
			Strides: pr.Strides, Levels: levels(pr.Levels, lim), References: []int{}})
	}
	refs := map[int][]*profile.Reference{}
	for i := range p.References {
		r := &p.References[i]
		if j, ok := at[[2]string{r.Function, r.Object}]; ok {
			refs[j] = append(refs[j], r)
			m.Pairs[j].RefsTotal++
		}
	}
	var kept []*profile.Reference
	for _, rs := range refs {
		slices.SortStableFunc(rs, profile.CompareReferences)
		kept = append(kept, rs[:min(len(rs), lim.RefsPer)]...)
	}
	slices.SortStableFunc(kept, profile.CompareReferences)
	for _, r := range kept[:min(len(kept), lim.References)] {
		j := at[[2]string{r.Function, r.Object}]
		m.Pairs[j].References = append(m.Pairs[j].References, len(m.References))
		m.References = append(m.References, Reference{PC: fmt.Sprintf("%#x", r.PC), File: r.File, Line: r.Line,
			Column: r.Column, Function: r.Function, Object: r.Object, Kind: r.Kind, StallCycles: r.StallCycles,
			Strides: r.Strides, Levels: levels(r.Levels, lim), Pair: j})
	}
}

// addProcesses copies the process tree, processors, threads,
// synchronization objects and dumps, each bounded.
func (m *Model) addProcesses(p *profile.Profile, lim Limits) {
	t := &m.Totals
	t.Processes, t.Processors, t.Threads, t.Sync, t.Dumps = len(p.Processes), len(p.Processors), len(p.Threads), len(p.Sync), len(p.Dumps)
	for _, pr := range p.Processes[:min(len(p.Processes), lim.Processes)] {
		mp := Process{Pid: pr.Pid, Parent: pr.Parent, Command: pr.Command, Exit: pr.Exit}
		if q := pr.Profile; q != nil {
			mp.Events, mp.Caches = q.Events, cacheCounts(q.Caches)
		}
		m.Processes = append(m.Processes, mp)
	}
	m.Processors = p.Processors[:min(len(p.Processors), lim.Processors)]
	m.Threads = p.Threads[:min(len(p.Threads), lim.Threads)]
	m.Sync = p.Sync[:min(len(p.Sync), lim.Sync)]
	for _, d := range p.Dumps[:min(len(p.Dumps), lim.Dumps)] {
		m.Dumps = append(m.Dumps, Dump{Name: d.Name, Caches: cacheCounts(d.Caches)})
	}
}

// cycles are a function's own compute, stall and sync cycles.
func cycles(f *profile.Function) uint64 { return f.ComputeCycles + f.StallCycles + f.SyncCycles }

// levels copies an entry's counters by cache.
func levels(ls map[string]*profile.Stats, lim Limits) map[string]Level {
	out := make(map[string]Level, len(ls))
	for name, s := range ls {
		if s != nil {
			out[name] = level(s, lim)
		}
	}
	return out
}

// level copies s, its evicting objects most first and bounded.
func level(s *profile.Stats, lim Limits) Level {
	l := Level{Accesses: s.Accesses, Hits: s.Hits, Misses: s.Misses, StallCycles: s.StallCycles, Causes: s.Causes, TemporalHits: s.TemporalHits,
		SpatialHits: s.SpatialHits, UsedBytes: s.UsedBytes, FetchedBytes: s.FetchedBytes,
		InvalidatedBy: s.InvalidatedBy, Invalidated: s.Invalidated}
	for name, n := range s.EvictedBy {
		l.EvictedBy = append(l.EvictedBy, Count{name, n})
	}
	slices.SortFunc(l.EvictedBy, func(a, b Count) int { return cmp.Or(cmp.Compare(b.Lines, a.Lines), cmp.Compare(a.Name, b.Name)) })
	if len(l.EvictedBy) > lim.EvictedBy || s.EvictedByOthers > 0 {
		l.Others = &Others{Lines: s.EvictedByOthers, More: s.EvictedByOthers > 0}
		shown := min(lim.EvictedBy, len(l.EvictedBy))
		for _, c := range l.EvictedBy[shown:] {
			l.Others.Objects++
			l.Others.Lines += c.Lines
		}
		l.EvictedBy = l.EvictedBy[:shown]
	}
	var rest *Evictor
	for _, e := range s.Evictors {
		switch {
		case e.Reference != profile.OtherEvictors && len(l.Evictors) < lim.Evictors:
			l.Evictors = append(l.Evictors, Evictor{Reference: e.Reference, Object: e.Object, Lines: e.Count})
		case rest == nil:
			rest = &Evictor{Reference: profile.OtherEvictors, Lines: e.Count}
		default:
			rest.Lines += e.Count
		}
	}
	if rest != nil {
		l.Evictors = append(l.Evictors, *rest)
	}
	return l
}

// pointers returns pointers to the elements of xs.
func pointers[T any](xs []T) []*T {
	ps := make([]*T, len(xs))
	for i := range xs {
		ps[i] = &xs[i]
	}
	return ps
}

// SetFocus makes cache the one the page shows first.
func (m *Model) SetFocus(cache string) error {
	var names []string
	for _, c := range m.Caches {
		if c.Name == cache {
			m.Focus = cache
			return nil
		}
		names = append(names, c.Name)
	}
	return fmt.Errorf("no cache %q to focus on (caches: %v)", cache, names)
}
