package report

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/memspy/memspy/profile"
)

// ErrOneNode is the error of the numa view on a profile without NUMA
// statistics (a machine of one node).
var ErrOneNode = errors.New("the profile is of one NUMA node: simulate several (--numa N) for local and remote misses")

// summaryNumaObjects is the number of objects the summary's NUMA section
// lists; the numa view lists more.
const summaryNumaObjects = 5

// numaLine describes the NUMA machine of n in one line: its nodes, the
// placement and size of pages, how the objects were monitored and the
// three latencies.
func numaLine(n *profile.Numa) string {
	monitor := n.Monitor
	switch n.Monitor {
	case "full":
		monitor = "full monitoring (objects from --where)"
	case "protocol":
		monitor = "protocol monitoring (objects kept in the directory)"
	case "":
		monitor = "monitoring unknown"
	default:
		monitor += " monitoring"
	}
	return fmt.Sprintf("NUMA: %d nodes, %s placement of %s pages, %s; latency of a miss from memory: local %s, remote %s, "+
		"remote-dirty %s cycles", n.Nodes, cmp.Or(n.Placement, "unknown"), Bytes(uint64(n.PageSize)), monitor,
		Count(uint64(n.LocalLatency)), Count(uint64(n.RemoteLatency)), Count(uint64(n.RemoteDirtyLatency)))
}

// numaNote explains the columns of the NUMA tables.
const numaNote = "misses from memory (fills that left the processors' caches), each served by the home node of its page: " +
	"local (home at the processor's node), remote (home at another node, clean) and remote-dirty (supplied dirty by a " +
	"processor of another node: three hops); local share: of those misses; cycles: their latencies"

// numaTotal returns the sums of n's nodes (of its processors when it has
// no nodes).
func numaTotal(n *profile.Numa) profile.NumaStats {
	var s profile.NumaStats
	for i := range n.PerNode {
		s.Add(&n.PerNode[i].NumaStats)
	}
	if len(n.PerNode) == 0 {
		for i := range n.Processors {
			s.Add(&n.Processors[i].NumaStats)
		}
	}
	return s
}

// numaCells are the counts of s: local, remote and remote-dirty misses,
// the cold ones (full), the local share and the cycles, with their share
// of all (full; unknown when all is 0).
func numaCells(s *profile.NumaStats, full bool, all uint64) []Cell {
	cs := []Cell{countCell(s.Local), countCell(s.Remote), countCell(s.RemoteDirty)}
	if full {
		cs = append(cs, countCell(s.Cold))
	}
	cs = append(cs, shareCell(s.Local, s.Misses()), countCell(s.Cycles))
	if full {
		cs = append(cs, shareCell(s.Cycles, all))
	}
	return cs
}

// numaColumns are the keys' columns, then those of numaCells.
func numaColumns(keys []string, full bool) []Column {
	var cs []Column
	for _, k := range keys {
		cs = append(cs, Column{Name: k})
	}
	cs = append(cs, Column{Name: "local"}, Column{Name: "remote"}, Column{Name: "remote-dirty"})
	if full {
		cs = append(cs, Column{Name: "cold"})
	}
	cs = append(cs, Column{Name: "local share"}, Column{Name: "cycles"})
	if full {
		cs = append(cs, Column{Name: "share"})
	}
	return cs
}

// numaNodeTable builds the table of n's nodes: their processors, the
// pages homed at them and their processors' misses from memory, with the
// totals. The numa view's (full) adds the cold misses and the share of
// all the cycles.
func numaNodeTable(n *profile.Numa, full bool) *Table {
	total := numaTotal(n)
	t := &Table{Title: "misses from memory by node (of its processors):",
		Columns: numaColumns([]string{"node", "processors", "pages homed"}, full)}
	if full {
		t.Title = "misses from memory by node"
		t.Notes = []string{numaLine(n), numaNote + "; cold: first misses on their line; share: of all the cycles; " +
			"pages homed: pages placed at the node"}
	}
	var pages uint64
	for i := range n.PerNode {
		s := &n.PerNode[i]
		pages += s.PagesHomed
		cells := append([]Cell{countCell(uint64(s.Node)), textCell(numberRanges(s.Processors)), countCell(s.PagesHomed)},
			numaCells(&s.NumaStats, full, total.Cycles)...)
		t.Rows = append(t.Rows, Row{Cells: cells})
	}
	t.Total = append([]Cell{textCell("total"), textCell(""), countCell(pages)}, numaCells(&total, full, total.Cycles)...)
	return t
}

