package machine

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"testing"
)

func TestNormalizeGeometry(t *testing.T) {
	tests := []struct {
		spec              string
		size              int64
		sets, assoc, line int
	}{
		{"C:size=32k,assoc=8", 32 << 10, 64, 8, 64},
		{"C:size=32k,assoc=8,line=32", 32 << 10, 128, 8, 32},
		{"C:size=128k,assoc=1,line=32", 128 << 10, 4096, 1, 32},
		{"C:size=48k,assoc=12", 48 << 10, 64, 12, 64},
		{"C:size=48k,sets=64", 48 << 10, 64, 12, 64},
		{"C:sets=64,assoc=12", 48 << 10, 64, 12, 64},
		{"C:size=48k,sets=64,assoc=12,line=64", 48 << 10, 64, 12, 64},
		{"C:size=30m,assoc=20", 30 << 20, 24576, 20, 64},
		{"C:size=30m,sets=24576", 30 << 20, 24576, 20, 64},
		{"C:size=1.25m,assoc=10", 1310720, 2048, 10, 64},
		{"C:size=480m,assoc=16", 480 << 20, 491520, 16, 64},
		{"C:size=12k,assoc=3", 12 << 10, 64, 3, 64},
		{"C:size=12k,sets=3", 12 << 10, 3, 64, 64},
		{"C:size=4k,assoc=full", 4096, 1, 64, 64},
		{"C:size=4k,assoc=full,sets=1,line=32", 4096, 1, 128, 32},
		{"C:size=1536,assoc=3,line=512", 1536, 1, 3, 512},
		{"C:size=1k,assoc=1,line=1", 1024, 1024, 1, 1},
		{"C:size=32k,assoc=4,replacement=plru", 32 << 10, 128, 4, 64},
	}
	for _, tt := range tests {
		m, err := FromSpecs([]string{tt.spec}, 0)
		if err != nil {
			t.Errorf("%s: %v", tt.spec, err)
			continue
		}
		c := m.Caches[0]
		if c.Size != tt.size || c.Sets != tt.sets || c.Assoc != tt.assoc || c.Line != tt.line {
			t.Errorf("%s: size %d sets %d assoc %d line %d; want %d %d %d %d",
				tt.spec, c.Size, c.Sets, c.Assoc, c.Line, tt.size, tt.sets, tt.assoc, tt.line)
		}
		if int64(c.Sets)*int64(c.Assoc)*int64(c.Line) != c.Size || c.Lines() != c.Sets*c.Assoc {
			t.Errorf("%s: inconsistent %+v", tt.spec, c)
		}
	}
}

func TestNormalizeDefaults(t *testing.T) {
	m := &Machine{Caches: []Cache{
		{Name: "A", Size: 32 << 10, Assoc: 8},
		{Name: "B", Size: 1 << 20, Assoc: 16, Replacement: Random},
		{Name: "C", Size: 1 << 20, Assoc: 16, Replacement: BRRIP, Seed: 9},
	}}
	if err := m.Normalize(); err != nil {
		t.Fatal(err)
	}
	want := &Machine{Name: "custom", MemoryLatency: 100, Processors: 1, Mapping: RoundRobin, Nodes: 1, Caches: []Cache{
		{Name: "A", Level: 1, Size: 32 << 10, Sets: 64, Assoc: 8, Line: 64, Replacement: LRU, Holds: Unified, Inclusion: NonInclusive, Latency: 1},
		{Name: "B", Level: 2, Size: 1 << 20, Sets: 1024, Assoc: 16, Line: 64, Replacement: Random, Seed: 1, Holds: Unified, Inclusion: NonInclusive, Latency: 1},
		{Name: "C", Level: 3, Size: 1 << 20, Sets: 1024, Assoc: 16, Line: 64, Replacement: BRRIP, Seed: 9, Holds: Unified, Inclusion: NonInclusive, Latency: 1},
	}}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("got  %+v\nwant %+v", m, want)
	}
	// Normalizing again changes nothing.
	again := *m
	again.Caches = append([]Cache(nil), m.Caches...)
	if err := again.Normalize(); err != nil || !reflect.DeepEqual(&again, m) {
		t.Errorf("second Normalize: %v\n%+v", err, again)
	}
	// The parsers default write-back and write-allocate.
	f, err := FromSpecs([]string{"A:size=1k,assoc=1"}, 0)
	if err != nil || !f.Caches[0].WriteBack || !f.Caches[0].WriteAllocate {
		t.Errorf("FromSpecs: %v %+v", err, f)
	}
}

