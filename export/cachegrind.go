package export

import (
	"bufio"
	"io"
	"strings"
)

// WriteCachegrind writes s to w in Cachegrind's profile format (as in
// cachegrind.out.PID), which cg_annotate, cg_diff and cg_merge read: an
// event per sample type under its short name (a desc: line gives each
// one's full name), and each sample's values as the cost of its innermost
// frame's function (fn=) in the file of its source line (fl=) at that
// line. A function's lines in another file than its own (code inlined
// from a header) are a file:function entry of their own, as Cachegrind
// writes them. Labels and the callers in longer stacks are not written.
func WriteCachegrind(w io.Writer, s *Samples) error {
	costs, total := lineCosts(s)
	bw := bufio.NewWriter(w)
	events := make([]string, len(s.Types))
	legend := make([]string, len(s.Types))
	for i, t := range s.Types {
		events[i] = t.Short
		legend[i] = t.Short + "=" + t.Name
	}
	writeDesc(bw, s, "event names: "+strings.Join(legend, " "))
	writeEvents(bw, events)
	function, file := "", ""
	for i, c := range costs {
		if f := orUnknown(c.file); i == 0 || c.function != function || f != file {
			function, file = c.function, f
			bw.WriteString("fl=" + oneLine(file) + "\nfn=" + oneLine(function) + "\n")
		}
		writeCost(bw, c)
	}
	writeSummary(bw, total)
	return bw.Flush()
}