// processorNumber returns the processor an entry of Numa.Processors is
// of ("processor 3" → 3), or -1.
func processorNumber(name string) int {
	if s, ok := strings.CutPrefix(name, "processor "); ok {
		if p, err := strconv.Atoi(s); err == nil {
			return p
		}
	}
	return -1
}

// numaProcessorTable builds the table of n's processors (the first top
// when top > 0): their node and misses from memory, with the totals.
func numaProcessorTable(n *profile.Numa, top int) *Table {
	all := numaTotal(n).Cycles
	t := &Table{Title: "misses from memory by processor", Columns: numaColumns([]string{"processor", "node"}, true)}
	node := map[int]int{}
	for _, s := range n.PerNode {
		for _, p := range s.Processors {
			node[p] = s.Node
		}
	}
	var rows []Row
	var sum profile.NumaStats
	for i := range n.Processors {
		e := &n.Processors[i]
		sum.Add(&e.NumaStats)
		id := processorNumber(e.Name)
		proc, nd := textCell(e.Name), unknownCell()
		if id >= 0 {
			proc = countCell(uint64(id))
			if x, ok := node[id]; ok {
				nd = countCell(uint64(x))
			}
		}
		rows = append(rows, Row{Cells: append([]Cell{proc, nd}, numaCells(&e.NumaStats, true, all)...)})
	}
	t.Rows = firstProcessors(t, rows, true, top)
	t.Total = append([]Cell{textCell("total"), textCell("")}, numaCells(&sum, true, all)...)
	return t
}

// rankNuma returns entries most cycles first, then by function and name.
func rankNuma(entries []profile.NumaEntry) []*profile.NumaEntry {
	es := pointers(entries)
	slices.SortStableFunc(es, func(a, b *profile.NumaEntry) int {
		return cmp.Or(cmp.Compare(b.Cycles, a.Cycles), cmp.Compare(b.Misses(), a.Misses()), cmp.Compare(a.Function, b.Function),
			cmp.Compare(a.Name, b.Name))
	})
	return es
}

// numaObjectTable builds the table of n's objects by cycles (the first
// top when top > 0; rest says how to see the others); the numa view's
// (full) adds the cold misses and the share of all the cycles.
func numaObjectTable(n *profile.Numa, full bool, top int, rest string) *Table {
	all := numaTotal(n).Cycles
	t := &Table{Title: "objects by NUMA cycles:", Columns: numaColumns([]string{"object"}, full)}
	if full {
		t.Title = "objects by NUMA cycles"
	}
	var rows []Row
	for _, e := range rankNuma(n.Objects) {
		rows = append(rows, Row{Cells: append([]Cell{textCell(e.Name)}, numaCells(&e.NumaStats, full, all)...)})
	}
	cut(t, rows, top, rest)
	return t
}

// cut cuts rows to the first top (top > 0), saying so in a note of t.
func cut(t *Table, rows []Row, top int, rest string) {
	if top > 0 && len(rows) > top {
		t.Notes = append(t.Notes, fmt.Sprintf("top %d of %d (%s)", top, len(rows), rest))
		rows = rows[:top]
	}
	t.Rows = rows
}

// numaSection writes the summary's NUMA section of n to b: the machine's
// line, the table of nodes and the objects with the most cycles.
func numaSection(b *strings.Builder, n *profile.Numa) {
	b.WriteString(numaLine(n) + "\n")
	writeText(b, numaNodeTable(n, false), "")
	if len(n.Objects) > 0 {
		writeText(b, numaObjectTable(n, false, summaryNumaObjects, "memspy report PROFILE numa: all"), "")
	}
}

