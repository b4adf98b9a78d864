package sim

import (
	"cmp"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"memspy/attrib"
	"memspy/profile"
)

// whereProfile fills the where-and-why part of p from the counters kept
// per access point: references, then pairs, objects and functions adding
// them up, named through the Symbolizer (or by address without one).
func (h *Hierarchy) whereProfile(p *profile.Profile) {
	at := h.attr
	p.Options.Where = true
	p.Options.MissOnly = at.missOnly
	for _, m := range at.modules {
		p.Modules = append(p.Modules, profile.Module{Path: m.path, TextAddr: m.textAddr, TextSize: m.size})
	}
	nm := h.newNamer()
	levels := h.levelStats(nm)
	for i := range p.Caches {
		p.Caches[i].Causes = &profile.Causes{}
	}
	for i, l := range h.levels {
		for _, st := range levels[i] {
			p.Caches[l.cache].Causes.Add(st.Causes)
		}
	}
	funcs := map[string]*profile.Function{}
	objs := map[string]*profile.Object{}
	pairs := map[[2]string]*profile.Pair{}
	lines := map[lineKey]*profile.Line{}
	refs := map[refName]*profile.Reference{}
	for id, key := range at.refs {
		var per map[string]*profile.Stats
		for i, l := range h.levels {
			st, ok := levels[i][int32(id)]
			if !ok {
				continue
			}
			if per == nil {
				per = map[string]*profile.Stats{}
			}
			if prev, ok := per[l.spec.Name]; ok {
				prev.Add(st) // another processor's copy
				continue
			}
			per[l.spec.Name] = st
		}
		if per == nil {
			continue
		}
		fn := nm.function(key)
		obj := nm.object(key.bin)
		strides := at.strideSummary(int32(id))
		f := entry(funcs, fn.Name, fn)
		o := entry(objs, obj.Name, obj)
		pr := entry(pairs, [2]string{fn.Name, obj.Name},
			&profile.Pair{Function: fn.Name, Object: obj.Name, Levels: map[string]*profile.Stats{}})
		pr.Strides = pr.Strides.Merged(strides)
		into := []map[string]*profile.Stats{f.Levels, o.Levels, pr.Levels}
		if key.pc != 0 {
			src := nm.code(key.pc)
			r := entry(refs, refName{key.pc, fn.Name, obj.Name}, &profile.Reference{PC: key.pc, File: src.File, Line: src.Line,
				Column: src.Column, Function: fn.Name, Object: obj.Name, Levels: map[string]*profile.Stats{}})
			r.Strides = r.Strides.Merged(strides)
			addStats(r.Levels, per, true)
			if src.File != "" && src.Line > 0 {
				ln := entry(lines, lineKey{src.File, src.Line, fn.Name},
					&profile.Line{File: src.File, Line: src.Line, Function: fn.Name, Levels: map[string]*profile.Stats{}})
				into = append(into, ln.Levels)
			}
		}
		for _, in := range nm.inclusive(key, funcs) {
			into = append(into, in.Levels)
		}
		for _, m := range into {
			addStats(m, per, false)
		}
	}
	for ctx, n := range at.instr {
		if n == 0 {
			continue
		}
		fn := nm.function(refKey{ctx: int32(ctx)})
		f := entry(funcs, fn.Name, fn)
		f.Instructions += n
		f.ComputeCycles += n
		for _, in := range nm.inclusive(refKey{ctx: int32(ctx)}, funcs) {
			in.Instructions += n
			in.ComputeCycles += n
		}
	}
	for ctx, w := range at.syncWait {
		if w == 0 {
			continue
		}
		fn := nm.function(refKey{ctx: int32(ctx)})
		entry(funcs, fn.Name, fn).SyncCycles += w
		for _, in := range nm.inclusive(refKey{ctx: int32(ctx)}, funcs) {
			in.SyncCycles += w
		}
	}
	if h.timing != nil {
		p.Sync = h.syncObjects(nm)
	}
	p.Numa = h.numaStats(nm)
	for _, f := range funcs {
		p.Functions = append(p.Functions, *f)
	}
	writes := h.sharingWrites(nm)
	for _, o := range objs {
		o.SharingWrites = writes[o.Name]
		p.Objects = append(p.Objects, *o)
	}
	for _, pr := range pairs {
		p.Pairs = append(p.Pairs, *pr)
	}
	for _, ln := range lines {
		p.Lines = append(p.Lines, *ln)
	}
	for _, r := range refs {
		r.Kind = refKind(r.Levels, h.levels)
		p.References = append(p.References, *r)
	}
	positions(p.References)
	p.TrimSharing()
	if err := p.SetFocus(""); err != nil {
		panic(err) // the profile's own caches
	}
	byStall := func(a, b *profile.Stats) int {
		return cmp.Or(cmp.Compare(b.StallCycles, a.StallCycles), cmp.Compare(b.Misses, a.Misses), cmp.Compare(b.Accesses, a.Accesses))
	}
	slices.SortFunc(p.Functions, func(a, b profile.Function) int {
		return cmp.Or(cmp.Compare(b.StallCycles+b.ComputeCycles+b.SyncCycles, a.StallCycles+a.ComputeCycles+a.SyncCycles),
			byStall(&a.Stats, &b.Stats), cmp.Compare(a.Name, b.Name))
	})
	slices.SortFunc(p.Objects, func(a, b profile.Object) int { return cmp.Or(byStall(&a.Stats, &b.Stats), cmp.Compare(a.Name, b.Name)) })
	slices.SortFunc(p.Pairs, func(a, b profile.Pair) int {
		return cmp.Or(byStall(&a.Stats, &b.Stats), cmp.Compare(a.Function, b.Function), cmp.Compare(a.Object, b.Object))
	})
	slices.SortFunc(p.Lines, func(a, b profile.Line) int {
		return cmp.Or(byStall(&a.Stats, &b.Stats), cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Function, b.Function))
	})
	slices.SortFunc(p.References, func(a, b profile.Reference) int {
		return cmp.Or(byStall(&a.Stats, &b.Stats), cmp.Compare(a.PC, b.PC), cmp.Compare(a.Function, b.Function), cmp.Compare(a.Object, b.Object))
	})
}

