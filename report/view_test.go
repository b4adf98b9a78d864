package report

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/profile"
)

// viewText renders view name of p, failing the test on an error.
func viewText(t *testing.T, p *profile.Profile, name string, opt ViewOptions) string {
	t.Helper()
	var b strings.Builder
	if err := View(&b, p, name, opt); err != nil {
		t.Fatalf("View(%s, %+v): %v", name, opt, err)
	}
	return b.String()
}

// cellSep separates the cells of a line of a text table.
var cellSep = regexp.MustCompile(`\s{2,}`)

// cells splits a line of a text table (after its indent) into its cells,
// two or more spaces apart.
func cells(line string) []string { return cellSep.Split(strings.TrimSpace(line), -1) }

// rowsOf returns the cells of the lines of text whose first cell is one
// of the names, in order of appearance.
func rowsOf(text string, names ...string) [][]string {
	var rows [][]string
	for _, line := range strings.Split(text, "\n") {
		if c := cells(line); slices.Contains(names, c[0]) {
			rows = append(rows, c)
		}
	}
	return rows
}

// firstColumn returns the first field of each row.
func firstColumn(rows [][]string) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r[0])
	}
	return out
}

// inOrder checks that the substrings appear in text in this order.
func inOrder(t *testing.T, text string, subs ...string) {
	t.Helper()
	at := 0
	for _, s := range subs {
		i := strings.Index(text[at:], s)
		if i < 0 {
			t.Errorf("%q missing (or out of order) in\n%s", s, text)
			return
		}
		at += i + len(s)
	}
}

func TestViewsList(t *testing.T) {
	want := []string{"processes", "overview", "calls", "processors", "threads", "sync", "numa", "timeline", "stalls", "lines", "data", "detail", "evictors", "sharing", "invalidators", "refs", "advice"}
	if got := Views(); !slices.Equal(got, want) {
		t.Errorf("Views() = %v, want %v", got, want)
	}
	for _, v := range want {
		if ViewHelp(v) == "" {
			t.Errorf("no help for view %s", v)
		}
	}
}

