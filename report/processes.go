package report

import (
	"fmt"

	"github.com/memspy/memspy/profile"
)

// summaryProcesses is the number of processes the summary lists; the
// processes view lists all.
const summaryProcesses = 16

// dataCache returns the index of the cache whose misses the processes
// table shows: the profile's focus, else the first cache that data went
// through, else the first.
func dataCache(p *profile.Profile) int {
	for i, c := range p.Caches {
		if c.Name == p.Focus {
			return i
		}
	}
	for i, c := range p.Caches {
		if c.Reads+c.Writes+c.Misc > 0 {
			return i
		}
	}
	return 0
}

// processTable builds the table of the programs of p's process tree, in
// the order they started: pid, parent, how each ended, its events,
// instructions and the misses of one cache, and the command line; a
// profile of one program is one row, with what it knows. The summary's
// (top = summaryProcesses) lists the first ones only.
func processTable(p *profile.Profile, top int, more string) *Table {
	t := &Table{
		Title: "processes: each program each traced process ran, in the order they started",
		Columns: []Column{{Name: "pid"}, {Name: "parent"}, {Name: "ended"}, {Name: "events"}, {Name: "instructions"},
			{Name: "misses"}, {Name: "miss rate"}, {Name: "command"}},
	}
	if len(p.Caches) > 0 {
		c := p.Caches[dataCache(p)].Name
		t.Columns[5].Name, t.Columns[6].Name = c+" misses", c+" miss rate"
	}
	if len(p.Processes) > 0 {
		t.Notes = append(t.Notes, "the profile's other counters are the total of the tree; memspy report PROFILE VIEW --pid N shows one process")
	} else {
		t.Notes = append(t.Notes, "a profile of one program (memspy run gives each program of a process tree its row)")
	}
	procs := p.Processes
	if len(procs) == 0 {
		procs = []profile.Process{{Command: p.Source.Name, Profile: p}}
	}
	for _, pr := range procs {
		q := pr.Profile
		ended := pr.Exit
		if pr.Exec != "" {
			ended = "exec " + pr.Exec
			if pr.ExecUntraced {
				ended += " (untraced: not 64-bit x86)"
			}
		}
		var misses, accesses uint64
		if q != nil && len(q.Caches) == len(p.Caches) && len(p.Caches) > 0 {
			c := q.Caches[dataCache(p)]
			misses, accesses = c.Misses, c.Accesses
		}
		var events, ifetch uint64
		if q != nil {
			events, ifetch = q.Events, q.EventsByKind["ifetch"]
		}
		t.Rows = append(t.Rows, Row{Cells: []Cell{cond(pr.Pid > 0, idCell(uint64(pr.Pid))), cond(pr.Pid > 0, idCell(uint64(pr.Parent))), orUnknown(ended),
			countCell(events), countCell(ifetch), countCell(misses), rateCell(misses, accesses), textCell(pr.Command)}})
	}
	if top > 0 && len(t.Rows) > top {
		t.Notes = append(t.Notes, fmt.Sprintf("the first %d of %d (%s)", top, len(t.Rows), more))
		t.Rows = t.Rows[:top]
	}
	return t
}

// processes is the processes view: every program of the process tree.
func (v *viewer) processes() ([]*Table, error) {
	return []*Table{processTable(v.p, v.top, v.more)}, nil
}