// lineKey identifies a source line of a function.
type lineKey struct {
	file string
	line int
	fn   string
}

// refName identifies a reference of the profile: access points of one
// instruction in different calling contexts of one function add up.
type refName struct {
	pc      uint64
	fn, obj string
}

// addStats adds the counters by cache of per to into; evictor lists only
// when evictors is set (references keep them).
func addStats(into, per map[string]*profile.Stats, evictors bool) {
	for name, st := range per {
		sum := *st
		if !evictors {
			sum.Evictors = nil
		}
		if into[name] == nil {
			into[name] = &profile.Stats{}
		}
		into[name].Add(&sum)
	}
}

// positions numbers the references of each source line by column, then
// PC.
func positions(refs []profile.Reference) {
	byLine := map[lineKey][]*profile.Reference{}
	for i := range refs {
		r := &refs[i]
		if r.File != "" && r.Line > 0 {
			k := lineKey{r.File, r.Line, ""}
			byLine[k] = append(byLine[k], r)
		}
	}
	for _, rs := range byLine {
		slices.SortFunc(rs, func(a, b *profile.Reference) int {
			return cmp.Or(cmp.Compare(a.Column, b.Column), cmp.Compare(a.PC, b.PC), cmp.Compare(a.Function, b.Function), cmp.Compare(a.Object, b.Object))
		})
		pos := 0
		for i, r := range rs {
			if i > 0 && r.PC != rs[i-1].PC {
				pos++ // the same instruction in several functions or objects keeps one position
			}
			r.Position = pos
		}
	}
}

// maxRefEvictors bounds the evictor references listed per reference and
// level; the rest are added up in one entry.
const maxRefEvictors = 8

// entry returns m[k], made fresh on first use.
func entry[K comparable, T any](m map[K]*T, k K, fresh *T) *T {
	if e, ok := m[k]; ok {
		return e
	}
	m[k] = fresh
	return fresh
}

