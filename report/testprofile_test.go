package report

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/profile"
)

// Latencies of the test machine: a miss in L1D waits for L2, a miss in L2
// for memory.
const (
	testL2Latency  = 12
	testMemLatency = 200
)

// lvl describes a reference's counters at one cache: its misses are
// cold, replacement or invalidation misses.
type lvl struct {
	acc, miss, cold, repl uint64
	evictedBy             map[string]uint64
	use                   float64 // spatial use; 0 means 1
}

// sharingOf splits the L1D invalidation misses of references (by PC)
// into true sharing (the first) and false sharing (the rest).
type sharingOf map[uint64]uint64

// stats makes the Stats of l, a miss waiting lat cycles: 3/4 of the
// accesses and misses are reads, 3/4 of the hits temporal, and the lines
// fetched 64 bytes each.
func (l lvl) stats(lat uint64) *profile.Stats {
	hits := l.acc - l.miss
	use := l.use
	if use == 0 {
		use = 1
	}
	fetched := l.miss * 64
	s := &profile.Stats{
		Accesses: l.acc, Hits: hits, Misses: l.miss,
		Reads: l.acc * 3 / 4, Writes: l.acc - l.acc*3/4, ReadMisses: l.miss * 3 / 4, WriteMisses: l.miss - l.miss*3/4,
		StallCycles:  l.miss * lat,
		Causes:       profile.Causes{Cold: l.cold, Replacement: l.repl, Invalidation: l.miss - l.cold - l.repl},
		TemporalHits: hits * 3 / 4, SpatialHits: hits - hits*3/4,
		FetchedBytes: fetched, UsedBytes: uint64(float64(fetched) * use),
	}
	s.SpatialUse = float64(s.UsedBytes) / max(1, float64(s.FetchedBytes))
	for k, v := range l.evictedBy {
		if s.EvictedBy == nil {
			s.EvictedBy = map[string]uint64{}
		}
		s.EvictedBy[k] = v
	}
	return s
}

type refSpec struct {
	pc       uint64
	file     string
	line     int
	fn, obj  string
	kind     string
	l1, l2   lvl
	evictors []profile.RefEvictor
}

// refPlace is a reference's column and position in its source line.
type refPlace struct{ column, position int }

// testProfile builds a where-and-why profile from references; pairs,
// objects, functions, source lines and the cache totals are their sums,
// and the focus is L1D. It resembles:
//   - a blocked matmul whose B interferes with itself (A: capacity; C: small);
//   - saxpy's x and y, two 8 KiB arrays that map to the same sets, both
//     on saxpy.c:5 (y first by column);
//   - update, a region of main, and its particles, an array of 64-byte
//     structs read one field at a time (spatial use 0.25, stride 64 B);
//   - main's use of buf, a freed block (no strides known);
//   - main calls everything: its inclusive counters are the run's, the
//     others' are their own.
func testProfile() *profile.Profile {
	return buildProfile(testRefs(), nil)
}

