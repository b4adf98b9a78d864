package machine

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/memspy/memspy/cache"
)

func TestParseCacheSpec(t *testing.T) {
	tests := []struct {
		spec string
		want Cache
	}{
		{"L1D:size=32k,assoc=8,line=64,holds=d", Cache{Name: "L1D", Size: 32768, Assoc: 8, Line: 64, Holds: Data, WriteBack: true, WriteAllocate: true}},
		{"L1:", Cache{Name: "L1", WriteBack: true, WriteAllocate: true}},
		{" L2 : size = 1MiB , sets=1024 , ", Cache{Name: "L2", Size: 1 << 20, Sets: 1024, WriteBack: true, WriteAllocate: true}},
		{"V:size=4k,assoc=full", Cache{Name: "V", Size: 4096, Assoc: AssocFull, WriteBack: true, WriteAllocate: true}},
		{"V:size=4k,assoc=FULL", Cache{Name: "V", Size: 4096, Assoc: AssocFull, WriteBack: true, WriteAllocate: true}},
		{"I:holds=i", Cache{Name: "I", Holds: Instructions, WriteBack: true, WriteAllocate: true}},
		{"I:holds=instr", Cache{Name: "I", Holds: Instructions, WriteBack: true, WriteAllocate: true}},
		{"I:holds=inst", Cache{Name: "I", Holds: Instructions, WriteBack: true, WriteAllocate: true}},
		{"I:HOLDS=Instructions", Cache{Name: "I", Holds: Instructions, WriteBack: true, WriteAllocate: true}},
		{"D:holds=data", Cache{Name: "D", Holds: Data, WriteBack: true, WriteAllocate: true}},
		{"U:holds=u", Cache{Name: "U", Holds: Unified, WriteBack: true, WriteAllocate: true}},
		{"U:holds=unified", Cache{Name: "U", Holds: Unified, WriteBack: true, WriteAllocate: true}},
		{"W:write=through,allocate=false", Cache{Name: "W", WriteBack: false, WriteAllocate: false}},
		{"W:write=wt,allocate=no", Cache{Name: "W", WriteBack: false, WriteAllocate: false}},
		{"W:write=back,allocate=true", Cache{Name: "W", WriteBack: true, WriteAllocate: true}},
		{"R:replacement=BRRIP,seed=7", Cache{Name: "R", Replacement: BRRIP, Seed: 7, WriteBack: true, WriteAllocate: true}},
		{"L3:level=3,inclusion=inclusive,latency=50", Cache{Name: "L3", Level: 3, Inclusion: Inclusive, Latency: 50, WriteBack: true, WriteAllocate: true}},
		{"L3:inclusion=exclusive", Cache{Name: "L3", Inclusion: Exclusive, WriteBack: true, WriteAllocate: true}},
		{"L3:size=8m,shared=true", Cache{Name: "L3", Size: 8 << 20, Shared: true, WriteBack: true, WriteAllocate: true}},
		{"L3:SHARED=Yes", Cache{Name: "L3", Shared: true, WriteBack: true, WriteAllocate: true}},
		{"L3:shared=on", Cache{Name: "L3", Shared: true, WriteBack: true, WriteAllocate: true}},
		{"L3:shared=1", Cache{Name: "L3", Shared: true, WriteBack: true, WriteAllocate: true}},
		{"L2:shared=false", Cache{Name: "L2", WriteBack: true, WriteAllocate: true}},
		{"L2:shared=no,allocate=off", Cache{Name: "L2", WriteBack: true}},
		{"L2:shared=0", Cache{Name: "L2", WriteBack: true, WriteAllocate: true}},
	}
	for _, tt := range tests {
		got, err := ParseCacheSpec(tt.spec)
		if err != nil {
			t.Errorf("ParseCacheSpec(%q): %v", tt.spec, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseCacheSpec(%q) = %+v; want %+v", tt.spec, got, tt.want)
		}
	}
	for _, r := range cache.Policies() {
		c, err := ParseCacheSpec("C:replacement=" + r)
		if err != nil || c.Replacement != Replacement(r) {
			t.Errorf("replacement=%s: %+v, %v", r, c, err)
		}
	}
}

func TestParseCacheSpecErrors(t *testing.T) {
	tests := []struct{ spec, err string }{
		{"size=32k,assoc=8", `cache spec "size=32k,assoc=8" has no NAME: prefix (write NAME:key=value,..., e.g. L1D:size=32k,assoc=8)`},
		{"", `cache spec "" has no NAME: prefix (write NAME:key=value,..., e.g. L1D:size=32k,assoc=8)`},
		{":size=32k", `cache spec ":size=32k" has an empty name before the colon`},
		{"L1:size", `cache "L1": "size" is not key=value`},
		{"L1:size=", `cache "L1": size: missing value`},
		{"L1:size=32k,size=64k", `cache "L1": size: given twice`},
		{"L1:name=x", `cache "L1": name: give the name as the NAME: prefix of the spec`},
		{"L1:ways=8", `cache "L1": ways: unknown key (want size, sets, assoc, line, replacement, seed, write, allocate, holds, level, inclusion, latency, shared)`},
		{"L1:size=32q", `cache "L1": size: "32q" is not a size: unknown unit "q" (want k, m, g or t, optionally followed by B or iB)`},
		{"L1:size=0", `cache "L1": size: must be positive, not 0`},
		{"L1:size=-4k", `cache "L1": size: "-4k" is not a size: negative`},
		{"L1:sets=0", `cache "L1": sets: must be positive, not 0`},
		{"L1:sets=-2", `cache "L1": sets: must be positive, not -2`},
		{"L1:sets=lots", `cache "L1": sets: "lots" is not a positive integer`},
		{"L1:assoc=eight", `cache "L1": assoc: "eight" is not a positive integer or "full"`},
		{"L1:assoc=0", `cache "L1": assoc: must be positive, not 0`},
		{"L1:line=0", `cache "L1": line: must be positive, not 0`},
		{"L1:line=32B", `cache "L1": line: "32B" is not a positive integer`},
		{"L1:level=0", `cache "L1": level: must be positive, not 0`},
		{"L1:latency=-1", `cache "L1": latency: must be positive, not -1`},
		{"L1:seed=-1", `cache "L1": seed: "-1" is not an unsigned integer`},
		{"L1:replacement=mru", `cache "L1": replacement: unknown policy "mru" (want brrip, fifo, lru, plru, random, srrip)`},
		{"L1:holds=everything", `cache "L1": holds: unknown kind "everything" (want instructions, data or unified; or i, d, u)`},
		{"L1:inclusion=nine", `cache "L1": inclusion: unknown policy "nine" (want none, inclusive or exclusive)`},
		{"L1:write=around", `cache "L1": write: unknown policy "around" (want back or through)`},
		{"L1:allocate=maybe", `cache "L1": allocate: "maybe" is not true or false`},
		{"L3:shared=maybe", `cache "L3": shared: "maybe" is not true or false`},
		{"L3:shared=", `cache "L3": shared: missing value`},
		{"L3:shared=true,shared=false", `cache "L3": shared: given twice`},
	}
	for _, tt := range tests {
		_, err := ParseCacheSpec(tt.spec)
		if err == nil || err.Error() != tt.err {
			t.Errorf("ParseCacheSpec(%q) error = %v\n want %s", tt.spec, err, tt.err)
			continue
		}
		var ce *ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("ParseCacheSpec(%q) error is %T, not *ConfigError", tt.spec, err)
		}
	}
}

