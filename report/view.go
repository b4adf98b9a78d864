package report

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/profile"
)

// ViewOptions select and shape a view.
type ViewOptions struct {
	Function  string // data: the function to break down; lines, detail, evictors, refs: restrict to this function ("" all)
	Object    string // detail, evictors, invalidators: the object (matched against Name or FullName); refs: restrict to it
	Evictors  bool   // refs: show each reference's evictor references
	Inclusive bool   // overview: rank functions by their inclusive cycles (with their callees)
	Top       int    // rows per table, and evictors per reference (0: DefaultTop; negative: all)
	Format    string // "text" (default), "csv", "json"
}

// DefaultTop is the number of rows per table when ViewOptions.Top is 0.
const DefaultTop = 20

// barWidth is the width of the overview's bars, in columns.
const barWidth = 40

// ErrNoWhere is the error of every view but processors, threads, sync and
// numa on a profile without where-and-why data (of advice too, unless the
// rules on synchronization or NUMA have something to say).
var ErrNoWhere = errors.New("the profile has no where-and-why data: run with --where")

// ErrNoLines is the error of the lines view on a profile without source
// lines.
var ErrNoLines = errors.New("the profile has no source lines: run with debugging information (-g) or give sim --binary")

// ErrNoInclusive is the error of the inclusive overview on a profile
// without inclusive counters.
var ErrNoInclusive = errors.New("the profile has no inclusive counters: simulate again with this memspy")

// regionSuffix follows the name of a code region wherever a view lists
// functions.
const regionSuffix = " (region)"

// view is a view of View (or, without build, of Diff).
type view struct {
	name, help string
	build      func(*viewer) ([]*Table, error)
	// anyProfile views render profiles without where-and-why data too.
	anyProfile bool
}

// views, in the order of the help text (MemSpy's hierarchy of detail:
// the whole program, then where, then one function or object, then why).
var views = []view{
	{"processes", "a process tree (memspy run follows forks and execs): each program each process ran, how it ended, " +
		"its events and misses (memspy report PROFILE --pid N shows one process's counters)", (*viewer).processes, true},
	{"overview", "compute and memory stall cycles by function, with bars; --inclusive: with their callees", (*viewer).overview, false},
	{"calls", "the call tree: call paths by inclusive cycles; with --function, its callers and callees", (*viewer).calls, false},
	{"processors", "several processors: each one's threads, private caches and coherence traffic (--top N: the first N)",
		(*viewer).processors, true},
	{"threads", "several processors: each thread's compute, memory stall and sync cycles, start and end (--top N: the first N)",
		(*viewer).threads, true},
	{"sync", "several processors: locks, barriers, condition variables, joins and atomics by the cycles threads waited at them",
		(*viewer).sync, true},
	{"numa", "several NUMA nodes: misses from memory, local, remote and remote-dirty, by node, processor, object and " +
		"function × object (--top N), and pages to migrate", (*viewer).numa, true},
	{"timeline", "the caches' accesses, misses and miss rate over the run (with --where), dump and reset markers marked",
		(*viewer).timeline, true},
	{"stalls", "stall cycles by function × object, by object and by function, with the causes of misses", (*viewer).stalls, false},
	{"lines", "stall cycles by source line (optionally of one --function), with the causes of misses and spatial use", (*viewer).lines, false},
	{"data", "one function (--function) broken down by object", (*viewer).data, false},
	{"detail", "one object (--object, optionally with --function) by cache level: reads and writes, causes, locality", (*viewer).detail, false},
	{"evictors", "whose fills evicted an object's lines (--object), self or cross interference", (*viewer).evictors, false},
	{"sharing", "several processors: objects and function × object pairs by invalidation misses, true and false sharing",
		(*viewer).sharing, false},
	{"invalidators", "several processors: who invalidated an object's lines (--object, optionally with --function) and whose " +
		"lines its writes invalidated, by object and processor; the writes by processor and offset", (*viewer).invalidators, false},
	{"refs", "per reference (METRIC): misses, temporal and spatial hits, spatial use; --evictors adds who evicted them", (*viewer).refs, false},
	{"advice", "rules on the top bottlenecks, with their evidence", (*viewer).advice, true},
}

// Views lists the view names, in the order of the help text.
func Views() []string { return viewNames(views) }

// viewNames returns the names of vs.
func viewNames(vs []view) []string {
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = v.name
	}
	return names
}

// ViewHelp returns a one-line description of view name ("" if there is
// no such view).
func ViewHelp(name string) string { return viewHelp(views, name) }

// viewHelp returns the description of view name among vs ("" if there is
// no such view).
func viewHelp(vs []view, name string) string {
	if i := slices.IndexFunc(vs, func(v view) bool { return v.name == name }); i >= 0 {
		return vs[i].help
	}
	return ""
}

// View writes view name of p to w.
func View(w io.Writer, p *profile.Profile, name string, opt ViewOptions) error {
	i := slices.IndexFunc(views, func(v view) bool { return v.name == name })
	if i < 0 {
		return fmt.Errorf("unknown view %q (views: %s)", name, strings.Join(Views(), ", "))
	}
	if opt.Format != "" && !slices.Contains(Formats(), opt.Format) {
		return fmt.Errorf("unknown format %q (formats: %s)", opt.Format, strings.Join(Formats(), ", "))
	}
	if !views[i].anyProfile && !HasWhere(p) {
		return ErrNoWhere
	}
	tables, err := views[i].build(newViewer(p, opt))
	if err != nil {
		return err
	}
	return render(w, tables, opt.Format)
}