func TestOverview(t *testing.T) {
	got := viewText(t, testProfile(), "overview", ViewOptions{})
	want := `cycles by function: compute (#) and memory stall (=)
  compute: one cycle per instruction; stall: each miss waits for the level below (L1I miss 12, L1D miss 12, L2 miss 200 cycles)
  function         compute cycles  compute share  stall cycles  stall share  total cycles   share
  matmul                  500,000          14.8%     1,532,000        45.3%     2,032,000   60.1%  ##########==============================
  update (region)         200,000           5.9%       768,000        22.7%       968,000   28.6%  ####===============
  saxpy                   100,000           3.0%       231,200         6.8%       331,200    9.8%  ##=====
  main                     50,000           1.5%           636         0.0%        50,636    1.5%  #
  total                   850,000          25.1%     2,531,836        74.9%     3,381,836  100.0%
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestOverviewInclusive(t *testing.T) {
	p := testProfile()
	got := viewText(t, p, "overview", ViewOptions{Inclusive: true})
	// main does little itself but calls everything: it ranks first.
	want := `inclusive cycles by function (with their callees): compute (#) and memory stall (=)
  compute: one cycle per instruction; stall: each miss waits for the level below (L1I miss 12, L1D miss 12, L2 miss 200 cycles)
  inclusive: a function's cycles and those of everything it called and of the regions in it, so the rows overlap and their shares need not add up to 100%; shares are of the whole run's cycles (the last row: the sum of every function's own cycles)
  function         compute cycles  compute share  stall cycles  stall share  total cycles   share
  main                    850,000          25.1%     2,531,836        74.9%     3,381,836  100.0%  ##########==============================
  matmul                  500,000          14.8%     1,532,000        45.3%     2,032,000   60.1%  ######==================
  update (region)         200,000           5.9%       768,000        22.7%       968,000   28.6%  ##=========
  saxpy                   100,000           3.0%       231,200         6.8%       331,200    9.8%  #===
  whole run               850,000          25.1%     2,531,836        74.9%     3,381,836  100.0%
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	got = viewText(t, p, "overview", ViewOptions{Inclusive: true, Format: "csv"})
	if recs := readCSV(t, got); len(recs) != 5 || !slices.Equal(recs[1], []string{"main", "850000", recs[1][2], "2531836", recs[1][4], "3381836", "1"}) {
		t.Errorf("inclusive overview CSV:\n%s", got)
	}
	// A function without inclusive counters among others is not known.
	p.Functions[slices.IndexFunc(p.Functions, func(f profile.Function) bool { return f.Name == "matmul" })].Inclusive = nil
	got = viewText(t, p, "overview", ViewOptions{Inclusive: true})
	if row := rowsOf(got, "matmul")[0]; !slices.Equal(row, cells("matmul  -  -  -  -  -  -")) {
		t.Errorf("matmul without inclusive counters %q:\n%s", row, got)
	}
	if names := firstColumn(rowsOf(got, "main", "matmul", "update (region)", "saxpy")); !slices.Equal(names,
		[]string{"main", "update (region)", "saxpy", "matmul"}) {
		t.Errorf("rows %v, want matmul last", names)
	}
	// A profile without any.
	for i := range p.Functions {
		p.Functions[i].Inclusive = nil
	}
	if err := View(&strings.Builder{}, p, "overview", ViewOptions{Inclusive: true}); err != ErrNoInclusive {
		t.Errorf("inclusive overview without inclusive counters: %v", err)
	}
}

func TestOverviewTopAndUnknownCompute(t *testing.T) {
	p := testProfile()
	p.Machine.Caches = p.Machine.Caches[1:] // no cache holds instructions
	p.Machine.Caches[1].Holds = machine.Data
	got := viewText(t, p, "overview", ViewOptions{Top: 2})
	if !strings.Contains(got, "no cache holds instructions: compute cycles are not known (-)") || !strings.Contains(got, "top 2 of 4") {
		t.Errorf("missing notes:\n%s", got)
	}
	rows := rowsOf(got, "matmul", "update (region)", "saxpy", "main", "total")
	if names := firstColumn(rows); !slices.Equal(names, []string{"matmul", "update (region)", "total"}) {
		t.Fatalf("rows %v, want matmul, update, total:\n%s", names, got)
	}
	if rows[0][1] != "-" || rows[0][2] != "-" || rows[2][1] != "-" {
		t.Errorf("compute cycles not shown as unknown:\n%s", got)
	}
	// The total still covers every function.
	if rows[2][3] != "2,531,836" {
		t.Errorf("total stall %s, want 2,531,836", rows[2][3])
	}
}

func TestBar(t *testing.T) {
	for _, c := range []struct {
		compute, stall, biggest uint64
		want                    string
	}{
		{1, 3, 4, strings.Repeat("#", 10) + strings.Repeat("=", 30)},
		{0, 0, 4, ""},
		{2, 0, 4, strings.Repeat("#", 20)},
		{0, 0, 0, ""},
	} {
		if got := bar(c.compute, c.stall, c.biggest); got != c.want {
			t.Errorf("bar(%d, %d, %d) = %q, want %q", c.compute, c.stall, c.biggest, got, c.want)
		}
	}
}

func TestStalls(t *testing.T) {
	got := viewText(t, testProfile(), "stalls", ViewOptions{})
	inOrder(t, got, "stall cycles by function × object", "stall cycles by object", "stall cycles by function\n")
	parts := strings.Split(got, "\n\n")
	if len(parts) != 3 {
		t.Fatalf("%d tables, want 3:\n%s", len(parts), got)
	}
	objects := []string{"B", "particles", "A", "x", "y", "C", "buf"}
	pairs := rowsOf(parts[0], "matmul", "update (region)", "saxpy", "main")
	var pairObjects []string
	for _, r := range pairs {
		pairObjects = append(pairObjects, r[1])
	}
	if !slices.Equal(pairObjects, objects) {
		t.Errorf("pairs ranked %v, want %v", pairObjects, objects)
	}
	if !slices.Equal(pairs[0], cells("matmul  B  1,040,000  41.1%  100,000  20,000  20.0000%  2,000  18,000  0")) {
		t.Errorf("first pair row %q", pairs[0])
	}
	if names := firstColumn(rowsOf(parts[1], objects...)); !slices.Equal(names, objects) {
		t.Errorf("objects ranked %v, want %v", names, objects)
	}
	if row := rowsOf(parts[1], "x")[0]; !slices.Equal(row, cells("x  global  8 KiB  121,600  4.8%  20,000  8,000  40.0000%  128  7,872  0")) {
		t.Errorf("object x row %q", row)
	}
	fns := rowsOf(parts[2], "matmul", "update (region)", "saxpy", "main")
	if names := firstColumn(fns); !slices.Equal(names, []string{"matmul", "update (region)", "saxpy", "main"}) {
		t.Fatalf("functions ranked %v", names)
	}
	if !slices.Equal(fns[0], cells("matmul  1,532,000  1,532,000  60.5%  250,000  26,000  10.4000%  5,000  21,000  0")) {
		t.Errorf("function matmul row %q", fns[0])
	}
	// main ranks by its own stall cycles; its inclusive ones are the run's.
	if !slices.Equal(fns[3], cells("main  2,531,836  636  0.0%  12  3  25.0000%  3  0  0")) {
		t.Errorf("function main row %q", fns[3])
	}
	if !strings.Contains(parts[2], "  function         inclusive stall  stall cycles  share") {
		t.Errorf("by function header:\n%s", parts[2])
	}
}

func TestLines(t *testing.T) {
	p := testProfile()
	got := viewText(t, p, "lines", ViewOptions{})
	want := `stall cycles by source line
  misses and causes at L1D; stall cycles over every cache (share: of the run's 2,531,836)
  file:line  function         stall cycles  share  accesses  misses  miss rate   cold  replacement  invalidation  spatial use
  mm.c:12    matmul              1,040,000  41.1%   100,000  20,000   20.0000%  2,000       18,000             0       100.0%
  part.c:20  update (region)       768,000  30.3%    10,000   4,000   40.0000%  3,600          400             0        25.0%
  mm.c:11    matmul                460,000  18.2%   100,000   5,000    5.0000%  2,000        3,000             0       100.0%
  saxpy.c:5  saxpy                 231,200   9.1%    40,000  15,000   37.5000%    256       14,744             0       100.0%
  mm.c:13    matmul                 32,000   1.3%    50,000   1,000    2.0000%  1,000            0             0       100.0%
  main.c:52  main                      424   0.0%         7       2   28.5714%      2            0             0       100.0%
  main.c:40  main                      212   0.0%         5       1   20.0000%      1            0             0       100.0%
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	got = viewText(t, p, "lines", ViewOptions{Function: "matmul", Top: 2})
	inOrder(t, got, "stall cycles by source line of matmul\n", "top 2 of 3 (--top to see more)")
	if names := firstColumn(rowsOf(got, "mm.c:11", "mm.c:12", "mm.c:13", "saxpy.c:5")); !slices.Equal(names, []string{"mm.c:12", "mm.c:11"}) {
		t.Errorf("lines of matmul %v:\n%s", names, got)
	}
	// CSV and JSON name the file by its path.
	recs := readCSV(t, viewText(t, p, "lines", ViewOptions{Format: "csv"}))
	if !slices.Equal(recs[0], []string{"file_line", "function", "stall_cycles", "share", "accesses", "misses", "miss_rate", "cold",
		"replacement", "invalidation", "spatial_use"}) || len(recs) != 8 ||
		!slices.Equal(recs[2], []string{"/home/u/sim/part.c:20", "update (region)", "768000", recs[2][3], "10000", "4000", "0.4", "3600", "400",
			"0", "0.25"}) {
		t.Errorf("lines CSV %q", recs)
	}
	var tables []jsonTable
	if err := json.Unmarshal([]byte(viewText(t, p, "lines", ViewOptions{Function: "saxpy", Format: "json"})), &tables); err != nil {
		t.Fatal(err)
	}
	if len(tables) != 1 || tables[0].Title != "stall cycles by source line of saxpy" || len(tables[0].Rows) != 1 {
		t.Fatalf("lines JSON %+v", tables)
	}
	if r := tables[0].Rows[0]; r[0] != "saxpy.c:5" || r[2] != float64(231200) || r[5] != float64(15000) || r[10] != float64(1) {
		t.Errorf("saxpy.c:5 in JSON %v", r)
	}
	// Under --miss-only spatial use is not known.
	p.Options.MissOnly = true
	got = viewText(t, p, "lines", ViewOptions{Top: 1})
	if row := rowsOf(got, "mm.c:12")[0]; !slices.Equal(row, cells("mm.c:12  matmul  1,040,000  41.1%  -  20,000  -  2,000  18,000  0  -")) ||
		!strings.Contains(got, missOnlyNote) {
		t.Errorf("lines under --miss-only %q:\n%s", row, got)
	}
	// A trace without symbols has no lines.
	p.Lines = nil
	if err := View(&strings.Builder{}, p, "lines", ViewOptions{}); err != ErrNoLines {
		t.Errorf("lines of a profile without lines: %v", err)
	}
	if ErrNoLines.Error() != "the profile has no source lines: run with debugging information (-g) or give sim --binary" {
		t.Errorf("ErrNoLines = %q", ErrNoLines)
	}
}

func TestData(t *testing.T) {
	got := viewText(t, testProfile(), "data", ViewOptions{Function: "matmul"})
	inOrder(t, got, "matmul by object", "matmul: 1,532,000 stall cycles (60.5% of the run)")
	rows := rowsOf(got, "A", "B", "C", "x")
	if names := firstColumn(rows); !slices.Equal(names, []string{"B", "A", "C"}) {
		t.Errorf("objects of matmul %v, want B A C:\n%s", names, got)
	}
	// Shares of matmul's stall cycles: 1,040,000 / 1,532,000.
	if !slices.Equal(rows[0], cells("B  heap  2 MiB  4 KiB 97.0%  1,040,000  67.9%  100,000  20,000  20.0000%  2,000  18,000  0  100.0%")) {
		t.Errorf("row B %q", rows[0])
	}
	if !slices.Equal(rows[2], cells("C  heap  2 MiB  0 B 98.0%  32,000  2.1%  50,000  1,000  2.0000%  1,000  0  0  100.0%")) {
		t.Errorf("row C %q", rows[2])
	}
	// No strides known.
	got = viewText(t, testProfile(), "data", ViewOptions{Function: "main"})
	if row := rowsOf(got, "buf")[0]; !slices.Equal(row[:4], []string{"buf", "freed", "4 KiB", "-"}) {
		t.Errorf("row buf %q", row)
	}
}

func TestDetail(t *testing.T) {
	p := testProfile()
	got := viewText(t, p, "detail", ViewOptions{Object: "B"})
	inOrder(t, got, "B: accesses by cache", "heap object, 2 MiB", "allocated at mm.c:30", "1,040,000 stall cycles in all",
		"B: causes of misses and locality by cache")
	parts := strings.Split(got, "\n\n")
	access, why := rowsOf(parts[0], "L1D", "L2"), rowsOf(parts[1], "L1D", "L2")
	if len(access) != 2 || len(why) != 2 {
		t.Fatalf("want one row per level:\n%s", got)
	}
	if !slices.Equal(access[0], cells("L1D  100,000  80,000  20,000  20.0000%  75,000  25,000  15,000  5,000  240,000")) ||
		!slices.Equal(access[1], cells("L2  20,000  16,000  4,000  20.0000%  15,000  5,000  3,000  1,000  800,000")) {
		t.Errorf("access rows %q", access)
	}
	if !slices.Equal(why[0], cells("L1D  20,000  2,000  18,000  0  60,000  20,000  1,280,000  1,280,000  100.0%")) {
		t.Errorf("why row %q", why[0])
	}
	// The pair, by full name of the object.
	got = viewText(t, p, "detail", ViewOptions{Object: "particles", Function: "update"})
	if !strings.Contains(got, "update × particles: accesses by cache") {
		t.Errorf("pair detail:\n%s", got)
	}
	if row := rowsOf(got, "L1D")[1]; row[len(row)-1] != "25.0%" {
		t.Errorf("spatial use of particles %q, want 25.0%%", row)
	}
	got = viewText(t, p, "detail", ViewOptions{Object: "B (mm.c:30 ← main)"})
	if !strings.HasPrefix(got, "B: accesses by cache") {
		t.Errorf("object by full name:\n%s", got)
	}
	// A function alone.
	got = viewText(t, p, "detail", ViewOptions{Function: "saxpy"})
	if !strings.HasPrefix(got, "saxpy: accesses by cache") {
		t.Errorf("function detail:\n%s", got)
	}
}

func TestEvictors(t *testing.T) {
	got := viewText(t, testProfile(), "evictors", ViewOptions{Object: "x"})
	want := `lines of x evicted at L1D, by the object whose fill evicted them
  global object, 8 KiB
  7,500 lines evicted; 8,000 misses, 7,872 of them replacements
  evicted by  kind    lines   share  interference
  y           global  7,000   93.3%  cross
  x           global    500    6.7%  self
  total               7,500  100.0%
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	got = viewText(t, testProfile(), "evictors", ViewOptions{Object: "B"})
	rows := rowsOf(got, "A", "B", "C")
	if len(rows) != 3 || !slices.Equal(rows[0], cells("B  heap  15,000  83.3%  self")) || rows[1][0] != "A" || rows[2][0] != "C" {
		t.Errorf("evictors of B:\n%s", got)
	}
}

func TestRefs(t *testing.T) {
	p := testProfile()
	got := viewText(t, p, "refs", ViewOptions{})
	rows := rowsOf(got, "0x401100", "0x401080", "0x4010c0", "0x401200", "0x401210", "0x401300", "0x401400", "0x401420")
	want := []string{"0x401100", "0x401200", "0x401210", "0x401080", "0x401300", "0x4010c0", "0x401420", "0x401400"}
	if names := firstColumn(rows); !slices.Equal(names, want) {
		t.Errorf("references ranked %v, want %v", names, want)
	}
	for i, want := range [][]string{
		cells("0x401100  mm.c:12:9  0  matmul  B  read  4 KiB 97.0%, 8 B 3.0%  100,000  80,000  20,000  20.0000%  60,000  20,000  100.0%"),
		// Two references of one line, by column.
		cells("0x401200  saxpy.c:5:14  1  saxpy  x  read  4 B 100.0%  20,000  12,000  8,000  40.0000%  9,000  3,000  100.0%"),
		cells("0x401210  saxpy.c:5:3  0  saxpy  y  modify  4 B 100.0%  20,000  13,000  7,000  35.0000%  9,750  3,250  100.0%"),
		// A negative stride.
		cells("0x401080  mm.c:11  0  matmul  A  read  8 B 99.0%, -4 KiB 1.0%  100,000  95,000  5,000  5.0000%  71,250  23,750  100.0%"),
		// The base name of the file, two strides of three, a region.
		cells("0x401300  part.c:20  0  update (region)  particles  read  64 B 98.0%, -64 B 1.5%  10,000  6,000  4,000  40.0000%  4,500  1,500  25.0%"),
		// A stride of 0.
		cells("0x4010c0  mm.c:13  0  matmul  C  modify  0 B 98.0%, 8 B 2.0%  50,000  49,000  1,000  2.0000%  36,750  12,250  100.0%"),
		// No strides known.
		cells("0x401420  main.c:52  0  main  buf  write  -  7  5  2  28.5714%  3  2  100.0%"),
	} {
		if !slices.Equal(rows[i], want) {
			t.Errorf("reference %d: %q, want %q", i, rows[i], want)
		}
	}
	if strings.Contains(got, "←") {
		t.Errorf("evictors without --evictors:\n%s", got)
	}
	if strings.Contains(got, "leaves out") {
		t.Errorf("a note on omitted references in a profile that has none:\n%s", got)
	}
	p.OmittedReferences = &profile.OmittedReferences{References: 1234, Stats: profile.Stats{Misses: 56789}}
	if got := viewText(t, p, "refs", ViewOptions{}); !strings.Contains(got, "the profile leaves out 1,234 references, those with the fewest stall cycles (56,789 misses in all)") {
		t.Errorf("no note on the omitted references:\n%s", got)
	}
	// CSV and JSON: the file's path, every stride.
	recs := readCSV(t, viewText(t, p, "refs", ViewOptions{Format: "csv"}))
	if !slices.Equal(recs[0][:7], []string{"pc", "file_line", "pos", "function", "object", "kind", "strides"}) ||
		!slices.Equal(recs[5][:7], []string{"0x401300", "/home/u/sim/part.c:20", "0", "update (region)", "particles", "read",
			"64 B 98.0%, -64 B 1.5%, 128 B 0.5%"}) || recs[7][6] != "" {
		t.Errorf("refs CSV %q", recs)
	}
	var tables []jsonTable
	if err := json.Unmarshal([]byte(viewText(t, p, "refs", ViewOptions{Format: "json"})), &tables); err != nil {
		t.Fatal(err)
	}
	if r := tables[0].Rows[1]; r[1] != "saxpy.c:5:14" || r[2] != float64(1) || tables[0].Rows[7][6] != nil {
		t.Errorf("refs JSON rows %v", tables[0].Rows)
	}
	got = viewText(t, p, "refs", ViewOptions{Evictors: true, Top: 2})
	inOrder(t, got, "0x401100  mm.c:12:9", "\n      ← 0x401100  mm.c:12:9     B  15,000  83.3%\n", "← 0x401080  mm.c:11       A   2,000  11.1%",
		"0x401200  saxpy.c:5:14", "← 0x401210  saxpy.c:5:3   y   7,000  93.3%", "← 0x401200  saxpy.c:5:14  x     500   6.7%")
	if strings.Contains(got, "0x4010c0") {
		t.Errorf("more than 2 evictors per reference:\n%s", got)
	}
	if strings.Contains(got, "0x401300") {
		t.Errorf("more than 2 references:\n%s", got)
	}
	got = viewText(t, p, "refs", ViewOptions{Object: "buf"})
	if names := firstColumn(rowsOf(got, want...)); !slices.Equal(names, []string{"0x401420", "0x401400"}) {
		t.Errorf("references of buf %v:\n%s", names, got)
	}
}

func TestAdvise(t *testing.T) {
	as := Advise(testProfile())
	type want struct {
		kind, object, function string
		message                []string
		evidence               []string
	}
	wants := []want{
		{AdviceUseAfterFree, "buf", "main", []string{"use after free: 12 accesses to freed memory (buf)", "main.c:52, main.c:40"},
			[]string{"main.c:52 (0x401420 in main, write): 7 accesses", "main.c:40 (0x401400 in main, read): 5 accesses"}},
		{AdviceSelfInterference, "B", "matmul", []string{"B interferes with itself", "blocking", "padding the leading dimension"},
			[]string{"15,000 of the 18,000 evicted lines of B were evicted by fills of B (83.3%)", "18,000 of its 20,000 misses are replacements (90.0%)",
				"B is 2 MiB, 64.0× L1D (32 KiB)"}},
		{AdviceSpatialLocality, "particles", "update", []string{"only 25% of each line of particles",
			"update walks it 64 B at a time, a line or more, so that each reference lands on a new line", "interchange the loops",
			"block them", "struct of arrays"},
			[]string{"64,000 of the 256,000 bytes its misses fetched were used (25.0%)",
				"most common stride of update's references to particles: 64 B (98.0% of 9,999 strides): each reference lands on a new 64 B line"}},
		{AdviceCapacity, "A", "matmul", []string{"working set exceeds L1D"},
			[]string{"3,000 of its 5,000 misses are replacements (60.0%)", "at most B, 33.3%"}},
		{AdviceCrossInterference, "x", "saxpy", []string{"x and y map to the same sets of L1D", "evict each other's lines", "pad or realign"},
			[]string{"7,000 of the 7,500 evicted lines of x were evicted by fills of y (93.3%)",
				"6,500 of the 6,800 evicted lines of y were evicted by fills of x (95.6%)"}},
	}
	if len(as) != len(wants) {
		var kinds []string
		for _, a := range as {
			kinds = append(kinds, a.Kind+" "+a.Object)
		}
		t.Fatalf("advice %v, want %d", kinds, len(wants))
	}
	for i, w := range wants {
		a := as[i]
		if a.Kind != w.kind || a.Object != w.object || a.Function != w.function {
			t.Errorf("advice %d: %s on %s in %s, want %s on %s in %s", i, a.Kind, a.Object, a.Function, w.kind, w.object, w.function)
		}
		for _, m := range w.message {
			if !strings.Contains(a.Message, m) {
				t.Errorf("advice %d (%s): message %q lacks %q", i, a.Kind, a.Message, m)
			}
		}
		for _, e := range w.evidence {
			if !slices.ContainsFunc(a.Evidence, func(s string) bool { return strings.Contains(s, e) }) {
				t.Errorf("advice %d (%s): evidence %q lacks %q", i, a.Kind, a.Evidence, e)
			}
		}
	}
	if as[1].StallCycles != 1040000 {
		t.Errorf("stall cycles of B's advice %d", as[1].StallCycles)
	}
}

func TestAdviseThresholds(t *testing.T) {
	// Without the machine the size and line evidence is left out, and
	// below 2% of the stall cycles nothing is said.
	p := testProfile()
	p.Machine = nil
	for _, a := range Advise(p) {
		for _, e := range a.Evidence {
			if strings.Contains(e, "L1D (") {
				t.Errorf("size evidence without a machine: %q", e)
			}
		}
	}
	// A dominant self evictor with few replacement misses is no
	// interference.
	p = testProfile()
	b := &p.Objects[slices.IndexFunc(p.Objects, func(o profile.Object) bool { return o.Name == "B" })]
	b.Causes.Cold, b.Causes.Replacement = 18000, 2000
	for _, a := range Advise(p) {
		if a.Object == "B" {
			t.Errorf("advice on B with 10%% replacements: %s", a.Kind)
		}
	}
	// Cold misses fetching twice an object's size: refetching.
	p = testProfile()
	c := &p.Objects[slices.IndexFunc(p.Objects, func(o profile.Object) bool { return o.Name == "particles" })]
	c.Size = 64 << 10
	c.Blocks = 9
	var found bool
	for _, a := range Advise(p) {
		if a.Object == "particles" && a.Kind == AdviceSpatialLocality {
			found = strings.Contains(a.Message, "fetched anew") &&
				slices.Contains(a.Evidence, "3,600 cold misses × 64 B lines = 225 KiB, for particles of 64 KiB in 9 blocks")
			if !found {
				t.Errorf("refetch advice %q %q", a.Message, a.Evidence)
			}
		}
	}
	if !found {
		t.Error("no refetch advice")
	}
	// A stride shorter than a line is evidence, but not the cause.
	p = testProfile()
	pr := &p.Pairs[slices.IndexFunc(p.Pairs, func(pr profile.Pair) bool { return pr.Object == "particles" })]
	pr.Strides = &profile.Strides{Samples: 9999, Top: []profile.Stride{{Bytes: -16, Count: 9000}}}
	found = false
	for _, a := range Advise(p) {
		if a.Object == "particles" && a.Kind == AdviceSpatialLocality {
			found = true
			if strings.Contains(a.Message, "lands on a new line") || !strings.Contains(a.Message, "reorganize it") ||
				!slices.Contains(a.Evidence, "most common stride of update's references to particles: -16 B (90.0% of 9,999 strides)") {
				t.Errorf("short stride advice %q %q", a.Message, a.Evidence)
			}
		}
	}
	// Without strides, no stride evidence.
	pr.Strides = nil
	for _, a := range Advise(p) {
		if a.Kind == AdviceSpatialLocality && slices.ContainsFunc(a.Evidence, func(e string) bool { return strings.Contains(e, "stride") }) {
			t.Errorf("stride evidence without strides %q", a.Evidence)
		}
	}
	if !found {
		t.Error("no spatial advice with a short stride")
	}
	// Misses only: no spatial use, so no spatial advice.
	p = testProfile()
	p.Options.MissOnly = true
	for _, a := range Advise(p) {
		if a.Kind == AdviceSpatialLocality {
			t.Errorf("spatial advice under --miss-only: %q", a.Message)
		}
		if a.Kind == AdviceUseAfterFree && !strings.Contains(a.Message, "3 misses to freed memory") {
			t.Errorf("use after free under --miss-only: %q", a.Message)
		}
	}
}

func TestAdviceView(t *testing.T) {
	got := viewText(t, testProfile(), "advice", ViewOptions{})
	inOrder(t, got, "advice on the top bottlenecks (L1D)", "use-after-free      buf        main", "advice: use after free",
		"evidence: main.c:52", "self-interference   B          matmul       1,040,000  41.1%", "advice: B interferes with itself",
		"evidence: B has 1,040,000 stall cycles", "spatial-locality", "capacity", "cross-interference")
}

func TestViewErrors(t *testing.T) {
	p := testProfile()
	for _, c := range []struct {
		view string
		opt  ViewOptions
		want string
	}{
		{"bogus", ViewOptions{}, `unknown view "bogus" (views: processes, overview, calls, processors, threads, sync, numa, timeline, stalls, lines, data, detail, evictors, sharing, invalidators, refs, advice)`},
		{"lines", ViewOptions{Function: "sxpy"}, `no function "sxpy" in the profile (did you mean "saxpy"?)`},
		{"stalls", ViewOptions{Format: "xml"}, `unknown format "xml" (formats: text, csv, json)`},
		{"data", ViewOptions{}, "view data needs a function (--function NAME); functions with the most stall cycles: matmul, update, saxpy, main"},
		{"data", ViewOptions{Function: "matmu"}, `no function "matmu" in the profile (did you mean "matmul"?)`},
		{"data", ViewOptions{Function: "zzzzzzzzzz"}, `no function "zzzzzzzzzz" in the profile`},
		{"detail", ViewOptions{}, "view detail needs an object (--object NAME); objects with the most stall cycles: B, particles, A, x, y"},
		{"detail", ViewOptions{Object: "partcles"}, `no object "partcles" in the profile (did you mean "particles"?)`},
		{"detail", ViewOptions{Object: "x", Function: "matmul"}, `function "matmul" never referenced object "x"`},
		{"evictors", ViewOptions{Function: "matmul"}, "view evictors needs an object (--object NAME)"},
		{"refs", ViewOptions{Object: "particle"}, `no object "particle" in the profile (did you mean "particles"?)`},
	} {
		err := View(&strings.Builder{}, p, c.view, c.opt)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("View(%s, %+v) = %v, want %q", c.view, c.opt, err, c.want)
		}
	}
	bare := &profile.Profile{Caches: p.Caches}
	for _, v := range Views() {
		want := ErrNoWhere
		switch v { // they need no where-and-why data, but several processors
		case "processes":
			want = nil
		case "processors":
			want = ErrOneProcessor
		case "threads", "sync":
			want = ErrOneProcessorTime
		case "numa":
			want = ErrOneNode
		case "timeline":
			want = ErrNoTimeline
		}
		if err := View(&strings.Builder{}, bare, v, ViewOptions{Function: "f", Object: "o"}); err != want {
			t.Errorf("view %s of a profile without where: %v", v, err)
		}
	}
	if ErrNoWhere.Error() != "the profile has no where-and-why data: run with --where" {
		t.Errorf("ErrNoWhere = %q", ErrNoWhere)
	}
}

func TestMissOnly(t *testing.T) {
	p := testProfile()
	p.Options.MissOnly = true
	got := viewText(t, p, "stalls", ViewOptions{})
	if !strings.Contains(got, missOnlyNote) {
		t.Errorf("no miss-only note:\n%s", got)
	}
	row := rowsOf(got, "B")[0]
	if !slices.Equal(row, cells("B  heap  2 MiB  1,040,000  41.1%  -  20,000  -  2,000  18,000  0")) {
		t.Errorf("object B under --miss-only %q", row)
	}
	got = viewText(t, p, "refs", ViewOptions{})
	if row := rowsOf(got, "0x401100")[0]; !slices.Equal(row[7:], cells("-  -  20,000  -  -  -  -")) {
		t.Errorf("reference under --miss-only %q", row)
	}
	got = viewText(t, p, "detail", ViewOptions{Object: "B", Format: "json"})
	var tables []jsonTable
	if err := json.Unmarshal([]byte(got), &tables); err != nil {
		t.Fatal(err)
	}
	if r := tables[0].Rows[0]; r[1] != nil || r[3] != float64(20000) {
		t.Errorf("JSON accesses %v, misses %v: want null and 20000", r[1], r[3])
	}
	got = viewText(t, p, "detail", ViewOptions{Object: "B", Format: "csv"})
	recs := readCSV(t, got)
	if r := recs[1]; r[0] != "L1D" || r[1] != "" || r[3] != "20000" {
		t.Errorf("CSV row %q: want accesses empty, misses 20000", r)
	}
	// The overview and evictors know all they show.
	if got := viewText(t, p, "evictors", ViewOptions{Object: "B"}); strings.Contains(got, missOnlyNote) {
		t.Errorf("miss-only note in evictors:\n%s", got)
	}
}

// jsonTable is the documented shape of a table in JSON.
type jsonTable struct {
	Title   string   `json:"title"`
	Notes   []string `json:"notes"`
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`
	Total   []any    `json:"total"`
}

// readCSV reads several tables of CSV.
func readCSV(t *testing.T, text string) [][]string {
	t.Helper()
	r := csv.NewReader(strings.NewReader(text))
	r.Comment = '#'
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatalf("CSV: %v\n%s", err, text)
	}
	return recs
}

func TestCSV(t *testing.T) {
	p := testProfile()
	// One table: plain CSV.
	got := viewText(t, p, "data", ViewOptions{Function: "matmul", Format: "csv"})
	recs, err := csv.NewReader(strings.NewReader(got)).ReadAll()
	if err != nil {
		t.Fatalf("%v\n%s", err, got)
	}
	header := []string{"object", "kind", "size", "stride", "stall_cycles", "share", "accesses", "misses", "miss_rate", "cold", "replacement",
		"invalidation", "spatial_use"}
	if !slices.Equal(recs[0], header) || len(recs) != 4 {
		t.Fatalf("CSV:\n%s", got)
	}
	if !slices.Equal(recs[1], []string{"B", "heap", "2097152", "4 KiB 97.0%", "1040000", recs[1][5], "100000", "20000", "0.2", "2000", "18000",
		"0", "1"}) {
		t.Errorf("row B %q", recs[1])
	}
	if f, err := strconv.ParseFloat(recs[1][5], 64); err != nil || f < 0.6788 || f > 0.6789 {
		t.Errorf("share %q, want 0.6788…", recs[1][5])
	}
	// Several tables: "# title" lines and blank lines between.
	got = viewText(t, p, "stalls", ViewOptions{Format: "csv"})
	if titles := regexp.MustCompile(`(?m)^# .*$`).FindAllString(got, -1); !slices.Equal(titles,
		[]string{"# stall cycles by function × object", "# stall cycles by object", "# stall cycles by function"}) {
		t.Errorf("titles %q", titles)
	}
	if !strings.Contains(got, "\n\n# stall cycles by object\nobject,kind,size,stall_cycles,") {
		t.Errorf("tables not separated:\n%s", got)
	}
	recs = readCSV(t, got)
	if len(recs) != 1+7+1+7+1+4 {
		t.Errorf("%d records, want 21", len(recs))
	}
	if !slices.Equal(recs[0][:3], []string{"function", "object", "stall_cycles"}) || recs[1][0] != "matmul" || recs[1][2] != "1040000" {
		t.Errorf("first table %q %q", recs[0], recs[1])
	}
	// The bar is text only, the evictors of references a table of their own.
	got = viewText(t, p, "overview", ViewOptions{Format: "csv"})
	if recs := readCSV(t, got); !slices.Equal(recs[0], []string{"function", "compute_cycles", "compute_share", "stall_cycles",
		"stall_share", "total_cycles", "share"}) || len(recs) != 5 {
		t.Errorf("overview CSV:\n%s", got)
	}
	got = viewText(t, p, "refs", ViewOptions{Evictors: true, Format: "csv"})
	recs = readCSV(t, got)
	i := slices.IndexFunc(recs, func(r []string) bool { return r[0] == "pc" && r[1] == "object" })
	if i < 0 || !slices.Equal(recs[i], []string{"pc", "object", "evictor_pc", "evictor_file_line", "evictor_object", "lines", "share"}) ||
		!slices.Equal(recs[i+1][:6], []string{"0x401100", "B", "0x401100", "mm.c:12:9", "B", "15000"}) {
		t.Errorf("evictor references CSV:\n%s", got)
	}
}

