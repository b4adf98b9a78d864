package sim

import (
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