// levelStats returns, for every level, the profile counters of each access
// point with any, counting the byte use of the lines still resident as if
// they left now.
func (h *Hierarchy) levelStats(nm *namer) []map[int32]*profile.Stats {
	at := h.attr
	out := make([]map[int32]*profile.Stats, len(h.levels))
	for i, l := range h.levels {
		la := l.attr
		resident := map[int32][2]uint64{}
		l.c.ForEachValid(func(slot int) {
			if la.demand[slot] {
				u := resident[la.fill[slot]]
				resident[la.fill[slot]] = [2]uint64{u[0] + la.used(slot), u[1] + l.lineSize}
			}
		})
		out[i] = map[int32]*profile.Stats{}
		var none refStats // no counts here, but it may have filled lines in a warm-up
		for id := range at.refs {
			r := &none
			if id < len(la.refs) {
				r = &la.refs[id]
			}
			u := resident[int32(id)]
			acc := r.acc[kIFetch] + r.acc[kRead] + r.acc[kWrite]
			miss := r.miss[kIFetch] + r.miss[kRead] + r.miss[kWrite]
			if acc == 0 && miss == 0 && r.fetched == 0 && u[1] == 0 && len(r.evictedBy) == 0 && len(r.invBy) == 0 && len(r.invOf) == 0 {
				continue
			}
			st := &profile.Stats{
				Accesses: acc, Misses: miss,
				IFetches: r.acc[kIFetch], Reads: r.acc[kRead], Writes: r.acc[kWrite],
				IFetchMisses: r.miss[kIFetch], ReadMisses: r.miss[kRead], WriteMisses: r.miss[kWrite],
				Causes: profile.Causes{Cold: r.cold, Replacement: r.replacement, Invalidation: r.invalidation,
					TrueSharing: r.trueSharing, FalseSharing: r.falseSharing, Unknown: r.unknown},
				UnknownHits:  r.unknownHits,
				TemporalHits: r.temporal, SpatialHits: r.spatial,
				UsedBytes: r.used + u[0], FetchedBytes: r.fetched + u[1],
			}
			if !at.missOnly {
				st.Hits = acc - miss
			}
			if st.FetchedBytes > 0 {
				st.SpatialUse = float64(st.UsedBytes) / float64(st.FetchedBytes)
			}
			for k := range numAccessKinds {
				st.StallCycles += r.miss[k] * h.penalty(l, k)
			}
			for by, n := range r.evictedBy {
				obj := nm.object(at.refs[by].bin).Name
				if st.EvictedBy == nil {
					st.EvictedBy = map[string]uint64{}
				}
				st.EvictedBy[obj] += n
				st.Evictors = append(st.Evictors, profile.RefEvictor{Reference: fmt.Sprintf("%#x", at.refs[by].pc), Object: obj, Count: n})
			}
			st.InvalidatedBy, st.Invalidated = sharingLists(r, at, nm)
			profile.SortEvictors(st.Evictors)
			if len(st.Evictors) > maxRefEvictors {
				rest := profile.RefEvictor{Reference: profile.OtherEvictors}
				for _, e := range st.Evictors[maxRefEvictors:] {
					rest.Count += e.Count
				}
				st.Evictors = append(st.Evictors[:maxRefEvictors], rest)
			}
			out[i][int32(id)] = st
		}
	}
	return out
}

// penalty returns the cycles a miss of kind k at l waits for the level
// below: its latency, or memory's.
func (h *Hierarchy) penalty(l *level, k int) uint64 {
	if n := l.next(k); n != nil {
		return uint64(n.spec.Latency)
	}
	return uint64(h.m.MemoryLatency)
}

// refKind says what an access point does, from its counters at the first
// level that has any: read, write, modify (both) or ifetch.
func refKind(per map[string]*profile.Stats, levels []*level) string {
	for _, l := range levels {
		st, ok := per[l.spec.Name]
		if !ok {
			continue
		}
		r, w := st.Reads+st.ReadMisses, st.Writes+st.WriteMisses
		switch {
		case st.IFetches+st.IFetchMisses > 0:
			return "ifetch"
		case r > 0 && w > 0:
			return "modify"
		case w > 0:
			return "write"
		}
		return "read"
	}
	return "read"
}

// namer names procedures and data bins for the profile, with unique
// names, through the Symbolizer when there is one.
type namer struct {
	h     *Hierarchy
	procs map[int32]*profile.Function // every procedure
	bins  map[int32]*profile.Object   // every bin an access point touches
	src   map[uint64]Source
	incl  map[int32][]*profile.Inclusive // by calling context
	heap  []string                       // hex names of heap bins (attrib.HeapNames)
	taken map[string]bool
}