func TestJSON(t *testing.T) {
	p := testProfile()
	for _, v := range Views() {
		q := p
		switch v { // of several processors only
		case "processors", "invalidators":
			q = testMultiProfile()
		case "threads", "sync":
			q = testThreadProfile()
		case "numa":
			q = testNumaProfile()
		case "calls":
			q = withChain(p, "main", "matmul")
		}
		got := viewText(t, q, v, ViewOptions{Function: "matmul", Object: "B", Evictors: true, Format: "json"})
		var tables []jsonTable
		if err := json.Unmarshal([]byte(got), &tables); err != nil {
			t.Fatalf("view %s: %v\n%s", v, err, got)
		}
		for _, tb := range tables {
			if tb.Title == "" || len(tb.Columns) == 0 || tb.Rows == nil {
				t.Errorf("view %s: table %+v", v, tb)
			}
			for _, r := range tb.Rows {
				if len(r) != len(tb.Columns) {
					t.Errorf("view %s: row %v under columns %v", v, r, tb.Columns)
				}
			}
		}
	}
	got := viewText(t, p, "stalls", ViewOptions{Format: "json"})
	var tables []jsonTable
	if err := json.Unmarshal([]byte(got), &tables); err != nil {
		t.Fatal(err)
	}
	if len(tables) != 3 || tables[1].Title != "stall cycles by object" {
		t.Fatalf("tables %+v", tables)
	}
	o := tables[1]
	at := func(col string) int { return slices.Index(o.Columns, col) }
	if r := o.Rows[0]; r[at("object")] != "B" || r[at("stall_cycles")] != float64(1040000) || r[at("size")] != float64(2<<20) ||
		r[at("miss_rate")] != 0.2 {
		t.Errorf("row B %v (columns %v)", r, o.Columns)
	}
	got = viewText(t, p, "overview", ViewOptions{Format: "json"})
	tables = nil
	if err := json.Unmarshal([]byte(got), &tables); err != nil {
		t.Fatal(err)
	}
	if tot := tables[0].Total; len(tot) != 7 || tot[0] != "total" || tot[5] != float64(3381836) {
		t.Errorf("overview total %v", tot)
	}
	// No HTML escapes.
	p.Functions[0].Name = "<unknown>"
	got = viewText(t, p, "overview", ViewOptions{Format: "json"})
	if !strings.Contains(got, `"<unknown>"`) {
		t.Errorf("escaped JSON:\n%s", got)
	}
}

