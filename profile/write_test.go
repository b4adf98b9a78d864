package profile

import (
	"bytes"
	"encoding/json"
	"testing"

	"memspy/machine"
)

// Write, an entry at a time, gives the bytes of a json.Encoder indenting
// the whole profile by two spaces.
func TestWriteAsEncoder(t *testing.T) {
	st := func(n uint64) Stats {
		return Stats{Accesses: n, Hits: n / 2, Misses: n - n/2, StallCycles: 10 * n, SpatialUse: 0.25,
			EvictedBy: map[string]uint64{"<other>": n, "a&b": 1}, Evictors: []RefEvictor{{Reference: "0x10", Object: "<freed>", Count: n}}}
	}
	levels := func(n uint64) map[string]*Stats {
		a, b := st(n), st(n+1)
		return map[string]*Stats{"L1D": &a, "L2": &b}
	}
	where := func(p *Profile) *Profile {
		p.Functions = []Function{{Name: "main", Entry: 0x401000, Stats: st(3), Levels: levels(3),
			Inclusive: &Inclusive{Instructions: 7, Stats: st(4), Levels: levels(4)}}, {Name: "<unknown>", Levels: map[string]*Stats{}}}
		p.Objects = []Object{{Name: "B", FullName: "main.B", Kind: "heap", CallPath: []string{"main m.c:3"}, Stats: st(5), Levels: levels(5)}}
		p.Pairs = []Pair{{Function: "main", Object: "B", Strides: &Strides{Samples: 3, Top: []Stride{{Bytes: -8, Count: 3}}}, Levels: levels(6)}}
		p.References = []Reference{{PC: 0x401004, File: "m.c", Line: 4, Function: "main", Object: "B", Kind: "read", Levels: levels(7)},
			{PC: 0x401008, Function: "main", Object: "<other>", Kind: "write", Levels: map[string]*Stats{}}}
		return p
	}
	m, err := machine.Preset("x86-modern")
	if err != nil {
		t.Fatal(err)
	}
	base := func() *Profile {
		return &Profile{Version: Version, Tool: "memspy", Source: Source{Name: "t.din", Format: "din"},
			Machine: m, EventsByKind: map[string]uint64{"read": 3},
			Caches: []CacheStats{{Name: "L1D", Level: 1, Accesses: 3}}, Complete: true}
	}
	withLines := where(base())
	withLines.Lines = []Line{{File: "m.c", Line: 4, Function: "main", Levels: levels(8)}}
	tree := where(base())
	tree.Processes = []Process{{Pid: 10, Command: "./a <x>", Exit: "exit code 0", Profile: base()}}
	tree.Complete, tree.Error = false, "interrupted"
	many := where(base())
	for i := range 3*entriesPerPart + 1 { // several parts
		r := many.References[0]
		r.PC += uint64(i)
		r.Levels = levels(uint64(i))
		many.References = append(many.References, r)
	}
	for name, p := range map[string]*Profile{"plain": base(), "where": where(base()), "lines": withLines, "processes": tree, "many": many} {
		var want, got bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		if err := enc.Encode(p); err != nil {
			t.Fatal(err)
		}
		if err := p.Write(&got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s: Write gave\n%s\nwant\n%s", name, got.Bytes(), want.Bytes())
		}
	}
}