// newNamer names every bin that an access point touches. Objects whose
// short names collide get the shortest end of their allocation call path
// that tells them apart ("main.86.alloc_matrix.31.m"), else their bin
// number ("info#12").
func (h *Hierarchy) newNamer() *namer {
	n := &namer{h: h, procs: map[int32]*profile.Function{}, bins: map[int32]*profile.Object{}, src: map[uint64]Source{},
		incl: map[int32][]*profile.Inclusive{}, heap: attrib.HeapNames(h.attr.data.Bins()), taken: map[string]bool{}}
	n.nameProcs()
	paths := map[int32][]string{}
	groups := map[string][]int32{}
	for _, r := range h.attr.refs {
		if _, ok := n.bins[r.bin]; ok {
			continue
		}
		o, path := n.newObject(r.bin)
		n.bins[r.bin], paths[r.bin] = o, path
		groups[o.Name] = append(groups[o.Name], r.bin)
	}
	suffix := func(id int32, k int) string {
		p := paths[id]
		return strings.Join(append(slices.Clone(p[len(p)-k:]), n.bins[id].Name), ".")
	}
	renamed := map[int32]string{}
	for _, ids := range groups {
		if len(ids) == 1 {
			continue
		}
	member:
		for _, id := range ids {
			for k := 1; k <= len(paths[id]); k++ {
				cand := suffix(id, k)
				if !slices.ContainsFunc(ids, func(j int32) bool { return j != id && k <= len(paths[j]) && suffix(j, k) == cand }) {
					renamed[id] = cand
					continue member
				}
			}
			renamed[id] = fmt.Sprintf("%s#%d", n.bins[id].Name, id)
		}
	}
	ids := slices.Sorted(maps.Keys(n.bins))
	for _, id := range ids {
		o := n.bins[id]
		if name, ok := renamed[id]; ok {
			o.Name = name
		}
		if n.taken["o"+o.Name] { // a path-named object meets another's name
			o.Name = fmt.Sprintf("%s#%d", o.Name, id)
		}
		n.taken["o"+o.Name] = true
	}
	return n
}

// code returns what the Symbolizer knows of pc.
func (n *namer) code(pc uint64) Source {
	sym := n.h.attr.sym
	if sym == nil {
		return Source{}
	}
	s, ok := n.src[pc]
	if !ok {
		s = sym.Code(pc)
		n.src[pc] = s
	}
	return s
}

// function returns a fresh copy of the function entry of access point k,
// with no counters: the procedure of its calling context, or for code
// outside every traced call the function holding its PC when known.
func (n *namer) function(k refKey) *profile.Function {
	proc := n.h.attr.code.Contexts()[k.ctx].Proc
	if proc == attrib.UnknownProc && k.pc != 0 {
		if s := n.code(k.pc); s.Func != "" {
			return &profile.Function{Name: s.Func, File: s.File, Module: s.Module, Entry: s.Entry, Levels: map[string]*profile.Stats{}}
		}
	}
	return n.procFunction(proc)
}

// procFunction returns a fresh copy of the function entry of procedure
// proc, with no counters.
func (n *namer) procFunction(proc int32) *profile.Function {
	c := *n.procs[proc]
	c.Levels = map[string]*profile.Stats{}
	return &c
}

// inclusive returns the inclusive counters of every function on the call
// path of access point k, each once, making the functions' entries in
// funcs on first use. Outside every traced call it is k's own function.
func (n *namer) inclusive(k refKey, funcs map[string]*profile.Function) []*profile.Inclusive {
	if in, ok := n.incl[k.ctx]; ok {
		return in
	}
	ctxs := n.h.attr.code.Contexts()
	var out []*profile.Inclusive
	add := func(fn *profile.Function) {
		f := entry(funcs, fn.Name, fn)
		if f.Inclusive == nil {
			f.Inclusive = &profile.Inclusive{Levels: map[string]*profile.Stats{}}
		}
		if !slices.Contains(out, f.Inclusive) {
			out = append(out, f.Inclusive)
		}
	}
	if k.ctx == attrib.RootContext {
		add(n.function(k))
		return out // depends on the PC: not kept
	}
	for c := k.ctx; c != attrib.RootContext; c = ctxs[c].Parent {
		add(n.procFunction(ctxs[c].Proc))
	}
	n.incl[k.ctx] = out
	return out
}