// testRefs are the references of testProfile.
func testRefs() []refSpec {
	return []refSpec{
		{0x401100, "mm.c", 12, "matmul", "B", "read",
			lvl{100000, 20000, 2000, 18000, map[string]uint64{"B": 15000, "A": 2000, "C": 1000}, 0},
			lvl{20000, 4000, 2000, 2000, nil, 0},
			[]profile.RefEvictor{{Reference: "0x401100", Object: "B", Count: 15000}, {Reference: "0x401080", Object: "A", Count: 2000},
				{Reference: "0x4010c0", Object: "C", Count: 1000}}},
		{0x401080, "mm.c", 11, "matmul", "A", "read",
			lvl{100000, 5000, 2000, 3000, map[string]uint64{"A": 1000, "B": 1000, "C": 1000}, 0},
			lvl{5000, 2000, 2000, 0, nil, 0}, nil},
		{0x4010c0, "mm.c", 13, "matmul", "C", "modify",
			lvl{50000, 1000, 1000, 0, nil, 0}, lvl{1000, 100, 100, 0, nil, 0}, nil},
		{0x401200, "saxpy.c", 5, "saxpy", "x", "read",
			lvl{20000, 8000, 128, 7872, map[string]uint64{"y": 7000, "x": 500}, 0}, lvl{8000, 128, 128, 0, nil, 0},
			[]profile.RefEvictor{{Reference: "0x401210", Object: "y", Count: 7000}, {Reference: "0x401200", Object: "x", Count: 500}}},
		{0x401210, "saxpy.c", 5, "saxpy", "y", "modify",
			lvl{20000, 7000, 128, 6872, map[string]uint64{"x": 6500, "y": 300}, 0}, lvl{7000, 128, 128, 0, nil, 0}, nil},
		{0x401300, "/home/u/sim/part.c", 20, "update", "particles", "read",
			lvl{10000, 4000, 3600, 400, map[string]uint64{"B": 400}, 0.25}, lvl{4000, 3600, 3600, 0, nil, 0}, nil},
		{0x401400, "main.c", 40, "main", "buf", "read", lvl{5, 1, 1, 0, nil, 0}, lvl{1, 1, 1, 0, nil, 0}, nil},
		{0x401420, "main.c", 52, "main", "buf", "write", lvl{7, 2, 2, 0, nil, 0}, lvl{2, 2, 2, 0, nil, 0}, nil},
	}
}

