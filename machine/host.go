package machine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// HostCacheDir is where Linux describes the caches of CPU 0.
const HostCacheDir = "/sys/devices/system/cpu/cpu0/cache"

// Approximate latencies Host assigns, since sysfs gives none: load-to-use
// cycles by level (levels beyond the table get the last entry plus 30 per
// level) and memory.
var (
	hostLatency       = []int{4, 14, 50} // levels 1, 2, 3
	hostMemoryLatency = 200
)

// Host describes this machine's caches as Linux reports them for CPU 0 in
// HostCacheDir; see HostFrom. It fails where that directory is missing
// (other systems, some containers). On hybrid processors the result is the
// caches of CPU 0's core type.
func Host() (*Machine, error) { return HostFrom(HostCacheDir) }

// HostFrom is Host reading dir, a directory laid out like
// /sys/devices/system/cpu/cpu0/cache: subdirectories index0, index1, …
// each with the files level, type (Data, Instruction or Unified; other
// types are skipped), size (like 32K), ways_of_associativity,
// coherency_line_size, number_of_sets and, optionally,
// physical_line_partition.
//
// Caches are named L1I, L1D, L2, L3 (L<level> plus I or D for split
// levels) and ordered by level, instructions before data. The geometry
// comes from number_of_sets, ways_of_associativity and coherency_line_size
// when they are present; a size that disagrees is explained in the
// Description. ways_of_associativity 0 means fully associative. Latencies
// are approximations (4, 14, 50 cycles for levels 1-3, 200 for memory);
// replacement is assumed LRU and inclusion none. The machine is normalized.
func HostFrom(dir string) (*Machine, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("host: no cache description: %w", err)
	}
	type indexed struct {
		n    int
		name string
	}
	var idx []indexed
	for _, e := range entries {
		if n, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "index")); err == nil && strings.HasPrefix(e.Name(), "index") {
			idx = append(idx, indexed{n, e.Name()})
		}
	}
	slices.SortFunc(idx, func(a, b indexed) int { return a.n - b.n })

	var caches []Cache
	var notes []string
	for _, ix := range idx {
		c, note, err := hostCache(filepath.Join(dir, ix.name))
		if err != nil {
			return nil, fmt.Errorf("host: %s: %w", ix.name, err)
		}
		if note != "" {
			notes = append(notes, note)
		}
		if c != nil {
			caches = append(caches, *c)
		}
	}
	if len(caches) == 0 {
		return nil, fmt.Errorf("host: no caches described in %s", dir)
	}
	slices.SortStableFunc(caches, func(a, b Cache) int {
		if a.Level != b.Level {
			return a.Level - b.Level
		}
		return holdsOrder(a.Holds) - holdsOrder(b.Holds)
	})
	// Name caches: split levels get I/D suffixes.
	for i := range caches {
		c := &caches[i]
		c.Name = fmt.Sprintf("L%d", c.Level)
		switch c.Holds {
		case Instructions:
			c.Name += "I"
		case Data:
			c.Name += "D"
		}
		if c.Level <= len(hostLatency) {
			c.Latency = hostLatency[c.Level-1]
		} else {
			c.Latency = hostLatency[len(hostLatency)-1] + 30*(c.Level-len(hostLatency))
		}
	}
	desc := fmt.Sprintf("This machine's caches, from %s; latencies approximate, LRU and non-inclusive assumed.", dir)
	for _, n := range notes {
		desc += " " + n
	}
	m := &Machine{Name: "host", Description: desc, Caches: caches, MemoryLatency: hostMemoryLatency}
	if err := m.Normalize(); err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	return m, nil
}

func holdsOrder(h Holds) int {
	switch h {
	case Instructions:
		return 0
	case Data:
		return 1
	}
	return 2
}

