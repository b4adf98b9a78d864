package report

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/memspy/memspy/profile"
)

// diffAfter is testProfile after a change (stall cycles: an L1D miss
// waits 12 cycles, an L2 miss 200):
//   - matmul's B: 20,000 → 5,000 misses at L1D, 4,000 → 1,000 at L2
//     (stall cycles 1,040,000 → 260,000);
//   - saxpy's x: 8,000 → 12,000 misses at L1D (121,600 → 169,600);
//   - main and its buf are gone (636 stall cycles);
//   - init and its table are new (106,000);
//   - particles is called parts (768,000 each);
//   - matmul's A and C and saxpy's y are unchanged.
func diffAfter() *profile.Profile {
	var refs []refSpec
	for _, r := range testRefs() {
		switch r.pc {
		case 0x401100:
			r.l1 = lvl{100000, 5000, 2000, 3000, map[string]uint64{"B": 3000}, 0}
			r.l2 = lvl{5000, 1000, 1000, 0, nil, 0}
			r.evictors = nil
		case 0x401200:
			r.l1 = lvl{20000, 12000, 128, 11872, map[string]uint64{"y": 11000}, 0}
			r.evictors = nil
		case 0x401300:
			r.obj = "parts"
		case 0x401400, 0x401420:
			continue
		}
		refs = append(refs, r)
	}
	refs = append(refs, refSpec{0x401600, "init.c", 3, "init", "table", "write",
		lvl{1000, 500, 500, 0, nil, 0}, lvl{500, 500, 500, 0, nil, 0}, nil})
	return buildProfile(refs, nil)
}

// diffRows renders view name of the diff from a to b as CSV and returns
// its records after the header, failing the test on an error.
func diffRows(t *testing.T, a, b *profile.Profile, name string, opt DiffOptions) (header []string, rows [][]string) {
	t.Helper()
	opt.Format = "csv"
	var s strings.Builder
	if err := Diff(&s, a, b, name, opt); err != nil {
		t.Fatalf("Diff(%s, %+v): %v", name, opt, err)
	}
	recs, err := csv.NewReader(strings.NewReader(s.String())).ReadAll()
	if err != nil {
		t.Fatalf("Diff(%s) CSV: %v\n%s", name, err, s.String())
	}
	return recs[0], recs[1:]
}

// row finds the record of counter of the entry whose first cells are
// keys ("" the fields of a missing record).
func row(rows [][]string, counter string, keys ...string) []string {
	for _, r := range rows {
		if slices.Equal(r[:len(keys)], keys) && r[len(keys)+1] == counter {
			return r[len(keys):]
		}
	}
	return nil
}

// summaryRow finds the record of counter of part (a cache, run or
// memory) in the summary's rows (nil when missing).
func summaryRow(rows [][]string, part, counter string) []string {
	for _, r := range rows {
		if r[0] == part && r[1] == counter {
			return r
		}
	}
	return nil
}

// entryOrder lists the first cell of the entries of rows, in order.
func entryOrder(rows [][]string) []string {
	var names []string
	for _, r := range rows {
		if len(names) == 0 || names[len(names)-1] != r[0] {
			names = append(names, r[0])
		}
	}
	return names
}

func TestDiffObjects(t *testing.T) {
	a, b := testProfile(), diffAfter()
	header, rows := diffRows(t, a, b, "objects", DiffOptions{})
	if want := []string{"object", "kind", "status", "counter", "a", "b", "change", "relative"}; !slices.Equal(header, want) {
		t.Errorf("header %q, want %q", header, want)
	}
	// Each row after the keys: status, counter, A, B, change, relative.
	for _, c := range []struct {
		keys []string
		want []string
	}{
		// Shrank: B's misses and stall cycles.
		{[]string{"B", "heap"}, []string{"", "stall cycles", "1040000", "260000", "-780000", "-0.75"}},
		{[]string{"B", "heap"}, []string{"", "misses", "20000", "5000", "-15000", "-0.75"}},
		{[]string{"B", "heap"}, []string{"", "miss rate", "0.2", "0.05", "-0.15000000000000002", "-0.7500000000000001"}},
		{[]string{"B", "heap"}, []string{"", "replacement", "18000", "3000", "-15000", "-0.8333333333333334"}},
		{[]string{"B", "heap"}, []string{"", "cold", "2000", "2000", "0", "0"}},
		// Grew: x's.
		{[]string{"x", "global"}, []string{"", "stall cycles", "121600", "169600", "48000", "0.39473684210526316"}},
		{[]string{"x", "global"}, []string{"", "miss rate", "0.4", "0.6", "0.19999999999999996", "0.4999999999999999"}},
		// Only in A: removed, its change minus its counts; only in B: added.
		{[]string{"buf", "freed"}, []string{"removed", "stall cycles", "636", "", "-636", "-1"}},
		{[]string{"buf", "freed"}, []string{"removed", "misses", "3", "", "-3", "-1"}},
		{[]string{"buf", "freed"}, []string{"removed", "miss rate", "0.25", "", "", ""}},
		{[]string{"table", ""}, []string{"added", "stall cycles", "", "106000", "106000", ""}},
		{[]string{"particles", "heap"}, []string{"removed", "stall cycles", "768000", "", "-768000", "-1"}},
		{[]string{"parts", ""}, []string{"added", "stall cycles", "", "768000", "768000", ""}},
	} {
		if got := row(rows, c.want[1], c.keys...); !slices.Equal(got, c.want) {
			t.Errorf("%v %s: got %q, want %q", c.keys, c.want[1], got, c.want)
		}
	}
	// Counters 0 in both are left out (no invalidations here).
	if got := row(rows, "invalidation", "B", "heap"); got != nil {
		t.Errorf("invalidation 0 in both: got row %q", got)
	}
	// Largest change of stall cycles first; ties by name.
	if got, want := entryOrder(rows), []string{"B", "particles", "parts", "table", "x", "buf", "A", "C", "y"}; !slices.Equal(got, want) {
		t.Errorf("order %q, want %q", got, want)
	}
}

