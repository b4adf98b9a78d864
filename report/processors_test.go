package report

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/profile"
)

// text renders the summary of p, failing the test on an error.
func text(t *testing.T, p *profile.Profile) string {
	t.Helper()
	var b strings.Builder
	if err := Text(&b, p); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// summaryProcessorTable is the processor table of testMultiProfile's
// summary.
const summaryProcessorTable = `
processors (each with its own L1I, L1D):
  4 processors ran no thread: 4-7
  processor  threads  L1I accesses  L1I misses  L1I miss rate  L1D accesses  L1D misses  L1D miss rate  upgrades  interventions  invalidations sent  invalidations received
          0  1, 5          340,000          40        0.0118%       304,806      28,015        9.1911%        50              5               1,000                  10,043
          1  2             170,000          20        0.0118%       152,402      14,006        9.1902%       100             10               1,000                   5,021
          2  3             170,000          20        0.0118%       152,402      14,006        9.1902%       200             20               2,000                   5,021
          3  4             170,000          20        0.0118%       152,402      14,006        9.1902%       300             30               3,000                   5,021
      total                850,000         100        0.0118%       762,012      70,033        9.1905%       650             65               7,000                  25,106

where and why`

func TestTextProcessors(t *testing.T) {
	p := testMultiProfile()
	got := text(t, p)
	inOrder(t, got,
		"memspy: test.mst (mst) on machine test\n8 processors; threads placed round-robin in the order they appear\nevents: ",
		"\nL1I (level 1, 32 KiB instructions, 8-way, 64 B lines, lru, private to each processor)\n",
		"\nL1D (level 1, 32 KiB data, 8-way, 64 B lines, lru, write-back, private to each processor)\n",
		"\n  misses by cause: cold 8,883 (12.7%), replacement 36,144 (51.6%), invalidation 25,006 (35.7%; true sharing 11,016, false sharing 13,990)\n"+
			"  coherence: 25,106 lines invalidated by other processors' writes; misses on them: true sharing 11,016, false sharing 13,990\n",
		"\nL2 (level 2, 256 KiB unified, 8-way, 64 B lines, lru, write-back, shared)\n",
		// The shared cache lost no lines: no split, no coherence line.
		"\n  misses by cause: cold 7,983 (80.0%), replacement 2,000 (20.0%), invalidation 0 (0.0%)\n\nmemory: ",
		summaryProcessorTable,
		"    function  object     stall cycles  share  misses   cold  replacement  invalidation  true sharing  false sharing\n",
		"    work      counters        156,800   5.5%  13,000      4            0        12,996           996         12,000\n")
	if strings.Count(got, "coherence:") != 1 {
		t.Errorf("coherence lines for caches without any:\n%s", got)
	}

	// One idle processor.
	p.Processors = p.Processors[:5]
	if got := text(t, p); !strings.Contains(got, "\n  1 processor ran no thread: 4\n") {
		t.Errorf("one idle processor:\n%s", got)
	}

	// Pinned threads.
	p.Machine.Mapping, p.Machine.Pin = machine.Pinned, []int{0, 1, 1, 0}
	if got := text(t, p); !strings.Contains(got,
		"\n8 processors; threads pinned to processors 0,1,1,0 in the order they appear, further threads round-robin\n") {
		t.Errorf("pinned mapping:\n%s", got)
	}

	// Private caches no processor accessed are left out of the summary.
	p = testMultiProfile()
	for i := range p.Processors {
		p.Processors[i].Caches[0] = profile.CacheStats{Name: "L1I", Level: 1}
	}
	got = text(t, p)
	if !strings.Contains(got, "\nprocessors (each with its own L1D):\n") || strings.Contains(got, "L1I accesses") {
		t.Errorf("unaccessed private cache in the summary:\n%s", got)
	}
}

func TestTextManyProcessors(t *testing.T) {
	p := testMultiProfile()
	p.Machine.Processors = 20
	p.Processors = nil
	for i := range 20 {
		threads := []uint32{uint32(i + 1)}
		if i == 0 {
			threads = []uint32{1, 21, 41, 61, 81, 101}
		}
		p.Processors = append(p.Processors, profile.ProcessorStats{Processor: i, Threads: threads,
			Caches: []profile.CacheStats{{Name: "L1D", Level: 1, Accesses: 1000, Misses: uint64(i)}}})
	}
	got := text(t, p)
	inOrder(t, got, "\n20 processors; ", "\nprocessors (each with its own L1D):\n",
		"  the first 16 of 20 processors (memspy report PROFILE processors: all)\n",
		"  processor  threads               L1D accesses  L1D misses  L1D miss rate  upgrades",
		"\n          0  1, 21, 41, 61, … (6)         1,000           0        0.0000%         0",
		"\n         15  16                           1,000          15        1.5000%",
		// The total covers every processor.
		"\n      total                              20,000         190        0.9500%")
	if strings.Contains(got, "\n         16  17") {
		t.Errorf("more than 16 processors in the summary:\n%s", got)
	}
	// The view lists them all, and every thread in CSV.
	got = viewText(t, p, "processors", ViewOptions{})
	if !strings.Contains(got, "\n         19  20 ") || strings.Contains(got, "the first") {
		t.Errorf("processors view cut:\n%s", got)
	}
	recs := readCSV(t, viewText(t, p, "processors", ViewOptions{Format: "csv"}))
	if !slices.Equal(recs[1][:3], []string{"0", "1, 21, 41, 61, 81, 101", "1000"}) {
		t.Errorf("processor 0 in CSV %q", recs[1])
	}
}

// TestOneProcessorText checks that nothing of several processors shows on
// one (the golden tests of the views check them unchanged).
func TestOneProcessorText(t *testing.T) {
	p := testProfile()
	got := text(t, p)
	for _, s := range []string{"processor", "sharing", "coherence", "private", "shared"} {
		if strings.Contains(got, s) {
			t.Errorf("%q on one processor:\n%s", s, got)
		}
	}
	inOrder(t, got, "memspy: test.mst (mst) on machine test\nevents: ",
		"\nL1D (level 1, 32 KiB data, 8-way, 64 B lines, lru, write-back)\n",
		"  misses by cause: cold 8,859 (19.7%), replacement 36,144 (80.3%), invalidation 0 (0.0%)\n",
		"    function  object     stall cycles  share  misses   cold  replacement  invalidation\n")
	// A machine of one processor that says so explicitly is the same.
	p.Machine.Processors = 1
	if again := text(t, p); again != got {
		t.Errorf("Processors: 1 changed the summary:\n%s", again)
	}
}

func TestCausesLine(t *testing.T) {
	for _, c := range []struct {
		causes profile.Causes
		want   string
	}{
		{profile.Causes{Cold: 1, Replacement: 2, Invalidation: 1},
			"misses by cause: cold 1 (25.0%), replacement 2 (50.0%), invalidation 1 (25.0%)"},
		{profile.Causes{Cold: 2499, Replacement: 706, Invalidation: 11, TrueSharing: 6, FalseSharing: 5},
			"misses by cause: cold 2,499 (77.7%), replacement 706 (22.0%), invalidation 11 (0.3%; true sharing 6, false sharing 5)"},
		// Only false sharing: both are said.
		{profile.Causes{Invalidation: 4, FalseSharing: 4},
			"misses by cause: cold 0 (0.0%), replacement 0 (0.0%), invalidation 4 (100.0%; true sharing 0, false sharing 4)"},
	} {
		if got := causesLine(&profile.CacheStats{Causes: &c.causes}); got != c.want {
			t.Errorf("causesLine(%+v) = %q, want %q", c.causes, got, c.want)
		}
	}
}

func TestSharingColumns(t *testing.T) {
	p := testMultiProfile()
	for _, c := range []struct {
		view string
		opt  ViewOptions
		row  string
	}{
		{"stalls", ViewOptions{}, "work  counters  156,800  5.5%  400,000  13,000  3.2500%  4  0  12,996  996  12,000"},
		{"lines", ViewOptions{}, "queue.c:15  consume  146,000  5.1%  50,000  12,000  24.0000%  10  0  11,990  10,000  1,990  100.0%"},
		{"data", ViewOptions{Function: "work"}, "counters  global  32 B  -  156,800  100.0%  400,000  13,000  3.2500%  4  0  12,996  996  12,000  100.0%"},
		{"refs", ViewOptions{}, "0x401500  work.c:8  0  work  counters  modify  -  400,000  387,000  13,000  3.2500%  12,996  996  12,000  290,250  96,750  100.0%"},
		{"detail", ViewOptions{Object: "queue"}, "L1D  12,030  20  0  12,010  10,020  1,990  37,477  12,493  769,920  769,920  100.0%"},
	} {
		got := viewText(t, p, c.view, c.opt)
		want := cells(c.row)
		if rows := rowsOf(got, want[0]); !slices.ContainsFunc(rows, func(r []string) bool { return slices.Equal(r, want) }) {
			t.Errorf("%s: no row %q in\n%s", c.view, want, got)
		}
		if !strings.Contains(got, "invalidation  true sharing  false sharing") {
			t.Errorf("%s: no sharing columns in\n%s", c.view, got)
		}
	}
	recs := readCSV(t, viewText(t, p, "lines", ViewOptions{Format: "csv"}))
	if !slices.Equal(recs[0], []string{"file_line", "function", "stall_cycles", "share", "accesses", "misses", "miss_rate", "cold",
		"replacement", "invalidation", "true_sharing", "false_sharing", "spatial_use"}) {
		t.Errorf("lines CSV header %q", recs[0])
	}
	var tables []jsonTable
	if err := json.Unmarshal([]byte(viewText(t, p, "stalls", ViewOptions{Format: "json"})), &tables); err != nil {
		t.Fatal(err)
	}
	o := tables[1]
	at := func(col string) int { return slices.Index(o.Columns, col) }
	i := slices.IndexFunc(o.Rows, func(r []any) bool { return r[0] == "counters" })
	if i < 0 || o.Rows[i][at("true_sharing")] != float64(996) || o.Rows[i][at("false_sharing")] != float64(12000) {
		t.Errorf("stalls JSON by object %v %v", o.Columns, o.Rows)
	}
	// Several processors without sharing misses: no sharing columns.
	p = testMultiProfile()
	p.Caches[1].TrueSharingMisses, p.Caches[1].FalseSharingMisses = 0, 0
	p.Caches[1].Causes.TrueSharing, p.Caches[1].Causes.FalseSharing = 0, 0
	if got := viewText(t, p, "stalls", ViewOptions{}); strings.Contains(got, "sharing") {
		t.Errorf("sharing columns without sharing misses:\n%s", got)
	}
}

func TestProcessorsView(t *testing.T) {
	p := testMultiProfile()
	got := viewText(t, p, "processors", ViewOptions{})
	want := `processors
  8 processors; threads placed round-robin in the order they appear
  private caches: each processor's own L1I, L1D (they add up to the cache totals)
  upgrades: writes to lines other processors held too; interventions: dirty lines supplied to other processors' references; invalidations: the copies a processor's writes invalidated (sent) and its own copies others' writes invalidated (received)
  processor  threads  L1I accesses  L1I misses  L1I miss rate  L1D accesses  L1D misses  L1D miss rate  upgrades  interventions  invalidations sent  invalidations received
          0  1, 5          340,000          40        0.0118%       304,806      28,015        9.1911%        50              5               1,000                  10,043
          1  2             170,000          20        0.0118%       152,402      14,006        9.1902%       100             10               1,000                   5,021
          2  3             170,000          20        0.0118%       152,402      14,006        9.1902%       200             20               2,000                   5,021
          3  4             170,000          20        0.0118%       152,402      14,006        9.1902%       300             30               3,000                   5,021
          4                      0           0              -             0           0              -         0              0                   0                       0
          5                      0           0              -             0           0              -         0              0                   0                       0
          6                      0           0              -             0           0              -         0              0                   0                       0
          7                      0           0              -             0           0              -         0              0                   0                       0
      total                850,000         100        0.0118%       762,012      70,033        9.1905%       650             65               7,000                  25,106

private caches by processor
  invalidations: lines the cache lost to other processors' writes; true and false sharing misses: the misses on them; caches that saw nothing are left out
  processor  cache  accesses  misses  miss rate  evictions  write-backs  invalidations  true sharing misses  false sharing misses
          0  L1I     340,000      40    0.0118%          0            0              0                    0                     0
          0  L1D     304,806  28,015    9.1911%          0            0         10,043                4,407                 5,596
          1  L1I     170,000      20    0.0118%          0            0              0                    0                     0
          1  L1D     152,402  14,006    9.1902%          0            0          5,021                2,203                 2,798
          2  L1I     170,000      20    0.0118%          0            0              0                    0                     0
          2  L1D     152,402  14,006    9.1902%          0            0          5,021                2,203                 2,798
          3  L1I     170,000      20    0.0118%          0            0              0                    0                     0
          3  L1D     152,402  14,006    9.1902%          0            0          5,021                2,203                 2,798
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// --top: the first processors, in both tables.
	got = viewText(t, p, "processors", ViewOptions{Top: 2})
	if !strings.Contains(got, "  the first 2 of 8 processors (--top to see more)\n") ||
		!slices.Equal(firstColumn(rowsOf(got, "0", "1", "2", "3")), []string{"0", "1", "0", "0", "1", "1"}) {
		t.Errorf("processors --top 2:\n%s", got)
	}
	// CSV: raw numbers, the column keys name the caches.
	recs := readCSV(t, viewText(t, p, "processors", ViewOptions{Format: "csv"}))
	if !slices.Equal(recs[0], []string{"processor", "threads", "l1i_accesses", "l1i_misses", "l1i_miss_rate", "l1d_accesses",
		"l1d_misses", "l1d_miss_rate", "upgrades", "interventions", "invalidations_sent", "invalidations_received"}) ||
		!slices.Equal(recs[1], []string{"0", "1, 5", "340000", "40", recs[1][4], "304806", "28015", recs[1][7], "50", "5", "1000", "10043"}) ||
		!slices.Equal(recs[5], []string{"4", "", "0", "0", "", "0", "0", "", "0", "0", "0", "0"}) {
		t.Errorf("processors CSV %q", recs[:6])
	}
	i := slices.IndexFunc(recs, func(r []string) bool { return r[0] == "processor" && r[1] == "cache" })
	if i < 0 || !slices.Equal(recs[i+2], []string{"0", "L1D", "304806", "28015", recs[i+2][4], "0", "0", "10043", "4407", "5596"}) {
		t.Errorf("private caches CSV %q", recs)
	}
	// A profile without where-and-why data has the view too.
	p.Functions, p.Objects, p.Pairs, p.Lines, p.References = nil, nil, nil, nil, nil
	p.Options.Where = false
	if got := viewText(t, p, "processors", ViewOptions{}); !strings.HasPrefix(got, "processors\n  8 processors;") {
		t.Errorf("processors view without where:\n%s", got)
	}
	// One processor has none.
	if err := View(&strings.Builder{}, testProfile(), "processors", ViewOptions{}); err != ErrOneProcessor {
		t.Errorf("processors view of one processor: %v", err)
	}
}

func TestSharingView(t *testing.T) {
	p := testMultiProfile()
	got := viewText(t, p, "sharing", ViewOptions{})
	want := `coherence by cache
  lines invalidated: lines a private cache lost to other processors' writes; sharing misses: misses on them, true sharing when the processor had used bytes the write wrote, false sharing when it had used only other bytes of the line; false share: of the sharing misses
  cache  lines invalidated  true sharing misses  false sharing misses  false share
  L1D               25,106               11,016                13,990        55.9%

objects by invalidation misses at L1D
  invalidation: misses on lines another processor's write invalidated (share of misses: of the entry's misses), split into true and false sharing (false share: of the two); suffered: the entry's lines other processors' writes invalidated, caused: other processors' lines its writes invalidated (who: report invalidators --object O); stall cycles over every cache
  object    kind     size  misses  invalidation  share of misses  true sharing  false sharing  false share  suffered  caused  stall cycles
  counters  global   32 B  13,000        12,996           100.0%           996         12,000        92.3%    12,006  12,006       156,800
  queue     heap    4 KiB  12,030        12,010            99.8%        10,020          1,990        16.6%         0       0       148,360

function × object by invalidation misses at L1D
  function  object    misses  invalidation  share of misses  true sharing  false sharing  false share  suffered  caused  stall cycles
  work      counters  13,000        12,996           100.0%           996         12,000        92.3%         0       0       156,800
  consume   queue     12,000        11,990            99.9%        10,000          1,990        16.6%         0       0       146,000
  produce   queue         30            20            66.7%            20              0         0.0%         0       0         2,360
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	recs := readCSV(t, viewText(t, p, "sharing", ViewOptions{Format: "csv"}))
	i := slices.IndexFunc(recs, func(r []string) bool { return r[0] == "object" })
	if i < 0 || !slices.Equal(recs[i], []string{"object", "kind", "size", "misses", "invalidation", "share_of_misses", "true_sharing",
		"false_sharing", "false_share", "suffered", "caused", "stall_cycles"}) || !slices.Equal(recs[i+1][:5], []string{"counters", "global", "32", "13000", "12996"}) {
		t.Errorf("sharing CSV %q", recs)
	}

	// Invalidation misses that are not sharing: the trace's invalidate
	// records.
	p.Objects[slices.IndexFunc(p.Objects, func(o profile.Object) bool { return o.Name == "queue" })].Causes.TrueSharing = 20
	got = viewText(t, p, "sharing", ViewOptions{})
	if !strings.Contains(got, "\n  invalidation misses neither true nor false sharing follow the trace's invalidate records\n") {
		t.Errorf("no word of invalidate records:\n%s", got)
	}
	// A shared focus cache has no invalidations.
	p = testMultiProfile()
	if err := p.SetFocus("L2"); err != nil {
		t.Fatal(err)
	}
	got = viewText(t, p, "sharing", ViewOptions{})
	inOrder(t, got, "objects by invalidation misses at L2\n",
		"  L2 is shared: coherence invalidates only the private caches' lines (--focus a private cache)\n  (none)\n")

	// No sharing, said clearly.
	for _, c := range []struct {
		name    string
		profile func() *profile.Profile
		note    string
	}{
		{"one processor", testProfile, "no sharing: the profile is of one processor (simulate a machine of several: --procs N)"},
		{"no invalidations", func() *profile.Profile {
			p := testMultiProfile()
			p.Caches[1].Invalidations, p.Caches[1].TrueSharingMisses, p.Caches[1].FalseSharingMisses = 0, 0, 0
			return p
		}, "no sharing: no processor's write invalidated a line another processor held"},
		{"no sharing misses", func() *profile.Profile {
			p := testMultiProfile()
			p.Caches[1].TrueSharingMisses, p.Caches[1].FalseSharingMisses = 0, 0
			return p
		}, "no sharing misses: other processors' writes invalidated 25,106 lines, but no processor missed on them again"},
	} {
		got := viewText(t, c.profile(), "sharing", ViewOptions{})
		if !strings.Contains(got, "\n  "+c.note+"\n") || strings.Contains(got, "objects by") {
			t.Errorf("%s:\n%s", c.name, got)
		}
		var tables []jsonTable
		if err := json.Unmarshal([]byte(viewText(t, c.profile(), "sharing", ViewOptions{Format: "json"})), &tables); err != nil {
			t.Fatal(err)
		}
		if len(tables) != 1 || !slices.Contains(tables[0].Notes, c.note) {
			t.Errorf("%s in JSON: %+v", c.name, tables)
		}
	}
}

