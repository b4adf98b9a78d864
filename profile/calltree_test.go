package profile

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestKeepCallers works an example by hand: a tree of seven nodes kept to
// four, the top ones always.
func TestKeepCallers(t *testing.T) {
	//        0 (top, 1)         5 (top, 0)
	//       / \                  |
	//  1 (10)  2 (3)            6 (1)
	//  /  \
	// 3(4) 4(6)
	callers := []int32{-1, 0, 0, 1, 1, -1, 5}
	weights := []uint64{1, 10, 3, 4, 6, 0, 1}
	// Subtrees: 0: 24, 1: 20, 2: 3, 3: 4, 4: 6, 5: 1, 6: 1. Two top
	// nodes; the two heaviest others are 1 and 4.
	into, kept := KeepCallers(callers, weights, 4)
	if want := []int32{0, 1, 0, 1, 4, 5, 5}; !slices.Equal(into, want) || kept != 4 {
		t.Errorf("into %v (kept %d), want %v (4)", into, kept, want)
	}
	into, kept = KeepCallers(callers, weights, 100)
	if want := []int32{0, 1, 2, 3, 4, 5, 6}; !slices.Equal(into, want) || kept != 7 {
		t.Errorf("all kept: into %v (kept %d)", into, kept)
	}
	// Fewer than the top nodes: those alone.
	into, kept = KeepCallers(callers, weights, 1)
	if want := []int32{0, 0, 0, 0, 0, 5, 5}; !slices.Equal(into, want) || kept != 2 {
		t.Errorf("top only: into %v (kept %d), want %v (2)", into, kept, want)
	}
}

// randomTree makes a call tree of n nodes with random functions (of a
// few names, so that paths repeat across trees) and counters.
func randomTree(rng *rand.Rand, n int) *CallTree {
	t := &CallTree{}
	seen := map[string]bool{}
	for range n {
		i := len(t.Nodes)
		caller := int32(rng.IntN(i+1)) - 1
		if i > 0 && rng.IntN(4) > 0 {
			caller = int32(rng.IntN(i))
		}
		f := fmt.Sprintf("f%d", rng.IntN(6))
		k := fmt.Sprint(caller, f)
		if seen[k] {
			continue
		}
		seen[k] = true
		t.Nodes = append(t.Nodes, CallNode{Function: f, Caller: caller, Calls: uint64(rng.IntN(5)),
			Instructions: uint64(rng.IntN(100)), Levels: map[string]*Stats{
				"L1": {Accesses: uint64(rng.IntN(50)), Misses: uint64(rng.IntN(5)), StallCycles: uint64(rng.IntN(300))}}})
	}
	return t
}

// pathTotals adds up the counters of t's nodes by call path, and of every
// path by the top node it is under.
func pathTotals(t *CallTree) (byPath, byTop map[string][3]uint64) {
	byPath, byTop = map[string][3]uint64{}, map[string][3]uint64{}
	for i, n := range t.Nodes {
		stack := t.Stack(int32(i))
		c := [3]uint64{n.Instructions, n.Levels["L1"].Accesses, n.Levels["L1"].StallCycles}
		k := strings.Join(stack, ";")
		for _, m := range []map[string][3]uint64{byPath, byTop} {
			old := m[k]
			m[k] = [3]uint64{old[0] + c[0], old[1] + c[1], old[2] + c[2]}
			k = stack[len(stack)-1]
		}
	}
	return byPath, byTop
}

// TestCallTreeMergeAndBound merges random trees and checks the merge
// against adding up by call path; then bounds a large one and checks that
// the nodes kept keep their exact inclusive counters and every top node's
// subtree its total.
func TestCallTreeMergeAndBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 5))
	for trial := range 200 {
		a, b := randomTree(rng, rng.IntN(30)), randomTree(rng, rng.IntN(30))
		want, _ := pathTotals(a)
		wb, _ := pathTotals(b)
		for k, c := range wb {
			w := want[k]
			want[k] = [3]uint64{w[0] + c[0], w[1] + c[1], w[2] + c[2]}
		}
		a.merge(b)
		if err := a.check(); err != nil {
			t.Fatal(err)
		}
		got, _ := pathTotals(a)
		if !mapsEqual(got, want) {
			t.Fatalf("trial %d: merged %v, want %v", trial, got, want)
		}
	}
	big := randomTree(rng, 200000)
	incl := big.Inclusive()
	inclOf := map[string]CallNode{}
	for i := range big.Nodes {
		inclOf[strings.Join(big.Stack(int32(i)), ";")] = incl[i]
	}
	_, topBefore := pathTotals(big)
	n := len(big.Nodes)
	big.bound()
	if len(big.Nodes) > MaxCallNodes || len(big.Nodes) < MaxCallNodes/2 || big.Elided != uint64(n-len(big.Nodes)) {
		t.Fatalf("bounded to %d nodes of %d, elided %d", len(big.Nodes), n, big.Elided)
	}
	if err := big.check(); err != nil {
		t.Fatal(err)
	}
	for i, c := range big.Inclusive() {
		w := inclOf[strings.Join(big.Stack(int32(i)), ";")]
		if c.Instructions != w.Instructions || c.Levels["L1"].StallCycles != w.Levels["L1"].StallCycles || c.Calls != w.Calls {
			t.Fatalf("node %d %v: inclusive %+v, want %+v", i, big.Stack(int32(i)), c, w)
		}
	}
	if _, topAfter := pathTotals(big); !mapsEqual(topAfter, topBefore) {
		t.Errorf("totals by top node %v, want %v", topAfter, topBefore)
	}
}

func mapsEqual(a, b map[string][3]uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestReadChecksCallTree: a caller after its callee is an error that
// names the node.
func TestReadChecksCallTree(t *testing.T) {
	p := &Profile{Version: Version, Tool: "memspy", Complete: true, CallTree: &CallTree{Nodes: []CallNode{
		{Function: "main", Caller: -1}, {Function: "f", Caller: 2}, {Function: "g", Caller: 0}}}}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(&b); err == nil || !strings.Contains(err.Error(), "call tree node 1 (f) has the caller 2") {
		t.Errorf("Read: %v", err)
	}
	p.CallTree.Nodes[1].Caller = 0
	b.Reset()
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	q, err := Read(&b)
	if err != nil || len(q.CallTree.Nodes) != 3 || q.CallTree.Nodes[2].Function != "g" {
		t.Errorf("Read: %v, %+v", err, q.CallTree)
	}
}