// nameProcs names every procedure and region. A procedure in a known
// module but in no function the Symbolizer knows (a stripped library's
// static function) is named by its module and link-time entry
// ("libc.so.6+0x9caa4", the Symbolizer's Place). Procedures whose names
// collide get their full C++ name when that tells them apart (overloads
// and template instantiations, whose short names leave parameters and
// template arguments out: "max(int, int)", "max(double, double)"), else
// their module's name (static functions of different modules or files:
// "init@libc.so.6"), else their entry ("init@0x1091e5"); a region keeps
// the name the program gave it (regions are one per name). The procedure
// of a PLT entry is the function its calls reached (attrib.Proc.Reaches),
// so that a call through the PLT counts as a call of that function.
func (n *namer) nameProcs() {
	groups := map[string][]int32{}
	sigs := map[int32]string{}
	procs := n.h.attr.code.Procs()
	for id, p := range procs {
		if p.Reaches != attrib.UnknownProc {
			continue
		}
		f := &profile.Function{Name: p.Name, Entry: p.Entry, Region: p.Region}
		if p.Entry != 0 {
			switch s := n.code(p.Entry); {
			case s.Func != "":
				f.Name, f.File, f.Line, f.Module = s.Func, s.File, s.Line, s.Module
				sigs[int32(id)] = s.Signature
			case s.Module != "": // (only with a Symbolizer)
				if name, ok := n.h.attr.sym.Place(p.Entry); ok {
					f.Name, f.Module = name, s.Module
				}
			}
		}
		n.procs[int32(id)] = f
		groups[f.Name] = append(groups[f.Name], int32(id))
	}
	for _, ids := range groups {
		if len(ids) == 1 {
			continue
		}
		mods, nsig := map[string]int{}, map[string]int{}
		for _, id := range ids {
			mods[n.procs[id].Module]++
			nsig[sigs[id]]++
		}
		for _, id := range ids {
			f := n.procs[id]
			if f.Region {
				continue // the program's own name for it
			}
			if sig := sigs[id]; sig != "" && nsig[sig] == 1 {
				f.Name = sig
			} else if m := f.Module; m != "" && mods[m] == 1 {
				f.Name += "@" + filepath.Base(m)
			} else {
				f.Name = fmt.Sprintf("%s@%#x", f.Name, f.Entry)
			}
		}
	}
	for id, p := range procs {
		if p.Reaches != attrib.UnknownProc {
			n.procs[int32(id)] = n.procs[p.Reaches]
		}
	}
}

// object returns a fresh copy of the object entry of data bin id, which an
// access point touches, with no counters.
func (n *namer) object(id int32) *profile.Object {
	c := *n.bins[id]
	c.Levels = map[string]*profile.Stats{}
	return &c
}

// newObject makes the object entry of data bin id, with its allocation
// call path as "func.line" elements for a heap bin the Symbolizer knows.
// binName returns the name of data bin id in the profile.
func (n *namer) binName(id int32) string {
	if o, ok := n.bins[id]; ok {
		return o.Name
	}
	o, _ := n.newObject(id)
	return o.Name
}

func (n *namer) newObject(id int32) (o *profile.Object, path []string) {
	b := n.h.attr.data.Bin(id)
	o = &profile.Object{Name: b.Name, Kind: b.Kind.String(), Size: b.Bytes}
	switch b.Kind {
	case attrib.Stack:
		o.Name = "locals@" + n.procFunction(b.Proc).Name
		if b.Name != "" {
			o.Name = n.procFunction(b.Proc).Name + "." + b.Name
		}
	case attrib.Heap:
		o.Name, o.FullName = n.heap[id], n.heap[id]
		o.Blocks = b.Blocks
		if sym := n.h.attr.sym; sym != nil {
			if name, p, ok := sym.HeapName(b.Site); ok {
				o.Name, o.FullName, path = name, strings.Join(append(slices.Clone(p), name), "."), p
			}
		}
		for i, pc := range b.Site {
			s := n.code(pc - 1) // a return address: the call is just before it
			frame := fmt.Sprintf("%#x", pc)
			if s.Func != "" {
				frame = s.Func
			}
			if s.File != "" {
				frame += fmt.Sprintf(" %s:%d", filepath.Base(s.File), s.Line)
				if i == 0 {
					o.AllocSite = fmt.Sprintf("%s:%d", filepath.Base(s.File), s.Line)
				}
			}
			o.CallPath = append(o.CallPath, frame)
		}
	}
	if o.FullName == "" {
		o.FullName = o.Name
	}
	return o, path
}
