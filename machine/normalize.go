package machine

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
	"unicode"

	"github.com/memspy/memspy/cache"
)

// Defaults Normalize applies to values left zero.
const (
	DefaultLine          = 64  // bytes
	DefaultLatency       = 1   // cycles for a hit
	DefaultMemoryLatency = 100 // cycles for a reference satisfied by memory
	DefaultSeed          = 1   // for random and brrip replacement
)

// Normalize fills in defaults and derived geometry, then validates the
// machine. On error it returns a *ConfigError and leaves m unchanged.
//
// Defaults: replacement lru, holds unified, inclusion none, line 64 bytes,
// latency 1 cycle, memory latency 100 cycles, seed 1 for random and brrip,
// machine name "custom". Write-back and write-allocate are not defaulted
// here (see Cache). A cache's level defaults to 1 + the highest level among
// the caches listed before it that hold an overlapping kind of reference
// (instructions and unified overlap, data and unified overlap), so L1I
// (instructions), L1D (data), L2 (unified) get levels 1, 1, 2.
//
// Geometry: with line, any two of size, sets and assoc give the third;
// assoc AssocFull means one set of Size/Line ways. If all three are given
// they must agree. Sets and associativity need not be powers of two; the
// line size must be (the engine finds a line by shifting the address).
//
// Validation: values must be positive; names non-empty, unique ignoring
// case, and free of spaces, control characters, ':', ',' and '='; known
// replacement, holds and inclusion values; plru needs a power-of-two
// associativity; caches listed in non-decreasing level order; no two caches
// at one level holding an overlapping kind; an exclusive cache needs, for
// each kind it holds, a cache directly above it, with the same line size.
// Gaps in levels (a data L1 and a data L3 with no data L2) are allowed:
// levels only order the caches a reference passes through.
//
// Processors: 0 means 1; at most MaxProcessors. Mapping defaults to
// round-robin; pinned needs a non-empty Pin, whose entries are processors
// (0 to Processors-1); a Pin with the round-robin mapping is an error (an
// empty Pin is dropped). With several processors every cache not Shared is
// private, one copy per processor kept coherent by MESI, and:
//
//   - no private cache is below a shared one on a path: a private cache may
//     not be at a higher level than a shared cache holding an overlapping
//     kind of reference (private caches come first, from the CPU outward);
//   - every private cache has the same line size, the unit of coherence
//     (instruction caches are kept coherent too);
//   - a private cache may not be exclusive (not supported yet).
//
// Shared on a machine of one processor is kept but changes nothing.
//
// NUMA nodes: Nodes 0 means 1; it may not be negative nor more than the
// processors (every node has at least one). With several nodes:
//
//   - no cache may be Shared: every cache is private to its processor (a
//     cache shared within a node is not modelled);
//   - Placement defaults to first-touch;
//   - PageSize defaults to DefaultPageSize (4096 bytes) and must be a power
//     of two no smaller than the line of the (private) caches;
//   - RemoteLatency defaults to 2 × MemoryLatency and RemoteDirtyLatency to
//     3 × MemoryLatency (MemoryLatency after its own default); both must be
//     at least MemoryLatency.
//
// With one node, Placement, PageSize, RemoteLatency and RemoteDirtyLatency
// are not defaulted; given, they must still be valid on their own (a known
// placement, positive numbers, a power-of-two page size), and are kept but
// change nothing.
func (m *Machine) Normalize() error {
	if m.MemoryLatency < 0 {
		return &ConfigError{Key: "memory_latency", Msg: fmt.Sprintf("must be positive, not %d", m.MemoryLatency)}
	}
	memLat := m.MemoryLatency
	if memLat == 0 {
		memLat = DefaultMemoryLatency
	}
	procs, mapping, pin, err := m.normalizeProcessors()
	if err != nil {
		return err
	}
	n, err := m.normalizeNodes(procs, memLat)
	if err != nil {
		return err
	}
	if len(m.Caches) == 0 {
		return &ConfigError{Msg: "no caches: give --machine, --config or --cache"}
	}
	caches := slices.Clone(m.Caches)
	for i := range caches {
		if err := normalizeCache(caches, i); err != nil {
			if err.Cache == "" {
				err.Cache = caches[i].Name
			}
			err.index = i + 1
			return err
		}
	}
	if n.nodes > 1 {
		if err := checkUnshared(caches); err != nil {
			return err
		}
	}
	if procs > 1 {
		if err := checkPrivate(caches); err != nil {
			return err
		}
	}
	if n.nodes > 1 {
		if err := checkPage(caches, n.pageSize); err != nil {
			return err
		}
	}
	m.Caches = caches
	m.Processors, m.Mapping, m.Pin = procs, mapping, pin
	m.Nodes, m.Placement, m.PageSize = n.nodes, n.placement, n.pageSize
	m.RemoteLatency, m.RemoteDirtyLatency = n.remote, n.remoteDirty
	m.MemoryLatency = memLat
	if m.Name == "" {
		m.Name = "custom"
	}
	return nil
}

