package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/memspy/memspy/profile"
)

// DiffOptions select and shape a comparison of two profiles (Diff).
type DiffOptions struct {
	// NameA and NameB name the profiles (their files) in notes and errors.
	NameA, NameB string
	// Focus is the cache whose counters the entries compare; it must be a
	// cache of both machines ("": A's focus, else the first cache holding
	// data that both have).
	Focus string
	// Sort names the counter whose absolute change orders the entries
	// (DiffCounters; "": stall cycles).
	Sort   string
	Top    int    // entries per table (0: DefaultTop; negative: all)
	Format string // "text" (default), "csv", "json"
}

// diffViews are the views of Diff, in the order of the help text.
var diffViews = []view{
	{name: "summary", help: "the whole run: events, stall cycles, and the accesses, misses, miss rate and causes of each cache both machines have"},
	{name: "functions", help: "by function (--where): stall cycles, and the accesses, misses and causes at the focus cache"},
	{name: "objects", help: "by data object, matched by name (--rename OLD=NEW for the renamed ones)"},
	{name: "pairs", help: "by function × object"},
	{name: "refs", help: "by reference: PC, function and object"},
	{name: "calls", help: "by call path (the call tree), inclusive: with everything its calls called"},
}

// DiffViews lists the views of Diff, in the order of the help text.
func DiffViews() []string { return viewNames(diffViews) }

// DiffViewHelp returns a one-line description of Diff's view name (""
// if there is no such view).
func DiffViewHelp(name string) string { return viewHelp(diffViews, name) }

// diffCounter is a counter the entry views compare, from an entry's
// Stats: a count, or (rate) its misses over its accesses.
type diffCounter struct {
	name  string
	all   bool // known only when the run counted every access (not --miss-only)
	rate  bool
	count func(s *profile.Stats) uint64
}

// diffCounters are the counters of the entry views, in the order of their
// rows: the columns of the stalls view.
var diffCounters = []diffCounter{
	{name: "stall cycles", count: func(s *profile.Stats) uint64 { return s.StallCycles }},
	{name: "accesses", all: true, count: func(s *profile.Stats) uint64 { return s.Accesses }},
	{name: "misses", count: func(s *profile.Stats) uint64 { return s.Misses }},
	{name: "miss rate", all: true, rate: true},
	{name: "cold", count: func(s *profile.Stats) uint64 { return s.Causes.Cold }},
	{name: "replacement", count: func(s *profile.Stats) uint64 { return s.Causes.Replacement }},
	{name: "invalidation", count: func(s *profile.Stats) uint64 { return s.Causes.Invalidation }},
	{name: "true sharing", count: func(s *profile.Stats) uint64 { return s.Causes.TrueSharing }},
	{name: "false sharing", count: func(s *profile.Stats) uint64 { return s.Causes.FalseSharing }},
}

// DiffCounters lists the counters Diff's entry views compare and sort by
// (DiffOptions.Sort), as CSV and JSON name them.
func DiffCounters() []string {
	names := make([]string, len(diffCounters))
	for i, c := range diffCounters {
		names[i] = Column{Name: c.name}.Key()
	}
	return names
}

// amount of s: the counter's value in an entry, absent when s is nil
// (the entry is in the other profile only).
func (c diffCounter) amount(s *profile.Stats) amount {
	switch {
	case s == nil:
		return amount{rate: c.rate, state: amountAbsent}
	case c.rate:
		return amount{n: s.Misses, d: s.Accesses, rate: true}
	}
	return amount{n: c.count(s)}
}

// amountState says whether a profile has an amount.
type amountState uint8

const (
	amountPresent amountState = iota
	amountAbsent              // the entry is only in the other profile: its counts are 0
	amountUnknown             // the profile did not count it
)

// An amount is one side of a row of a diff: a count n, or a rate n/d.
type amount struct {
	n, d  uint64
	rate  bool
	state amountState
}

// diffCount is a count the profile has.
func diffCount(n uint64) amount { return amount{n: n} }

// diffCountIf is a count, unknown unless known.
func diffCountIf(n uint64, known bool) amount {
	if !known {
		return amount{state: amountUnknown}
	}
	return diffCount(n)
}

