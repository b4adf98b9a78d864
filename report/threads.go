package report

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/memspy/memspy/profile"
)

// ErrOneProcessorTime is the error of the threads and sync views on a
// profile of one processor: only a multiprocessor runs the threads'
// simulated clocks.
var ErrOneProcessorTime = errors.New("the profile is of one processor: simulate a machine of several (--procs N) " +
	"for the threads' simulated time and synchronization")

// ErrNoThreads is the error of the threads view on a profile of several
// processors without the threads' times (written by an older memspy).
var ErrNoThreads = errors.New("the profile has no thread times: simulate again with this memspy")

// ErrNoSync is the error of the sync view on a profile without
// synchronization objects.
var ErrNoSync = errors.New("the profile has no synchronization events: run a threaded program under memspy run " +
	"(the tracer reports pthread locks, barriers, condition variables, joins and atomics)")

// summaryThreads is the number of threads the summary lists; the threads
// view lists all.
const summaryThreads = 16

// syncChar draws synchronization cycles in the bars, after compute ('#')
// and memory stall ('=').
const syncChar = "~"

// busy is a thread's busy time: compute, stall and sync cycles.
func busy(t *profile.ThreadStats) uint64 { return t.ComputeCycles + t.StallCycles + t.SyncCycles }

// runTime returns the simulated run time of p's threads, from the
// earliest start to the latest end, and the threads' time, the sum of
// each one's end − start.
func runTime(p *profile.Profile) (run, threads uint64) {
	if len(p.Threads) == 0 {
		return 0, 0
	}
	first, last := p.Threads[0].Start, p.Threads[0].End
	for _, t := range p.Threads {
		first, last = min(first, t.Start), max(last, t.End)
		if t.End > t.Start {
			threads += t.End - t.Start
		}
	}
	return last - first, threads
}

// interleaveText says how the engine ordered the threads' events, "" when
// the profile does not say.
func interleaveText(p *profile.Profile) string {
	switch p.Interleave {
	case "clock":
		if p.Quantum > 0 {
			return fmt.Sprintf("threads re-interleaved by simulated clock in quanta of %s events", Count(uint64(p.Quantum)))
		}
		return "threads re-interleaved by simulated clock"
	case "trace":
		return "threads in the traced order"
	}
	return ""
}

// runTimeText is the simulated run time of p's threads, as a note.
func runTimeText(p *profile.Profile) string {
	run, _ := runTime(p)
	return fmt.Sprintf("simulated run time: %s cycles (from the first thread's start to the last thread's end)", Count(run))
}

// threadTable builds the table of p's threads, in order of first
// appearance: their processor, events, compute, memory stall and sync
// cycles with their shares of the thread's busy time, and the totals. The
// summary's (full false) lists at most summaryThreads; the threads view's
// (full) lists every thread, or the first top when top > 0, and adds each
// one's busy time, start and end clocks and a bar.
func threadTable(p *profile.Profile, full bool, top int) *Table {
	t := &Table{
		Title: "threads (simulated cycles; shares of each thread's busy time: compute + stall + sync):",
		Columns: []Column{{Name: "thread"}, {Name: "processor"}, {Name: "events"}, {Name: "compute cycles"}, {Name: "compute share"},
			{Name: "stall cycles"}, {Name: "stall share"}, {Name: "sync cycles"}, {Name: "sync share"}},
	}
	if full {
		t.Title = "threads: compute (#), memory stall (=) and synchronization (" + syncChar + ") cycles"
		t.Columns = append(t.Columns, Column{Name: "busy cycles"}, Column{Name: "start"}, Column{Name: "end"},
			Column{Name: "", TextOnly: true})
	}
	if s := interleaveText(p); s != "" {
		t.Notes = append(t.Notes, s)
	}
	t.Notes = append(t.Notes, runTimeText(p))
	if full {
		t.Notes = append(t.Notes, "compute: one cycle per event; stall: the waits of its misses for the level below "+
			"(as in the where views); sync: its waits at locks, barriers, condition variables and joins; "+
			"busy: the three, of which the shares are; start and end: its simulated clock at its first and its last event")
	}
	var total profile.ThreadStats
	var biggest uint64
	for i := range p.Threads {
		th := &p.Threads[i]
		total.Events += th.Events
		total.ComputeCycles += th.ComputeCycles
		total.StallCycles += th.StallCycles
		total.SyncCycles += th.SyncCycles
		biggest = max(biggest, busy(th))
		if i == 0 {
			total.Start, total.End = th.Start, th.End
		}
		total.Start, total.End = min(total.Start, th.Start), max(total.End, th.End)
	}
	cells := func(thread, processor Cell, th *profile.ThreadStats) []Cell {
		b := busy(th)
		cs := []Cell{thread, processor, countCell(th.Events), countCell(th.ComputeCycles), shareCell(th.ComputeCycles, b),
			countCell(th.StallCycles), shareCell(th.StallCycles, b), countCell(th.SyncCycles), shareCell(th.SyncCycles, b)}
		if full {
			cs = append(cs, countCell(b), countCell(th.Start), countCell(th.End))
		}
		return cs
	}
	rows := make([]Row, len(p.Threads))
	for i := range p.Threads {
		th := &p.Threads[i]
		rows[i] = Row{Cells: cells(idCell(uint64(th.Thread)), countCell(uint64(th.Processor)), th)}
		if full {
			rows[i].Cells = append(rows[i].Cells, textCell(bar3(th.ComputeCycles, th.StallCycles, th.SyncCycles, biggest)))
		}
	}
	more := "--top to see more"
	if !full {
		top, more = summaryThreads, "memspy report PROFILE threads: all"
	}
	if top > 0 && len(rows) > top {
		t.Notes = append(t.Notes, fmt.Sprintf("the first %d of %d threads (%s)", top, len(rows), more))
		rows = rows[:top]
	}
	t.Rows = rows
	t.Total = cells(textCell("total"), textCell(""), &total)
	if full {
		t.Total = append(t.Total, textCell(""))
	}
	return t
}