func TestDiffRename(t *testing.T) {
	a, b := testProfile(), diffAfter()
	if err := a.Rename(map[string]string{"particles": "parts"}); err != nil {
		t.Fatal(err)
	}
	_, rows := diffRows(t, a, b, "objects", DiffOptions{})
	if got, want := row(rows, "stall cycles", "parts", ""), []string{"", "stall cycles", "768000", "768000", "0", "0"}; !slices.Equal(got, want) {
		t.Errorf("renamed parts: got %q, want %q", got, want)
	}
	if got := row(rows, "stall cycles", "particles", "heap"); got != nil {
		t.Errorf("particles still listed after the rename: %q", got)
	}
	// The pairs and references are matched under the new name too.
	_, rows = diffRows(t, a, b, "pairs", DiffOptions{})
	if got := row(rows, "misses", "update (region)", "parts"); got == nil || got[0] != "" || got[4] != "0" {
		t.Errorf("pair update × parts: %q, want one in both, unchanged", got)
	}
	_, rows = diffRows(t, a, b, "refs", DiffOptions{})
	if got := row(rows, "misses", "0x401300", "/home/u/sim/part.c:20", "update (region)", "parts", "read"); got == nil || got[0] != "" {
		t.Errorf("reference 0x401300: %q, want one in both", got)
	}
}

func TestDiffSort(t *testing.T) {
	a, b := testProfile(), diffAfter()
	for _, c := range []struct {
		by   string
		want []string
	}{
		{"", []string{"matmul", "init", "saxpy", "main", "update (region)"}},
		{"stall cycles", []string{"matmul", "init", "saxpy", "main", "update (region)"}},
		// |Δ misses| at L1D: 15,000, 4,000, 500 (added), 3 (removed).
		{"misses", []string{"matmul", "saxpy", "init", "main", "update (region)"}},
		// |Δ miss rate|: saxpy 0.375 → 0.475, matmul 0.104 → 0.044;
		// the removed and added have no change of rate.
		{"miss_rate", []string{"saxpy", "matmul", "init", "main", "update (region)"}},
	} {
		_, rows := diffRows(t, a, b, "functions", DiffOptions{Sort: c.by})
		if got := entryOrder(rows); !slices.Equal(got, c.want) {
			t.Errorf("--sort %q: order %q, want %q", c.by, got, c.want)
		}
	}
	_, rows := diffRows(t, a, b, "functions", DiffOptions{Top: 2})
	if got := entryOrder(rows); !slices.Equal(got, []string{"matmul", "init"}) {
		t.Errorf("--top 2: %q", got)
	}
}

