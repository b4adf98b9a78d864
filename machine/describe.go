package machine

import (
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/memspy/memspy/cache"
)

// Describe returns a compact human description of a normalized machine:
// its name and description; with several processors, their number and the
// thread mapping; with several NUMA nodes, their number, the page size and
// placement; a table with one line per cache (name, level, size,
// associativity, sets, line, what it holds, replacement, write policy,
// inclusion, hit latency, and with several processors whether the cache
// is shared or private), then the memory latency (with several NUMA nodes,
// the local, remote and remote-dirty latencies).
func (m *Machine) Describe() string {
	var b strings.Builder
	b.WriteString(m.Name)
	if m.Description != "" {
		b.WriteString(": ")
		b.WriteString(m.Description)
	}
	b.WriteString("\n")
	multi := m.Processors > 1
	if multi {
		fmt.Fprintf(&b, "  %d processors; %s\n", m.Processors, m.mappingText())
	}
	numa := m.Nodes > 1
	if numa {
		fmt.Fprintf(&b, "  %s; %s pages homed %s\n", m.nodesText(), FormatSize(int64(m.PageSize)), placementText(m.Placement))
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "  CACHE\tLEVEL\tSIZE\tASSOC\tSETS\tLINE\tHOLDS\tREPLACEMENT\tWRITE\tINCLUSION\tLATENCY")
	if multi {
		fmt.Fprint(tw, "\tSHARING")
	}
	fmt.Fprintln(tw)
	for i := range m.Caches {
		c := &m.Caches[i]
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t%d\t%dB\t%s\t%s\t%s\t%s\t%d",
			c.Name, c.Level, FormatSize(c.Size), c.assocText(), c.Sets, c.Line, c.Holds,
			c.replacementText(), c.writeText(), c.Inclusion, c.Latency)
		if multi {
			fmt.Fprintf(tw, "\t%s", sharingName(c.Shared))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if numa {
		fmt.Fprintf(&b, "  memory latency %d cycles at the processor's own node, %d at another node, %d when another node's processor holds the line dirty\n",
			m.MemoryLatency, m.RemoteLatency, m.RemoteDirtyLatency)
	} else {
		fmt.Fprintf(&b, "  memory latency %d cycles\n", m.MemoryLatency)
	}
	return b.String()
}

// nodesText describes the NUMA nodes of m and their processors: "8 NUMA
// nodes of 2 processors each (0-1, 2-3, 4-5, ...)".
func (m *Machine) nodesText() string {
	per := m.Processors / m.Nodes
	size := strconv.Itoa(per)
	if m.Processors%m.Nodes != 0 {
		size = fmt.Sprintf("%d or %d", per, per+1)
	}
	procs := "processors"
	if size == "1" {
		procs = "processor"
	}
	var groups []string
	first := 0
	for n := 0; n < m.Nodes && n < 3; n++ {
		last := first
		for last+1 < m.Processors && m.NodeOf(last+1) == n {
			last++
		}
		if last == first {
			groups = append(groups, strconv.Itoa(first))
		} else {
			groups = append(groups, fmt.Sprintf("%d-%d", first, last))
		}
		first = last + 1
	}
	if m.Nodes > 3 {
		groups = append(groups, "...")
	}
	return fmt.Sprintf("%d NUMA nodes of %s %s each (%s)", m.Nodes, size, procs, strings.Join(groups, ", "))
}

// placementText describes how pages are homed at the nodes.
func placementText(p Placement) string {
	switch p {
	case FirstTouch:
		return "first-touch (at the node of the processor that first references them)"
	case PlaceRoundRobin:
		return "round-robin (at nodes 0, 1, 2, ... in the order they are first referenced)"
	case Interleave:
		return "interleaved (page number mod nodes)"
	}
	return string(p)
}

// mappingText describes how threads are placed on the processors.
func (m *Machine) mappingText() string {
	if m.Mapping == Pinned {
		return fmt.Sprintf("threads pinned to processors %s in the order they appear, further threads round-robin", pinText(m.Pin))
	}
	return "threads placed round-robin in the order they appear"
}

// pinText writes a pin as ParsePin reads it: "0,1,1,0".
func pinText(pin []int) string {
	items := make([]string, len(pin))
	for i, p := range pin {
		items[i] = strconv.Itoa(p)
	}
	return strings.Join(items, ",")
}

func sharingName(shared bool) string {
	if shared {
		return "shared"
	}
	return "private"
}

func (c *Cache) assocText() string {
	switch {
	case c.Assoc == 1:
		return "direct"
	case c.Sets == 1:
		return fmt.Sprintf("full(%d)", c.Assoc)
	}
	return fmt.Sprintf("%d-way", c.Assoc)
}

func (c *Cache) replacementText() string {
	if cache.Seeded(string(c.Replacement)) {
		return fmt.Sprintf("%s(seed %d)", c.Replacement, c.Seed)
	}
	return string(c.Replacement)
}

func (c *Cache) writeText() string {
	s := writeName(c.WriteBack)
	if c.WriteAllocate {
		return s + "+allocate"
	}
	return s + "+no-allocate"
}

// YAML returns m in the schema Parse reads (see docs/machine.md), giving
// every key, so that Parse(m.YAML(), "") yields m again for a normalized
// machine. The keys of several processors are given only where they say
// something: processors when more than 1, mapping when pinned or with
// several processors, pin when not empty, shared when true. Likewise nodes
// is given when more than 1, and placement, page_size, remote_latency and
// remote_dirty_latency when set (always, with several nodes).
func (m *Machine) YAML() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\n", yamlString(m.Name))
	if m.Description != "" {
		fmt.Fprintf(&b, "description: %s\n", yamlString(m.Description))
	}
	fmt.Fprintf(&b, "memory_latency: %d\n", m.MemoryLatency)
	if m.Processors > 1 {
		fmt.Fprintf(&b, "processors: %d\n", m.Processors)
	}
	if m.Mapping == Pinned || m.Processors > 1 && m.Mapping != "" {
		fmt.Fprintf(&b, "mapping: %s\n", m.Mapping)
	}
	if len(m.Pin) > 0 {
		fmt.Fprintf(&b, "pin: [%s]\n", strings.ReplaceAll(pinText(m.Pin), ",", ", "))
	}
	if m.Nodes > 1 {
		fmt.Fprintf(&b, "nodes: %d\n", m.Nodes)
	}
	if m.Placement != "" {
		fmt.Fprintf(&b, "placement: %s\n", m.Placement)
	}
	if m.PageSize != 0 {
		fmt.Fprintf(&b, "page_size: %s\n", FormatSize(int64(m.PageSize)))
	}
	if m.RemoteLatency != 0 {
		fmt.Fprintf(&b, "remote_latency: %d\n", m.RemoteLatency)
	}
	if m.RemoteDirtyLatency != 0 {
		fmt.Fprintf(&b, "remote_dirty_latency: %d\n", m.RemoteDirtyLatency)
	}
	b.WriteString("caches:\n")
	for i := range m.Caches {
		c := &m.Caches[i]
		fmt.Fprintf(&b, "  - name: %s\n", yamlString(c.Name))
		fmt.Fprintf(&b, "    level: %d\n", c.Level)
		fmt.Fprintf(&b, "    holds: %s\n", c.Holds)
		fmt.Fprintf(&b, "    size: %s\n", FormatSize(c.Size))
		fmt.Fprintf(&b, "    sets: %d\n", c.Sets)
		fmt.Fprintf(&b, "    assoc: %d\n", c.Assoc)
		fmt.Fprintf(&b, "    line: %d\n", c.Line)
		fmt.Fprintf(&b, "    replacement: %s\n", c.Replacement)
		if c.Seed != 0 {
			fmt.Fprintf(&b, "    seed: %d\n", c.Seed)
		}
		fmt.Fprintf(&b, "    write: %s\n", writeName(c.WriteBack))
		fmt.Fprintf(&b, "    allocate: %t\n", c.WriteAllocate)
		fmt.Fprintf(&b, "    inclusion: %s\n", c.Inclusion)
		fmt.Fprintf(&b, "    latency: %d\n", c.Latency)
		if c.Shared {
			b.WriteString("    shared: true\n")
		}
	}
	return []byte(b.String())
}

// yamlString quotes s as a YAML double-quoted scalar (a JSON string is one).
func yamlString(s string) string {
	return fmt.Sprintf("%q", s)
}
