package sim

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"

	"github.com/memspy/memspy/attrib"
	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/profile"
)

// NUMA (docs/semantics.md, "NUMA nodes"): on a machine of several nodes,
// every miss that leaves a processor's caches (a fill from memory) goes to
// the home node of its page, which Placement chooses when the page is
// first filled. The miss is local when the home is the processor's node,
// remote otherwise, and remote-dirty when a processor of another node
// supplied the line dirty (an intervention: three hops); each costs its
// latency instead of the memory latency, in the threads' clocks.
//
// Statistics are kept in the directory's miss handler only, FlashPoint's
// way: per node and processor, per data bin and per procedure × bin (with
// --where, from the access point of the miss; under MonitorProtocol, from
// the bin kept in the line's directory entry and the PC of the miss), per
// page (for migration hints). A line's first miss is cold (the entry's
// warm bit).

// Monitor is how the NUMA statistics find the data bin of a miss.
type Monitor uint8

const (
	// MonitorFull takes the bin of every miss from the full attribution
	// (--where), which does its bookkeeping on every reference.
	MonitorFull Monitor = iota
	// MonitorProtocol keeps each line's bin in its directory entry, found
	// at the line's first miss and changed by allocations and frees, and
	// takes the procedure of a miss from its PC (the function holding it,
	// by the Symbolizer), not from the calling context: nothing is done on
	// hits, and the caches keep no attribution.
	MonitorProtocol
)

// ParseMonitor parses "full" or "protocol".
func ParseMonitor(s string) (Monitor, error) {
	switch s {
	case "full":
		return MonitorFull, nil
	case "protocol":
		return MonitorProtocol, nil
	}
	return 0, fmt.Errorf("unknown monitor %q: want full or protocol", s)
}

// String returns "full" or "protocol".
func (m Monitor) String() string {
	if m == MonitorProtocol {
		return "protocol"
	}
	return "full"
}

// Kinds of NUMA misses.
const (
	numaLocal = iota
	numaRemote
	numaRemoteDirty
	numaClasses
)

// numaCounts are the misses of one entry by kind, its cold misses and the
// cycles they cost.
type numaCounts struct {
	miss   [numaClasses]uint64
	cold   uint64
	cycles uint64
}

func (c *numaCounts) add(class int, cold bool, cycles uint64) {
	c.miss[class]++
	if cold {
		c.cold++
	}
	c.cycles += cycles
}

// numa is the state of the NUMA directory.
type numa struct {
	m         *machine.Machine
	pageShift uint
	latency   [numaClasses]uint64
	homes     map[uint64]int // page → home node, once placed
	placed    int            // pages placed round-robin so far
	dir       map[uint64]numaLine
	// dirtyLine and dirtyProc: the line the last intervention wrote back
	// and its processor, which supplied the data of the miss that follows.
	dirtyLine uint64
	dirtyProc int
	homed     []uint64 // per node: pages homed there
	numaSinks
}

// numaSinks are the counts of the NUMA statistics (a warm-up swaps them
// for scratch ones: see sampling).
type numaSinks struct {
	procs []numaCounts // per processor
	extra []uint64     // per processor: cycles beyond the memory latency
	refs  []numaCounts // per site (when attributing)
	pages map[uint64]*pageUse
}

// newNumaSinks returns empty counts for procs processors.
func newNumaSinks(procs int) numaSinks {
	return numaSinks{procs: make([]numaCounts, procs), extra: make([]uint64, procs), pages: map[uint64]*pageUse{}}
}

// numaLine is a line's directory entry: whether it has been filled before
// (warm) and, under MonitorProtocol, its data bin.
type numaLine struct {
	bin  int32
	warm bool
}

// pageUse counts the misses to one page by node.
type pageUse struct {
	byNode []uint64
	bin    int32
}