func TestAdviseSharing(t *testing.T) {
	find := func(as []Advice, kind, object string) *Advice {
		for i := range as {
			if as[i].Kind == kind && as[i].Object == object {
				return &as[i]
			}
		}
		return nil
	}
	as := Advise(testMultiProfile())
	f := find(as, AdviceFalseSharing, "counters")
	if f == nil {
		t.Fatalf("no false sharing advice on counters: %+v", as)
	}
	if f.Message != "pad or separate the per-thread parts of counters (to the line size, 64 bytes) so that processors do not share lines; "+
		"different processors write it at +0, +8, +16, +24" ||
		f.Function != "work" || f.StallCycles != 156800 {
		t.Errorf("false sharing advice %+v", f)
	}
	for _, e := range []string{
		"counters has 156,800 stall cycles, 5.5% of the run's",
		"12,996 of its 13,000 misses at L1D are invalidation misses (100.0%), on lines other processors' writes invalidated",
		"12,000 of them are false sharing (92.3%), 996 true sharing (7.7%)",
		"counters is 32 B; processors keep lines of 64 B coherent",
		"writes that invalidated other processors' copies, from its start: +0 (8 B) by processor 3, +8 (8 B) by processor 2, " +
			"+16 (8 B) by processor 1, +24 (8 B) by processor 0",
		"work makes 12,000 of its false sharing misses (100.0%)",
	} {
		if !slices.Contains(f.Evidence, e) {
			t.Errorf("false sharing evidence %q lacks %q", f.Evidence, e)
		}
	}
	tr := find(as, AdviceTrueSharing, "queue")
	if tr == nil {
		t.Fatalf("no true sharing advice on queue: %+v", as)
	}
	if tr.Message != "queue is written by one processor and read by others: reduce sharing (batch updates, per-thread copies merged at the end)" ||
		tr.Function != "consume" {
		t.Errorf("true sharing advice %+v", tr)
	}
	for _, e := range []string{
		"10,020 of them are true sharing (83.4%), 1,990 false sharing (16.6%)",
		"consume makes 10,000 of its true sharing misses (99.8%)",
	} {
		if !slices.Contains(tr.Evidence, e) {
			t.Errorf("true sharing evidence %q lacks %q", tr.Evidence, e)
		}
	}
	// Each processor's first miss on counters is cold: that is no refetch
	// on 4 processors.
	if a := find(as, AdviceSpatialLocality, "counters"); a != nil {
		t.Errorf("refetch advice on a shared object: %+v", a)
	}
	// On one processor 4 cold misses of 64 B lines for 32 bytes are one.
	p := testMultiProfile()
	p.Processors = p.Processors[:1]
	if a := find(Advise(p), AdviceSpatialLocality, "counters"); a == nil || !strings.Contains(a.Message, "fetched anew") {
		t.Errorf("no refetch advice on one active processor: %+v", a)
	}

	for _, c := range []struct {
		name                         string
		invalidation, truly, falsely uint64
	}{
		{"few invalidation misses", 3000, 100, 2900},         // 23% of the misses
		{"neither mostly true nor false", 12996, 5000, 5000}, // the rest: invalidate records
	} {
		p := testMultiProfile()
		o := &p.Objects[slices.IndexFunc(p.Objects, func(o profile.Object) bool { return o.Name == "counters" })]
		o.Causes.Invalidation, o.Causes.TrueSharing, o.Causes.FalseSharing = c.invalidation, c.truly, c.falsely
		for _, a := range Advise(p) {
			if a.Object == "counters" && (a.Kind == AdviceFalseSharing || a.Kind == AdviceTrueSharing) {
				t.Errorf("%s: %s advice", c.name, a.Kind)
			}
		}
	}
	// Without the machine, the line size is not known.
	p = testMultiProfile()
	p.Machine = nil
	if f := find(Advise(p), AdviceFalseSharing, "counters"); f == nil || !strings.Contains(f.Message, "(to the line size) so that") {
		t.Errorf("false sharing advice without a machine: %+v", f)
	}
	// One processor: no sharing advice.
	for _, a := range Advise(testProfile()) {
		if a.Kind == AdviceFalseSharing || a.Kind == AdviceTrueSharing {
			t.Errorf("sharing advice on one processor: %+v", a)
		}
	}
}