// MaxProcessors is the largest Machine.Processors Normalize accepts.
const MaxProcessors = 64

// normalizeProcessors returns the normalized Processors, Mapping and Pin
// of m, or why they are invalid.
func (m *Machine) normalizeProcessors() (int, Mapping, []int, *ConfigError) {
	procs := m.Processors
	switch {
	case procs == 0:
		procs = 1
	case procs < 0:
		return 0, "", nil, &ConfigError{Key: "processors", Msg: fmt.Sprintf("must be positive, not %d", procs)}
	case procs > MaxProcessors:
		return 0, "", nil, &ConfigError{Key: "processors", Msg: fmt.Sprintf("%d is more than %d, the most memspy simulates", procs, MaxProcessors)}
	}
	mapping := m.Mapping
	if mapping == "" {
		mapping = RoundRobin
	}
	pin := m.Pin
	if len(pin) == 0 {
		pin = nil
	}
	switch mapping {
	case RoundRobin:
		if pin != nil {
			return 0, "", nil, &ConfigError{Key: "pin", Msg: "given with the round-robin mapping (pin needs mapping pinned)"}
		}
	case Pinned:
		if pin == nil {
			return 0, "", nil, &ConfigError{Key: "mapping", Msg: "pinned needs pin, the processor of each thread in the order threads appear"}
		}
	default:
		return 0, "", nil, &ConfigError{Key: "mapping", Msg: unknownMapping(string(mapping))}
	}
	for i, p := range pin {
		if p < 0 || p >= procs {
			return 0, "", nil, &ConfigError{Key: "pin", Msg: fmt.Sprintf("entry %d: processor %d is out of range (%s)", i+1, p, processorRange(procs))}
		}
	}
	return procs, mapping, pin, nil
}

// DefaultPageSize is the page size Normalize gives a machine of several
// NUMA nodes that gives none.
const DefaultPageSize = 4096 // bytes

// numa holds the normalized NUMA fields of a machine.
type numa struct {
	nodes               int
	placement           Placement
	pageSize            int
	remote, remoteDirty int
}

// normalizeNodes returns the normalized NUMA fields of m, a machine of
// procs processors (normalized) and a memory latency of memLat cycles
// (defaulted), or why they are invalid.
func (m *Machine) normalizeNodes(procs, memLat int) (numa, *ConfigError) {
	fail := func(key, format string, args ...any) (numa, *ConfigError) {
		return numa{}, &ConfigError{Key: key, Msg: fmt.Sprintf(format, args...)}
	}
	n := numa{nodes: m.Nodes, placement: m.Placement, pageSize: m.PageSize, remote: m.RemoteLatency, remoteDirty: m.RemoteDirtyLatency}
	switch {
	case n.nodes == 0:
		n.nodes = 1
	case n.nodes < 0:
		return fail("nodes", "must be positive, not %d", n.nodes)
	case n.nodes > procs:
		s := "s"
		if procs == 1 {
			s = ""
		}
		return fail("nodes", "%d is more than the %d processor%s", n.nodes, procs, s)
	}
	multi := n.nodes > 1
	switch {
	case n.placement == "" && multi:
		n.placement = FirstTouch
	case n.placement != "" && !slices.Contains(Placements, n.placement):
		return fail("placement", "%s", unknownPlacement(string(n.placement)))
	}
	switch {
	case n.pageSize < 0:
		return fail("page_size", "must be positive, not %d", n.pageSize)
	case n.pageSize == 0 && multi:
		n.pageSize = DefaultPageSize
	case n.pageSize != 0 && !isPow2(int64(n.pageSize)):
		return fail("page_size", "%d is not a power of two", n.pageSize)
	}
	for _, l := range []struct {
		key    string
		lat    *int
		factor int
	}{{"remote_latency", &n.remote, 2}, {"remote_dirty_latency", &n.remoteDirty, 3}} {
		switch {
		case *l.lat < 0:
			return fail(l.key, "must be positive, not %d", *l.lat)
		case *l.lat == 0 && multi:
			*l.lat = memLat * l.factor
			if *l.lat/l.factor != memLat { // overflow
				*l.lat = math.MaxInt
			}
		case multi && *l.lat < memLat:
			return fail(l.key, "%d is less than the memory latency, %d (the memory of another node is not nearer than the processor's own)", *l.lat, memLat)
		}
	}
	return n, nil
}

