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
// source line (in its own file, fi=, when another). Labels and the
// callers in longer stacks are not written.
func WriteCallgrind(w io.Writer, s *Samples) error {
	funcFile := map[string]string{}
	for _, f := range s.Functions {
		funcFile[f.Name] = f.File
	}
	costs, total := lineCosts(s)
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
	function, file := "", ""
	for i, c := range costs {
		if i == 0 || c.function != function {
			function = c.function
			file = orUnknown(funcFile[function])
			fmt.Fprintf(bw, "\nfl=%s\nfn=%s\n", files.ref(file), fns.ref(function))
		}
		if f := orUnknown(c.file); f != file {
			file = f
			fmt.Fprintf(bw, "fi=%s\n", files.ref(file))
		}
		writeCost(bw, c)
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
