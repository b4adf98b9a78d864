package profile

import (
	"cmp"
	"fmt"
	"slices"
)

// CallTree is the run's calling contexts as a tree of call paths, each
// node a function called along the path of its callers (the calling
// context the engine follows from the program's calls and returns), with
// what the code counted there. Code outside every traced call is at the
// top, by the function its PC names. The counters of a node are its own
// (self); a node's inclusive counters add up its subtree. Beyond
// MaxCallNodes, the nodes of the least counting subtrees are elided: their
// counters are added into their nearest listed caller's, so that every
// node listed keeps its exact inclusive counters, and the tree's total is
// the run's.
type CallTree struct {
	// Nodes come callers first: a node's caller has a smaller index.
	Nodes []CallNode `json:"nodes"`
	// Elided counts the calling contexts whose counters were added into a
	// caller's node.
	Elided uint64 `json:"elided,omitempty"`
}

// CallNode is one calling context: Function called from the node Caller
// (-1 at the top).
type CallNode struct {
	Function string `json:"function"`
	Caller   int32  `json:"caller"`
	// Calls counts the calls that entered the context (a direct
	// recursion's calls included; 0 at the top, for code outside every
	// call).
	Calls uint64 `json:"calls,omitempty"`
	// Instructions counts the instructions fetched in the context (one
	// compute cycle each), SyncCycles the cycles its threads waited at
	// synchronization called from it.
	Instructions uint64 `json:"instructions,omitempty"`
	SyncCycles   uint64 `json:"sync_cycles,omitempty"`
	// Levels are the counters of its references by cache (without
	// evictor or sharing lists).
	Levels map[string]*Stats `json:"levels,omitempty"`
}

// MaxCallNodes bounds the nodes of a CallTree (see CallTree): the
// subtrees with the most cycles are listed.
const MaxCallNodes = 1 << 12

// Cycles returns the node's own cycles: compute (one per instruction),
// synchronization and stall cycles at every cache.
func (n *CallNode) Cycles() uint64 {
	c := n.Instructions + n.SyncCycles
	for _, s := range n.Levels {
		c += s.StallCycles
	}
	return c
}

// add adds b's counters but its calls to n's.
func (n *CallNode) add(b *CallNode) {
	n.Instructions += b.Instructions
	n.SyncCycles += b.SyncCycles
	if len(b.Levels) > 0 && n.Levels == nil {
		n.Levels = map[string]*Stats{}
	}
	addLevels(n.Levels, b.Levels)
}

// Stack returns the functions of node i's call path, innermost first.
func (t *CallTree) Stack(i int32) []string {
	var s []string
	for ; i >= 0; i = t.Nodes[i].Caller {
		s = append(s, t.Nodes[i].Function)
	}
	return s
}

// Inclusive returns the inclusive counters of every node: its own and
// those of every node under it.
func (t *CallTree) Inclusive() []CallNode {
	incl := make([]CallNode, len(t.Nodes))
	for i := range t.Nodes {
		incl[i].Function, incl[i].Caller = t.Nodes[i].Function, t.Nodes[i].Caller
	}
	for i := len(t.Nodes) - 1; i >= 0; i-- {
		n := &t.Nodes[i]
		incl[i].add(n)
		incl[i].Calls = n.Calls
		if n.Caller >= 0 {
			incl[n.Caller].add(&incl[i])
		}
	}
	return incl
}

// check checks that every caller comes before its callee.
func (t *CallTree) check() error {
	for i, n := range t.Nodes {
		if n.Caller < -1 || int(n.Caller) >= i {
			return fmt.Errorf("profile: call tree node %d (%s) has the caller %d: a caller comes before its callees", i, n.Function, n.Caller)
		}
	}
	return nil
}

// KeepCallers chooses which nodes of a tree to keep, at most maxNodes
// of them but every top node (caller -1): those whose subtree (weights added up)
// weighs most, callers first on equal weights, so that the callers of a
// node kept are kept. callers[i] is node i's caller, before it, or -1.
// It returns, by node, the node that keeps its counters (itself, or its
// nearest kept caller), and the number of nodes kept.
func KeepCallers(callers []int32, weights []uint64, maxNodes int) (into []int32, kept int) {
	n := len(callers)
	into = make([]int32, n)
	sub := slices.Clone(weights)
	for i := n - 1; i >= 0; i-- {
		if c := callers[i]; c >= 0 {
			sub[c] += sub[i]
		}
	}
	var order []int32
	for i := range int32(n) {
		into[i] = i
		if callers[i] >= 0 {
			order = append(order, i)
		} else {
			kept++
		}
	}
	if left := max(maxNodes-kept, 0); len(order) > left {
		slices.SortFunc(order, func(a, b int32) int { return cmp.Or(cmp.Compare(sub[b], sub[a]), cmp.Compare(a, b)) })
		drop := make([]bool, n)
		for _, i := range order[left:] {
			drop[i] = true
		}
		for i := range n { // (callers first: a caller's place is settled)
			if drop[i] {
				into[i] = into[callers[i]]
			}
		}
		return into, kept + left
	}
	return into, n
}

// bound elides the nodes beyond MaxCallNodes (KeepCallers by cycles),
// adding their counters into their nearest kept caller's.
func (t *CallTree) bound() {
	if len(t.Nodes) <= MaxCallNodes {
		return
	}
	callers, weights := make([]int32, len(t.Nodes)), make([]uint64, len(t.Nodes))
	for i := range t.Nodes {
		callers[i], weights[i] = t.Nodes[i].Caller, t.Nodes[i].Cycles()
	}
	into, kept := KeepCallers(callers, weights, MaxCallNodes)
	place := make([]int32, len(t.Nodes)) // by node kept: its new index
	nodes := make([]CallNode, 0, kept)
	for i := range t.Nodes {
		n := &t.Nodes[i]
		if into[i] != int32(i) {
			nodes[place[into[i]]].add(n)
			t.Elided++
			continue
		}
		place[i] = int32(len(nodes))
		if n.Caller >= 0 {
			n.Caller = place[n.Caller]
		}
		nodes = append(nodes, *n)
	}
	t.Nodes = nodes
}

// merge adds the nodes of b into t, each to the node of the same call
// path (or as a new one), and bounds t when it has grown to twice
// MaxCallNodes.
func (t *CallTree) merge(b *CallTree) {
	type key struct {
		caller   int32
		function string
	}
	index := make(map[key]int32, len(t.Nodes))
	for i, n := range t.Nodes {
		index[key{n.Caller, n.Function}] = int32(i)
	}
	place := make([]int32, len(b.Nodes)) // by node of b: its node in t
	for i := range b.Nodes {
		n := b.Nodes[i]
		if n.Caller >= 0 {
			n.Caller = place[n.Caller]
		}
		k := key{n.Caller, n.Function}
		j, ok := index[k]
		if !ok {
			j = int32(len(t.Nodes))
			index[k] = j
			t.Nodes = append(t.Nodes, CallNode{Function: n.Function, Caller: n.Caller})
		}
		t.Nodes[j].add(&n)
		t.Nodes[j].Calls += n.Calls
		place[i] = j
	}
	t.Elided += b.Elided
	if len(t.Nodes) >= 2*MaxCallNodes {
		t.bound()
	}
}