// syncSummary is a note on the waiting at synchronization for the
// summary's threads table: the cycles waited in all and the object waited
// at most ("" when no thread waited).
func syncSummary(p *profile.Profile) string {
	var waited uint64
	var most *profile.SyncObject
	for i := range p.Sync {
		s := &p.Sync[i]
		waited += s.WaitCycles
		if most == nil || s.WaitCycles > most.WaitCycles {
			most = s
		}
	}
	if waited == 0 {
		return ""
	}
	_, threads := runTime(p)
	return fmt.Sprintf("waits at synchronization: %s cycles, %s of the threads' time; most at %s (%s) %s cycles, %s "+
		"(memspy report PROFILE sync: all %d objects)", Count(waited), share(waited, threads), most.Name, most.Kind,
		Count(most.WaitCycles), share(most.WaitCycles, waited), len(p.Sync))
}

// threads: every thread's simulated time.
func (v *viewer) threads() ([]*Table, error) {
	if len(v.p.Threads) == 0 {
		if len(v.p.Processors) == 0 {
			return nil, ErrOneProcessorTime
		}
		return nil, ErrNoThreads
	}
	return []*Table{threadTable(v.p, true, v.opt.Top)}, nil
}

// sync: the synchronization objects, most wait cycles first.
func (v *viewer) sync() ([]*Table, error) {
	if len(v.p.Sync) == 0 {
		if len(v.p.Processors) == 0 && len(v.p.Threads) == 0 {
			return nil, ErrOneProcessorTime
		}
		return nil, ErrNoSync
	}
	objs := append([]profile.SyncObject{}, v.p.Sync...)
	profile.SortSync(objs)
	// The address is worth a column when some name is not it (a data bin).
	addr := false
	for _, s := range objs {
		if s.Kind != "join" && s.Name != fmt.Sprintf("%#x", s.Addr) {
			addr = true
		}
	}
	t := &Table{Title: "synchronization objects by wait cycles", Columns: []Column{{Name: "object"}}}
	if addr {
		t.Columns = append(t.Columns, Column{Name: "address"})
	}
	t.Columns = append(t.Columns, Column{Name: "kind"}, Column{Name: "operations"}, Column{Name: "waits"}, Column{Name: "wait cycles"},
		Column{Name: "share"}, Column{Name: "average wait"})
	var total profile.SyncObject
	for _, s := range objs {
		total.Operations += s.Operations
		total.Waits += s.Waits
		total.WaitCycles += s.WaitCycles
	}
	cells := func(name Cell, address Cell, kind string, s *profile.SyncObject) []Cell {
		cs := []Cell{name}
		if addr {
			cs = append(cs, address)
		}
		return append(cs, textCell(kind), countCell(s.Operations), countCell(s.Waits), countCell(s.WaitCycles),
			shareCell(s.WaitCycles, total.WaitCycles), averageCell(s.WaitCycles, s.Waits))
	}
	rows := make([]Row, len(objs))
	for i := range objs {
		s := &objs[i]
		rows[i] = Row{Cells: cells(textCell(s.Name), cond(s.Kind != "join", hexCell(s.Addr)), s.Kind, s)}
	}
	_, threads := runTime(v.p)
	t.Notes = append(t.Notes, "operations: acquisitions (lock), arrivals (barrier), wakes (condition), joins, atomic updates; "+
		"waits: those that waited; share: of all the objects' wait cycles; average wait: wait cycles per wait")
	if threads > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("the threads waited %s cycles in all, %s of their time (%s cycles: "+
			"the sum of each thread's end − start)", Count(total.WaitCycles), share(total.WaitCycles, threads), Count(threads)))
	}
	v.limit(t, rows)
	t.Total = cells(textCell("total"), textCell(""), "", &total)
	return []*Table{t}, nil
}

