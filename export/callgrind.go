package export

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
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
	type line struct {
		function, file string
		line           int
	}
	costs := map[line]values{}
	var order []line // first appearance, then sorted
	total := make(values, len(s.Types))
	for _, sm := range s.Samples {
		if len(sm.Stack) == 0 {
			continue
		}
		fr := sm.Stack[0]
		k := line{fr.Function, fr.File, fr.Line}
		c, ok := costs[k]
		if !ok {
			c = make(values, len(s.Types))
			costs[k] = c
			order = append(order, k)
		}
		for i, v := range sm.Values {
			c[i] += v
			total[i] += v
		}
	}
	slices.SortFunc(order, func(a, b line) int {
		return cmp.Or(cmp.Compare(a.function, b.function), cmp.Compare(a.file, b.file), cmp.Compare(a.line, b.line))
	})
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# callgrind format\nversion: 1\ncreator: memspy\n")
	for _, c := range s.Comments {
		fmt.Fprintf(bw, "desc: %s\n", c)
	}
	fmt.Fprint(bw, "positions: line\nevents:")
	for _, t := range s.Types {
		fmt.Fprintf(bw, " %s", t.Name)
	}
	fmt.Fprint(bw, "\n")
	files, fns := names{}, names{}
	function, file := "", ""
	for i, k := range order {
		if i == 0 || k.function != function {
			function = k.function
			file = orUnknown(funcFile[function])
			fmt.Fprintf(bw, "\nfl=%s\nfn=%s\n", files.ref(file), fns.ref(function))
		}
		if f := orUnknown(k.file); f != file {
			file = f
			fmt.Fprintf(bw, "fi=%s\n", files.ref(file))
		}
		bw.WriteString(strconv.Itoa(k.line))
		writeValues(bw, costs[k])
	}
	bw.WriteString("\nsummary:")
	writeValues(bw, total)
	return bw.Flush()
}

// orUnknown returns file, or Callgrind's ??? for a file not known.
func orUnknown(file string) string {
	if file == "" {
		return "???"
	}
	return file
}

// writeValues writes " v1 v2 ...\n".
func writeValues(bw *bufio.Writer, v values) {
	for _, x := range v {
		bw.WriteByte(' ')
		bw.WriteString(strconv.FormatInt(x, 10))
	}
	bw.WriteByte('\n')
}

// names compresses Callgrind's names: the first use of a name is "(id)
// name", the next ones "(id)".
type names map[string]int

func (n names) ref(name string) string {
	if id, ok := n[name]; ok {
		return "(" + strconv.Itoa(id) + ")"
	}
	n[name] = len(n) + 1
	return "(" + strconv.Itoa(len(n)) + ") " + name
}