// numa: the misses from memory by node, processor, object and function ×
// object, and the pages to migrate.
func (v *viewer) numa() ([]*Table, error) {
	n := v.p.Numa
	if n == nil {
		return nil, ErrOneNode
	}
	total := numaTotal(n)
	tables := []*Table{numaNodeTable(n, true), numaProcessorTable(n, v.opt.Top)}
	if len(n.Objects) == 0 && len(n.Pairs) == 0 {
		tables[1].Notes = append(tables[1].Notes, "by object and by function × object: simulate with --where, "+
			"or --monitor protocol")
		return tables, nil
	}
	note := fmt.Sprintf("share: of the cycles of all the misses from memory (%s)", Count(total.Cycles))
	objects := numaObjectTable(n, true, v.top, v.more)
	objects.Notes = append([]string{note}, objects.Notes...)
	pairs := &Table{Title: "function × object by NUMA cycles", Columns: numaColumns([]string{"function", "object"}, true),
		Notes: []string{note}}
	var rows []Row
	for _, e := range rankNuma(n.Pairs) {
		rows = append(rows, Row{Cells: append([]Cell{textCell(v.funcName(e.Function)), textCell(e.Name)},
			numaCells(&e.NumaStats, true, total.Cycles)...)})
	}
	v.limit(pairs, rows)
	return append(tables, objects, pairs, v.hintTable(n)), nil
}

// hintTable builds the table of n's migration hints, most misses from
// their node first.
func (v *viewer) hintTable(n *profile.Numa) *Table {
	t := &Table{
		Title: "migration hints: pages used mostly from a node other than their home",
		Columns: []Column{{Name: "page"}, {Name: "object"}, {Name: "home"}, {Name: "node"}, {Name: "misses"}, {Name: "from node"},
			{Name: "share"}},
		Notes: []string{"a page more than half of whose misses from memory came from the processors of one node other than " +
			"its home: migrated there (or first touched there) those misses would be local; misses: from every node; " +
			"from node: from that node; share: of its misses"},
	}
	hs := pointers(n.Hints)
	slices.SortStableFunc(hs, func(a, b *profile.MigrationHint) int {
		return cmp.Or(cmp.Compare(b.FromNode, a.FromNode), cmp.Compare(a.Page, b.Page))
	})
	var rows []Row
	for _, h := range hs {
		rows = append(rows, Row{Cells: []Cell{hexCell(h.Page), orUnknown(h.Object), countCell(uint64(h.Home)),
			countCell(uint64(h.Node)), countCell(h.Misses), countCell(h.FromNode), shareCell(h.FromNode, h.Misses)}})
	}
	if len(rows) == 0 {
		t.Notes = append(t.Notes, "no page was used mostly from a node other than its home")
	}
	v.limit(t, rows)
	return t
}

// AdviceRemote is the kind of advice on an object whose misses from
// memory are mostly remote.
const AdviceRemote = "numa-remote"

// The thresholds of the rule on remote objects: remote and remote-dirty
// misses make more than remoteMinShare of the object's misses from memory,
// and its cycles at least remoteMinCycles of all of them.
const (
	remoteMinShare  = 0.5
	remoteMinCycles = 0.05
)