func TestWhereSummary(t *testing.T) {
	p := testProfile()
	var b strings.Builder
	if err := Text(&b, p); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	inOrder(t, got, "L1D (level 1", "  misses by cause: cold 8,859 (19.7%), replacement 36,144 (80.3%), invalidation 0 (0.0%)\n",
		"L2 (level 2", "misses by cause: cold 7,959", "memory:",
		"where and why (misses at L1D, stall cycles over every cache: 2,531,836):\n",
		"  function × object, most stall cycles first:\n",
		"    matmul    B             1,040,000  41.1%  20,000  2,000       18,000             0\n",
		"  evictions at L1D (lines of ← evicted by fills of):\n",
		"    B          18,000  ← B 83.3% (self), A 11.1%, C 5.6%\n",
		"    x           7,500  ← y 93.3%, x 6.7% (self)\n",
		"  advice", "    - use after free: 12 accesses", "    - B interferes with itself")
	if strings.Contains(got, "misses by cause: cold 8,859 (19.7%), replacement 36,144 (80.3%), invalidation 0 (0.0%)\n  function") {
		t.Error("the focus causes twice")
	}
	// At most 8 pairs.
	for i := range 6 {
		p.Pairs = append(p.Pairs, profile.Pair{Function: "f", Object: "o" + strconv.Itoa(i)})
	}
	b.Reset()
	Text(&b, p)
	if !strings.Contains(b.String(), "top 8 of 13") || strings.Count(b.String(), "\n    f ") != 1 {
		t.Errorf("summary pairs not cut to 8:\n%s", b.String())
	}
	// Nothing without where data.
	p = &profile.Profile{Caches: []profile.CacheStats{{Name: "L1D", Level: 1, Accesses: 1}}, Machine: &machine.Machine{}}
	b.Reset()
	Text(&b, p)
	if strings.Contains(b.String(), "where") || strings.Contains(b.String(), "cause") {
		t.Errorf("where summary without where data:\n%s", b.String())
	}
}

