package sim

import (
	"maps"
	"math/rand/v2"
	"testing"
)

// The index of access points gives the ids a map would: each new key the
// next id, in order of first use, and every key seen its own, through
// the table's growth; the zero key is id 0.
func TestRefIndex(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		var x refIndex
		refs := []refKey{{}}
		model := map[refKey]int32{{}: 0}
		for range 5000 + rng.IntN(20000) {
			// Few distinct fields, so that keys repeat and hashes collide.
			k := refKey{pc: uint64(rng.IntN(300)) * 4, ctx: int32(rng.IntN(9)), bin: int32(rng.IntN(5))}
			want, ok := model[k]
			if !ok {
				want = int32(len(model))
				model[k] = want
			}
			if got := x.id(k, &refs); got != want {
				t.Fatalf("seed %d: key %+v has id %d, want %d", seed, k, got, want)
			}
		}
		if len(refs) != len(model) {
			t.Fatalf("seed %d: %d access points, want %d", seed, len(refs), len(model))
		}
		for k, id := range model {
			if refs[id] != k {
				t.Fatalf("seed %d: id %d is %+v, want %+v", seed, id, refs[id], k)
			}
		}
	}
}

// The eviction tables count what a map of maps would, through their
// growth, and groupPairs groups every pair under its victim.
func TestEvictTables(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 9))
		ids := 1 + rng.IntN(2000)
		var x evictorTable
		var bins pairCounts
		model := map[int32]map[int32]uint64{}
		for range rng.IntN(30000) {
			victim, by := int32(rng.IntN(ids)), int32(rng.IntN(1+rng.IntN(ids)))
			x.add(victim, by)
			bins.add(victim, by, 1)
			if model[victim] == nil {
				model[victim] = map[int32]uint64{}
			}
			model[victim][by]++
		}
		if x.err != 0 {
			t.Fatalf("seed %d: error %d below the bound", seed, x.err)
		}
		order, start := groupPairs(x.pairs, ids, func(victim int32) int32 { return victim })
		for id := range int32(ids) {
			got := map[int32]uint64{}
			if int(id)+1 < len(start) {
				for _, k := range order[start[id]:start[id+1]] {
					p := x.pairs[k]
					if p.a != id || got[p.b] != 0 {
						t.Fatalf("seed %d: pair %+v among those of %d", seed, p, id)
					}
					got[p.b] = p.n
				}
			}
			if want := model[id]; !maps.Equal(got, want) {
				t.Fatalf("seed %d: access point %d evicted by %v, want %v", seed, id, got, want)
			}
		}
		exact := map[int32]map[int32]uint64{}
		for _, p := range bins.pairs {
			if p.n != 0 {
				if exact[p.a] == nil {
					exact[p.a] = map[int32]uint64{}
				}
				exact[p.a][p.b] = p.n
			}
		}
		if !maps.EqualFunc(exact, model, maps.Equal) {
			t.Fatalf("seed %d: pairCounts differ from the model", seed)
		}
	}
}

// At its bound the evictor table keeps space-saving's promises: the
// counts add up to every eviction, a pair's count is at least its true
// count and at most err more, and a pair left out was counted at most err
// times.
func TestEvictorTableBound(t *testing.T) {
	bounded := 0 // cases where the bound took counts over
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 11))
		x := evictorTable{limit: 8 << rng.IntN(4)}
		model := map[[2]int32]uint64{}
		n := rng.IntN(20000)
		for range n {
			victim, by := int32(rng.IntN(1+rng.IntN(40))), int32(rng.IntN(1+rng.IntN(40)))
			x.add(victim, by)
			model[[2]int32{victim, by}]++
		}
		if len(x.pairs) > x.limit {
			t.Fatalf("seed %d: %d places, bound %d", seed, len(x.pairs), x.limit)
		}
		var sum uint64
		seen := map[[2]int32]bool{}
		for _, p := range x.pairs {
			if p.n == 0 {
				continue
			}
			k := [2]int32{p.a, p.b}
			if seen[k] {
				t.Fatalf("seed %d: pair %v twice", seed, k)
			}
			seen[k] = true
			sum += p.n
			if p.n < model[k] || p.n > model[k]+x.err {
				t.Fatalf("seed %d: pair %v counted %d, true %d, error %d", seed, k, p.n, model[k], x.err)
			}
		}
		if sum != uint64(n) {
			t.Fatalf("seed %d: counts add up to %d of %d evictions", seed, sum, n)
		}
		for k, c := range model {
			if !seen[k] && c > x.err {
				t.Fatalf("seed %d: pair %v counted %d times left out, error %d", seed, k, c, x.err)
			}
		}
		if x.err > 0 {
			bounded++
		}
	}
	if bounded < 10 {
		t.Errorf("only %d of 20 cases reached the bound", bounded)
	}
}

// The states of lines read back as a map of lines would hold them (absent:
// neverHeld), lines near and far apart.
func TestLineStates(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 5))
		var s lineStates
		model := map[uint64]uint8{}
		base := rng.Uint64() >> 1
		for range 20000 {
			line := base + uint64(rng.IntN(3000))
			if rng.IntN(10) == 0 {
				line = rng.Uint64() // far away
			}
			if rng.IntN(2) == 0 {
				v := uint8(rng.IntN(16))
				s.set(line, v)
				model[line] = v
			} else if got := s.get(line); got != model[line] {
				t.Fatalf("seed %d: line %#x in state %d, want %d", seed, line, got, model[line])
			}
		}
		for line, v := range model {
			if got := s.get(line); got != v {
				t.Fatalf("seed %d: line %#x in state %d, want %d", seed, line, got, v)
			}
		}
	}
}