// checkUnshared checks that no cache of a machine of several NUMA nodes is
// shared.
func checkUnshared(caches []Cache) *ConfigError {
	for i, c := range caches {
		if c.Shared {
			return &ConfigError{Cache: c.Name, Key: "shared", index: i + 1,
				Msg: "with several NUMA nodes every cache is private to its processor (a cache shared within a node is not modelled)"}
		}
	}
	return nil
}

// checkPage checks that a page of pageSize bytes holds whole lines of
// every cache (normalized) of a machine of several NUMA nodes.
func checkPage(caches []Cache, pageSize int) *ConfigError {
	for _, c := range caches {
		if pageSize < c.Line {
			return &ConfigError{Key: "page_size", Msg: fmt.Sprintf("%d bytes is smaller than the %d-byte line of cache %q (a page holds whole lines)", pageSize, c.Line, c.Name)}
		}
	}
	return nil
}

// processorRange describes the processor numbers of a machine of n
// processors.
func processorRange(n int) string {
	if n == 1 {
		return "the machine has one processor, 0"
	}
	return fmt.Sprintf("the machine has %d processors, 0 to %d", n, n-1)
}

// checkPrivate checks the rules for the private caches of a machine of
// several processors; caches are normalized.
func checkPrivate(caches []Cache) *ConfigError {
	var unit *Cache // the first private cache
	for i := range caches {
		c := &caches[i]
		if c.Shared {
			continue
		}
		fail := func(key, format string, args ...any) *ConfigError {
			return &ConfigError{Cache: c.Name, Key: key, Msg: fmt.Sprintf(format, args...), index: i + 1}
		}
		for _, s := range caches[:i] {
			if s.Shared && s.Level < c.Level && overlaps(s.Holds, c.Holds) {
				return fail("shared", "private, below the shared cache %q (level %d), which also holds %s (with several processors, the private caches of a path come before its shared ones: make %q shared too)",
					s.Name, s.Level, shared(s.Holds, c.Holds), c.Name)
			}
		}
		if c.Inclusion == Exclusive {
			return fail("inclusion", "exclusive is not supported with several processors yet on a private cache (make it shared, or not exclusive)")
		}
		if unit == nil {
			unit = c
		} else if c.Line != unit.Line {
			return fail("line", "%d bytes, not the %d of the private cache %q (with several processors, every private cache has one line size, the unit of coherence)",
				c.Line, unit.Line, unit.Name)
		}
	}
	return nil
}