func TestNormalizeLevels(t *testing.T) {
	tests := []struct {
		specs  []string
		levels []int
	}{
		{[]string{"L1I:holds=i", "L1D:holds=d", "L2:"}, []int{1, 1, 2}},
		{[]string{"A:", "B:", "C:"}, []int{1, 2, 3}},
		{[]string{"L1I:holds=i", "L1D:holds=d", "L2I:holds=i", "L2D:holds=d", "L3:"}, []int{1, 1, 2, 2, 3}},
		// Gaps are allowed; defaults continue from the highest level.
		{[]string{"L1D:holds=d", "L3:level=3", "L4:"}, []int{1, 3, 4}},
		{[]string{"L2:level=2", "L3:"}, []int{2, 3}},
		{[]string{"L1I:holds=i", "L2D:holds=d,level=2", "L3:"}, []int{1, 2, 3}},
	}
	for _, tt := range tests {
		var specs []string
		for _, s := range tt.specs {
			specs = append(specs, s+",size=1k,assoc=1")
		}
		m, err := FromSpecs(specs, 0)
		if err != nil {
			t.Errorf("%q: %v", tt.specs, err)
			continue
		}
		var got []int
		for _, c := range m.Caches {
			got = append(got, c.Level)
		}
		if !reflect.DeepEqual(got, tt.levels) {
			t.Errorf("%q: levels %v; want %v", tt.specs, got, tt.levels)
		}
	}
}

