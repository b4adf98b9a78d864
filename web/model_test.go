package web

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memspy/memspy/profile"
)

// checkLevels checks that an entry's counters in the model are the
// profile's, cache by cache, and that its evicting objects are the
// profile's, most first, within lim (the rest added up in Others).
func checkLevels(t *testing.T, what string, got map[string]Level, want map[string]*profile.Stats, lim Limits) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d caches, want %d", what, len(got), len(want))
	}
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("%s: no counters at %s", what, name)
			continue
		}
		type counts struct{ acc, hits, miss, stall, th, sh, used, fetched uint64 }
		gc := counts{g.Accesses, g.Hits, g.Misses, g.StallCycles, g.TemporalHits, g.SpatialHits, g.UsedBytes, g.FetchedBytes}
		wc := counts{w.Accesses, w.Hits, w.Misses, w.StallCycles, w.TemporalHits, w.SpatialHits, w.UsedBytes, w.FetchedBytes}
		if gc != wc || g.Causes != w.Causes {
			t.Errorf("%s at %s: %+v %+v, want %+v %+v", what, name, gc, g.Causes, wc, w.Causes)
		}
		if len(g.EvictedBy) > lim.EvictedBy {
			t.Errorf("%s at %s: %d evicting objects listed, more than %d", what, name, len(g.EvictedBy), lim.EvictedBy)
		}
		var listed, rest uint64
		for i, c := range g.EvictedBy {
			if w.EvictedBy[c.Name] != c.Lines {
				t.Errorf("%s at %s: evicted by %s %d, want %d", what, name, c.Name, c.Lines, w.EvictedBy[c.Name])
			}
			if i > 0 && c.Lines > g.EvictedBy[i-1].Lines {
				t.Errorf("%s at %s: evicted_by not most first", what, name)
			}
			listed += c.Lines
		}
		for _, n := range w.EvictedBy {
			rest += n
		}
		rest -= listed
		if o := g.Others; (o == nil) != (rest == 0) || o != nil && (o.Lines != rest || o.Objects != len(w.EvictedBy)-len(g.EvictedBy)) {
			t.Errorf("%s at %s: others %+v, want %d lines of %d objects", what, name, o, rest, len(w.EvictedBy)-len(g.EvictedBy))
		}
		var evicting, wantEvicting uint64
		for i, e := range g.Evictors {
			evicting += e.Lines
			if e.Reference == profile.OtherEvictors && i != len(g.Evictors)-1 {
				t.Errorf("%s at %s: the others are not last: %+v", what, name, g.Evictors)
			}
		}
		for _, e := range w.Evictors {
			wantEvicting += e.Count
		}
		if evicting != wantEvicting || len(g.Evictors) > lim.Evictors+1 {
			t.Errorf("%s at %s: evictors %+v add up to %d (want %d) or are more than %d and the others", what, name, g.Evictors,
				evicting, wantEvicting, lim.Evictors)
		}
	}
}

