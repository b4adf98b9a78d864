package report

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/memspy/memspy/profile"
)

// callTreeProfile has a call tree worked by hand: main calls f twice and
// g once; f calls g three times; g calls itself through h once (a
// recursion the callers table must not count twice).
//
//	0 main (10 instructions, 100 stall)
//	1   f (calls 2; 20, 200)
//	2     g (calls 3; 30, 300)
//	3   g (calls 1; 5, 50)
//	4     h (calls 1; 1, 10)
//	5       g (calls 1; 2, 20)
func callTreeProfile() *profile.Profile {
	node := func(fn string, caller int32, calls, instr, stall uint64) profile.CallNode {
		return profile.CallNode{Function: fn, Caller: caller, Calls: calls, Instructions: instr,
			Levels: map[string]*profile.Stats{"L1D": {StallCycles: stall, Misses: stall / 10}}}
	}
	p := &profile.Profile{Options: profile.Options{Where: true}, Focus: "L1D", Functions: []profile.Function{{Name: "main"}},
		Caches: []profile.CacheStats{{Name: "L1D", Level: 1}},
		CallTree: &profile.CallTree{Nodes: []profile.CallNode{
			node("main", -1, 0, 10, 100), node("f", 0, 2, 20, 200), node("g", 1, 3, 30, 300),
			node("g", 0, 1, 5, 50), node("h", 3, 1, 1, 10), node("g", 4, 1, 2, 20)}}}
	return p
}

func TestCalls(t *testing.T) {
	text := viewText(t, callTreeProfile(), "calls", ViewOptions{})
	// Inclusive: main 748, f 550, g←f 330, g←main 88, h 33, g←h 22; a
	// miss at L1D per 10 stall cycles.
	want := [][]string{
		{"main", "0", "68", "680", "748", "100.0%", "68"},
		{"f ← main", "2", "50", "500", "550", "73.5%", "50"},
		{"g ← f ← main", "3", "30", "300", "330", "44.1%", "30"},
		{"g ← main", "1", "8", "80", "88", "11.8%", "8"},
		{"h ← g ← main", "1", "3", "30", "33", "4.4%", "3"},
		{"g ← h ← g ← main", "1", "2", "20", "22", "2.9%", "2"},
	}
	got := rowsOf(text, "main", "f ← main", "g ← f ← main", "g ← main", "h ← g ← main", "g ← h ← g ← main")
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("call paths %q, want %q\n%s", got, want, text)
	}
	// g's outermost calls: from f (330) and from main (88, the inner g's
	// 22 in it); its callees in them: h (33), and its own code.
	text = viewText(t, callTreeProfile(), "calls", ViewOptions{Function: "g"})
	callers := rowsOf(text, "f", "main", "total")
	if want := [][]string{{"f", "3", "30", "300", "330", "44.1%", "30"}, {"main", "1", "8", "80", "88", "11.8%", "8"},
		{"total", "4", "38", "380", "418", "55.9%", "38"}}; !slices.EqualFunc(callers[:3], want, slices.Equal) {
		t.Errorf("callers of g %q, want %q\n%s", callers, want, text)
	}
	callees := rowsOf(text[strings.Index(text, "callees of g"):], "(its own code)", "h", "total")
	if want := [][]string{{"(its own code)", "0", "35", "350", "385", "51.5%", "35"}, {"h", "1", "3", "30", "33", "4.4%", "3"},
		{"total", "4", "38", "380", "418", "55.9%", "38"}}; !slices.EqualFunc(callees, want, slices.Equal) {
		t.Errorf("callees of g %q, want %q\n%s", callees, want, text)
	}
	var b strings.Builder
	if err := View(&b, callTreeProfile(), "calls", ViewOptions{Function: "nosuch"}); err == nil || !strings.Contains(err.Error(), `no function "nosuch"`) {
		t.Errorf("an unknown function: %v", err)
	}
	p := callTreeProfile()
	p.CallTree = nil
	if err := View(&b, p, "calls", ViewOptions{}); !errors.Is(err, ErrNoCallTree) {
		t.Errorf("without a call tree: %v", err)
	}
}

// withChain returns a copy of p with a call tree of one call path, fns
// called each by the one before, one call and 10 instructions each.
func withChain(p *profile.Profile, fns ...string) *profile.Profile {
	q := *p
	q.CallTree = &profile.CallTree{}
	for i, f := range fns {
		q.CallTree.Nodes = append(q.CallTree.Nodes, profile.CallNode{Function: f, Caller: int32(i) - 1, Calls: 1, Instructions: 10})
	}
	return &q
}

// TestDiffCalls compares two call trees by call path, inclusive: g's call
// path gets more stall cycles, a new one appears, and a profile without a
// call tree is an error that names it.
func TestDiffCalls(t *testing.T) {
	a, b := callTreeProfile(), callTreeProfile()
	b.CallTree.Nodes[2].Levels["L1D"] = &profile.Stats{StallCycles: 500, Misses: 50} // g ← f ← main: 300 → 500
	b.CallTree.Nodes = append(b.CallTree.Nodes, profile.CallNode{Function: "k", Caller: 1, Instructions: 4,
		Levels: map[string]*profile.Stats{"L1D": {StallCycles: 40, Misses: 4}}})
	_, rows := diffRows(t, a, b, "calls", DiffOptions{})
	// Inclusive stall cycles: main 680 → 920, f 500 → 740, g ← f 300 → 500, k new.
	for _, c := range []struct {
		path string
		want []string
	}{
		{"main", []string{"main", "", "stall cycles", "680", "920", "240"}},
		{"f ← main", []string{"f ← main", "", "stall cycles", "500", "740", "240"}},
		{"g ← f ← main", []string{"g ← f ← main", "", "stall cycles", "300", "500", "200"}},
		{"k ← f ← main", []string{"k ← f ← main", "added", "stall cycles", "", "40", "40"}},
	} {
		r := row(rows, "stall cycles", c.path)
		if r == nil || !slices.Equal(append([]string{c.path}, r[:5]...), c.want) {
			t.Errorf("%s: %q, want %q", c.path, r, c.want)
		}
	}
	if got := entryOrder(rows); !slices.Equal(got[:4], []string{"f ← main", "main", "g ← f ← main", "k ← f ← main"}) {
		t.Errorf("order %q: the largest change first (then by name)", got)
	}
	b.CallTree = nil
	if err := Diff(&strings.Builder{}, a, b, "calls", DiffOptions{NameB: "b.memspy"}); !errors.Is(err, ErrNoCallTree) || !strings.HasPrefix(err.Error(), "b.memspy: ") {
		t.Errorf("B without a call tree: %v", err)
	}
}
