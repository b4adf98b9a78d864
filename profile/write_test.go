package profile

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memspy/memspy/machine"
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
	for name, p := range map[string]*Profile{"plain": base(), "where": where(base()), "lines": withLines, "processes": tree, "many": many,
		"large": largeWhere(600), "random": randomProfile(rand.New(rand.NewPCG(1, 2)))} {
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

// randomProfile returns a profile whose entries have random contents in
// every field (filler), several parts of them, with counters at its
// caches L1, L2 and L3 or none, focused on L2.
func randomProfile(rng *rand.Rand) *Profile {
	f := &filler{rng: rng, cacheNames: []string{"L1", "L2", "L3"}}
	p := sample(10)
	p.Caches = append(p.Caches, CacheStats{Name: "L3", Level: 3})
	p.Options.Where, p.Focus = true, "L2"
	p.Functions = randomEntries[Function](f, 40)
	p.Objects = randomEntries[Object](f, 40)
	p.Pairs = randomEntries[Pair](f, 40)
	p.Lines = randomEntries[Line](f, 40)
	p.References = randomEntries[Reference](f, entriesPerPart+40)
	return p
}

// A profile written by WriteCompressed, zstd or gzip, whose entries leave
// out their focus copies, reads back the same, focus copies included; so
// does a compressed profile of version 1, which has them.
func TestWriteCompressedRoundTrip(t *testing.T) {
	random := randomProfile(rand.New(rand.NewPCG(3, 4)))
	// As JSON holds it (strings valid UTF-8, empty lists left out), with
	// top-level counters that are focus copies.
	b, err := json.Marshal(random)
	if err != nil {
		t.Fatal(err)
	}
	random = &Profile{}
	if err := json.Unmarshal(b, random); err != nil {
		t.Fatal(err)
	}
	if err := random.SetFocus(random.Focus); err != nil {
		t.Fatal(err)
	}
	for key, p := range map[string]*Profile{"large": largeWhere(600), "random": random} {
		for _, c := range []Compression{Zstd, Gzip} {
			name := fmt.Sprintf("%s, compression %d", key, c)
			testCompressedRoundTrip(t, name, p, c)
		}
	}
}

// testCompressedRoundTrip is TestWriteCompressedRoundTrip for the profile
// p (called name), compressed with c.
func testCompressedRoundTrip(t *testing.T, name string, p *Profile, c Compression) {
	{
		var z bytes.Buffer
		if err := p.WriteCompressed(&z, c); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := Read(bytes.NewReader(z.Bytes()))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d := cmp.Diff(p, got); d != "" {
			t.Errorf("%s: read back (-written +read):\n%s", name, d)
		}
		// The focus copies were left out.
		zr, closeFn, _, err := decompressor(bufio.NewReader(&z))
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(zr)
		closeFn()
		if err != nil {
			t.Fatal(err)
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(data, &fields); err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{"functions", "objects", "pairs", "lines", "references"} {
			var entries []map[string]json.RawMessage
			if err := json.Unmarshal(fields[key], &entries); err != nil {
				t.Fatal(err)
			}
			for i, e := range entries {
				var in map[string]json.RawMessage
				if e["inclusive"] != nil {
					if err := json.Unmarshal(e["inclusive"], &in); err != nil {
						t.Fatal(err)
					}
				}
				for _, copied := range []string{"accesses", "stall_cycles", "causes", "spatial_use"} {
					if e[copied] != nil || in[copied] != nil {
						t.Fatalf("%s: %s[%d] has a focus copy (%s)", name, key, i, copied)
					}
				}
			}
		}
		// A version 1 profile, compressed: its entries have focus copies.
		old := *p
		old.Version = 1
		b, err := json.Marshal(&old)
		if err != nil {
			t.Fatal(err)
		}
		z.Reset()
		zw := gzip.NewWriter(&z)
		zw.Write(b)
		zw.Close()
		got, err = Read(&z)
		if err != nil {
			t.Fatalf("%s, version 1: %v", name, err)
		}
		if !reflect.DeepEqual(got, &old) {
			t.Errorf("%s, version 1: read back differs", name)
		}
	}
}
