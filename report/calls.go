package report

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/memspy/memspy/profile"
)

// ErrNoCallTree is the error of the calls view on a profile without a
// call tree.
var ErrNoCallTree = errors.New("the profile has no call tree: run with --where (memspy run, or sim of a trace with calls and returns) with this memspy")

// callPathFrames is how many functions of a call path the calls view
// shows, innermost first (an ellipsis stands for the outer ones).
const callPathFrames = 6

// nodeCycles are the cycles of a call tree node, or of a sum of nodes,
// and their misses at the focus cache.
type nodeCycles struct{ calls, compute, stall, sync, misses uint64 }

// cyclesOf returns the cycles of n, and its misses at cache focus.
func cyclesOf(n *profile.CallNode, focus string) nodeCycles {
	c := nodeCycles{calls: n.Calls, compute: n.Instructions, sync: n.SyncCycles}
	for name, s := range n.Levels {
		c.stall += s.StallCycles
		if name == focus {
			c.misses = s.Misses
		}
	}
	return c
}

func (c nodeCycles) total() uint64 { return c.compute + c.stall + c.sync }

func (c *nodeCycles) add(b nodeCycles) {
	c.calls += b.calls
	c.compute += b.compute
	c.stall += b.stall
	c.sync += b.sync
	c.misses += b.misses
}

// calls builds the call tree's tables: without --function, the call
// paths by inclusive cycles; with it, the function's callers and callees,
// each with the function's (or the callee's) inclusive cycles in those
// calls.
func (v *viewer) calls() ([]*Table, error) {
	tr := v.p.CallTree
	if tr == nil {
		return nil, ErrNoCallTree
	}
	incl := tr.Inclusive()
	cyc := make([]nodeCycles, len(incl))
	var all uint64
	for i := range incl {
		cyc[i] = cyclesOf(&incl[i], v.p.Focus)
		if incl[i].Caller < 0 {
			all += cyc[i].total()
		}
	}
	// The sync column appears when threads waited somewhere.
	sync := slices.ContainsFunc(tr.Nodes, func(n profile.CallNode) bool { return n.SyncCycles > 0 })
	columns := func(first string) []Column {
		cs := []Column{{Name: first}, {Name: "calls"}, {Name: "compute cycles"}, {Name: "stall cycles"}, {Name: "total cycles"}, {Name: "share"},
			{Name: "misses at " + v.focus}}
		if sync {
			cs = slices.Insert(cs, 4, Column{Name: "sync cycles"})
		}
		return cs
	}
	row := func(name string, c nodeCycles) Row {
		cells := []Cell{textCell(name), countCell(c.calls), countCell(c.compute), countCell(c.stall), countCell(c.total()), shareCell(c.total(), all),
			countCell(c.misses)}
		if sync {
			cells = slices.Insert(cells, 4, countCell(c.sync))
		}
		return Row{Cells: cells}
	}
	notes := []string{"inclusive: the cycles of the calls and of everything they called; shares are of the whole run's cycles"}
	if tr.Elided > 0 {
		notes = append(notes, fmt.Sprintf("%d calling contexts beyond the tree's %d nodes count in their nearest listed caller", tr.Elided, profile.MaxCallNodes))
	}
	if v.opt.Function == "" {
		t := &Table{Title: "call paths by inclusive cycles (innermost function first)", Columns: columns("call path"), Notes: notes}
		order := make([]int, len(incl))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(cyc[b].total(), cyc[a].total()) })
		rows := make([]Row, len(order))
		for k, i := range order {
			rows[k] = row(callPath(tr.Stack(int32(i)), v.funcName), cyc[i])
		}
		v.limit(t, rows)
		return []*Table{t}, nil
	}
	// The function's outermost nodes (none of its callers is it: a
	// recursion's inner calls are in the outer ones'), by caller, and
	// their callees.
	f := v.opt.Function
	under := make([]bool, len(tr.Nodes))     // by node: it or one of its callers is f
	outermost := make([]bool, len(tr.Nodes)) // by node: it is f, and none of its callers
	callers, callees := map[string]*nodeCycles{}, map[string]*nodeCycles{}
	var self nodeCycles // of its outermost nodes
	add := func(m map[string]*nodeCycles, name string, c nodeCycles) {
		if m[name] == nil {
			m[name] = &nodeCycles{}
		}
		m[name].add(c)
	}
	for i, n := range tr.Nodes { // (callers first)
		up := n.Caller >= 0 && under[n.Caller]
		under[i], outermost[i] = up || n.Function == f, !up && n.Function == f
		switch {
		case outermost[i]:
			caller := "(the top: outside every call)"
			if n.Caller >= 0 {
				caller = v.funcName(tr.Nodes[n.Caller].Function)
			}
			add(callers, caller, cyc[i])
			self.add(cyclesOf(&tr.Nodes[i], v.p.Focus))
		case n.Caller >= 0 && outermost[n.Caller]:
			add(callees, v.funcName(n.Function), cyc[i])
		}
	}
	if len(callers) == 0 {
		return nil, fmt.Errorf("no function %q in the call tree", f)
	}
	table := func(title, first string, m map[string]*nodeCycles) *Table {
		t := &Table{Title: title, Columns: columns(first), Notes: notes}
		names := slices.Sorted(maps.Keys(m))
		slices.SortStableFunc(names, func(a, b string) int { return cmp.Compare(m[b].total(), m[a].total()) })
		rows := make([]Row, len(names))
		for i, name := range names {
			rows[i] = row(name, *m[name])
		}
		v.limit(t, rows)
		return t
	}
	ct := table("callers of "+v.funcName(f)+": its inclusive cycles in their calls", "caller", callers)
	var total nodeCycles
	for _, c := range callers {
		total.add(*c)
	}
	ct.Total = row("total", total).Cells
	self.calls = 0
	callees["(its own code)"] = &self
	ce := table("callees of "+v.funcName(f)+": their inclusive cycles in its calls, and its own code", "callee", callees)
	ce.Total = row("total", total).Cells
	return []*Table{ct, ce}, nil
}

// callPath shows a call path, innermost first, each function as name
// shows it, its outer functions beyond callPathFrames as an ellipsis.
func callPath(stack []string, name func(string) string) string {
	names := make([]string, 0, min(len(stack), callPathFrames+1))
	for i, f := range stack {
		if i == callPathFrames {
			names = append(names, "…")
			break
		}
		names = append(names, name(f))
	}
	return strings.Join(names, " ← ")
}
