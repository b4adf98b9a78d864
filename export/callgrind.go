package export

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
)

// WriteCallgrind writes s to w in Callgrind's profile format (as in
// callgrind.out.PID), which KCachegrind and callgrind_annotate read: an
// event per sample type, and each sample's values as the self cost of its
// innermost frame's function (fn=, in the function's file, fl=) at its
// source line (in its own file, fi=, when another); then the function's
// calls (s.Calls: cfn=, calls=) with their inclusive costs, at line 0 of
// the caller (the call's own line is not known). Labels and the callers
// in longer stacks are not written.
func WriteCallgrind(w io.Writer, s *Samples) error {
	funcs := map[string]Function{}
	for _, f := range s.Functions {
		funcs[f.Name] = f
	}
	costs, total := lineCosts(s)
	callsOf := map[string][]Call{}
	for _, c := range s.Calls {
		callsOf[c.Caller] = append(callsOf[c.Caller], c)
	}
	// The functions with costs, in order, each with its calls; then those
	// with calls alone.
	var order []string
	listed := map[string]bool{}
	for _, c := range costs {
		if !listed[c.function] {
			listed[c.function] = true
			order = append(order, c.function)
		}
	}
	for _, c := range s.Calls {
		if !listed[c.Caller] {
			listed[c.Caller] = true
			order = append(order, c.Caller)
		}
	}
	bw := bufio.NewWriter(w)
	bw.WriteString("# callgrind format\nversion: 1\ncreator: memspy\n")
	events := make([]string, len(s.Types))
	for i, t := range s.Types {
		events[i] = t.Name
	}
	writeDesc(bw, s)
	bw.WriteString("positions: line\n")
	writeEvents(bw, events)
	files, fns := names{}, names{}
	for _, function := range order {
		file := orUnknown(funcs[function].File)
		fmt.Fprintf(bw, "\nfl=%s\nfn=%s\n", files.ref(file), fns.ref(function))
		for len(costs) > 0 && costs[0].function == function {
			c := costs[0]
			costs = costs[1:]
			if f := orUnknown(c.file); f != file {
				file = f
				fmt.Fprintf(bw, "fi=%s\n", files.ref(file))
			}
			writeCost(bw, c)
		}
		if own := orUnknown(funcs[function].File); len(callsOf[function]) > 0 && file != own {
			fmt.Fprintf(bw, "fi=%s\n", files.ref(own)) // (the calls are the function's own)
		}
		for _, c := range callsOf[function] {
			callee := funcs[c.Callee]
			fmt.Fprintf(bw, "cfi=%s\ncfn=%s\ncalls=%d %d\n", files.ref(orUnknown(callee.File)), fns.ref(c.Callee), c.Count, callee.Line)
			writeCost(bw, lineCost{cost: c.Values})
		}
	}
	bw.WriteString("\n")
	writeSummary(bw, total)
	return bw.Flush()
}

// names compresses Callgrind's names: the first use of a name is "(id)
// name", the next ones "(id)".
type names map[string]int

func (n names) ref(name string) string {
	if id, ok := n[name]; ok {
		return "(" + strconv.Itoa(id) + ")"
	}
	n[name] = len(n) + 1
	return "(" + strconv.Itoa(len(n)) + ") " + oneLine(name)
}