func (h *Hierarchy) newNuma() error {
	m := h.m
	if m.Nodes <= 1 {
		return nil
	}
	if h.opt.Monitor == MonitorProtocol && !h.opt.Attribute {
		return fmt.Errorf("sim: protocol monitoring needs the data bins: attribute")
	}
	n := &numa{m: m, pageShift: uint(bits.TrailingZeros64(uint64(m.PageSize))), homes: map[uint64]int{},
		dir: map[uint64]numaLine{}, homed: make([]uint64, m.Nodes), dirtyLine: noAddr, numaSinks: newNumaSinks(len(h.procs))}
	n.latency = [numaClasses]uint64{uint64(m.MemoryLatency), uint64(m.RemoteLatency), uint64(m.RemoteDirtyLatency)}
	h.numa = n
	return nil
}

// home returns the home node of page, placing it for a miss of processor p
// if it has none yet.
func (n *numa) home(page uint64, p int) int {
	node, ok := n.homes[page]
	if !ok {
		switch n.m.Placement {
		case machine.Interleave:
			node = int(page % uint64(n.m.Nodes))
		case machine.PlaceRoundRobin:
			node = n.placed % n.m.Nodes
			n.placed++
		default:
			node = n.m.NodeOf(p)
		}
		n.homes[page] = node
		n.homed[node]++
	}
	return node
}

// reset starts the statistics again from zero (a reset marker); the homes
// of the pages and the directory stay, and so do the cycles already in the
// threads' clocks.
func (n *numa) reset() {
	clear(n.procs)
	clear(n.refs)
	clear(n.pages)
	clear(n.homed)
	for _, node := range n.homes {
		n.homed[node]++
	}
}

// numaMiss counts a fill of line from memory into the processor's
// outermost cache l, for access point ref (when attributing fully) at
// address pa. Under MonitorProtocol the access point is that of the
// current reference's PC and the bin of the line's directory entry.
func (h *Hierarchy) numaMiss(l *level, line, pa uint64, ref point) {
	n, p := h.numa, h.cur.id
	a := line << l.shift
	page := a >> n.pageShift
	home := n.home(page, p)
	class := numaLocal
	switch {
	case n.dirtyLine == line && n.m.NodeOf(n.dirtyProc) != n.m.NodeOf(p):
		class = numaRemoteDirty
	case home != n.m.NodeOf(p):
		class = numaRemote
	}
	n.dirtyLine = noAddr
	e := n.dir[line]
	cold := !e.warm
	at := h.attr
	if at != nil && h.opt.Monitor == MonitorProtocol {
		if cold {
			at.tid = h.curTid // binOf looks for stack frames on the current thread
			e.bin = h.binOf(pa)
		}
		at.missPC()
		ref = at.ref(e.bin)
	}
	e.warm = true
	n.dir[line] = e
	cycles := n.latency[class]
	n.procs[p].add(class, cold, cycles)
	n.extra[p] += cycles - n.latency[numaLocal]
	if ref >= 0 {
		site := ref.site()
		if int(site) >= len(n.refs) {
			n.refs = append(n.refs, make([]numaCounts, int(site)+1-len(n.refs)+64)...)
		}
		n.refs[site].add(class, cold, cycles)
	}
	u := n.pages[page]
	if u == nil {
		u = &pageUse{byNode: make([]uint64, n.m.Nodes), bin: -1}
		n.pages[page] = u
	}
	u.byNode[n.m.NodeOf(p)]++
	if u.bin < 0 && at != nil && ref >= 0 {
		u.bin = at.pointBin(ref)
	}
}

// numaRetag gives the directory entries of the lines of [start, end) the
// bin they now belong to, a block's or else a mapping's (MonitorProtocol):
// called at allocations, mappings and frees, as FlashPoint's allocation
// handlers did.
func (h *Hierarchy) numaRetag(start, end uint64, shift uint) {
	n, at := h.numa, h.attr
	first, last := start>>shift, (end-1)>>shift
	retag := func(line uint64, e numaLine) {
		if e.warm {
			e.bin, _, _ = at.data.Locate(max(line<<shift, start))
			n.dir[line] = e
		}
	}
	if last-first < uint64(len(n.dir)) {
		for line := first; ; line++ {
			if e, ok := n.dir[line]; ok {
				retag(line, e)
			}
			if line == last {
				break
			}
		}
		return
	}
	for line, e := range n.dir {
		if line >= first && line <= last {
			retag(line, e)
		}
	}
}

