package sim_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/sim"
	"github.com/memspy/memspy/trace"
)

// The CS:APP cache lab's published reference results
// (../shared/traces/README.md), reproduced under Options.CacheLab.
func TestCacheLabReferenceResults(t *testing.T) {
	for _, tc := range []struct {
		trace                   string
		s, E, b                 int
		hits, misses, evictions uint64
	}{
		{"yi.trace", 4, 2, 4, 4, 5, 2},
		{"dave.trace", 2, 1, 4, 2, 3, 1},
		{"trans.trace", 2, 1, 3, 167, 71, 67},
		{"long.trace", 5, 1, 5, 265189, 21775, 21743},
	} {
		t.Run(tc.trace, func(t *testing.T) {
			m := &machine.Machine{Name: "cachelab", Caches: []machine.Cache{{
				Name: "L1", Level: 1, Sets: 1 << tc.s, Assoc: tc.E, Line: 1 << tc.b,
				Size: int64(tc.E) << (tc.s + tc.b), Replacement: machine.LRU,
				WriteBack: true, WriteAllocate: true, Holds: machine.Unified, Inclusion: machine.NonInclusive,
			}}}
			h, err := sim.New(m, sim.Options{CacheLab: true})
			if err != nil {
				t.Fatal(err)
			}
			runFile(t, h, filepath.Join("..", "..", "shared", "traces", tc.trace))
			st := h.Profile().Caches[0]
			if got := st.Hits(); got != tc.hits || st.Misses != tc.misses || st.Evictions != tc.evictions {
				t.Errorf("hits:%d misses:%d evictions:%d, want hits:%d misses:%d evictions:%d",
					got, st.Misses, st.Evictions, tc.hits, tc.misses, tc.evictions)
			}
		})
	}
}

// runFile simulates the trace file at path on h to its end and finishes h.
func runFile(t *testing.T, h *sim.Hierarchy, path string) {
	t.Helper()
	r, c, err := trace.Open(path, "", trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := sim.Run(context.Background(), h, r, nil); err != nil {
		t.Fatal(err)
	}
	h.Finish()
}
