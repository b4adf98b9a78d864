package sim_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/sim"
	"github.com/memspy/memspy/trace"
)

// TestInclusiveRandom checks self and inclusive counters per function and
// region against a plain call-stack model: on random well-nested calls,
// returns (some with regions left open), direct recursion and regions,
// every reference and instruction counts in the function on top (self) and
// once in every function on the stack (inclusive).
func TestInclusiveRandom(t *testing.T) {
	// A fully associative cache large enough that every read is one
	// access of its own.
	m := mach(hc("L1", 1, 1, 1024, 64, machine.LRU))
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 3))
		events, self, incl, selfInstr, inclInstr, paths := inclusiveCase(rng)
		pcs := make([]uint64, len(events))
		for i := range pcs {
			pcs[i] = 0x400000 + uint64(i%7)*4
		}
		p := runWorked(t, m, sim.Options{Attribute: true}, events, pcs)
		gotSelf, gotIncl := map[string]uint64{}, map[string]uint64{}
		gotSelfInstr, gotInclInstr := map[string]uint64{}, map[string]uint64{}
		for _, f := range p.Functions {
			if f.Region != (f.Name[0] == 'r') {
				t.Errorf("seed %d: %s region=%v", seed, f.Name, f.Region)
			}
			if s := f.Levels["L1"]; s != nil && s.Reads > 0 {
				gotSelf[f.Name] = s.Reads
			}
			if f.Instructions > 0 {
				gotSelfInstr[f.Name] = f.Instructions
			}
			if f.Inclusive == nil {
				continue
			}
			if s := f.Inclusive.Levels["L1"]; s != nil && s.Reads > 0 {
				gotIncl[f.Name] = s.Reads
			}
			if f.Inclusive.Instructions > 0 {
				gotInclInstr[f.Name] = f.Inclusive.Instructions
			}
		}
		// The call tree: each call path's own reads, instructions and calls.
		gotPaths := map[string][3]uint64{}
		if tr := p.CallTree; tr != nil {
			for i, n := range tr.Nodes {
				stack := tr.Stack(int32(i))
				slices.Reverse(stack)
				c := gotPaths[strings.Join(stack, ";")]
				if s := n.Levels["L1"]; s != nil {
					c[0] += s.Reads
				}
				c[1] += n.Instructions
				c[2] += n.Calls
				gotPaths[strings.Join(stack, ";")] = c
			}
		}
		for k, c := range gotPaths {
			if c == [3]uint64{} {
				delete(gotPaths, k)
			}
		}
		if d := cmp.Diff(paths, gotPaths); d != "" {
			t.Fatalf("seed %d: call paths' [reads, instructions, calls] (-model +engine):\n%s\nevents %v", seed, d, events)
		}
		for what, pair := range map[string][2]map[string]uint64{
			"self reads": {self, gotSelf}, "inclusive reads": {incl, gotIncl},
			"self instructions": {selfInstr, gotSelfInstr}, "inclusive instructions": {inclInstr, gotInclInstr},
		} {
			if d := cmp.Diff(pair[0], pair[1]); d != "" {
				t.Fatalf("seed %d: %s (-model +engine):\n%s\nevents %v", seed, what, d, events)
			}
		}
	}
}

// inclusiveCase makes a random trace of calls, returns, regions, reads
// and fetches, and counts with a plain stack model the reads and fetches
// of each function by itself and inclusively, and by call path (the
// names on the stack, outermost first, a direct recursion's repeats as
// one) its reads, fetches and calls.
func inclusiveCase(rng *rand.Rand) (events []refEvent, self, incl, selfInstr, inclInstr map[string]uint64, paths map[string][3]uint64) {
	self, incl = map[string]uint64{}, map[string]uint64{}
	selfInstr, inclInstr = map[string]uint64{}, map[string]uint64{}
	paths = map[string][3]uint64{}
	type frame struct {
		name   string
		region bool
		sp     uint64 // a call's stack pointer after the call
	}
	var stack []frame
	sp := uint64(0x7fff0000)
	path := func() string {
		var names []string
		for _, f := range stack {
			if len(names) == 0 || names[len(names)-1] != f.name {
				names = append(names, f.name)
			}
		}
		if len(names) == 0 {
			return "<unknown>"
		}
		return strings.Join(names, ";")
	}
	countPath := func(i int) {
		c := paths[path()]
		c[i]++
		paths[path()] = c
	}
	count := func(selfC, inclC map[string]uint64) {
		top := "<unknown>"
		if len(stack) > 0 {
			top = stack[len(stack)-1].name
		}
		selfC[top]++
		if len(stack) == 0 {
			inclC[top]++
			return
		}
		seen := map[string]bool{}
		for _, f := range stack {
			if !seen[f.name] {
				seen[f.name] = true
				inclC[f.name]++
			}
		}
	}
	for range 40 + rng.IntN(80) {
		switch r := rng.IntN(10); {
		case r < 2 && len(stack) < 12: // call
			entry := 0x1000 * uint64(1+rng.IntN(4))
			sp -= 64
			events = append(events, refEvent{Kind: trace.Call, Addr: entry, Ext: trace.Ext{SP: sp}})
			stack = append(stack, frame{name: fmt.Sprintf("%#x", entry), sp: sp})
			countPath(2)
		case r < 4: // return from the innermost function, ending its open regions
			n := len(stack)
			for n > 0 && stack[n-1].region {
				n--
			}
			if n == 0 {
				continue
			}
			events = append(events, refEvent{Kind: trace.Return, Ext: trace.Ext{SP: sp + 8}})
			sp += 64
			stack = stack[:n-1]
		case r < 5: // region begin
			name := fmt.Sprintf("r%d", rng.IntN(3))
			events = append(events, mark(trace.MarkRegionBegin, name))
			stack = append(stack, frame{name: name, region: true})
			countPath(2)
		case r < 6: // region end: the innermost region of that name, and what is above it
			name := fmt.Sprintf("r%d", rng.IntN(3))
			events = append(events, mark(trace.MarkRegionEnd, name))
			for i := len(stack) - 1; i >= 0; i-- {
				if stack[i].region && stack[i].name == name {
					// Functions called inside and not returned leave with it:
					// put the stack pointer back above them.
					for _, f := range stack[i+1:] {
						if !f.region {
							sp += 64
						}
					}
					stack = stack[:i]
					break
				}
			}
		case r < 8:
			events = append(events, rd(0x100000+uint64(rng.IntN(64))*64, 8))
			count(self, incl)
			countPath(0)
		default:
			events = append(events, ifc(0x500000+uint64(rng.IntN(64))*4, 4))
			count(selfInstr, inclInstr)
			countPath(1)
		}
	}
	// The engine keeps the calling contexts with counters and their
	// callers: a path whose calls fetched and read nothing is left out.
	for k := range paths {
		if !slices.ContainsFunc(slices.Collect(maps.Keys(paths)), func(q string) bool {
			c := paths[q]
			return (q == k || strings.HasPrefix(q, k+";")) && (c[0] > 0 || c[1] > 0)
		}) {
			delete(paths, k)
		}
	}
	return events, self, incl, selfInstr, inclInstr, paths
}