func TestTableText(t *testing.T) {
	tb := &Table{
		Title:   "t",
		Columns: []Column{{Name: "name"}, {Name: "n"}, {Name: "bar", TextOnly: true}, {Name: "why", Below: true}},
		Rows: []Row{
			{Cells: []Cell{textCell("a"), countCell(1234), textCell("##"), textCell("because")}},
			{Cells: []Cell{textCell("long name"), unknownCell(), textCell(""), textCell("")}},
		},
	}
	var b strings.Builder
	writeText(&b, tb, "")
	want := "t\n" +
		"  name           n  bar\n" +
		"  a          1,234  ##\n" +
		"      why: because\n" +
		"  long name      -\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	writeText(&b, &Table{Title: "empty", Columns: []Column{{Name: "x"}}}, "")
	if b.String() != "empty\n  (none)\n" {
		t.Errorf("empty table %q", b.String())
	}
	if k := (Column{Name: "evictor file:line"}).Key(); k != "evictor_file_line" {
		t.Errorf("key %q", k)
	}
}

func TestSuggest(t *testing.T) {
	names := []string{"matmul", "main", "update", "saxpy", "matmul_blocked"}
	if got := suggest("matmu", names); got != ` (did you mean "matmul", "matmul_blocked"?)` {
		t.Errorf("suggest(matmu) = %q", got)
	}
	if got := suggest("qqqqqqqqq", names); got != "" {
		t.Errorf("suggest(qqqqqqqqq) = %q", got)
	}
	if d := editDistance("kitten", "sitting"); d != 3 {
		t.Errorf("editDistance = %d", d)
	}
}