// TestConfigErrors checks every validation error of Normalize.
func TestConfigErrors(t *testing.T) {
	geo := func(c Cache) Cache { // a valid geometry unless the test sets one
		if c.Size == 0 && c.Sets == 0 && c.Assoc == 0 {
			c.Size, c.Assoc = 32<<10, 8
		}
		return c
	}
	tests := []struct {
		name    string
		caches  []Cache
		memLat  int
		procs   int
		mapping Mapping
		pin     []int
		nodes   int
		place   Placement
		page    int
		remote  int
		dirty   int // RemoteDirtyLatency
		err     string
		cache   string // ConfigError.Cache
		key     string // ConfigError.Key
	}{
		{name: "no caches", err: "no caches: give --machine, --config or --cache"},
		// Processors and mapping.
		{name: "negative processors", procs: -2, caches: []Cache{{Name: "L1"}},
			err: "processors: must be positive, not -2", key: "processors"},
		{name: "too many processors", procs: 65, caches: []Cache{{Name: "L1"}},
			err: "processors: 65 is more than 64, the most memspy simulates", key: "processors"},
		{name: "unknown mapping", procs: 2, mapping: "spread", caches: []Cache{{Name: "L1"}},
			err: `mapping: unknown mapping "spread" (want round-robin, rr or pinned)`, key: "mapping"},
		{name: "rr is for the parsers", procs: 2, mapping: "rr", caches: []Cache{{Name: "L1"}},
			err: `mapping: unknown mapping "rr" (want round-robin, rr or pinned)`, key: "mapping"},
		{name: "pinned without pin", procs: 2, mapping: Pinned, caches: []Cache{{Name: "L1"}},
			err: "mapping: pinned needs pin, the processor of each thread in the order threads appear", key: "mapping"},
		{name: "pinned with empty pin", procs: 2, mapping: Pinned, pin: []int{}, caches: []Cache{{Name: "L1"}},
			err: "mapping: pinned needs pin, the processor of each thread in the order threads appear", key: "mapping"},
		{name: "pin with round-robin", procs: 2, mapping: RoundRobin, pin: []int{0, 1}, caches: []Cache{{Name: "L1"}},
			err: "pin: given with the round-robin mapping (pin needs mapping pinned)", key: "pin"},
		{name: "pin with the default mapping", procs: 2, pin: []int{1}, caches: []Cache{{Name: "L1"}},
			err: "pin: given with the round-robin mapping (pin needs mapping pinned)", key: "pin"},
		{name: "pin out of range", procs: 4, mapping: Pinned, pin: []int{0, 1, 4}, caches: []Cache{{Name: "L1"}},
			err: "pin: entry 3: processor 4 is out of range (the machine has 4 processors, 0 to 3)", key: "pin"},
		{name: "pin negative", procs: 4, mapping: Pinned, pin: []int{-1}, caches: []Cache{{Name: "L1"}},
			err: "pin: entry 1: processor -1 is out of range (the machine has 4 processors, 0 to 3)", key: "pin"},
		{name: "pin on the default processor", mapping: Pinned, pin: []int{0, 1}, caches: []Cache{{Name: "L1"}},
			err: "pin: entry 2: processor 1 is out of range (the machine has one processor, 0)", key: "pin"},
		{name: "processors before caches", procs: -1,
			err: "processors: must be positive, not -1", key: "processors"},
		// NUMA nodes.
		{name: "negative nodes", procs: 2, nodes: -2, caches: []Cache{{Name: "L1"}},
			err: "nodes: must be positive, not -2", key: "nodes"},
		{name: "more nodes than processors", procs: 2, nodes: 4, caches: []Cache{{Name: "L1"}},
			err: "nodes: 4 is more than the 2 processors", key: "nodes"},
		{name: "nodes on the default processor", nodes: 2, caches: []Cache{{Name: "L1"}},
			err: "nodes: 2 is more than the 1 processor", key: "nodes"},
		{name: "nodes before caches", procs: 2, nodes: 3,
			err: "nodes: 3 is more than the 2 processors", key: "nodes"},
		{name: "shared cache on several nodes", procs: 4, nodes: 2, caches: []Cache{{Name: "L1"}, {Name: "L2", Size: 1 << 20, Assoc: 16, Shared: true}},
			err:   `cache "L2": shared: with several NUMA nodes every cache is private to its processor (a cache shared within a node is not modelled)`,
			cache: "L2", key: "shared"},
		{name: "shared above private on several nodes", procs: 4, nodes: 2, caches: []Cache{{Name: "L1", Shared: true}, {Name: "L2", Size: 1 << 20, Assoc: 16}},
			err:   `cache "L1": shared: with several NUMA nodes every cache is private to its processor (a cache shared within a node is not modelled)`,
			cache: "L1", key: "shared"},
		{name: "unknown placement", procs: 2, nodes: 2, place: "spread", caches: []Cache{{Name: "L1"}},
			err: `placement: unknown placement "spread" (want first-touch (ft), round-robin (rr) or interleave)`, key: "placement"},
		{name: "ft is for the parsers", procs: 2, nodes: 2, place: "ft", caches: []Cache{{Name: "L1"}},
			err: `placement: unknown placement "ft" (want first-touch (ft), round-robin (rr) or interleave)`, key: "placement"},
		{name: "unknown placement on one node", place: "First-Touch", caches: []Cache{{Name: "L1"}},
			err: `placement: unknown placement "First-Touch" (want first-touch (ft), round-robin (rr) or interleave)`, key: "placement"},
		{name: "negative page size", procs: 2, nodes: 2, page: -4096, caches: []Cache{{Name: "L1"}},
			err: "page_size: must be positive, not -4096", key: "page_size"},
		{name: "page size not a power of two", procs: 2, nodes: 2, page: 3000, caches: []Cache{{Name: "L1"}},
			err: "page_size: 3000 is not a power of two", key: "page_size"},
		{name: "page size not a power of two on one node", page: 3000, caches: []Cache{{Name: "L1"}},
			err: "page_size: 3000 is not a power of two", key: "page_size"},
		{name: "page smaller than a line", procs: 2, nodes: 2, page: 32, caches: []Cache{{Name: "L1"}},
			err: `page_size: 32 bytes is smaller than the 64-byte line of cache "L1" (a page holds whole lines)`, key: "page_size"},
		{name: "default page smaller than a line", procs: 2, nodes: 2, caches: []Cache{{Name: "L1", Line: 8192, Size: 1 << 20, Assoc: 8}},
			err: `page_size: 4096 bytes is smaller than the 8192-byte line of cache "L1" (a page holds whole lines)`, key: "page_size"},
		{name: "private line sizes before the page", procs: 2, nodes: 2, page: 64, caches: []Cache{{Name: "L1"}, {Name: "L2", Line: 128, Size: 1 << 20, Assoc: 8}},
			err:   `cache "L2": line: 128 bytes, not the 64 of the private cache "L1" (with several processors, every private cache has one line size, the unit of coherence)`,
			cache: "L2", key: "line"},
		{name: "negative remote latency", procs: 2, nodes: 2, remote: -1, caches: []Cache{{Name: "L1"}},
			err: "remote_latency: must be positive, not -1", key: "remote_latency"},
		{name: "negative remote latency on one node", remote: -1, caches: []Cache{{Name: "L1"}},
			err: "remote_latency: must be positive, not -1", key: "remote_latency"},
		{name: "remote nearer than local", procs: 2, nodes: 2, memLat: 120, remote: 119, caches: []Cache{{Name: "L1"}},
			err: "remote_latency: 119 is less than the memory latency, 120 (the memory of another node is not nearer than the processor's own)", key: "remote_latency"},
		{name: "remote nearer than the default local", procs: 2, nodes: 2, remote: 50, caches: []Cache{{Name: "L1"}},
			err: "remote_latency: 50 is less than the memory latency, 100 (the memory of another node is not nearer than the processor's own)", key: "remote_latency"},
		{name: "negative remote dirty latency", procs: 2, nodes: 2, dirty: -3, caches: []Cache{{Name: "L1"}},
			err: "remote_dirty_latency: must be positive, not -3", key: "remote_dirty_latency"},
		{name: "remote dirty nearer than local", procs: 2, nodes: 2, memLat: 300, remote: 400, dirty: 299, caches: []Cache{{Name: "L1"}},
			err: "remote_dirty_latency: 299 is less than the memory latency, 300 (the memory of another node is not nearer than the processor's own)", key: "remote_dirty_latency"},
		// Private and shared caches of several processors.
		{name: "private below shared", procs: 2, caches: []Cache{{Name: "L1", Shared: true}, {Name: "L2", Size: 1 << 20, Assoc: 16}},
			err:   `cache "L2": shared: private, below the shared cache "L1" (level 1), which also holds instructions and data (with several processors, the private caches of a path come before its shared ones: make "L2" shared too)`,
			cache: "L2", key: "shared"},
		{name: "private data cache below shared unified", procs: 2, caches: []Cache{
			{Name: "L1I", Holds: Instructions}, {Name: "L1D", Holds: Data}, {Name: "L2", Size: 1 << 20, Assoc: 16, Shared: true},
			{Name: "L3D", Holds: Data, Size: 4 << 20, Assoc: 16}},
			err:   `cache "L3D": shared: private, below the shared cache "L2" (level 2), which also holds data (with several processors, the private caches of a path come before its shared ones: make "L3D" shared too)`,
			cache: "L3D", key: "shared"},
		{name: "private unified below shared instructions", procs: 3, caches: []Cache{
			{Name: "L1I", Holds: Instructions, Shared: true}, {Name: "L1D", Holds: Data}, {Name: "L2", Size: 1 << 20, Assoc: 16}},
			err:   `cache "L2": shared: private, below the shared cache "L1I" (level 1), which also holds instructions (with several processors, the private caches of a path come before its shared ones: make "L2" shared too)`,
			cache: "L2", key: "shared"},
		{name: "private line sizes differ", procs: 2, caches: []Cache{
			{Name: "L1D", Holds: Data, Line: 32}, {Name: "L2", Size: 1 << 20, Assoc: 16}},
			err:   `cache "L2": line: 64 bytes, not the 32 of the private cache "L1D" (with several processors, every private cache has one line size, the unit of coherence)`,
			cache: "L2", key: "line"},
		{name: "private line sizes differ at level 1", procs: 2, caches: []Cache{
			{Name: "L1I", Holds: Instructions, Line: 32}, {Name: "L1D", Holds: Data, Line: 128}, {Name: "L2", Size: 1 << 20, Assoc: 16, Line: 128},
			{Name: "L3", Size: 4 << 20, Assoc: 16, Line: 64}},
			err:   `cache "L1D": line: 128 bytes, not the 32 of the private cache "L1I" (with several processors, every private cache has one line size, the unit of coherence)`,
			cache: "L1D", key: "line"},
		{name: "private exclusive", procs: 2, caches: []Cache{{Name: "L1"}, {Name: "L2", Size: 1 << 20, Assoc: 16, Inclusion: Exclusive}},
			err:   `cache "L2": inclusion: exclusive is not supported with several processors yet on a private cache (make it shared, or not exclusive)`,
			cache: "L2", key: "inclusion"},
		{name: "memory latency", memLat: -1, caches: []Cache{{Name: "L1"}}, err: "memory_latency: must be positive, not -1", key: "memory_latency"},
		{name: "empty name", caches: []Cache{{Name: "L1"}, {}},
			err: `cache #2: name: missing (every cache needs a name)`, key: "name"},
		{name: "name with space", caches: []Cache{{Name: "L 1"}},
			err: `cache "L 1": name: "L 1" contains ' ' (names may not contain spaces, control characters, ':', ',' or '=')`, cache: "L 1", key: "name"},
		{name: "name with comma", caches: []Cache{{Name: "L1,2"}},
			err: `cache "L1,2": name: "L1,2" contains ',' (names may not contain spaces, control characters, ':', ',' or '=')`, cache: "L1,2", key: "name"},
		{name: "duplicate name", caches: []Cache{{Name: "L1"}, {Name: "L2"}, {Name: "L2"}},
			err: `cache "L2": name: already used by cache #2 (names must be unique, ignoring case)`, cache: "L2", key: "name"},
		{name: "duplicate name ignoring case", caches: []Cache{{Name: "L1d"}, {Name: "l1D"}},
			err: `cache "l1D": name: already used by cache #1 (names must be unique, ignoring case)`, cache: "l1D", key: "name"},
		{name: "unknown replacement", caches: []Cache{{Name: "L1", Replacement: "LRU"}},
			err: `cache "L1": replacement: unknown policy "LRU" (want brrip, fifo, lru, plru, random, srrip)`, cache: "L1", key: "replacement"},
		{name: "unknown holds", caches: []Cache{{Name: "L1", Holds: "i"}},
			err: `cache "L1": holds: unknown kind "i" (want instructions, data or unified; or i, d, u)`, cache: "L1", key: "holds"},
		{name: "unknown inclusion", caches: []Cache{{Name: "L1", Inclusion: "mostly"}},
			err: `cache "L1": inclusion: unknown policy "mostly" (want none, inclusive or exclusive)`, cache: "L1", key: "inclusion"},
		{name: "negative latency", caches: []Cache{{Name: "L1", Latency: -4}},
			err: `cache "L1": latency: must be positive, not -4`, cache: "L1", key: "latency"},
		{name: "negative level", caches: []Cache{{Name: "L1", Level: -1}},
			err: `cache "L1": level: must be positive, not -1`, cache: "L1", key: "level"},
		{name: "negative line", caches: []Cache{{Name: "L1", Line: -64}},
			err: `cache "L1": line: must be positive, not -64`, cache: "L1", key: "line"},
		{name: "line not power of two", caches: []Cache{{Name: "L1", Line: 48}},
			err: `cache "L1": line: 48 is not a power of two (the engine finds a line by shifting the address)`, cache: "L1", key: "line"},
		{name: "negative size", caches: []Cache{{Name: "L1", Size: -1, Assoc: 8}},
			err: `cache "L1": size: must be positive, not -1`, cache: "L1", key: "size"},
		{name: "negative sets", caches: []Cache{{Name: "L1", Sets: -1, Assoc: 8}},
			err: `cache "L1": sets: must be positive, not -1`, cache: "L1", key: "sets"},
		{name: "negative assoc", caches: []Cache{{Name: "L1", Size: 1024, Assoc: -2}},
			err: `cache "L1": assoc: must be positive, not -2`, cache: "L1", key: "assoc"},
		{name: "size not divisible into sets", caches: []Cache{{Name: "L2", Size: 1000000, Assoc: 16}},
			err: `cache "L2": size: 1000000 is not divisible into 16-way sets of 64-byte lines (16*64 = 1024 bytes per set)`, cache: "L2", key: "size"},
		{name: "size smaller than a set", caches: []Cache{{Name: "L1", Size: 512, Assoc: 16}},
			err: `cache "L1": size: 512 is smaller than one 16-way set of 64-byte lines (1024 bytes)`, cache: "L1", key: "size"},
		{name: "size not divisible into ways", caches: []Cache{{Name: "L2", Size: 1000000, Sets: 1000}},
			err: `cache "L2": size: 1000000 is not divisible into 1000 sets of 64-byte lines (1000*64 = 64000 bytes per way)`, cache: "L2", key: "size"},
		{name: "size smaller than the sets", caches: []Cache{{Name: "L1", Size: 1024, Sets: 64}},
			err: `cache "L1": size: 1024 is smaller than 64 sets of one 64-byte line (4096 bytes)`, cache: "L1", key: "size"},
		{name: "geometry disagrees", caches: []Cache{{Name: "L1", Size: 32768, Sets: 128, Assoc: 8}},
			err: `cache "L1": size: 32768 does not match sets*assoc*line = 128*8*64 = 65536`, cache: "L1", key: "size"},
		{name: "geometry too large", caches: []Cache{{Name: "L1", Sets: 1 << 40, Assoc: 1 << 20}},
			err: `cache "L1": sets: 1099511627776 sets of 1048576 ways of 64-byte lines are too large`, cache: "L1", key: "sets"},
		{name: "only size", caches: []Cache{{Name: "L1", Size: 1024}},
			err: `cache "L1": assoc: missing (give assoc, a number or "full", or sets, with size)`, cache: "L1", key: "assoc"},
		{name: "only sets", caches: []Cache{{Name: "L1", Sets: 64}},
			err: `cache "L1": size: missing (give size or assoc with sets)`, cache: "L1", key: "size"},
		{name: "only assoc", caches: []Cache{{Name: "L1", Assoc: 8}},
			err: `cache "L1": size: missing (give size or sets with assoc)`, cache: "L1", key: "size"},
		{name: "full with sets", caches: []Cache{{Name: "V", Size: 4096, Sets: 4, Assoc: AssocFull}},
			err: `cache "V": sets: 4 contradicts assoc: full (a fully associative cache has one set)`, cache: "V", key: "sets"},
		{name: "full without size", caches: []Cache{{Name: "V", Assoc: AssocFull}},
			err: `cache "V": size: missing (assoc: full needs the size)`, cache: "V", key: "size"},
		{name: "full not whole lines", caches: []Cache{{Name: "V", Size: 1000, Assoc: AssocFull}},
			err: `cache "V": size: 1000 is not a whole number of 64-byte lines`, cache: "V", key: "size"},
		{name: "plru non power of two", caches: []Cache{{Name: "L1D", Size: 48 << 10, Assoc: 12, Replacement: PLRU}},
			err: `cache "L1D": replacement: plru needs a power-of-two associativity, not 12`, cache: "L1D", key: "replacement"},
		{name: "same level, same kind", caches: []Cache{{Name: "A", Level: 1}, {Name: "B", Level: 1}},
			err: `cache "B": level: 1 is also the level of "A", which also holds instructions and data (one cache per level and kind of reference)`, cache: "B", key: "level"},
		{name: "same level, data and unified", caches: []Cache{{Name: "L1D", Holds: Data}, {Name: "L1", Level: 1}},
			err: `cache "L1": level: 1 is also the level of "L1D", which also holds data (one cache per level and kind of reference)`, cache: "L1", key: "level"},
		{name: "same level, instructions", caches: []Cache{{Name: "L1I", Holds: Instructions}, {Name: "L1D", Holds: Data}, {Name: "X", Holds: Instructions, Level: 1}},
			err: `cache "X": level: 1 is also the level of "L1I", which also holds instructions (one cache per level and kind of reference)`, cache: "X", key: "level"},
		{name: "explicit level out of order", caches: []Cache{{Name: "L2", Level: 2}, {Name: "L1", Level: 1}},
			err: `cache "L1": level: 1 is below level 2 of "L2" listed before it (list caches from the CPU outward, in level order)`, cache: "L1", key: "level"},
		{name: "default level out of order", caches: []Cache{{Name: "I1", Holds: Instructions}, {Name: "I2", Holds: Instructions}, {Name: "D1", Holds: Data}},
			err: `cache "D1": level: 1 (the default from its position) is below level 2 of "I2" listed before it (list caches from the CPU outward, in level order)`, cache: "D1", key: "level"},
		{name: "exclusive at level 1", caches: []Cache{{Name: "L1", Inclusion: Exclusive}},
			err: `cache "L1": inclusion: exclusive needs a cache above it, and a level-1 cache has none`, cache: "L1", key: "inclusion"},
		{name: "exclusive with nothing above at level 2", caches: []Cache{{Name: "L2", Level: 2, Inclusion: Exclusive}},
			err: `cache "L2": inclusion: exclusive needs a cache above it, and none above it holds instructions`, cache: "L2", key: "inclusion"},
		{name: "exclusive unified under a data cache only", caches: []Cache{{Name: "L1D", Holds: Data}, {Name: "L2", Inclusion: Exclusive}},
			err: `cache "L2": inclusion: exclusive needs a cache above it, and none above it holds instructions`, cache: "L2", key: "inclusion"},
		{name: "exclusive with another line size", caches: []Cache{{Name: "L1I", Holds: Instructions}, {Name: "L1D", Holds: Data, Line: 32}, {Name: "L2", Size: 1 << 20, Assoc: 16, Inclusion: Exclusive}},
			err: `cache "L2": inclusion: exclusive needs the line size of "L1D" above it (32 bytes, not 64)`, cache: "L2", key: "inclusion"},
		{name: "exclusive checks the cache directly above", caches: []Cache{{Name: "L1", Line: 32}, {Name: "L2", Line: 64}, {Name: "L3", Size: 1 << 20, Assoc: 16, Line: 32, Inclusion: Exclusive}},
			err: `cache "L3": inclusion: exclusive needs the line size of "L2" above it (64 bytes, not 32)`, cache: "L3", key: "inclusion"},
	}
	for _, tt := range tests {
		m := &Machine{Name: "t", MemoryLatency: tt.memLat, Processors: tt.procs, Mapping: tt.mapping, Pin: tt.pin,
			Nodes: tt.nodes, Placement: tt.place, PageSize: tt.page, RemoteLatency: tt.remote, RemoteDirtyLatency: tt.dirty}
		for _, c := range tt.caches {
			m.Caches = append(m.Caches, geo(c))
		}
		before := *m
		before.Caches = append([]Cache(nil), m.Caches...)
		err := m.Normalize()
		if err == nil || err.Error() != tt.err {
			t.Errorf("%s: error %v\n                 want %s", tt.name, err, tt.err)
			continue
		}
		var ce *ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("%s: error is %T, not *ConfigError", tt.name, err)
			continue
		}
		if ce.Cache != tt.cache || ce.Key != tt.key {
			t.Errorf("%s: Cache %q Key %q; want %q %q", tt.name, ce.Cache, ce.Key, tt.cache, tt.key)
		}
		if !reflect.DeepEqual(m, &before) {
			t.Errorf("%s: Normalize changed the machine on error", tt.name)
		}
	}
}