// value returns the amount as a number, and whether it has one: an absent
// count is 0, an absent rate or one of nothing (d = 0) has none.
func (x amount) value() (float64, bool) {
	switch {
	case x.state == amountUnknown:
		return 0, false
	case x.rate:
		if x.state == amountAbsent || x.d == 0 {
			return 0, false
		}
		return float64(x.n) / float64(x.d), true
	case x.state == amountAbsent:
		return 0, true
	}
	return float64(x.n), true
}

// empty reports whether the amount is nothing: 0, or no value.
func (x amount) empty() bool {
	v, ok := x.value()
	return !ok || v == 0
}

// cell is the amount in a table: unknown when the profile has none.
func (x amount) cell() Cell {
	switch {
	case x.state != amountPresent:
		return unknownCell()
	case x.rate:
		return rateCell(x.n, x.d)
	}
	return countCell(x.n)
}

// changeCell is b − a: a signed count, or a signed difference of rates;
// unknown when either has no value.
func changeCell(a, b amount) Cell {
	va, oka := a.value()
	vb, okb := b.value()
	switch {
	case !oka || !okb:
		return unknownCell()
	case a.rate:
		d := vb - va
		return Cell{Text: signedText(fmt.Sprintf("%.4f%%", 100*absFloat(d)), d < 0, d == 0), kind: kindFloat, f: d}
	}
	an, bn := countOrZero(a), countOrZero(b)
	if bn >= an {
		return signedCount(bn-an, false)
	}
	return signedCount(an-bn, true)
}

// relativeCell is (b − a) / a; unknown when either has no value or a is 0.
func relativeCell(a, b amount) Cell {
	va, oka := a.value()
	vb, okb := b.value()
	if !oka || !okb || va == 0 {
		return unknownCell()
	}
	r := (vb - va) / va
	return Cell{Text: signedText(fmt.Sprintf("%.1f%%", 100*absFloat(r)), r < 0, r == 0), kind: kindFloat, f: r}
}

// changeMagnitude is how much a changed to b, for sorting: |b − a| as a
// count (exact) or as a rate; 0 when either has no value.
func changeMagnitude(a, b amount) (uint64, float64) {
	va, oka := a.value()
	vb, okb := b.value()
	switch {
	case !oka || !okb:
		return 0, 0
	case a.rate:
		return 0, absFloat(vb - va)
	}
	an, bn := countOrZero(a), countOrZero(b)
	return max(an, bn) - min(an, bn), 0
}

// countOrZero is a count's value, 0 when absent.
func countOrZero(x amount) uint64 {
	if x.state == amountAbsent {
		return 0
	}
	return x.n
}

// signedCount is a change of n, down when neg: "+1,234", "-5", "0". Its
// value in CSV and JSON is a number, exact up to 2^53.
func signedCount(n uint64, neg bool) Cell {
	f := float64(n)
	if neg {
		f = -f
	}
	return Cell{Text: signedText(Count(n), neg, n == 0), kind: kindFloat, f: f}
}

// signed leads the changeMagnitude s with its sign: none for zero.
func signedText(s string, neg, zero bool) string {
	switch {
	case zero:
		return s
	case neg:
		return "-" + s
	}
	return "+" + s
}

func absFloat(f float64) float64 { return max(f, -f) }

// diffColumns are the columns of a diff's rows after their keys.
var diffColumns = []Column{{Name: "counter"}, {Name: "A"}, {Name: "B"}, {Name: "change"}, {Name: "relative"}}

// diffRow is a row of a diff table: a counter's amounts in A and in B.
func diffRow(name string, a, b amount) []Cell {
	return []Cell{textCell(name), a.cell(), b.cell(), changeCell(a, b), relativeCell(a, b)}
}

// hiddenCell is c with no text (a key repeated from the row above): CSV and
// JSON keep its value.
func hiddenCell(c Cell) Cell {
	if c.full == "" {
		c.full = c.Text
	}
	c.Text = ""
	return c
}