// buildProfile builds the profile of refs (see testProfile), the
// invalidation misses at L1D of those in trueSharing split into true and
// false sharing.
func buildProfile(refs []refSpec, trueSharing sharingOf) *profile.Profile {
	places := map[uint64]refPlace{0x401100: {9, 0}, 0x401210: {3, 0}, 0x401200: {14, 1}}
	strides := map[uint64]*profile.Strides{
		0x401100: {Samples: 99999, Top: []profile.Stride{{Bytes: 4096, Count: 97000}, {Bytes: 8, Count: 2999}}},
		0x401080: {Samples: 99999, Top: []profile.Stride{{Bytes: 8, Count: 99000}, {Bytes: -4096, Count: 990}}},
		0x4010c0: {Samples: 49999, Top: []profile.Stride{{Bytes: 0, Count: 49000}, {Bytes: 8, Count: 999}}},
		0x401200: {Samples: 19999, Top: []profile.Stride{{Bytes: 4, Count: 19999}}},
		0x401210: {Samples: 19999, Top: []profile.Stride{{Bytes: 4, Count: 19999}}},
		0x401300: {Samples: 9999, Top: []profile.Stride{{Bytes: 64, Count: 9800}, {Bytes: -64, Count: 150}, {Bytes: 128, Count: 49}}},
	}
	m := &machine.Machine{
		Name: "test",
		Caches: []machine.Cache{
			{Name: "L1I", Replacement: machine.LRU, WriteBack: true, WriteAllocate: true, Level: 1, Size: 32 << 10, Sets: 64, Assoc: 8, Line: 64, Holds: machine.Instructions, Latency: 4},
			{Name: "L1D", Replacement: machine.LRU, WriteBack: true, WriteAllocate: true, Level: 1, Size: 32 << 10, Sets: 64, Assoc: 8, Line: 64, Holds: machine.Data, Latency: 4},
			{Name: "L2", Replacement: machine.LRU, WriteBack: true, WriteAllocate: true, Level: 2, Size: 256 << 10, Sets: 512, Assoc: 8, Line: 64, Holds: machine.Unified, Latency: testL2Latency},
		},
		MemoryLatency: testMemLatency,
	}
	p := &profile.Profile{
		Version: profile.Version, Tool: "memspy", Source: profile.Source{Name: "test.mst", Format: "mst"}, Machine: m,
		Options: profile.Options{Where: true}, Complete: true, EventsByKind: map[string]uint64{"ifetch": 850000},
		Caches: []profile.CacheStats{{Name: "L1I", Level: 1, Accesses: 850000, IFetches: 850000, Misses: 100, IFetchMisses: 100},
			{Name: "L1D", Level: 1, Causes: &profile.Causes{}}, {Name: "L2", Level: 2, Causes: &profile.Causes{}}},
	}
	pairAt, objAt, fnAt, lineAt := map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}
	add := func(levels map[string]*profile.Stats, r *profile.Reference) {
		for name, s := range r.Levels {
			if levels[name] == nil {
				levels[name] = &profile.Stats{}
			}
			levels[name].Add(s)
			levels[name].Evictors = nil
		}
	}
	for _, spec := range refs {
		r := profile.Reference{PC: spec.pc, File: spec.file, Line: spec.line, Column: places[spec.pc].column,
			Position: places[spec.pc].position, Function: spec.fn, Object: spec.obj, Kind: spec.kind, Strides: strides[spec.pc],
			Levels: map[string]*profile.Stats{"L1D": spec.l1.stats(testL2Latency), "L2": spec.l2.stats(testMemLatency)}}
		r.Levels["L1D"].Evictors = spec.evictors
		if ts, ok := trueSharing[spec.pc]; ok {
			k := &r.Levels["L1D"].Causes
			k.TrueSharing, k.FalseSharing = ts, k.Invalidation-ts
		}
		p.References = append(p.References, r)
		for i, l := range []lvl{spec.l1, spec.l2} {
			c := &p.Caches[i+1]
			c.Accesses += l.acc
			c.Misses += l.miss
			c.Causes.Add(r.Levels[c.Name].Causes)
		}
		key := spec.fn + "\x00" + spec.obj
		if _, ok := pairAt[key]; !ok {
			pairAt[key] = len(p.Pairs)
			p.Pairs = append(p.Pairs, profile.Pair{Function: spec.fn, Object: spec.obj, Levels: map[string]*profile.Stats{}})
		}
		pr := &p.Pairs[pairAt[key]]
		add(pr.Levels, &r)
		if r.Strides != nil {
			if pr.Strides == nil {
				pr.Strides = &profile.Strides{}
			}
			pr.Strides.Add(r.Strides)
		}
		key = fmt.Sprintf("%s:%d\x00%s", spec.file, spec.line, spec.fn)
		if _, ok := lineAt[key]; !ok {
			lineAt[key] = len(p.Lines)
			p.Lines = append(p.Lines, profile.Line{File: spec.file, Line: spec.line, Function: spec.fn, Levels: map[string]*profile.Stats{}})
		}
		add(p.Lines[lineAt[key]].Levels, &r)
		if _, ok := objAt[spec.obj]; !ok {
			objAt[spec.obj] = len(p.Objects)
			p.Objects = append(p.Objects, profile.Object{Name: spec.obj, FullName: spec.obj, Levels: map[string]*profile.Stats{}})
		}
		add(p.Objects[objAt[spec.obj]].Levels, &r)
		if _, ok := fnAt[spec.fn]; !ok {
			fnAt[spec.fn] = len(p.Functions)
			p.Functions = append(p.Functions, profile.Function{Name: spec.fn, Levels: map[string]*profile.Stats{}})
		}
		add(p.Functions[fnAt[spec.fn]].Levels, &r)
	}
	for i := range p.Objects {
		o := &p.Objects[i]
		switch o.Name {
		case "A", "B", "C":
			o.Kind, o.Size, o.Blocks = "heap", 2<<20, 1
			o.FullName = o.Name + " (mm.c:30 ← main)"
			o.AllocSite = "mm.c:30"
			o.CallPath = []string{"alloc mm.c:30", "main mm.c:44"}
		case "x", "y":
			o.Kind, o.Size = "global", 8<<10
		case "particles":
			o.Kind, o.Size, o.Blocks = "heap", 256<<10, 1
		case "buf":
			o.Kind, o.Size = "freed", 4096
		case "counters":
			o.Kind, o.Size = "global", 32
		case "queue":
			o.Kind, o.Size, o.Blocks = "heap", 4096, 1
		}
	}
	for i := range p.Functions {
		f := &p.Functions[i]
		f.Instructions = map[string]uint64{"matmul": 500000, "update": 200000, "saxpy": 100000, "main": 50000}[f.Name]
		f.ComputeCycles = f.Instructions
		f.Region = f.Name == "update"
	}
	for i := range p.Functions {
		f := &p.Functions[i]
		in := &profile.Inclusive{Levels: map[string]*profile.Stats{}}
		for _, g := range p.Functions {
			if g.Name != f.Name && f.Name != "main" {
				continue
			}
			in.Instructions += g.Instructions
			in.ComputeCycles += g.ComputeCycles
			for name, s := range g.Levels {
				if in.Levels[name] == nil {
					in.Levels[name] = &profile.Stats{}
				}
				in.Levels[name].Add(s)
			}
		}
		f.Inclusive = in
	}
	// Fewest misses first, so that the views must rank them.
	slices.SortFunc(p.References, func(a, b profile.Reference) int {
		return cmp.Compare(a.Levels["L1D"].Misses, b.Levels["L1D"].Misses)
	})
	p.Timeline = testTimeline(p)
	addLineUse(p, "B")
	if err := p.SetFocus("L1D"); err != nil {
		panic(err)
	}
	return p
}

