package web

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/profile"
)

// Latencies of the test machine: a miss in L1D waits for L2, a miss in L2
// for memory.
const (
	testL2Latency  = 10
	testMemLatency = 100
)

// testRef describes a reference of the test profile: its counters at L1D
// and L2 (l1, l2: accesses, misses; its misses at L1D split into cold,
// replacement and invalidation), and who evicted its lines at L1D.
type testRef struct {
	pc        uint64
	line      int // of testdata/mm.c; 0: no source line
	fn, obj   string
	kind      string
	acc, miss uint64 // at L1D
	cold      uint64
	inval     uint64 // of which false sharing: half
	l2miss    uint64
	evictedBy map[string]uint64
}

// testRefs: matmul's B interferes with itself and is evicted by C, A and
// many small objects; counters is shared falsely between two processors;
// 30 small procedures work00… each touch an object g00…, so that the
// page's bounds cut the lists; work00 × g00 has 6 references.
func testRefs() []testRef {
	many := map[string]uint64{"B": 50000, "C": 20000, "A": 5000}
	for i := range 10 {
		many[fmt.Sprintf("g%02d", i)] = uint64(10 + i)
	}
	rs := []testRef{
		{pc: 0x401140, line: 10, fn: "matmul", obj: "B", kind: "read", acc: 400000, miss: 80000, cold: 4000, l2miss: 6000, evictedBy: many},
		{pc: 0x401148, line: 10, fn: "matmul", obj: "B", kind: "read", acc: 100000, miss: 5000, cold: 100, l2miss: 200,
			evictedBy: map[string]uint64{"B": 4000}},
		{pc: 0x401100, line: 8, fn: "matmul", obj: "A", kind: "read", acc: 100000, miss: 10000, cold: 2000, l2miss: 2500,
			evictedBy: map[string]uint64{"A": 3000, "B": 5000}},
		{pc: 0x401150, line: 10, fn: "matmul", obj: "C", kind: "modify", acc: 400000, miss: 30000, cold: 2000, l2miss: 2000,
			evictedBy: map[string]uint64{"B": 28000}},
		{pc: 0x401200, line: 17, fn: "init", obj: "A", kind: "write", acc: 20000, miss: 2500, cold: 2500, l2miss: 2500},
		{pc: 0x401300, fn: "worker", obj: "counters", kind: "modify", acc: 30000, miss: 9000, cold: 2, inval: 8998, l2miss: 2},
	}
	for i := range 30 {
		for j := range 1 + 5*(i/29) { // (work29 × g29: 6 references)
			rs = append(rs, testRef{pc: 0x402000 + uint64(i)<<8 + uint64(j), fn: fmt.Sprintf("work%02d", i), obj: fmt.Sprintf("g%02d", i),
				kind: "read", acc: 100, miss: uint64(31 - i), cold: uint64(31 - i), l2miss: uint64(31 - i)})
		}
	}
	for i := range 30 { // objects g30… g59: no procedure of their own
		rs = append(rs, testRef{pc: 0x404000 + uint64(i), fn: "init", obj: fmt.Sprintf("g%02d", 30+i), kind: "read", acc: 10, miss: 1, cold: 1, l2miss: 1})
	}
	return rs
}

