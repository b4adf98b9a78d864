package profile

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// randomWhere returns a profile of two caches with random objects (small
// globals of pools P and Q among them), pairs, references, evicted-by and
// sharing tables and NUMA entries, focused on L1.
func randomWhere(rng *rand.Rand) *Profile {
	p := sample(100)
	p.Options.Where = true
	p.Numa = &Numa{}
	stats := func(objs []string) *Stats {
		s := &Stats{Accesses: rng.Uint64N(1000), Misses: rng.Uint64N(100), Reads: rng.Uint64N(500), StallCycles: rng.Uint64N(1000),
			Causes: Causes{Cold: rng.Uint64N(10), Invalidation: rng.Uint64N(10)}, UsedBytes: rng.Uint64N(640), FetchedBytes: 640}
		s.SpatialUse = ratio(s.UsedBytes, s.FetchedBytes)
		if rng.IntN(5) == 0 {
			s.StallCycles *= 1000 // now and then a hot one
		}
		for range rng.IntN(4) {
			if s.EvictedBy == nil {
				s.EvictedBy = map[string]uint64{}
			}
			s.EvictedBy[objs[rng.IntN(len(objs))]] += rng.Uint64N(9) + 1
		}
		for range rng.IntN(3) {
			AddSharing(&s.InvalidatedBy, []Sharing{{Object: objs[rng.IntN(len(objs))], Processor: rng.IntN(2), Lines: rng.Uint64N(9) + 1}})
		}
		return s
	}
	var names []string
	for i := range 3 + rng.IntN(8) {
		names = append(names, fmt.Sprintf("v%d", i))
	}
	levels := func() map[string]*Stats { return map[string]*Stats{"L1": stats(names), "L2": stats(names)} }
	for i, n := range names {
		o := Object{Name: n, FullName: n, Kind: "global", Size: uint64(4 * (i + 1)), Levels: levels()}
		switch rng.IntN(3) {
		case 0:
			o.Pool = "P"
		case 1:
			o.Pool = "Q"
		}
		p.Objects = append(p.Objects, o)
		p.Numa.Objects = append(p.Numa.Objects, NumaEntry{Name: n, NumaStats: NumaStats{Local: rng.Uint64N(50)}})
	}
	for _, f := range []string{"f", "g"} {
		for _, n := range names {
			if rng.IntN(2) == 0 {
				p.Pairs = append(p.Pairs, Pair{Function: f, Object: n, Levels: levels()})
				p.Numa.Pairs = append(p.Numa.Pairs, NumaEntry{Function: f, Name: n, NumaStats: NumaStats{Local: rng.Uint64N(50)}})
			}
			if rng.IntN(2) == 0 {
				p.References = append(p.References, Reference{PC: uint64(0x400000 + rng.IntN(4)), Function: f, Object: n, Levels: levels()})
			}
		}
	}
	p.Focus = "L1"
	if err := p.SetFocus("L1"); err != nil {
		panic(err)
	}
	return p
}