func TestDiffText(t *testing.T) {
	a, b := testProfile(), diffAfter()
	var s strings.Builder
	if err := Diff(&s, a, b, "functions", DiffOptions{NameA: "before.memspy", NameB: "after.memspy"}); err != nil {
		t.Fatal(err)
	}
	text := s.String()
	inOrder(t, text, "change from A to B by function, largest change of stall cycles first",
		"A: before.memspy (test.mst on machine test); B: after.memspy (test.mst on machine test)",
		"misses and causes at L1D")
	lines := strings.Split(text, "\n")
	find := func(first string) []string {
		for i, l := range lines {
			if c := cells(l); c[0] == first {
				return lines[i:]
			}
		}
		t.Fatalf("no row %q in\n%s", first, text)
		return nil
	}
	// An entry's first row carries its name and status, the next ones
	// only their counters; changes are signed.
	m := find("matmul")
	for i, want := range [][]string{
		{"matmul", "stall cycles", "1,532,000", "752,000", "-780,000", "-50.9%"},
		{"accesses", "250,000", "250,000", "0", "0.0%"},
		{"misses", "26,000", "11,000", "-15,000", "-57.7%"},
		{"miss rate", "10.4000%", "4.4000%", "-6.0000%", "-57.7%"},
	} {
		if got := cells(m[i]); !slices.Equal(got, want) {
			t.Errorf("matmul row %d: %q, want %q", i, got, want)
		}
	}
	if got, want := cells(find("saxpy")[0]), []string{"saxpy", "stall cycles", "231,200", "279,200", "+48,000", "+20.8%"}; !slices.Equal(got, want) {
		t.Errorf("saxpy: %q, want %q", got, want)
	}
	if got, want := cells(find("main")[0]), []string{"main", "removed", "stall cycles", "636", "-", "-636", "-100.0%"}; !slices.Equal(got, want) {
		t.Errorf("main: %q, want %q", got, want)
	}
	if got, want := cells(find("init")[0]), []string{"init", "added", "stall cycles", "-", "106,000", "+106,000", "-"}; !slices.Equal(got, want) {
		t.Errorf("init: %q, want %q", got, want)
	}
	// Aligned: the change column's numbers end at one column.
	header := find("function")[0]
	end := strings.Index(header, "change") + len("change")
	for _, l := range lines {
		if strings.Contains(l, "-780,000") && !strings.HasSuffix(l[:end], "-780,000") {
			t.Errorf("change not right-aligned under its header:\n%s\n%s", header, l)
		}
	}
}

