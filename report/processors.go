package report

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/profile"
)

// ErrOneProcessor is the error of the processors view on a profile of one
// processor, which has no per-processor counters.
var ErrOneProcessor = errors.New("the profile is of one processor: simulate a machine of several (--procs N) for per-processor counters")

// The bounds of the processor tables.
const (
	summaryProcessors = 16 // processors the summary lists; the processors view lists all
	threadsShown      = 4  // thread ids a row shows in text (CSV and JSON have all)
)

// processorsText describes the processors of p and how threads were
// placed on them, "4 processors; threads placed round-robin in the order
// they appear", or "" on one processor.
func processorsText(p *profile.Profile) string {
	m := p.Machine
	n := len(p.Processors)
	if m != nil {
		n = max(n, m.Processors)
	}
	if n <= 1 {
		return ""
	}
	s := fmt.Sprintf("%d processors", n)
	switch {
	case m == nil:
	case m.Mapping == machine.Pinned:
		pin := make([]string, len(m.Pin))
		for i, x := range m.Pin {
			pin[i] = strconv.Itoa(x)
		}
		s += "; threads pinned to processors " + strings.Join(pin, ",") + " in the order they appear, further threads round-robin"
	default:
		s += "; threads placed round-robin in the order they appear"
	}
	return s
}

// sharedText says, on a machine of several processors, whether cache c
// is shared by all or private to each ("" on one processor).
func sharedText(m *machine.Machine, c *machine.Cache) string {
	switch {
	case m == nil || m.Processors <= 1:
		return ""
	case c.Shared:
		return ", shared"
	}
	return ", private to each processor"
}

// coherenceLine is the coherence counters of a private cache, "" when
// they are all 0: the lines other processors' writes invalidated and the
// misses on them, true and false sharing.
func coherenceLine(c *profile.CacheStats) string {
	if c.Invalidations == 0 && c.TrueSharingMisses == 0 && c.FalseSharingMisses == 0 {
		return ""
	}
	return fmt.Sprintf("coherence: %s lines invalidated by other processors' writes; misses on them: true sharing %s, false sharing %s",
		Count(c.Invalidations), Count(c.TrueSharingMisses), Count(c.FalseSharingMisses))
}

// hasSharing reports whether some cache of p had true or false sharing
// misses.
func hasSharing(p *profile.Profile) bool {
	for _, c := range p.Caches {
		if c.TrueSharingMisses+c.FalseSharingMisses > 0 || c.Causes != nil && c.Causes.TrueSharing+c.Causes.FalseSharing > 0 {
			return true
		}
	}
	return false
}

// idle reports whether processor s ran no thread and did nothing.
func idle(s *profile.ProcessorStats) bool {
	if len(s.Threads) > 0 || s.Upgrades+s.Interventions+s.InvalidationsSent+s.InvalidationsReceived > 0 {
		return false
	}
	return !slices.ContainsFunc(s.Caches, func(c profile.CacheStats) bool { return c.Accesses > 0 || c.Invalidations > 0 })
}

// privateCache returns the counters of cache name among a processor's,
// zero when it has none by that name.
func privateCache(s *profile.ProcessorStats, name string) profile.CacheStats {
	if i := slices.IndexFunc(s.Caches, func(c profile.CacheStats) bool { return c.Name == name }); i >= 0 {
		return s.Caches[i]
	}
	return profile.CacheStats{Name: name}
}

// threadsCell lists a processor's threads: the first threadsShown in text,
// with their number when there are more, all of them in CSV and JSON.
func threadsCell(ts []uint32) Cell {
	ids := make([]string, len(ts))
	for i, t := range ts {
		ids[i] = strconv.FormatUint(uint64(t), 10)
	}
	all := strings.Join(ids, ", ")
	if len(ts) <= threadsShown {
		return textCell(all)
	}
	return shortCell(fmt.Sprintf("%s, … (%d)", strings.Join(ids[:threadsShown], ", "), len(ts)), all)
}

