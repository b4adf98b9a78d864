package profile

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func sample(events uint64) *Profile {
	return &Profile{
		Version: Version, Tool: "memspy", Events: events, Complete: true,
		EventsByKind: map[string]uint64{"read": events},
		Caches: []CacheStats{
			{Name: "L1", Level: 1, Accesses: events, Misses: events / 2, Reads: events, ReadMisses: events / 2, Evictions: 3,
				Misc: events / 5, MiscMisses: events / 10}, // (not adding up: only merged and written)
			{Name: "L2", Level: 2, Accesses: events / 2, Misses: 1, Reads: events / 2, ReadMisses: 1},
		},
		Memory: MemoryStats{Reads: 1, BytesRead: 64},
	}
}

func TestMergeAddsShards(t *testing.T) {
	a, b := sample(10), sample(6)
	b.Complete = false
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	want := sample(16)
	want.Caches[0].Misses, want.Caches[0].ReadMisses = 8, 8 // 5 + 3
	want.Caches[0].Evictions = 6
	want.Caches[1].Misses, want.Caches[1].ReadMisses = 2, 2
	want.Memory = MemoryStats{Reads: 2, BytesRead: 128}
	want.Complete = false
	if d := cmp.Diff(want, a); d != "" {
		t.Errorf("merged profile (-want +got):\n%s", d)
	}
}

func TestMergeRejectsOtherMachines(t *testing.T) {
	a, b := sample(1), sample(1)
	b.Caches[1].Name = "L3"
	if err := a.Merge(b); err == nil || !strings.Contains(err.Error(), `"L3"`) {
		t.Errorf("Merge of different machines: err = %v", err)
	}
	b.Caches = b.Caches[:1]
	if err := a.Merge(b); err == nil {
		t.Error("Merge of different cache counts succeeded")
	}
}

func TestWriteFileReadRoundTrip(t *testing.T) {
	for _, name := range []string{"p.json", "p.memspy", "p.json.gz"} {
		dir := t.TempDir()
		path := filepath.Join(dir, name)
		p := sample(42)
		if err := p.WriteFile(path); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		magic := map[Compression][]byte{Uncompressed: []byte("{"), Zstd: zstdMagic, Gzip: gzipMagic}[CompressionOf(name)]
		if !bytes.HasPrefix(data, magic) {
			t.Errorf("%s: begins % x, want % x", name, data[:min(len(data), 4)], magic)
		}
		q, err := ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(p, q); d != "" {
			t.Errorf("%s: round trip (-want +got):\n%s", name, d)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("temporary files left behind: %v", entries)
		}
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "missing.memspy")); err == nil {
		t.Error("read a missing file")
	}
}

func TestReadRejectsNewerVersion(t *testing.T) {
	_, err := Read(strings.NewReader(`{"version": 99}`))
	if err == nil || !strings.Contains(err.Error(), "version 99") {
		t.Errorf("err = %v, want a version error", err)
	}
}

func TestJSONKeys(t *testing.T) {
	var buf bytes.Buffer
	if err := sample(1).Write(&buf); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"name", "level", "accesses", "misses", "ifetches", "reads", "writes",
		"ifetch_misses", "read_misses", "write_misses", "compulsory", "capacity", "conflict", "evictions",
		"writebacks", "bytes_from_below", "bytes_to_below", "events"} {
		if !strings.Contains(buf.String(), `"`+key+`":`) {
			t.Errorf("JSON lacks key %q", key)
		}
	}
}

func TestMergeDumps(t *testing.T) {
	a, b := sample(10), sample(6)
	a.Dumps = []Dump{{Name: "a1", Events: 3, Caches: sample(3).Caches}}
	b.Dumps = []Dump{{Name: "b1", Events: 2, Caches: sample(2).Caches}, {Name: "b2", Events: 4, Caches: sample(4).Caches}}
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range a.Dumps {
		names = append(names, d.Name)
	}
	if d := cmp.Diff([]string{"a1", "b1", "b2"}, names); d != "" {
		t.Errorf("merged dumps (-want +got):\n%s", d)
	}
	if a.Dumps[2].Events != 4 || a.Dumps[2].Caches[0].Accesses != 4 {
		t.Errorf("a dump changed in the merge: %+v", a.Dumps[2])
	}
	// A dump of another machine is refused before anything changes.
	c := sample(1)
	c.Dumps = []Dump{{Name: "bad", Caches: sample(1).Caches[:1]}}
	before := a.Events
	if err := a.Merge(c); err == nil || !strings.Contains(err.Error(), `dump "bad"`) {
		t.Errorf("Merge with a foreign dump: err = %v", err)
	}
	if a.Events != before || len(a.Dumps) != 3 {
		t.Error("a failed Merge changed the profile")
	}
}