// normalizeCache normalizes caches[i], whose predecessors are normalized.
func normalizeCache(caches []Cache, i int) *ConfigError {
	c := &caches[i]
	fail := func(key, format string, args ...any) *ConfigError {
		return &ConfigError{Cache: c.Name, Key: key, Msg: fmt.Sprintf(format, args...)}
	}
	if msg := checkName(c.Name); msg != "" {
		return fail("name", "%s", msg)
	}
	for j := range i {
		if strings.EqualFold(caches[j].Name, c.Name) {
			return fail("name", "already used by cache #%d (names must be unique, ignoring case)", j+1)
		}
	}
	if c.Replacement == "" {
		c.Replacement = LRU
	}
	if msg := checkReplacement(c.Replacement); msg != "" {
		return fail("replacement", "%s", msg)
	}
	if c.Holds == "" {
		c.Holds = Unified
	}
	switch c.Holds {
	case Instructions, Data, Unified:
	default:
		return fail("holds", "%s", unknownHolds(string(c.Holds)))
	}
	if c.Inclusion == "" {
		c.Inclusion = NonInclusive
	}
	if msg := checkInclusion(c.Inclusion); msg != "" {
		return fail("inclusion", "%s", msg)
	}
	switch {
	case c.Latency < 0:
		return fail("latency", "must be positive, not %d", c.Latency)
	case c.Latency == 0:
		c.Latency = DefaultLatency
	}
	if c.Seed == 0 && cache.Seeded(string(c.Replacement)) {
		c.Seed = DefaultSeed
	}
	if err := geometry(c); err != nil {
		err.Cache = c.Name
		return err
	}
	if c.Replacement == PLRU && !isPow2(int64(c.Assoc)) {
		return fail("replacement", "plru needs a power-of-two associativity, not %d", c.Assoc)
	}

	// Level: default from position, then order and overlap.
	explicit := c.Level != 0
	if c.Level < 0 {
		return fail("level", "must be positive, not %d", c.Level)
	}
	if !explicit {
		for _, p := range caches[:i] {
			if overlaps(p.Holds, c.Holds) {
				c.Level = max(c.Level, p.Level)
			}
		}
		c.Level++
	}
	if i > 0 && c.Level < caches[i-1].Level {
		how := ""
		if !explicit {
			how = " (the default from its position)"
		}
		return fail("level", "%d%s is below level %d of %q listed before it (list caches from the CPU outward, in level order)",
			c.Level, how, caches[i-1].Level, caches[i-1].Name)
	}
	for _, p := range caches[:i] {
		if p.Level == c.Level && overlaps(p.Holds, c.Holds) {
			return fail("level", "%d is also the level of %q, which also holds %s (one cache per level and kind of reference)",
				c.Level, p.Name, shared(p.Holds, c.Holds))
		}
	}

	if c.Inclusion == Exclusive {
		for _, k := range kinds(c.Holds) {
			var above *Cache
			for j := range i { // the last cache above holding k is directly above
				if caches[j].Level < c.Level && overlaps(caches[j].Holds, k) {
					above = &caches[j]
				}
			}
			switch {
			case above == nil && c.Level == 1:
				return fail("inclusion", "exclusive needs a cache above it, and a level-1 cache has none")
			case above == nil:
				return fail("inclusion", "exclusive needs a cache above it, and none above it holds %s", k)
			case above.Line != c.Line:
				return fail("inclusion", "exclusive needs the line size of %q above it (%d bytes, not %d)", above.Name, above.Line, c.Line)
			}
		}
	}
	return nil
}

// checkName returns why name is not a valid cache name, or "".
func checkName(name string) string {
	if name == "" {
		return "missing (every cache needs a name)"
	}
	for _, r := range name {
		if unicode.IsSpace(r) || unicode.IsControl(r) || strings.ContainsRune(":,=", r) {
			return fmt.Sprintf("%q contains %q (names may not contain spaces, control characters, ':', ',' or '=')", name, r)
		}
	}
	return ""
}

