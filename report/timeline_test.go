package report

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/memspy/memspy/profile"
)

// TestTimelineView renders a timeline of two caches in three points, from
// a reset on, with a dump and the reset marked: a row per point with
// each cache's counts and miss rate, the marks in the row whose span
// holds them (a mark before the first point in the first row).
func TestTimelineView(t *testing.T) {
	p := testProfile()
	tl := profile.NewTimeline([]string{"L1I", "L1D", "L2"}, 100, 1000)
	for k, c := range [][2]uint64{{50, 5}, {40, 20}, {10, 0}} {
		tl.Append(1000+uint64(k+1)*100, 100, 60, []profile.TimelineCounts{{Accesses: 60}, {Accesses: c[0], Misses: c[1], ReadMisses: c[1]},
			{Accesses: c[1] + 1, Misses: 1, ReadMisses: 1}})
	}
	tl.Mark("reset", "", 1000)
	tl.Mark("dump", "d", 1150)
	p.Timeline = tl
	got := viewText(t, p, "timeline", ViewOptions{})
	for _, want := range []string{
		"3 points of about 100 events each (the last may be shorter); the bar is the L1D miss rate",
		"from the last reset marker, at event 1,000",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("timeline: no %q in\n%s", want, got)
		}
	}
	var rows [][]string
	for _, line := range strings.Split(got, "\n")[4:] {
		if f := strings.Fields(line); len(f) > 0 {
			rows = append(rows, f)
		}
	}
	want := [][]string{
		strings.Fields("1,000 1,100 100 60 60 0 0.0000% 50 5 10.0000% 6 1 16.6667% reset@1000 ########"),
		strings.Fields("1,100 1,200 100 60 60 0 0.0000% 40 20 50.0000% 21 1 4.7619% dump d@1150 " + strings.Repeat("#", barWidth)),
		strings.Fields("1,200 1,300 100 60 60 0 0.0000% 10 0 0.0000% 1 1 100.0000%"),
	}
	if !slices.EqualFunc(rows, want, slices.Equal) {
		t.Errorf("timeline rows:\n%q\nwant\n%q", rows, want)
	}
	recs := readCSV(t, viewText(t, p, "timeline", ViewOptions{Format: "csv"}))
	if !slices.Equal(recs[0][:7], []string{"start", "end", "events", "instructions", "l1i_accesses", "l1i_misses", "l1i_miss_rate"}) ||
		!slices.Equal(recs[2][7:10], []string{"40", "20", "0.5"}) || recs[2][13] != "dump d@1150" || len(recs) != 4 {
		t.Errorf("timeline CSV: %q", recs)
	}
	// On several processors, each one's L1D too.
	tl.Processors = []profile.TimelineProcessor{{Processor: 0, Caches: []profile.TimelineCache{{Name: "L1D"}}},
		{Processor: 1, Caches: []profile.TimelineCache{{Name: "L1D"}}}}
	for _, pr := range tl.Processors {
		c := &pr.Caches[0]
		c.Accesses, c.Misses = []uint64{25, 20, 5}, []uint64{uint64(pr.Processor) * 5, 10, 0}
		c.IFetchMisses, c.ReadMisses, c.WriteMisses = []uint64{0, 0, 0}, c.Misses, []uint64{0, 0, 0}
	}
	recs = readCSV(t, viewText(t, p, "timeline", ViewOptions{Format: "csv"}))
	i := slices.IndexFunc(recs, func(r []string) bool { return r[0] == "start" && r[2] == "p0_accesses" })
	if i < 0 || !slices.Equal(recs[i], []string{"start", "end", "p0_accesses", "p0_misses", "p0_miss_rate", "p1_accesses", "p1_misses", "p1_miss_rate"}) ||
		!slices.Equal(recs[i+1], []string{"1000", "1100", "25", "0", "0", "25", "5", "0.2"}) || len(recs) != i+4 {
		t.Errorf("timeline by processor: %q", recs)
	}
	p.Timeline = nil
	if err := View(&strings.Builder{}, p, "timeline", ViewOptions{}); err != ErrNoTimeline {
		t.Errorf("a profile without a timeline: %v", err)
	}
}

// TestDetailLineUse shows an object's line use in its detail view: per
// cache, eight offsets a row, the share of its lines that used each.
func TestDetailLineUse(t *testing.T) {
	p := testProfile()
	b := &p.Objects[slices.IndexFunc(p.Objects, func(o profile.Object) bool { return o.Name == "B" })]
	lines := b.Levels["L1D"].FetchedBytes / 64
	use := make([]uint64, 12) // offsets 12-63 never used
	for i := range use {
		use[i] = lines / uint64(i+1)
	}
	b.LineUse = map[string][]uint64{"L1D": use}
	recs := readCSV(t, viewText(t, p, "detail", ViewOptions{Object: "B", Format: "csv"}))
	i := slices.IndexFunc(recs, func(r []string) bool { return r[0] == "cache" && r[2] == "offsets" })
	if i < 0 || !slices.Equal(recs[i], []string{"cache", "lines", "offsets", "0", "1", "2", "3", "4", "5", "6", "7"}) {
		t.Fatalf("no line use table: %q", recs)
	}
	rows := recs[i+1:]
	if len(rows) != 8 || rows[0][0] != "L1D" || rows[0][1] != strconv.FormatUint(lines, 10) || rows[0][2] != "0-7" || rows[0][3] != "1" ||
		rows[1][2] != "8-15" || rows[1][6] != "0.0833" || rows[1][7] != "0" || rows[7][2] != "56-63" {
		t.Errorf("line use rows: %q", rows)
	}
	if want := strconv.FormatFloat(float64(lines/2)/float64(lines), 'g', -1, 64); rows[0][4] != want {
		t.Errorf("offset 1: %s, want %s", rows[0][4], want)
	}
	text := viewText(t, p, "detail", ViewOptions{Object: "B"})
	if !strings.Contains(text, "B: line use by cache (the share of its lines, as they left, that used each byte offset)") {
		t.Errorf("no line use in\n%s", text)
	}
	// A pair's detail has none: line use is the object's.
	if text := viewText(t, p, "detail", ViewOptions{Object: "B", Function: "matmul"}); strings.Contains(text, "line use") {
		t.Errorf("line use in a pair's detail:\n%s", text)
	}
}
