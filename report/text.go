// Package report renders Profiles for people and scripts: the summary of
// a run (Text, with its where-and-why summary), and the views of the
// where and why, of the call tree, the processes, the processors, the
// threads and the NUMA nodes (View: processes, overview, calls,
// processors, threads, sync, numa, timeline, stalls, lines, data, detail, evictors,
// sharing, invalidators, refs, advice) as aligned
// text, CSV or JSON. It reads only the Profile, never engine internals.
package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/profile"
)

// Text writes the summary of p: the input (and the processors, when the
// machine has several), then one table per cache (with the causes of its
// misses when the run attributed its counters, and its coherence counters
// when it lost lines to other processors) and the memory traffic, then the
// programs of a process tree, the processor and thread tables on several
// processors, the NUMA section on several nodes, a line per dump if the
// program asked for any, and the where-and-why summary when the profile has it (else the advice on
// synchronization and remote objects, if any).
func Text(w io.Writer, p *profile.Profile) error {
	p = dataOnly(p)
	var b strings.Builder
	name := "(unnamed)"
	if p.Machine != nil && p.Machine.Name != "" {
		name = p.Machine.Name
	}
	fmt.Fprintf(&b, "memspy: %s (%s) on machine %s\n", p.Source.Name, p.Source.Format, name)
	if procs := processorsText(p); procs != "" {
		b.WriteString(procs + "\n")
	}
	fmt.Fprintf(&b, "events: %s", Count(p.Events))
	if parts := eventParts(p.EventsByKind); parts != "" {
		fmt.Fprintf(&b, " (%s)", parts)
	}
	b.WriteString("\n")
	if s := samplingText(p); s != "" {
		b.WriteString(s + "\n")
	}
	if p.Resets > 0 {
		fmt.Fprintf(&b, "counted since the program's last reset marker (%s resets)\n", Count(p.Resets))
	}
	if p.NotSimulated > 0 {
		fmt.Fprintf(&b, "not simulated: %s instruction fetches (no cache holds instructions)\n", Count(p.NotSimulated))
		if p.Options.CacheLab {
			b.WriteString("  (ignored under --cachelab)\n")
		}
	}
	if p.Skipped > 0 {
		fmt.Fprintf(&b, "skipped: %s malformed lines\n", Count(p.Skipped))
	}
	if !p.Complete {
		fmt.Fprintf(&b, "INCOMPLETE: counts cover only the events read before: %s\n", p.Error)
	}
	instructions := p.EventsByKind["ifetch"]
	misc := hasMisc(p)
	for i := range p.Caches {
		c := &p.Caches[i]
		b.WriteString("\n")
		b.WriteString(cacheHeader(p.Machine, c))
		if c.Accesses == 0 && c.Evictions == 0 && c.Writebacks == 0 {
			b.WriteString("  no accesses\n")
			continue
		}
		tw := tabwriter.NewWriter(&b, 2, 0, 2, ' ', tabwriter.AlignRight)
		rows := [4][]string{
			{"", "total", "ifetch", "read", "write"},
			{"accesses", Count(c.Accesses), Count(c.IFetches), Count(c.Reads), Count(c.Writes)},
			{"misses", Count(c.Misses), Count(c.IFetchMisses), Count(c.ReadMisses), Count(c.WriteMisses)},
			{"miss rate", Rate(c.Misses, c.Accesses), Rate(c.IFetchMisses, c.IFetches), Rate(c.ReadMisses, c.Reads),
				Rate(c.WriteMisses, c.Writes)},
		}
		if misc {
			rows[0] = append(rows[0], "misc")
			rows[1] = append(rows[1], Count(c.Misc))
			rows[2] = append(rows[2], Count(c.MiscMisses))
			rows[3] = append(rows[3], Rate(c.MiscMisses, c.Misc))
		}
		for _, r := range rows {
			fmt.Fprintln(tw, strings.Join(r, "\t")+"\t")
		}
		tw.Flush()
		if s := sampledText(p, c); s != "" {
			b.WriteString(s + "\n")
		}
		if p.Options.Classify == "3c" {
			fmt.Fprintf(&b, "  misses by cause: compulsory %s (%s), capacity %s (%s), conflict %s (%s)\n",
				Count(c.Compulsory), share(c.Compulsory, c.Misses), Count(c.Capacity), share(c.Capacity, c.Misses),
				Count(c.Conflict), share(c.Conflict, c.Misses))
		}
		fmt.Fprintf(&b, "  evictions %s, write-backs %s", Count(c.Evictions), Count(c.Writebacks))
		if c.BackInvalidations > 0 {
			fmt.Fprintf(&b, ", back-invalidations %s", Count(c.BackInvalidations))
		}
		fmt.Fprintf(&b, "; from below %s, to below %s\n", Bytes(c.BytesFromBelow), Bytes(c.BytesToBelow))
		if instructions > 0 {
			fmt.Fprintf(&b, "  misses per 1000 instructions: %.3f\n", float64(c.Misses)*1000/float64(instructions))
		}
		if c.Causes != nil {
			b.WriteString("  " + causesLine(c) + "\n")
		}
		if s := coherenceLine(c); s != "" {
			b.WriteString("  " + s + "\n")
		}
	}
	fmt.Fprintf(&b, "\nmemory: %s reads (%s), %s writes (%s)\n", Count(p.Memory.Reads), Bytes(p.Memory.BytesRead),
		Count(p.Memory.Writes), Bytes(p.Memory.BytesWritten))
	if len(p.Processes) > 0 {
		b.WriteString("\n")
		writeText(&b, processTable(p, summaryProcesses, "memspy report PROFILE processes: all"), "")
	}
	if len(p.Processors) > 0 {
		b.WriteString("\n")
		writeText(&b, processorTable(p, false, 0), "")
	}
	if len(p.Threads) > 0 {
		b.WriteString("\n")
		t := threadTable(p, false, 0)
		if s := syncSummary(p); s != "" {
			t.Notes = append(t.Notes, s)
		}
		writeText(&b, t, "")
	}
	if p.Numa != nil {
		b.WriteString("\n")
		numaSection(&b, p.Numa)
	}
	if len(p.Dumps) > 0 {
		b.WriteString("\ndumps (counted since the start or the last reset):\n")
		for i := range p.Dumps {
			b.WriteString(dumpLine(&p.Dumps[i]))
		}
	}
	if HasWhere(p) {
		b.WriteString("\n")
		whereSummary(&b, p)
	} else if as := Advise(p); len(as) > 0 { // on synchronization only
		b.WriteString("\n")
		writeAdvice(&b, as, "")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// CacheLab writes the CS:APP cache lab summary line of the first cache
// holding data: "hits:H misses:M evictions:E".
func CacheLab(w io.Writer, p *profile.Profile) error {
	for i := range p.Caches {
		c := &p.Caches[i]
		if p.Machine != nil && i < len(p.Machine.Caches) && !p.Machine.Caches[i].HoldsData() {
			continue
		}
		_, err := fmt.Fprintf(w, "hits:%d misses:%d evictions:%d\n", c.Hits(), c.Misses, c.Evictions)
		return err
	}
	return fmt.Errorf("report: no cache holds data")
}

// dumpLine summarises a dump: its name, events and the miss rate of the
// first-level caches.
func dumpLine(d *profile.Dump) string {
	s := fmt.Sprintf("  %q: %s events", d.Name, Count(d.Events))
	for i := range d.Caches {
		if c := &d.Caches[i]; c.Level == d.Caches[0].Level {
			s += fmt.Sprintf(", %s miss rate %s", c.Name, Rate(c.Misses, c.Accesses))
		}
	}
	return s + "\n"
}

func cacheHeader(m *machine.Machine, c *profile.CacheStats) string {
	var spec *machine.Cache
	if m != nil {
		for i := range m.Caches {
			if m.Caches[i].Name == c.Name {
				spec = &m.Caches[i]
			}
		}
	}
	if spec == nil {
		return fmt.Sprintf("%s (level %d)\n", c.Name, c.Level)
	}
	assoc := strconv.Itoa(spec.Assoc) + "-way"
	switch {
	case spec.Sets == 1 && spec.Assoc > 1:
		assoc = "fully associative"
	case spec.Assoc == 1:
		assoc = "direct-mapped"
	}
	write := ", write-back"
	if !spec.WriteBack {
		write = ", write-through"
	}
	if !spec.WriteAllocate {
		write += ", no-write-allocate"
	}
	if !spec.HoldsData() {
		write = "" // instruction caches are not written
	}
	incl := ""
	if spec.Inclusion != "" && spec.Inclusion != machine.NonInclusive {
		incl = ", " + string(spec.Inclusion)
	}
	return fmt.Sprintf("%s (level %d, %s %s, %s, %d B lines, %s%s%s%s)\n", c.Name, c.Level, Bytes(uint64(spec.Size)),
		spec.Holds, assoc, spec.Line, spec.Replacement, write, incl, sharedText(m, spec))
}

func eventParts(m map[string]uint64) string {
	var parts []string
	for _, k := range []string{"ifetch", "read", "write", "modify", "misc", "copyback", "invalidate"} {
		if n := m[k]; n > 0 {
			parts = append(parts, Count(n)+" "+k)
		}
	}
	return strings.Join(parts, ", ")
}

// hasMisc reports whether some cache of p counted misc references (Dinero
// IV's, din label 3): the cache tables then have a misc column.
func hasMisc(p *profile.Profile) bool {
	return slices.ContainsFunc(p.Caches, func(c profile.CacheStats) bool { return c.Misc > 0 })
}

// Count formats n with thousands separators: 1234567 → "1,234,567".
func Count(n uint64) string {
	s := strconv.FormatUint(n, 10)
	if len(s) <= 3 {
		return s
	}
	var b strings.Builder
	pre := len(s) % 3
	if pre > 0 {
		b.WriteString(s[:pre])
	}
	for i := pre; i < len(s); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

// Rate formats a/b as a percentage with 4 decimals, or "-" when b is 0.
func Rate(a, b uint64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.4f%%", 100*float64(a)/float64(b))
}

// share formats a/b as a percentage with one decimal, or "-" when b is 0.
func share(a, b uint64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b))
}

// Bytes formats a byte count with a binary unit: 1536 → "1.5 KiB".
func Bytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatUint(n, 10) + " B"
	}
	v, u := float64(n), 0
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	for v /= unit; v >= unit && u < len(units)-1; v /= unit {
		u++
	}
	s := strconv.FormatFloat(v, 'f', 1, 64)
	s = strings.TrimSuffix(s, ".0")
	return s + " " + units[u]
}