// hostCache reads one indexN directory. It returns a nil cache (and a note)
// for cache types memspy does not model.
func hostCache(dir string) (*Cache, string, error) {
	read := func(name string) (string, bool, error) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, os.ErrNotExist) {
			return "", false, nil
		}
		if err != nil {
			return "", false, err
		}
		return strings.TrimSpace(string(b)), true, nil
	}
	num := func(name string) (int64, bool, error) {
		s, ok, err := read(name)
		if err != nil || !ok || s == "" {
			return 0, false, err
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return 0, false, fmt.Errorf("%s: %q is not a count", name, s)
		}
		return n, true, nil
	}

	typ, ok, err := read("type")
	if err != nil {
		return nil, "", err
	}
	if !ok {
		return nil, "", errors.New("type: missing")
	}
	var holds Holds
	switch typ {
	case "Data":
		holds = Data
	case "Instruction":
		holds = Instructions
	case "Unified":
		holds = Unified
	default:
		return nil, fmt.Sprintf("Skipped %s (type %s).", filepath.Base(dir), typ), nil
	}
	level, ok, err := num("level")
	if err != nil {
		return nil, "", err
	}
	if !ok || level < 1 || level > 16 {
		return nil, "", errors.New("level: missing or out of range")
	}
	name := fmt.Sprintf("L%d", level)
	if holds != Unified {
		name += strings.ToUpper(string(holds[:1]))
	}

	var size int64
	if s, ok, err := read("size"); err != nil {
		return nil, "", err
	} else if ok && s != "" {
		if size, err = ParseSize(s); err != nil {
			return nil, "", fmt.Errorf("size: %w", err)
		}
	}
	ways, waysOK, err := num("ways_of_associativity")
	if err != nil {
		return nil, "", err
	}
	line, lineOK, err := num("coherency_line_size")
	if err != nil {
		return nil, "", err
	}
	sets, setsOK, err := num("number_of_sets")
	if err != nil {
		return nil, "", err
	}
	part, partOK, err := num("physical_line_partition")
	if err != nil {
		return nil, "", err
	}
	if !partOK || part == 0 {
		part = 1
	}

	var notes []string
	note := func(format string, args ...any) {
		notes = append(notes, fmt.Sprintf("%s: ", name)+fmt.Sprintf(format, args...)+".")
	}
	if !lineOK || line == 0 {
		line = DefaultLine
		note("no line size given, assumed %d bytes", line)
	}
	c := &Cache{
		Level: int(level), Line: int(line), Holds: holds,
		Replacement: LRU, WriteBack: true, WriteAllocate: true, Inclusion: NonInclusive,
	}
	full := waysOK && ways == 0
	switch {
	case full:
		// Linux reports 0 ways for a fully associative cache.
		if size == 0 {
			return nil, "", errors.New("fully associative (0 ways) without a size")
		}
		c.Size, c.Assoc = size, AssocFull
		if setsOK && sets > 1 {
			note("fully associative (0 ways) but number_of_sets is %d; modelled as one set", sets)
		}
	case waysOK && setsOK && sets > 0:
		c.Sets, c.Assoc = int(sets), int(ways)
		p, ok := mul(sets, ways, line)
		switch {
		case !ok:
			return nil, "", fmt.Errorf("%d sets * %d ways * %d-byte lines is too large", sets, ways, line)
		case size == 0 || p == size:
			c.Size = p
		case part > 1 && p*part == size:
			// Several lines share a tag: model the capacity, with
			// partition times more sets of single lines.
			c.Sets *= int(part)
			c.Size = size
			note("physical_line_partition %d: modelled as %d sets (number_of_sets %d * %d) to keep the size %s", part, c.Sets, sets, part, FormatSize(size))
		default:
			c.Size = p
			note("sysfs size %s disagrees with number_of_sets %d * %d ways * %d-byte lines = %s; used the sets and ways", FormatSize(size), sets, ways, line, FormatSize(p))
		}
	case waysOK && size > 0:
		c.Size, c.Assoc = size, int(ways)
		note("no number_of_sets given; sets derived from size and ways")
	case setsOK && sets > 0 && size > 0:
		c.Size, c.Sets = size, int(sets)
		note("no ways_of_associativity given; ways derived from size and sets")
	default:
		return nil, "", errors.New("need two of size, number_of_sets and ways_of_associativity")
	}
	return c, strings.Join(notes, " "), nil
}