func TestDiffSummary(t *testing.T) {
	a, b := testProfile(), diffAfter()
	// B: a bigger L1D, and no L1I.
	m := *b.Machine
	m.Caches = slices.Clone(m.Caches[1:])
	m.Caches[0].Size, m.Caches[0].Sets = 64<<10, 128
	b.Machine, b.Caches = &m, b.Caches[1:]
	_, rows := diffRows(t, a, b, "summary", DiffOptions{})
	for _, want := range [][]string{
		// L1D misses: 45,003 → 34,500, 12 stall cycles each; L2 misses:
		// 9,959 → 7,456, 200 each.
		{"L1D", "misses", "45003", "34500", "-10503", "-0.2333844410372642"},
		{"L1D", "stall cycles", "540036", "414000", "-126036", "-0.2333844410372642"},
		{"L2", "misses", "9959", "7456", "-2503", "-0.25133045486494626"},
		{"run", "stall cycles", "2531836", "1905200", "-626636", "-0.2475026028542133"},
	} {
		if got := summaryRow(rows, want[0], want[1]); !slices.Equal(got, want) {
			t.Errorf("summary %s %s: %q, want %q", want[0], want[1], got, want)
		}
	}
	for _, r := range rows {
		if r[0] == "L1I" {
			t.Errorf("L1I, only in A, compared: %q", r)
		}
	}
	var s strings.Builder
	if err := Diff(&s, a, b, "summary", DiffOptions{Format: "json"}); err != nil {
		t.Fatal(err)
	}
	var tables []struct{ Notes []string }
	if err := json.Unmarshal([]byte(s.String()), &tables); err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(tables[0].Notes, "\n")
	for _, want := range []string{
		"L1D differs: in A L1D (level 1, 32 KiB data, 8-way, 64 B lines, lru, write-back); in B L1D (level 1, 64 KiB data, 8-way, 64 B lines, lru, write-back)",
		"only in A, not compared: L1I",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}

func TestDiffErrors(t *testing.T) {
	noWhere := testProfile()
	noWhere.Options.Where = false
	noWhere.Functions, noWhere.Objects, noWhere.Pairs, noWhere.Lines, noWhere.References = nil, nil, nil, nil, nil
	for _, c := range []struct {
		name string
		a, b *profile.Profile
		view string
		opt  DiffOptions
		want string
	}{
		{"no where in B", testProfile(), noWhere, "functions", DiffOptions{NameB: "b.memspy"}, "b.memspy: the profile has no where-and-why data"},
		{"unknown view", testProfile(), diffAfter(), "stalls", DiffOptions{}, `unknown view "stalls"`},
		{"unknown format", testProfile(), diffAfter(), "summary", DiffOptions{Format: "xml"}, `unknown format "xml"`},
		{"unknown counter", testProfile(), diffAfter(), "objects", DiffOptions{Sort: "hits"}, "--sort hits: no such counter"},
		{"focus not common", testProfile(), diffAfter(), "objects", DiffOptions{Focus: "L3"}, "--focus L3: not a cache of both machines"},
		{"focus without where", testProfile(), noWhere, "summary", DiffOptions{Focus: "L2", NameB: "b.memspy"}, "--focus: b.memspy has no where-and-why data"},
	} {
		err := Diff(&strings.Builder{}, c.a, c.b, c.view, c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	err := Diff(&strings.Builder{}, testProfile(), noWhere, "refs", DiffOptions{})
	if !errors.Is(err, ErrNoWhere) {
		t.Errorf("refs without where: %v, want ErrNoWhere", err)
	}
	// The summary needs no where-and-why data.
	_, rows := diffRows(t, testProfile(), noWhere, "summary", DiffOptions{})
	if got := summaryRow(rows, "L1D", "misses"); got == nil || got[2] != "45003" || got[3] != "45003" {
		t.Errorf("summary without where: L1D misses %q", got)
	}
	if got := summaryRow(rows, "run", "stall cycles"); got == nil || got[2] != "2531836" || got[3] != "" || got[4] != "" {
		t.Errorf("summary without where in B: stall cycles %q, want unknown in B", got)
	}
}

func TestDiffMissOnly(t *testing.T) {
	a, b := testProfile(), diffAfter()
	b.Options.MissOnly = true
	_, rows := diffRows(t, a, b, "objects", DiffOptions{})
	for _, r := range rows {
		if r[3] == "accesses" || r[3] == "miss rate" {
			t.Errorf("--miss-only in B, yet compared: %q", r)
		}
	}
	if err := Diff(&strings.Builder{}, a, b, "objects", DiffOptions{Sort: "accesses"}); err == nil || !strings.Contains(err.Error(), "--miss-only") {
		t.Errorf("--sort accesses with --miss-only: %v", err)
	}
}

func TestDiffFocus(t *testing.T) {
	a, b := testProfile(), diffAfter()
	_, rows := diffRows(t, a, b, "objects", DiffOptions{Focus: "L2"})
	// B's misses at L2: 4,000 → 1,000.
	if got, want := row(rows, "misses", "B", "heap"), []string{"", "misses", "4000", "1000", "-3000", "-0.75"}; !slices.Equal(got, want) {
		t.Errorf("--focus L2: %q, want %q", got, want)
	}
}

// FuzzDiff: whatever two profiles memspy diff is given (test profiles,
// one with a leaf of its JSON changed as in FuzzReportFields), it renders
// every view in every format, or fails with an error: it never panics.
func FuzzDiff(f *testing.F) {
	seeds := fuzzSeeds(f)
	f.Add(uint8(0), uint8(1), uint16(3), int64(-1), "L2")
	f.Add(uint8(0), uint8(0), uint16(40), int64(1<<40), "")
	f.Add(uint8(2), uint8(4), uint16(200), int64(7), "x")
	f.Add(uint8(3), uint8(0), uint16(500), int64(0), "B")
	f.Fuzz(func(t *testing.T, first, second uint8, leaf uint16, num int64, str string) {
		var tree any
		if err := json.Unmarshal(seeds[int(second)%len(seeds)], &tree); err != nil {
			t.Fatal(err)
		}
		n := int(leaf)
		data, err := json.Marshal(mutateLeaf(tree, &n, num, str))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range DiffViews() {
			for _, format := range Formats() {
				for _, opt := range []DiffOptions{{Format: format}, {Format: format, Top: -1, Sort: "miss_rate", Focus: "L2"}} {
					a, errA := profile.Read(strings.NewReader(string(seeds[int(first)%len(seeds)])))
					b, errB := profile.Read(strings.NewReader(string(data)))
					if errA != nil || errB != nil {
						return
					}
					_ = Diff(io.Discard, a, b, name, opt)
				}
			}
		}
	})
}

// The diff of pairs (or references) says when a profile left some out:
// one only in the other profile may then only look removed or added.
func TestDiffOmitted(t *testing.T) {
	a, b := testProfile(), diffAfter()
	b.OmittedPairs = &profile.OmittedPairs{Pairs: 1234, Levels: map[string]*profile.Stats{}}
	for _, view := range []string{"pairs", "objects"} {
		var s strings.Builder
		if err := Diff(&s, a, b, view, DiffOptions{}); err != nil {
			t.Fatal(err)
		}
		note := "B leaves out 1,234 function × object pairs with the fewest stall cycles"
		if got := strings.Contains(s.String(), note); got != (view == "pairs") {
			t.Errorf("diff of %s: note %q there: %v\n%s", view, note, got, s.String())
		}
		if strings.Contains(s.String(), "A leaves out") {
			t.Errorf("diff of %s notes pairs A left out:\n%s", view, s.String())
		}
	}
}
