package machine

import (
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Describe returns a compact human description of a normalized machine:
// its name and description; with several processors, their number and the
// thread mapping; a table with one line per cache (name, level, size,
// associativity, sets, line, what it holds, replacement, write policy,
// inclusion, hit latency, and with several processors whether the cache
// is shared or private), then the memory latency.
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
	fmt.Fprintf(&b, "  memory latency %d cycles\n", m.MemoryLatency)
	return b.String()
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
	if c.Replacement == Random || c.Replacement == BRRIP {
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
// several processors, pin when not empty, shared when true.
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
