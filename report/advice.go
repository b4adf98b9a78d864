package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/profile"
)

// Advice is a finding of the rules of Advise on one bottleneck.
type Advice struct {
	Kind     string `json:"kind"` // one of the Advice… kinds
	Object   string `json:"object"`
	Function string `json:"function,omitempty"` // the function with the most of the object's stall cycles
	Message  string `json:"message"`
	// Evidence are the numbers that triggered the rule, one sentence each.
	Evidence    []string `json:"evidence"`
	StallCycles uint64   `json:"stall_cycles"` // the object's, over every cache
	// WaitCycles are the cycles threads waited at the synchronization
	// object of the advice on synchronization (0 for the others).
	WaitCycles uint64 `json:"wait_cycles,omitempty"`
	// NumaCycles are the cycles of the object's misses from memory, of
	// the advice on remote objects (0 for the others).
	NumaCycles uint64 `json:"numa_cycles,omitempty"`
}

// The kinds of advice.
const (
	AdviceSelfInterference  = "self-interference"
	AdviceCrossInterference = "cross-interference"
	AdviceSpatialLocality   = "spatial-locality"
	AdviceCapacity          = "capacity"
	AdviceUseAfterFree      = "use-after-free"
	AdviceOverRead          = "over-read"
	AdviceFalseSharing      = "false-sharing"
	AdviceTrueSharing       = "true-sharing"
	AdvicePrivateShared     = "private-shared"
)

// The thresholds of the rules. Shares are of the object's counters at the
// focus cache unless said otherwise.
const (
	// adviceTop objects with the most stall cycles are examined, those
	// with at least adviceMinStall of the run's stall cycles.
	adviceTop      = 5
	adviceMinStall = 0.02
	// An object interferes with itself (or with another object X) when
	// its own fills (X's) evicted at least interferenceShare of its
	// evicted lines and at least interferenceMinReplacement of its misses
	// are replacement misses.
	interferenceShare          = 0.5
	interferenceMinReplacement = 0.25
	// The working set exceeds the cache (capacity) when at least
	// capacityMinReplacement of the object's misses are replacement misses
	// and no single object evicted interferenceShare of its lines.
	capacityMinReplacement = 0.5
	// Spatial locality is poor when less than poorSpatialUse of the bytes
	// of the lines the object's misses fetched were used, or when its cold
	// misses fetched at least refetchFactor times its size (on several
	// processors with a private focus cache, times its size, at least a
	// line, for each processor that ran threads: each fetches its own copy).
	poorSpatialUse = 0.5
	refetchFactor  = 2
	// useAfterFreePlaces places of a use after free are listed.
	useAfterFreePlaces = 5
	// Processors share an object's lines when at least
	// sharingMinInvalidation of its misses are invalidation misses; the
	// sharing is false (true) when false (true) sharing makes at least
	// sharingShare of them.
	sharingMinInvalidation = 0.25
	sharingShare           = 0.5
)