// idCell is a number that names something (a thread id): no thousands
// separators.
func idCell(n uint64) Cell { return Cell{Text: strconv.FormatUint(n, 10), kind: kindUint, u: n} }

// averageCell is a/n rounded, unknown when n is 0.
func averageCell(a, n uint64) Cell {
	if n == 0 {
		return unknownCell()
	}
	return countCell((a + n/2) / n)
}

// Kinds of advice on synchronization.
const (
	AdviceLockContention   = "lock-contention"
	AdviceBarrierImbalance = "barrier-imbalance"
	AdviceConditionWait    = "condition-wait"
)

// syncMinShare is the share of the threads' time (the sum of each one's
// end − start) that waiting at one lock, barrier or condition variable
// must reach for advice.
const syncMinShare = 0.10

// adviseSync applies the synchronization rules to p: a lock, barrier or
// condition variable at which the threads waited at least syncMinShare of
// their time. Its advice is in the order of p.Sync (most wait cycles
// first).
func adviseSync(p *profile.Profile) []Advice {
	_, threads := runTime(p)
	if threads == 0 {
		return nil
	}
	names := map[string]int{} // objects by name: a name of several is followed by the address
	for _, s := range p.Sync {
		names[s.Name]++
	}
	var out []Advice
	for i := range p.Sync {
		s := &p.Sync[i]
		if float64(s.WaitCycles) < syncMinShare*float64(threads) {
			continue
		}
		name := s.Name
		if names[name] > 1 {
			name += fmt.Sprintf(" (%#x)", s.Addr)
		}
		adv := Advice{Object: name, WaitCycles: s.WaitCycles}
		what := map[string]string{"lock": "acquisitions", "barrier": "arrivals", "condition": "wakes"}[s.Kind]
		evidence := []string{
			fmt.Sprintf("the threads waited %s cycles at %s %s, %s of their time (%s cycles over %d threads: "+
				"the sum of each one's end − start)", Count(s.WaitCycles), s.Kind, name, share(s.WaitCycles, threads),
				Count(threads), len(p.Threads)),
			fmt.Sprintf("%s of its %s %s waited (%s), %s cycles each on average", Count(s.Waits), Count(s.Operations), what,
				share(s.Waits, s.Operations), Count((s.WaitCycles+s.Waits/2)/max(s.Waits, 1))),
		}
		switch s.Kind {
		case "lock":
			adv.Kind = AdviceLockContention
			adv.Message = fmt.Sprintf("lock contention on %s: threads wait %s of their time to acquire it; "+
				"shorten the critical sections it guards (compute outside them) or split it into finer locks", name,
				share(s.WaitCycles, threads))
		case "barrier":
			adv.Kind = AdviceBarrierImbalance
			adv.Message = fmt.Sprintf("load imbalance at barrier %s: threads wait %s of their time there for the last "+
				"to arrive; divide the work between barriers more evenly (smaller chunks, dynamic scheduling) "+
				"and compare the threads' compute and stall cycles (memspy report PROFILE threads)", name,
				share(s.WaitCycles, threads))
		case "condition":
			adv.Kind = AdviceConditionWait
			adv.Message = fmt.Sprintf("threads wait %s of their time on condition variable %s for a signal "+
				"(or its mutex): the signalling threads are the bottleneck; give them less to do per signal, "+
				"or let the waiters do other work (a longer queue, batches)", share(s.WaitCycles, threads), name)
		default:
			continue // joins wait for the work itself; atomics do not wait
		}
		adv.Evidence = evidence
		out = append(out, adv)
	}
	return out
}

// mergeSync inserts the synchronization advice sync into out (use after
// free first, then the object advice by stall cycles, or NUMA cycles):
// each before the first object advice with fewer cycles than it has wait
// cycles.
func mergeSync(out, sync []Advice) []Advice {
	for _, s := range sync {
		i := len(out)
		for j, a := range out {
			if a.Kind != AdviceUseAfterFree && a.WaitCycles == 0 && adviceCycles(&a) < s.WaitCycles {
				i = j
				break
			}
		}
		// After the synchronization advice already placed with more waits.
		for i < len(out) && out[i].WaitCycles >= s.WaitCycles && out[i].WaitCycles > 0 {
			i++
		}
		out = append(out[:i], append([]Advice{s}, out[i:]...)...)
	}
	return out
}

// bar3 draws compute ('#'), memory stall ('=') and sync (syncChar)
// cycles scaled so that biggest fills barWidth columns.
func bar3(compute, stall, sync, biggest uint64) string {
	if biggest == 0 {
		return ""
	}
	scale := func(n uint64) int { return int((n*barWidth + biggest/2) / biggest) }
	all := scale(compute + stall + sync)
	cs := min(scale(compute+stall), all)
	c := min(scale(compute), cs)
	return strings.Repeat("#", c) + strings.Repeat("=", cs-c) + strings.Repeat(syncChar, all-cs)
}