// dataOnly returns p without the objects of kind "code" and their pairs
// (the lines instruction fetches bring in, which count in the functions
// and lines that run): the views of data show data references only. It
// shares the rest of p (instruction fetches make no references: they
// have no PC of their own).
func dataOnly(p *profile.Profile) *profile.Profile {
	code := map[string]bool{}
	for i := range p.Objects {
		if p.Objects[i].Kind == "code" {
			code[p.Objects[i].Name] = true
		}
	}
	if len(code) == 0 {
		return p
	}
	q := *p
	q.Objects = slices.DeleteFunc(slices.Clone(p.Objects), func(o profile.Object) bool { return code[o.Name] })
	q.Pairs = slices.DeleteFunc(slices.Clone(p.Pairs), func(pr profile.Pair) bool { return code[pr.Object] })
	return &q
}

// HasWhere reports whether p carries where-and-why data.
func HasWhere(p *profile.Profile) bool { return len(p.Functions) > 0 || len(p.Objects) > 0 }

// viewer holds what every view needs.
type viewer struct {
	p     *profile.Profile
	opt   ViewOptions
	top   int    // rows per table; < 0: all
	focus string // focus cache name, for titles
	// stall is the total stall cycles of the run: the denominator of the
	// shares.
	stall   uint64
	known   bool            // accesses, hits and locality were counted (not --miss-only)
	more    string          // how to see the rows cut by top
	regions map[string]bool // the functions that are code regions, by name
	shared  bool            // the profile has true or false sharing misses
}

func newViewer(p *profile.Profile, opt ViewOptions) *viewer {
	p = dataOnly(p)
	v := &viewer{p: p, opt: opt, top: opt.Top, focus: p.Focus, known: !p.Options.MissOnly, more: "--top to see more",
		regions: map[string]bool{}}
	if v.top == 0 {
		v.top = DefaultTop
	}
	if v.focus == "" {
		v.focus = "the focus cache"
	}
	v.stall = totalStall(p)
	v.shared = hasSharing(p)
	for _, f := range p.Functions {
		if f.Region {
			v.regions[f.Name] = true
		}
	}
	return v
}

// funcName is how views list function name: a region's name is followed
// by regionSuffix.
func (v *viewer) funcName(name string) string {
	if v.regions[name] {
		return name + regionSuffix
	}
	return name
}

// totalStall is the stall cycles of the run: those of every function (each
// reference is made by one), else of every object.
func totalStall(p *profile.Profile) uint64 {
	var n uint64
	for i := range p.Functions {
		n += p.Functions[i].StallCycles
	}
	if n == 0 {
		for i := range p.Objects {
			n += p.Objects[i].StallCycles
		}
	}
	return n
}

// limit cuts rows to the viewer's top and says so in a note of t.
func (v *viewer) limit(t *Table, rows []Row) { t.Rows = rows[:v.shown(t, len(rows))] }

// shown returns how many of n rows t shows, at most v.top, and notes in t
// when that leaves some out.
func (v *viewer) shown(t *Table, n int) int {
	if v.top >= 0 && n > v.top {
		t.Notes = append(t.Notes, fmt.Sprintf("top %d of %d (%s)", v.top, n, v.more))
		return v.top
	}
	return n
}

// missOnlyNote is the note of tables with columns a --miss-only run
// cannot know.
const missOnlyNote = "misses only (--miss-only): accesses, hits and locality are not known (-)"

// A stat is a column computed from an entry's Stats.
type stat struct {
	name string
	all  bool // known only when the run counted every access (not --miss-only)
	cell func(s *profile.Stats) Cell
}

// at is the stat of s in v: unknown when v's run cannot know it.
func (st stat) at(v *viewer, s *profile.Stats) Cell {
	if st.all && !v.known {
		return unknownCell()
	}
	return st.cell(s)
}

// counter is a stat that is a count.
func counter(name string, all bool, n func(s *profile.Stats) uint64) stat {
	return stat{name, all, func(s *profile.Stats) Cell { return countCell(n(s)) }}
}

// shareOf is a stat: the share of the stall cycles in total.
func shareOf(name string, total uint64) stat {
	return stat{name, false, func(s *profile.Stats) Cell { return shareCell(s.StallCycles, total) }}
}

var (
	statStall    = counter("stall cycles", false, func(s *profile.Stats) uint64 { return s.StallCycles })
	statAccesses = counter("accesses", true, func(s *profile.Stats) uint64 { return s.Accesses })
	statHits     = counter("hits", true, func(s *profile.Stats) uint64 { return s.Hits })
	statMisses   = counter("misses", false, func(s *profile.Stats) uint64 { return s.Misses })
	statReads    = counter("reads", true, func(s *profile.Stats) uint64 { return s.Reads })
	statWrites   = counter("writes", true, func(s *profile.Stats) uint64 { return s.Writes })
	statRMisses  = counter("read misses", false, func(s *profile.Stats) uint64 { return s.ReadMisses })
	statWMisses  = counter("write misses", false, func(s *profile.Stats) uint64 { return s.WriteMisses })
	statCold     = counter("cold", false, func(s *profile.Stats) uint64 { return s.Causes.Cold })
	statRepl     = counter("replacement", false, func(s *profile.Stats) uint64 { return s.Causes.Replacement })
	statInval    = counter("invalidation", false, func(s *profile.Stats) uint64 { return s.Causes.Invalidation })
	statTrue     = counter("true sharing", false, func(s *profile.Stats) uint64 { return s.Causes.TrueSharing })
	statFalse    = counter("false sharing", false, func(s *profile.Stats) uint64 { return s.Causes.FalseSharing })
	statTemporal = counter("temporal hits", true, func(s *profile.Stats) uint64 { return s.TemporalHits })
	statSpatial  = counter("spatial hits", true, func(s *profile.Stats) uint64 { return s.SpatialHits })
	statUsed     = counter("used bytes", true, func(s *profile.Stats) uint64 { return s.UsedBytes })
	statFetched  = counter("fetched bytes", true, func(s *profile.Stats) uint64 { return s.FetchedBytes })
	statMissRate = stat{"miss rate", true, func(s *profile.Stats) Cell { return rateCell(s.Misses, s.Accesses) }}
	statUse      = stat{"spatial use", true, func(s *profile.Stats) Cell {
		return cond(s.FetchedBytes > 0, fracCell(s.SpatialUse))
	}}
	// causes are the columns of the causes of misses; a profile with
	// sharing misses adds sharingCauses (see viewer.causes).
	causes        = []stat{statCold, statRepl, statInval}
	sharingCauses = []stat{statTrue, statFalse}
)