// Advise applies rules to the bottlenecks of p, the objects with the most
// stall cycles (the top adviceTop with at least adviceMinStall of all):
//
//   - self-interference: the object's own fills evicted most of its lines
//     (≥ interferenceShare) and replacements are many of its misses
//     (≥ interferenceMinReplacement);
//   - cross-interference: one other object's fills evicted most of its
//     lines, with as many replacements (one advice per pair of objects);
//   - capacity: replacements are most of its misses
//     (≥ capacityMinReplacement) and no single object evicted most of its
//     lines;
//   - spatial-locality: less than poorSpatialUse of the bytes its misses
//     fetched were used, or its cold misses fetched at least refetchFactor
//     times its size (times the copies, on several processors); the most
//     common stride of its pair with the most
//     stall cycles is evidence, and when it spans a line or more of the
//     focus cache the advice is on loop order, blocking and layout;
//   - false-sharing: invalidation misses are many of its misses
//     (≥ sharingMinInvalidation) and false sharing most of them
//     (≥ sharingShare): processors write different bytes of its lines;
//   - true-sharing: as many invalidation misses, true sharing most of them:
//     processors use the same bytes, one writing what others read;
//   - private-shared (instead of the two above): as many invalidation
//     misses on a heap object of several blocks, and most of the copies
//     its writes invalidated (≥ sharingShare) come from threads writing
//     blocks they allocated themselves: data meant to be private shares
//     lines with other threads' (when the other processors had used only
//     neighbouring bytes) or is used by them;
//   - use-after-free: any object of kind freed that was accessed, whatever
//     its stall cycles (listed first); over-read (listed last) when every
//     reference to it is in the C library's vectorized string and memory
//     functions (__strlen_avx2, __memchr_evex, ...), which read whole
//     aligned blocks past the end of a string or buffer by design.
//
// On several processors, rules on the synchronization objects follow (they
// need no where-and-why data): at a lock, barrier or condition variable
// where the threads waited at least syncMinShare of their time (the sum of
// each thread's end − start):
//
//   - lock-contention: shorter critical sections or finer locks;
//   - barrier-imbalance: the work between barriers is divided unevenly;
//   - condition-wait: the signalling threads are the bottleneck.
//
// On several NUMA nodes, a rule on the objects of the NUMA statistics
// (they need no where-and-why data under protocol monitoring): an object
// whose remote and remote-dirty misses make at least remoteMinShare of its
// misses from memory, and whose cycles make at least remoteMinCycles of
// all of theirs:
//
//   - numa-remote: its pages are homed at a node other than the one that
//     uses them (which, when the migration hints name it).
//
// Each Advice carries the numbers that triggered it. The others follow in
// the order of the objects' stall cycles, the advice on a remote object
// before the objects with fewer stall cycles than it has NUMA cycles, the
// advice on a synchronization object before those with fewer cycles than
// it has wait cycles.
func Advise(p *profile.Profile) []Advice {
	return mergeSync(mergeNuma(adviseObjects(p), adviseNuma(p)), adviseSync(p))
}

// adviseObjects applies the rules on objects (see Advise).
func adviseObjects(p *profile.Profile) []Advice {
	if !HasWhere(p) {
		return nil
	}
	a := &adviser{p: p, stall: totalStall(p), cache: focusCache(p), focus: p.Focus}
	if a.focus == "" {
		a.focus = "the focus cache"
	}
	objects := rankObjects(p)
	var out, overReads []Advice
	for _, o := range objects {
		if o.Kind == "freed" && touched(o) {
			if adv := a.useAfterFree(o); adv.Kind == AdviceOverRead {
				overReads = append(overReads, adv)
			} else {
				out = append(out, adv)
			}
		}
	}
	cross := map[[2]string]int{} // {victim, evictor} → index in out
	for i, o := range objects {
		if i == adviceTop || a.stall == 0 || float64(o.StallCycles) < adviceMinStall*float64(a.stall) {
			break
		}
		if o.Kind == "freed" || o.Kind == "other" {
			continue // <other> is memory of no known data structure: nothing to act on
		}
		ev, self, top := evictions(o)
		repl := frac(o.Causes.Replacement, o.Misses)
		interference := repl >= interferenceMinReplacement && ev > 0
		switch {
		case interference && frac(self, ev) >= interferenceShare:
			out = append(out, a.selfInterference(o, ev, self))
		case interference && top.name != "" && frac(top.n, ev) >= interferenceShare:
			if j, ok := cross[[2]string{top.name, o.Name}]; ok {
				// The other side of a pair already advised on.
				out[j].Evidence = append(out[j].Evidence, evictedEvidence(top.n, ev, o.Name, top.name))
				out[j].Message = crossMessage(top.name, o.Name, a.focus, true)
				break
			}
			cross[[2]string{o.Name, top.name}] = len(out)
			out = append(out, a.crossInterference(o, ev, top))
		case repl >= capacityMinReplacement:
			out = append(out, a.capacity(o, ev, self, top))
		}
		if adv, ok := a.spatial(o); ok {
			out = append(out, adv)
		}
		if adv, ok := a.sharing(o); ok {
			out = append(out, adv)
		}
	}
	return append(out, overReads...)
}

type adviser struct {
	p     *profile.Profile
	stall uint64
	cache *machine.Cache // the focus cache, nil when unknown
	focus string
}