// Diff writes view name (DiffViews) of the change from profile a to
// profile b: for each counter, its value in A, in B, the change (B − A)
// and the relative change (over A's value). Only the caches both
// machines have are compared; the notes say which differ. The entry
// views (all but summary) need where-and-why data in both, and set the
// focus of both to the same cache.
func Diff(w io.Writer, a, b *profile.Profile, name string, opt DiffOptions) error {
	if !slices.Contains(DiffViews(), name) {
		return fmt.Errorf("unknown view %q (views: %s)", name, strings.Join(DiffViews(), ", "))
	}
	if opt.Format != "" && !slices.Contains(Formats(), opt.Format) {
		return fmt.Errorf("unknown format %q (formats: %s)", opt.Format, strings.Join(Formats(), ", "))
	}
	d := &differ{opt: opt, a: a, b: b, regions: map[string]bool{}}
	d.nameA, d.nameB = cmp.Or(opt.NameA, "A"), cmp.Or(opt.NameB, "B")
	if name != "summary" {
		for _, p := range []struct {
			p    *profile.Profile
			name string
		}{{a, d.nameA}, {b, d.nameB}} {
			if !HasWhere(p.p) {
				return fmt.Errorf("%s: %w (the summary needs none)", p.name, ErrNoWhere)
			}
		}
	}
	d.compareCaches()
	if name != "summary" || opt.Focus != "" {
		if err := d.setFocus(); err != nil {
			return err
		}
	}
	if name == "summary" {
		return render(w, []*Table{d.summary()}, opt.Format)
	}
	if name == "calls" {
		for _, p := range []struct {
			p    *profile.Profile
			name string
		}{{a, d.nameA}, {b, d.nameB}} {
			if p.p.CallTree == nil {
				return fmt.Errorf("%s: %w", p.name, ErrNoCallTree)
			}
		}
	}
	t, err := d.entries(name)
	if err != nil {
		return err
	}
	return render(w, []*Table{t}, opt.Format)
}

// differ holds what every diff view needs.
type differ struct {
	opt          DiffOptions
	a, b         *profile.Profile
	nameA, nameB string
	// caches are the names of the caches both machines have, in A's order;
	// cacheNotes say which caches differ or only one machine has.
	caches     []string
	cacheNotes []string
	regions    map[string]bool // the functions that are code regions in A or B, by name
}

// compareCaches finds the caches both machines have and notes those that
// differ, and how the machines differ otherwise.
func (d *differ) compareCaches() {
	var onlyA, onlyB []string
	for i := range d.a.Caches {
		ca := &d.a.Caches[i]
		cb, ok := d.b.Cache(ca.Name)
		if !ok {
			onlyA = append(onlyA, ca.Name)
			continue
		}
		d.caches = append(d.caches, ca.Name)
		sa, okA := d.a.MachineCache(ca.Name)
		sb, okB := d.b.MachineCache(ca.Name)
		if okA != okB || okA && *sa != *sb || ca.Level != cb.Level {
			da, db := describeCache(d.a, ca), describeCache(d.b, cb)
			if da == db && okA && okB {
				da += fmt.Sprintf(", latency %d", sa.Latency)
				db += fmt.Sprintf(", latency %d", sb.Latency)
			}
			d.cacheNotes = append(d.cacheNotes, fmt.Sprintf("%s differs: in A %s; in B %s", ca.Name, da, db))
		}
	}
	for _, c := range d.b.Caches {
		if _, ok := d.a.Cache(c.Name); !ok {
			onlyB = append(onlyB, c.Name)
		}
	}
	if len(onlyA) > 0 {
		d.cacheNotes = append(d.cacheNotes, "only in A, not compared: "+strings.Join(onlyA, ", "))
	}
	if len(onlyB) > 0 {
		d.cacheNotes = append(d.cacheNotes, "only in B, not compared: "+strings.Join(onlyB, ", "))
	}
	if ma, mb := d.a.Machine, d.b.Machine; ma != nil && mb != nil {
		if ma.Processors != mb.Processors {
			d.cacheNotes = append(d.cacheNotes, fmt.Sprintf("processors: %d in A, %d in B", max(1, ma.Processors), max(1, mb.Processors)))
		}
		if ma.MemoryLatency != mb.MemoryLatency {
			d.cacheNotes = append(d.cacheNotes, fmt.Sprintf("memory latency: %d cycles in A, %d in B", ma.MemoryLatency, mb.MemoryLatency))
		}
	}
}

