package export

import (
	"bufio"
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// What Valgrind's two profile formats, Callgrind's and Cachegrind's,
// share: desc:, cmd: and events: header lines (events: the last, as
// callgrind_annotate wants), costs by function, file and source line,
// and the summary: line of their totals.

// lineCost is the cost of a function's code at one source line.
type lineCost struct {
	function string
	file     string // the line's file ("" when not known)
	line     int    // 0: the function as a whole
	cost     values
}

// lineCosts adds up the values of the samples at their innermost frames,
// by function, file and line, and returns them in that order, and their
// total. Labels and the callers in longer stacks are left out.
func lineCosts(s *Samples) ([]lineCost, values) {
	type key struct {
		function, file string
		line           int
	}
	index := map[key]int{}
	var costs []lineCost
	total := make(values, len(s.Types))
	for _, sm := range s.Samples {
		if len(sm.Stack) == 0 {
			continue
		}
		fr := sm.Stack[0]
		k := key{fr.Function, fr.File, fr.Line}
		i, ok := index[k]
		if !ok {
			i = len(costs)
			index[k] = i
			costs = append(costs, lineCost{fr.Function, fr.File, fr.Line, make(values, len(s.Types))})
		}
		for j, v := range sm.Values {
			costs[i].cost[j] += v
			total[j] += v
		}
	}
	slices.SortFunc(costs, func(a, b lineCost) int {
		return cmp.Or(cmp.Compare(a.function, b.function), cmp.Compare(a.file, b.file), cmp.Compare(a.line, b.line))
	})
	return costs, total
}

// writeDesc writes a desc: line per comment of s and per extra one, and
// the cmd: line.
func writeDesc(bw *bufio.Writer, s *Samples, extra ...string) {
	for _, c := range append(slices.Clone(s.Comments), extra...) {
		bw.WriteString("desc: " + oneLine(c) + "\n")
	}
	bw.WriteString("cmd: " + oneLine(s.Command) + "\n")
}

// writeEvents writes the events: line, the last of the header, of the
// names given.
func writeEvents(bw *bufio.Writer, names []string) {
	bw.WriteString("events:")
	for _, n := range names {
		bw.WriteString(" " + n)
	}
	bw.WriteString("\n")
}

// writeCost writes a cost line: the line number, then the values.
func writeCost(bw *bufio.Writer, c lineCost) {
	bw.WriteString(strconv.Itoa(c.line))
	writeValues(bw, c.cost)
}

// writeSummary writes the summary: line of the totals.
func writeSummary(bw *bufio.Writer, total values) {
	bw.WriteString("summary:")
	writeValues(bw, total)
}

// writeValues writes " v1 v2 ...\n".
func writeValues(bw *bufio.Writer, v values) {
	for _, x := range v {
		bw.WriteByte(' ')
		bw.WriteString(strconv.FormatInt(x, 10))
	}
	bw.WriteByte('\n')
}

// orUnknown returns file, or Valgrind's ??? for a file not known.
func orUnknown(file string) string {
	if file == "" {
		return "???"
	}
	return file
}

// oneLine returns s with its line breaks made spaces, for a line of its
// own.
func oneLine(s string) string {
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}