// testTimeline is a timeline of p's caches in 4 points of 250,000
// events: a fifth of the accesses and misses in each of the first three,
// the rest in the last; a dump after the second.
func testTimeline(p *profile.Profile) *profile.Timeline {
	var names []string
	for _, c := range p.Caches {
		names = append(names, c.Name)
	}
	tl := profile.NewTimeline(names, 250_000, 0)
	for k := range uint64(4) {
		counts := make([]profile.TimelineCounts, len(p.Caches))
		for i, c := range p.Caches {
			a, m, r, w := c.Accesses/5, c.Misses/5, (c.ReadMisses+c.MiscMisses)/5, c.WriteMisses/5
			if k == 3 {
				a, m, r, w = c.Accesses-3*a, c.Misses-3*m, c.ReadMisses+c.MiscMisses-3*r, c.WriteMisses-3*w
			}
			counts[i] = profile.TimelineCounts{Accesses: a, Misses: m, IFetchMisses: m - r - w, ReadMisses: r, WriteMisses: w}
		}
		tl.Append((k+1)*250_000, 250_000, 200_000, counts)
	}
	tl.Mark("dump", "half", 500_000)
	return tl
}

// addLineUse gives object name the line use its used bytes say, at every
// cache: each of its lines used its first used/lines bytes.
func addLineUse(p *profile.Profile, name string) {
	for i := range p.Objects {
		o := &p.Objects[i]
		if o.Name != name {
			continue
		}
		o.LineUse = map[string][]uint64{}
		for cache, s := range o.Levels {
			if lines := s.FetchedBytes / 64; lines > 0 {
				use := make([]uint64, s.UsedBytes/lines)
				for off := range use {
					use[off] = lines
				}
				o.LineUse[cache] = use
			}
		}
	}
}