// TestSpecConfigErrors checks validation errors reached from inline specs.
func TestSpecConfigErrors(t *testing.T) {
	tests := []struct {
		specs []string
		err   string
	}{
		{[]string{"L1:"}, `cache "L1": size: missing (give two of size, sets and assoc)`},
		{[]string{"L1:line=64,latency=3"}, `cache "L1": size: missing (give two of size, sets and assoc)`},
		{[]string{"L2:size=1000000,assoc=16"}, `cache "L2": size: 1000000 is not divisible into 16-way sets of 64-byte lines (16*64 = 1024 bytes per set)`},
		{[]string{"L1:size=32k,assoc=8", "L1:size=1m,assoc=16"}, `cache "L1": name: already used by cache #1 (names must be unique, ignoring case)`},
		{[]string{"a=b:size=32k,assoc=8"}, `cache "a=b": name: "a=b" contains '=' (names may not contain spaces, control characters, ':', ',' or '=')`},
		{[]string{"L1:size=32k,assoc=8,line=48"}, `cache "L1": line: 48 is not a power of two (the engine finds a line by shifting the address)`},
		{[]string{"L1:size=48k,assoc=12,replacement=plru"}, `cache "L1": replacement: plru needs a power-of-two associativity, not 12`},
		{[]string{"L1:size=32k,assoc=8,inclusion=exclusive"}, `cache "L1": inclusion: exclusive needs a cache above it, and a level-1 cache has none`},
		{[]string{"L1:size=32k,assoc=8,level=2", "L2:size=1m,assoc=8,level=2"}, `cache "L2": level: 2 is also the level of "L1", which also holds instructions and data (one cache per level and kind of reference)`},
		{[]string{"L1D:size=32k,assoc=8,holds=d", "L2:size=1m,assoc=8", "L1I:size=32k,assoc=8,holds=i,level=1"}, `cache "L1I": level: 1 is below level 2 of "L2" listed before it (list caches from the CPU outward, in level order)`},
	}
	for _, tt := range tests {
		_, err := FromSpecs(tt.specs, 0)
		if err == nil || err.Error() != tt.err {
			t.Errorf("%q: error %v\n want %s", tt.specs, err, tt.err)
		}
	}
}

