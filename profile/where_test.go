package profile

import (
	"fmt"
	"slices"
	"testing"
)

// Adding evictor lists gives the same list whether the lists are short
// (searched) or long (through a map), repeats included.
func TestAddEvictorsRepeats(t *testing.T) {
	list := func(seed, n int) []RefEvictor {
		var es []RefEvictor
		for i := range n {
			k := (seed*7 + i*i*3) % 5
			es = append(es, RefEvictor{Reference: fmt.Sprintf("%#x", 0x10+k), Object: fmt.Sprint("o", k%2), Count: uint64(seed + i + 1)})
		}
		return es
	}
	for seed := range 20 {
		for _, n := range []int{1, 3, 9, 40} {
			a, b := list(seed, n), list(seed+1, n)
			s := Stats{Evictors: slices.Clone(a)}
			s.addEvictors(b)
			// The map's way: s's last entry of each key takes the adds.
			want := slices.Clone(a)
			at := map[[2]string]int{}
			for i, e := range want {
				at[[2]string{e.Reference, e.Object}] = i
			}
			for _, e := range b {
				if i, ok := at[[2]string{e.Reference, e.Object}]; ok {
					want[i].Count += e.Count
				} else {
					want = append(want, e)
				}
			}
			SortEvictors(want)
			if !slices.Equal(s.Evictors, want) {
				t.Errorf("seed %d, %d evictors: got %v, want %v", seed, n, s.Evictors, want)
			}
		}
	}
}
