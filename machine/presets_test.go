package machine

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// geom is the part of a cache the preset and host tests check.
type geom struct {
	Name        string
	Level       int
	Holds       Holds
	Size        int64
	Sets, Assoc int
	Line        int
	Latency     int
}

func geoms(m *Machine) []geom {
	var g []geom
	for _, c := range m.Caches {
		g = append(g, geom{c.Name, c.Level, c.Holds, c.Size, c.Sets, c.Assoc, c.Line, c.Latency})
	}
	return g
}

func TestPresets(t *testing.T) {
	tests := []struct {
		name   string
		caches []geom
		memory int
		procs  int
		shared []string // names of the shared caches
	}{
		{"memspy-seq", []geom{{"L1D", 1, Data, 128 << 10, 4096, 1, 32, 1}}, 50, 1, nil},
		{"memspy-par", []geom{{"L1D", 1, Data, 64 << 10, 2048, 1, 32, 1}}, 50, 16, nil},
		{"r12000", []geom{{"L1D", 1, Data, 32 << 10, 512, 2, 32, 2}}, 100, 1, nil},
		{"x86-modern", []geom{
			{"L1I", 1, Instructions, 32 << 10, 64, 8, 64, 4},
			{"L1D", 1, Data, 32 << 10, 64, 8, 64, 4},
			{"L2", 2, Unified, 1 << 20, 1024, 16, 64, 14},
			{"L3", 3, Unified, 32 << 20, 32768, 16, 64, 50},
		}, 200, 1, nil},
		{"x86-multicore", []geom{
			{"L1I", 1, Instructions, 32 << 10, 64, 8, 64, 5},
			{"L1D", 1, Data, 48 << 10, 64, 12, 64, 5},
			{"L2", 2, Unified, 1280 << 10, 2048, 10, 64, 15},
			{"L3", 3, Unified, 30 << 20, 40960, 12, 64, 50},
		}, 250, 8, []string{"L3"}},
		{"flashpoint", []geom{
			{"L1D", 1, Data, 32 << 10, 256, 2, 64, 1},
			{"L2D", 2, Data, 1 << 20, 4096, 4, 64, 10},
		}, 100, 16, nil},
	}
	var names []string
	for _, p := range Presets() {
		names = append(names, p.Name)
		if p.Description == "" {
			t.Errorf("preset %s has no description", p.Name)
		}
	}
	if want := []string{"memspy-seq", "memspy-par", "r12000", "x86-modern", "x86-multicore", "flashpoint", "host"}; !reflect.DeepEqual(names, want) {
		t.Errorf("Presets() = %v; want %v", names, want)
	}
	for _, tt := range tests {
		m, err := Preset(tt.name)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if m.Name != tt.name || m.Description == "" || m.MemoryLatency != tt.memory {
			t.Errorf("%s: name %q, description %q, memory %d", tt.name, m.Name, m.Description, m.MemoryLatency)
		}
		if got := geoms(m); !reflect.DeepEqual(got, tt.caches) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, got, tt.caches)
		}
		if m.Processors != tt.procs || m.Mapping != RoundRobin || m.Pin != nil {
			t.Errorf("%s: processors %d, mapping %q, pin %v; want %d round-robin", tt.name, m.Processors, m.Mapping, m.Pin, tt.procs)
		}
		nodes := 1
		if tt.name == "flashpoint" {
			nodes = 8
			if m.Placement != FirstTouch || m.PageSize != 4096 || m.RemoteLatency != 250 || m.RemoteDirtyLatency != 400 {
				t.Errorf("%s: placement %q, page size %d, remote latencies %d %d; want first-touch 4096 250 400",
					tt.name, m.Placement, m.PageSize, m.RemoteLatency, m.RemoteDirtyLatency)
			}
			for p := range m.Processors {
				if got := m.NodeOf(p); got != p/2 {
					t.Errorf("%s: NodeOf(%d) = %d; want %d", tt.name, p, got, p/2)
				}
			}
		} else if m.Placement != "" || m.PageSize != 0 || m.RemoteLatency != 0 || m.RemoteDirtyLatency != 0 {
			t.Errorf("%s: NUMA fields set on one node: %+v", tt.name, m)
		}
		if m.Nodes != nodes {
			t.Errorf("%s: %d nodes; want %d", tt.name, m.Nodes, nodes)
		}
		var shared []string
		for _, c := range m.Caches {
			if c.Shared {
				shared = append(shared, c.Name)
			}
		}
		if !reflect.DeepEqual(shared, tt.shared) {
			t.Errorf("%s: shared caches %v; want %v", tt.name, shared, tt.shared)
		}
		for _, c := range m.Caches {
			if c.Replacement != LRU || !c.WriteBack || !c.WriteAllocate || c.Inclusion != NonInclusive {
				t.Errorf("%s: %s policies %+v", tt.name, c.Name, c)
			}
		}
		// Each call returns a fresh copy.
		m.Caches[0].Size = 1
		if again, _ := Preset(tt.name); again.Caches[0].Size == 1 {
			t.Errorf("%s: Preset returns shared caches", tt.name)
		}
	}
	if m, err := Preset("X86-Modern"); err != nil || m.Name != "x86-modern" {
		t.Errorf("Preset is case sensitive: %v", err)
	}
	_, err := Preset("pdp11")
	if want := `unknown machine "pdp11" (known: memspy-seq, memspy-par, r12000, x86-modern, x86-multicore, flashpoint, host)`; err == nil || err.Error() != want {
		t.Errorf("Preset(pdp11) error %v; want %s", err, want)
	}
}

