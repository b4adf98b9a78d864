package sim_test

import (
	"math/rand/v2"
	"testing"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/sim"
	"github.com/memspy/memspy/trace"
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

// listWalk returns the data references of a walk of a linked list of n
// 64-byte nodes in shuffled order: a read of each node's value, then of its
// next pointer, in the same line.
func listWalk(n int) []*trace.Batch {
	rng := rand.New(rand.NewPCG(3, 4))
	order := rng.Perm(n)
	var out []*trace.Batch
	b := trace.NewBatch(trace.BatchSize)
	for _, i := range order {
		node := 0x40000000 + 64*uint64(i)
		b.Append(trace.Read, node+8, 8, 0, 0)
		b.Append(trace.Read, node, 8, 0, 0)
		if b.Len() == b.Cap() {
			out = append(out, b)
			b = trace.NewBatch(trace.BatchSize)
		}
	}
	return append(out, b)
}

// BenchmarkMissPath runs data streams through cachegrind's hierarchy
// (32 KiB 8-way L1D, 8 MiB 16-way LL), the engine's slow path at its
// busiest: the naive matrix multiply's (one L1D miss every 8 B reads, all
// hits in LL, sets in order) and a linked-list walk's (a miss of both
// caches per node, in random sets: the host's caches miss the simulated
// sets).
func BenchmarkMissPath(b *testing.B) {
	for _, tc := range []struct {
		name    string
		batches []*trace.Batch
	}{{"matmul", matmulRows(512, 4)}, {"listwalk", listWalk(1 << 20)}} {
		b.Run(tc.name, func(b *testing.B) { benchMissPath(b, tc.batches) })
	}
}

func benchMissPath(b *testing.B, batches []*trace.Batch) {
	m := &machine.Machine{Name: "cg", MemoryLatency: 100, Caches: []machine.Cache{
		{Name: "L1D", Level: 1, Size: 32 << 10, Sets: 64, Assoc: 8, Line: 64, Replacement: machine.LRU, WriteBack: true, WriteAllocate: true, Holds: machine.Data, Inclusion: machine.NonInclusive, Latency: 1},
		{Name: "LL", Level: 2, Size: 8 << 20, Sets: 8192, Assoc: 16, Line: 64, Replacement: machine.LRU, WriteBack: true, WriteAllocate: true, Holds: machine.Unified, Inclusion: machine.NonInclusive, Latency: 10},
	}}
	h, err := sim.New(m, sim.Options{})
	if err != nil {
		b.Fatal(err)
	}
	events := processBatches(b, h, batches)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
}
