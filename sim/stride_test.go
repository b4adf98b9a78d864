package sim

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/memspy/memspy/profile"
)

// TestStrideCounting checks the space-saving stride counter against exact
// counts on random address sequences: counts are lower bounds, exact when
// a site has at most strideSlots distinct strides, and every
// stride making more than 1/strideSlots of them is kept. Its slots are
// those of space-saving with every slot in place (modelStrides) after
// every reference, whether it keeps one stride in place or a slot table.
func TestStrideCounting(t *testing.T) {
	for seed := range uint64(500) {
		rng := rand.New(rand.NewPCG(seed, 11))
		at := &attribution{}
		distinct := 1 + rng.IntN(16)
		strides := make([]int64, distinct)
		for i := range strides {
			strides[i] = int64(rng.IntN(512)) - 256
		}
		exact := map[int64]uint64{}
		a := uint64(1 << 40)
		n := 1 + rng.IntN(400)
		at.stride(pointOf(3, 0), a)
		at.stride(pointOf(5, 1), a) // another site, sharing the table of slot tables
		var model [strideSlots]strideSlot
		for range n {
			// Skewed: low-numbered strides come more often.
			d := strides[min(rng.IntN(distinct), rng.IntN(distinct))]
			a += uint64(d)
			exact[d]++
			at.stride(pointOf(3, 0), a)
			at.stride(pointOf(5, 1), a+uint64(rng.IntN(3)))
			modelStrides(&model, d)
			var one [1]strideSlot
			_, got := at.strides.counted(at.strides.find(3), &one)
			if want := model[:len(got)]; !slices.Equal(got, want) || slices.ContainsFunc(model[len(got):], func(s strideSlot) bool { return s.c != 0 }) {
				t.Fatalf("seed %d: slots %v, space-saving's %v", seed, got, model)
			}
		}
		var one [1]strideSlot
		counted, slots := at.strides.counted(at.strides.find(3), &one)
		if counted != uint64(n) {
			t.Fatalf("seed %d: %d strides counted, want %d", seed, counted, n)
		}
		kept := map[int64]bool{}
		for _, sl := range slots {
			if sl.c == 0 {
				continue
			}
			kept[sl.d] = true
			if low := sl.c - sl.err; low > exact[sl.d] || sl.c < exact[sl.d] {
				t.Fatalf("seed %d: stride %d counted %d (error %d), exactly %d", seed, sl.d, sl.c, sl.err, exact[sl.d])
			}
			if len(exact) <= strideSlots && (sl.err != 0 || sl.c != exact[sl.d]) {
				t.Fatalf("seed %d: %d distinct strides, stride %d counted %d±%d, exactly %d", seed, len(exact), sl.d, sl.c, sl.err, exact[sl.d])
			}
		}
		for d, c := range exact {
			if c*strideSlots > uint64(n) && !kept[d] {
				t.Fatalf("seed %d: stride %d made %d of %d and was dropped", seed, d, c, n)
			}
		}
		var buf [strideSlots]profile.Stride
		samples, top := at.strideSummary(3, &buf)
		if samples != uint64(n) || len(top) > profile.MaxStrides {
			t.Fatalf("seed %d: summary of %d strides: %d, %+v", seed, n, samples, top)
		}
		for i, s := range top {
			if i > 0 && s.Count > top[i-1].Count {
				t.Fatalf("seed %d: summary not sorted: %+v", seed, top)
			}
		}
	}
}

// modelStrides counts stride d in slots as space-saving does with every
// slot in place: the stride's own slot, else a free one, else the least
// counted, which it takes with that count as its error; a slot that comes
// to count more than the one before it moves before it.
func modelStrides(slots *[strideSlots]strideSlot, d int64) {
	least := 0
	for i := range slots {
		switch {
		case slots[i].c == 0:
			slots[i] = strideSlot{d: d, c: 1}
			return
		case slots[i].d == d:
			slots[i].c++
			if i > 0 && slots[i].c > slots[i-1].c {
				slots[i], slots[i-1] = slots[i-1], slots[i]
			}
			return
		case slots[i].c < slots[least].c:
			least = i
		}
	}
	slots[least] = strideSlot{d: d, c: slots[least].c + 1, err: slots[least].c}
}

// TestStrideSum checks strideSum against profile.Strides.Add, the model,
// on random summaries: the same strides kept, the same counts.
func TestStrideSum(t *testing.T) {
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 7))
		var fast strideSum
		var model *profile.Strides
		for range rng.IntN(20) {
			b := &profile.Strides{Samples: rng.Uint64N(100)}
			seen := map[int64]bool{}
			for range rng.IntN(profile.MaxStrides + 1) {
				if d := int64(rng.IntN(9)) - 4; !seen[d] {
					seen[d] = true
					b.Top = append(b.Top, profile.Stride{Bytes: d, Count: 1 + rng.Uint64N(5)})
				}
			}
			profile.SortStrides(b.Top)
			fast.add(b.Samples, b.Top)
			model = model.Merged(b)
		}
		if got := stridesOf([]strideSum{fast})[0]; !reflect.DeepEqual(got, model) {
			t.Fatalf("seed %d: strideSum %+v, profile.Strides.Add %+v", seed, got, model)
		}
	}
}