// focusCache returns the description of p's focus cache, or nil.
func focusCache(p *profile.Profile) *machine.Cache {
	if p.Machine == nil {
		return nil
	}
	for i := range p.Machine.Caches {
		if p.Machine.Caches[i].Name == p.Focus {
			return &p.Machine.Caches[i]
		}
	}
	return nil
}

// advice starts the advice of kind on o: its stall cycles and function.
func (a *adviser) advice(kind string, o *profile.Object) Advice {
	adv := Advice{Kind: kind, Object: o.Name, StallCycles: o.StallCycles}
	adv.Evidence = append(adv.Evidence, fmt.Sprintf("%s has %s stall cycles, %s of the run's", o.Name, Count(o.StallCycles),
		share(o.StallCycles, a.stall)))
	if pr := topPair(a.p, o.Name); pr != nil {
		adv.Function = pr.Function
		adv.Evidence = append(adv.Evidence, fmt.Sprintf("%s makes %s of them", pr.Function, share(pr.StallCycles, o.StallCycles)))
	}
	return adv
}

// topPair returns the pair of object with the most stall cycles (the
// first function by name among equals), nil when there is none.
func topPair(p *profile.Profile, object string) *profile.Pair {
	var top *profile.Pair
	for i := range p.Pairs {
		pr := &p.Pairs[i]
		if pr.Object == object && (top == nil || pr.StallCycles > top.StallCycles ||
			pr.StallCycles == top.StallCycles && pr.Function < top.Function) {
			top = pr
		}
	}
	return top
}

// evictions returns the lines of o evicted at the focus cache, those its
// own fills evicted and the other object that evicted the most.
func evictions(o *profile.Object) (all, self uint64, top evictedBy) {
	all = o.Evictions()
	for _, e := range rankEvictedBy(o.EvictedBy) {
		if e.name == o.Name {
			self = e.n
		} else if top.name == "" {
			top = e
		}
	}
	return all, self, top
}

func evictedEvidence(n, all uint64, victim, by string) string {
	return fmt.Sprintf("%s of the %s evicted lines of %s were evicted by fills of %s (%s)", Count(n), Count(all), victim, by,
		share(n, all))
}

func replacementEvidence(o *profile.Object) string {
	return fmt.Sprintf("%s of its %s misses are replacements (%s)", Count(o.Causes.Replacement), Count(o.Misses),
		share(o.Causes.Replacement, o.Misses))
}

// sizeEvidence compares o's size with the focus cache's.
func (a *adviser) sizeEvidence(o *profile.Object) (string, bool) {
	if a.cache == nil || o.Size == 0 || a.cache.Size <= 0 {
		return "", false
	}
	c := uint64(a.cache.Size)
	if o.Size > c {
		return fmt.Sprintf("%s is %s, %.1f× %s (%s)", o.Name, Bytes(o.Size), float64(o.Size)/float64(c), a.focus, Bytes(c)), true
	}
	return fmt.Sprintf("%s is %s, %s (%s) holds it", o.Name, Bytes(o.Size), a.focus, Bytes(c)), false
}

func (a *adviser) selfInterference(o *profile.Object, ev, self uint64) Advice {
	adv := a.advice(AdviceSelfInterference, o)
	adv.Message = fmt.Sprintf("%s interferes with itself in %s: its own fills evict its lines before they are reused; "+
		"consider blocking the loops, padding the leading dimension or changing the stride", o.Name, a.focus)
	adv.Evidence = append(adv.Evidence, evictedEvidence(self, ev, o.Name, o.Name), replacementEvidence(o))
	if s, _ := a.sizeEvidence(o); s != "" {
		adv.Evidence = append(adv.Evidence, s)
	}
	return adv
}

func (a *adviser) crossInterference(o *profile.Object, ev uint64, top evictedBy) Advice {
	adv := a.advice(AdviceCrossInterference, o)
	adv.Message = crossMessage(o.Name, top.name, a.focus, false)
	adv.Evidence = append(adv.Evidence, evictedEvidence(top.n, ev, o.Name, top.name), replacementEvidence(o))
	return adv
}

// crossMessage is the advice on victim's lines evicted by fills of by
// (and the other way round, when mutual).
func crossMessage(victim, by, focus string, mutual bool) string {
	what := fmt.Sprintf("%s's fills evict %s's lines", by, victim)
	if mutual {
		what = "they evict each other's lines"
	}
	return fmt.Sprintf("%s and %s map to the same sets of %s and %s: pad or realign one of them", victim, by, focus, what)
}

