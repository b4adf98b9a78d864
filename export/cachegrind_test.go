package export

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// cgTool returns the path of one of Cachegrind's tools, skipping the test
// when it is not installed.
func cgTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s (Debian package valgrind) is not installed", name)
	}
	return path
}

// cgReport is what cg_annotate shows of one event: the program's total,
// the rows by file:function in their order, and the counts of the
// annotated source lines by file (line 0: those of no line).
type cgReport struct {
	total     int64
	rows      []string
	functions map[string]int64
	lines     map[string]map[int]int64
}

var (
	// cgRow is a line of counts: the count (negative in a difference),
	// its share (and 3.22's cumulative share), then what it counts;
	// 3.22 marks the first of a group with < or >.
	cgRow = regexp.MustCompile(`^(?:[<>] )? *(-?[0-9,]+)(?: +\([^)]*\))? +(.+)$`)
	// cgLine is an annotated line of the test's sources, cgNoLine the
	// counts of a file at no line (3.19's, then 3.21's).
	cgLine   = regexp.MustCompile(`^src (\S+) (\d+)$`)
	cgNoLine = regexp.MustCompile(`^<(?:counts for unidentified lines in \S+|unknown \(line 0\))>$`)
)

// cgAnnotate runs cg_annotate with args in dir on the file named
// cachegrind.out there, and returns what it shows of the one event args
// show, as cg_annotate 3.19 and 3.22 show it: cg_annotate must warn of
// nothing.
func cgAnnotate(t *testing.T, dir string, args ...string) cgReport {
	t.Helper()
	cmd := exec.Command(cgTool(t, "cg_annotate"), append(args, "cachegrind.out")...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "WARNING") {
		t.Fatalf("cg_annotate %v: %v\n%s", args, err, out)
	}
	r := cgReport{functions: map[string]int64{}, lines: map[string]map[int]int64{}}
	section, file := "", "" // file: of the annotated source, or of 3.22's group of functions
	for _, l := range strings.Split(string(out), "\n") {
		switch {
		case strings.Contains(l, "file:function"):
			section = "functions"
			continue
		case strings.Contains(l, "function:file"):
			section = ""
			continue
		case strings.HasPrefix(l, "-- Auto-annotated source: "), strings.HasPrefix(l, "-- Annotated source file: "):
			f := strings.Fields(l) // 3.19: "DIR + FILE" when found in an include directory
			section, file = "source", filepath.Base(f[len(f)-1])
			r.lines[file] = map[int]int64{}
			continue
		}
		m := cgRow.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		n, err := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
		if err != nil {
			t.Fatalf("cg_annotate: count %q", m[1])
		}
		what := m[2]
		switch {
		case what == "PROGRAM TOTALS":
			r.total = n
		case section == "functions":
			fl, fn, ok := strings.Cut(what, ":")
			switch {
			case ok && fn == "": // 3.22: the file of the functions below
				file = fl
				continue
			case !ok:
				fl, fn = file, what
			}
			if fn != "<unspecified>" { // 3.22: the file's before its first fn=
				r.rows = append(r.rows, fl+":"+fn)
				r.functions[fl+":"+fn] += n
			}
		case section == "source" && cgNoLine.MatchString(what):
			r.lines[file][0] += n
		case section == "source" && cgLine.MatchString(what):
			ln, _ := strconv.Atoi(cgLine.FindStringSubmatch(what)[2])
			r.lines[file][ln] += n
		}
	}
	return r
}

