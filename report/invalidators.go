package report

import (
	"fmt"

	"github.com/memspy/memspy/profile"
)

// invalidators: who invalidated an object's lines at the focus cache, by
// the writing object and processor; whose lines its writes invalidated;
// and, for an object, the writes that invalidated other processors'
// copies, by processor and offset.
func (v *viewer) invalidators() ([]*Table, error) {
	s, err := v.subject("invalidators", true)
	if err != nil {
		return nil, err
	}
	if len(v.p.Processors) == 0 {
		return nil, ErrOneProcessor
	}
	suffered := v.sharingTable(fmt.Sprintf("lines of %s invalidated at %s, by the object and processor whose write invalidated them",
		s.label, v.focus), "written by", s.stats.InvalidatedBy, s.object)
	suffered.Notes = append(append(s.notes, fmt.Sprintf("%s invalidation misses followed (%s true sharing, %s false sharing)",
		Count(s.stats.Causes.Invalidation), Count(s.stats.Causes.TrueSharing), Count(s.stats.Causes.FalseSharing))), suffered.Notes...)
	caused := v.sharingTable(fmt.Sprintf("lines of other processors that the writes of %s invalidated at %s, by their object and processor",
		s.label, v.focus), "lines of", s.stats.Invalidated, s.object)
	tables := []*Table{suffered, caused}
	if s.object != nil && v.opt.Function == "" {
		tables = append(tables, v.sharingWritesTable(s.object))
	}
	return tables, nil
}

// sharingTable lists invalidation counts by the other side's object and
// processor, with their false sharing and whether the other object is
// self (the subject object) or another.
func (v *viewer) sharingTable(title, side string, sh []profile.Sharing, self *profile.Object) *Table {
	t := &Table{
		Title: title,
		Columns: []Column{{Name: side}, {Name: "processor"}, {Name: "lines"}, {Name: "share"}, {Name: "false sharing"},
			{Name: "false share"}, {Name: "objects"}},
	}
	var total, falses uint64
	for _, x := range sh {
		total += x.Lines
		falses += x.FalseSharing
	}
	var rows []Row
	for _, x := range sh {
		proc, objects := countCell(uint64(x.Processor)), textCell("other")
		if x.Processor < 0 {
			proc, objects = textCell(""), textCell("")
		} else if self != nil && x.Object == self.Name {
			objects = textCell("same")
		}
		rows = append(rows, Row{Cells: []Cell{textCell(x.Object), proc, countCell(x.Lines), shareCell(x.Lines, total),
			countCell(x.FalseSharing), shareCell(x.FalseSharing, x.Lines), objects}})
	}
	v.limit(t, rows)
	if len(rows) == 0 {
		return t
	}
	t.Total = []Cell{textCell("total"), textCell(""), countCell(total), shareCell(total, total), countCell(falses),
		shareCell(falses, total), textCell("")}
	t.Notes = append(t.Notes, "lines: one per line and private cache that lost it; false sharing: the processor that lost "+
		"the line had not used the bytes the write wrote")
	return t
}

// sharingWritesTable lists the writes to o that invalidated other
// processors' copies, by processor and offset.
func (v *viewer) sharingWritesTable(o *profile.Object) *Table {
	t := &Table{
		Title: "writes to " + o.Name + " that invalidated other processors' copies, by processor and offset",
		Columns: []Column{{Name: "processor"}, {Name: "offset"}, {Name: "bytes"}, {Name: "copies"}, {Name: "false sharing"},
			{Name: "neighbour only"}, {Name: "own block"}},
	}
	var rows []Row
	for _, w := range o.SharingWrites {
		own := ""
		if w.OwnBlock {
			own = "yes"
		}
		rows = append(rows, Row{Cells: []Cell{countCell(uint64(w.Processor)), countCell(w.Offset), countCell(w.Size),
			countCell(w.Copies), countCell(w.FalseSharing), countCell(w.Neighbour), textCell(own)}})
	}
	v.limit(t, rows)
	if len(rows) == 0 {
		t.Notes = append(t.Notes, "writes to stack frames and unknown memory have no offsets")
		return t
	}
	where := "from the object's start"
	if o.Kind == "heap" {
		where = "from the start of the heap block written"
	}
	t.Notes = append(t.Notes, "offset: of the first byte written, "+where+"; copies: other processors' copies of the line "+
		"invalidated; neighbour only: copies whose processor had used none of the object's bytes in the line (only data "+
		"beside it); own block: writes by the thread that allocated the block")
	return t
}