func TestJSONDumps(t *testing.T) {
	var buf bytes.Buffer
	p := sample(1)
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "dumps") {
		t.Error("a profile without dumps has a dumps key")
	}
	p.Dumps = []Dump{{Name: "d", Events: 1, Caches: p.Caches, Memory: p.Memory}}
	buf.Reset()
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"dumps", "name", "events", "caches", "memory"} {
		if !strings.Contains(buf.String(), `"`+key+`":`) {
			t.Errorf("JSON lacks key %q", key)
		}
	}
	q, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(p, q); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
}

// The where-and-why entries of two shards of one run add up entry by
// entry, at every level and at the focus.
func TestMergeWhere(t *testing.T) {
	st := func(acc, miss, used uint64, ev map[string]uint64, evictors ...RefEvictor) *Stats {
		return &Stats{Accesses: acc, Hits: acc - miss, Misses: miss, Reads: acc, ReadMisses: miss, StallCycles: 10 * miss,
			Causes: Causes{Cold: miss}, EvictedBy: ev, UsedBytes: used, FetchedBytes: 64 * miss, Evictors: evictors}
	}
	prof := func(objs ...Object) *Profile {
		p := &Profile{Caches: []CacheStats{{Name: "L1", Level: 1, Causes: &Causes{Cold: 1}}, {Name: "L2", Level: 2, Causes: &Causes{}}},
			Options: Options{Where: true}, Objects: objs, Complete: true,
			Functions: []Function{{Name: "f", Instructions: 5, ComputeCycles: 5, Levels: map[string]*Stats{"L1": st(3, 1, 8, nil)},
				Inclusive: &Inclusive{Instructions: 7, ComputeCycles: 7, Levels: map[string]*Stats{"L1": st(4, 2, 8, nil)}}}},
			Pairs: []Pair{{Function: "f", Object: "A", Levels: map[string]*Stats{"L1": st(3, 1, 8, nil)},
				Strides: &Strides{Samples: 2, Top: []Stride{{Bytes: 8, Count: 2}}}}},
			Lines:      []Line{{File: "f.c", Line: 3, Function: "f", Levels: map[string]*Stats{"L1": st(3, 1, 8, nil)}}},
			References: []Reference{{PC: 0x10, Function: "f", Object: "A", Levels: map[string]*Stats{"L1": st(3, 1, 8, nil, RefEvictor{"0x20", "B", 1})}}},
		}
		if err := p.SetFocus("L2"); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := prof(Object{Name: "A", FullName: "main.3.A", Kind: "heap", Size: 100, Blocks: 1,
		Levels: map[string]*Stats{"L1": st(3, 1, 8, map[string]uint64{"A": 1}), "L2": st(1, 1, 64, nil)}})
	q := prof(Object{Name: "A", FullName: "main.3.A", Kind: "heap", Size: 50, Blocks: 2,
		Levels: map[string]*Stats{"L1": st(5, 2, 24, map[string]uint64{"B": 2})}},
		Object{Name: "B", FullName: "B", Kind: "global", Size: 64, Levels: map[string]*Stats{"L1": st(1, 1, 8, nil)}})
	if err := p.Merge(q); err != nil {
		t.Fatal(err)
	}
	if len(p.Objects) != 2 || p.Objects[1].Name != "B" || len(p.Functions) != 1 || len(p.Pairs) != 1 || len(p.References) != 1 {
		t.Fatalf("merged entries: %+v", p)
	}
	a := p.Objects[0]
	want := Stats{Accesses: 8, Hits: 5, Misses: 3, Reads: 8, ReadMisses: 3, StallCycles: 30, Causes: Causes{Cold: 3},
		EvictedBy: map[string]uint64{"A": 1, "B": 2}, UsedBytes: 32, FetchedBytes: 192, SpatialUse: 32.0 / 192}
	if d := cmp.Diff(&want, a.Levels["L1"]); d != "" {
		t.Errorf("A at L1 (-want +got):\n%s", d)
	}
	if a.Size != 150 || a.Blocks != 3 || a.Misses != 1 || a.StallCycles != 40 || p.Focus != "L2" {
		t.Errorf("A: size %d blocks %d, focus %q misses %d stall %d", a.Size, a.Blocks, p.Focus, a.Misses, a.StallCycles)
	}
	if f := p.Functions[0]; f.Instructions != 10 || f.Levels["L1"].Accesses != 6 || f.Inclusive.Instructions != 14 ||
		f.Inclusive.Levels["L1"].Accesses != 8 || f.Inclusive.Misses != 0 || f.Inclusive.StallCycles != 40 {
		t.Errorf("f: %+v, inclusive %+v", f, f.Inclusive)
	}
	if l := p.Lines; len(l) != 1 || l[0].Levels["L1"].Accesses != 6 {
		t.Errorf("lines: %+v", l)
	}
	if d := cmp.Diff(&Strides{Samples: 4, Top: []Stride{{Bytes: 8, Count: 4}}}, p.Pairs[0].Strides); d != "" {
		t.Errorf("pair strides (-want +got):\n%s", d)
	}
	if r := p.References[0].Levels["L1"]; len(r.Evictors) != 1 || r.Evictors[0].Count != 2 {
		t.Errorf("reference evictors: %+v", r.Evictors)
	}
	if c := p.Caches[0].Causes; c.Cold != 2 {
		t.Errorf("L1 causes %+v", c)
	}
	// The second profile is unchanged: merged entries are copies.
	if q.Objects[1].Levels["L1"].Accesses != 1 || q.Functions[0].Inclusive.Levels["L1"].Accesses != 4 || q.Pairs[0].Strides.Samples != 2 {
		t.Errorf("merging changed the merged profile")
	}
	plain := &Profile{Caches: []CacheStats{{Name: "L1", Level: 1}, {Name: "L2", Level: 2}}}
	if err := p.Merge(plain); err == nil {
		t.Error("merged a profile without where data into one with")
	}
}

// TestMergeKeepsObjectNamesUnique: the programs of a process tree name
// their objects apart. An object of the second with the name of another
// object of the first (another allocation call path) takes the end of
// its call path that tells it apart; one the first has under another
// name (the same full name, its name too in the second) takes the
// first's name and is added to it; their pairs, references and evicted-by
// tables follow.
func TestMergeKeepsObjectNamesUnique(t *testing.T) {
	st := func(acc uint64, ev map[string]uint64) map[string]*Stats {
		return map[string]*Stats{"L1": {Accesses: acc, Hits: acc, Reads: acc, EvictedBy: ev}}
	}
	prof := func(objs []Object, pairs []Pair) *Profile {
		p := &Profile{Caches: []CacheStats{{Name: "L1", Level: 1, Causes: &Causes{}}}, Options: Options{Where: true},
			Objects: objs, Pairs: pairs, Complete: true, Functions: []Function{{Name: "f", Levels: st(6, nil)}}}
		if err := p.SetFocus("L1"); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := prof([]Object{
		{Name: "heap@a.c:5", FullName: "main.9.alloc.5.heap@a.c:5", Kind: "heap", CallPath: []string{"alloc a.c:5", "main a.c:9"}, Levels: st(1, nil)},
		{Name: "buf", FullName: "run.4.buf", Kind: "heap", CallPath: []string{"run b.c:4"}, Levels: st(2, nil)},
		{Name: "g@m", FullName: "g", Kind: "global", Levels: st(64, nil)},
	}, []Pair{{Function: "f", Object: "heap@a.c:5", Levels: st(1, nil)}, {Function: "f", Object: "buf", Levels: st(2, nil)}})
	q := prof([]Object{
		{Name: "heap@a.c:5", FullName: "init.2.alloc.5.heap@a.c:5", Kind: "heap", CallPath: []string{"alloc a.c:5", "init a.c:2"}, Levels: st(4, map[string]uint64{"data": 1})},
		{Name: "data", FullName: "run.4.buf", Kind: "heap", CallPath: []string{"run b.c:4"}, Levels: st(8, map[string]uint64{"heap@a.c:5": 1, "buf": 3})},
		{Name: "buf", FullName: "go.7.buf", Kind: "heap", CallPath: []string{"go c.c:7"}, Levels: st(16, map[string]uint64{"data": 2})},
		{Name: "g", FullName: "g", Kind: "global", Levels: st(32, nil)},
	}, []Pair{{Function: "f", Object: "heap@a.c:5", Levels: st(4, nil)}, {Function: "f", Object: "data", Levels: st(8, nil)},
		{Function: "f", Object: "buf", Levels: st(16, nil)}})
	if err := p.Merge(q); err != nil {
		t.Fatal(err)
	}
	got := map[string]uint64{}
	for _, o := range p.Objects {
		if _, dup := got[o.Name]; dup {
			t.Errorf("object %s listed twice", o.Name)
		}
		got[o.Name] = o.Levels["L1"].Accesses
	}
	want := map[string]uint64{"heap@a.c:5": 1, "init.2.alloc.5.heap@a.c:5": 4, "buf": 10, "go.7.buf": 16, "g@m": 96}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("objects' accesses (-want +got):\n%s", d)
	}
	pairs := map[string]uint64{"g@m": 96} // (no pairs of g)
	for _, pr := range p.Pairs {
		pairs[pr.Object] = pr.Levels["L1"].Accesses
	}
	if d := cmp.Diff(want, pairs); d != "" {
		t.Errorf("pairs' accesses by object (-want +got):\n%s", d)
	}
	for _, o := range p.Objects {
		ev := map[string]map[string]uint64{"buf": {"init.2.alloc.5.heap@a.c:5": 1, "go.7.buf": 3}, "go.7.buf": {"buf": 2}}
		if w, ok := ev[o.Name]; ok {
			if d := cmp.Diff(w, o.Levels["L1"].EvictedBy); d != "" {
				t.Errorf("%s evicted by (-want +got):\n%s", o.Name, d)
			}
		}
	}
}
