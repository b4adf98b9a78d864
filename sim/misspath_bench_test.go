package sim_test

import (
	"testing"

	"memspy/machine"
	"memspy/sim"
	"memspy/trace"
)

// matmulRows returns the data references of rows i < rows of the naive
// i-k-j multiply of n×n doubles: for each k a read of A[i][k], then per j
// a read of B[k][j] and a read and a write of C[i][j].
func matmulRows(n, rows int) []*trace.Batch {
	const a0, b0, c0 = 0x10000000, 0x20000000, 0x30000000
	var out []*trace.Batch
	b := trace.NewBatch(trace.BatchSize)
	add := func(k trace.Kind, addr uint64) {
		b.Append(k, addr, 8, 0, 0)
		if b.Len() == b.Cap() {
			out = append(out, b)
			b = trace.NewBatch(trace.BatchSize)
		}
	}
	for i := range rows {
		for k := range n {
			add(trace.Read, a0+uint64(8*(i*n+k)))
			for j := range n {
				add(trace.Read, b0+uint64(8*(k*n+j)))
				add(trace.Read, c0+uint64(8*(i*n+j)))
				add(trace.Write, c0+uint64(8*(i*n+j)))
			}
		}
	}
	return append(out, b)
}

// BenchmarkMissPath runs the naive matrix multiply's data stream through
// cachegrind's hierarchy (32 KiB 8-way L1D, 8 MiB 16-way LL): one L1D miss
// every 8 B reads, all hits in LL, the engine's slow path at its busiest.
func BenchmarkMissPath(b *testing.B) {
	batches := matmulRows(512, 4)
	m := &machine.Machine{Name: "cg", MemoryLatency: 100, Caches: []machine.Cache{
		{Name: "L1D", Level: 1, Size: 32 << 10, Sets: 64, Assoc: 8, Line: 64, Replacement: machine.LRU, WriteBack: true, WriteAllocate: true, Holds: machine.Data, Inclusion: machine.NonInclusive, Latency: 1},
		{Name: "LL", Level: 2, Size: 8 << 20, Sets: 8192, Assoc: 16, Line: 64, Replacement: machine.LRU, WriteBack: true, WriteAllocate: true, Holds: machine.Unified, Inclusion: machine.NonInclusive, Latency: 10},
	}}
	h, err := sim.New(m, sim.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	events := 0
	for i := 0; i < b.N; i++ {
		bt := batches[i%len(batches)]
		h.Process(bt)
		events += bt.Len()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
}
