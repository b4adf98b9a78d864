package sim_test

import (
	"testing"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/sim"
	"github.com/memspy/memspy/trace"
)

// BenchmarkWhere is BenchmarkMissPath attributing (--where): the hit path
// (matmul rows), and a random list walk whose every reference misses and
// evicts (byte use and line use counted at each eviction); the timeline
// takes its points all along.
func BenchmarkWhere(b *testing.B) {
	for _, tc := range []struct {
		name    string
		batches []*trace.Batch
	}{{"matmul", matmulRows(512, 4)}, {"listwalk", listWalk(1 << 20)}} {
		b.Run(tc.name, func(b *testing.B) {
			m := &machine.Machine{Name: "cg", MemoryLatency: 100, Caches: []machine.Cache{
				{Name: "L1D", Level: 1, Size: 32 << 10, Sets: 64, Assoc: 8, Line: 64, Replacement: machine.LRU, WriteBack: true, WriteAllocate: true, Holds: machine.Data, Inclusion: machine.NonInclusive, Latency: 1},
				{Name: "LL", Level: 2, Size: 8 << 20, Sets: 8192, Assoc: 16, Line: 64, Replacement: machine.LRU, WriteBack: true, WriteAllocate: true, Holds: machine.Unified, Inclusion: machine.NonInclusive, Latency: 10},
			}}
			h, err := sim.New(m, sim.Options{Attribute: true})
			if err != nil {
				b.Fatal(err)
			}
			events := processBatches(b, h, tc.batches)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
		})
	}
}
