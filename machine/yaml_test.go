package machine

import (
	"errors"
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
		{"not a mapping", "- a\n- b\n", `t.yaml:1: want a mapping with keys name, description, memory_latency, caches`, true},
		{"unknown top key", "name: x\nmemory: 100\ncaches: []\n",
			`t.yaml:2: unknown key "memory" (want name, description, memory_latency, caches)`, true},
		{"top key twice", "name: x\nname: y\n", `t.yaml:2: name: given twice (first at line 1)`, true},
		{"bad memory latency", "memory_latency: fast\n", `t.yaml:1: memory_latency: "fast" is not a positive integer`, true},
		{"zero memory latency", "memory_latency: 0\n", `t.yaml:1: memory_latency: must be positive, not 0`, true},
		{"caches not a list", "caches: L1\n", `t.yaml:1: caches: want a list of caches`, true},
		{"cache not a mapping", "caches:\n  - L1\n", `t.yaml:2: caches: entry 1 is not a mapping of keys to values`, true},
		{"unknown cache key", "name: t\ncaches:\n  - name: L1\n    size: 32k\n    asoc: 8\n",
			`t.yaml:5: cache "L1": unknown key "asoc" (want name, size, sets, assoc, line, replacement, seed, write, allocate, holds, level, inclusion, latency)`, true},
		{"unknown key before name", "caches:\n  - ways: 8\n    name: L1\n",
			`t.yaml:2: cache "L1": unknown key "ways" (want name, size, sets, assoc, line, replacement, seed, write, allocate, holds, level, inclusion, latency)`, true},
		{"cache key twice", "caches:\n  - name: L1\n    size: 32k\n    size: 64k\n", `t.yaml:4: cache "L1": size: given twice (first at line 3)`, true},
		{"bad size", "caches:\n  - name: L1\n    size: 32q\n    assoc: 8\n",
			`t.yaml:3: cache "L1": size: "32q" is not a size: unknown unit "q" (want k, m, g or t, optionally followed by B or iB)`, true},
		{"list value", "caches:\n  - name: L1\n    size: [32k]\n", `t.yaml:3: cache "L1": size: want a single value, not a list or mapping`, true},
		{"null value", "caches:\n  - name: L1\n    size:\n", `t.yaml:3: cache "L1": size: missing value`, true},
		{"bad assoc", "caches:\n  - name: L1\n    assoc: many\n", `t.yaml:3: cache "L1": assoc: "many" is not a positive integer or "full"`, true},
		{"bad allocate", "caches:\n  - name: L1\n    allocate: sometimes\n", `t.yaml:3: cache "L1": allocate: "sometimes" is not true or false`, true},
		{"bad write", "caches:\n  - name: L1\n    write: around\n", `t.yaml:3: cache "L1": write: unknown policy "around" (want back or through)`, true},
		{"bad replacement", "caches:\n  - name: L1\n    replacement: mru\n",
			`t.yaml:3: cache "L1": replacement: unknown policy "mru" (want lru, fifo, random, plru, srrip, brrip)`, true},
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
	}
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
	ms = append(ms, &Machine{Name: `odd "name"`, Description: "tab\there: colon", MemoryLatency: 7,
		Caches: []Cache{{Name: "W", Level: 2, Size: 3072, Sets: 1, Assoc: 3, Line: 1024, Replacement: FIFO,
			Holds: Data, Inclusion: NonInclusive, Latency: 9}}})
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