// TestPoolColdGlobals: on random profiles, every pooled entry's counters
// are the sum of those of the entries pooled into it (a model that adds
// them up by name), the hot small globals and the others are unchanged,
// and no counter is lost.
func TestPoolColdGlobals(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 300 {
		p := randomWhere(rng)
		// The model: which objects are cold small globals, from the
		// stall shares at each cache.
		total := map[string]uint64{}
		for _, o := range p.Objects {
			for c, s := range o.Levels {
				total[c] += s.StallCycles
			}
		}
		to := map[string]string{}
		for _, o := range p.Objects {
			hot := false
			for c, s := range o.Levels {
				hot = hot || 100*s.StallCycles >= total[c]
			}
			to[o.Name] = o.Name
			if o.Pool != "" && !hot {
				to[o.Name] = o.Pool
			}
		}
		name := func(n string) string {
			if m, ok := to[n]; ok {
				return m
			}
			return n
		}
		// Expected counters by key, renamed, added up.
		type sums map[string]map[string]*Stats
		add := func(into sums, key string, levels map[string]*Stats) {
			if into[key] == nil {
				into[key] = map[string]*Stats{}
			}
			for c, s := range levels {
				if into[key][c] == nil {
					into[key][c] = &Stats{}
				}
				r := *s
				r.EvictedBy, r.InvalidatedBy = map[string]uint64{}, nil
				for k, v := range s.EvictedBy {
					r.EvictedBy[name(k)] += v
				}
				for _, sh := range s.InvalidatedBy {
					sh.Object = name(sh.Object)
					AddSharing(&r.InvalidatedBy, []Sharing{sh})
				}
				into[key][c].Add(&r)
			}
		}
		wantObjs, wantPairs, wantRefs := sums{}, sums{}, sums{}
		wantNuma := map[string]uint64{}
		for _, o := range p.Objects {
			add(wantObjs, name(o.Name), o.Levels)
		}
		for _, pr := range p.Pairs {
			add(wantPairs, pr.Function+"/"+name(pr.Object), pr.Levels)
		}
		for _, r := range p.References {
			add(wantRefs, fmt.Sprintf("%x/%s/%s", r.PC, r.Function, name(r.Object)), r.Levels)
		}
		for _, e := range p.Numa.Objects {
			wantNuma[name(e.Name)] += e.Local
		}
		pooled := 0
		for o, n := range to {
			if o != n {
				pooled++
			}
		}

		n, err := p.PoolColdGlobals()
		if err != nil || n != pooled {
			t.Fatalf("trial %d: pooled %d, %v; want %d", trial, n, err, pooled)
		}
		got := func(what string, want sums, keys []string, levels []map[string]*Stats) {
			t.Helper()
			if len(keys) != len(want) {
				t.Fatalf("trial %d: %d %s, want %d", trial, len(keys), what, len(want))
			}
			for i, k := range keys {
				for c, s := range levels[i] {
					w := want[k][c]
					for _, l := range [][]Sharing{w.InvalidatedBy, s.InvalidatedBy} {
						SortSharing(l)
					}
					if len(w.EvictedBy) == 0 {
						w.EvictedBy = nil
					}
					if d := cmp.Diff(w, s); d != "" {
						t.Fatalf("trial %d: %s %s at %s (-want +got):\n%s", trial, what, k, c, d)
					}
				}
			}
		}
		var keys []string
		var levels []map[string]*Stats
		for _, o := range p.Objects {
			keys, levels = append(keys, o.Name), append(levels, o.Levels)
			if o.FullName != o.Name {
				t.Fatalf("trial %d: object %q has the full name %q", trial, o.Name, o.FullName)
			}
			if o.Pool != "" && to[o.Name] != o.Name {
				t.Fatalf("trial %d: %s kept its pool %q", trial, o.Name, o.Pool)
			}
		}
		got("objects", wantObjs, keys, levels)
		keys, levels = nil, nil
		for _, pr := range p.Pairs {
			keys, levels = append(keys, pr.Function+"/"+pr.Object), append(levels, pr.Levels)
		}
		got("pairs", wantPairs, keys, levels)
		keys, levels = nil, nil
		for _, r := range p.References {
			keys, levels = append(keys, fmt.Sprintf("%x/%s/%s", r.PC, r.Function, r.Object)), append(levels, r.Levels)
		}
		got("references", wantRefs, keys, levels)
		gotNuma := map[string]uint64{}
		for _, e := range p.Numa.Objects {
			gotNuma[e.Name] += e.Local
		}
		if d := cmp.Diff(wantNuma, gotNuma); d != "" || len(p.Numa.Objects) != len(wantNuma) {
			t.Fatalf("trial %d: NUMA objects (-want +got):\n%s", trial, d)
		}
		// The top-level counters follow the focus again.
		for _, o := range p.Objects {
			if o.Accesses != o.Levels["L1"].Accesses || o.StallCycles != o.Levels["L1"].StallCycles+o.Levels["L2"].StallCycles {
				t.Fatalf("trial %d: %s's top-level counters are not L1's", trial, o.Name)
			}
		}
	}
}

// TestPoolKeepsHotSmallGlobals: a falsely shared counter with most of the
// stall cycles keeps its name; its cold neighbours join their pool, whose
// size adds up theirs.
func TestPoolKeepsHotSmallGlobals(t *testing.T) {
	p := sample(10)
	p.Options.Where = true
	obj := func(name, pool string, stall uint64) Object {
		return Object{Name: name, FullName: name, Kind: "global", Size: 8, Pool: pool,
			Levels: map[string]*Stats{"L1": {Accesses: 10, Misses: 5, StallCycles: stall}}}
	}
	p.Objects = []Object{obj("counters", "<small globals>@prog", 9900), obj("iterations", "<small globals>@prog", 50),
		obj("flag", "<small globals>@prog", 49), obj("table", "", 1)}
	p.Pairs = []Pair{{Function: "work", Object: "counters", Levels: map[string]*Stats{"L1": {StallCycles: 9900}}}}
	if err := p.SetFocus("L1"); err != nil {
		t.Fatal(err)
	}
	if n, err := p.PoolColdGlobals(); n != 2 || err != nil {
		t.Fatalf("pooled %d, %v; want 2", n, err)
	}
	var got []string
	for _, o := range p.Objects {
		got = append(got, fmt.Sprintf("%s %d %d %q", o.Name, o.Size, o.StallCycles, o.Pool))
	}
	want := []string{`counters 8 9900 "<small globals>@prog"`, `<small globals>@prog 16 99 ""`, `table 8 1 ""`}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("objects (-want +got):\n%s", d)
	}
}
