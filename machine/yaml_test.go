package machine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLoadExample(t *testing.T) {
	m, err := Load(filepath.Join("testdata", "example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := &Machine{
		Name:          "x86-example",
		Description:   "Split L1s, 2 MiB L2, 30 MiB 20-way L3 (approximate latencies)",
		MemoryLatency: 200,
		Processors:    1,
		Mapping:       RoundRobin,
		Nodes:         1,
		Caches: []Cache{
			{Name: "L1I", Level: 1, Size: 32 << 10, Sets: 64, Assoc: 8, Line: 64, Replacement: LRU,
				WriteBack: true, WriteAllocate: true, Holds: Instructions, Inclusion: NonInclusive, Latency: 4},
			{Name: "L1D", Level: 1, Size: 48 << 10, Sets: 64, Assoc: 12, Line: 64, Replacement: LRU,
				WriteBack: true, WriteAllocate: true, Holds: Data, Inclusion: NonInclusive, Latency: 5},
			{Name: "L2", Level: 2, Size: 2 << 20, Sets: 2048, Assoc: 16, Line: 64, Replacement: SRRIP,
				WriteBack: true, WriteAllocate: true, Holds: Unified, Inclusion: NonInclusive, Latency: 14},
			{Name: "L3", Level: 3, Size: 30 << 20, Sets: 24576, Assoc: 20, Line: 64, Replacement: Random, Seed: 42,
				WriteBack: true, WriteAllocate: true, Holds: Unified, Inclusion: Inclusive, Latency: 50},
		},
	}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("got  %+v\nwant %+v", m, want)
	}
}

// TestDocExample keeps the example in docs/machine.md equal to
// testdata/example.yaml, and its printed description equal to Describe.
func TestDocExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "machine.md"))
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile(filepath.Join("testdata", "example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "```yaml\n"+string(example)+"```\n") {
		t.Error("docs/machine.md does not contain testdata/example.yaml as a ```yaml block")
	}
	m, err := Parse(example, "example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "```\n"+m.Describe()+"```\n") {
		t.Errorf("docs/machine.md does not contain the example's description:\n%s", m.Describe())
	}
	// Every YAML example is valid.
	blocks := strings.Split(string(doc), "```yaml\n")
	for i, b := range blocks[1:] {
		text, _, _ := strings.Cut(b, "```\n")
		if _, err := Parse([]byte(text), fmt.Sprintf("block%d.yaml", i+1)); err != nil {
			t.Errorf("docs/machine.md: %v\n%s", err, text)
		}
	}
	if len(blocks) < 3 {
		t.Errorf("docs/machine.md has %d YAML examples; want at least 2", len(blocks)-1)
	}
}

