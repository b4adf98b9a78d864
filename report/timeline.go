package report

import (
	"errors"
	"fmt"
	"strings"

	"github.com/memspy/memspy/profile"
)

// ErrNoTimeline is the error of the timeline view on a profile without
// one.
var ErrNoTimeline = errors.New("the profile has no timeline: run with --where (profiles of memspy before version 3 have none)")

// timeline: the caches' miss rates over the run, a row per point.
func (v *viewer) timeline() ([]*Table, error) {
	tl := v.p.Timeline
	if tl == nil {
		return nil, ErrNoTimeline
	}
	focus := 0
	for i := range tl.Caches {
		if tl.Caches[i].Name == v.p.Focus {
			focus = i
		}
	}
	t := &Table{Title: "miss rate over the run, by cache"}
	points := fmt.Sprintf("%d points of about %s events each (the last may be shorter)", tl.Len(), Count(tl.Interval))
	if tl.Len() == 1 {
		points = fmt.Sprintf("1 point of at most %s events", Count(tl.Interval))
	}
	t.Notes = append(t.Notes, points+"; the bar is the "+tl.Caches[focus].Name+" miss rate")
	if tl.Start > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("from the last reset marker, at event %s", Count(tl.Start)))
	}
	t.Columns = []Column{{Name: "start"}, {Name: "end"}, {Name: "events"}, {Name: "instructions"}}
	for _, c := range tl.Caches {
		t.Columns = append(t.Columns, Column{Name: c.Name + " accesses"}, Column{Name: c.Name + " misses"},
			Column{Name: c.Name + " miss rate"})
	}
	t.Columns = append(t.Columns, Column{Name: "marks"}, Column{Name: "bar", TextOnly: true})
	var biggest float64
	for k := range tl.Len() {
		c := tl.Counts(focus, k)
		biggest = max(biggest, ratioOf(c.Misses, c.Accesses))
	}
	start, m := tl.Start, 0
	for k := range tl.Len() {
		cells := []Cell{countCell(start), countCell(tl.End[k]), countCell(tl.Events[k]), countCell(tl.Instructions[k])}
		for i := range tl.Caches {
			c := tl.Counts(i, k)
			cells = append(cells, countCell(c.Accesses), countCell(c.Misses), rateCell(c.Misses, c.Accesses))
		}
		// The marks at or before this point's end, and after the last's.
		var marks []string
		for ; m < len(tl.Marks) && (tl.Marks[m].Event <= tl.End[k] || k == tl.Len()-1); m++ {
			marks = append(marks, markText(tl.Marks[m]))
		}
		c := tl.Counts(focus, k)
		cells = append(cells, textCell(strings.Join(marks, ", ")), textCell(rateBar(ratioOf(c.Misses, c.Accesses), biggest)))
		t.Rows = append(t.Rows, Row{Cells: cells})
		start = tl.End[k]
	}
	if pt := v.processorTimeline(tl); pt != nil {
		return []*Table{t, pt}, nil
	}
	return []*Table{t}, nil
}

// processorTimeline: on several processors, each one's accesses, misses
// and miss rate at its copy of a private cache (the focus cache, else the
// first private one), a row per point; nil on one processor.
func (v *viewer) processorTimeline(tl *profile.Timeline) *Table {
	if len(tl.Processors) == 0 || len(tl.Processors[0].Caches) == 0 {
		return nil
	}
	name := tl.Processors[0].Caches[0].Name
	for _, c := range tl.Processors[0].Caches {
		if c.Name == v.p.Focus {
			name = c.Name
		}
	}
	t := &Table{Title: "miss rate over the run at " + name + ", by processor"}
	procs := tl.Processors[:v.shown(t, len(tl.Processors))]
	t.Notes = append(t.Notes, "each processor's copy of "+name+" (a private cache)")
	t.Columns = []Column{{Name: "start"}, {Name: "end"}}
	for _, pr := range procs {
		p := fmt.Sprintf("P%d ", pr.Processor)
		t.Columns = append(t.Columns, Column{Name: p + "accesses"}, Column{Name: p + "misses"}, Column{Name: p + "miss rate"})
	}
	start := tl.Start
	for k := range tl.Len() {
		cells := []Cell{countCell(start), countCell(tl.End[k])}
		for _, pr := range procs {
			c, _ := tl.ProcessorCounts(pr.Processor, name, k)
			cells = append(cells, countCell(c.Accesses), countCell(c.Misses), rateCell(c.Misses, c.Accesses))
		}
		t.Rows = append(t.Rows, Row{Cells: cells})
		start = tl.End[k]
	}
	return t
}

// markText describes a mark: "dump NAME@EVENT", "reset@EVENT".
func markText(m profile.TimelineMark) string {
	if m.Name != "" {
		return fmt.Sprintf("%s %s@%d", m.Kind, m.Name, m.Event)
	}
	return fmt.Sprintf("%s@%d", m.Kind, m.Event)
}

// rateBar draws rate against biggest as a bar of at most barWidth '#'.
func rateBar(rate, biggest float64) string {
	if biggest <= 0 {
		return ""
	}
	return strings.Repeat("#", int(rate/biggest*barWidth+0.5))
}

// ratioOf returns a/b, 0 when b is 0.
func ratioOf(a, b uint64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// lineUseTable is the line use of object o at each cache (LineUse): of
// the lines its misses filled, the share that used each byte offset,
// eight offsets a row; nil when it has none.
func (v *viewer) lineUseTable(label string, o *profile.Object) *Table {
	if len(o.LineUse) == 0 {
		return nil
	}
	t := &Table{Title: label + ": line use by cache (the share of its lines, as they left, that used each byte offset)"}
	t.Columns = []Column{{Name: "cache"}, {Name: "lines"}, {Name: "offsets"}}
	for b := range 8 {
		t.Columns = append(t.Columns, Column{Name: fmt.Sprintf("+%d", b)})
	}
	t.Columns = append(t.Columns, Column{Name: "use", TextOnly: true})
	for _, name := range v.levelNames(o.Levels) {
		use, s := o.LineUse[name], o.Levels[name]
		mc, ok := v.p.MachineCache(name)
		if len(use) == 0 || !ok || mc.Line <= 0 || s.FetchedBytes == 0 {
			continue
		}
		lines := s.FetchedBytes / uint64(mc.Line)
		for off := 0; off < mc.Line; off += 8 {
			cells := []Cell{textCell(name), countCell(lines), textCell(fmt.Sprintf("%d-%d", off, min(off+8, mc.Line)-1))}
			var shade strings.Builder
			for b := range 8 {
				if off+b >= mc.Line {
					cells = append(cells, unknownCell())
					continue
				}
				var n uint64
				if off+b < len(use) {
					n = use[off+b]
				}
				cells = append(cells, shareCell(n, lines))
				shade.WriteByte(shadeOf(ratioOf(n, lines)))
			}
			t.Rows = append(t.Rows, Row{Cells: append(cells, textCell(shade.String()))})
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	t.Notes = append(t.Notes, "bytes never used while a line was resident were fetched for nothing: "+
		"reorder or split the fields (hot ones together), or pack the data")
	return t
}

// shadeOf draws a share as one character, from ' ' (none) to '#' (all).
func shadeOf(f float64) byte {
	const shades = " .:-=+*%#"
	return shades[min(len(shades)-1, int(f*float64(len(shades)-1)+0.5))]
}