// testProfile builds the profile of testRefs on two processors with a
// private L1D and a shared L2: pairs, functions, objects and caches are
// the references' sums, with focus L1D; it has a process tree of two
// programs, two threads and a lock.
func testProfile(t testing.TB) *profile.Profile {
	src, err := filepath.Abs(filepath.Join("testdata", "mm.c"))
	if err != nil {
		t.Fatal(err)
	}
	m := &machine.Machine{Name: "test", MemoryLatency: testMemLatency, Processors: 2, Caches: []machine.Cache{
		{Name: "L1D", Level: 1, Size: 8 << 10, Sets: 32, Assoc: 4, Line: 64, Holds: machine.Data, Latency: 1, WriteBack: true, WriteAllocate: true},
		{Name: "L2", Level: 2, Size: 64 << 10, Sets: 128, Assoc: 8, Line: 64, Holds: machine.Unified, Latency: testL2Latency, Shared: true,
			WriteBack: true, WriteAllocate: true},
	}}
	p := &profile.Profile{Version: profile.Version, Tool: "memspy", Source: profile.Source{Name: "./mm", Format: "valgrind"},
		Machine: m, Options: profile.Options{Where: true}, Complete: true, Events: 2_000_000,
		Caches: []profile.CacheStats{{Name: "L1D", Level: 1, Causes: &profile.Causes{}}, {Name: "L2", Level: 2, Causes: &profile.Causes{}}}}
	fnAt, objAt, pairAt := map[string]int{}, map[string]int{}, map[[2]string]int{}
	addTo := func(levels map[string]*profile.Stats, r *profile.Reference) {
		for name, s := range r.Levels {
			if levels[name] == nil {
				levels[name] = &profile.Stats{}
			}
			levels[name].Add(s)
			levels[name].Evictors = nil
		}
	}
	for _, tr := range testRefs() {
		l1 := &profile.Stats{Accesses: tr.acc, Hits: tr.acc - tr.miss, Misses: tr.miss, StallCycles: tr.miss * testL2Latency,
			Causes: profile.Causes{Cold: tr.cold, Replacement: tr.miss - tr.cold - tr.inval, Invalidation: tr.inval,
				TrueSharing: tr.inval - tr.inval/2, FalseSharing: tr.inval / 2},
			TemporalHits: (tr.acc - tr.miss) / 2, SpatialHits: (tr.acc - tr.miss) - (tr.acc-tr.miss)/2,
			UsedBytes: tr.miss * 40, FetchedBytes: tr.miss * 64, EvictedBy: tr.evictedBy}
		if tr.kind == "read" {
			l1.Reads, l1.ReadMisses = tr.acc, tr.miss
		} else {
			l1.Writes, l1.WriteMisses = tr.acc, tr.miss
		}
		l1.SpatialUse = float64(l1.UsedBytes) / float64(max(1, l1.FetchedBytes))
		if tr.pc == 0x401140 { // (more evictors than the page lists)
			l1.Evictors = []profile.RefEvictor{{Reference: "0x401140", Object: "B", Count: 45000},
				{Reference: "0x401150", Object: "C", Count: 20000}, {Reference: "0x401100", Object: "A", Count: 5000},
				{Reference: "0x401148", Object: "B", Count: 4990}, {Reference: "0x401200", Object: "A", Count: 3},
				{Reference: profile.OtherEvictors, Count: 2}}
		}
		if tr.inval > 0 {
			l1.InvalidatedBy = []profile.Sharing{{Object: "counters", Processor: 1, Lines: tr.inval/2 + 1, FalseSharing: tr.inval / 4},
				{Object: "counters", Processor: 0, Lines: tr.inval/2 - 1, FalseSharing: tr.inval / 4}}
		}
		l2 := &profile.Stats{Accesses: tr.miss, Hits: tr.miss - tr.l2miss, Misses: tr.l2miss, StallCycles: tr.l2miss * testMemLatency,
			Causes:    profile.Causes{Cold: min(tr.cold, tr.l2miss), Replacement: tr.l2miss - min(tr.cold, tr.l2miss)},
			UsedBytes: tr.l2miss * 60, FetchedBytes: tr.l2miss * 64, SpatialUse: 60.0 / 64, TemporalHits: tr.miss - tr.l2miss}
		r := profile.Reference{PC: tr.pc, Line: tr.line, Function: tr.fn, Object: tr.obj, Kind: tr.kind,
			Levels: map[string]*profile.Stats{"L1D": l1, "L2": l2}}
		if tr.line > 0 {
			r.File = src
			r.Strides = &profile.Strides{Samples: tr.acc - 1, Top: []profile.Stride{{Bytes: 8, Count: tr.acc - 1}}}
		}
		p.References = append(p.References, r)
		for _, c := range []*profile.CacheStats{&p.Caches[0], &p.Caches[1]} {
			s := r.Levels[c.Name]
			c.Accesses += s.Accesses
			c.Misses += s.Misses
			c.Reads += s.Reads
			c.Writes += s.Writes
			c.ReadMisses += s.ReadMisses
			c.WriteMisses += s.WriteMisses
			c.Causes.Add(s.Causes)
			c.Evictions += s.Causes.Replacement
		}
		p.Caches[0].Invalidations += tr.inval
		p.Caches[0].TrueSharingMisses += l1.Causes.TrueSharing
		p.Caches[0].FalseSharingMisses += l1.Causes.FalseSharing
		k := [2]string{tr.fn, tr.obj}
		if _, ok := pairAt[k]; !ok {
			pairAt[k] = len(p.Pairs)
			p.Pairs = append(p.Pairs, profile.Pair{Function: tr.fn, Object: tr.obj, Levels: map[string]*profile.Stats{}})
		}
		pr := &p.Pairs[pairAt[k]]
		addTo(pr.Levels, &r)
		pr.Strides = pr.Strides.Merged(r.Strides)
		if _, ok := objAt[tr.obj]; !ok {
			objAt[tr.obj] = len(p.Objects)
			o := profile.Object{Name: tr.obj, FullName: "main." + tr.obj, Kind: "global", Size: 4096, Levels: map[string]*profile.Stats{}}
			if len(tr.obj) == 1 {
				o.Kind, o.AllocSite, o.Blocks, o.Size = "heap", "mm.c:30", 1, 8<<20
				o.CallPath = []string{"main mm.c:30"}
			}
			p.Objects = append(p.Objects, o)
		}
		addTo(p.Objects[objAt[tr.obj]].Levels, &r)
		if _, ok := fnAt[tr.fn]; !ok {
			fnAt[tr.fn] = len(p.Functions)
			f := profile.Function{Name: tr.fn, Module: "./mm", Levels: map[string]*profile.Stats{}}
			if tr.fn == "matmul" || tr.fn == "init" {
				f.File, f.Line = src, 3
			}
			p.Functions = append(p.Functions, f)
		}
		f := &p.Functions[fnAt[tr.fn]]
		addTo(f.Levels, &r)
		f.Instructions += 3 * tr.acc
		f.ComputeCycles += 3 * tr.acc
	}
	p.Functions[fnAt["worker"]].SyncCycles = 12345
	co := &p.Objects[objAt["counters"]]
	co.SharingWrites = []profile.SharingWrite{{Processor: 0, Offset: 0, Size: 8, Copies: 4500, FalseSharing: 2250},
		{Processor: 1, Offset: 8, Size: 8, Copies: 4498, FalseSharing: 2249}}
	p.Processors = []profile.ProcessorStats{{Processor: 0, Threads: []uint32{100}, Caches: []profile.CacheStats{{Name: "L1D", Level: 1,
		Accesses: 20000, Misses: 5000, Invalidations: 4499}}, Upgrades: 7, InvalidationsSent: 4500, InvalidationsReceived: 4499},
		{Processor: 1, Threads: []uint32{101}, Caches: []profile.CacheStats{{Name: "L1D", Level: 1, Accesses: 10000, Misses: 4000,
			Invalidations: 4499}}, Upgrades: 3, InvalidationsSent: 4498, InvalidationsReceived: 4499}}
	p.Threads = []profile.ThreadStats{{Thread: 100, Processor: 0, Events: 1_500_000, ComputeCycles: 1_500_000, StallCycles: 2_000_000,
		SyncCycles: 12345, Start: 0, End: 3_512_345}, {Thread: 101, Processor: 1, Events: 500_000, ComputeCycles: 500_000, StallCycles: 90_000,
		Start: 1000, End: 591_000}}
	p.Sync = []profile.SyncObject{{Name: "lock", Addr: 0x601040, Kind: "lock", Operations: 200, Waits: 20, WaitCycles: 12345}}
	sum := func(scale uint64) *profile.Profile {
		q := &profile.Profile{Version: profile.Version, Tool: "memspy", Events: p.Events / scale}
		for _, c := range p.Caches {
			q.Caches = append(q.Caches, profile.CacheStats{Name: c.Name, Level: c.Level, Accesses: c.Accesses / scale, Misses: c.Misses / scale})
		}
		return q
	}
	p.Processes = []profile.Process{{Pid: 4000, Parent: 1, Command: "sh -c ./mm", Exit: "exec", Exec: "./mm", Profile: sum(100)},
		{Pid: 4000, Parent: 1, Command: "./mm 512", Exit: "exit code 0", Profile: sum(1)}}
	addLineUse(p)
	p.Timeline = testTimeline(p)
	p.CallTree = testCallTree(p)
	if err := p.SetFocus("L1D"); err != nil {
		t.Fatal(err)
	}
	return p
}