// geometry derives and checks Line, Size, Sets and Assoc of c.
func geometry(c *Cache) *ConfigError {
	fail := func(key, format string, args ...any) *ConfigError {
		return &ConfigError{Key: key, Msg: fmt.Sprintf(format, args...)}
	}
	switch {
	case c.Line < 0:
		return fail("line", "must be positive, not %d", c.Line)
	case c.Line == 0:
		c.Line = DefaultLine
	case !isPow2(int64(c.Line)):
		return fail("line", "%d is not a power of two (the engine finds a line by shifting the address)", c.Line)
	case int64(c.Line) > maxSize:
		return fail("line", "%d is too large", c.Line)
	}
	switch {
	case c.Size < 0:
		return fail("size", "must be positive, not %d", c.Size)
	case c.Size > maxSize:
		return fail("size", "%d is too large", c.Size)
	case c.Sets < 0:
		return fail("sets", "must be positive, not %d", c.Sets)
	case int64(c.Sets) > maxSize:
		return fail("sets", "%d is too large", c.Sets)
	case c.Assoc < 0 && c.Assoc != AssocFull:
		return fail("assoc", "must be positive, not %d", c.Assoc)
	case int64(c.Assoc) > maxSize:
		return fail("assoc", "%d is too large", c.Assoc)
	}
	line := int64(c.Line)
	size, sets, assoc := c.Size, int64(c.Sets), int64(c.Assoc)

	if c.Assoc == AssocFull {
		switch {
		case sets > 1:
			return fail("sets", "%d contradicts assoc: full (a fully associative cache has one set)", sets)
		case size == 0:
			return fail("size", "missing (assoc: full needs the size)")
		case size%line != 0:
			return fail("size", "%d is not a whole number of %d-byte lines", size, line)
		}
		c.Sets, c.Assoc = 1, int(size/line)
		return nil
	}

	switch {
	case size != 0 && sets != 0 && assoc != 0:
		p, ok := mul(sets, assoc, line)
		if !ok || p != size {
			return fail("size", "%d does not match sets*assoc*line = %d*%d*%d%s", size, sets, assoc, line, product(p, ok))
		}
	case size != 0 && assoc != 0:
		per, ok := mul(assoc, line)
		switch {
		case !ok || per > size:
			return fail("size", "%d is smaller than one %d-way set of %d-byte lines%s", size, assoc, line, bytes(per, ok))
		case size%per != 0:
			return fail("size", "%d is not divisible into %d-way sets of %d-byte lines (%d*%d = %d bytes per set)", size, assoc, line, assoc, line, per)
		}
		c.Sets = int(size / per)
	case size != 0 && sets != 0:
		per, ok := mul(sets, line)
		switch {
		case !ok || per > size:
			return fail("size", "%d is smaller than %d sets of one %d-byte line%s", size, sets, line, bytes(per, ok))
		case size%per != 0:
			return fail("size", "%d is not divisible into %d sets of %d-byte lines (%d*%d = %d bytes per way)", size, sets, line, sets, line, per)
		}
		c.Assoc = int(size / per)
	case sets != 0 && assoc != 0:
		p, ok := mul(sets, assoc, line)
		if !ok {
			return fail("sets", "%d sets of %d ways of %d-byte lines are too large", sets, assoc, line)
		}
		c.Size = p
	case size != 0:
		return fail("assoc", `missing (give assoc, a number or "full", or sets, with size)`)
	case sets != 0:
		return fail("size", "missing (give size or assoc with sets)")
	case assoc != 0:
		return fail("size", "missing (give size or sets with assoc)")
	default:
		return fail("size", "missing (give two of size, sets and assoc)")
	}
	return nil
}

// mul multiplies positive numbers, reporting false if the product exceeds
// maxSize.
func mul(xs ...int64) (int64, bool) {
	p := uint64(1)
	for _, x := range xs {
		hi, lo := bits.Mul64(p, uint64(x))
		if hi != 0 || lo > maxSize {
			return 0, false
		}
		p = lo
	}
	return int64(p), true
}

func product(p int64, ok bool) string {
	if !ok {
		return " (too large)"
	}
	return fmt.Sprintf(" = %d", p)
}

func bytes(n int64, ok bool) string {
	if !ok {
		return ""
	}
	return fmt.Sprintf(" (%d bytes)", n)
}

func isPow2(n int64) bool { return n > 0 && n&(n-1) == 0 }

// overlaps reports whether caches holding a and b see some same references.
func overlaps(a, b Holds) bool { return a == Unified || b == Unified || a == b }

// shared names the kinds of reference both a and b hold.
func shared(a, b Holds) string {
	switch {
	case a == Unified && b == Unified:
		return "instructions and data"
	case a == Unified:
		return string(b)
	}
	return string(a)
}

// kinds returns the single kinds (instructions, data) h holds.
func kinds(h Holds) []Holds {
	if h == Unified {
		return []Holds{Instructions, Data}
	}
	return []Holds{h}
}