// causes are the columns of the causes of misses: cold, replacement and
// invalidation, then true and false sharing when the profile has any.
func (v *viewer) causes() []stat {
	if v.shared {
		return concat(causes, sharingCauses)
	}
	return causes
}

// An item is a row in the making: its leading cells and its stats.
type item struct {
	keys  []Cell
	stats *profile.Stats
	name  string // tie-break
}

// rank sorts items by stall cycles, then misses, then name.
func rank(items []item) []item {
	slices.SortStableFunc(items, func(a, b item) int {
		return cmp.Or(cmp.Compare(b.stats.StallCycles, a.stats.StallCycles), cmp.Compare(b.stats.Misses, a.stats.Misses),
			cmp.Compare(a.name, b.name))
	})
	return items
}

// statTable builds a table of items, in their order: the key columns,
// then the stats.
func (v *viewer) statTable(title string, keys []string, stats []stat, items []item) *Table {
	t := &Table{Title: title}
	if v.p.Sampling != nil {
		stats = v.sampledStats(stats)
		t.Notes = append(t.Notes, sampledNote(v.p))
	}
	for _, k := range keys {
		t.Columns = append(t.Columns, Column{Name: k})
	}
	for _, s := range stats {
		t.Columns = append(t.Columns, Column{Name: s.name})
	}
	t.Rows = make([]Row, v.shown(t, len(items)))
	for i, it := range items[:len(t.Rows)] {
		cells := append([]Cell{}, it.keys...)
		for _, s := range stats {
			cells = append(cells, s.at(v, it.stats))
		}
		t.Rows[i] = Row{Cells: cells}
	}
	v.noteMissOnly(t, stats)
	return t
}

// noteMissOnly notes in t that the run counted misses only, when one of
// its stats cannot be known then.
func (v *viewer) noteMissOnly(t *Table, stats []stat) {
	if !v.known && slices.ContainsFunc(stats, func(s stat) bool { return s.all }) {
		t.Notes = append(t.Notes, missOnlyNote)
	}
}

func concat(parts ...[]stat) []stat { return slices.Concat(parts...) }

// overview: compute vs memory stall cycles by function, their own or,
// with ViewOptions.Inclusive, with their callees'. Shares are of the whole
// run's cycles, every function's own.
func (v *viewer) overview() ([]*Table, error) {
	type cycles struct {
		f                    *profile.Function
		compute, stall, sync uint64
		known                bool // false: the function has no inclusive counters
	}
	count := func(f *profile.Function) cycles { return cycles{f, f.ComputeCycles, f.StallCycles, f.SyncCycles, true} }
	// The sync columns appear when threads waited in some function.
	sync := slices.ContainsFunc(v.p.Functions, func(f profile.Function) bool { return f.SyncCycles > 0 })
	t := &Table{
		Title: "cycles by function: compute (#) and memory stall (=)",
		Columns: []Column{{Name: "function"}, {Name: "compute cycles"}, {Name: "compute share"}, {Name: "stall cycles"},
			{Name: "stall share"}, {Name: "total cycles"}, {Name: "share"}, {Name: "", TextOnly: true}},
	}
	t.Notes = append(t.Notes, "compute: one cycle per instruction; stall: "+latencies(v.p.Machine))
	if sync {
		t.Title = "cycles by function: compute (#), memory stall (=) and synchronization (" + syncChar + ")"
		t.Columns = slices.Insert(t.Columns, 5, Column{Name: "sync cycles"}, Column{Name: "sync share"})
		t.Notes = append(t.Notes, "sync: the cycles its threads waited at locks, barriers, condition variables and joins "+
			"called from it (simulated clocks)")
	}
	totalName := "total"
	if v.opt.Inclusive {
		if !slices.ContainsFunc(v.p.Functions, func(f profile.Function) bool { return f.Inclusive != nil }) {
			return nil, ErrNoInclusive
		}
		count = func(f *profile.Function) cycles {
			if in := f.Inclusive; in != nil {
				return cycles{f, in.ComputeCycles, in.StallCycles, in.SyncCycles, true}
			}
			return cycles{f: f}
		}
		t.Title = "inclusive cycles by function (with their callees): compute (#) and memory stall (=)"
		if sync {
			t.Title = "inclusive cycles by function (with their callees): compute (#), memory stall (=) and synchronization (" +
				syncChar + ")"
		}
		t.Notes = append(t.Notes, "inclusive: a function's cycles and those of everything it called and of the regions in it, "+
			"so the rows overlap and their shares need not add up to 100%; shares are of the whole run's cycles "+
			"(the last row: the sum of every function's own cycles)")
		totalName = "whole run"
	}
	rs := make([]cycles, len(v.p.Functions))
	var compute, stall, waited, biggest uint64
	for i := range v.p.Functions {
		f := &v.p.Functions[i]
		rs[i] = count(f)
		compute += f.ComputeCycles
		stall += f.StallCycles
		waited += f.SyncCycles
		biggest = max(biggest, rs[i].compute+rs[i].stall+rs[i].sync)
	}
	slices.SortStableFunc(rs, func(a, b cycles) int {
		return cmp.Or(cmp.Compare(b.compute+b.stall+b.sync, a.compute+a.stall+a.sync), cmp.Compare(a.f.Name, b.f.Name))
	})
	all := compute + stall + waited
	known := computeKnown(v.p)
	if !known {
		t.Notes = append(t.Notes, "no cache holds instructions: compute cycles are not known (-)")
	}
	// cells are a row's: the function (or total), compute, stall and (with
	// sync) sync cycles with their shares, the total and its share.
	cells := func(name Cell, compute, stall, waited uint64, computeKnown, known bool) []Cell {
		total := compute + stall + waited
		cs := []Cell{name, cond(computeKnown, countCell(compute)), cond(computeKnown, shareCell(compute, all)),
			cond(known, countCell(stall)), cond(known, shareCell(stall, all))}
		if sync {
			cs = append(cs, cond(known, countCell(waited)), cond(known, shareCell(waited, all)))
		}
		return append(cs, cond(known, countCell(total)), cond(known, shareCell(total, all)))
	}
	rows := make([]Row, len(rs))
	for i, r := range rs {
		rows[i] = Row{Cells: append(cells(textCell(v.funcName(r.f.Name)), r.compute, r.stall, r.sync, known && r.known, r.known),
			textCell(bar3(r.compute, r.stall, r.sync, biggest)))}
	}
	v.limit(t, rows)
	t.Total = append(cells(textCell(totalName), compute, stall, waited, known, true), textCell(""))
	return []*Table{t}, nil
}