// adviseNuma applies the rule on remote objects to p (see Advise), most
// cycles first.
func adviseNuma(p *profile.Profile) []Advice {
	n := p.Numa
	if n == nil {
		return nil
	}
	total := numaTotal(n)
	if total.Cycles == 0 {
		return nil
	}
	kinds := map[string]string{}
	var stall map[string]uint64
	if HasWhere(p) {
		stall = map[string]uint64{}
		for _, o := range p.Objects {
			kinds[o.Name], stall[o.Name] = o.Kind, o.StallCycles
		}
	}
	var out []Advice
	for _, o := range rankNuma(n.Objects) {
		remote := o.Remote + o.RemoteDirty
		if frac(remote, o.Misses()) <= remoteMinShare || float64(o.Cycles) < remoteMinCycles*float64(total.Cycles) {
			continue
		}
		if k := kinds[o.Name]; k == "other" || k == "freed" || o.Name == "<other>" || o.Name == "<freed>" {
			continue // memory of no known data structure, or freed: nothing to place
		}
		adv := Advice{Kind: AdviceRemote, Object: o.Name, StallCycles: stall[o.Name], NumaCycles: o.Cycles}
		adv.Evidence = append(adv.Evidence,
			fmt.Sprintf("%s of its %s misses from memory went to another node (%s): %s remote, %s remote-dirty", Count(remote),
				Count(o.Misses()), share(remote, o.Misses()), Count(o.Remote), Count(o.RemoteDirty)),
			fmt.Sprintf("they and its %s local misses cost %s cycles, %s of all the misses from memory (%s cycles)", Count(o.Local),
				Count(o.Cycles), share(o.Cycles, total.Cycles), Count(total.Cycles)))
		if pr := topNumaPair(n, o.Name); pr != nil {
			adv.Function = pr.Function
			adv.Evidence = append(adv.Evidence, fmt.Sprintf("%s makes %s of its cycles", pr.Function, share(pr.Cycles, o.Cycles)))
		}
		where := "its pages are homed at other nodes than those of the processors that use it"
		if home, node, e, ok := hintNodes(n, o.Name); ok {
			where = fmt.Sprintf("its pages are homed at node %d but used from node %d", home, node)
			adv.Evidence = append(adv.Evidence, e)
		} else if e != "" {
			adv.Evidence = append(adv.Evidence, e)
		} else {
			adv.Evidence = append(adv.Evidence, "no migration hint names it: the profile lists none of its pages as "+
				"used mostly from a node other than its home")
		}
		fix := "first-touch homes a page at the node of the processor that touches it first: initialize it in the thread " +
			"that uses it, or migrate the pages listed in memspy report PROFILE numa"
		if n.Placement != "first-touch" {
			fix = fmt.Sprintf("%s placement spreads pages over the nodes whatever uses them: place them first-touch and "+
				"initialize it in the thread that uses it, or migrate the pages listed in memspy report PROFILE numa", n.Placement)
		}
		adv.Message = fmt.Sprintf("%s is mostly remote (%s of its misses from memory): %s (%s)", o.Name, share(remote, o.Misses()),
			where, fix)
		out = append(out, adv)
	}
	return out
}

// topNumaPair returns the pair of object with the most cycles, nil when
// there is none.
func topNumaPair(n *profile.Numa, object string) *profile.NumaEntry {
	for _, e := range rankNuma(n.Pairs) {
		if e.Name == object {
			return e
		}
	}
	return nil
}

// hintNodes returns, from the migration hints naming object, the home
// and the node of the pages that have most of the hinted misses from
// their node, with evidence; ok when those pages have more than half of
// them. The evidence is "" without hints.
func hintNodes(n *profile.Numa, object string) (home, node int, evidence string, ok bool) {
	type key struct{ home, node int }
	from := map[key]uint64{}
	pages := map[key]int{}
	var all uint64
	var count int
	for _, h := range n.Hints {
		if h.Object == object {
			k := key{h.Home, h.Node}
			from[k] += h.FromNode
			pages[k]++
			all += h.FromNode
			count++
		}
	}
	if count == 0 {
		return 0, 0, "", false
	}
	var best key
	first := true
	for k, m := range from {
		if first || m > from[best] || m == from[best] && (k.home < best.home || k.home == best.home && k.node < best.node) {
			best, first = k, false
		}
	}
	what := "pages"
	if count == 1 {
		what = "page"
	}
	evidence = fmt.Sprintf("%d %s of it used mostly from a node other than their home (migration hints), with %s misses "+
		"from that node", count, what, Count(all))
	if len(from) > 1 {
		evidence += fmt.Sprintf("; %d of them, with %s (%s), homed at node %d and used from node %d", pages[best],
			Count(from[best]), share(from[best], all), best.home, best.node)
	} else {
		evidence += fmt.Sprintf(": homed at node %d, used from node %d", best.home, best.node)
	}
	return best.home, best.node, evidence, 2*from[best] > all
}

// mergeNuma inserts the NUMA advice numa into out (use after free first,
// then the object advice by stall cycles): each before the first object
// advice with fewer cycles than it has NUMA cycles.
func mergeNuma(out, numa []Advice) []Advice {
	for _, a := range numa {
		i := len(out)
		for j, b := range out {
			if b.Kind != AdviceUseAfterFree && adviceCycles(&b) < a.NumaCycles {
				i = j
				break
			}
		}
		out = slices.Insert(out, i, a)
	}
	return out
}

// adviceCycles are the cycles by which advice a is ordered: the wait
// cycles of advice on synchronization, the stall cycles of the advice on
// objects, or the NUMA cycles of the advice on remote objects when more.
func adviceCycles(a *Advice) uint64 {
	if a.WaitCycles > 0 {
		return a.WaitCycles
	}
	return max(a.StallCycles, a.NumaCycles)
}
