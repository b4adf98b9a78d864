package report

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/memspy/memspy/profile"
)

// testNumaProfile is testThreadProfile on 4 NUMA nodes of 2 processors
// (the threads ran on processors 0 to 3: nodes 0 and 1), first-touch
// 4 KiB pages, latencies 100, 250 and 400 cycles, fully monitored: main,
// on processor 0, initialized B, which matmul's workers on node 1 use
// (mostly remote, the hints say from where); counters, which the threads
// update, comes remote-dirty (no hint names it); A and particles are
// mostly local. 2,000,000 NUMA cycles in all.
func testNumaProfile() *profile.Profile {
	p := testThreadProfile()
	st := func(local, remote, dirty, cold uint64) profile.NumaStats {
		return profile.NumaStats{Local: local, Remote: remote, RemoteDirty: dirty, Cold: cold,
			Cycles: 100*local + 250*remote + 400*dirty}
	}
	procs := []profile.NumaStats{st(3000, 200, 0, 1500), st(2000, 300, 100, 200), st(500, 2500, 200, 300), st(400, 2000, 100, 100),
		{}, {}, {}, {}}
	n := &profile.Numa{Nodes: 4, Placement: "first-touch", PageSize: 4096, Monitor: "full", LocalLatency: 100,
		RemoteLatency: 250, RemoteDirtyLatency: 400}
	homed := []uint64{600, 40, 0, 0}
	for node := range 4 {
		n.PerNode = append(n.PerNode, profile.NumaNode{Node: node, Processors: []int{2 * node, 2*node + 1}, PagesHomed: homed[node]})
	}
	for i, s := range procs {
		n.Processors = append(n.Processors, profile.NumaEntry{Name: fmt.Sprintf("processor %d", i), NumaStats: s})
		n.PerNode[i/2].Add(&s)
	}
	n.Pairs = []profile.NumaEntry{
		{Function: "matmul", Name: "B", NumaStats: st(300, 3560, 0, 400)},
		{Function: "matmul", Name: "A", NumaStats: st(4000, 240, 0, 800)},
		{Function: "work", Name: "counters", NumaStats: st(100, 300, 400, 4)},
		{Function: "update", Name: "particles", NumaStats: st(1000, 300, 0, 700)},
		{Function: "main", Name: "B", NumaStats: st(100, 400, 0, 100)},
		{Function: "main", Name: "<other>", NumaStats: st(100, 200, 0, 56)},
		{Function: "consume", Name: "queue", NumaStats: st(200, 0, 0, 30)},
		{Function: "produce", Name: "queue", NumaStats: st(100, 0, 0, 10)},
	}
	for _, pr := range n.Pairs { // the objects are the sums of their pairs
		i := slices.IndexFunc(n.Objects, func(o profile.NumaEntry) bool { return o.Name == pr.Name })
		if i < 0 {
			i = len(n.Objects)
			n.Objects = append(n.Objects, profile.NumaEntry{Name: pr.Name})
		}
		n.Objects[i].Add(&pr.NumaStats)
	}
	n.Hints = []profile.MigrationHint{
		{Page: 0x7f0000001000, Object: "B", Home: 0, Node: 1, Misses: 900, FromNode: 850, ByNode: []uint64{50, 850, 0, 0}},
		{Page: 0x7f0000002000, Object: "B", Home: 0, Node: 1, Misses: 800, FromNode: 700, ByNode: []uint64{100, 700, 0, 0}},
		{Page: 0x601000, Home: 1, Node: 0, Misses: 100, FromNode: 60, ByNode: []uint64{60, 40, 0, 0}},
		{Page: 0x4b2000, Object: "particles", Home: 0, Node: 1, Misses: 90, FromNode: 50, ByNode: []uint64{40, 50, 0, 0}},
	}
	p.Numa = n
	return p
}

