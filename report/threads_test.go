package report

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/memspy/memspy/profile"
)

// summaryThreadTable is the thread table of testThreadProfile's summary.
const summaryThreadTable = `
threads (simulated cycles; shares of each thread's busy time: compute + stall + sync):
  threads re-interleaved by simulated clock in quanta of 100 events
  simulated run time: 1,600,000 cycles (from the first thread's start to the last thread's end)
  waits at synchronization: 3,850,000 cycles, 51.3% of the threads' time; most at barrier (barrier) 1,500,000 cycles, 39.0% (memspy report PROFILE sync: all 8 objects)
  thread  processor     events  compute cycles  compute share  stall cycles  stall share  sync cycles  sync share
       1          0    100,000         100,000           6.2%        50,000         3.1%    1,450,000       90.6%
       2          1    400,000         400,000          26.7%       600,000        40.0%      500,000       33.3%
       3          2    400,000         400,000          28.6%       700,000        50.0%      300,000       21.4%
       4          3    400,000         400,000          26.7%       500,000        33.3%      600,000       40.0%
       5          0    200,000         200,000          13.3%       300,000        20.0%    1,000,000       66.7%
   total             1,500,000       1,500,000          20.0%     2,150,000        28.7%    3,850,000       51.3%

where and why`

func TestTextThreads(t *testing.T) {
	p := testThreadProfile()
	got := text(t, p)
	inOrder(t, got, summaryProcessorTable[:len(summaryProcessorTable)-len("\n\nwhere and why")], summaryThreadTable,
		"  advice (memspy report PROFILE advice: the evidence):\n",
		"    - load imbalance at barrier barrier: threads wait 20.0% of their time there for the last to arrive;",
		"    - lock contention on queue+64: threads wait 10.7% of their time to acquire it;")

	// In the traced order, with no waiting: no line on it.
	p.Interleave, p.Quantum = "trace", 0
	p.Sync = nil
	got = text(t, p)
	inOrder(t, got, "\nthreads (simulated cycles; ", "\n  threads in the traced order\n  simulated run time: 1,600,000 cycles")
	if strings.Contains(got, "waits at synchronization") {
		t.Errorf("a line on waits without any:\n%s", got)
	}

	// At most 16 threads; the total covers them all.
	p = testThreadProfile()
	p.Threads = nil
	for i := range 20 {
		p.Threads = append(p.Threads, profile.ThreadStats{Thread: uint32(i + 1), Processor: i % 8, Events: 10, ComputeCycles: 10,
			StallCycles: 20, SyncCycles: 10, Start: uint64(i), End: uint64(i) + 40})
	}
	got = text(t, p)
	inOrder(t, got, "\nthreads (", "  simulated run time: 59 cycles", "  the first 16 of 20 threads (memspy report PROFILE threads: all)\n",
		"\n      16          7  ", "\n   total                200  ")
	if strings.Contains(got, "\n      17  ") {
		t.Errorf("more than 16 threads in the summary:\n%s", got)
	}
}

