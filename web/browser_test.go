package web

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/memspy/memspy/profile"
	"github.com/memspy/memspy/report"
)

// browser finds Chromium, or skips the test: make test installs Debian's
// chromium and sets MEMSPY_REQUIRE_BROWSER, under which a missing browser
// fails the test.
func browser(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	if os.Getenv("MEMSPY_REQUIRE_BROWSER") != "" {
		t.Fatal("chromium is required (MEMSPY_REQUIRE_BROWSER) but not installed: apt-get install chromium")
	}
	t.Skip("chromium is not installed (Debian package chromium; make test installs it and runs this test)")
	return ""
}

// page drives a headless Chromium through the pages of a file, and
// records what the page asked of the network and the errors it logged.
type page struct {
	t     *testing.T
	ctx   context.Context
	shots string // the directory of the screenshots
	mu    sync.Mutex
	urls  []string // requested
	errs  []string // exceptions and errors logged
}

func newPage(t *testing.T, shots string) *page {
	// Root may run Chromium only without its sandbox; the machine has no
	// network, so nothing in the background looks for one.
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser(t)), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-quic", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	pg := &page{t: t, shots: shots}
	err := chromedp.Listen(ctx, func(ev any) {
		pg.mu.Lock()
		defer pg.mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			pg.urls = append(pg.urls, ev.Request.URL)
		case *runtime.EventExceptionThrown:
			pg.errs = append(pg.errs, "exception: "+ev.ExceptionDetails.Text+" "+fmt.Sprint(ev.ExceptionDetails.Exception))
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError {
				pg.errs = append(pg.errs, fmt.Sprintf("console.error: %v", ev.Args))
			}
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError {
				pg.errs = append(pg.errs, "log: "+ev.Entry.Text)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	// Each action is bounded; the browser lives as long as the test.
	tctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(cancelT)
	pg.ctx = tctx
	return pg
}

// do runs steps, failing the test on an error.
func (pg *page) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	pg.t.Helper()
	if err := chromedp.Do(pg.ctx, steps...); err != nil {
		pg.t.Fatalf("%s: %v", what, err)
	}
}

// text returns the text of the first element sel selects, waiting for it.
func (pg *page) text(sel string) string {
	pg.t.Helper()
	pg.do("wait for "+sel, chromedp.WaitReady(chromedp.CSS(sel)))
	s, err := chromedp.Run(pg.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		pg.t.Fatalf("text of %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

// eval evaluates a JavaScript expression of type T in the page.
func eval[T any](pg *page, js string) T {
	pg.t.Helper()
	v, err := chromedp.Run(pg.ctx, chromedp.Evaluate[T](js))
	if err != nil {
		pg.t.Fatalf("%s: %v", js, err)
	}
	return v
}

// click clicks sel and waits for the page named next (body[data-page]).
func (pg *page) click(sel, next string) {
	pg.t.Helper()
	pg.do("click "+sel, chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.Click(chromedp.CSS(sel)),
		chromedp.WaitReady(chromedp.CSS(`body[data-page="`+next+`"]`)))
}

// set sets the value of the control id and tells the page.
func (pg *page) set(id, value string) {
	pg.t.Helper()
	eval[bool](pg, fmt.Sprintf(`(function () { var e = document.getElementById(%q); e.value = %q;
		e.dispatchEvent(new Event('change')); return true; })()`, id, value))
}

// shot saves a screenshot of the whole page as name.png.
func (pg *page) shot(name string) {
	pg.t.Helper()
	buf, err := chromedp.Run(pg.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		pg.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(pg.shots, name+".png"), buf, 0o644); err != nil {
		pg.t.Fatal(err)
	}
}

// check fails the test when the page requested anything but its own file
// or logged an error.
func (pg *page) check(file string) {
	pg.t.Helper()
	pg.mu.Lock()
	defer pg.mu.Unlock()
	for _, u := range pg.urls {
		if !strings.HasPrefix(u, "file://"+file) {
			pg.t.Errorf("the page requested %s", u)
		}
	}
	for _, e := range pg.errs {
		pg.t.Errorf("the page logged %s", e)
	}
	pg.urls, pg.errs = nil, nil
}

// TestBrowser loads the page of the test profile in a headless Chromium
// and clicks, as a person would, from the overview to a procedure, to one
// of its data structures and to a reference, checking the numbers each
// page shows against the profile; then the focus controls, the false
// sharing of an object, the timeline and an object's line use, and the
// comparison of two profiles. Its
// screenshots are kept in a temporary directory named in the log.
func TestBrowser(t *testing.T) {
	p := testProfile(t)
	m, err := NewModel(p, "mm.memspy", DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "mm.html")
	if err := NewPage(nil, m).WriteFile(file); err != nil {
		t.Fatal(err)
	}
	shots, err := os.MkdirTemp("", "memspy-web-")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", shots)
	pg := newPage(t, shots)
	count := report.Count
	find := func(name string) *profile.Function {
		for i := range p.Functions {
			if p.Functions[i].Name == name {
				return &p.Functions[i]
			}
		}
		t.Fatalf("no function %s", name)
		return nil
	}

	// The overview: the caches, cycles by procedure and the charts.
	pg.do("load", chromedp.Navigate("file://"+file), chromedp.WaitReady(chromedp.CSS(`body[data-page="overview"]`)))
	if got, want := pg.text(`#caches tr[data-cache="L1D"] td[data-k="misses"]`), count(p.Caches[0].Misses); got != want {
		t.Errorf("overview: L1D misses %s, want %s", got, want)
	}
	mm := find("matmul")
	if got := pg.text(`#functions tr[data-fn="matmul"] td[data-k="stall"]`); got != count(mm.StallCycles) {
		t.Errorf("overview: matmul's stall cycles %s, want %s", got, count(mm.StallCycles))
	}
	if n := eval[int](pg, `document.querySelectorAll('.chart canvas').length`); n < 5 {
		t.Errorf("overview: %d charts drawn, want the cycles, treemap, evictor graph, processors and threads", n)
	}
	pg.shot("1-overview")

	// The timeline: each cache's miss rate at each point, as drawn, and
	// the dump marked.
	tl := p.Timeline
	drawn := eval[[][][]float64](pg, `(function () {
		var c = echarts.getInstanceByDom(document.querySelector('#timeline .chart'));
		return c.getOption().series.map(function (s) { return s.data; }); })()`)
	if len(drawn) != len(tl.Caches) {
		t.Fatalf("timeline: %d lines drawn, want one per cache (%d)", len(drawn), len(tl.Caches))
	}
	for i := range tl.Caches {
		if len(drawn[i]) != tl.Len()+1 || drawn[i][0][0] != float64(tl.Start) || drawn[i][0][1] != drawn[i][1][1] {
			t.Fatalf("timeline: %s drawn as %v, want a point at the start and one per point", tl.Caches[i].Name, drawn[i])
		}
		for k := range tl.Len() {
			c := tl.Counts(i, k)
			want := 100 * float64(c.Misses) / float64(c.Accesses)
			if got := drawn[i][k+1]; len(got) != 2 || got[0] != float64(tl.End[k]) || math.Abs(got[1]-want) > 1e-9 {
				t.Errorf("timeline: %s point %d drawn at %v, want [%d %g]", tl.Caches[i].Name, k, got, tl.End[k], want)
			}
		}
	}
	if got := eval[float64](pg, `echarts.getInstanceByDom(document.querySelector('#timeline .chart')).getOption().series[0].markLine.data[0].xAxis`); got != float64(tl.Marks[0].Event) {
		t.Errorf("timeline: the dump marked at %g, want %d", got, tl.Marks[0].Event)
	}
	if got := pg.text(`#timeline-marks tr[data-mark="dump"] td[data-k="event"]`); got != count(tl.Marks[0].Event) {
		t.Errorf("timeline: the dump's event %s, want %s", got, count(tl.Marks[0].Event))
	}
	pg.do("scroll to the timeline", chromedp.ScrollIntoView(chromedp.CSS("#timeline")))
	pg.shot("1b-timeline")

	// The call tree: a bar per node, as wide as its cycles with its
	// callees' (the profile's own counters added up), under its caller.
	flame := eval[[][]float64](pg, `echarts.getInstanceByDom(document.querySelector('#calltree .chart')).getOption().series[0].data.map(function (d) { return d.value; })`)
	if len(flame) != len(p.CallTree.Nodes) {
		t.Fatalf("call tree: %d bars drawn, want %d", len(flame), len(p.CallTree.Nodes))
	}
	cycles := func(n *profile.CallNode) float64 {
		c := n.Instructions + n.SyncCycles
		for _, s := range n.Levels {
			c += s.StallCycles
		}
		return float64(c)
	}
	var all float64
	for i := range p.CallTree.Nodes {
		all += cycles(&p.CallTree.Nodes[i])
	}
	for _, bar := range flame {
		n := &p.CallTree.Nodes[int(bar[3])]
		want := cycles(n)
		for i := range p.CallTree.Nodes { // (its callees: this tree is two deep under main)
			if c := p.CallTree.Nodes[i].Caller; c >= 0 && &p.CallTree.Nodes[c] == n {
				want += cycles(&p.CallTree.Nodes[i])
				for j := range p.CallTree.Nodes {
					if p.CallTree.Nodes[j].Caller == int32(i) {
						want += cycles(&p.CallTree.Nodes[j])
					}
				}
			}
		}
		if got := bar[1] - bar[0]; got != want || n.Caller < 0 && (bar[0] != 0 || got != all) {
			t.Errorf("call tree: %s drawn %g wide from %g, want %g", n.Function, got, bar[0], want)
		}
	}
	pg.do("scroll to the call tree", chromedp.ScrollIntoView(chromedp.CSS("#calltree")))
	pg.shot("1c-call-tree")
	eval[bool](pg, `(function () { window.scrollTo(0, 0); return true; })()`)

	// A procedure, reached by clicking its bar in the chart of cycles.
	xy := eval[[]float64](pg, fmt.Sprintf(`(function () {
		var el = document.querySelector('.chart'), c = echarts.getInstanceByDom(el);
		var p = c.convertToPixel({ gridIndex: 0 }, [%d, 'matmul']), r = el.getBoundingClientRect();
		window.scrollTo(0, 0); return [r.left + p[0], r.top + p[1]]; })()`, mm.ComputeCycles/2))
	pg.do("click matmul's bar", chromedp.MouseClickXY(xy[0], xy[1]), chromedp.WaitReady(chromedp.CSS(`body[data-page="fn"]`)))
	if got := pg.text("#fn-stall"); !strings.HasPrefix(got, count(mm.StallCycles)+" ") {
		t.Errorf("procedure: stall cycles %q, want %s", got, count(mm.StallCycles))
	}
	if got := pg.text("#fn-compute"); got != count(mm.ComputeCycles) {
		t.Errorf("procedure: compute cycles %q, want %s", got, count(mm.ComputeCycles))
	}
	if got := pg.text(`#fn-levels tr[data-level="L2"] td[data-k="misses"]`); got != count(mm.Levels["L2"].Misses) {
		t.Errorf("procedure: L2 misses %s, want %s", got, count(mm.Levels["L2"].Misses))
	}
	pg.shot("2-procedure")

	// A data structure of it: the pair's detail by cache.
	var pair *profile.Pair
	for i := range p.Pairs {
		if p.Pairs[i].Function == "matmul" && p.Pairs[i].Object == "B" {
			pair = &p.Pairs[i]
		}
	}
	if got := pg.text(`#pairs tr[data-object="B"] td[data-k="stall"]`); got != count(pair.StallCycles) {
		t.Errorf("procedure: B's stall cycles %s, want %s", got, count(pair.StallCycles))
	}
	pg.click(`#pairs tr[data-object="B"]`, "pair")
	for _, c := range []struct {
		cache, col string
		want       uint64
	}{{"L1D", "misses", pair.Levels["L1D"].Misses}, {"L1D", "cold", pair.Levels["L1D"].Causes.Cold},
		{"L1D", "replacement", pair.Levels["L1D"].Causes.Replacement}, {"L2", "misses", pair.Levels["L2"].Misses},
		{"L2", "stall_cycles", pair.Levels["L2"].StallCycles}, {"L1D", "accesses", pair.Levels["L1D"].Accesses}} {
		sel := fmt.Sprintf(`#pair-levels tr[data-level=%q] td[data-k=%q]`, c.cache, c.col)
		if got := pg.text(sel); got != count(c.want) {
			t.Errorf("pair: %s %s %s, want %s", c.cache, c.col, got, count(c.want))
		}
	}
	if got := pg.text(`tr[data-evictor="B"] td[data-k="lines"]`); got != count(pair.Levels["L1D"].EvictedBy["B"]) {
		t.Errorf("pair: lines B evicted itself %s, want %s", got, count(pair.Levels["L1D"].EvictedBy["B"]))
	}
	if !strings.Contains(pg.text(`tr[data-evictor="B"]`), "(self)") {
		t.Error("pair: self-interference is not marked")
	}
	pg.shot("3-pair")

	// Its reference with the most stall cycles, and its source line.
	var ref *profile.Reference
	for i := range p.References {
		if p.References[i].PC == 0x401140 {
			ref = &p.References[i]
		}
	}
	pg.click(`#refs tr[data-ref="0x401140"]`, "ref")
	if got := pg.text("#ref-loc"); !strings.HasSuffix(got, "/testdata/mm.c:10") {
		t.Errorf("reference: at %q, want …/testdata/mm.c:10", got)
	}
	if got := pg.text("pre.src div.hit"); !strings.Contains(got, "C[i * n + j] += a * B[k * n + j];") || !strings.HasPrefix(got, "10") {
		t.Errorf("reference: source line %q", got)
	}
	if got := pg.text(`#ref-levels tr[data-level="L1D"] td[data-k="misses"]`); got != count(ref.Levels["L1D"].Misses) {
		t.Errorf("reference: L1D misses %s, want %s", got, count(ref.Levels["L1D"].Misses))
	}
	if n := eval[int](pg, `document.querySelectorAll('#evictors tbody tr').length`); n != DefaultLimits.Evictors+1 {
		t.Errorf("reference: %d evictors listed, want %d and the others", n, DefaultLimits.Evictors)
	}
	pg.shot("4-reference")

	// The cache control: the same reference at L2.
	pg.set("c-cache", "L2")
	if got := pg.text(`#ref-levels tr.sel td`); got != "L2" {
		t.Errorf("cache control: the row shown is %q, want L2", got)
	}
	// Back to the overview: the threshold hides all but matmul, and a
	// process of the tree focuses the caches' table on it.
	pg.do("overview", chromedp.Click(chromedp.CSS("#crumbs a")), chromedp.WaitReady(chromedp.CSS(`body[data-page="overview"]`)))
	pg.set("c-cache", "L1D")
	pg.set("c-thr", "50")
	if n := eval[int](pg, `document.querySelectorAll('#functions tbody tr').length`); n != 1 {
		t.Errorf("threshold 50%%: %d procedures shown, want matmul alone", n)
	}
	pg.set("c-thr", "0")
	pg.click(`#processes tr[data-pid="4000"]`, "overview")
	if got, want := pg.text(`#caches tr[data-cache="L1D"] td[data-k="misses"]`), count(p.Processes[0].Profile.Caches[0].Misses); got != want {
		t.Errorf("process control: L1D misses %s, want the process's %s", got, want)
	}
	pg.shot("5-process")
	pg.click(`#processes tr[data-pid="4000"]`, "overview") // (the whole tree again)

	// False sharing: the object's writes by processor and offset.
	pg.click(`#sharing tbody tr`, "obj")
	if n := eval[int](pg, `document.querySelectorAll('#sharing-writes tbody tr').length`); n != 2 {
		t.Errorf("counters: %d sharing writes, want 2", n)
	}
	pg.set("c-cpu", "1")
	if got := pg.text(`#sharing-writes tbody tr td`); got != "1" || eval[int](pg, `document.querySelectorAll('#sharing-writes tbody tr').length`) != 1 {
		t.Errorf("processor control: the writes shown are not processor 1's alone")
	}
	pg.shot("6-sharing")

	// B's line use: the lines, the bytes used per line and the offsets
	// never used at each cache, and the heatmap's shares.
	var b *profile.Object
	for i := range p.Objects {
		if p.Objects[i].Name == "B" {
			b = &p.Objects[i]
		}
	}
	bi := slices.IndexFunc(m.Objects, func(o Object) bool { return o.Name == "B" })
	eval[string](pg, fmt.Sprintf(`location.hash = '#/0/obj/%d'`, bi))
	pg.do("B's page", chromedp.WaitReady(chromedp.CSS(`body[data-page="obj"] #line-use`)))
	for _, cache := range []string{"L1D", "L2"} {
		lines, use := b.Levels[cache].FetchedBytes/64, b.LineUse[cache]
		unused := 0
		for _, n := range use {
			if n == 0 {
				unused++
			}
		}
		row := fmt.Sprintf(`#line-use tr[data-level=%q] td[data-k=%%q]`, cache)
		if got := pg.text(fmt.Sprintf(row, "lines")); got != count(lines) {
			t.Errorf("line use: %s lines %s, want %s", cache, got, count(lines))
		}
		if got, want := pg.text(fmt.Sprintf(row, "per_line")), fmt.Sprintf("%.1f of 64", float64(b.Levels[cache].UsedBytes)/float64(lines)); got != want {
			t.Errorf("line use: %s bytes used per line %q, want %q", cache, got, want)
		}
		if got := pg.text(fmt.Sprintf(row, "unused")); got != count(uint64(unused)) {
			t.Errorf("line use: %s offsets never used %s, want %d", cache, got, unused)
		}
	}
	cells := eval[[][]float64](pg, `echarts.getInstanceByDom(document.getElementById('line-use-chart')).getOption().series[0].data`)
	if len(cells) != 2*64 {
		t.Fatalf("line use: %d cells drawn, want 2 caches × 64 offsets", len(cells))
	}
	for _, c := range cells {
		cache := []string{"L1D", "L2"}[int(c[1])]
		n := b.LineUse[cache][int(c[0])]
		if want := math.Round(1000*float64(n)/float64(b.Levels[cache].FetchedBytes/64)) / 10; c[2] != want || c[3] != float64(n) {
			t.Errorf("line use: %s offset %g drawn as %g%% of lines (%g), want %g%% (%d)", cache, c[0], c[2], c[3], want, n)
		}
	}
	if dim := eval[int](pg, `echarts.getInstanceByDom(document.getElementById('line-use-chart')).getOption().visualMap[0].dimension`); dim != 2 {
		t.Errorf("line use: colours by dimension %d, want 2 (the share)", dim)
	}
	pg.shot("8-line-use")

	// The timeline on processor 1 (the control is still on it): its L1D.
	pg.do("overview", chromedp.Click(chromedp.CSS("#crumbs a")), chromedp.WaitReady(chromedp.CSS(`body[data-page="overview"] #timeline`)))
	l1 := eval[[][]float64](pg, `echarts.getInstanceByDom(document.querySelector('#timeline .chart')).getOption().series[0].data`)
	for k := range tl.Len() {
		c, _ := tl.ProcessorCounts(1, "L1D", k)
		if want := 100 * float64(c.Misses) / float64(c.Accesses); len(l1) != tl.Len()+1 || math.Abs(l1[k+1][1]-want) > 1e-9 {
			t.Fatalf("timeline of processor 1: L1D drawn as %v, want %g at point %d", l1, want, k)
		}
	}
	pg.set("c-cpu", "-1")
	pg.check(file)

	// Two profiles: the comparison side by side.
	q := testProfile(t)
	for i := range q.Functions {
		if q.Functions[i].Name == "matmul" {
			q.Functions[i].Levels["L2"].StallCycles /= 2
		}
	}
	if err := q.SetFocus("L1D"); err != nil {
		t.Fatal(err)
	}
	mq, err := NewModel(q, "after.memspy", DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDiff(p, q, "mm.memspy", "after.memspy")
	if err != nil {
		t.Fatal(err)
	}
	file2 := filepath.Join(dir, "diff.html")
	if err := NewPage(d, m, mq).WriteFile(file2); err != nil {
		t.Fatal(err)
	}
	pg.do("load the comparison", chromedp.Navigate("file://"+file2+"#/diff"), chromedp.WaitReady(chromedp.CSS(`body[data-page="diff"]`)))
	row := pg.text(`#diff-functions tbody tr`)
	if !strings.Contains(row, "matmul") || !strings.Contains(row, count(mm.StallCycles)) || !strings.Contains(row, count(stallOf(q, "matmul"))) {
		t.Errorf("comparison: first row %q, want matmul's stall cycles in A (%s) and B (%s)", row, count(mm.StallCycles), count(stallOf(q, "matmul")))
	}
	pg.shot("7-diff")
	pg.set("c-profile", "#/1")
	pg.do("profile B", chromedp.WaitReady(chromedp.CSS(`body[data-page="overview"]`)))
	if got := pg.text(`#functions tr[data-fn="matmul"] td[data-k="stall"]`); got != count(stallOf(q, "matmul")) {
		t.Errorf("profile B: matmul's stall cycles %s, want %s", got, count(stallOf(q, "matmul")))
	}
	pg.check(dir)
}