// computeKnown reports whether the run counted instructions: some cache
// holds them (without a machine, assume so).
func computeKnown(p *profile.Profile) bool {
	if p.Machine == nil {
		return true
	}
	return slices.ContainsFunc(p.Machine.Caches, func(c machine.Cache) bool { return c.HoldsInstructions() })
}

// latencies describes what a miss at each cache waits for: the next
// level's latency, or memory's after the last level.
func latencies(m *machine.Machine) string {
	if m == nil || len(m.Caches) == 0 {
		return "each miss waits for the level below"
	}
	var parts []string
	for i, c := range m.Caches {
		lat := m.MemoryLatency
		for _, d := range m.Caches[i+1:] {
			if d.Level > c.Level {
				lat = d.Latency
				break
			}
		}
		parts = append(parts, fmt.Sprintf("%s miss %d", c.Name, lat))
	}
	return "each miss waits for the level below (" + strings.Join(parts, ", ") + " cycles)"
}

// bar draws compute ('#') and stall ('=') cycles scaled so that biggest
// fills barWidth columns.
func bar(compute, stall, biggest uint64) string { return bar3(compute, stall, 0, biggest) }

// stallStats are the columns of the stall tables: stall cycles, their
// share of the run's, accesses, misses, miss rate and causes.
func (v *viewer) stallStats() []stat {
	return concat([]stat{statStall, shareOf("share", v.stall), statAccesses, statMisses, statMissRate}, v.causes())
}

// stallNote explains the counters of the stall tables.
func (v *viewer) stallNote() string {
	return fmt.Sprintf("misses and causes at %s; stall cycles over every cache (share: of the run's %s)", v.focus, Count(v.stall))
}

// stalls: stall cycles by pair, object and function.
func (v *viewer) stalls() ([]*Table, error) {
	stats := v.stallStats()
	var pairs, objects, functions []item
	for i := range v.p.Pairs {
		pr := &v.p.Pairs[i]
		pairs = append(pairs, item{[]Cell{textCell(v.funcName(pr.Function)), textCell(pr.Object)}, &pr.Stats,
			pr.Function + "\x00" + pr.Object})
	}
	for i := range v.p.Objects {
		o := &v.p.Objects[i]
		objects = append(objects, item{[]Cell{textCell(o.Name), textCell(o.Kind), sizeCell(o)}, &o.Stats, o.Name})
	}
	for i := range v.p.Functions {
		f := &v.p.Functions[i]
		functions = append(functions, item{[]Cell{textCell(v.funcName(f.Name)), inclusiveStall(f)}, &f.Stats, f.Name})
	}
	functions = rank(functions)
	byFunction := v.statTable("stall cycles by function", []string{"function", "inclusive stall"}, stats, functions)
	byFunction.Notes = append([]string{"inclusive stall: the function's and those of everything it called and of the regions in it"},
		byFunction.Notes...)
	if slices.ContainsFunc(v.p.Functions, func(f profile.Function) bool { return f.SyncCycles > 0 }) {
		// The rows are the first of functions, in order.
		byFunction.Columns = append(byFunction.Columns, Column{Name: "sync cycles"})
		for i := range byFunction.Rows {
			f, _ := v.function(functions[i].name)
			byFunction.Rows[i].Cells = append(byFunction.Rows[i].Cells, countCell(f.SyncCycles))
		}
		byFunction.Notes = append(byFunction.Notes, "sync cycles: the cycles its threads waited at locks, barriers, "+
			"condition variables and joins called from it (not stall: not in the shares)")
	}
	byPair := v.statTable("stall cycles by function × object", []string{"function", "object"}, stats, rank(pairs))
	if o := v.p.OmittedPairs; o != nil {
		byPair.Notes = append(byPair.Notes, fmt.Sprintf("the profile leaves out %s function × object pairs, those with the fewest stall cycles (%s stall cycles in all; their functions and objects count them)",
			Count(o.Pairs), Count(o.StallCycles)))
	}
	ts := []*Table{
		byPair,
		v.statTable("stall cycles by object", []string{"object", "kind", "size"}, stats, rank(objects)),
		byFunction,
	}
	for _, t := range ts {
		t.Notes = append([]string{v.stallNote()}, t.Notes...)
	}
	return ts, nil
}

