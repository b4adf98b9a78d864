package machine

import (
	"fmt"
	"strings"
	"text/tabwriter"
)

// Describe returns a compact human description of a normalized machine:
// its name and description, a table with one line per cache (name, level,
// size, associativity, sets, line, what it holds, replacement, write
// policy, inclusion, hit latency), then the memory latency.
func (m *Machine) Describe() string {
	var b strings.Builder
	b.WriteString(m.Name)
	if m.Description != "" {
		b.WriteString(": ")
		b.WriteString(m.Description)
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  CACHE\tLEVEL\tSIZE\tASSOC\tSETS\tLINE\tHOLDS\tREPLACEMENT\tWRITE\tINCLUSION\tLATENCY")
	for i := range m.Caches {
		c := &m.Caches[i]
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t%d\t%dB\t%s\t%s\t%s\t%s\t%d\n",
			c.Name, c.Level, FormatSize(c.Size), c.assocText(), c.Sets, c.Line, c.Holds,
			c.replacementText(), c.writeText(), c.Inclusion, c.Latency)
	}
	tw.Flush()
	fmt.Fprintf(&b, "  memory latency %d cycles\n", m.MemoryLatency)
	return b.String()
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
// machine.
func (m *Machine) YAML() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\n", yamlString(m.Name))
	if m.Description != "" {
		fmt.Fprintf(&b, "description: %s\n", yamlString(m.Description))
	}
	fmt.Fprintf(&b, "memory_latency: %d\n", m.MemoryLatency)
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
	}
	return []byte(b.String())
}

// yamlString quotes s as a YAML double-quoted scalar (a JSON string is one).
func yamlString(s string) string {
	return fmt.Sprintf("%q", s)
}