func TestFromSpecs(t *testing.T) {
	m, err := FromSpecs([]string{
		"L1I:size=32k,assoc=8,holds=i,latency=4",
		"L1D:size=48k,assoc=12,holds=d,latency=5",
		"L2:size=1.25m,assoc=10,latency=14",
		"L3:size=30m,assoc=20,replacement=random,latency=50",
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "custom" || m.MemoryLatency != DefaultMemoryLatency {
		t.Errorf("name %q, memory latency %d", m.Name, m.MemoryLatency)
	}
	want := []struct {
		name  string
		level int
		sets  int
		assoc int
		seed  uint64
	}{
		{"L1I", 1, 64, 8, 0},
		{"L1D", 1, 64, 12, 0},
		{"L2", 2, 2048, 10, 0},
		{"L3", 3, 24576, 20, DefaultSeed},
	}
	for i, w := range want {
		c := m.Caches[i]
		if c.Name != w.name || c.Level != w.level || c.Sets != w.sets || c.Assoc != w.assoc || c.Seed != w.seed {
			t.Errorf("cache %d = %+v; want %+v", i, c, w)
		}
	}

	// Errors of a spec carry through.
	_, err = FromSpecs([]string{"L1:size=32k,assoc=8", "L2:size=1m,assoc=sixteen"}, 0)
	if want := `cache "L2": assoc: "sixteen" is not a positive integer or "full"`; err == nil || err.Error() != want {
		t.Errorf("error %v; want %s", err, want)
	}
	_, err = FromSpecs(nil, 0)
	if want := "no caches: give --machine, --config or --cache"; err == nil || err.Error() != want {
		t.Errorf("error %v; want %s", err, want)
	}
	_, err = FromSpecs([]string{"L1:size=32k,assoc=8"}, -5)
	if want := "memory_latency: must be positive, not -5"; err == nil || err.Error() != want {
		t.Errorf("error %v; want %s", err, want)
	}
}

// TestSpecRoundTrip checks that Cache.Spec gives back the same cache.
func TestSpecRoundTrip(t *testing.T) {
	for _, p := range []string{"memspy-seq", "memspy-par", "r12000", "x86-modern", "x86-multicore"} {
		m, err := Preset(p)
		if err != nil {
			t.Fatal(err)
		}
		var specs []string
		for _, c := range m.Caches {
			spec := c.Spec()
			if strings.Contains(spec, "shared") != c.Shared {
				t.Errorf("%s: %s: shared %v", p, spec, c.Shared)
			}
			specs = append(specs, spec)
		}
		got, err := FromSpecs(specs, m.MemoryLatency)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if !reflect.DeepEqual(got.Caches, m.Caches) {
			t.Errorf("%s: round trip\n got %+v\nwant %+v", p, got.Caches, m.Caches)
		}
	}
}

// TestParseMappingAndPin checks the parsers of the mapping and pin values
// (the YAML keys, and --map in the command).
func TestParseMappingAndPin(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want Mapping
		err  string
	}{
		{"round-robin", RoundRobin, ""},
		{" RR ", RoundRobin, ""},
		{"Pinned", Pinned, ""},
		{"", "", "mapping: missing value"},
		{"roundrobin", "", `mapping: unknown mapping "roundrobin" (want round-robin, rr or pinned)`},
		{"0,1", "", `mapping: unknown mapping "0,1" (want round-robin, rr or pinned)`},
	} {
		got, err := ParseMapping(tt.s)
		if got != tt.want || errText(err) != tt.err {
			t.Errorf("ParseMapping(%q) = %q, %v; want %q, %s", tt.s, got, err, tt.want, tt.err)
		}
		var ce *ConfigError
		if err != nil && !errors.As(err, &ce) {
			t.Errorf("ParseMapping(%q) error is %T, not *ConfigError", tt.s, err)
		}
	}
	for _, tt := range []struct {
		s   string
		pin []int
		err string
	}{
		{"0", []int{0}, ""},
		{"0,1,1,0", []int{0, 1, 1, 0}, ""},
		{" 3 , 2,1", []int{3, 2, 1}, ""},
		{"-1", []int{-1}, ""}, // Normalize checks the range
		{"", nil, "pin: missing value"},
		{"  ", nil, "pin: missing value"},
		{"0,1,", nil, `pin: entry 3: "" is not a processor number`},
		{"0,,1", nil, `pin: entry 2: "" is not a processor number`},
		{"0;1", nil, `pin: entry 1: "0;1" is not a processor number`},
		{"1.5", nil, `pin: entry 1: "1.5" is not a processor number`},
	} {
		got, err := ParsePin(tt.s)
		if !reflect.DeepEqual(got, tt.pin) || errText(err) != tt.err {
			t.Errorf("ParsePin(%q) = %v, %v; want %v, %s", tt.s, got, err, tt.pin, tt.err)
		}
		var ce *ConfigError
		if err != nil && !errors.As(err, &ce) {
			t.Errorf("ParsePin(%q) error is %T, not *ConfigError", tt.s, err)
		}
	}
}

// errText returns the message of err, "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestParsePlacement checks the parser of the placement value (the YAML
// key, and --placement in the command).
func TestParsePlacement(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want Placement
		err  string
	}{
		{"first-touch", FirstTouch, ""},
		{" FT ", FirstTouch, ""},
		{"First-Touch", FirstTouch, ""},
		{"round-robin", PlaceRoundRobin, ""},
		{"RR", PlaceRoundRobin, ""},
		{"Interleave", Interleave, ""},
		{"", "", "placement: missing value"},
		{" ", "", "placement: missing value"},
		{"firsttouch", "", `placement: unknown placement "firsttouch" (want first-touch (ft), round-robin (rr) or interleave)`},
		{"interleaved", "", `placement: unknown placement "interleaved" (want first-touch (ft), round-robin (rr) or interleave)`},
	} {
		got, err := ParsePlacement(tt.s)
		if got != tt.want || errText(err) != tt.err {
			t.Errorf("ParsePlacement(%q) = %q, %v; want %q, %s", tt.s, got, err, tt.want, tt.err)
		}
		var ce *ConfigError
		if err != nil && (!errors.As(err, &ce) || ce.Key != "placement") {
			t.Errorf("ParsePlacement(%q) error is %T %+v, not *ConfigError for placement", tt.s, err, err)
		}
	}
	for _, p := range Placements {
		if got, err := ParsePlacement(string(p)); got != p || err != nil {
			t.Errorf("ParsePlacement(%q) = %q, %v", p, got, err)
		}
	}
}