func TestHostFrom(t *testing.T) {
	tests := []struct {
		dir    string
		caches []geom
		notes  []string // in the description
	}{
		{"intel", []geom{
			{"L1I", 1, Instructions, 32 << 10, 64, 8, 64, 4},
			{"L1D", 1, Data, 48 << 10, 64, 12, 64, 4},
			{"L2", 2, Unified, 1280 << 10, 2048, 10, 64, 14},
			{"L3", 3, Unified, 30 << 20, 40960, 12, 64, 50},
		}, nil},
		{"amd", []geom{
			{"L1I", 1, Instructions, 32 << 10, 64, 8, 64, 4},
			{"L1D", 1, Data, 32 << 10, 64, 8, 64, 4},
			{"L2", 2, Unified, 1 << 20, 2048, 8, 64, 14},
			{"L3", 3, Unified, 32 << 20, 32768, 16, 64, 50},
		}, nil},
		{"quirks", []geom{
			{"L1D", 1, Data, 4 << 10, 1, 64, 64, 4},         // 0 ways: fully associative
			{"L2", 2, Unified, 256 << 10, 512, 8, 64, 14},   // size disagrees with sets*ways*line
			{"L3", 3, Unified, 8 << 20, 8192, 16, 64, 50},   // physical_line_partition 2
			{"L4", 4, Unified, 64 << 20, 65536, 16, 64, 80}, // no number_of_sets
		}, []string{
			"Skipped index3 (type Unknown).",
			"L2: sysfs size 512KiB disagrees with number_of_sets 512 * 8 ways * 64-byte lines = 256KiB; used the sets and ways.",
			"L3: physical_line_partition 2: modelled as 8192 sets (number_of_sets 4096 * 2) to keep the size 8MiB.",
			"L4: no number_of_sets given; sets derived from size and ways.",
		}},
	}
	for _, tt := range tests {
		m, err := HostFrom(filepath.Join("testdata", "sysfs", tt.dir))
		if err != nil {
			t.Errorf("%s: %v", tt.dir, err)
			continue
		}
		if m.Name != "host" || m.MemoryLatency != 200 {
			t.Errorf("%s: name %q memory %d", tt.dir, m.Name, m.MemoryLatency)
		}
		if got := geoms(m); !reflect.DeepEqual(got, tt.caches) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.dir, got, tt.caches)
		}
		for _, n := range tt.notes {
			if !strings.Contains(m.Description, n) {
				t.Errorf("%s: description lacks %q:\n%s", tt.dir, n, m.Description)
			}
		}
		if tt.notes == nil && strings.Contains(m.Description, ": ") {
			t.Errorf("%s: unexpected notes: %s", tt.dir, m.Description)
		}
	}

	for _, dir := range []string{"empty", "no-such-dir"} {
		if _, err := HostFrom(filepath.Join("testdata", "sysfs", dir)); err == nil {
			t.Errorf("HostFrom(%s): no error", dir)
		}
	}
}

