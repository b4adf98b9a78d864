package corpus

import (
	"fmt"

	"github.com/memspy/memspy/profile"
)

// checkWhere reads the --where profile at path and returns what is wrong
// in it: with its names (checkNames) and its call tree (checkCallTree).
func checkWhere(path string) []string {
	p, err := profile.ReadFile(path)
	if err != nil {
		return []string{err.Error()}
	}
	return append(checkNames(p), checkCallTree(p)...)
}

// checkCallTree returns what is wrong with the call tree of p, the profile
// of a program: there is one, within its bound, and its nodes add up to
// the functions' own counters: in all, at every cache and in instructions,
// and function by function when no node was elided.
func checkCallTree(p *profile.Profile) []string {
	t := p.CallTree
	if t == nil {
		return []string{"the profile has no call tree"}
	}
	var problems []string
	top := 0
	// Counts by function and cache: the totals under function "", the
	// instructions under cache "".
	type key struct{ function, cache string }
	type counts struct{ instructions, accesses, misses, stall uint64 }
	fromNodes, fromFuncs := map[key]counts{}, map[key]counts{}
	add := func(m map[key]counts, function string, instr uint64, levels map[string]*profile.Stats) {
		for _, f := range []string{"", function} {
			c := m[key{f, ""}]
			c.instructions += instr
			m[key{f, ""}] = c
			for cache, s := range levels {
				c := m[key{f, cache}]
				c.accesses += s.Accesses
				c.misses += s.Misses
				c.stall += s.StallCycles
				m[key{f, cache}] = c
			}
		}
	}
	for _, n := range t.Nodes {
		if n.Caller < 0 {
			top++
		}
		add(fromNodes, n.Function, n.Instructions, n.Levels)
	}
	for _, f := range p.Functions {
		add(fromFuncs, f.Name, f.Instructions, f.Levels)
	}
	if len(t.Nodes) > profile.MaxCallNodes+top {
		problems = append(problems, fmt.Sprintf("the call tree has %d nodes, %d at the top: more than %d", len(t.Nodes), top, profile.MaxCallNodes))
	}
	for k, want := range fromFuncs {
		if got := fromNodes[k]; (k.function == "" || t.Elided == 0) && got != want {
			problems = append(problems, fmt.Sprintf("the call tree's nodes count %+v for %q at %q, the functions %+v", got, k.function, k.cache, want))
		}
	}
	return problems
}
