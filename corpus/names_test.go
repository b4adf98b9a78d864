package corpus

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/memspy/memspy/profile"
)

// namesTop is how many of the top objects and functions by stall cycles
// checkNames looks at.
const namesTop = 10

// otherShare is the largest share of the stall cycles that <other>, the
// data of no known structure, may hold.
const otherShare = 0.02

var (
	// bareHex finds an address in a name that no module names: "0x4011a3"
	// alone, not "libfoo.so+0x1a3".
	bareHex = regexp.MustCompile(`(^|[^+\w])0x[0-9a-f]+`)
	// libraryInternals are names from inside the C++ standard library's
	// templates, which say nothing of the program's data.
	libraryInternals = []string{"__tmp", "_M_impl", "heap@?"}
	// runtimePath finds a name made of a call path through the Go runtime
	// ("runtime.startm.3096.runtime.newm.2870.mp (runtime.mPadded)": a
	// line, then a runtime function), which tells the program nothing;
	// not a closure's name ("runtime.init.6.func1").
	runtimePath = regexp.MustCompile(`\.[0-9]+\.runtime\.`)
)

// checkNames returns what is wrong in the --where profile p
// with its names (issue 28): among the top objects and functions by stall
// cycles, no name holds a bare address, a name from inside the C++
// library or an unnamed heap object ("heap@?", as Go's all were), none is
// a call path through the Go runtime, <other> holds less than otherShare
// of the stall cycles, no object is listed twice, and every pair and
// reference names a listed object.
func checkNames(p *profile.Profile) []string {
	var problems []string
	var total uint64
	for _, f := range p.Functions {
		total += f.StallCycles
	}
	check := func(what, name string) {
		if bareHex.MatchString(name) {
			problems = append(problems, fmt.Sprintf("%s %q holds a bare address", what, name))
		}
		if runtimePath.MatchString(name) {
			problems = append(problems, fmt.Sprintf("%s %q is a call path through the Go runtime", what, name))
		}
		for _, bad := range libraryInternals {
			if strings.Contains(name, bad) {
				problems = append(problems, fmt.Sprintf("%s %q holds %q", what, name, bad))
			}
		}
	}
	objs := p.Objects // most stall cycles first
	for i := range min(namesTop, len(objs)) {
		check("object", objs[i].Name)
	}
	for i := range min(namesTop, len(p.Functions)) {
		check("function", p.Functions[i].Name)
	}
	listed := map[string]bool{}
	for _, o := range objs {
		if listed[o.Name] {
			problems = append(problems, fmt.Sprintf("object %q is listed twice", o.Name))
		}
		listed[o.Name] = true
		if o.Name == "<other>" && total > 0 && float64(o.StallCycles) > otherShare*float64(total) {
			problems = append(problems, fmt.Sprintf("<other> holds %.1f%% of the stall cycles (%d of %d), more than %.0f%%",
				100*float64(o.StallCycles)/float64(total), o.StallCycles, total, 100*otherShare))
		}
	}
	// Every pair and reference names a listed object.
	for _, pr := range p.Pairs {
		if !listed[pr.Object] {
			problems = append(problems, fmt.Sprintf("pair %s × %s names no listed object", pr.Function, pr.Object))
		}
	}
	for _, r := range p.References {
		if !listed[r.Object] {
			problems = append(problems, fmt.Sprintf("reference %#x in %s names no listed object %s", r.PC, r.Function, r.Object))
		}
	}
	return problems
}