// describeCache is the description of cache c of p, as the summary heads
// its table: "L1D (level 1, 32 KiB data, 8-way, 64 B lines, lru, write-back)".
func describeCache(p *profile.Profile, c *profile.CacheStats) string {
	return strings.TrimSuffix(cacheHeader(p.Machine, c), "\n")
}

// setFocus makes the focus cache of both profiles the same cache of both
// machines, when they have where-and-why data.
func (d *differ) setFocus() error {
	focus := d.opt.Focus
	if focus != "" && !d.a.Options.Where {
		return fmt.Errorf("--focus: %s has no where-and-why data (run with --where)", d.nameA)
	}
	if focus != "" && !d.b.Options.Where {
		return fmt.Errorf("--focus: %s has no where-and-why data (run with --where)", d.nameB)
	}
	if focus == "" {
		focus = cmp.Or(d.a.Focus, d.a.DefaultFocus())
		if !slices.Contains(d.caches, focus) {
			focus = ""
			for _, c := range d.caches {
				if s, ok := d.a.MachineCache(c); !ok || s.HoldsData() {
					focus = c
					break
				}
			}
		}
	}
	if focus == "" && len(d.caches) > 0 {
		focus = d.caches[0]
	}
	if !slices.Contains(d.caches, focus) {
		if focus == "" {
			return fmt.Errorf("%s and %s have no cache in common", d.nameA, d.nameB)
		}
		return fmt.Errorf("--focus %s: not a cache of both machines (caches of both: [%s])", focus, strings.Join(d.caches, " "))
	}
	for _, p := range []*profile.Profile{d.a, d.b} {
		if p.Options.Where {
			if err := p.SetFocus(focus); err != nil {
				return err
			}
		}
	}
	d.opt.Focus = focus
	return nil
}

// notes are the notes every diff table starts with: what A and B are
// and how their machines differ.
func (d *differ) notes() []string {
	source := func(p *profile.Profile) string {
		m := "(unnamed)"
		if p.Machine != nil && p.Machine.Name != "" {
			m = p.Machine.Name
		}
		return fmt.Sprintf("%s on machine %s", p.Source.Name, m)
	}
	notes := []string{fmt.Sprintf("A: %s (%s); B: %s (%s)", d.nameA, source(d.a), d.nameB, source(d.b)),
		"change: B − A; relative: the change over A's value (- when A's is 0 or unknown); counters 0 in both are left out"}
	notes = append(notes, d.cacheNotes...)
	for _, p := range []struct {
		p    *profile.Profile
		name string
	}{{d.a, "A"}, {d.b, "B"}} {
		if s := p.p.Sampling; s != nil {
			notes = append(notes, fmt.Sprintf("%s is sampled: its counts cover %s of the references", p.name, share(s.Counted, s.Seen)))
		}
		if !p.p.Complete {
			notes = append(notes, fmt.Sprintf("%s is incomplete: its counts cover only the events read before: %s", p.name, p.p.Error))
		}
	}
	return notes
}