func TestParseValues(t *testing.T) {
	m, err := Parse([]byte(`
caches:
  - name: V
    size: 4096          # an integer
    assoc: full
    line: 32
    write: through
    allocate: false
    replacement: BRRIP
  - name: L2
    SIZE: "1.25MiB"
    assoc: 10
    allocate: no
`), "dir/victim.yml")
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "victim" || m.MemoryLatency != DefaultMemoryLatency {
		t.Errorf("name %q, memory latency %d", m.Name, m.MemoryLatency)
	}
	v, l2 := m.Caches[0], m.Caches[1]
	if v.Sets != 1 || v.Assoc != 128 || v.WriteBack || v.WriteAllocate || v.Replacement != BRRIP || v.Seed != DefaultSeed {
		t.Errorf("V = %+v", v)
	}
	if l2.Size != 1310720 || l2.Sets != 2048 || !l2.WriteBack || l2.WriteAllocate || l2.Level != 2 {
		t.Errorf("L2 = %+v", l2)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, yaml, err string
		configError     bool // the error wraps a *ConfigError
	}{
		{"empty file", ``, `t.yaml: no caches: give --machine, --config or --cache`, true},
		{"empty caches", "name: x\ncaches: []\n", `t.yaml:2: no caches: give --machine, --config or --cache`, true},
		{"syntax", "name: x\ncaches:\n  - name: L1\n   size: 32k\n", `t.yaml:2: did not find expected '-' indicator`, false},
		{"not a mapping", "- a\n- b\n", `t.yaml:1: want a mapping with keys name, description, memory_latency, processors, mapping, pin, nodes, placement, page_size, remote_latency, remote_dirty_latency, caches`, true},
		{"unknown top key", "name: x\nmemory: 100\ncaches: []\n",
			`t.yaml:2: unknown key "memory" (want name, description, memory_latency, processors, mapping, pin, nodes, placement, page_size, remote_latency, remote_dirty_latency, caches)`, true},
		{"top key twice", "name: x\nname: y\n", `t.yaml:2: name: given twice (first at line 1)`, true},
		{"bad memory latency", "memory_latency: fast\n", `t.yaml:1: memory_latency: "fast" is not a positive integer`, true},
		{"zero memory latency", "memory_latency: 0\n", `t.yaml:1: memory_latency: must be positive, not 0`, true},
		{"caches not a list", "caches: L1\n", `t.yaml:1: caches: want a list of caches`, true},
		{"cache not a mapping", "caches:\n  - L1\n", `t.yaml:2: caches: entry 1 is not a mapping of keys to values`, true},
		{"unknown cache key", "name: t\ncaches:\n  - name: L1\n    size: 32k\n    asoc: 8\n",
			`t.yaml:5: cache "L1": unknown key "asoc" (want name, size, sets, assoc, line, replacement, seed, write, allocate, holds, level, inclusion, latency, shared)`, true},
		{"unknown key before name", "caches:\n  - ways: 8\n    name: L1\n",
			`t.yaml:2: cache "L1": unknown key "ways" (want name, size, sets, assoc, line, replacement, seed, write, allocate, holds, level, inclusion, latency, shared)`, true},
		{"cache key twice", "caches:\n  - name: L1\n    size: 32k\n    size: 64k\n", `t.yaml:4: cache "L1": size: given twice (first at line 3)`, true},
		{"bad size", "caches:\n  - name: L1\n    size: 32q\n    assoc: 8\n",
			`t.yaml:3: cache "L1": size: "32q" is not a size: unknown unit "q" (want k, m, g or t, optionally followed by B or iB)`, true},
		{"list value", "caches:\n  - name: L1\n    size: [32k]\n", `t.yaml:3: cache "L1": size: want a single value, not a list or mapping`, true},
		{"null value", "caches:\n  - name: L1\n    size:\n", `t.yaml:3: cache "L1": size: missing value`, true},
		{"bad assoc", "caches:\n  - name: L1\n    assoc: many\n", `t.yaml:3: cache "L1": assoc: "many" is not a positive integer or "full"`, true},
		{"bad allocate", "caches:\n  - name: L1\n    allocate: sometimes\n", `t.yaml:3: cache "L1": allocate: "sometimes" is not true or false`, true},
		{"bad write", "caches:\n  - name: L1\n    write: around\n", `t.yaml:3: cache "L1": write: unknown policy "around" (want back or through)`, true},
		{"bad replacement", "caches:\n  - name: L1\n    replacement: mru\n",
			`t.yaml:3: cache "L1": replacement: unknown policy "mru" (want brrip, fifo, lru, plru, random, srrip)`, true},
		{"bad holds", "caches:\n  - name: L1\n    holds: stack\n",
			`t.yaml:3: cache "L1": holds: unknown kind "stack" (want instructions, data or unified; or i, d, u)`, true},
		// Errors found by Normalize point at the key, or at the cache.
		{"missing assoc", "name: t\ncaches:\n  - name: L1\n    size: 32k\n  - name: L2\n    assoc: 16\n    size: 1000000\n",
			`t.yaml:3: cache "L1": assoc: missing (give assoc, a number or "full", or sets, with size)`, true},
		{"not divisible, key line", "caches:\n  - name: L2\n    assoc: 16\n    size: 1000000\n",
			`t.yaml:4: cache "L2": size: 1000000 is not divisible into 16-way sets of 64-byte lines (16*64 = 1024 bytes per set)`, true},
		{"missing name", "caches:\n  - name: L1\n    size: 1k\n    assoc: 1\n  - size: 2k\n    assoc: 1\n",
			`t.yaml:5: cache #2: name: missing (every cache needs a name)`, true},
		{"duplicate name", "caches:\n  - name: L1\n    size: 1k\n    assoc: 1\n  - size: 2k\n    name: l1\n    assoc: 1\n",
			`t.yaml:6: cache "l1": name: already used by cache #1 (names must be unique, ignoring case)`, true},
		{"same level", "caches:\n  - {name: A, size: 1k, assoc: 1}\n  - {name: B, size: 2k, assoc: 1, level: 1}\n",
			`t.yaml:3: cache "B": level: 1 is also the level of "A", which also holds instructions and data (one cache per level and kind of reference)`, true},
		{"exclusive at level 1", "caches:\n  - name: A\n    size: 1k\n    assoc: 1\n    inclusion: exclusive\n",
			`t.yaml:5: cache "A": inclusion: exclusive needs a cache above it, and a level-1 cache has none`, true},
		// Processors, mapping, pin and shared.
		{"bad processors", "processors: many\n", `t.yaml:1: processors: "many" is not a positive integer`, true},
		{"zero processors", "processors: 0\n", `t.yaml:1: processors: must be positive, not 0`, true},
		{"processors list", "processors: [2]\n", `t.yaml:1: processors: want a single value, not a list or mapping`, true},
		{"processors twice", "processors: 2\nprocessors: 4\n", `t.yaml:2: processors: given twice (first at line 1)`, true},
		{"bad mapping", "mapping: spread\n", `t.yaml:1: mapping: unknown mapping "spread" (want round-robin, rr or pinned)`, true},
		{"empty mapping", "mapping: ''\n", `t.yaml:1: mapping: missing value`, true},
		{"null mapping", "mapping:\n", `t.yaml:1: mapping: missing value`, true},
		{"empty pin list", "pin: []\n", `t.yaml:1: pin: empty list (give the processor of each thread, or leave pin out)`, true},
		{"bad pin entry", "pin:\n  - 0\n  - x\n", `t.yaml:3: pin: entry 2: "x" is not a processor number`, true},
		{"nested pin entry", "pin: [0, [1]]\n", `t.yaml:1: pin: entry 2: want a processor number`, true},
		{"null pin entry", "pin: [0, ~]\n", `t.yaml:1: pin: entry 2: want a processor number`, true},
		{"bad pin string", "pin: 0,a\n", `t.yaml:1: pin: entry 2: "a" is not a processor number`, true},
		{"empty pin string", "pin: ' '\n", `t.yaml:1: pin: missing value`, true},
		{"pin mapping", "pin: {a: 1}\n", `t.yaml:1: pin: want a list of processors, [0, 1, 1, 0], or "0,1,1,0"`, true},
		{"bad shared", "caches:\n  - name: L1\n    shared: sometimes\n", `t.yaml:3: cache "L1": shared: "sometimes" is not true or false`, true},
		// Errors of processors found by Normalize point at the key.
		{"too many processors", "name: t\nprocessors: 65\ncaches:\n  - {name: A, size: 1k, assoc: 1}\n",
			`t.yaml:2: processors: 65 is more than 64, the most memspy simulates`, true},
		{"pin out of range", "processors: 2\nmapping: pinned\npin: [0, 2]\ncaches:\n  - {name: A, size: 1k, assoc: 1}\n",
			`t.yaml:3: pin: entry 2: processor 2 is out of range (the machine has 2 processors, 0 to 1)`, true},
		{"pin beyond the default processor", "mapping: pinned\npin: 0,1\ncaches:\n  - {name: A, size: 1k, assoc: 1}\n",
			`t.yaml:2: pin: entry 2: processor 1 is out of range (the machine has one processor, 0)`, true},
		{"pinned without pin", "processors: 2\nmapping: pinned\ncaches:\n  - {name: A, size: 1k, assoc: 1}\n",
			`t.yaml:2: mapping: pinned needs pin, the processor of each thread in the order threads appear`, true},
		{"pin without mapping", "processors: 2\ncaches:\n  - {name: A, size: 1k, assoc: 1}\npin: [1, 0]\n",
			`t.yaml:4: pin: given with the round-robin mapping (pin needs mapping pinned)`, true},
		{"private below shared, cache line", "processors: 2\ncaches:\n  - {name: L1, size: 1k, assoc: 1, shared: true}\n  - name: L2\n    size: 4k\n    assoc: 1\n",
			`t.yaml:4: cache "L2": shared: private, below the shared cache "L1" (level 1), which also holds instructions and data (with several processors, the private caches of a path come before its shared ones: make "L2" shared too)`, true},
		{"private below shared, key line", "processors: 2\ncaches:\n  - {name: L1, size: 1k, assoc: 1, shared: true}\n  - name: L2\n    size: 4k\n    shared: no\n    assoc: 1\n",
			`t.yaml:6: cache "L2": shared: private, below the shared cache "L1" (level 1), which also holds instructions and data (with several processors, the private caches of a path come before its shared ones: make "L2" shared too)`, true},
		{"private line sizes", "processors: 2\ncaches:\n  - {name: L1, size: 1k, assoc: 1, line: 32}\n  - name: L2\n    size: 4k\n    line: 128\n    assoc: 1\n",
			`t.yaml:6: cache "L2": line: 128 bytes, not the 32 of the private cache "L1" (with several processors, every private cache has one line size, the unit of coherence)`, true},
		{"private line sizes, default line", "processors: 2\ncaches:\n  - {name: L1, size: 1k, assoc: 1, line: 32}\n  - name: L2\n    size: 4k\n    assoc: 1\n",
			`t.yaml:4: cache "L2": line: 64 bytes, not the 32 of the private cache "L1" (with several processors, every private cache has one line size, the unit of coherence)`, true},
		{"private exclusive", "processors: 2\ncaches:\n  - {name: L1, size: 1k, assoc: 1}\n  - name: L2\n    inclusion: exclusive\n    size: 4k\n    assoc: 1\n",
			`t.yaml:5: cache "L2": inclusion: exclusive is not supported with several processors yet on a private cache (make it shared, or not exclusive)`, true},
	}
	// NUMA nodes: errors of the parser and of Normalize point at the key.
	const twoProcs = "processors: 2\ncaches:\n  - {name: L1, size: 1k, assoc: 1}\n"
	tests = append(tests, []struct {
		name, yaml, err string
		configError     bool
	}{
		{"bad nodes", "nodes: several\n", `t.yaml:1: nodes: "several" is not a positive integer`, true},
		{"zero nodes", "name: t\nnodes: 0\n", `t.yaml:2: nodes: must be positive, not 0`, true},
		{"nodes list", "nodes: [2]\n", `t.yaml:1: nodes: want a single value, not a list or mapping`, true},
		{"nodes twice", "nodes: 2\nNodes: 4\n", `t.yaml:2: nodes: given twice (first at line 1)`, true},
		{"bad placement", "placement: spread\n", `t.yaml:1: placement: unknown placement "spread" (want first-touch (ft), round-robin (rr) or interleave)`, true},
		{"null placement", "placement:\n", `t.yaml:1: placement: missing value`, true},
		{"bad page size", "\npage_size: 4q\n", `t.yaml:2: page_size: "4q" is not a size: unknown unit "q" (want k, m, g or t, optionally followed by B or iB)`, true},
		{"zero page size", "page_size: 0\n", `t.yaml:1: page_size: must be positive, not 0`, true},
		{"bad remote latency", "remote_latency: slow\n", `t.yaml:1: remote_latency: "slow" is not a positive integer`, true},
		{"zero remote dirty latency", "remote_dirty_latency: 0\n", `t.yaml:1: remote_dirty_latency: must be positive, not 0`, true},
		{"more nodes than processors", "name: t\nnodes: 4\n" + twoProcs, `t.yaml:2: nodes: 4 is more than the 2 processors`, true},
		{"nodes without processors", "caches:\n  - {name: L1, size: 1k, assoc: 1}\nnodes: 2\n", `t.yaml:3: nodes: 2 is more than the 1 processor`, true},
		{"page size not a power of two", "nodes: 2\npage_size: 3000\n" + twoProcs, `t.yaml:2: page_size: 3000 is not a power of two`, true},
		{"page smaller than a line", "nodes: 2\npage_size: 32\n" + twoProcs, `t.yaml:2: page_size: 32 bytes is smaller than the 64-byte line of cache "L1" (a page holds whole lines)`, true},
		{"remote nearer than local", "memory_latency: 100\nnodes: 2\nremote_latency: 99\n" + twoProcs,
			`t.yaml:3: remote_latency: 99 is less than the memory latency, 100 (the memory of another node is not nearer than the processor's own)`, true},
		{"remote dirty nearer than local", "nodes: 2\n" + twoProcs + "remote_dirty_latency: 50\n",
			`t.yaml:5: remote_dirty_latency: 50 is less than the memory latency, 100 (the memory of another node is not nearer than the processor's own)`, true},
		{"shared cache on several nodes, key line", "processors: 4\nnodes: 2\ncaches:\n  - {name: L1, size: 1k, assoc: 1}\n  - name: L2\n    size: 8k\n    shared: true\n    assoc: 2\n",
			`t.yaml:7: cache "L2": shared: with several NUMA nodes every cache is private to its processor (a cache shared within a node is not modelled)`, true},
	}...)
	for _, tt := range tests {
		_, err := Parse([]byte(tt.yaml), "t.yaml")
		if err == nil || err.Error() != tt.err {
			t.Errorf("%s: error %v\n             want %s", tt.name, err, tt.err)
			continue
		}
		var fe *FileError
		if !errors.As(err, &fe) {
			t.Errorf("%s: error is %T, not *FileError", tt.name, err)
		}
		var ce *ConfigError
		if errors.As(err, &ce) != tt.configError {
			t.Errorf("%s: errors.As(*ConfigError) = %v", tt.name, !tt.configError)
		}
	}
}