// TestParsePageSize checks the parser of the page_size value (the YAML
// key, and --page-size in the command).
func TestParsePageSize(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want int
		err  string
	}{
		{"4096", 4096, ""},
		{"4k", 4096, ""},
		{" 2MiB ", 2 << 20, ""},
		{"1g", 1 << 30, ""},
		{"3000", 3000, ""}, // Normalize checks for a power of two
		{"", 0, "page_size: missing value"},
		{"0", 0, "page_size: must be positive, not 0"},
		{"0k", 0, "page_size: must be positive, not 0k"},
		{"-4k", 0, `page_size: "-4k" is not a size: negative`},
		{"4q", 0, `page_size: "4q" is not a size: unknown unit "q" (want k, m, g or t, optionally followed by B or iB)`},
		{"4g", 0, "page_size: 4g is too large"},
	} {
		got, err := ParsePageSize(tt.s)
		if got != tt.want || errText(err) != tt.err {
			t.Errorf("ParsePageSize(%q) = %d, %v; want %d, %s", tt.s, got, err, tt.want, tt.err)
		}
		var ce *ConfigError
		if err != nil && (!errors.As(err, &ce) || ce.Key != "page_size") {
			t.Errorf("ParsePageSize(%q) error is %T %+v, not *ConfigError for page_size", tt.s, err, err)
		}
	}
}