// TestModel checks that the model holds the profile's numbers, that its
// lists are bounded and hold the entries with the most cycles, and that
// the indices between them hold.
func TestModel(t *testing.T) {
	p := testProfile(t)
	lim := DefaultLimits
	m, err := NewModel(p, "mm.memspy", lim)
	if err != nil {
		t.Fatal(err)
	}
	if m.Focus != "L1D" || m.Source != "./mm" || m.Events != p.Events || !m.Where || !m.ComputeKnown {
		t.Errorf("model head: %+v", m)
	}
	if len(m.Caches) != 2 || m.Caches[0].CacheStats.Misses != p.Caches[0].Misses || m.Caches[0].MissLatency != testL2Latency ||
		m.Caches[1].MissLatency != testMemLatency || !m.Caches[1].Shared || m.Caches[0].Size != 8<<10 {
		t.Errorf("caches: %+v", m.Caches)
	}
	var compute, stall, sync uint64
	for _, f := range p.Functions {
		compute, stall, sync = compute+f.ComputeCycles, stall+f.StallCycles, sync+f.SyncCycles
	}
	if tt := m.Totals; tt.ComputeCycles != compute || tt.StallCycles != stall || tt.SyncCycles != sync ||
		tt.Functions != len(p.Functions) || tt.Objects != len(p.Objects) || tt.Pairs != len(p.Pairs) || tt.References != len(p.References) {
		t.Errorf("totals %+v", tt)
	}

	// Bounds, and the entries kept are those with the most cycles.
	if len(m.Functions) != lim.Functions || len(m.Objects) != lim.Objects || len(m.Pairs) > lim.Pairs || len(m.References) > lim.References {
		t.Errorf("bounds: %d functions, %d objects, %d pairs, %d references", len(m.Functions), len(m.Objects), len(m.Pairs), len(m.References))
	}
	fns := map[string]profile.Function{}
	for _, f := range p.Functions {
		fns[f.Name] = f
	}
	shown := map[string]bool{}
	var least uint64 = 1 << 63
	for i, f := range m.Functions {
		pf := fns[f.Name]
		shown[f.Name] = true
		if f.ComputeCycles != pf.ComputeCycles || f.StallCycles != pf.StallCycles || f.SyncCycles != pf.SyncCycles || f.File != pf.File {
			t.Errorf("function %s: %+v, want %+v", f.Name, f.Cycles, pf)
		}
		checkLevels(t, "function "+f.Name, f.Levels, pf.Levels, lim)
		if i > 0 && cycles(&pf) > least {
			t.Errorf("function %s: not in order of cycles", f.Name)
		}
		least = min(least, cycles(&pf))
		for _, j := range f.Pairs {
			if m.Pairs[j].Function != f.Name {
				t.Errorf("function %s lists pair %d of %s", f.Name, j, m.Pairs[j].Function)
			}
		}
	}
	for _, f := range p.Functions {
		if !shown[f.Name] && cycles(&f) > least {
			t.Errorf("function %s (%d cycles) left out, but one of %d is shown", f.Name, cycles(&f), least)
		}
	}
	objs := map[string]profile.Object{}
	for _, o := range p.Objects {
		objs[o.Name] = o
	}
	for _, o := range m.Objects {
		po := objs[o.Name]
		if o.StallCycles != po.StallCycles || o.Kind != po.Kind || o.Size != po.Size || len(o.SharingWrites) != len(po.SharingWrites) {
			t.Errorf("object %s: %+v, want %+v", o.Name, o, po)
		}
		checkLevels(t, "object "+o.Name, o.Levels, po.Levels, lim)
		for _, j := range o.Pairs {
			if m.Pairs[j].Object != o.Name {
				t.Errorf("object %s lists pair %d of %s", o.Name, j, m.Pairs[j].Object)
			}
		}
	}
	pairs := map[[2]string]profile.Pair{}
	for _, pr := range p.Pairs {
		pairs[[2]string{pr.Function, pr.Object}] = pr
	}
	for j, pr := range m.Pairs {
		want := pairs[[2]string{pr.Function, pr.Object}]
		if pr.StallCycles != want.StallCycles {
			t.Errorf("pair %s × %s: stall %d, want %d", pr.Function, pr.Object, pr.StallCycles, want.StallCycles)
		}
		checkLevels(t, "pair "+pr.Function+" × "+pr.Object, pr.Levels, want.Levels, lim)
		if len(pr.References) > lim.RefsPer {
			t.Errorf("pair %s × %s: %d references", pr.Function, pr.Object, len(pr.References))
		}
		for _, i := range pr.References {
			if r := m.References[i]; r.Pair != j || r.Function != pr.Function || r.Object != pr.Object {
				t.Errorf("pair %d lists reference %d of pair %d (%s × %s)", j, i, r.Pair, r.Function, r.Object)
			}
		}
	}
	refs := map[string]profile.Reference{}
	for _, r := range p.References {
		refs[fmt.Sprintf("%#x", r.PC)] = r
	}
	for _, r := range m.References {
		want := refs[r.PC]
		if r.StallCycles != want.StallCycles || r.File != want.File || r.Line != want.Line || r.Kind != want.Kind {
			t.Errorf("reference %s: %+v, want %+v", r.PC, r, want)
		}
		checkLevels(t, "reference "+r.PC, r.Levels, want.Levels, lim)
	}

	// The pair with more references than RefsPer, and the drill-down of
	// the test: matmul → B → its references.
	i := slices.IndexFunc(m.Pairs, func(pr Pair) bool { return pr.Function == "work29" })
	if i >= 0 && (m.Pairs[i].RefsTotal != 6 || len(m.Pairs[i].References) > lim.RefsPer) {
		t.Errorf("work29 × g29: %d of %d references", len(m.Pairs[i].References), m.Pairs[i].RefsTotal)
	}
	b := slices.IndexFunc(m.Pairs, func(pr Pair) bool { return pr.Function == "matmul" && pr.Object == "B" })
	if b < 0 || len(m.Pairs[b].References) != 2 || m.References[m.Pairs[b].References[0]].PC != "0x401140" {
		t.Fatalf("matmul × B: not kept with its two references, most stall cycles first")
	}

	// Source lines: the lines around each reference, as in the file.
	src, err := os.Open(filepath.Join("testdata", "mm.c"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var lines []string
	for sc := bufio.NewScanner(src); sc.Scan(); {
		lines = append(lines, sc.Text())
	}
	file := m.References[m.Pairs[b].References[0]].File
	got := m.Sources[file]
	for n := 10 - lim.Context; n <= 10+lim.Context; n++ {
		if got[n] != lines[n-1] {
			t.Errorf("source line %d: %q, want %q", n, got[n], lines[n-1])
		}
	}
	for n := range got {
		near := false
		for _, r := range m.References {
			near = near || r.File == file && n >= r.Line-lim.Context && n <= r.Line+lim.Context
		}
		if !near {
			t.Errorf("source line %d kept, near no reference", n)
		}
	}

	// The process tree, processors, threads and synchronization.
	if len(m.Processes) != 2 || m.Processes[1].Caches[0].Misses != p.Caches[0].Misses || m.Processes[0].Events != p.Events/100 {
		t.Errorf("processes: %+v", m.Processes)
	}
	if len(m.Processors) != 2 || len(m.Threads) != 2 || len(m.Sync) != 1 || m.Totals.Processes != 2 {
		t.Errorf("processors %d, threads %d, sync %d", len(m.Processors), len(m.Threads), len(m.Sync))
	}

	// The timeline, and the line use of the objects shown, as the
	// profile has them.
	if diff := cmp.Diff(p.Timeline, m.Timeline); diff != "" {
		t.Errorf("timeline (-profile +model):\n%s", diff)
	}
	for _, o := range m.Objects {
		po := p.Objects[slices.IndexFunc(p.Objects, func(x profile.Object) bool { return x.Name == o.Name })]
		if diff := cmp.Diff(po.LineUse, o.LineUse); diff != "" || o.LineUse == nil {
			t.Errorf("%s: line use (-profile +model):\n%s", o.Name, diff)
		}
	}
}

// A page holds lines of source files only: not of a file a profile
// names that has no source's name.
func TestSourcesOnly(t *testing.T) {
	dir := t.TempDir()
	secret, src := filepath.Join(dir, "secret"), filepath.Join(dir, "a.c")
	for _, f := range []string{secret, src} {
		if err := os.WriteFile(f, []byte("line one\nline two\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got := readSources([]Reference{{File: secret, Line: 1}, {File: src, Line: 1}}, 1)
	if _, ok := got[secret]; ok || got[src][1] != "line one" {
		t.Errorf("sources %v: want %s's line and none of %s", got, src, secret)
	}
	for file, want := range map[string]bool{"/usr/include/c++/12/map": true, "x.CPP": true, "/etc/passwd": false, "notes.txt": false} {
		if isSource(file) != want {
			t.Errorf("isSource(%s) = %v", file, !want)
		}
	}
}

// TestModelBounds checks the limits on lists of processes and on source
// lines, and that a profile without caches is an error.
func TestModelBounds(t *testing.T) {
	p := testProfile(t)
	lim := Limits{Functions: 2, Objects: 1, PairsPer: 1, Pairs: 2, RefsPer: 1, References: 1, EvictedBy: 1, Evictors: 1,
		Context: 0, Processes: 1, Processors: 1, Threads: 1, Sync: 0, Dumps: 1}
	p.Dumps = []profile.Dump{{Name: "a", Caches: p.Caches}, {Name: "b", Caches: p.Caches}}
	m, err := NewModel(p, "x", lim)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Functions) != 2 || len(m.Objects) != 1 || len(m.Pairs) != 2 || len(m.References) != 1 || len(m.Processes) != 1 ||
		len(m.Processors) != 1 || len(m.Threads) != 1 || len(m.Sync) != 0 || len(m.Dumps) != 1 || m.Dumps[0].Caches[1].Misses != p.Caches[1].Misses {
		t.Errorf("bounds not held: %d %d %d %d %d %d %d %d", len(m.Functions), len(m.Objects), len(m.Pairs), len(m.References),
			len(m.Processes), len(m.Processors), len(m.Threads), len(m.Sync))
	}
	for _, f := range m.Sources {
		if len(f) != 1 {
			t.Errorf("context 0: %d lines kept", len(f))
		}
	}
	if _, err := NewModel(&profile.Profile{Version: 1}, "empty.memspy", lim); err == nil || !strings.Contains(err.Error(), "no caches") {
		t.Errorf("a profile without caches: %v", err)
	}
	if err := m.SetFocus("L3"); err == nil || !strings.Contains(err.Error(), "L1D") {
		t.Errorf("SetFocus(L3): %v", err)
	}
}

// TestCut checks that long source lines are cut at a character.
func TestCut(t *testing.T) {
	long := strings.Repeat("é", maxLineBytes)
	got := cut(long)
	if len(got) > maxLineBytes+len("…") || !strings.HasSuffix(got, "…") || !strings.HasPrefix(long, strings.TrimSuffix(got, "…")) {
		t.Errorf("cut: %q", got)
	}
	if cut("a\xffb") != "a\uFFFDb" {
		t.Errorf("cut of invalid UTF-8: %q", cut("a\xffb"))
	}
}

// TestCallTreeBounds: the page keeps the calling contexts with the most
// cycles and none deeper than its bound; those left out count in their
// nearest caller kept, so that the top's inclusive cycles stay the run's.
func TestCallTreeBounds(t *testing.T) {
	// A chain of 100 calls (a recursion through two functions), each with
	// 10 instructions, and beside it under the top 50 leaves of 1.
	tr := &profile.CallTree{}
	for i := range 100 {
		tr.Nodes = append(tr.Nodes, profile.CallNode{Function: []string{"f", "g"}[i%2], Caller: int32(i) - 1, Calls: 1, Instructions: 10})
	}
	for i := range 50 {
		tr.Nodes = append(tr.Nodes, profile.CallNode{Function: fmt.Sprint("leaf", i), Caller: 0, Instructions: 1})
	}
	m := &Model{ComputeKnown: true}
	m.addCallTree(tr, 60, 40)
	if len(m.CallTree) != 40 { // (the heaviest 60: the top and the chain's first 59, then 40 deep)
		t.Fatalf("%d nodes kept, want 40", len(m.CallTree))
	}
	depth, deepest := map[int32]int{-1: 0}, 0
	for i, n := range m.CallTree {
		depth[int32(i)] = depth[n.Caller] + 1
		deepest = max(deepest, depth[int32(i)])
	}
	if deepest != 40 {
		t.Errorf("deepest node at %d, want 40", deepest)
	}
	if top := m.CallTree[0]; top.InCompute != 100*10+50 || top.Compute != 10+50 {
		t.Errorf("top: inclusive %d own %d, want 1050 and 60 (its leaves')", top.InCompute, top.Compute)
	}
	var own uint64
	for _, n := range m.CallTree {
		own += n.Compute
	}
	if own != 1050 {
		t.Errorf("the nodes' own cycles add up to %d, want 1050", own)
	}
}