// summary compares the whole runs: events, stall cycles, run time and
// synchronization (several processors), each cache both machines have,
// and the memory traffic.
func (d *differ) summary() *Table {
	t := &Table{Title: "change from A to B: the whole run", Notes: d.notes(),
		Columns: append([]Column{{Name: "part"}}, diffColumns...)}
	add := func(part, counter string, a, b amount) {
		if a.empty() && b.empty() {
			return
		}
		key := textCell(part)
		if n := len(t.Rows); n > 0 && t.Rows[n-1].Cells[0].Value() == part {
			key = hiddenCell(key)
		}
		t.Rows = append(t.Rows, Row{Cells: append([]Cell{key}, diffRow(counter, a, b)...)})
	}
	whereA, whereB := HasWhere(d.a), HasWhere(d.b)
	add("run", "events", diffCount(d.a.Events), diffCount(d.b.Events))
	add("run", "stall cycles", diffCountIf(totalStall(d.a), whereA), diffCountIf(totalStall(d.b), whereB))
	runA, _ := runTime(d.a)
	runB, _ := runTime(d.b)
	add("run", "run time", diffCountIf(runA, len(d.a.Threads) > 0), diffCountIf(runB, len(d.b.Threads) > 0))
	add("run", "sync cycles", diffCountIf(totalSyncCycles(d.a), len(d.a.Threads) > 0), diffCountIf(totalSyncCycles(d.b), len(d.b.Threads) > 0))
	for _, name := range d.caches {
		ca, _ := d.a.Cache(name)
		cb, _ := d.b.Cache(name)
		add(name, "accesses", diffCount(ca.Accesses), diffCount(cb.Accesses))
		add(name, "misses", diffCount(ca.Misses), diffCount(cb.Misses))
		add(name, "miss rate", amount{n: ca.Misses, d: ca.Accesses, rate: true}, amount{n: cb.Misses, d: cb.Accesses, rate: true})
		add(name, "stall cycles", diffCountIf(levelStall(d.a, name), whereA), diffCountIf(levelStall(d.b, name), whereB))
		// The causes are known with --where.
		var ka, kb profile.Causes
		if ca.Causes != nil {
			ka = *ca.Causes
		}
		if cb.Causes != nil {
			kb = *cb.Causes
		}
		knownA, knownB := ca.Causes != nil, cb.Causes != nil
		add(name, "cold", diffCountIf(ka.Cold, knownA), diffCountIf(kb.Cold, knownB))
		add(name, "replacement", diffCountIf(ka.Replacement, knownA), diffCountIf(kb.Replacement, knownB))
		add(name, "invalidation", diffCountIf(ka.Invalidation, knownA), diffCountIf(kb.Invalidation, knownB))
		threeA, threeB := d.a.Options.Classify == "3c", d.b.Options.Classify == "3c"
		add(name, "compulsory", diffCountIf(ca.Compulsory, threeA), diffCountIf(cb.Compulsory, threeB))
		add(name, "capacity", diffCountIf(ca.Capacity, threeA), diffCountIf(cb.Capacity, threeB))
		add(name, "conflict", diffCountIf(ca.Conflict, threeA), diffCountIf(cb.Conflict, threeB))
		add(name, "true sharing misses", diffCount(ca.TrueSharingMisses), diffCount(cb.TrueSharingMisses))
		add(name, "false sharing misses", diffCount(ca.FalseSharingMisses), diffCount(cb.FalseSharingMisses))
		add(name, "invalidations", diffCount(ca.Invalidations), diffCount(cb.Invalidations))
		add(name, "evictions", diffCount(ca.Evictions), diffCount(cb.Evictions))
		add(name, "write-backs", diffCount(ca.Writebacks), diffCount(cb.Writebacks))
	}
	add("memory", "reads", diffCount(d.a.Memory.Reads), diffCount(d.b.Memory.Reads))
	add("memory", "writes", diffCount(d.a.Memory.Writes), diffCount(d.b.Memory.Writes))
	if whereA || whereB {
		t.Notes = append(t.Notes, "stall cycles: of every cache of each machine (run), and of each cache's misses (with --where)")
	}
	return t
}

// totalSyncCycles are the cycles p's threads waited at synchronization.
func totalSyncCycles(p *profile.Profile) uint64 {
	var n uint64
	for _, t := range p.Threads {
		n += t.SyncCycles
	}
	return n
}

// levelStall is the stall cycles of the misses at cache name: those of
// every function.
func levelStall(p *profile.Profile, name string) uint64 {
	var n uint64
	for i := range p.Functions {
		if s := p.Functions[i].Levels[name]; s != nil {
			n += s.StallCycles
		}
	}
	return n
}

// diffEntry is an entry of an entry view: the counters of A's entry and
// of B's with the same name (nil for the one that has none).
type diffEntry struct {
	keys []Cell // B's, else A's
	name string
	a, b *profile.Stats
	// byN and byF are the absolute change of the sort counter (changeMagnitude).
	byN uint64
	byF float64
}