// The views of data leave the code's object out; the functions keep its
// stall cycles.
func TestDataViewsLeaveCodeOut(t *testing.T) {
	st := func(stall uint64) profile.Stats { return profile.Stats{Accesses: 10, Misses: 2, StallCycles: stall} }
	p := &profile.Profile{Version: profile.Version, Tool: "memspy", Options: profile.Options{Where: true}, Complete: true,
		Caches:    []profile.CacheStats{{Name: "L1D", Level: 1}},
		Functions: []profile.Function{{Name: "f", Stats: st(300)}},
		Objects:   []profile.Object{{Name: "<code>", FullName: "<code>", Kind: "code", Stats: st(200)}, {Name: "a", FullName: "a", Kind: "global", Stats: st(100)}},
		Pairs:     []profile.Pair{{Function: "f", Object: "<code>", Stats: st(200)}, {Function: "f", Object: "a", Stats: st(100)}},
	}
	var b strings.Builder
	if err := View(&b, p, "stalls", ViewOptions{Format: "csv"}); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); strings.Contains(out, "<code>") || !strings.Contains(out, "\nf,a,100,") || !strings.Contains(out, "\nf,,300,1,") {
		t.Errorf("stalls view:\n%s", out)
	}
	if len(p.Objects) != 2 {
		t.Errorf("the view changed the profile: %d objects", len(p.Objects))
	}
}