// summaryNuma is the NUMA section of testNumaProfile's summary.
const summaryNuma = `
NUMA: 4 nodes, first-touch placement of 4 KiB pages, full monitoring (objects from --where); latency of a miss from memory: local 100, remote 250, remote-dirty 400 cycles
misses from memory by node (of its processors):
   node  processors  pages homed  local  remote  remote-dirty  local share     cycles
      0  0-1                 600  5,000     500           100        89.3%    665,000
      1  2-3                  40    900   4,500           300        15.8%  1,335,000
      2  4-5                   0      0       0             0            -          0
      3  6-7                   0      0       0             0            -          0
  total                      640  5,900   5,000           400        52.2%  2,000,000
objects by NUMA cycles:
  top 5 of 6 (memspy report PROFILE numa: all)
  object     local  remote  remote-dirty  local share     cycles
  B            400   3,960             0         9.2%  1,030,000
  A          4,000     240             0        94.3%    460,000
  counters     100     300           400        12.5%    245,000
  particles  1,000     300             0        76.9%    175,000
  <other>      100     200             0        33.3%     60,000

where and why`

func TestTextNuma(t *testing.T) {
	p := testNumaProfile()
	got := text(t, p)
	inOrder(t, got, summaryThreadTable[:len(summaryThreadTable)-len("\n\nwhere and why")], summaryNuma,
		"\n    - B interferes with itself in L1D: ",
		"\n    - B is mostly remote (90.8% of its misses from memory): its pages are homed at node 0 but used from node 1 "+
			"(first-touch homes a page at the node of the processor that touches it first: initialize it in the thread that "+
			"uses it, or migrate the pages listed in memspy report PROFILE numa)\n",
		"\n    - counters is mostly remote (87.5% of its misses from memory): its pages are homed at other nodes than those "+
			"of the processors that use it (first-touch ")

	// Without objects (neither --where nor protocol monitoring): the
	// nodes alone.
	p.Numa.Objects, p.Numa.Pairs, p.Numa.Hints = nil, nil, nil
	got = text(t, p)
	inOrder(t, got, "\n  total                      640  5,900   5,000           400        52.2%  2,000,000\n\nwhere and why")
	if strings.Contains(got, "NUMA cycles") || strings.Contains(got, "mostly remote") {
		t.Errorf("NUMA objects without objects:\n%s", got)
	}
}