// testMultiProfile is testProfile on a machine of 8 processors, threads
// placed round-robin, with private L1I and L1D and a shared L2, where 5
// threads ran on processors 0 to 3 (4 to 7 ran none) and two more objects
// have invalidation misses at L1D:
//   - counters, 32 bytes of per-thread counters that work increments:
//     mostly false sharing;
//   - queue, which produce writes and consume reads: mostly true sharing.
func testMultiProfile() *profile.Profile {
	refs := append(testRefs(),
		refSpec{0x401500, "work.c", 8, "work", "counters", "modify",
			lvl{400000, 13000, 4, 0, nil, 0}, lvl{13000, 4, 4, 0, nil, 0}, nil},
		refSpec{0x401600, "queue.c", 15, "consume", "queue", "read",
			lvl{50000, 12000, 10, 0, nil, 0}, lvl{12000, 10, 10, 0, nil, 0}, nil},
		refSpec{0x401610, "queue.c", 9, "produce", "queue", "write",
			lvl{12000, 30, 10, 0, nil, 0}, lvl{30, 10, 10, 0, nil, 0}, nil},
	)
	p := buildProfile(refs, sharingOf{0x401500: 996, 0x401600: 10000, 0x401610: 20})
	p.Machine.Processors, p.Machine.Mapping = 8, machine.RoundRobin
	p.Machine.Caches[2].Shared = true
	l1d := &p.Caches[1]
	l1d.TrueSharingMisses, l1d.FalseSharingMisses = l1d.Causes.TrueSharing, l1d.Causes.FalseSharing
	l1d.Invalidations = l1d.TrueSharingMisses + l1d.FalseSharingMisses + 100
	// Processors 1 to 3 each have a fifth of the private caches' counters,
	// processor 0 the rest.
	part := func(c profile.CacheStats, n uint64) profile.CacheStats {
		return profile.CacheStats{Name: c.Name, Level: c.Level, Accesses: c.Accesses / n, Misses: c.Misses / n,
			IFetches: c.IFetches / n, IFetchMisses: c.IFetchMisses / n, Invalidations: c.Invalidations / n,
			TrueSharingMisses: c.TrueSharingMisses / n, FalseSharingMisses: c.FalseSharingMisses / n}
	}
	rest := func(c profile.CacheStats, parts []profile.CacheStats) profile.CacheStats {
		r := profile.CacheStats{Name: c.Name, Level: c.Level, Accesses: c.Accesses, Misses: c.Misses, IFetches: c.IFetches,
			IFetchMisses: c.IFetchMisses, Invalidations: c.Invalidations, TrueSharingMisses: c.TrueSharingMisses,
			FalseSharingMisses: c.FalseSharingMisses}
		for _, x := range parts {
			r.Accesses -= x.Accesses
			r.Misses -= x.Misses
			r.IFetches -= x.IFetches
			r.IFetchMisses -= x.IFetchMisses
			r.Invalidations -= x.Invalidations
			r.TrueSharingMisses -= x.TrueSharingMisses
			r.FalseSharingMisses -= x.FalseSharingMisses
		}
		return r
	}
	threads := [][]uint32{{1, 5}, {2}, {3}, {4}}
	var others [2][]profile.CacheStats // of processors 1 to 3, for L1I and L1D
	for i := range 8 {
		ps := profile.ProcessorStats{Processor: i, Caches: []profile.CacheStats{{Name: "L1I", Level: 1}, {Name: "L1D", Level: 1}}}
		if i >= 1 && i <= 3 {
			for j := range 2 {
				ps.Caches[j] = part(p.Caches[j], 5)
				others[j] = append(others[j], ps.Caches[j])
			}
			ps.Upgrades, ps.Interventions = 100*uint64(i), 10*uint64(i)
			ps.InvalidationsSent, ps.InvalidationsReceived = 1000*uint64(i), ps.Caches[1].Invalidations
		}
		if i < 4 {
			ps.Threads = threads[i]
		}
		p.Processors = append(p.Processors, ps)
	}
	p0 := &p.Processors[0]
	for j := range 2 {
		p0.Caches[j] = rest(p.Caches[j], others[j])
	}
	p0.Upgrades, p0.Interventions, p0.InvalidationsSent, p0.InvalidationsReceived = 50, 5, 1000, p0.Caches[1].Invalidations
	// Processors 0 to 3 each write their own 8 bytes of counters, and
	// invalidate each other's copies.
	o := &p.Objects[slices.IndexFunc(p.Objects, func(o profile.Object) bool { return o.Name == "counters" })]
	var sh []profile.Sharing
	for proc := range 4 {
		n := 3000 + uint64(proc)
		o.SharingWrites = append(o.SharingWrites, profile.SharingWrite{Processor: proc, Offset: 8 * uint64(3-proc), Size: 8,
			Copies: n, FalseSharing: n - 250})
		sh = append(sh, profile.Sharing{Object: "counters", Processor: proc, Lines: n, FalseSharing: n - 250})
	}
	profile.SortSharingWrites(o.SharingWrites)
	profile.SortSharing(sh)
	o.Levels["L1D"].InvalidatedBy, o.Levels["L1D"].Invalidated = sh, sh
	if err := p.SetFocus(p.Focus); err != nil {
		panic(err)
	}
	return p
}