func TestSharingAdviceView(t *testing.T) {
	got := viewText(t, testMultiProfile(), "advice", ViewOptions{})
	inOrder(t, got, "false-sharing      counters   work           156,800   5.5%\n",
		"      advice: pad or separate the per-thread parts of counters (to the line size, 64 bytes) so that processors do not share "+
			"lines; different processors write it at +0, +8, +16, +24\n",
		"      evidence: counters has 156,800 stall cycles, 5.5% of the run's; work makes 100.0% of them; 12,996 of its 13,000 misses",
		"true-sharing       queue      consume        148,360   5.2%\n",
		"      advice: queue is written by one processor and read by others",
		"      evidence: queue has 148,360 stall cycles")
	got = text(t, testMultiProfile())
	inOrder(t, got, "  advice (memspy report PROFILE advice: the evidence):\n",
		"    - pad or separate the per-thread parts of counters", "    - queue is written by one processor and read by others")
}

func TestInvalidatorsView(t *testing.T) {
	got := viewText(t, testMultiProfile(), "invalidators", ViewOptions{Object: "counters"})
	inOrder(t, got, "lines of counters invalidated at L1D, by the object and processor whose write invalidated them\n",
		"  12,996 invalidation misses followed (996 true sharing, 12,000 false sharing)\n",
		"  written by  processor   lines   share  false sharing  false share  objects\n",
		"  counters            3   3,003   25.0%          2,753        91.7%  same\n",
		"  total                  12,006  100.0%         11,006        91.7%\n",
		"lines of other processors that the writes of counters invalidated at L1D, by their object and processor\n",
		"writes to counters that invalidated other processors' copies, by processor and offset\n",
		"  offset: of the first byte written, from the object's start;",
		"  processor  offset  bytes  copies  false sharing  neighbour only  own block\n",
		"          3       0      8   3,003          2,753               0\n",
		"          0      24      8   3,000          2,750               0\n")
	// A pair has no offsets table; one processor has no view.
	got = viewText(t, testMultiProfile(), "invalidators", ViewOptions{Object: "counters", Function: "work"})
	if !strings.Contains(got, "lines of work × counters invalidated") || strings.Contains(got, "by processor and offset") {
		t.Errorf("pair view:\n%s", got)
	}
	if err := View(&strings.Builder{}, testProfile(), "invalidators", ViewOptions{Object: "B"}); err != ErrOneProcessor {
		t.Errorf("one processor: %v", err)
	}
}