// TestValidMachines checks configurations near the error cases that must
// be accepted.
func TestValidMachines(t *testing.T) {
	tests := []struct {
		name   string
		caches []Cache
	}{
		{"level gap", []Cache{{Name: "L1D", Holds: Data, Size: 32 << 10, Assoc: 8}, {Name: "L3", Level: 3, Size: 1 << 20, Assoc: 16}}},
		{"exclusive under split L1", []Cache{
			{Name: "L1I", Holds: Instructions, Size: 32 << 10, Assoc: 8},
			{Name: "L1D", Holds: Data, Size: 32 << 10, Assoc: 8},
			{Name: "L2", Size: 512 << 10, Assoc: 8, Inclusion: Exclusive}}},
		{"exclusive data cache under a data cache", []Cache{
			{Name: "L1D", Holds: Data, Size: 32 << 10, Assoc: 8},
			{Name: "L2D", Holds: Data, Size: 512 << 10, Assoc: 8, Inclusion: Exclusive}}},
		{"inclusive at level 1", []Cache{{Name: "L1", Size: 32 << 10, Assoc: 8, Inclusion: Inclusive}}},
		{"different line sizes without exclusion", []Cache{
			{Name: "L1", Size: 32 << 10, Assoc: 8, Line: 32},
			{Name: "L2", Size: 1 << 20, Assoc: 16, Line: 128, Inclusion: Inclusive}}},
		{"plru direct-mapped", []Cache{{Name: "L1", Size: 32 << 10, Assoc: 1, Replacement: PLRU}}},
		{"names differ", []Cache{{Name: "L1_d-0.x", Size: 1024, Assoc: 1}, {Name: "L2$", Size: 4096, Assoc: 1}}},
	}
	for _, tt := range tests {
		m := &Machine{Caches: tt.caches}
		if err := m.Normalize(); err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
}

// TestValidMultiprocessors checks machines of several processors (and
// mappings) near the error cases that must be accepted, and what
// Normalize makes of their processors, mapping and pin.
func TestValidMultiprocessors(t *testing.T) {
	l1 := func(name string, holds Holds, line int, shared bool) Cache {
		return Cache{Name: name, Holds: holds, Size: 32 << 10, Assoc: 8, Line: line, Shared: shared}
	}
	big := func(name string, line int, shared bool, in Inclusion) Cache {
		return Cache{Name: name, Size: 4 << 20, Assoc: 16, Line: line, Shared: shared, Inclusion: in}
	}
	tests := []struct {
		name    string
		m       Machine
		procs   int
		mapping Mapping
		pin     []int
	}{
		{"defaults", Machine{Caches: []Cache{l1("L1", Unified, 0, false)}}, 1, RoundRobin, nil},
		{"empty pin dropped", Machine{Pin: []int{}, Caches: []Cache{l1("L1", Unified, 0, false)}}, 1, RoundRobin, nil},
		{"pinned on one processor", Machine{Mapping: Pinned, Pin: []int{0, 0}, Caches: []Cache{l1("L1", Unified, 0, false)}}, 1, Pinned, []int{0, 0}},
		{"64 processors", Machine{Processors: 64, Caches: []Cache{l1("L1", Unified, 0, false)}}, 64, RoundRobin, nil},
		{"pinned", Machine{Processors: 4, Mapping: Pinned, Pin: []int{3, 3, 0}, Caches: []Cache{l1("L1", Unified, 0, false)}}, 4, Pinned, []int{3, 3, 0}},
		{"all shared", Machine{Processors: 2, Caches: []Cache{l1("L1", Unified, 32, true), big("L2", 128, true, Inclusive)}}, 2, RoundRobin, nil},
		{"shared caches have their own line size", Machine{Processors: 2, Caches: []Cache{
			l1("L1I", Instructions, 64, false), l1("L1D", Data, 64, false), big("L2", 64, false, NonInclusive), big("L3", 128, true, Inclusive)}}, 2, RoundRobin, nil},
		{"shared instructions above private data", Machine{Processors: 2, Caches: []Cache{
			l1("L1I", Instructions, 64, true), {Name: "L2D", Holds: Data, Level: 2, Size: 1 << 20, Assoc: 16}}}, 2, RoundRobin, nil},
		{"shared exclusive under private", Machine{Processors: 8, Caches: []Cache{
			l1("L1", Unified, 64, false), big("L2", 64, true, Exclusive)}}, 8, RoundRobin, nil},
		{"one processor: the rules of several do not apply", Machine{Processors: 1, Caches: []Cache{
			l1("L1", Unified, 32, true), big("L2", 32, false, Exclusive), {Name: "L3", Size: 8 << 20, Assoc: 16}}}, 1, RoundRobin, nil},
	}
	for _, tt := range tests {
		m := tt.m
		if err := m.Normalize(); err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if m.Processors != tt.procs || m.Mapping != tt.mapping || !reflect.DeepEqual(m.Pin, tt.pin) {
			t.Errorf("%s: processors %d mapping %q pin %#v; want %d %q %#v", tt.name, m.Processors, m.Mapping, m.Pin, tt.procs, tt.mapping, tt.pin)
		}
		// Normalizing again changes nothing.
		again := m
		again.Caches = slices.Clone(m.Caches)
		if err := again.Normalize(); err != nil || !reflect.DeepEqual(again, m) {
			t.Errorf("%s: second Normalize: %v\n%+v", tt.name, err, again)
		}
	}
}

func TestProcessorOf(t *testing.T) {
	tests := []struct {
		name string
		m    Machine
		want []int // of threads 0, 1, 2, ...
	}{
		{"not normalized", Machine{}, []int{0, 0, 0}},
		{"one processor", Machine{Processors: 1, Mapping: RoundRobin}, []int{0, 0, 0}},
		{"round-robin", Machine{Processors: 3, Mapping: RoundRobin}, []int{0, 1, 2, 0, 1, 2, 0}},
		{"pinned", Machine{Processors: 4, Mapping: Pinned, Pin: []int{3, 3, 0}}, []int{3, 3, 0, 3, 0, 1, 2, 3}},
		{"pinned, all threads", Machine{Processors: 2, Mapping: Pinned, Pin: []int{1, 1, 1, 0}}, []int{1, 1, 1, 0}},
		{"pin ignored by round-robin", Machine{Processors: 2, Mapping: RoundRobin, Pin: []int{1, 1}}, []int{0, 1, 0}},
	}
	for _, tt := range tests {
		var got []int
		for i := range tt.want {
			got = append(got, tt.m.ProcessorOf(i))
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: ProcessorOf(0...) = %v; want %v", tt.name, got, tt.want)
		}
	}
}

// TestNormalizeNodes checks what Normalize makes of the NUMA fields of
// valid machines: the defaults with several nodes, values kept as given,
// and a machine of one node left alone.
func TestNormalizeNodes(t *testing.T) {
	l1 := []Cache{{Name: "L1D", Holds: Data, Size: 32 << 10, Assoc: 2}, {Name: "L2", Size: 1 << 20, Assoc: 4}}
	type numa struct {
		nodes               int
		place               Placement
		page, remote, dirty int
	}
	tests := []struct {
		name string
		m    Machine
		want numa
	}{
		{"one node by default", Machine{Processors: 4}, numa{1, "", 0, 0, 0}},
		{"one node given", Machine{Processors: 4, Nodes: 1}, numa{1, "", 0, 0, 0}},
		{"one node keeps what it is given, unchecked against the rest", Machine{Processors: 2, Nodes: 1, MemoryLatency: 100, Placement: Interleave, PageSize: 32, RemoteLatency: 10, RemoteDirtyLatency: 20},
			numa{1, Interleave, 32, 10, 20}},
		{"defaults", Machine{Processors: 4, Nodes: 2}, numa{2, FirstTouch, 4096, 200, 300}},
		{"defaults from the memory latency", Machine{Processors: 4, Nodes: 2, MemoryLatency: 70}, numa{2, FirstTouch, 4096, 140, 210}},
		{"given", Machine{Processors: 16, Nodes: 8, MemoryLatency: 100, Placement: Interleave, PageSize: 64, RemoteLatency: 100, RemoteDirtyLatency: 100},
			numa{8, Interleave, 64, 100, 100}},
		{"dirty nearer than remote", Machine{Processors: 3, Nodes: 3, Placement: PlaceRoundRobin, PageSize: 2 << 20, RemoteLatency: 500, RemoteDirtyLatency: 400},
			numa{3, PlaceRoundRobin, 2 << 20, 500, 400}},
		{"remote defaults saturate", Machine{Processors: 2, Nodes: 2, MemoryLatency: math.MaxInt/2 + 1}, numa{2, FirstTouch, 4096, math.MaxInt, math.MaxInt}},
	}
	for _, tt := range tests {
		m := tt.m
		m.Caches = slices.Clone(l1)
		if err := m.Normalize(); err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		got := numa{m.Nodes, m.Placement, m.PageSize, m.RemoteLatency, m.RemoteDirtyLatency}
		if got != tt.want {
			t.Errorf("%s: got %+v; want %+v", tt.name, got, tt.want)
		}
		// Normalizing again changes nothing.
		again := m
		again.Caches = slices.Clone(m.Caches)
		if err := again.Normalize(); err != nil || !reflect.DeepEqual(again, m) {
			t.Errorf("%s: second Normalize: %v\n%+v", tt.name, err, again)
		}
	}
}

func TestNodeOf(t *testing.T) {
	tests := []struct {
		name string
		m    Machine
		want []int // of processors 0, 1, 2, ...
	}{
		{"not normalized", Machine{}, []int{0, 0, 0}},
		{"one node", Machine{Processors: 4, Nodes: 1}, []int{0, 0, 0, 0}},
		{"one processor per node", Machine{Processors: 4, Nodes: 4}, []int{0, 1, 2, 3}},
		{"two per node", Machine{Processors: 16, Nodes: 8}, []int{0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7}},
		{"uneven", Machine{Processors: 5, Nodes: 2}, []int{0, 0, 0, 1, 1}},
		{"uneven, three nodes", Machine{Processors: 7, Nodes: 3}, []int{0, 0, 0, 1, 1, 2, 2}},
		{"all in one of many", Machine{Processors: 64, Nodes: 2}, slices.Concat(slices.Repeat([]int{0}, 32), slices.Repeat([]int{1}, 32))},
	}
	for _, tt := range tests {
		var got []int
		for p := range tt.want {
			got = append(got, tt.m.NodeOf(p))
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: NodeOf(0...) = %v; want %v", tt.name, got, tt.want)
		}
	}
}