func TestThreadsView(t *testing.T) {
	p := testThreadProfile()
	got := viewText(t, p, "threads", ViewOptions{})
	want := `threads: compute (#), memory stall (=) and synchronization (~) cycles
  threads re-interleaved by simulated clock in quanta of 100 events
  simulated run time: 1,600,000 cycles (from the first thread's start to the last thread's end)
  compute: one cycle per event; stall: the waits of its misses for the level below (as in the where views); sync: its waits at locks, barriers, condition variables and joins; busy: the three, of which the shares are; start and end: its simulated clock at its first and its last event
  thread  processor     events  compute cycles  compute share  stall cycles  stall share  sync cycles  sync share  busy cycles   start        end
       1          0    100,000         100,000           6.2%        50,000         3.1%    1,450,000       90.6%    1,600,000       0  1,600,000  ###=~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
       2          1    400,000         400,000          26.7%       600,000        40.0%      500,000       33.3%    1,500,000  50,000  1,550,000  ##########===============~~~~~~~~~~~~~
       3          2    400,000         400,000          28.6%       700,000        50.0%      300,000       21.4%    1,400,000  50,000  1,450,000  ##########==================~~~~~~~
       4          3    400,000         400,000          26.7%       500,000        33.3%      600,000       40.0%    1,500,000  50,000  1,550,000  ##########=============~~~~~~~~~~~~~~~
       5          0    200,000         200,000          13.3%       300,000        20.0%    1,000,000       66.7%    1,500,000  50,000  1,550,000  #####========~~~~~~~~~~~~~~~~~~~~~~~~~
   total             1,500,000       1,500,000          20.0%     2,150,000        28.7%    3,850,000       51.3%    7,500,000       0  1,600,000
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// --top: the first threads.
	got = viewText(t, p, "threads", ViewOptions{Top: 2})
	if !strings.Contains(got, "  the first 2 of 5 threads (--top to see more)\n") ||
		!slices.Equal(firstColumn(rowsOf(got, "1", "2", "3", "total")), []string{"1", "2", "total"}) {
		t.Errorf("threads --top 2:\n%s", got)
	}
	// CSV: raw numbers, no bar.
	recs := readCSV(t, viewText(t, p, "threads", ViewOptions{Format: "csv"}))
	if !slices.Equal(recs[0], []string{"thread", "processor", "events", "compute_cycles", "compute_share", "stall_cycles", "stall_share",
		"sync_cycles", "sync_share", "busy_cycles", "start", "end"}) ||
		!slices.Equal(recs[1], []string{"1", "0", "100000", "100000", "0.0625", "50000", "0.03125", "1450000", "0.90625", "1600000", "0",
			"1600000"}) || len(recs) != 6 {
		t.Errorf("threads CSV %q", recs)
	}
	// JSON: the total too.
	var tables []jsonTable
	if err := json.Unmarshal([]byte(viewText(t, p, "threads", ViewOptions{Format: "json"})), &tables); err != nil {
		t.Fatal(err)
	}
	if len(tables) != 1 || len(tables[0].Rows) != 5 || tables[0].Total[9] != float64(7500000) || tables[0].Total[11] != float64(1600000) {
		t.Errorf("threads JSON %+v", tables)
	}
	// Without where-and-why data the view is there.
	p.Functions, p.Objects, p.Pairs, p.Lines, p.References = nil, nil, nil, nil, nil
	if got := viewText(t, p, "threads", ViewOptions{}); !strings.HasPrefix(got, "threads: ") {
		t.Errorf("threads view without where:\n%s", got)
	}
	// Errors: one processor; several without the threads' times.
	if err := View(&strings.Builder{}, testProfile(), "threads", ViewOptions{}); err != ErrOneProcessorTime {
		t.Errorf("threads view of one processor: %v", err)
	}
	if err := View(&strings.Builder{}, testMultiProfile(), "threads", ViewOptions{}); err != ErrNoThreads {
		t.Errorf("threads view without threads: %v", err)
	}
}

func TestSyncView(t *testing.T) {
	p := testThreadProfile()
	got := viewText(t, p, "sync", ViewOptions{})
	want := `synchronization objects by wait cycles
  operations: acquisitions (lock), arrivals (barrier), wakes (condition), joins, atomic updates; waits: those that waited; share: of all the objects' wait cycles; average wait: wait cycles per wait
  the threads waited 3,850,000 cycles in all, 51.3% of their time (7,500,000 cycles: the sum of each thread's end − start)
  object     address   kind       operations  waits  wait cycles   share  average wait
  barrier    0x601040  barrier           400    300    1,500,000   39.0%         5,000
  thread 2   -         join                1      1    1,450,000   37.7%     1,450,000
  queue+64   0x4b2040  lock            2,000    640      800,000   20.8%         1,250
  queue+128  0x4b2080  condition          50     20      100,000    2.6%         5,000
  counters   0x601080  atomic         12,000      0            0    0.0%             -
  thread 3   -         join                1      0            0    0.0%             -
  thread 4   -         join                1      0            0    0.0%             -
  thread 5   -         join                1      0            0    0.0%             -
  total                               14,454    961    3,850,000  100.0%         4,006
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// --top; the total covers every object.
	got = viewText(t, p, "sync", ViewOptions{Top: 2})
	if !strings.Contains(got, "  top 2 of 8 (--top to see more)\n") ||
		!slices.Equal(firstColumn(rowsOf(got, "barrier", "thread 2", "queue+64", "total")), []string{"barrier", "thread 2", "total"}) ||
		rowsOf(got, "total")[0][3] != "3,850,000" {
		t.Errorf("sync --top 2:\n%s", got)
	}
	// CSV and JSON: raw numbers, unknown averages empty and null.
	recs := readCSV(t, viewText(t, p, "sync", ViewOptions{Format: "csv"}))
	if !slices.Equal(recs[0], []string{"object", "address", "kind", "operations", "waits", "wait_cycles", "share", "average_wait"}) ||
		!slices.Equal(recs[3], []string{"queue+64", "0x4b2040", "lock", "2000", "640", "800000", recs[3][6], "1250"}) ||
		!slices.Equal(recs[5], []string{"counters", "0x601080", "atomic", "12000", "0", "0", "0", ""}) {
		t.Errorf("sync CSV %q", recs)
	}
	var tables []jsonTable
	if err := json.Unmarshal([]byte(viewText(t, p, "sync", ViewOptions{Format: "json"})), &tables); err != nil {
		t.Fatal(err)
	}
	if r := tables[0].Rows[1]; r[0] != "thread 2" || r[1] != nil || r[7] != float64(1450000) {
		t.Errorf("sync JSON row %v", r)
	}
	// Named by address (without --where): no address column; the objects
	// are sorted whatever their order in the profile.
	for i := range p.Sync {
		if s := &p.Sync[i]; s.Kind != "join" {
			s.Name = "0x" + strings.TrimPrefix(strings.ToLower(hexCell(s.Addr).Text), "0x")
		}
	}
	slices.Reverse(p.Sync)
	got = viewText(t, p, "sync", ViewOptions{})
	if strings.Contains(got, "address") || !slices.Equal(rowsOf(got, "0x601040")[0], cells("0x601040  barrier  400  300  1,500,000  39.0%  5,000")) ||
		firstColumn(rowsOf(got, "0x601040", "thread 2"))[0] != "0x601040" {
		t.Errorf("sync view by address:\n%s", got)
	}
	// Errors: no synchronization; one processor.
	p.Sync = nil
	err := View(&strings.Builder{}, p, "sync", ViewOptions{})
	if err != ErrNoSync || err.Error() != "the profile has no synchronization events: run a threaded program under memspy run "+
		"(the tracer reports pthread locks, barriers, condition variables, joins and atomics)" {
		t.Errorf("sync view without objects: %v", err)
	}
	if err := View(&strings.Builder{}, testProfile(), "sync", ViewOptions{}); err != ErrOneProcessorTime {
		t.Errorf("sync view of one processor: %v", err)
	}
}

func TestOverviewSync(t *testing.T) {
	p := testThreadProfile()
	got := viewText(t, p, "overview", ViewOptions{})
	want := `cycles by function: compute (#), memory stall (=) and synchronization (~)
  compute: one cycle per instruction; stall: each miss waits for the level below (L1I miss 12, L1D miss 12, L2 miss 200 cycles)
  sync: the cycles its threads waited at locks, barriers, condition variables and joins called from it (simulated clocks)
  function         compute cycles  compute share  stall cycles  stall share  sync cycles  sync share  total cycles   share
  matmul                  500,000           6.6%     1,532,000        20.3%            0        0.0%     2,032,000   27.0%  ##########==============================
  work                          0           0.0%       156,800         2.1%    1,500,000       19.9%     1,656,800   22.0%  ===~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
  main                     50,000           0.7%           636         0.0%    1,450,000       19.2%     1,500,636   19.9%  #~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
  update (region)         200,000           2.7%       768,000        10.2%            0        0.0%       968,000   12.8%  ####===============
  consume                       0           0.0%       146,000         1.9%      500,000        6.6%       646,000    8.6%  ===~~~~~~~~~~
  produce                       0           0.0%         2,360         0.0%      400,000        5.3%       402,360    5.3%  ~~~~~~~~
  saxpy                   100,000           1.3%       231,200         3.1%            0        0.0%       331,200    4.4%  ##=====
  total                   850,000          11.3%     2,836,996        37.6%    3,850,000       51.1%     7,536,996  100.0%
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	got = viewText(t, p, "overview", ViewOptions{Inclusive: true})
	inOrder(t, got, "inclusive cycles by function (with their callees): compute (#), memory stall (=) and synchronization (~)\n",
		"\n  main                    850,000          11.3%     2,836,996        37.6%    3,850,000       51.1%     7,536,996  100.0%  #####===============~~~~~~~~~~~~~~~~~~~~\n",
		"\n  work                          0           0.0%       156,800         2.1%    1,500,000       19.9%     1,656,800   22.0%  =~~~~~~~~\n",
		"\n  whole run               850,000          11.3%     2,836,996        37.6%    3,850,000       51.1%     7,536,996  100.0%\n")
	recs := readCSV(t, viewText(t, p, "overview", ViewOptions{Format: "csv"}))
	if !slices.Equal(recs[0], []string{"function", "compute_cycles", "compute_share", "stall_cycles", "stall_share", "sync_cycles",
		"sync_share", "total_cycles", "share"}) || !slices.Equal(recs[2][:6], []string{"work", "0", "0", "156800", recs[2][4], "1500000"}) {
		t.Errorf("overview CSV %q", recs)
	}
	// Threads that never waited: the overview as on one processor.
	for i := range p.Functions {
		p.Functions[i].SyncCycles = 0
	}
	if got := viewText(t, p, "overview", ViewOptions{}); strings.Contains(got, "sync") || strings.Contains(got, syncChar) {
		t.Errorf("sync columns without sync cycles:\n%s", got)
	}
}

func TestStallsSync(t *testing.T) {
	p := testThreadProfile()
	got := viewText(t, p, "stalls", ViewOptions{Top: 5})
	parts := strings.Split(got, "\n\n")
	if len(parts) != 3 || strings.Contains(parts[0]+parts[1], "sync") {
		t.Fatalf("sync in the pair or object tables:\n%s", got)
	}
	inOrder(t, parts[2], "  sync cycles: the cycles its threads waited at locks, barriers, condition variables and joins called from it "+
		"(not stall: not in the shares)\n",
		"  function         inclusive stall  stall cycles  share  accesses  misses  miss rate   cold  replacement  invalidation  "+
			"true sharing  false sharing  sync cycles\n")
	// The rows, cut by --top, keep their own sync cycles.
	fns := rowsOf(parts[2], "matmul", "update (region)", "saxpy", "work", "consume", "produce", "main")
	if names := firstColumn(fns); !slices.Equal(names, []string{"matmul", "update (region)", "saxpy", "work", "consume"}) {
		t.Fatalf("functions %v", names)
	}
	if fns[0][len(fns[0])-1] != "0" || fns[3][len(fns[3])-1] != "1,500,000" || fns[4][len(fns[4])-1] != "500,000" {
		t.Errorf("sync cycles by function %q", fns)
	}
}

func TestBar3(t *testing.T) {
	for _, c := range []struct {
		compute, stall, sync, biggest uint64
		want                          string
	}{
		{1, 1, 2, 4, strings.Repeat("#", 10) + strings.Repeat("=", 10) + strings.Repeat("~", 20)},
		{0, 0, 4, 8, strings.Repeat("~", 20)},
		{1, 3, 0, 4, strings.Repeat("#", 10) + strings.Repeat("=", 30)},
		{0, 0, 0, 0, ""},
	} {
		if got := bar3(c.compute, c.stall, c.sync, c.biggest); got != c.want {
			t.Errorf("bar3(%d, %d, %d, %d) = %q, want %q", c.compute, c.stall, c.sync, c.biggest, got, c.want)
		}
	}
}

func TestAdviseSync(t *testing.T) {
	p := testThreadProfile()
	as := Advise(p)
	var kinds []string
	for _, a := range as {
		kinds = append(kinds, a.Kind+" "+a.Object)
	}
	// Among the object advice by cycles: the barrier's 1,500,000 wait
	// cycles before B's 1,040,000 stall cycles, the lock's 800,000 before
	// particles' 768,000.
	if !slices.Equal(kinds, []string{"use-after-free buf", "barrier-imbalance barrier", "self-interference B", "lock-contention queue+64",
		"spatial-locality particles", "capacity A", "false-sharing counters", "true-sharing queue"}) {
		t.Fatalf("advice %q", kinds)
	}
	b, l := as[1], as[3]
	if b.WaitCycles != 1500000 || b.StallCycles != 0 || b.Function != "" || !strings.Contains(b.Message,
		"load imbalance at barrier barrier: threads wait 20.0% of their time there for the last to arrive; divide the work") {
		t.Errorf("barrier advice %+v", b)
	}
	if !slices.Equal(b.Evidence, []string{
		"the threads waited 1,500,000 cycles at barrier barrier, 20.0% of their time (7,500,000 cycles over 5 threads: the sum of each one's end − start)",
		"300 of its 400 arrivals waited (75.0%), 5,000 cycles each on average"}) {
		t.Errorf("barrier evidence %q", b.Evidence)
	}
	if l.WaitCycles != 800000 || !strings.HasPrefix(l.Message, "lock contention on queue+64: threads wait 10.7% of their time to acquire it; "+
		"shorten the critical sections") || !strings.Contains(l.Message, "finer locks") ||
		l.Evidence[1] != "640 of its 2,000 acquisitions waited (32.0%), 1,250 cycles each on average" {
		t.Errorf("lock advice %+v", l)
	}
	// Joins, however long, and waits below 10% of the threads' time: none.
	for _, a := range as {
		if a.Object == "thread 2" || a.Object == "queue+128" {
			t.Errorf("advice on %s: %+v", a.Object, a)
		}
	}
	// A condition variable above the threshold.
	p.Sync[slices.IndexFunc(p.Sync, func(s profile.SyncObject) bool { return s.Kind == "condition" })].WaitCycles = 750000
	i := slices.IndexFunc(Advise(p), func(a Advice) bool { return a.Kind == AdviceConditionWait })
	if i < 0 || !strings.HasPrefix(Advise(p)[i].Message, "threads wait 10.0% of their time on condition variable queue+128 for a signal") {
		t.Errorf("no condition advice: %+v", Advise(p))
	}
	// Objects of one name (small globals pooled in one data bin) are told
	// apart by their address.
	p.Sync[slices.IndexFunc(p.Sync, func(s profile.SyncObject) bool { return s.Kind == "condition" })].Name = "queue+64"
	as = Advise(p)
	if i := slices.IndexFunc(as, func(a Advice) bool { return a.Kind == AdviceLockContention }); i < 0 ||
		as[i].Object != "queue+64 (0x4b2040)" || !strings.HasPrefix(as[i].Message, "lock contention on queue+64 (0x4b2040): ") ||
		!strings.HasPrefix(as[i].Evidence[0], "the threads waited 800,000 cycles at lock queue+64 (0x4b2040), 10.7% of their time") {
		t.Errorf("advice on objects of one name: %+v", as)
	}
	// Without the threads' times there is nothing to compare with.
	p.Threads = nil
	if slices.ContainsFunc(Advise(p), func(a Advice) bool { return a.WaitCycles > 0 }) {
		t.Error("sync advice without threads")
	}

	// Without where-and-why data: the advice on synchronization alone, in
	// the summary and the view (without stall columns).
	p = testThreadProfile()
	p.Functions, p.Objects, p.Pairs, p.Lines, p.References = nil, nil, nil, nil, nil
	p.Options.Where = false
	if kinds := Advise(p); len(kinds) != 2 || kinds[0].Kind != AdviceBarrierImbalance || kinds[1].Kind != AdviceLockContention {
		t.Errorf("advice without where %+v", kinds)
	}
	got := text(t, p)
	inOrder(t, got, "\nthreads (", "\n\nadvice (memspy report PROFILE advice: the evidence):\n  - load imbalance at barrier barrier:",
		"\n  - lock contention on queue+64:")
	if strings.Contains(got, "where and why") {
		t.Errorf("where summary without where:\n%s", got)
	}
	got = viewText(t, p, "advice", ViewOptions{})
	inOrder(t, got, "advice on the top bottlenecks\n",
		"  wait share: of the threads' 7,500,000 cycles (the sum of each thread's end − start)\n",
		"  kind               object    function  wait cycles  wait share\n",
		"  barrier-imbalance  barrier   -           1,500,000       20.0%\n      advice: load imbalance",
		"  lock-contention    queue+64  -             800,000       10.7%\n")
	// Nothing to say without where-and-why data: the view says why.
	p.Sync = p.Sync[3:]
	if err := View(&strings.Builder{}, p, "advice", ViewOptions{}); err != ErrNoWhere {
		t.Errorf("advice view without where or sync advice: %v", err)
	}
}

func TestSyncAdviceView(t *testing.T) {
	got := viewText(t, testThreadProfile(), "advice", ViewOptions{})
	inOrder(t, got, "advice on the top bottlenecks (L1D)\n",
		"  share: of the run's 2,836,996 stall cycles; wait share: of the threads' 7,500,000 cycles (the sum of each thread's end − start)\n",
		"  kind               object     function  stall cycles  share  wait cycles  wait share\n",
		"  use-after-free     buf        main               636   0.0%            -           -\n",
		"  barrier-imbalance  barrier    -                    -      -    1,500,000       20.0%\n",
		"  self-interference  B          matmul       1,040,000  36.7%            -           -\n")
	recs := readCSV(t, viewText(t, testThreadProfile(), "advice", ViewOptions{Format: "csv"}))
	if !slices.Equal(recs[0], []string{"kind", "object", "function", "stall_cycles", "share", "wait_cycles", "wait_share", "advice", "evidence"}) ||
		!slices.Equal(recs[2][:7], []string{"barrier-imbalance", "barrier", "", "", "", "1500000", "0.2"}) {
		t.Errorf("advice CSV %q", recs[:3])
	}
}

// TestThreadViewsJSON renders every view of a profile with threads and
// synchronization as JSON: each row has a cell per column.
func TestThreadViewsJSON(t *testing.T) {
	for _, v := range Views() {
		p := testThreadProfile()
		switch v {
		case "numa": // of several NUMA nodes only
			p = testNumaProfile()
		case "calls":
			p = withChain(p, "main", "work")
		}
		got := viewText(t, p, v, ViewOptions{Function: "work", Object: "counters", Evictors: true, Format: "json"})
		var tables []jsonTable
		if err := json.Unmarshal([]byte(got), &tables); err != nil {
			t.Fatalf("view %s: %v\n%s", v, err, got)
		}
		for _, tb := range tables {
			for _, r := range append(tb.Rows, tb.Total) {
				if r != nil && len(r) != len(tb.Columns) {
					t.Errorf("view %s: row %v under columns %v", v, r, tb.Columns)
				}
			}
		}
	}
}

// TestNoThreadsUnchanged checks that nothing of the threads' time shows
// in the summary and views of profiles without it (the golden tests of
// the views check them unchanged).
func TestNoThreadsUnchanged(t *testing.T) {
	for _, p := range []*profile.Profile{testProfile(), testMultiProfile()} {
		outs := []string{text(t, p)}
		for _, v := range Views() {
			var b strings.Builder
			View(&b, p, v, ViewOptions{Function: "matmul", Object: "B"})
			outs = append(outs, b.String())
		}
		for _, out := range outs {
			for _, s := range []string{"sync", "simulated", "wait cycles", "wait share", "waited", "~", "threads (", "busy"} {
				if strings.Contains(out, s) {
					t.Errorf("%q without threads:\n%s", s, out)
				}
			}
		}
	}
}