func TestHostFromBroken(t *testing.T) {
	write := func(t *testing.T, files map[string]string) string {
		dir := t.TempDir()
		for name, text := range files {
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(text+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	tests := []struct {
		name  string
		files map[string]string
		err   string
	}{
		{"no type", map[string]string{"index0/level": "1"}, "host: index0: type: missing"},
		{"bad level", map[string]string{"index0/level": "x", "index0/type": "Data"}, `host: index0: level: "x" is not a count`},
		{"bad size", map[string]string{"index0/level": "1", "index0/type": "Data", "index0/size": "32Q"},
			`host: index0: size: "32Q" is not a size: unknown unit "Q" (want k, m, g or t, optionally followed by B or iB)`},
		{"no geometry", map[string]string{"index0/level": "1", "index0/type": "Data", "index0/size": "32K"},
			"host: index0: need two of size, number_of_sets and ways_of_associativity"},
		{"indivisible", map[string]string{"index0/level": "1", "index0/type": "Data", "index0/size": "1000K", "index0/ways_of_associativity": "3"},
			`host: cache "L1D": size: 1024000 is not divisible into 3-way sets of 64-byte lines (3*64 = 192 bytes per set)`},
		{"two indices order", map[string]string{
			"index0/level": "1", "index0/type": "Data", "index0/size": "1K", "index0/ways_of_associativity": "1", "index0/coherency_line_size": "64",
			"index10/level": "2", "index10/type": "Unified", "index10/size": "2K", "index10/ways_of_associativity": "1", "index10/coherency_line_size": "64",
			"index2/level": "2", "index2/type": "Unified", "index2/size": "4K", "index2/ways_of_associativity": "1", "index2/coherency_line_size": "64",
		}, `host: cache "L2": name: already used by cache #2 (names must be unique, ignoring case)`},
	}
	for _, tt := range tests {
		_, err := HostFrom(write(t, tt.files))
		if err == nil || err.Error() != tt.err {
			t.Errorf("%s: error %v\n want %s", tt.name, err, tt.err)
		}
	}
}

// TestHost reads this machine's caches where Linux describes them.
func TestHost(t *testing.T) {
	if _, err := os.Stat(HostCacheDir); err != nil {
		t.Skipf("no %s: %v", HostCacheDir, err)
	}
	m, err := Host()
	if err != nil {
		t.Fatal(err)
	}
	p, err := Preset("host")
	if err != nil || !reflect.DeepEqual(p, m) {
		t.Errorf("Preset(host) = %v, %v; want Host()", p, err)
	}
	data := false
	for _, c := range m.Caches {
		if c.Level == 1 && c.HoldsData() {
			data = true
		}
		if int64(c.Sets)*int64(c.Assoc)*int64(c.Line) != c.Size {
			t.Errorf("%s: inconsistent geometry %+v", c.Name, c)
		}
	}
	if !data {
		t.Errorf("no level-1 data cache:\n%s", m.Describe())
	}
	t.Logf("\n%s", m.Describe())
}

func TestDescribe(t *testing.T) {
	m, err := FromSpecs([]string{
		"L1D:size=32k,assoc=8,holds=d,write=through,allocate=false,latency=3",
		"V:size=4k,assoc=full,replacement=brrip,level=2,holds=d",
		"M:size=64k,assoc=1,level=3",
	}, 77)
	if err != nil {
		t.Fatal(err)
	}
	want := `custom
  CACHE  LEVEL  SIZE   ASSOC     SETS  LINE  HOLDS    REPLACEMENT    WRITE                INCLUSION  LATENCY
  L1D    1      32KiB  8-way     64    64B   data     lru            through+no-allocate  none       3
  V      2      4KiB   full(64)  1     64B   data     brrip(seed 1)  back+allocate        none       1
  M      3      64KiB  direct    1024  64B   unified  lru            back+allocate        none       1
  memory latency 77 cycles
`
	if got := m.Describe(); got != want {
		t.Errorf("Describe:\n%s\nwant\n%s", got, want)
	}
}

func TestDescribeProcessors(t *testing.T) {
	m, err := Parse([]byte(`
name: mp
processors: 4
mapping: pinned
pin: [3, 3, 0]
memory_latency: 80
caches:
  - {name: L1D, holds: data, size: 32k, assoc: 8}
  - {name: L2, size: 1m, assoc: 16, latency: 12, shared: true}
`), "")
	if err != nil {
		t.Fatal(err)
	}
	want := `mp
  4 processors; threads pinned to processors 3,3,0 in the order they appear, further threads round-robin
  CACHE  LEVEL  SIZE   ASSOC   SETS  LINE  HOLDS    REPLACEMENT  WRITE          INCLUSION  LATENCY  SHARING
  L1D    1      32KiB  8-way   64    64B   data     lru          back+allocate  none       1        private
  L2     2      1MiB   16-way  1024  64B   unified  lru          back+allocate  none       12       shared
  memory latency 80 cycles
`
	if got := m.Describe(); got != want {
		t.Errorf("Describe:\n%s\nwant\n%s", got, want)
	}
	p, err := Preset("memspy-par")
	if err != nil {
		t.Fatal(err)
	}
	want = `memspy-par: MemSpy's multiprocessor: 16 processors, each with a private 64 KiB direct-mapped data cache, 32-byte lines, 1-cycle hit, 50-cycle memory
  16 processors; threads placed round-robin in the order they appear
  CACHE  LEVEL  SIZE   ASSOC   SETS  LINE  HOLDS  REPLACEMENT  WRITE          INCLUSION  LATENCY  SHARING
  L1D    1      64KiB  direct  2048  32B   data   lru          back+allocate  none       1        private
  memory latency 50 cycles
`
	if got := p.Describe(); got != want {
		t.Errorf("Describe:\n%s\nwant\n%s", got, want)
	}
}

func TestDescribeNodes(t *testing.T) {
	p, err := Preset("flashpoint")
	if err != nil {
		t.Fatal(err)
	}
	want := p.Name + ": " + p.Description + `
  16 processors; threads placed round-robin in the order they appear
  8 NUMA nodes of 2 processors each (0-1, 2-3, 4-5, ...); 4KiB pages homed first-touch (at the node of the processor that first references them)
  CACHE  LEVEL  SIZE   ASSOC  SETS  LINE  HOLDS  REPLACEMENT  WRITE          INCLUSION  LATENCY  SHARING
  L1D    1      32KiB  2-way  256   64B   data   lru          back+allocate  none       1        private
  L2D    2      1MiB   4-way  4096  64B   data   lru          back+allocate  none       10       private
  memory latency 100 cycles at the processor's own node, 250 at another node, 400 when another node's processor holds the line dirty
`
	if got := p.Describe(); got != want {
		t.Errorf("Describe:\n%s\nwant\n%s", got, want)
	}
	for _, tt := range []struct{ yaml, line string }{
		{"processors: 3\nnodes: 2\nplacement: interleave\npage_size: 2m\n",
			"  2 NUMA nodes of 1 or 2 processors each (0-1, 2); 2MiB pages homed interleaved (page number mod nodes)\n"},
		{"processors: 3\nnodes: 3\nplacement: rr\n",
			"  3 NUMA nodes of 1 processor each (0, 1, 2); 4KiB pages homed round-robin (at nodes 0, 1, 2, ... in the order they are first referenced)\n"},
		{"processors: 7\nnodes: 3\n",
			"  3 NUMA nodes of 2 or 3 processors each (0-2, 3-4, 5-6); 4KiB pages homed first-touch (at the node of the processor that first references them)\n"},
	} {
		m, err := Parse([]byte(tt.yaml+"caches:\n  - {name: L1, size: 1k, assoc: 1}\n"), "")
		if err != nil {
			t.Fatal(err)
		}
		if d := m.Describe(); !strings.Contains(d, tt.line) {
			t.Errorf("%q: Describe lacks\n%s\n%s", tt.yaml, tt.line, d)
		}
	}
	// One node: nothing about nodes, even with NUMA fields kept unused.
	m, err := Parse([]byte("processors: 2\nnodes: 1\nplacement: interleave\nremote_latency: 500\ncaches:\n  - {name: L1, size: 1k, assoc: 1}\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	if d := m.Describe(); strings.Contains(d, "NUMA") || !strings.HasSuffix(d, "\n  memory latency 100 cycles\n") {
		t.Errorf("one node:\n%s", d)
	}
}