// status says whether the entry was removed (only in A) or added (only in
// B); "" when both have it.
func (e *diffEntry) status() string {
	switch {
	case e.b == nil:
		return "removed"
	case e.a == nil:
		return "added"
	}
	return ""
}

// matchEntries pairs the items of a and b by name: A's in order, then
// those only in B.
func matchEntries(as, bs []item) []diffEntry {
	at := map[string]int{}
	es := make([]diffEntry, 0, len(as))
	for _, it := range as {
		at[it.name] = len(es)
		es = append(es, diffEntry{keys: it.keys, name: it.name, a: it.stats})
	}
	for _, it := range bs {
		if i, ok := at[it.name]; ok {
			es[i].keys, es[i].b = it.keys, it.stats
			continue
		}
		es = append(es, diffEntry{keys: it.keys, name: it.name, b: it.stats})
	}
	return es
}

// entryView describes an entry view: its title, key columns and items.
type entryView struct {
	what  string
	keys  []string
	items func(d *differ, p *profile.Profile) []item
	// omitted, for entries a profile bounds, says how many p left out
	// and what they are (nil: none is ever left out).
	omitted func(p *profile.Profile) (uint64, string)
}

// leftOut says how many of its entries p left out, and what they are.
func (v *entryView) leftOut(p *profile.Profile) (uint64, string) {
	if v.omitted == nil {
		return 0, ""
	}
	return v.omitted(p)
}

var entryViews = map[string]entryView{
	"functions": {"function", []string{"function"}, func(d *differ, p *profile.Profile) []item {
		var its []item
		for i := range p.Functions {
			f := &p.Functions[i]
			its = append(its, item{[]Cell{textCell(d.funcName(f.Name))}, &f.Stats, f.Name})
		}
		return its
	}, nil},
	"objects": {"object", []string{"object", "kind"}, func(d *differ, p *profile.Profile) []item {
		var its []item
		for i := range p.Objects {
			o := &p.Objects[i]
			its = append(its, item{[]Cell{textCell(o.Name), textCell(o.Kind)}, &o.Stats, o.Name})
		}
		return its
	}, nil},
	"pairs": {"function × object", []string{"function", "object"}, func(d *differ, p *profile.Profile) []item {
		var its []item
		for i := range p.Pairs {
			pr := &p.Pairs[i]
			its = append(its, item{[]Cell{textCell(d.funcName(pr.Function)), textCell(pr.Object)}, &pr.Stats,
				pr.Function + "\x00" + pr.Object})
		}
		return its
	}, func(p *profile.Profile) (uint64, string) {
		if o := p.OmittedPairs; o != nil {
			return o.Pairs, "function × object pairs"
		}
		return 0, ""
	}},
	"calls": {"call path (inclusive)", []string{"call path"}, func(d *differ, p *profile.Profile) []item {
		t := p.CallTree
		if t == nil {
			return nil
		}
		var its []item
		for i, n := range t.Inclusive() {
			// The focus cache's counters, with the stall cycles over
			// every cache, as the entries' top-level copies have them.
			var st profile.Stats
			if s := n.Levels[d.opt.Focus]; s != nil {
				st = *s
			}
			st.StallCycles = 0
			for _, s := range n.Levels {
				st.StallCycles += s.StallCycles
			}
			stack := t.Stack(int32(i))
			its = append(its, item{[]Cell{textCell(callPath(stack, d.funcName))}, &st, strings.Join(stack, "\x00")})
		}
		return its
	}, func(p *profile.Profile) (uint64, string) {
		if t := p.CallTree; t != nil && t.Elided > 0 {
			return t.Elided, "calling contexts (in their callers' nodes)"
		}
		return 0, ""
	}},
	"refs": {"reference", []string{"pc", "file:line", "function", "object", "kind"}, func(d *differ, p *profile.Profile) []item {
		var its []item
		for i := range p.References {
			r := &p.References[i]
			its = append(its, item{[]Cell{hexCell(r.PC), locationCell(r.File, r.Line, r.Column), textCell(d.funcName(r.Function)),
				textCell(r.Object), textCell(r.Kind)}, &r.Stats, fmt.Sprintf("%x\x00%s\x00%s", r.PC, r.Function, r.Object)})
		}
		return its
	}, func(p *profile.Profile) (uint64, string) {
		if o := p.OmittedReferences; o != nil {
			return o.References, "references"
		}
		return 0, ""
	}},
}