func TestNumaView(t *testing.T) {
	p := testNumaProfile()
	got := viewText(t, p, "numa", ViewOptions{})
	want := `misses from memory by node
  NUMA: 4 nodes, first-touch placement of 4 KiB pages, full monitoring (objects from --where); latency of a miss from memory: local 100, remote 250, remote-dirty 400 cycles
  misses from memory (fills that left the processors' caches), each served by the home node of its page: local (home at the processor's node), remote (home at another node, clean) and remote-dirty (supplied dirty by a processor of another node: three hops); local share: of those misses; cycles: their latencies; cold: first misses on their line; share: of all the cycles; pages homed: pages placed at the node
   node  processors  pages homed  local  remote  remote-dirty   cold  local share     cycles   share
      0  0-1                 600  5,000     500           100  1,700        89.3%    665,000   33.2%
      1  2-3                  40    900   4,500           300    400        15.8%  1,335,000   66.8%
      2  4-5                   0      0       0             0      0            -          0    0.0%
      3  6-7                   0      0       0             0      0            -          0    0.0%
  total                      640  5,900   5,000           400  2,100        52.2%  2,000,000  100.0%

misses from memory by processor
  processor  node  local  remote  remote-dirty   cold  local share     cycles   share
          0     0  3,000     200             0  1,500        93.8%    350,000   17.5%
          1     0  2,000     300           100    200        83.3%    315,000   15.8%
          2     1    500   2,500           200    300        15.6%    755,000   37.8%
          3     1    400   2,000           100    100        16.0%    580,000   29.0%
          4     2      0       0             0      0            -          0    0.0%
          5     2      0       0             0      0            -          0    0.0%
          6     3      0       0             0      0            -          0    0.0%
          7     3      0       0             0      0            -          0    0.0%
      total        5,900   5,000           400  2,100        52.2%  2,000,000  100.0%

objects by NUMA cycles
  share: of the cycles of all the misses from memory (2,000,000)
  object     local  remote  remote-dirty  cold  local share     cycles  share
  B            400   3,960             0   500         9.2%  1,030,000  51.5%
  A          4,000     240             0   800        94.3%    460,000  23.0%
  counters     100     300           400     4        12.5%    245,000  12.2%
  particles  1,000     300             0   700        76.9%    175,000   8.8%
  <other>      100     200             0    56        33.3%     60,000   3.0%
  queue        300       0             0    40       100.0%     30,000   1.5%

function × object by NUMA cycles
  share: of the cycles of all the misses from memory (2,000,000)
  function         object     local  remote  remote-dirty  cold  local share   cycles  share
  matmul           B            300   3,560             0   400         7.8%  920,000  46.0%
  matmul           A          4,000     240             0   800        94.3%  460,000  23.0%
  work             counters     100     300           400     4        12.5%  245,000  12.2%
  update (region)  particles  1,000     300             0   700        76.9%  175,000   8.8%
  main             B            100     400             0   100        20.0%  110,000   5.5%
  main             <other>      100     200             0    56        33.3%   60,000   3.0%
  consume          queue        200       0             0    30       100.0%   20,000   1.0%
  produce          queue        100       0             0    10       100.0%   10,000   0.5%

migration hints: pages used mostly from a node other than their home
  a page more than half of whose misses from memory came from the processors of one node other than its home: migrated there (or first touched there) those misses would be local; misses: from every node; from node: from that node; share: of its misses
  page            object     home  node  misses  from node  share
  0x7f0000001000  B             0     1     900        850  94.4%
  0x7f0000002000  B             0     1     800        700  87.5%
  0x601000        -             1     0     100         60  60.0%
  0x4b2000        particles     0     1      90         50  55.6%
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}

	// --top 2: the first 2 processors, objects, pairs and hints; the
	// totals cover them all. The entries are ranked whatever their order.
	slices.Reverse(p.Numa.Objects)
	slices.Reverse(p.Numa.Hints)
	got = viewText(t, p, "numa", ViewOptions{Top: 2})
	inOrder(t, got, "misses from memory by processor\n  the first 2 of 8 processors (--top to see more)\n",
		"\n          1     0  2,000     300           100    200        83.3%    315,000   15.8%\n      total        5,900  ",
		"objects by NUMA cycles\n  share: of the cycles of all the misses from memory (2,000,000)\n  top 2 of 6 (--top to see more)\n",
		"\n  A       4,000     240             0   800        94.3%    460,000  23.0%\n\n",
		"function × object by NUMA cycles\n", "  top 2 of 8 (--top to see more)\n", "\n  matmul    A ",
		"\n  top 2 of 4 (--top to see more)\n", "\n  0x7f0000002000  B ")
	if strings.Contains(got, "counters") || strings.Contains(got, "0x601000") || strings.Contains(got, "\n          2  ") {
		t.Errorf("--top 2 shows more:\n%s", got)
	}

	// CSV: raw numbers, unknown shares empty, no object empty.
	recs := readCSV(t, viewText(t, p, "numa", ViewOptions{Format: "csv"}))
	for _, want := range [][]string{
		{"node", "processors", "pages_homed", "local", "remote", "remote_dirty", "cold", "local_share", "cycles", "share"},
		{"1", "2-3", "40", "900", "4500", "300", "400", "0.15789473684210525", "1335000", "0.6675"},
		{"2", "4-5", "0", "0", "0", "0", "0", "", "0", "0"},
		{"processor", "node", "local", "remote", "remote_dirty", "cold", "local_share", "cycles", "share"},
		{"3", "1", "400", "2000", "100", "100", "0.16", "580000", "0.29"},
		{"object", "local", "remote", "remote_dirty", "cold", "local_share", "cycles", "share"},
		{"counters", "100", "300", "400", "4", "0.125", "245000", "0.1225"},
		{"function", "object", "local", "remote", "remote_dirty", "cold", "local_share", "cycles", "share"},
		{"update (region)", "particles", "1000", "300", "0", "700", "0.7692307692307693", "175000", "0.0875"},
		{"page", "object", "home", "node", "misses", "from_node", "share"},
		{"0x601000", "", "1", "0", "100", "60", "0.6"},
	} {
		if !slices.ContainsFunc(recs, func(r []string) bool { return slices.Equal(r, want) }) {
			t.Errorf("numa CSV has no record %q:\n%q", want, recs)
		}
	}
	if len(recs) != 5+9+7+9+5 {
		t.Errorf("numa CSV: %d records", len(recs))
	}
	// JSON: five tables, the totals of nodes and processors.
	var tables []jsonTable
	if err := json.Unmarshal([]byte(viewText(t, p, "numa", ViewOptions{Format: "json"})), &tables); err != nil {
		t.Fatal(err)
	}
	if len(tables) != 5 || tables[0].Total[8] != float64(2000000) || tables[1].Total[2] != float64(5900) ||
		tables[4].Rows[2][0] != "0x601000" || tables[4].Rows[2][1] != nil || tables[2].Rows[0][0] != "B" {
		t.Errorf("numa JSON %+v", tables)
	}
}

func TestNumaViewVariants(t *testing.T) {
	// Protocol monitoring, without where-and-why data: the view is all
	// there, the function names as the profile has them.
	p := testNumaProfile()
	p.Functions, p.Objects, p.Pairs, p.Lines, p.References = nil, nil, nil, nil, nil
	p.Numa.Monitor = "protocol"
	got := viewText(t, p, "numa", ViewOptions{})
	inOrder(t, got, "  NUMA: 4 nodes, first-touch placement of 4 KiB pages, protocol monitoring (objects kept in the directory); ",
		"\nobjects by NUMA cycles\n", "\n  update    particles ", "\nmigration hints: ")

	// Neither --where nor protocol monitoring: nodes and processors, and
	// how to see more.
	p.Numa.Objects, p.Numa.Pairs, p.Numa.Hints, p.Numa.Monitor = nil, nil, nil, "full"
	got = viewText(t, p, "numa", ViewOptions{})
	if !strings.HasSuffix(got, "\n      total        5,900   5,000           400  2,100        52.2%  2,000,000  100.0%\n") ||
		strings.Contains(got, "objects by") || strings.Contains(got, "migration") {
		t.Errorf("numa view without objects:\n%s", got)
	}
	inOrder(t, got, "misses from memory by processor\n  by object and by function × object: simulate with --where, "+
		"or --monitor protocol\n  processor  node  ")

	// No hints: the table says so.
	p = testNumaProfile()
	p.Numa.Hints = nil
	got = viewText(t, p, "numa", ViewOptions{})
	if !strings.HasSuffix(got, "share: of its misses\n  no page was used mostly from a node other than its home\n  (none)\n") {
		t.Errorf("numa view without hints:\n%s", got)
	}

	// Nothing missed: shares unknown, not NaN.
	p = testNumaProfile()
	n := p.Numa
	for i := range n.PerNode {
		n.PerNode[i].NumaStats = profile.NumaStats{}
	}
	for i := range n.Processors {
		n.Processors[i].NumaStats = profile.NumaStats{}
	}
	n.Objects, n.Pairs, n.Hints = nil, nil, nil
	got = viewText(t, p, "numa", ViewOptions{})
	if r := rowsOf(got, "total"); len(r) != 2 || !slices.Equal(r[0][len(r[0])-3:], []string{"-", "0", "-"}) ||
		!slices.Equal(r[1][len(r[1])-3:], []string{"-", "0", "-"}) {
		t.Errorf("numa view of no misses %q:\n%s", r, got)
	}
	if len(Advise(p)) != len(Advise(testThreadProfile())) {
		t.Error("NUMA advice without misses")
	}

	// One node: an error that says what to do.
	for _, q := range []*profile.Profile{testProfile(), testThreadProfile()} {
		err := View(&strings.Builder{}, q, "numa", ViewOptions{})
		if err != ErrOneNode || err.Error() != "the profile is of one NUMA node: simulate several (--numa N) for local and remote misses" {
			t.Errorf("numa view of one node: %v", err)
		}
	}
}

func TestAdviseNuma(t *testing.T) {
	p := testNumaProfile()
	as := Advise(p)
	var kinds []string
	for _, a := range as {
		kinds = append(kinds, a.Kind+" "+a.Object)
	}
	// By cycles: B's 1,030,000 NUMA cycles after its 1,040,000 stall
	// cycles, counters' 245,000 before its 156,800; A (mostly local),
	// <other> and queue (too few cycles) have none.
	if !slices.Equal(kinds, []string{"use-after-free buf", "barrier-imbalance barrier", "self-interference B", "numa-remote B",
		"lock-contention queue+64", "spatial-locality particles", "capacity A", "numa-remote counters", "false-sharing counters",
		"true-sharing queue"}) {
		t.Fatalf("advice %q", kinds)
	}
	b, c := as[3], as[7]
	if b.NumaCycles != 1030000 || b.StallCycles != 1040000 || b.Function != "matmul" || b.WaitCycles != 0 ||
		b.Message != "B is mostly remote (90.8% of its misses from memory): its pages are homed at node 0 but used from node 1 "+
			"(first-touch homes a page at the node of the processor that touches it first: initialize it in the thread that uses it, "+
			"or migrate the pages listed in memspy report PROFILE numa)" {
		t.Errorf("B's advice %+v", b)
	}
	if want := []string{
		"3,960 of its 4,360 misses from memory went to another node (90.8%): 3,960 remote, 0 remote-dirty",
		"they and its 400 local misses cost 1,030,000 cycles, 51.5% of all the misses from memory (2,000,000 cycles)",
		"matmul makes 89.3% of its cycles",
		"2 pages of it used mostly from a node other than their home (migration hints), with 1,550 misses from that node: " +
			"homed at node 0, used from node 1",
	}; !slices.Equal(b.Evidence, want) {
		t.Errorf("B's evidence\n%q\nwant\n%q", b.Evidence, want)
	}
	if c.NumaCycles != 245000 || c.Function != "work" || !strings.HasPrefix(c.Message, "counters is mostly remote (87.5% of its "+
		"misses from memory): its pages are homed at other nodes than those of the processors that use it (first-touch ") ||
		len(c.Evidence) != 4 || c.Evidence[0] != "700 of its 800 misses from memory went to another node (87.5%): 300 remote, 400 remote-dirty" ||
		c.Evidence[3] != "no migration hint names it: the profile lists none of its pages as used mostly from a node other than its home" {
		t.Errorf("counters' advice %+v", c)
	}

	// Hints of several homes and nodes: the pages with most of their
	// misses name them, else none do.
	n := p.Numa
	n.Hints = append(n.Hints, profile.MigrationHint{Page: 0x7f0000003000, Object: "B", Home: 1, Node: 0, Misses: 1000, FromNode: 600,
		ByNode: []uint64{600, 400, 0, 0}})
	b = Advise(p)[3]
	if !strings.Contains(b.Message, ": its pages are homed at node 0 but used from node 1 (") ||
		b.Evidence[3] != "3 pages of it used mostly from a node other than their home (migration hints), with 2,150 misses from that "+
			"node; 2 of them, with 1,550 (72.1%), homed at node 0 and used from node 1" {
		t.Errorf("B's advice on mixed hints %+v", b)
	}
	n.Hints[len(n.Hints)-1].FromNode = 1550
	b = Advise(p)[3]
	if !strings.Contains(b.Message, ": its pages are homed at other nodes than those of the processors that use it (") ||
		!strings.HasSuffix(b.Evidence[3], "; 2 of them, with 1,550 (50.0%), homed at node 0 and used from node 1") {
		t.Errorf("B's advice on even hints %+v", b)
	}

	// Another placement: first-touch is the fix.
	n.Placement = "round-robin"
	if b = Advise(p)[3]; !strings.HasSuffix(b.Message, "(round-robin placement spreads pages over the nodes whatever uses them: "+
		"place them first-touch and initialize it in the thread that uses it, or migrate the pages listed in memspy report PROFILE numa)") {
		t.Errorf("B's advice under round-robin %+v", b)
	}

	// The thresholds: more than half of the misses remote, 5% of the cycles.
	p = testNumaProfile()
	n = p.Numa
	i := slices.IndexFunc(n.Objects, func(o profile.NumaEntry) bool { return o.Name == "counters" })
	n.Objects[i].Local = 699 // just over half remote
	if !slices.ContainsFunc(Advise(p), func(a Advice) bool { return a.Kind == AdviceRemote && a.Object == "counters" }) {
		t.Error("no advice on counters with over half its misses remote")
	}
	n.Objects[i].Local = 700 // 50.0% remote: a structure both nodes use alike
	if slices.ContainsFunc(Advise(p), func(a Advice) bool { return a.Kind == AdviceRemote && a.Object == "counters" }) {
		t.Error("advice on counters at half its misses remote")
	}
	n.Objects[i].Local, n.Objects[i].Cycles = 100, 100000 // 5.0% of the cycles
	if !slices.ContainsFunc(Advise(p), func(a Advice) bool { return a.Kind == AdviceRemote && a.Object == "counters" }) {
		t.Error("no advice on counters at 5% of the cycles")
	}
	n.Objects[i].Cycles = 99999
	if slices.ContainsFunc(Advise(p), func(a Advice) bool { return a.Kind == AdviceRemote && a.Object == "counters" }) {
		t.Error("advice on counters below 5% of the cycles")
	}
	// Memory of no known data structure: nothing to place.
	n.Objects[i].Name = "<other>"
	if slices.ContainsFunc(Advise(p), func(a Advice) bool { return a.Kind == AdviceRemote && a.Object == "<other>" }) {
		t.Error("advice on <other>")
	}
}

func TestNumaAdviceView(t *testing.T) {
	got := viewText(t, testNumaProfile(), "advice", ViewOptions{})
	inOrder(t, got, "advice on the top bottlenecks (L1D)\n",
		"  NUMA share: of the 2,000,000 cycles of all the misses from memory (memspy report PROFILE numa)\n",
		"  kind               object     function  stall cycles  share  wait cycles  wait share  NUMA cycles  NUMA share\n",
		"  self-interference  B          matmul       1,040,000  36.7%            -           -            -           -\n",
		"  numa-remote        B          matmul       1,040,000  36.7%            -           -    1,030,000       51.5%\n"+
			"      advice: B is mostly remote (90.8% of its misses from memory): its pages are homed at node 0 but used from node 1",
		"  numa-remote        counters   work           156,800   5.5%            -           -      245,000       12.2%\n")
	recs := readCSV(t, viewText(t, testNumaProfile(), "advice", ViewOptions{Format: "csv"}))
	if !slices.Equal(recs[0], []string{"kind", "object", "function", "stall_cycles", "share", "wait_cycles", "wait_share", "numa_cycles",
		"numa_share", "advice", "evidence"}) || !slices.Equal(recs[4][:9], []string{"numa-remote", "B", "matmul", "1040000",
		recs[4][4], "", "", "1030000", "0.515"}) {
		t.Errorf("advice CSV %q", recs[:5])
	}

	// Protocol monitoring, without where-and-why data: the advice on
	// remote objects and synchronization alone, in the summary and the
	// view (without stall columns).
	p := testNumaProfile()
	p.Functions, p.Objects, p.Pairs, p.Lines, p.References = nil, nil, nil, nil, nil
	p.Options.Where, p.Numa.Monitor = false, "protocol"
	var kinds []string
	for _, a := range Advise(p) {
		kinds = append(kinds, a.Kind+" "+a.Object)
	}
	if !slices.Equal(kinds, []string{"barrier-imbalance barrier", "numa-remote B", "lock-contention queue+64", "numa-remote counters"}) {
		t.Errorf("advice without where %q", kinds)
	}
	got = text(t, p)
	inOrder(t, got, "\nNUMA: 4 nodes, ", "\nobjects by NUMA cycles:\n", "\n\nadvice (memspy report PROFILE advice: the evidence):\n",
		"\n  - B is mostly remote (90.8% of its misses from memory): its pages are homed at node 0 but used from node 1 (",
		"\n  - counters is mostly remote")
	got = viewText(t, p, "advice", ViewOptions{})
	inOrder(t, got, "advice on the top bottlenecks\n",
		"  kind               object    function  wait cycles  wait share  NUMA cycles  NUMA share\n",
		"  numa-remote        B         matmul              -           -    1,030,000       51.5%\n")

	// Without NUMA advice the columns are not there.
	p = testNumaProfile()
	p.Numa.Hints, p.Numa.Objects = nil, p.Numa.Objects[1:2] // A, mostly local
	if got := viewText(t, p, "advice", ViewOptions{}); strings.Contains(got, "NUMA") {
		t.Errorf("NUMA columns without NUMA advice:\n%s", got)
	}
}