// cachegrindDir writes the test profile's cachegrind file by by, as
// cachegrind.out in a new directory, after the sources of its lines (50
// lines each, "src FILE N").
func cachegrindDir(t *testing.T, by By) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"a.c", "a.h", "b.c"} {
		var src strings.Builder
		for i := 1; i <= 50; i++ {
			fmt.Fprintf(&src, "src %s %d\n", f, i)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(src.String()), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Rename(writeFile(t, dir, testProfile(), "cachegrind", by), filepath.Join(dir, "cachegrind.out")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestCgAnnotate checks what cg_annotate (Valgrind's) shows of the
// cachegrind output, event by event (--show and --sort): the profile's
// totals, each function's self counters (its lines in a.h a row of their
// own), rows sorted by the event, and, in the annotated sources, each
// file's lines adding up to its functions' rows, with the listed
// references at their lines.
func TestCgAnnotate(t *testing.T) {
	p := testProfile()
	dir := cachegrindDir(t, ByFunction)
	text, err := os.ReadFile(filepath.Join(dir, "cachegrind.out"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"desc: memspy profile of ./prog (valgrind)\n", " L1Dm=l1d_misses ", "\ncmd: ./prog\nevents: L1Dacc L1Dhit L1Dm ",
		" L2st Stall Ir\nfl=a.c\nfn=f\n", "\nfl=a.h\nfn=f\n3 7 4 3 ", "\nsummary: 38 26 12 "} {
		if !strings.Contains(string(text), l) {
			t.Errorf("no %q in\n%s", l, text)
		}
	}
	for _, tc := range []struct{ event, name string }{
		{"L1Dacc", "l1d_accesses"}, {"L1Dm", "l1d_misses"}, {"L2cold", "l2_cold"}, {"L2st", "l2_stall_cycles"},
		{"Stall", "stall_cycles"}, {"Ir", "instructions"},
	} {
		r := cgAnnotate(t, dir, "--show="+tc.event, "--sort="+tc.event, "--threshold=0", "--context=1")
		total, byFunc := int64(0), map[string]int64{}
		for _, f := range p.Functions {
			total += want(f.Levels, f.Instructions)[tc.name]
		}
		if r.total != total {
			t.Errorf("%s: total %d, want %d", tc.event, r.total, total)
		}
		for row, n := range r.functions {
			byFunc[row[strings.LastIndexByte(row, ':')+1:]] += n
		}
		if len(r.functions) != 3 || len(byFunc) != 2 {
			t.Errorf("%s: rows %v", tc.event, r.functions)
		}
		for _, f := range p.Functions {
			if w := want(f.Levels, f.Instructions)[tc.name]; byFunc[f.Name] != w {
				t.Errorf("%s: %s %d, want %d", tc.event, f.Name, byFunc[f.Name], w)
			}
		}
		for i := 1; i < len(r.rows); i++ {
			if a, b := r.functions[r.rows[i-1]], r.functions[r.rows[i]]; a < b {
				t.Errorf("%s: %s (%d) before %s (%d)", tc.event, r.rows[i-1], a, r.rows[i], b)
			}
		}
		if len(r.lines) != 3 {
			t.Errorf("%s: annotated files %v", tc.event, r.lines)
		}
		for file, lines := range r.lines {
			var sum, rows int64
			for _, n := range lines {
				sum += n
			}
			for row, n := range r.functions {
				if strings.HasPrefix(row, file+":") {
					rows += n
				}
			}
			if sum != rows {
				t.Errorf("%s: the lines of %s add up to %d, its functions to %d", tc.event, file, sum, rows)
			}
		}
		for file, r0 := range map[string]int{"a.c": 0, "a.h": 1} {
			ref := p.References[r0]
			if w := want(ref.Levels, 0)[tc.name]; r.lines[file][ref.Line] != w {
				t.Errorf("%s: %s:%d %d, want %d", tc.event, file, ref.Line, r.lines[file][ref.Line], w)
			}
		}
	}
}

// TestCgAnnotateByObject checks what cg_annotate shows of the cachegrind
// output by object: each object's counters (A at its allocation site,
// a.c:40; B, a global, at no file), the profile's totals.
func TestCgAnnotateByObject(t *testing.T) {
	p := testProfile()
	dir := cachegrindDir(t, ByObject)
	for _, tc := range []struct{ event, name string }{{"L1Dacc", "l1d_accesses"}, {"L1Dm", "l1d_misses"}, {"L2cold", "l2_cold"}, {"Stall", "stall_cycles"}} {
		r := cgAnnotate(t, dir, "--show="+tc.event, "--sort="+tc.event, "--threshold=0")
		a, b := want(p.Objects[0].Levels, 0)[tc.name], want(p.Objects[1].Levels, 0)[tc.name]
		if r.total != a+b || r.functions["a.c:A"] != a || r.functions["???:B"] != b || len(r.functions) != 2 || r.lines["a.c"][40] != a {
			t.Errorf("%s: total %d, objects %v, a.c's lines %v; want A %d, B %d", tc.event, r.total, r.functions, r.lines["a.c"], a, b)
		}
	}
	if _, err := exec.Command(cgTool(t, "cg_annotate"), "--show=Ir", filepath.Join(dir, "cachegrind.out")).CombinedOutput(); err == nil {
		t.Errorf("cg_annotate shows instructions by object")
	}
}

// TestCgDiffMerge checks that cg_diff and cg_merge read two cachegrind
// outputs and cg_annotate theirs: the difference of the instructions of
// each function, and their sum.
func TestCgDiffMerge(t *testing.T) {
	diff, merge := cgTool(t, "cg_diff"), cgTool(t, "cg_merge")
	dir := t.TempDir()
	before := writeFile(t, dir, testProfile(), "cachegrind", ByFunction)
	p := testProfile()
	p.Functions[0].Instructions, p.Functions[1].Instructions = 90, 70
	after := writeFile(t, t.TempDir(), p, "cachegrind", ByFunction)
	out, err := exec.Command(diff, before, after).Output()
	if err != nil {
		t.Fatalf("cg_diff: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cachegrind.out"), out, 0o666); err != nil {
		t.Fatal(err)
	}
	r := cgAnnotate(t, dir, "--show=Ir", "--sort=Ir", "--threshold=0", "--auto=no")
	if r.total != 10 || r.functions["a.c:f"] != -10 || r.functions["b.c:g"] != 20 {
		t.Errorf("cg_diff: instructions %d, by function %v", r.total, r.functions)
	}
	if out, err := exec.Command(merge, "-o", filepath.Join(dir, "cachegrind.out"), before, after).CombinedOutput(); err != nil {
		t.Fatalf("cg_merge: %v\n%s", err, out)
	}
	r = cgAnnotate(t, dir, "--show=Ir", "--sort=Ir", "--threshold=0", "--auto=no")
	if r.total != 310 || r.functions["a.c:f"] != 190 || r.functions["b.c:g"] != 120 {
		t.Errorf("cg_merge: instructions %d, by function %v", r.total, r.functions)
	}
}
