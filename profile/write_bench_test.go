package profile

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// largeWhere returns a profile shaped like a real one (of a Python run):
// n references and pairs, n/6 lines, n/18 functions and n/40 objects,
// each entry with counters at one to three caches, evictors or
// evicted-by tables, and strides.
func largeWhere(n int) *Profile {
	rng := rand.New(rand.NewPCG(5, 6))
	p := sample(1 << 30)
	p.Caches = append(p.Caches, CacheStats{Name: "L3", Level: 3})
	p.Options.Where = true
	var objects []string
	for i := range n/40 + 1 {
		objects = append(objects, fmt.Sprintf("heap@_PyObject_GC_New%d", i))
	}
	object := func() string { return objects[rng.IntN(len(objects))] }
	stats := func(refs bool) *Stats {
		acc := rng.Uint64N(1 << rng.IntN(20))
		miss := rng.Uint64N(acc + 1)
		hits := acc - miss
		s := &Stats{Accesses: acc, Hits: hits, Misses: miss, Reads: acc / 2, Writes: acc - acc/2, ReadMisses: miss / 2, WriteMisses: miss - miss/2,
			StallCycles: 40 * miss, Causes: Causes{Cold: miss / 3, Replacement: miss - miss/3}, TemporalHits: hits / 2, SpatialHits: hits - hits/2,
			UsedBytes: 40 * miss, FetchedBytes: 64 * miss}
		s.SpatialUse = ratio(s.UsedBytes, s.FetchedBytes)
		if refs {
			for range rng.IntN(4) {
				s.Evictors = append(s.Evictors, RefEvictor{Reference: fmt.Sprintf("%#x", 0x4f0000+rng.IntN(1<<16)), Object: object(), Count: rng.Uint64N(2000)})
			}
			return s
		}
		for range rng.IntN(3) {
			AddCounts(&s.EvictedBy, map[string]uint64{object(): rng.Uint64N(5000)})
		}
		return s
	}
	levels := func(refs bool) map[string]*Stats { // (as in a real profile, most entries miss in L1 alone)
		l := map[string]*Stats{"L1": stats(refs)}
		if rng.IntN(2) == 0 {
			l["L2"] = stats(refs)
			if rng.IntN(2) == 0 {
				l["L3"] = stats(refs)
			}
		}
		return l
	}
	strides := func() *Strides {
		return &Strides{Samples: rng.Uint64N(50000), Top: []Stride{{Bytes: 64, Count: 1017}, {Bytes: -8, Count: 184}, {Bytes: 80, Count: 68}, {Bytes: 1, Count: 37}}}
	}
	function := func(i int) string { return fmt.Sprintf("python3.11+0x%x", 0x4fba20+i*16) }
	functions := n/18 + 1
	for i := range functions {
		p.Functions = append(p.Functions, Function{Name: function(i), File: "Objects/object.c", Line: i, Module: "python3.11", Entry: uint64(0x4fba20 + i*16),
			Instructions: rng.Uint64N(1 << 30), ComputeCycles: rng.Uint64N(1 << 30), Levels: levels(false),
			Inclusive: &Inclusive{Instructions: rng.Uint64N(1 << 30), ComputeCycles: rng.Uint64N(1 << 30), Levels: levels(false)}})
	}
	for i, name := range objects {
		callPath := []string{"_PyObject_GC_New Objects/gcmodule.c:2300", "PyType_GenericAlloc Objects/typeobject.c:1153"}
		p.Objects = append(p.Objects, Object{Name: name, FullName: name + ".full", Kind: "heap", AllocSite: "Objects/gcmodule.c:2300",
			CallPath: callPath, Size: uint64(64 * i), Blocks: uint64(i), Levels: levels(false)})
	}
	for range n {
		p.Pairs = append(p.Pairs, Pair{Function: function(rng.IntN(functions)), Object: object(), Strides: strides(), Levels: levels(false)})
	}
	for i := range n / 6 {
		p.Lines = append(p.Lines, Line{File: "Python/ceval.c", Line: i, Function: function(i % functions), Levels: levels(false)})
	}
	for i := range n {
		p.References = append(p.References, Reference{PC: uint64(0x4fba20 + 4*i), File: "Python/ceval.c", Line: i / 3, Position: i % 3,
			Function: function(i % functions), Object: object(), Kind: "read", Strides: strides(), Levels: levels(true)})
	}
	if err := p.SetFocus("L1"); err != nil {
		panic(err)
	}
	return p
}

// benchmarkWrite measures writing a large profile (largeWhere, 30,000
// references and pairs, about 1.5 KB each) with write.
func benchmarkWrite(b *testing.B, write func(p *Profile, buf *bytes.Buffer) error) {
	p := largeWhere(30000)
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if err := write(p, &buf); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len()), "bytes")
}

func BenchmarkWriteCompressed(b *testing.B) {
	benchmarkWrite(b, func(p *Profile, buf *bytes.Buffer) error { return p.WriteCompressed(buf, Zstd) })
}

func BenchmarkWrite(b *testing.B) {
	benchmarkWrite(b, func(p *Profile, buf *bytes.Buffer) error { return p.Write(buf) })
}

// BenchmarkReadCompressed measures reading the profile of benchmarkWrite
// written by WriteCompressed.
func BenchmarkReadCompressed(b *testing.B) {
	var buf bytes.Buffer
	if err := largeWhere(30000).WriteCompressed(&buf, Zstd); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Read(bytes.NewReader(buf.Bytes())); err != nil {
			b.Fatal(err)
		}
	}
}