// inclusiveStall is the stall cycles of f with its callees', unknown
// when the profile has none.
func inclusiveStall(f *profile.Function) Cell {
	if f.Inclusive == nil {
		return unknownCell()
	}
	return countCell(f.Inclusive.StallCycles)
}

// lines: stall cycles by source line, of one function or all.
func (v *viewer) lines() ([]*Table, error) {
	if len(v.p.Lines) == 0 {
		return nil, ErrNoLines
	}
	var fn string
	if v.opt.Function != "" {
		f, err := v.function(v.opt.Function)
		if err != nil {
			return nil, err
		}
		fn = f.Name
	}
	var items []item
	for i := range v.p.Lines {
		l := &v.p.Lines[i]
		if fn != "" && l.Function != fn {
			continue
		}
		items = append(items, item{[]Cell{locationCell(l.File, l.Line, 0), textCell(v.funcName(l.Function))}, &l.Stats,
			location(l.File, l.Line, 0) + "\x00" + l.Function})
	}
	title := "stall cycles by source line"
	if fn != "" {
		title += " of " + v.funcName(fn)
	}
	t := v.statTable(title, []string{"file:line", "function"}, append(v.stallStats(), statUse), rank(items))
	t.Notes = append([]string{v.stallNote()}, t.Notes...)
	return []*Table{t}, nil
}

// sizeCell is an object's size, unknown when 0.
func sizeCell(o *profile.Object) Cell { return cond(o.Size > 0, bytesCell(o.Size)) }

// data: one function by object.
func (v *viewer) data() ([]*Table, error) {
	if v.opt.Function == "" {
		return nil, fmt.Errorf("view data needs a function (--function NAME); functions with the most stall cycles: %s",
			strings.Join(topNames(v.p), ", "))
	}
	f, err := v.function(v.opt.Function)
	if err != nil {
		return nil, err
	}
	stats := concat([]stat{statStall, shareOf("share", f.StallCycles), statAccesses, statMisses, statMissRate}, v.causes(),
		[]stat{statUse})
	var items []item
	for i := range v.p.Pairs {
		pr := &v.p.Pairs[i]
		if pr.Function != f.Name {
			continue
		}
		kind, size := "", unknownCell()
		if o := v.objectByName(pr.Object); o != nil {
			kind, size = o.Kind, sizeCell(o)
		}
		items = append(items, item{[]Cell{textCell(pr.Object), textCell(kind), size, orUnknown(stridesText(pr.Strides, 1))},
			&pr.Stats, pr.Object})
	}
	t := v.statTable(fmt.Sprintf("%s by object", f.Name), []string{"object", "kind", "size", "stride"}, stats, rank(items))
	t.Notes = append([]string{
		fmt.Sprintf("%s: %s stall cycles (%s of the run), %s misses at %s; share: of %s's stall cycles", f.Name,
			Count(f.StallCycles), share(f.StallCycles, v.stall), Count(f.Misses), v.focus, f.Name),
		strideNote,
	}, t.Notes...)
	if o := v.p.OmittedPairs; o != nil {
		t.Notes = append(t.Notes, fmt.Sprintf("the profile leaves out %s function × object pairs, those with the fewest stall cycles (%s stall cycles in all): objects of %s may be among them (its counters above count them)",
			Count(o.Pairs), Count(o.StallCycles), f.Name))
	}
	return []*Table{t}, nil
}

// subject is the entry a detail or evictors view is about.
type subject struct {
	label  string
	stats  *profile.Stats
	levels map[string]*profile.Stats
	object *profile.Object // nil for a function
	notes  []string
}

// subject finds the object (or pair, or function) the options name.
func (v *viewer) subject(viewName string, needObject bool) (*subject, error) {
	o, f := v.opt.Object, v.opt.Function
	if o == "" && (needObject || f == "") {
		return nil, fmt.Errorf("view %s needs an object (--object NAME); objects with the most stall cycles: %s", viewName,
			strings.Join(topObjectNames(v.p), ", "))
	}
	var fn *profile.Function
	if f != "" {
		var err error
		if fn, err = v.function(f); err != nil {
			return nil, err
		}
	}
	if o == "" {
		return &subject{label: fn.Name, stats: &fn.Stats, levels: fn.Levels}, nil
	}
	obj, err := v.object(o)
	if err != nil {
		return nil, err
	}
	s := &subject{label: obj.Name, stats: &obj.Stats, levels: obj.Levels, object: obj}
	s.notes = append(s.notes, objectNotes(obj)...)
	if fn == nil {
		return s, nil
	}
	for i := range v.p.Pairs {
		if pr := &v.p.Pairs[i]; pr.Function == fn.Name && pr.Object == obj.Name {
			s.label, s.stats, s.levels = fn.Name+" × "+obj.Name, &pr.Stats, pr.Levels
			return s, nil
		}
	}
	if o := v.p.OmittedPairs; o != nil {
		return nil, fmt.Errorf("the profile does not list the pair %s × %s: it never referenced the object, or the pair is among the %s left out for having the fewest stall cycles",
			fn.Name, obj.Name, Count(o.Pairs))
	}
	return nil, fmt.Errorf("function %q never referenced object %q", fn.Name, obj.Name)
}

