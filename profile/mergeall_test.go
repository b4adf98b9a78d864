package profile

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// fillCounters gives every counter (uint64) that v holds, through its structs
// and pointers to structs (made when nil), a small random value, and
// leaves the rest as it is.
func fillCounters(rng *rand.Rand, v reflect.Value) {
	switch v.Kind() {
	case reflect.Uint64:
		v.SetUint(1 + rng.Uint64N(1000))
	case reflect.Struct:
		for i := range v.NumField() {
			fillCounters(rng, v.Field(i))
		}
	case reflect.Pointer:
		if v.Type().Elem().Kind() == reflect.Struct {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			fillCounters(rng, v.Elem())
		}
	}
}

// checkSums checks that every counter of got is the sum of a's and b's
// (path names it in errors).
func checkSums(t *testing.T, path string, got, a, b reflect.Value) {
	t.Helper()
	switch got.Kind() {
	case reflect.Uint64:
		if got.Uint() != a.Uint()+b.Uint() {
			t.Errorf("%s: %d after merging %d and %d", path, got.Uint(), a.Uint(), b.Uint())
		}
	case reflect.Struct:
		for i := range got.NumField() {
			checkSums(t, path+"."+got.Type().Field(i).Name, got.Field(i), a.Field(i), b.Field(i))
		}
	case reflect.Pointer:
		if got.Type().Elem().Kind() != reflect.Struct {
			return
		}
		if got.IsNil() {
			t.Errorf("%s: nil after merging", path)
			return
		}
		checkSums(t, path, got.Elem(), a.Elem(), b.Elem())
	}
}

// TestMergeAddsEveryCounter fills every counter of a profile's caches,
// memory, processors, sampling and where-and-why entries with random
// values in two profiles, merges them, and checks that each counter is
// their sum: a counter that Merge forgets to add fails here (issue 30).
func TestMergeAddsEveryCounter(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	make1 := func() *Profile {
		p := &Profile{Version: Version, Tool: "memspy", Complete: true, Options: Options{Where: true},
			Caches:     []CacheStats{{Name: "L1", Level: 1}},
			Processors: []ProcessorStats{{Processor: 0, Caches: []CacheStats{{Name: "L1", Level: 1}}}},
			Sampling:   &Sampling{Spec: "ratio=0.1"},
			Functions:  []Function{{Name: "f", Levels: map[string]*Stats{"L1": {}}, Inclusive: &Inclusive{Levels: map[string]*Stats{"L1": {}}}}},
			Objects:    []Object{{Name: "o", FullName: "o", Kind: "heap", Levels: map[string]*Stats{"L1": {}}}},
			Pairs:      []Pair{{Function: "f", Object: "o", Levels: map[string]*Stats{"L1": {}}}},
			CallTree:   &CallTree{Nodes: []CallNode{{Function: "f", Caller: -1, Levels: map[string]*Stats{"L1": {}}}}},
		}
		for _, v := range []any{&p.Caches[0], &p.Processors[0], &p.Memory, p.Sampling, p.Functions[0].Levels["L1"],
			p.Functions[0].Inclusive, p.Functions[0].Inclusive.Levels["L1"], p.Objects[0].Levels["L1"], p.Pairs[0].Levels["L1"],
			&p.CallTree.Nodes[0]} {
			fillCounters(rng, reflect.ValueOf(v).Elem())
		}
		if err := p.SetFocus("L1"); err != nil { // (the entries' top-level copies)
			t.Fatal(err)
		}
		p.Processors[0].Caches[0] = p.Caches[0]
		p.Processors[0].Caches[0].Causes, p.Processors[0].Caches[0].Sampled = nil, nil
		p.Sampling.Spec = "ratio=0.1"
		return p
	}
	a, b := make1(), make1()
	want := []any{a.Caches[0], a.Processors[0], a.Memory, *a.Sampling, *a.Functions[0].Levels["L1"], *a.Functions[0].Inclusive,
		*a.Objects[0].Levels["L1"], *a.Pairs[0].Levels["L1"], a.CallTree.Nodes[0]}
	clone, err := clone(a)
	if err != nil {
		t.Fatal(err)
	}
	if err := clone.Merge(b); err != nil {
		t.Fatal(err)
	}
	got := []any{clone.Caches[0], clone.Processors[0], clone.Memory, *clone.Sampling, *clone.Functions[0].Levels["L1"],
		*clone.Functions[0].Inclusive, *clone.Objects[0].Levels["L1"], *clone.Pairs[0].Levels["L1"], clone.CallTree.Nodes[0]}
	bs := []any{b.Caches[0], b.Processors[0], b.Memory, *b.Sampling, *b.Functions[0].Levels["L1"], *b.Functions[0].Inclusive,
		*b.Objects[0].Levels["L1"], *b.Pairs[0].Levels["L1"], b.CallTree.Nodes[0]}
	for i := range got {
		checkSums(t, reflect.TypeOf(got[i]).Name(), reflect.ValueOf(got[i]), reflect.ValueOf(want[i]), reflect.ValueOf(bs[i]))
	}
}
