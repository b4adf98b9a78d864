package sim

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSelectFirst checks selectFirst against sorting, on random lists with
// many repeated keys (ties broken by position, as the profile's order
// breaks them by PC, function and object) and on sorted and reversed ones.
func TestSelectFirst(t *testing.T) {
	type elem struct{ key, pos int }
	compare := func(a, b elem) int { return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.pos, b.pos)) }
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 2000 {
		n := rng.IntN(200)
		s := make([]elem, n)
		for i := range s {
			s[i] = elem{rng.IntN(1 + rng.IntN(50)), i}
		}
		switch trial % 3 {
		case 1:
			slices.SortFunc(s, compare)
		case 2:
			slices.SortFunc(s, func(a, b elem) int { return compare(b, a) })
		}
		k := rng.IntN(n + 1)
		want := slices.Clone(s)
		slices.SortFunc(want, compare)
		got := slices.Clone(s)
		selectFirst(got, k, compare)
		first := slices.Clone(got[:k])
		slices.SortFunc(first, compare)
		if !slices.Equal(first, want[:k]) {
			t.Fatalf("trial %d: n %d k %d: first %v, want %v", trial, n, k, first, want[:k])
		}
		rest := slices.Clone(got)
		slices.SortFunc(rest, compare)
		if !slices.Equal(rest, want) {
			t.Fatalf("trial %d: elements changed", trial)
		}
	}
}
