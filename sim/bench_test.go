package sim_test

import (
	"math/rand/v2"
	"testing"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/sim"
	"github.com/memspy/memspy/trace"
)

// benchMachine is the hierarchy of `make bench`: split 32KB 8-way L1s and a
// 256KB 8-way L2, 64 B lines.
func benchMachine() *machine.Machine {
	c := func(name string, level int, size int64, holds machine.Holds) machine.Cache {
		return machine.Cache{Name: name, Level: level, Size: size, Sets: int(size / 64 / 8), Assoc: 8, Line: 64,
			Replacement: machine.LRU, WriteBack: true, WriteAllocate: true, Holds: holds, Inclusion: machine.NonInclusive, Latency: 1}
	}
	return &machine.Machine{Name: "bench", MemoryLatency: 100, Caches: []machine.Cache{
		c("L1I", 1, 32<<10, machine.Instructions), c("L1D", 1, 32<<10, machine.Data), c("L2", 2, 256<<10, machine.Unified),
	}}
}

// instructionHeavy returns batches shaped like mat_20M: 92% sequential
// instruction fetches in loops, 8% data reads over a few arrays.
func instructionHeavy(n int) []*trace.Batch {
	rng := rand.New(rand.NewPCG(1, 2))
	var out []*trace.Batch
	b := trace.NewBatch(trace.BatchSize)
	pc := uint64(0x77ad0)
	for i := 0; i < n; i++ {
		if rng.IntN(100) < 8 {
			b.Append(trace.Read, 0x10000000+uint64(rng.IntN(1<<20))&^7, 4, 0, 0)
		} else {
			b.Append(trace.IFetch, pc, 4, 0, 0)
			pc += 4
			if rng.IntN(40) == 0 {
				pc = 0x77ad0 + uint64(rng.IntN(4096))*4
			}
		}
		if b.Len() == b.Cap() {
			out = append(out, b)
			b = trace.NewBatch(trace.BatchSize)
		}
	}
	return out
}

func BenchmarkProcess(b *testing.B) {
	batches := instructionHeavy(1 << 22)
	for _, classify := range []bool{false, true} {
		name := "plain"
		if classify {
			name = "3c"
		}
		b.Run(name, func(b *testing.B) {
			h, err := sim.New(benchMachine(), sim.Options{Classify: classify})
			if err != nil {
				b.Fatal(err)
			}
			events := processBatches(b, h, batches)
			b.ReportMetric(float64(events)/b.Elapsed().Seconds()/1e6, "Mevents/s")
		})
	}
}

// processBatches resets the timer and has h process b.N batches, in turn
// from batches, and returns the number of events.
func processBatches(b *testing.B, h *sim.Hierarchy, batches []*trace.Batch) int {
	b.ResetTimer()
	events := 0
	for i := 0; i < b.N; i++ {
		bt := batches[i%len(batches)]
		h.Process(bt)
		events += bt.Len()
	}
	return events
}