// objectNotes describe an object: kind, size, full name, allocation.
func objectNotes(o *profile.Object) []string {
	s := o.Kind + " object"
	if o.Size > 0 {
		s += ", " + Bytes(o.Size)
	}
	if o.Blocks > 0 {
		s += fmt.Sprintf(" in %s blocks", Count(o.Blocks))
	}
	notes := []string{s}
	if o.FullName != "" && o.FullName != o.Name {
		notes = append(notes, "full name: "+o.FullName)
	}
	if o.AllocSite != "" {
		notes = append(notes, "allocated at "+o.AllocSite)
	}
	if len(o.CallPath) > 0 {
		notes = append(notes, "allocation call path: "+strings.Join(o.CallPath, " ← "))
	}
	return notes
}

// detail: one object (or pair, or function) by cache level.
func (v *viewer) detail() ([]*Table, error) {
	s, err := v.subject("detail", false)
	if err != nil {
		return nil, err
	}
	var items []item // in machine order
	for _, name := range v.levelNames(s.levels) {
		items = append(items, item{[]Cell{textCell(name)}, s.levels[name], name})
	}
	access := v.statTable(s.label+": accesses by cache", []string{"cache"}, []stat{statAccesses, statHits, statMisses,
		statMissRate, statReads, statWrites, statRMisses, statWMisses, statStall}, items)
	access.Notes = append(append(s.notes, fmt.Sprintf("%s stall cycles in all (%s of the run)", Count(s.stats.StallCycles),
		share(s.stats.StallCycles, v.stall))), access.Notes...)
	why := v.statTable(s.label+": causes of misses and locality by cache", []string{"cache"}, concat([]stat{statMisses}, v.causes(),
		[]stat{statTemporal, statSpatial, statUsed, statFetched, statUse}), items)
	tables := []*Table{access, why}
	if s.object != nil && v.opt.Function == "" {
		if use := v.lineUseTable(s.label, s.object); use != nil {
			tables = append(tables, use)
		}
	}
	return tables, nil
}

// levelNames lists the caches of levels in machine order, then any other.
func (v *viewer) levelNames(levels map[string]*profile.Stats) []string {
	var names []string
	for _, c := range v.p.Caches {
		if levels[c.Name] != nil {
			names = append(names, c.Name)
		}
	}
	var rest []string
	for name, s := range levels {
		if s != nil && !slices.Contains(names, name) {
			rest = append(rest, name)
		}
	}
	slices.Sort(rest)
	return append(names, rest...)
}

// evictors: whose fills evicted an object's lines at the focus cache.
func (v *viewer) evictors() ([]*Table, error) {
	s, err := v.subject("evictors", true)
	if err != nil {
		return nil, err
	}
	evictions := s.stats.Evictions()
	t := &Table{
		Title:   fmt.Sprintf("lines of %s evicted at %s, by the object whose fill evicted them", s.label, v.focus),
		Columns: []Column{{Name: "evicted by"}, {Name: "kind"}, {Name: "lines"}, {Name: "share"}, {Name: "interference"}},
	}
	t.Notes = append(s.notes, fmt.Sprintf("%s lines evicted; %s misses, %s of them replacements", Count(evictions),
		Count(s.stats.Misses), Count(s.stats.Causes.Replacement)))
	var rows []Row
	for _, e := range rankEvictedBy(s.stats.EvictedBy) {
		kind, interference := "", "cross"
		if o := v.objectByName(e.name); o != nil {
			kind = o.Kind
		}
		if e.name == s.object.Name {
			interference = "self"
		}
		rows = append(rows, Row{Cells: []Cell{textCell(e.name), orUnknown(kind), countCell(e.n), shareCell(e.n, evictions),
			textCell(interference)}})
	}
	if n := s.stats.EvictedByOthers; n > 0 {
		// (last whatever its count: the objects beyond profile.MaxEvictedBy)
		rows = append(rows, Row{Cells: []Cell{textCell(fmt.Sprintf("(objects beyond the %d listed)", profile.MaxEvictedBy)),
			textCell(""), countCell(n), shareCell(n, evictions), textCell("")}})
	}
	v.limit(t, rows)
	if len(rows) > 0 {
		t.Total = []Cell{textCell("total"), textCell(""), countCell(evictions), shareCell(evictions, evictions), textCell("")}
	}
	return []*Table{t}, nil
}

type evictedBy struct {
	name string
	n    uint64
}

// rankEvictedBy sorts an EvictedBy map most first, then by name.
func rankEvictedBy(m map[string]uint64) []evictedBy {
	var es []evictedBy
	for name, n := range m {
		if n > 0 {
			es = append(es, evictedBy{name, n})
		}
	}
	slices.SortFunc(es, func(a, b evictedBy) int { return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(a.name, b.name)) })
	return es
}