func (a *adviser) capacity(o *profile.Object, ev, self uint64, top evictedBy) Advice {
	adv := a.advice(AdviceCapacity, o)
	adv.Message = fmt.Sprintf("the working set exceeds %s: %s's lines are replaced before they are reused; "+
		"block the loops so that the data reused fits, or make it smaller", a.focus, o.Name)
	adv.Evidence = append(adv.Evidence, replacementEvidence(o))
	if ev > 0 {
		most, by := top.n, top.name
		if self > most {
			most, by = self, o.Name
		}
		adv.Evidence = append(adv.Evidence, fmt.Sprintf("no single object evicted most of its %s evicted lines (at most %s, %s)",
			Count(ev), by, share(most, ev)))
	}
	if s, _ := a.sizeEvidence(o); s != "" {
		adv.Evidence = append(adv.Evidence, s)
	}
	return adv
}

func (a *adviser) spatial(o *profile.Object) (Advice, bool) {
	poor := !a.p.Options.MissOnly && o.FetchedBytes > 0 && o.SpatialUse < poorSpatialUse
	var line uint64
	if a.cache != nil && a.cache.Line > 0 {
		line = uint64(a.cache.Line)
	}
	size, copies := o.Size, a.copies()
	if copies > 1 {
		size = max(size, line) * copies
	}
	refetch := line > 0 && o.Size > 0 && o.Causes.Cold*line >= refetchFactor*size
	if !poor && !refetch {
		return Advice{}, false
	}
	adv := a.advice(AdviceSpatialLocality, o)
	pr := topPair(a.p, o.Name)
	var stride *profile.Stride // the most common stride of the pair with the most stall cycles
	if pr != nil && pr.Strides != nil && len(pr.Strides.Top) > 0 {
		stride = &pr.Strides.Top[0]
	}
	// Each reference at a stride of a line or more lands on a new line.
	long := stride != nil && line > 0 && max(stride.Bytes, -stride.Bytes) >= int64(line)
	var parts []string
	if poor {
		fix := "reorganize it (struct of arrays, hot/cold split) or change the access order"
		if long {
			fix = fmt.Sprintf("%s walks it %s at a time, a line or more, so that each reference lands on a new line; "+
				"interchange the loops so that the innermost one walks it contiguously, block them, or make it a struct of arrays",
				pr.Function, strideText(stride.Bytes))
		}
		parts = append(parts, fmt.Sprintf("only %.0f%% of each line of %s fetched into %s is used: %s", 100*o.SpatialUse, o.Name,
			a.focus, fix))
		adv.Evidence = append(adv.Evidence, fmt.Sprintf("%s of the %s bytes its misses fetched were used (%s)", Count(o.UsedBytes),
			Count(o.FetchedBytes), share(o.UsedBytes, o.FetchedBytes)))
	}
	if stride != nil {
		e := fmt.Sprintf("most common stride of %s's references to %s: %s (%s of %s strides)", pr.Function, o.Name,
			strideText(stride.Bytes), share(stride.Count, pr.Strides.Samples), Count(pr.Strides.Samples))
		if long {
			e += fmt.Sprintf(": each reference lands on a new %d B line", line)
		}
		adv.Evidence = append(adv.Evidence, e)
	}
	if refetch {
		parts = append(parts, fmt.Sprintf("%s's lines are fetched anew rather than reused (%.1f× its size came in cold): "+
			"reuse its memory instead of allocating fresh blocks, or make it smaller", o.Name, float64(o.Causes.Cold*line)/float64(o.Size)))
		blocks := ""
		if o.Blocks > 1 {
			blocks = fmt.Sprintf(" in %s blocks", Count(o.Blocks))
		}
		e := fmt.Sprintf("%s cold misses × %d B lines = %s, for %s of %s%s", Count(o.Causes.Cold),
			line, Bytes(o.Causes.Cold*line), o.Name, Bytes(o.Size), blocks)
		if copies > 1 {
			e += fmt.Sprintf(", of which each of the %d processors that ran threads fetches its own copy", copies)
		}
		adv.Evidence = append(adv.Evidence, e)
	}
	adv.Message = strings.Join(parts, "; ")
	return adv, true
}

