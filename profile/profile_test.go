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
