package report

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"testing"

	"github.com/memspy/memspy/profile"
)

// FuzzReport: whatever bytes memspy report is given as a profile, it
// reads them and renders the summary and every view in every format as
// the command does, or says what is wrong: it never panics.
func FuzzReport(f *testing.F) {
	for _, data := range fuzzSeeds(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) { renderEverything(data) })
}

// fuzzSeeds returns the JSON of the test profiles: one processor, several,
// threads, NUMA, and a sampled one.
func fuzzSeeds(f *testing.F) [][]byte {
	sampled := testProfile()
	sampled.Sampling = &profile.Sampling{Spec: "ratio=0.1", Methods: []string{"time"}, Samples: 3, Counted: 300, Seen: 3000, Mu: 0.5}
	for i := range sampled.Caches {
		sampled.Caches[i].Sampled = &profile.SampledCounts{KnownHits: 200, KnownMisses: 60, UnknownHits: 10, UnknownMisses: 30,
			LiveTime: 50, DeadTime: 150, Spread: &profile.Spread{Samples: 3, NN: 30000, KK: 1300, UU: 600, KN: 6000, UN: 4000, KU: 800}}
	}
	var seeds [][]byte
	for _, p := range []*profile.Profile{testProfile(), testMultiProfile(), testThreadProfile(), testNumaProfile(), sampled} {
		data, err := json.Marshal(p)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, data)
	}
	return seeds
}

// renderEverything reads data as memspy report does and renders the
// summary and every view in every format, with and without options; errors
// are fine, panics are not.
func renderEverything(data []byte) {
	p, err := profile.Read(bytes.NewReader(data))
	if err != nil {
		return
	}
	if p.Options.Where {
		if err := p.SetFocus(""); err != nil {
			return
		}
	}
	_ = Text(io.Discard, p)
	for _, name := range Views() {
		for _, format := range Formats() {
			for _, opt := range []ViewOptions{
				{Format: format},
				{Format: format, Top: -1, Object: "B", Function: "matmul", Evictors: true, Inclusive: true},
			} {
				_ = View(io.Discard, p, name, opt)
			}
		}
	}
}

// FuzzReportFields: a well-formed profile whose fields disagree with each
// other (a number, name or list changed anywhere) renders as FuzzReport's
// do, or fails with an error: it never panics. The fuzzer picks a test
// profile, a leaf of its JSON tree and the leaf's new value.
func FuzzReportFields(f *testing.F) {
	seeds := fuzzSeeds(f)
	f.Add(uint8(0), uint16(3), int64(-1), "L2")
	f.Add(uint8(1), uint16(40), int64(1<<40), "")
	f.Add(uint8(3), uint16(200), int64(7), "x")
	f.Fuzz(func(t *testing.T, seed uint8, leaf uint16, num int64, str string) {
		var tree any
		if err := json.Unmarshal(seeds[int(seed)%len(seeds)], &tree); err != nil {
			t.Fatal(err)
		}
		n := int(leaf)
		tree = mutateLeaf(tree, &n, num, str)
		data, err := json.Marshal(tree)
		if err != nil {
			t.Fatal(err)
		}
		renderEverything(data)
	})
}

// mutateLeaf replaces the *n-th leaf of tree (depth first, in key order)
// with num if it is a number, str if it is a string, !b if a boolean; a
// list leaf (an empty one) gets one element, num. *n counts down the
// leaves passed.
func mutateLeaf(tree any, n *int, num int64, str string) any {
	switch v := tree.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			v[k] = mutateLeaf(v[k], n, num, str)
		}
		return v
	case []any:
		if len(v) == 0 {
			if *n == 0 {
				*n--
				return []any{num}
			}
			*n--
			return v
		}
		for i := range v {
			v[i] = mutateLeaf(v[i], n, num, str)
		}
		return v
	}
	*n--
	if *n != -1 {
		return tree
	}
	switch v := tree.(type) {
	case float64:
		return num
	case string:
		return str
	case bool:
		return !v
	}
	return num // null
}