func TestLoadMissing(t *testing.T) {
	if _, err := Load(filepath.Join("testdata", "no-such.yaml")); err == nil {
		t.Error("Load of a missing file: no error")
	}
}

// TestYAMLRoundTrip checks that Machine.YAML writes what Parse reads back.
func TestYAMLRoundTrip(t *testing.T) {
	ms := []*Machine{}
	for _, p := range Presets() {
		m, err := Preset(p.Name)
		if err != nil {
			if p.Name == "host" {
				continue // tested in TestHost
			}
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	for _, dir := range []string{"intel", "amd", "quirks"} {
		m, err := HostFrom(filepath.Join("testdata", "sysfs", dir))
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	ex, err := Load(filepath.Join("testdata", "example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ms = append(ms, ex)
	ms = append(ms, &Machine{Name: `odd "name"`, Description: "tab\there: colon", MemoryLatency: 7, Processors: 1, Mapping: RoundRobin, Nodes: 1,
		Caches: []Cache{{Name: "W", Level: 2, Size: 3072, Sets: 1, Assoc: 3, Line: 1024, Replacement: FIFO,
			Holds: Data, Inclusion: NonInclusive, Latency: 9}}})
	// Processors, mappings and shared caches.
	for _, text := range []string{
		"processors: 4\nmapping: pinned\npin: [3, 3, 0]\ncaches:\n  - {name: L1, size: 1k, assoc: 1}\n  - {name: L2, size: 8k, assoc: 2, shared: true}\n",
		"processors: 2\ncaches:\n  - {name: L1, size: 1k, assoc: 1, shared: true}\n",
		"mapping: pinned\npin: 0,0\ncaches:\n  - {name: L1, size: 1k, assoc: 1, shared: on}\n",
		"processors: 1\ncaches:\n  - {name: L1, size: 1k, assoc: 1, shared: false}\n",
		// NUMA nodes, and the NUMA keys of a machine of one node.
		"processors: 4\nnodes: 2\ncaches:\n  - {name: L1, size: 1k, assoc: 1}\n",
		"processors: 6\nnodes: 3\nplacement: rr\npage_size: 64k\nremote_latency: 120\nremote_dirty_latency: 110\nmemory_latency: 110\ncaches:\n  - {name: L1, size: 1k, assoc: 1}\n",
		"nodes: 1\nplacement: interleave\npage_size: 1m\nremote_latency: 1\ncaches:\n  - {name: L1, size: 1k, assoc: 1}\n",
	} {
		m, err := Parse([]byte(text), "mp.yaml")
		if err != nil {
			t.Fatalf("%v\n%s", err, text)
		}
		ms = append(ms, m)
	}
	for _, m := range ms {
		got, err := Parse(m.YAML(), m.Name+".yaml")
		if err != nil {
			t.Errorf("%s: %v\n%s", m.Name, err, m.YAML())
			continue
		}
		if !reflect.DeepEqual(got, m) {
			t.Errorf("%s: round trip\n got %+v\nwant %+v", m.Name, got, m)
		}
	}
}

// TestParseProcessors checks the machine keys of several processors and
// the cache key shared.
func TestParseProcessors(t *testing.T) {
	const caches = "caches:\n  - {name: L1, size: 1k, assoc: 1}\n  - {name: L2, size: 8k, assoc: 2, shared: true}\n"
	tests := []struct {
		yaml    string
		procs   int
		mapping Mapping
		pin     []int
	}{
		{"", 1, RoundRobin, nil},
		{"processors: 16\n", 16, RoundRobin, nil},
		{"processors: 4\nmapping: rr\n", 4, RoundRobin, nil},
		{"processors: 4\nmapping: Round-Robin\n", 4, RoundRobin, nil},
		{"processors: 4\nmapping: pinned\npin: [0, 1, 1, 0]\n", 4, Pinned, []int{0, 1, 1, 0}},
		{"processors: 4\nMAPPING: PINNED\npin:\n  - 3\n  - 2\n", 4, Pinned, []int{3, 2}},
		{"processors: 4\nmapping: pinned\npin: \"0, 1,1 ,0\"\n", 4, Pinned, []int{0, 1, 1, 0}},
		{"processors: 4\nmapping: pinned\npin: 0,1,1,0\n", 4, Pinned, []int{0, 1, 1, 0}},
		{"processors: 4\nmapping: pinned\npin: 2\n", 4, Pinned, []int{2}},
		{"processors: 4\nmapping: pinned\npin: [&p 1, *p, 0]\n", 4, Pinned, []int{1, 1, 0}},
	}
	for _, tt := range tests {
		m, err := Parse([]byte(tt.yaml+caches), "mp.yaml")
		if err != nil {
			t.Errorf("%q: %v", tt.yaml, err)
			continue
		}
		if m.Processors != tt.procs || m.Mapping != tt.mapping || !reflect.DeepEqual(m.Pin, tt.pin) {
			t.Errorf("%q: processors %d mapping %q pin %v; want %d %q %v", tt.yaml, m.Processors, m.Mapping, m.Pin, tt.procs, tt.mapping, tt.pin)
		}
		if m.Caches[0].Shared || !m.Caches[1].Shared {
			t.Errorf("%q: shared %v %v; want false true", tt.yaml, m.Caches[0].Shared, m.Caches[1].Shared)
		}
	}
	for _, v := range []string{"true", "yes", "on", "1", "True", "\"YES\""} {
		m, err := Parse([]byte("caches:\n  - {name: L1, size: 1k, assoc: 1, shared: "+v+"}\n"), "s.yaml")
		if err != nil || !m.Caches[0].Shared {
			t.Errorf("shared: %s: %v %+v", v, err, m)
		}
	}
	for _, v := range []string{"false", "no", "off", "0"} {
		m, err := Parse([]byte("caches:\n  - {name: L1, size: 1k, assoc: 1, shared: "+v+"}\n"), "s.yaml")
		if err != nil || m.Caches[0].Shared {
			t.Errorf("shared: %s: %v %+v", v, err, m)
		}
	}
}

// TestParseNodes checks the machine keys of NUMA nodes.
func TestParseNodes(t *testing.T) {
	const caches = "caches:\n  - {name: L1D, holds: data, size: 32k, assoc: 2}\n  - {name: L2, size: 1m, assoc: 4}\n"
	type numa struct {
		nodes               int
		place               Placement
		page, remote, dirty int
	}
	tests := []struct {
		yaml string
		want numa
	}{
		{"processors: 4\n", numa{1, "", 0, 0, 0}},
		{"processors: 4\nnodes: 1\n", numa{1, "", 0, 0, 0}},
		{"processors: 4\nnodes: 2\n", numa{2, FirstTouch, 4096, 200, 300}},
		{"processors: 4\nnodes: 2\nmemory_latency: 80\n", numa{2, FirstTouch, 4096, 160, 240}},
		{"processors: 4\nnodes: 4\nplacement: RR\npage_size: 8KiB\nremote_latency: 150\nremote_dirty_latency: 180\n", numa{4, PlaceRoundRobin, 8192, 150, 180}},
		{"processors: 4\nNODES: 2\nPlacement: interleave\npage_size: 65536\n", numa{2, Interleave, 65536, 200, 300}},
		{"processors: 4\nnodes: 2\nplacement: ft\npage_size: \"2m\"\n", numa{2, FirstTouch, 2 << 20, 200, 300}},
		{"processors: 4\nplacement: interleave\nremote_latency: 7\n", numa{1, Interleave, 0, 7, 0}}, // one node: kept, unused
	}
	for _, tt := range tests {
		m, err := Parse([]byte(tt.yaml+caches), "numa.yaml")
		if err != nil {
			t.Errorf("%q: %v", tt.yaml, err)
			continue
		}
		if got := (numa{m.Nodes, m.Placement, m.PageSize, m.RemoteLatency, m.RemoteDirtyLatency}); got != tt.want {
			t.Errorf("%q: got %+v; want %+v", tt.yaml, got, tt.want)
		}
	}
}

// FuzzParse checks that Parse either fails with a *FileError or returns a
// machine that Machine.YAML writes back exactly, and whose caches' specs
// (Cache.Spec) read back to the same caches.
func FuzzParse(f *testing.F) {
	example, err := os.ReadFile(filepath.Join("testdata", "example.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(example))
	for _, s := range []string{
		"caches:\n  - {name: L1, size: 1k, assoc: 1}\n",
		"processors: 4\nmapping: pinned\npin: [3, 3, 0]\ncaches:\n  - {name: L1, holds: d, size: 1k, assoc: 1, line: 32}\n  - {name: L2, size: 8k, assoc: 2, line: 32, shared: true}\n",
		"processors: 16\nmapping: rr\ncaches:\n  - {name: L1D, holds: data, size: 64k, assoc: 1, line: 32, latency: 1}\nmemory_latency: 50\n",
		"mapping: pinned\npin: \"0,0\"\ncaches:\n  - {name: V, size: 4k, assoc: full, shared: yes, inclusion: inclusive}\n",
		"processors: 2\ncaches:\n  - {name: L1, size: 1k, assoc: 1}\n  - {name: L2, size: 4k, assoc: 2, inclusion: exclusive, shared: on, replacement: brrip}\n",
		"processors: 2\ncaches:\n  - {name: L1, size: 1k, assoc: 1, shared: true}\n  - {name: L2, size: 4k, assoc: 2}\n",
		"processors: 65\npin: [0, x]\ncaches: []\n",
		"processors: 16\nnodes: 8\nplacement: ft\npage_size: 4k\nremote_latency: 250\nremote_dirty_latency: 400\ncaches:\n  - {name: L1D, holds: d, size: 32k, assoc: 2}\n",
		"processors: 3\nnodes: 2\nplacement: interleave\ncaches:\n  - {name: L1, size: 1k, assoc: 1, line: 128}\n",
		"nodes: 1\nplacement: round-robin\nremote_dirty_latency: 5\ncaches:\n  - {name: L1, size: 1k, assoc: 1, shared: true}\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		m, err := Parse([]byte(text), "f.yaml")
		if err != nil {
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("error %T, not *FileError: %v", err, err)
			}
			return
		}
		_ = m.Describe()
		back, err := Parse(m.YAML(), m.Name+".yaml")
		if err != nil {
			t.Fatalf("YAML does not parse: %v\n%s", err, m.YAML())
		}
		if !reflect.DeepEqual(back, m) {
			t.Fatalf("YAML round trip\n got %+v\nwant %+v\n%s", back, m, m.YAML())
		}
		var specs []string
		for _, c := range m.Caches {
			specs = append(specs, c.Spec())
		}
		s, err := FromSpecs(specs, m.MemoryLatency)
		if err != nil {
			t.Fatalf("specs %q: %v", specs, err)
		}
		if !reflect.DeepEqual(s.Caches, m.Caches) {
			t.Fatalf("spec round trip\n got %+v\nwant %+v", s.Caches, m.Caches)
		}
	})
}