// The views of pairs say when the profile left pairs out.
func TestOmittedPairsNotes(t *testing.T) {
	p := testProfile()
	for _, view := range []string{"stalls", "data"} {
		if got := viewText(t, p, view, ViewOptions{Function: "matmul"}); strings.Contains(got, "leaves out") {
			t.Errorf("%s: a note on pairs left out of a profile that has none:\n%s", view, got)
		}
	}
	p.OmittedPairs = &profile.OmittedPairs{Pairs: 1234, Stats: profile.Stats{StallCycles: 56789}}
	for view, note := range map[string]string{
		"stalls": "the profile leaves out 1,234 function × object pairs, those with the fewest stall cycles (56,789 stall cycles in all",
		"data":   "the profile leaves out 1,234 function × object pairs, those with the fewest stall cycles (56,789 stall cycles in all): objects of matmul may be among them",
	} {
		if got := viewText(t, p, view, ViewOptions{Function: "matmul"}); !strings.Contains(got, note) {
			t.Errorf("%s: no note %q:\n%s", view, note, got)
		}
	}
	err := View(io.Discard, p, "detail", ViewOptions{Function: "saxpy", Object: "B"})
	if err == nil || !strings.Contains(err.Error(), "the profile does not list the pair saxpy × B") {
		t.Errorf("detail of a pair not listed: %v", err)
	}
}