// numberRanges writes ascending numbers as ranges: "2, 4-7".
func numberRanges(ns []int) string {
	var parts []string
	for i := 0; i < len(ns); {
		j := i
		for j+1 < len(ns) && ns[j+1] == ns[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(ns[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", ns[i], ns[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// processorTable builds the table of p's processors: their threads, the
// accesses, misses and miss rate of their private caches, and their part
// in the coherence protocol, with the totals. The summary's (full false)
// leaves out the processors that ran no thread and did nothing, saying
// so, and the private caches no processor accessed, and lists at most
// summaryProcessors; the processors view's (full) lists every processor,
// or the first top when top > 0.
func processorTable(p *profile.Profile, full bool, top int) *Table {
	var names []string // the private caches, in machine order
	for _, s := range p.Processors {
		for _, c := range s.Caches {
			if !slices.Contains(names, c.Name) && (full || c.Accesses > 0) {
				names = append(names, c.Name)
			}
		}
	}
	t := &Table{Title: "processors", Columns: []Column{{Name: "processor"}, {Name: "threads"}}}
	if !full {
		t.Title = fmt.Sprintf("processors (each with its own %s):", strings.Join(names, ", "))
	}
	for _, name := range names {
		t.Columns = append(t.Columns, Column{Name: name + " accesses"}, Column{Name: name + " misses"}, Column{Name: name + " miss rate"})
	}
	t.Columns = append(t.Columns, Column{Name: "upgrades"}, Column{Name: "interventions"}, Column{Name: "invalidations sent"},
		Column{Name: "invalidations received"})
	if full {
		t.Notes = append(t.Notes, fmt.Sprintf("private caches: each processor's own %s (they add up to the cache totals)",
			strings.Join(names, ", ")),
			"upgrades: writes to lines other processors held too; interventions: dirty lines supplied to other processors' references; "+
				"invalidations: the copies a processor's writes invalidated (sent) and its own copies others' writes invalidated (received)")
	}
	var rows []Row
	var idlers []int
	var total profile.ProcessorStats
	sums := make([]profile.CacheStats, len(names))
	for i := range p.Processors {
		s := &p.Processors[i]
		total.Upgrades += s.Upgrades
		total.Interventions += s.Interventions
		total.InvalidationsSent += s.InvalidationsSent
		total.InvalidationsReceived += s.InvalidationsReceived
		caches := make([]profile.CacheStats, len(names))
		for j, name := range names {
			caches[j] = privateCache(s, name)
			sums[j] = profile.Sum([]profile.CacheStats{sums[j], caches[j]})
		}
		if !full && idle(s) {
			idlers = append(idlers, s.Processor)
			continue
		}
		rows = append(rows, Row{Cells: processorCells(countCell(uint64(s.Processor)), threadsCell(s.Threads), caches, s)})
	}
	if len(idlers) > 0 {
		what := "processors"
		if len(idlers) == 1 {
			what = "processor"
		}
		t.Notes = append(t.Notes, fmt.Sprintf("%d %s ran no thread: %s", len(idlers), what, numberRanges(idlers)))
	}
	t.Rows = firstProcessors(t, rows, full, top)
	t.Total = processorCells(textCell("total"), textCell(""), sums, &total)
	return t
}

// firstProcessors cuts rows to the first top (summaryProcessors in the
// summary), saying so in a note of t.
func firstProcessors(t *Table, rows []Row, full bool, top int) []Row {
	more := "--top to see more"
	if !full {
		top, more = summaryProcessors, "memspy report PROFILE processors: all"
	}
	if top > 0 && len(rows) > top {
		t.Notes = append(t.Notes, fmt.Sprintf("the first %d of %d processors (%s)", top, len(rows), more))
		return rows[:top]
	}
	return rows
}

// processorCells are the cells of a row of the processor table.
func processorCells(processor, threads Cell, caches []profile.CacheStats, s *profile.ProcessorStats) []Cell {
	cells := []Cell{processor, threads}
	for _, c := range caches {
		cells = append(cells, countCell(c.Accesses), countCell(c.Misses), rateCell(c.Misses, c.Accesses))
	}
	return append(cells, countCell(s.Upgrades), countCell(s.Interventions), countCell(s.InvalidationsSent),
		countCell(s.InvalidationsReceived))
}

// privateCacheTable builds the table of every processor's private caches
// (of the first top processors when top > 0), one row per processor and
// cache that saw any access or invalidation: accesses, misses, evictions
// and write-backs, and the lines other processors' writes invalidated
// with the true and false sharing misses on them.
func privateCacheTable(p *profile.Profile, top int) *Table {
	t := &Table{
		Title: "private caches by processor",
		Columns: []Column{{Name: "processor"}, {Name: "cache"}, {Name: "accesses"}, {Name: "misses"}, {Name: "miss rate"},
			{Name: "evictions"}, {Name: "write-backs"}, {Name: "invalidations"}, {Name: "true sharing misses"},
			{Name: "false sharing misses"}},
		Notes: []string{"invalidations: lines the cache lost to other processors' writes; true and false sharing misses: " +
			"the misses on them; caches that saw nothing are left out"},
	}
	for i, s := range p.Processors {
		if top > 0 && i == top {
			break
		}
		for _, c := range s.Caches {
			if c.Accesses == 0 && c.Invalidations == 0 {
				continue
			}
			t.Rows = append(t.Rows, Row{Cells: []Cell{countCell(uint64(s.Processor)), textCell(c.Name), countCell(c.Accesses),
				countCell(c.Misses), rateCell(c.Misses, c.Accesses), countCell(c.Evictions), countCell(c.Writebacks),
				countCell(c.Invalidations), countCell(c.TrueSharingMisses), countCell(c.FalseSharingMisses)}})
		}
	}
	return t
}

// processors: the per-processor table, every processor, and their
// private caches in detail.
func (v *viewer) processors() ([]*Table, error) {
	if len(v.p.Processors) == 0 {
		return nil, ErrOneProcessor
	}
	t := processorTable(v.p, true, v.opt.Top)
	if d := processorsText(v.p); d != "" {
		t.Notes = append([]string{d}, t.Notes...)
	}
	return []*Table{t, privateCacheTable(v.p, v.opt.Top)}, nil
}

// Stats of the sharing view.
var (
	// statInvalShare is the share of the misses that are invalidation
	// misses.
	statInvalShare = stat{"share of misses", false, func(s *profile.Stats) Cell { return shareCell(s.Causes.Invalidation, s.Misses) }}
	// statFalseShare is the share of false sharing among the sharing
	// misses.
	statFalseShare = stat{"false share", false, func(s *profile.Stats) Cell {
		return shareCell(s.Causes.FalseSharing, s.Causes.TrueSharing+s.Causes.FalseSharing)
	}}
	// statLost and statCaused are the invalidations the entry suffered
	// (its lines other processors' writes invalidated) and caused (the
	// lines of other processors its writes invalidated).
	statLost     = counter("suffered", false, func(s *profile.Stats) uint64 { return sharingLines(s.InvalidatedBy) })
	statCaused   = counter("caused", false, func(s *profile.Stats) uint64 { return sharingLines(s.Invalidated) })
	sharingStats = []stat{statMisses, statInval, statInvalShare, statTrue, statFalse, statFalseShare, statLost, statCaused, statStall}
)

// sharingLines adds up the lines of invalidation counts.
func sharingLines(sh []profile.Sharing) uint64 {
	var n uint64
	for _, x := range sh {
		n += x.Lines
	}
	return n
}

// sharing: the invalidations and sharing misses by cache, then the
// objects and pairs with invalidation misses at the focus cache, most
// first; a profile without sharing says so.
func (v *viewer) sharing() ([]*Table, error) {
	caches := &Table{
		Title: "coherence by cache",
		Columns: []Column{{Name: "cache"}, {Name: "lines invalidated"}, {Name: "true sharing misses"}, {Name: "false sharing misses"},
			{Name: "false share"}},
	}
	if len(v.p.Processors) == 0 {
		caches.Notes = append(caches.Notes, "no sharing: the profile is of one processor (simulate a machine of several: --procs N)")
		return []*Table{caches}, nil
	}
	var lost, missed uint64
	for i := range v.p.Caches {
		c := &v.p.Caches[i]
		if coherenceLine(c) == "" {
			continue
		}
		lost += c.Invalidations
		missed += c.TrueSharingMisses + c.FalseSharingMisses
		caches.Rows = append(caches.Rows, Row{Cells: []Cell{textCell(c.Name), countCell(c.Invalidations), countCell(c.TrueSharingMisses),
			countCell(c.FalseSharingMisses), shareCell(c.FalseSharingMisses, c.TrueSharingMisses+c.FalseSharingMisses)}})
	}
	caches.Notes = append(caches.Notes, "lines invalidated: lines a private cache lost to other processors' writes; sharing misses: "+
		"misses on them, true sharing when the processor had used bytes the write wrote, false sharing when it had used only "+
		"other bytes of the line; false share: of the sharing misses")
	switch {
	case lost == 0 && missed == 0:
		caches.Notes = append(caches.Notes, "no sharing: no processor's write invalidated a line another processor held")
		return []*Table{caches}, nil
	case missed == 0:
		caches.Notes = append(caches.Notes, fmt.Sprintf("no sharing misses: other processors' writes invalidated %s lines, "+
			"but no processor missed on them again", Count(lost)))
		return []*Table{caches}, nil
	}
	var objects, pairs []item
	for i := range v.p.Objects {
		if o := &v.p.Objects[i]; o.Causes.Invalidation > 0 {
			objects = append(objects, item{[]Cell{textCell(o.Name), textCell(o.Kind), sizeCell(o)}, &o.Stats, o.Name})
		}
	}
	for i := range v.p.Pairs {
		if pr := &v.p.Pairs[i]; pr.Causes.Invalidation > 0 {
			pairs = append(pairs, item{[]Cell{textCell(v.funcName(pr.Function)), textCell(pr.Object)}, &pr.Stats,
				pr.Function + "\x00" + pr.Object})
		}
	}
	byObject := v.statTable("objects by invalidation misses at "+v.focus, []string{"object", "kind", "size"}, sharingStats,
		rankInvalidation(objects))
	byPair := v.statTable("function × object by invalidation misses at "+v.focus, []string{"function", "object"}, sharingStats,
		rankInvalidation(pairs))
	notes := []string{"invalidation: misses on lines another processor's write invalidated (share of misses: of the entry's " +
		"misses), split into true and false sharing (false share: of the two); suffered: the entry's lines other processors' " +
		"writes invalidated, caused: other processors' lines its writes invalidated (who: report invalidators --object O); stall cycles over every cache"}
	if slices.ContainsFunc(append(objects, pairs...), func(it item) bool {
		return it.stats.Causes.Invalidation > it.stats.Causes.TrueSharing+it.stats.Causes.FalseSharing
	}) {
		notes = append(notes, "invalidation misses neither true nor false sharing follow the trace's invalidate records")
	}
	if c := focusCache(v.p); c != nil && c.Shared {
		notes = append(notes, fmt.Sprintf("%s is shared: coherence invalidates only the private caches' lines (--focus a private cache)",
			v.focus))
	}
	byObject.Notes = append(notes, byObject.Notes...)
	byPair.Notes = append(notes[1:], byPair.Notes...) // the columns as above
	return []*Table{caches, byObject, byPair}, nil
}

// rankInvalidation sorts items by invalidation misses, then false sharing
// misses, stall cycles and name.
func rankInvalidation(items []item) []item {
	slices.SortStableFunc(items, func(a, b item) int {
		x, y := &a.stats.Causes, &b.stats.Causes
		return cmp.Or(cmp.Compare(y.Invalidation, x.Invalidation), cmp.Compare(y.FalseSharing, x.FalseSharing),
			cmp.Compare(b.stats.StallCycles, a.stats.StallCycles), cmp.Compare(a.name, b.name))
	})
	return items
}