// sharing applies the false and true sharing rules to o.
func (a *adviser) sharing(o *profile.Object) (Advice, bool) {
	k := o.Causes
	if k.Invalidation == 0 || frac(k.Invalidation, o.Misses) < sharingMinInvalidation {
		return Advice{}, false
	}
	if adv, ok := a.privateShared(o); ok {
		return adv, true
	}
	var adv Advice
	var kind string // the kind of sharing, for the evidence
	count := func(c profile.Causes) uint64 { return c.FalseSharing }
	switch {
	case frac(k.FalseSharing, k.Invalidation) >= sharingShare:
		adv, kind = a.advice(AdviceFalseSharing, o), "false"
		line := "to the line size"
		if n := a.coherenceUnit(); n > 0 {
			line = fmt.Sprintf("to the line size, %d bytes", n)
		}
		adv.Message = fmt.Sprintf("pad or separate the per-thread parts of %s (%s) so that processors do not share lines%s", o.Name,
			line, falseOffsets(o.SharingWrites))
	case frac(k.TrueSharing, k.Invalidation) >= sharingShare:
		adv, kind = a.advice(AdviceTrueSharing, o), "true"
		count = func(c profile.Causes) uint64 { return c.TrueSharing }
		adv.Message = fmt.Sprintf("%s is written by one processor and read by others: reduce sharing "+
			"(batch updates, per-thread copies merged at the end)", o.Name)
	default:
		return Advice{}, false
	}
	adv.Evidence = append(adv.Evidence,
		fmt.Sprintf("%s of its %s misses at %s are invalidation misses (%s), on lines other processors' writes invalidated",
			Count(k.Invalidation), Count(o.Misses), a.focus, share(k.Invalidation, o.Misses)),
		sharingEvidence(k, kind))
	if n := a.coherenceUnit(); kind == "false" && n > 0 && o.Size > 0 {
		adv.Evidence = append(adv.Evidence, fmt.Sprintf("%s is %s; processors keep lines of %d B coherent", o.Name, Bytes(o.Size), n))
	}
	if e := writesEvidence(o); kind == "false" && e != "" {
		adv.Evidence = append(adv.Evidence, e)
	}
	var top *profile.Pair // the pair with the most misses of this kind of sharing
	for i := range a.p.Pairs {
		if pr := &a.p.Pairs[i]; pr.Object == o.Name && count(pr.Causes) > 0 && (top == nil || count(pr.Causes) > count(top.Causes) ||
			count(pr.Causes) == count(top.Causes) && pr.Function < top.Function) {
			top = pr
		}
	}
	if top != nil {
		adv.Evidence = append(adv.Evidence, fmt.Sprintf("%s makes %s of its %s sharing misses (%s)", top.Function,
			Count(count(top.Causes)), kind, share(count(top.Causes), count(k))))
	}
	return adv, true
}

// privateShared applies the private-shared rule to o (see Advise), whose
// invalidation misses passed the sharing rules' threshold.
func (a *adviser) privateShared(o *profile.Object) (Advice, bool) {
	if o.Kind != "heap" || o.Blocks < 2 {
		return Advice{}, false
	}
	var all, own, neighbour uint64
	for _, w := range o.SharingWrites {
		all += w.Copies
		if w.OwnBlock {
			own += w.Copies
			neighbour += w.Neighbour
		}
	}
	if all == 0 || frac(own, all) < sharingShare {
		return Advice{}, false
	}
	adv := a.advice(AdvicePrivateShared, o)
	unit := "the line size"
	if n := a.coherenceUnit(); n > 0 {
		unit = fmt.Sprintf("%d B", n)
	}
	if frac(neighbour, own) >= sharingShare {
		adv.Message = fmt.Sprintf("each thread's blocks of %s are its own but share lines with other threads' blocks: allocate "+
			"them aligned to %s and round their size up to it (aligned_alloc), or from per-thread pools", o.Name, unit)
	} else {
		adv.Message = fmt.Sprintf("blocks of %s that a thread allocated and writes are used by other processors too: if they are "+
			"meant to be private, find where other threads touch them (report invalidators --object %s); if not, batch the "+
			"updates", o.Name, o.Name)
	}
	k := o.Causes
	adv.Evidence = append(adv.Evidence,
		fmt.Sprintf("%s of its %s misses at %s are invalidation misses (%s), on lines other processors' writes invalidated",
			Count(k.Invalidation), Count(o.Misses), a.focus, share(k.Invalidation, o.Misses)),
		fmt.Sprintf("%s of the %s copies of other processors its writes invalidated come from threads writing blocks they "+
			"allocated (%s); in %s of these the other processor had used none of the block's bytes, only its neighbours' (%s)",
			Count(own), Count(all), share(own, all), Count(neighbour), share(neighbour, own)),
		fmt.Sprintf("%s is %s in %s blocks (%s each on average); processors keep lines of %s coherent", o.Name, Bytes(o.Size),
			Count(o.Blocks), Bytes(o.Size/o.Blocks), unit))
	return adv, true
}