// addLineUse gives every object the line use its used bytes say: at L1D,
// 40 bytes of each line (B's at offsets 0-7, 16-23, 32-39 and 48-63, the
// others' at 0-39), at L2, 60 (0-59).
func addLineUse(p *profile.Profile) {
	for i := range p.Objects {
		o := &p.Objects[i]
		o.LineUse = map[string][]uint64{}
		for name, used := range map[string]int{"L1D": 40, "L2": 60} {
			lines := o.Levels[name].FetchedBytes / 64
			use := make([]uint64, 64)
			for off := range use {
				if o.Name == "B" && name == "L1D" && off < 48 && off/8%2 == 0 || o.Name == "B" && name == "L1D" && off >= 48 ||
					(o.Name != "B" || name != "L1D") && off < used {
					use[off] = lines
				}
			}
			o.LineUse[name] = use
		}
	}
}

// testTimeline is a timeline of p's events and caches' counters in 8
// points of 250,000 events: the accesses evenly, the misses one part in
// each of the first four and three parts in each of the last four (the
// rest in the last), with a dump between the two halves.
func testTimeline(p *profile.Profile) *profile.Timeline {
	var names []string
	for _, c := range p.Caches {
		names = append(names, c.Name)
	}
	tl := profile.NewTimeline(names, p.Events/8, 0)
	var acc, miss [2]uint64
	for k := range uint64(8) {
		counts := make([]profile.TimelineCounts, len(p.Caches))
		for i, c := range p.Caches {
			a, m := c.Accesses/8, c.Misses/16*(1+k/4*2)
			if k == 7 {
				a, m = c.Accesses-acc[i], c.Misses-miss[i]
			}
			acc[i], miss[i] = acc[i]+a, miss[i]+m
			counts[i] = profile.TimelineCounts{Accesses: a, Misses: m, ReadMisses: m}
		}
		tl.Append((k+1)*p.Events/8, p.Events/8, p.Events/16, counts)
	}
	tl.Mark("dump", "phase 2", p.Events/2)
	// Each processor's L1D: processor 0's misses are two thirds of each
	// point's, processor 1's the rest, with half the accesses each.
	c := tl.Caches[0]
	for n := range 2 {
		pc := profile.TimelineCache{Name: "L1D"}
		for k := range tl.Len() {
			m := c.Misses[k] * 2 / 3
			if n == 1 {
				m = c.Misses[k] - m
			}
			a := c.Accesses[k]/2 + uint64(n)*(c.Accesses[k]%2)
			pc.Accesses, pc.Misses = append(pc.Accesses, a), append(pc.Misses, m)
			pc.IFetchMisses, pc.ReadMisses, pc.WriteMisses = append(pc.IFetchMisses, 0), append(pc.ReadMisses, m), append(pc.WriteMisses, 0)
		}
		tl.Processors = append(tl.Processors, profile.TimelineProcessor{Processor: n, Caches: []profile.TimelineCache{pc}})
	}
	return tl
}

// testCallTree is a call tree of p's functions: main at the top (its own
// 1,000 instructions) calls init and matmul, matmul calls worker twice;
// each function's node has its counters.
func testCallTree(p *profile.Profile) *profile.CallTree {
	t := &profile.CallTree{Nodes: []profile.CallNode{{Function: "main", Caller: -1, Instructions: 1000}}}
	callers := map[string]int32{"init": 0, "matmul": 0, "worker": -1}
	for _, f := range p.Functions {
		c, ok := callers[f.Name]
		if !ok {
			continue
		}
		if c < 0 {
			c = callers["matmul"]
		}
		callers[f.Name] = int32(len(t.Nodes))
		t.Nodes = append(t.Nodes, profile.CallNode{Function: f.Name, Caller: c, Calls: 2, Instructions: f.Instructions,
			SyncCycles: f.SyncCycles, Levels: f.Levels})
	}
	return t
}
