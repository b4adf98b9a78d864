package profile

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func sample(events uint64) *Profile {
	return &Profile{
		Version: Version, Tool: "memspy", Events: events, Complete: true,
		EventsByKind: map[string]uint64{"read": events},
		Caches: []CacheStats{
			{Name: "L1", Level: 1, Accesses: events, Misses: events / 2, Reads: events, ReadMisses: events / 2, Evictions: 3},
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
	path := filepath.Join(t.TempDir(), "p.json")
	p := sample(42)
	if err := p.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	q, err := Read(f)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(p, q); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
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

// Attributions of two shards of one run add up pair by pair.
func TestMergeAttribution(t *testing.T) {
	attr := func(pairs []PairStats, ev []Evictor) *Attribution {
		return &Attribution{
			Procs:  []Proc{{Name: "<unknown>"}, {Name: "f", Entry: 0x10}},
			Bins:   []Bin{{Kind: "other", Name: "<other>"}, {Kind: "freed", Name: "<freed>"}, {Kind: "heap", Name: "A"}},
			Caches: []CacheAttribution{{Name: "L1", Cold: 1, Replacement: 2, Invalidation: 3, Pairs: pairs, Evictors: ev}},
		}
	}
	prof := func(a *Attribution) *Profile {
		return &Profile{Caches: []CacheStats{{Name: "L1", Level: 1}}, Attribution: a, Complete: true}
	}
	p := prof(attr([]PairStats{{Proc: 1, Bin: 2, Reads: 5, ReadMisses: 2, Cold: 2}}, []Evictor{{Victim: 2, By: 2, Evictions: 4}}))
	q := prof(attr([]PairStats{{Proc: 1, Bin: 2, Reads: 1, Writes: 3, WriteMisses: 1, Replacement: 1}, {Proc: 0, Bin: 0, IFetches: 7}},
		[]Evictor{{Victim: 2, By: 2, Evictions: 1}, {Victim: 0, By: 2, Evictions: 9}}))
	if err := p.Merge(q); err != nil {
		t.Fatal(err)
	}
	want := attr([]PairStats{{Proc: 1, Bin: 2, Reads: 6, Writes: 3, ReadMisses: 2, WriteMisses: 1, Cold: 2, Replacement: 1}, {Proc: 0, Bin: 0, IFetches: 7}},
		[]Evictor{{Victim: 2, By: 2, Evictions: 5}, {Victim: 0, By: 2, Evictions: 9}})
	want.Caches[0].Cold, want.Caches[0].Replacement, want.Caches[0].Invalidation = 2, 4, 6
	if !reflect.DeepEqual(p.Attribution, want) {
		t.Errorf("merged:\n%+v\nwant\n%+v", p.Attribution, want)
	}
	other := prof(attr(nil, nil))
	other.Attribution.Bins[2].Name = "B"
	if err := p.Merge(other); err == nil {
		t.Error("merged attributions with different bins")
	}
	if err := p.Merge(prof(nil)); err == nil {
		t.Error("merged a profile without attribution into one with")
	}
}