// testThreadProfile is testMultiProfile with the threads' simulated time
// and synchronization, re-interleaved by clock in quanta of 100 events:
// main (thread 1) starts 4 workers and joins them, waiting for thread 2;
// the workers meet at a barrier (where thread 5, which waits most, has the
// least work), take a lock in queue and wait on a condition variable in
// it, and update counters atomically. The threads' time is 7,500,000
// cycles; the barrier's waits make 20% of it, the lock's 10.7%.
func testThreadProfile() *profile.Profile {
	p := testMultiProfile()
	p.Interleave, p.Quantum = "clock", 100
	p.Threads = []profile.ThreadStats{
		{Thread: 1, Processor: 0, Events: 100000, ComputeCycles: 100000, StallCycles: 50000, SyncCycles: 1450000, Start: 0, End: 1600000},
		{Thread: 2, Processor: 1, Events: 400000, ComputeCycles: 400000, StallCycles: 600000, SyncCycles: 500000, Start: 50000, End: 1550000},
		{Thread: 3, Processor: 2, Events: 400000, ComputeCycles: 400000, StallCycles: 700000, SyncCycles: 300000, Start: 50000, End: 1450000},
		{Thread: 4, Processor: 3, Events: 400000, ComputeCycles: 400000, StallCycles: 500000, SyncCycles: 600000, Start: 50000, End: 1550000},
		{Thread: 5, Processor: 0, Events: 200000, ComputeCycles: 200000, StallCycles: 300000, SyncCycles: 1000000, Start: 50000, End: 1550000},
	}
	p.Sync = []profile.SyncObject{
		{Name: "thread 3", Addr: 3, Kind: "join", Operations: 1},
		{Name: "barrier", Addr: 0x601040, Kind: "barrier", Operations: 400, Waits: 300, WaitCycles: 1500000},
		{Name: "queue+64", Addr: 0x4b2040, Kind: "lock", Operations: 2000, Waits: 640, WaitCycles: 800000},
		{Name: "thread 2", Addr: 2, Kind: "join", Operations: 1, Waits: 1, WaitCycles: 1450000},
		{Name: "counters", Addr: 0x601080, Kind: "atomic", Operations: 12000},
		{Name: "queue+128", Addr: 0x4b2080, Kind: "condition", Operations: 50, Waits: 20, WaitCycles: 100000},
		{Name: "thread 4", Addr: 4, Kind: "join", Operations: 1},
		{Name: "thread 5", Addr: 5, Kind: "join", Operations: 1},
	}
	profile.SortSync(p.Sync)
	waits := map[string]uint64{"main": 1450000, "work": 1500000, "produce": 400000, "consume": 500000}
	for i := range p.Functions {
		f := &p.Functions[i]
		f.SyncCycles = waits[f.Name]
		f.Inclusive.SyncCycles = f.SyncCycles
		if f.Name == "main" {
			f.Inclusive.SyncCycles = 3850000
		}
	}
	return p
}
