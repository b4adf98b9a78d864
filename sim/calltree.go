package sim

import (
	"github.com/memspy/memspy/attrib"
	"github.com/memspy/memspy/profile"
)

// callTree makes the profile's call tree (nil without calling contexts
// beyond the root one): a node per calling context on the call path of one
// that counts (counts, countingContexts), at most profile.MaxCallNodes of
// them (profile.KeepCallers, by their cycles), and at the top the code of
// the root context by the function its PC names (rootSums) and the root
// context's instructions in its procedure's function. Contexts whose
// procedures share a function along one call path are one node. It must
// run before functionEntries, which adds every context's counters into
// its caller's.
func (w *whereBuilder) callTree(counts bitset) *profile.CallTree {
	at := w.h.attr
	ctxs, calls := at.code.Contexts(), at.code.Calls()
	if len(ctxs) <= 1 {
		return nil
	}
	names := len(w.names)
	// The contexts on the call path of one that counts, the root's
	// callees at the top.
	onPath := newBitset(len(ctxs))
	for c := int32(len(ctxs)) - 1; c > attrib.RootContext; c-- {
		if counts.has(c) || onPath.has(c) {
			onPath.set(c)
			onPath.set(ctxs[c].Parent)
		}
	}
	var ids []int32 // the contexts on a path, in order (callers first)
	pos := make([]int32, len(ctxs))
	var callers []int32
	var weights []uint64
	for c := int32(1); c < int32(len(ctxs)); c++ {
		if !onPath.has(c) {
			continue
		}
		pos[c] = int32(len(ids))
		ids = append(ids, c)
		caller := int32(-1)
		if p := ctxs[c].Parent; p != attrib.RootContext {
			caller = pos[p]
		}
		callers = append(callers, caller)
		instr, wait := w.contextCycles(c)
		weight := instr + wait
		for j := range names {
			if s := w.ctxSums.get(c, j); s != nil {
				weight += s.stall
			}
		}
		weights = append(weights, weight)
	}
	into, kept := profile.KeepCallers(callers, weights, profile.MaxCallNodes)

	t := &profile.CallTree{}
	nodeSums := newSumTable(kept+len(w.funcs)+1, names)
	type key struct{ caller, fn int32 }
	index := map[key]int32{}
	node := func(caller, fn int32) int32 {
		k := key{caller, fn}
		n, ok := index[k]
		if !ok {
			n = int32(len(t.Nodes))
			index[k] = n
			t.Nodes = append(t.Nodes, profile.CallNode{Function: w.funcs[fn].Name, Caller: caller})
		}
		return n
	}
	// The root context's code at the top.
	if instr, wait := w.contextCycles(attrib.RootContext); instr != 0 || wait != 0 {
		n := &t.Nodes[node(-1, w.procFunc(ctxs[attrib.RootContext].Proc))]
		n.Instructions += instr
		n.SyncCycles += wait
	}
	for f := range int32(w.rootSums.n) {
		if w.rootSums.present(f) {
			nodeSums.addEntry(node(-1, f), &w.rootSums, f)
		}
	}
	// The contexts kept, and those elided into them.
	nodeOf := make([]int32, len(ids)) // by context on a path: its node
	for i, c := range ids {
		var n int32
		if k := into[i]; k != int32(i) {
			n = nodeOf[k]
			t.Elided++
		} else {
			caller := int32(-1)
			if callers[i] >= 0 {
				caller = nodeOf[callers[i]]
			}
			n = node(caller, w.procFunc(ctxs[c].Proc))
			t.Nodes[n].Calls += calls[c]
		}
		nodeOf[i] = n
		instr, wait := w.contextCycles(c)
		t.Nodes[n].Instructions += instr
		t.Nodes[n].SyncCycles += wait
		nodeSums.addEntry(n, &w.ctxSums, c)
	}
	for i := range t.Nodes {
		n := &t.Nodes[i]
		n.Levels = nodeSums.levels(int32(i), w.names, at.missOnly)
		for _, s := range n.Levels {
			s.InvalidatedBy, s.Invalidated = nil, nil
		}
		if len(n.Levels) == 0 {
			n.Levels = nil
		}
	}
	return t
}