// numaStats returns the NUMA statistics of the run (nil without nodes).
func (h *Hierarchy) numaStats(nm *namer) *profile.Numa {
	n := h.numa
	if n == nil {
		return nil
	}
	m := n.m
	out := &profile.Numa{Nodes: m.Nodes, Placement: string(m.Placement), PageSize: m.PageSize,
		Monitor: h.opt.Monitor.String(), LocalLatency: m.MemoryLatency, RemoteLatency: m.RemoteLatency,
		RemoteDirtyLatency: m.RemoteDirtyLatency}
	for node := range m.Nodes {
		out.PerNode = append(out.PerNode, profile.NumaNode{Node: node, PagesHomed: n.homed[node]})
	}
	for p, c := range n.procs {
		s := numaEntry(&c)
		s.Name = fmt.Sprintf("processor %d", p)
		out.Processors = append(out.Processors, s)
		ns := &out.PerNode[m.NodeOf(p)]
		ns.Processors = append(ns.Processors, p)
		ns.NumaStats.Add(&s.NumaStats)
	}
	if nm == nil {
		return out
	}
	objs := map[string]*profile.NumaEntry{}
	pairs := map[[2]string]*profile.NumaEntry{}
	for id, c := range n.refs {
		if c.miss == [numaClasses]uint64{} {
			continue
		}
		key := h.attr.sites[id]
		obj := nm.binName(key.bin)
		fn := nm.function(key.pc, max(key.proc, attrib.UnknownProc)).Name
		s := numaEntry(&c)
		entry(objs, obj, &profile.NumaEntry{Name: obj}).NumaStats.Add(&s.NumaStats)
		entry(pairs, [2]string{fn, obj}, &profile.NumaEntry{Function: fn, Name: obj}).NumaStats.Add(&s.NumaStats)
	}
	for _, e := range objs {
		out.Objects = append(out.Objects, *e)
	}
	for _, e := range pairs {
		out.Pairs = append(out.Pairs, *e)
	}
	byCycles := func(a, b profile.NumaEntry) int {
		return cmp.Or(cmp.Compare(b.Cycles, a.Cycles), cmp.Compare(a.Function, b.Function), cmp.Compare(a.Name, b.Name))
	}
	slices.SortFunc(out.Objects, byCycles)
	slices.SortFunc(out.Pairs, byCycles)
	out.Hints = h.migrationHints(nm)
	return out
}

// numaEntry converts counts to the profile's form.
func numaEntry(c *numaCounts) profile.NumaEntry {
	return profile.NumaEntry{NumaStats: profile.NumaStats{Local: c.miss[numaLocal], Remote: c.miss[numaRemote],
		RemoteDirty: c.miss[numaRemoteDirty], Cold: c.cold, Cycles: c.cycles}}
}

// maxHints bounds the migration hints in a profile.
const maxHints = 50

// migrationHints returns the pages whose misses came mostly from one node
// other than their home, most misses first: moving the page there would
// make them local.
func (h *Hierarchy) migrationHints(nm *namer) []profile.MigrationHint {
	n := h.numa
	var out []profile.MigrationHint
	for page, u := range n.pages {
		home := n.home(page, 0)
		best, total := 0, uint64(0)
		for node, c := range u.byNode {
			total += c
			if c > u.byNode[best] {
				best = node
			}
		}
		if best == home || 2*u.byNode[best] <= total {
			continue
		}
		hint := profile.MigrationHint{Page: page << n.pageShift, Home: home, Node: best,
			Misses: total, FromNode: u.byNode[best], ByNode: u.byNode}
		if u.bin >= 0 {
			hint.Object = nm.binName(u.bin)
		}
		out = append(out, hint)
	}
	slices.SortFunc(out, func(a, b profile.MigrationHint) int {
		return cmp.Or(cmp.Compare(b.FromNode, a.FromNode), cmp.Compare(a.Page, b.Page))
	})
	if len(out) > maxHints {
		out = out[:maxHints]
	}
	return out
}

// entry returns m[k], made fresh on first use.
func entry[K comparable, T any](m map[K]*T, k K, fresh *T) *T {
	if e, ok := m[k]; ok {
		return e
	}
	m[k] = fresh
	return fresh
}