// writeOffsets lists by processor the offsets and sizes of the writes ws
// that invalidated false-shared copies, lowest offset first:
// "+0 (8 B) by processor 1, +8 (8 B) by processor 2"; at most
// maxWriteOffsets, "" when there are none.
func writeOffsets(ws []profile.SharingWrite) string {
	var fs []profile.SharingWrite
	for _, w := range ws {
		if w.FalseSharing > 0 {
			fs = append(fs, w)
		}
	}
	slices.SortFunc(fs, func(a, b profile.SharingWrite) int {
		return cmp.Or(cmp.Compare(a.Offset, b.Offset), cmp.Compare(a.Processor, b.Processor))
	})
	var parts []string
	for i, w := range fs {
		if i == maxWriteOffsets {
			parts = append(parts, fmt.Sprintf("… (%d in all)", len(fs)))
			break
		}
		parts = append(parts, fmt.Sprintf("+%d (%s) by processor %d", w.Offset, Bytes(w.Size), w.Processor))
	}
	return strings.Join(parts, ", ")
}

// falseOffsets names the offsets that different processors' writes wrote
// in false-shared lines, "; different processors write it at +0, +8, +16",
// or "" when fewer than two processors did.
func falseOffsets(ws []profile.SharingWrite) string {
	var offs []uint64
	procs := map[int]bool{}
	for _, w := range ws {
		if w.FalseSharing > 0 {
			offs = append(offs, w.Offset)
			procs[w.Processor] = true
		}
	}
	if len(procs) < 2 {
		return ""
	}
	slices.Sort(offs)
	offs = slices.Compact(offs)
	parts := make([]string, 0, len(offs))
	for i, off := range offs {
		if i == maxWriteOffsets {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, fmt.Sprintf("+%d", off))
	}
	return "; different processors write it at " + strings.Join(parts, ", ")
}

// maxWriteOffsets bounds the writes writeOffsets lists.
const maxWriteOffsets = 8

// writesEvidence says which processors wrote which offsets of o, ""
// when its writes were not recorded.
func writesEvidence(o *profile.Object) string {
	offs := writeOffsets(o.SharingWrites)
	if offs == "" {
		return ""
	}
	from := "its start"
	if o.Kind == "heap" {
		from = "the start of each block"
	}
	return fmt.Sprintf("writes that invalidated other processors' copies, from %s: %s", from, offs)
}

// copies returns how many copies of a line the focus cache fetches cold:
// on several processors, when it is private to each, one per processor
// that ran threads; otherwise 1.
func (a *adviser) copies() uint64 {
	if a.cache == nil || a.cache.Shared {
		return 1
	}
	var n uint64
	for _, s := range a.p.Processors {
		if len(s.Threads) > 0 {
			n++
		}
	}
	return max(n, 1)
}

// sharingEvidence splits the invalidation misses k into the kind of
// sharing advised on ("true" or "false") and the other.
func sharingEvidence(k profile.Causes, kind string) string {
	this, that, other := k.FalseSharing, k.TrueSharing, "true"
	if kind == "true" {
		this, that, other = that, this, "false"
	}
	return fmt.Sprintf("%s of them are %s sharing (%s), %s %s sharing (%s)", Count(this), kind, share(this, k.Invalidation),
		Count(that), other, share(that, k.Invalidation))
}