// refs: the METRIC per-reference table, most misses first.
func (v *viewer) refs() ([]*Table, error) {
	var fn, obj string
	if v.opt.Function != "" {
		f, err := v.function(v.opt.Function)
		if err != nil {
			return nil, err
		}
		fn = f.Name
	}
	if v.opt.Object != "" {
		o, err := v.object(v.opt.Object)
		if err != nil {
			return nil, err
		}
		obj = o.Name
	}
	rs := pointers(v.p.References)
	rs = slices.DeleteFunc(rs, func(r *profile.Reference) bool {
		return fn != "" && r.Function != fn || obj != "" && r.Object != obj
	})
	slices.SortStableFunc(rs, func(a, b *profile.Reference) int {
		return cmp.Or(cmp.Compare(b.Misses, a.Misses), cmp.Compare(b.StallCycles, a.StallCycles), cmp.Compare(a.PC, b.PC),
			cmp.Compare(a.Object, b.Object))
	})
	title := "references (" + v.focus + ")"
	if fn != "" || obj != "" {
		title = "references of " + strings.Trim(fn+" × "+obj, " ×") + " (" + v.focus + ")"
	}
	stats := []stat{statAccesses, statHits, statMisses, statMissRate}
	if v.shared {
		stats = concat(stats, []stat{statInval}, sharingCauses)
	}
	stats = concat(stats, []stat{statTemporal, statSpatial, statUse})
	t := &Table{Title: title, Columns: []Column{{Name: "pc"}, {Name: "file:line"}, {Name: "pos"}, {Name: "function"}, {Name: "object"},
		{Name: "kind"}, {Name: "strides"}}}
	for _, s := range stats {
		t.Columns = append(t.Columns, Column{Name: s.name})
	}
	t.Notes = append(t.Notes, "pos: the reference's place among those of its source line, by column, from 0", strideNote)
	if o := v.p.OmittedReferences; o != nil {
		t.Notes = append(t.Notes, fmt.Sprintf("the profile leaves out %s references, those with the fewest stall cycles (%s misses in all); each had at most the stall cycles of the last one listed",
			Count(o.References), Count(o.Misses)))
	}
	if v.opt.Evictors {
		t.SubTitle = "evictor references (" + v.focus + ")"
		t.SubColumns = []Column{{Name: "evictor pc"}, {Name: "evictor file:line"}, {Name: "evictor object"}, {Name: "lines"}, {Name: "share"}}
		t.SubKey = []int{0, 4}
		t.Notes = append(t.Notes, "← the references whose fills evicted the lines of the reference above: pc, file:line, object, lines, share of its evicted lines")
	}
	at := map[string]Cell{} // "0x…" → file:line
	for _, r := range v.p.References {
		at[fmt.Sprintf("%#x", r.PC)] = locationCell(r.File, r.Line, r.Column)
	}
	var rows []Row
	for _, r := range rs {
		cells := []Cell{hexCell(r.PC), locationCell(r.File, r.Line, r.Column), cond(r.File != "" && r.Line > 0, countCell(uint64(r.Position))),
			textCell(v.funcName(r.Function)), textCell(r.Object), textCell(r.Kind), stridesCell(r.Strides, refStrides)}
		for _, s := range stats {
			cells = append(cells, s.at(v, &r.Stats))
		}
		row := Row{Cells: cells}
		if v.opt.Evictors {
			var n uint64
			for _, e := range r.Evictors {
				n += e.Count
			}
			for j, e := range r.Evictors {
				if v.top >= 0 && j == v.top {
					break
				}
				loc, ok := at[e.Reference]
				row.Sub = append(row.Sub, []Cell{textCell(e.Reference), cond(ok, loc), textCell(e.Object),
					countCell(e.Count), shareCell(e.Count, n)})
			}
		}
		rows = append(rows, row)
	}
	v.limit(t, rows)
	v.noteMissOnly(t, stats)
	return []*Table{t}, nil
}

// location is "file:line:col" (col > 0), "file:line", "file" or "".
func location(file string, line, col int) string {
	switch {
	case file == "" || line == 0:
		return file
	case col > 0:
		return fmt.Sprintf("%s:%d:%d", file, line, col)
	}
	return fmt.Sprintf("%s:%d", file, line)
}

// locationCell is the location of a source line (col > 0: of a column in
// it) with the file's base name, and its path in CSV and JSON; unknown
// without a file.
func locationCell(file string, line, col int) Cell {
	return cond(file != "", shortCell(location(filepath.Base(file), line, col), location(file, line, col)))
}

// refStrides is how many strides the refs view shows per reference in
// text (CSV and JSON have them all).
const refStrides = 2

// strideNote explains the stride columns.
const strideNote = "stride: the distance from one reference of an access point to its next, " +
	"most common first, with its share of the strides seen (a lower bound)"

// strideText is a stride in bytes, its sign kept: "8 B", "-4 KiB".
func strideText(b int64) string {
	if b < 0 {
		return "-" + Bytes(uint64(-b))
	}
	return Bytes(uint64(b))
}

// stridesText lists the n most common strides of s with their shares of
// the strides seen ("8 B 99.0%, 4 KiB 1.0%"), "" when there are none.
func stridesText(s *profile.Strides, n int) string {
	if s == nil {
		return ""
	}
	var parts []string
	for _, x := range s.Top[:min(n, len(s.Top))] {
		parts = append(parts, strideText(x.Bytes)+" "+share(x.Count, s.Samples))
	}
	return strings.Join(parts, ", ")
}

// stridesCell shows the n most common strides of s in text and all of
// them in CSV and JSON; unknown when there are none.
func stridesCell(s *profile.Strides, n int) Cell {
	all := stridesText(s, profile.MaxStrides)
	return cond(all != "", shortCell(stridesText(s, n), all))
}

// advice: the rules' findings.
// Without where-and-why data only the rules on synchronization and on
// remote objects apply: the view is ErrNoWhere unless they have something
// to say.
func (v *viewer) advice() ([]*Table, error) {
	as := Advise(v.p)
	if !HasWhere(v.p) && len(as) == 0 {
		return nil, ErrNoWhere
	}
	return []*Table{v.adviceTable(as)}, nil
}