// funcName is how the entry views list function name: a region's name
// is followed by regionSuffix.
func (d *differ) funcName(name string) string {
	if d.regions[name] {
		return name + regionSuffix
	}
	return name
}

// entries builds entry view name: its entries matched by name, sorted by
// the absolute change of the sort counter, a row per counter not 0 in
// both.
func (d *differ) entries(name string) (*Table, error) {
	counters := diffCounters
	missOnly := d.a.Options.MissOnly || d.b.Options.MissOnly
	if missOnly {
		counters = slices.DeleteFunc(slices.Clone(counters), func(c diffCounter) bool { return c.all })
	}
	sortName := cmp.Or(d.opt.Sort, "stall cycles")
	si := slices.IndexFunc(counters, func(c diffCounter) bool {
		return c.name == sortName || Column{Name: c.name}.Key() == sortName
	})
	if si < 0 {
		if missOnly && slices.ContainsFunc(diffCounters, func(c diffCounter) bool { return Column{Name: c.name}.Key() == sortName }) {
			return nil, fmt.Errorf("--sort %s: not compared, A or B counted misses only (--miss-only)", sortName)
		}
		return nil, fmt.Errorf("--sort %s: no such counter (counters: %s)", sortName, strings.Join(DiffCounters(), ", "))
	}
	by := counters[si]
	a, b := dataOnly(d.a), dataOnly(d.b)
	for _, p := range []*profile.Profile{a, b} {
		for _, f := range p.Functions {
			if f.Region {
				d.regions[f.Name] = true
			}
		}
	}
	v := entryViews[name]
	es := matchEntries(v.items(d, a), v.items(d, b))
	for i := range es {
		es[i].byN, es[i].byF = changeMagnitude(by.amount(es[i].a), by.amount(es[i].b))
	}
	slices.SortFunc(es, func(x, y diffEntry) int {
		return cmp.Or(cmp.Compare(y.byN, x.byN), cmp.Compare(y.byF, x.byF), cmp.Compare(x.name, y.name))
	})
	t := &Table{Title: fmt.Sprintf("change from A to B by %s, largest change of %s first", v.what, by.name), Notes: d.notes()}
	t.Notes = append(t.Notes, fmt.Sprintf("misses and causes at %s; stall cycles over every cache of each machine", d.opt.Focus),
		"status: removed (only in A) or added (only in B)")
	if missOnly {
		t.Notes = append(t.Notes, "misses only (--miss-only) in A or B: accesses and miss rates are not compared")
	}
	for side, p := range []*profile.Profile{d.a, d.b} {
		if n, what := v.leftOut(p); n > 0 {
			t.Notes = append(t.Notes, fmt.Sprintf("%s leaves out %s %s with the fewest stall cycles: one only in the other profile may be among them (removed or added only in appearance)",
				string(rune('A'+side)), Count(n), what))
		}
	}
	for _, k := range v.keys {
		t.Columns = append(t.Columns, Column{Name: k})
	}
	t.Columns = append(append(t.Columns, Column{Name: "status"}), diffColumns...)
	top := cmp.Or(d.opt.Top, DefaultTop)
	if top >= 0 && len(es) > top {
		t.Notes = append(t.Notes, fmt.Sprintf("top %d of %d (--top to see more)", top, len(es)))
		es = es[:top]
	}
	for _, e := range es {
		first := true
		for _, c := range counters {
			x, y := c.amount(e.a), c.amount(e.b)
			if x.empty() && y.empty() && c.name != by.name {
				continue
			}
			lead := append(slices.Clone(e.keys), textCell(e.status()))
			if !first {
				for i := range lead {
					lead[i] = hiddenCell(lead[i])
				}
			}
			first = false
			t.Rows = append(t.Rows, Row{Cells: append(lead, diffRow(c.name, x, y)...)})
		}
	}
	return t, nil
}