// coherenceUnit returns the line size of the private caches, the unit
// of coherence (0 when unknown).
func (a *adviser) coherenceUnit() int {
	if a.p.Machine != nil {
		for _, c := range a.p.Machine.Caches {
			if !c.Shared {
				return c.Line
			}
		}
	}
	if a.cache != nil {
		return a.cache.Line
	}
	return 0
}

// touched reports whether o was accessed (or missed, under --miss-only)
// at some cache.
func touched(o *profile.Object) bool {
	if o.Accesses > 0 || o.Misses > 0 {
		return true
	}
	for _, s := range o.Levels {
		if s != nil && (s.Accesses > 0 || s.Misses > 0) {
			return true
		}
	}
	return false
}

func (a *adviser) useAfterFree(o *profile.Object) Advice {
	adv := Advice{Kind: AdviceUseAfterFree, Object: o.Name, StallCycles: o.StallCycles}
	count := func(s *profile.Stats) uint64 {
		if a.p.Options.MissOnly {
			return s.Misses
		}
		return s.Accesses
	}
	what := "accesses"
	if a.p.Options.MissOnly {
		what = "misses"
	}
	var refs []*profile.Reference
	for i := range a.p.References {
		if r := &a.p.References[i]; r.Object == o.Name {
			refs = append(refs, r)
		}
	}
	slices.SortStableFunc(refs, func(x, y *profile.Reference) int {
		return cmp.Or(cmp.Compare(count(&y.Stats), count(&x.Stats)), cmp.Compare(x.PC, y.PC))
	})
	n := count(&o.Stats)
	if n == 0 {
		for _, s := range o.Levels {
			if s != nil {
				n = max(n, count(s))
			}
		}
	}
	var places []string
	for i, r := range refs {
		at := location(r.File, r.Line, r.Column)
		if at == "" {
			at = fmt.Sprintf("%#x", r.PC)
		}
		if i < useAfterFreePlaces {
			places = append(places, at)
			adv.Evidence = append(adv.Evidence, fmt.Sprintf("%s (%#x in %s, %s): %s %s", at, r.PC, r.Function, r.Kind,
				Count(count(&r.Stats)), what))
		}
	}
	if len(refs) > useAfterFreePlaces {
		places = append(places, fmt.Sprintf("and %d more", len(refs)-useAfterFreePlaces))
	}
	if len(refs) > 0 {
		adv.Function = refs[0].Function
	}
	if len(refs) > 0 && !slices.ContainsFunc(refs, func(r *profile.Reference) bool { return !overReader(r.Function) }) {
		var fns []string
		for _, r := range refs {
			if !slices.Contains(fns, r.Function) {
				fns = append(fns, r.Function)
			}
		}
		adv.Kind = AdviceOverRead
		adv.Message = fmt.Sprintf("%s %s to freed memory (%s), all by the C library's vectorized string and memory functions (%s): "+
			"most likely their reads of whole aligned blocks past the end of a string or buffer, harmless; a use after free only if the program passed them freed memory",
			Count(n), what, o.Name, strings.Join(fns, ", "))
		return adv
	}
	adv.Message = fmt.Sprintf("use after free: %s %s to freed memory (%s)", Count(n), what, o.Name)
	if len(places) > 0 {
		adv.Message += fmt.Sprintf(" from %d references, at %s", len(refs), strings.Join(places, ", "))
	}
	return adv
}

// overReader reports whether fn is one of the C library's vectorized
// string and memory functions (glibc's __strlen_avx2, __memchr_evex,
// __strcmp_sse2_unaligned, ...), which read whole aligned blocks that may
// lie past the end of their string or buffer, within its page.
func overReader(fn string) bool {
	name, ok := strings.CutPrefix(fn, "__")
	return ok &&
		slices.ContainsFunc([]string{"mem", "str", "stp", "wcs", "wmem", "wcp", "rawmem"}, func(p string) bool { return strings.HasPrefix(name, p) }) &&
		slices.ContainsFunc([]string{"_avx", "_evex", "_sse", "_ssse3"}, func(isa string) bool { return strings.Contains(name, isa) })
}

// frac is a/b, 0 when b is 0.
func frac(a, b uint64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