// adviceTable lists advice as; the advice on synchronization adds the
// wait cycles and their share of the threads' time.
func (v *viewer) adviceTable(as []Advice) *Table {
	t := &Table{
		Title: "advice on the top bottlenecks (" + v.focus + ")",
		Columns: []Column{{Name: "kind"}, {Name: "object"}, {Name: "function"}, {Name: "stall cycles"}, {Name: "share"},
			{Name: "advice", Below: true}, {Name: "evidence", Below: true}},
	}
	// Without where-and-why data there is only advice on synchronization
	// and on remote objects.
	where := HasWhere(v.p)
	if !where {
		t.Title = "advice on the top bottlenecks"
		t.Columns = slices.Delete(t.Columns, 3, 5)
	}
	waits := slices.ContainsFunc(as, func(a Advice) bool { return a.WaitCycles > 0 })
	_, threads := runTime(v.p)
	if waits {
		t.Columns = slices.Insert(t.Columns, len(t.Columns)-2, Column{Name: "wait cycles"}, Column{Name: "wait share"})
		note := fmt.Sprintf("wait share: of the threads' %s cycles (the sum of each thread's end − start)", Count(threads))
		if where {
			note = fmt.Sprintf("share: of the run's %s stall cycles; %s", Count(v.stall), note)
		}
		t.Notes = append(t.Notes, note)
	}
	remote := slices.ContainsFunc(as, func(a Advice) bool { return a.NumaCycles > 0 })
	var numaCycles uint64
	if remote {
		numaCycles = numaTotal(v.p.Numa).Cycles
		t.Columns = slices.Insert(t.Columns, len(t.Columns)-2, Column{Name: "NUMA cycles"}, Column{Name: "NUMA share"})
		t.Notes = append(t.Notes, fmt.Sprintf("NUMA share: of the %s cycles of all the misses from memory "+
			"(memspy report PROFILE numa)", Count(numaCycles)))
	}
	rows := make([]Row, len(as))
	for i, a := range as {
		sync := a.WaitCycles > 0
		cells := []Cell{textCell(a.Kind), textCell(a.Object), orUnknown(a.Function)}
		if where {
			stall := !sync && (a.NumaCycles == 0 || v.objectByName(a.Object) != nil)
			cells = append(cells, cond(stall, countCell(a.StallCycles)), cond(stall, shareCell(a.StallCycles, v.stall)))
		}
		if waits {
			cells = append(cells, cond(sync, countCell(a.WaitCycles)), cond(sync, shareCell(a.WaitCycles, threads)))
		}
		if remote {
			numa := a.NumaCycles > 0
			cells = append(cells, cond(numa, countCell(a.NumaCycles)), cond(numa, shareCell(a.NumaCycles, numaCycles)))
		}
		rows[i] = Row{Cells: append(cells, textCell(a.Message), textCell(strings.Join(a.Evidence, "; ")))}
	}
	t.Rows = rows
	return t
}

// function finds a function by name.
func (v *viewer) function(name string) (*profile.Function, error) {
	for i := range v.p.Functions {
		if v.p.Functions[i].Name == name {
			return &v.p.Functions[i], nil
		}
	}
	names := make([]string, len(v.p.Functions))
	for i, f := range v.p.Functions {
		names[i] = f.Name
	}
	return nil, fmt.Errorf("no function %q in the profile%s", name, suggest(name, names))
}

// object finds an object by name, else by full name.
func (v *viewer) object(name string) (*profile.Object, error) {
	if o := v.objectByName(name); o != nil {
		return o, nil
	}
	var names []string
	for i := range v.p.Objects {
		o := &v.p.Objects[i]
		if o.FullName == name {
			return o, nil
		}
		names = append(names, o.Name)
	}
	return nil, fmt.Errorf("no object %q in the profile%s", name, suggest(name, names))
}

func (v *viewer) objectByName(name string) *profile.Object {
	for i := range v.p.Objects {
		if v.p.Objects[i].Name == name {
			return &v.p.Objects[i]
		}
	}
	return nil
}

// topNames lists the functions with the most stall cycles (5), for
// messages (profile.Printable).
func topNames(p *profile.Profile) []string {
	fs := pointers(p.Functions)
	slices.SortStableFunc(fs, func(a, b *profile.Function) int { return cmp.Compare(b.StallCycles, a.StallCycles) })
	var names []string
	for _, f := range fs[:min(5, len(fs))] {
		names = append(names, profile.Printable(f.Name))
	}
	return names
}

// topObjectNames lists the objects with the most stall cycles (5), for
// messages (profile.Printable).
func topObjectNames(p *profile.Profile) []string {
	os := rankObjects(p)
	var names []string
	for _, o := range os[:min(5, len(os))] {
		names = append(names, profile.Printable(o.Name))
	}
	return names
}

// rankObjects returns the objects, most stall cycles first.
func rankObjects(p *profile.Profile) []*profile.Object {
	os := pointers(p.Objects)
	slices.SortStableFunc(os, func(a, b *profile.Object) int {
		return cmp.Or(cmp.Compare(b.StallCycles, a.StallCycles), cmp.Compare(b.Misses, a.Misses), cmp.Compare(a.Name, b.Name))
	})
	return os
}

// suggest returns ` (did you mean "a", "b"?)` with the names closest to
// name: those containing it (ignoring case), then those at an edit
// distance of at most a third of its length (at least 1), at most 3.
func suggest(name string, names []string) string {
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	lower := strings.ToLower(name)
	limit := max(1, len([]rune(name))/3)
	for _, n := range names {
		l := strings.ToLower(n)
		d := editDistance(lower, l)
		if lower != "" && strings.Contains(l, lower) {
			d = 0
		}
		if d <= limit {
			cs = append(cs, cand{n, d})
		}
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.name, b.name)) })
	if len(cs) == 0 {
		return ""
	}
	var q []string
	for _, c := range cs[:min(3, len(cs))] {
		q = append(q, fmt.Sprintf("%q", c.name))
	}
	return " (did you mean " + strings.Join(q, ", ") + "?)"
}

// editDistance is the Levenshtein distance of a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			c := 1
			if ra[i-1] == rb[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// pointers returns pointers to the elements of xs.
func pointers[T any](xs []T) []*T {
	ps := make([]*T, len(xs))
	for i := range xs {
		ps[i] = &xs[i]
	}
	return ps
}