// TestAdvisePrivateShared: a heap object whose blocks each thread
// allocates and writes itself.
func TestAdvisePrivateShared(t *testing.T) {
	for _, neighbours := range []bool{true, false} {
		p := testMultiProfile()
		o := &p.Objects[slices.IndexFunc(p.Objects, func(o profile.Object) bool { return o.Name == "counters" })]
		o.Kind, o.Blocks = "heap", 4
		for i := range o.SharingWrites {
			w := &o.SharingWrites[i]
			w.Offset, w.OwnBlock = 0, true
			if neighbours {
				w.Neighbour = w.Copies
			}
		}
		var adv *Advice
		for _, a := range Advise(p) {
			if a.Object == "counters" {
				if a.Kind != AdvicePrivateShared {
					t.Errorf("neighbours %v: %s advice on counters", neighbours, a.Kind)
				}
				adv = &a
			}
		}
		if adv == nil {
			t.Fatalf("neighbours %v: no private-shared advice", neighbours)
		}
		want := "each thread's blocks of counters are its own but share lines with other threads' blocks: allocate them aligned " +
			"to 64 B and round their size up to it (aligned_alloc), or from per-thread pools"
		if !neighbours {
			want = "blocks of counters that a thread allocated and writes are used by other processors too: if they are meant to be " +
				"private, find where other threads touch them (report invalidators --object counters); if not, batch the updates"
		}
		if adv.Message != want {
			t.Errorf("neighbours %v: message %q", neighbours, adv.Message)
		}
		ev := "12,006 of the 12,006 copies of other processors its writes invalidated come from threads writing blocks they " +
			"allocated (100.0%); in 12,006 of these the other processor had used none of the block's bytes, only its neighbours' (100.0%)"
		if !neighbours {
			ev = strings.Replace(ev, "in 12,006 of these", "in 0 of these", 1)
			ev = strings.Replace(ev, "neighbours' (100.0%)", "neighbours' (0.0%)", 1)
		}
		if !slices.Contains(adv.Evidence, ev) || !slices.Contains(adv.Evidence, "counters is 32 B in 4 blocks (8 B each on average); "+
			"processors keep lines of 64 B coherent") {
			t.Errorf("neighbours %v: evidence %q", neighbours, adv.Evidence)
		}
	}
	// Writes by other threads than the allocating one: false sharing.
	p := testMultiProfile()
	o := &p.Objects[slices.IndexFunc(p.Objects, func(o profile.Object) bool { return o.Name == "counters" })]
	o.Kind, o.Blocks = "heap", 4
	if !slices.ContainsFunc(Advise(p), func(a Advice) bool { return a.Kind == AdviceFalseSharing && a.Object == "counters" }) {
		t.Errorf("no false sharing advice on a heap object written by threads that did not allocate it")
	}
}
