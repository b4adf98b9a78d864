package sim_test

import (
	"context"
	"strings"
	"testing"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/sim"
	"github.com/memspy/memspy/trace"
)

// TestTracerNotesDisagree checks that noted accesses the engine's copy of
// the first caches cannot follow (a victim it does not hold, a write-back
// of a line it does not hold, a fill of a full set without a victim) end
// the run with an error that says so, rather than a panic or a silently
// wrong count.
func TestTracerNotesDisagree(t *testing.T) {
	l1d := with(hc("L1D", 1, 1, 1, 64, machine.LRU), func(c *machine.Cache) { c.Holds = machine.Data })
	m := mach(l1d, hc("L2", 2, 4, 2, 64, machine.LRU))
	blk := &trace.Block{Kind: []trace.Kind{trace.Read}, Size: []uint32{8}, PC: []uint64{0x401000},
		Exits: []trace.BlockExit{{Events: 1, Reads: 1}}}
	miss := func(a, victim uint64) trace.L1Access {
		x := trace.L1Access{Addr: a, Size: 8, Kind: trace.Read}
		if victim != 0 {
			x.Victim, x.Flags = victim, trace.L1Victim
		}
		return x
	}
	for _, c := range []struct {
		name    string
		accs    [][]trace.L1Access
		flushes []uint64 // write-backs of the end-of-trace flush, after the executions
		want    string
	}{
		{"victim not held", [][]trace.L1Access{{miss(0x1000, 0x9000)}}, nil, "evicted line 0x9000"},
		{"full set", [][]trace.L1Access{{miss(0x1000, 0)}, {miss(0x2000, 0)}}, nil, "filled a full set with line 0x2000"},
		{"write-back not held", [][]trace.L1Access{{miss(0x1000, 0)}}, []uint64{0x5000}, "wrote back line 0x5000"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, err := sim.New(m, sim.Options{Attribute: true, MissOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			if _, _, ok := h.TracerNotes(false); !ok {
				t.Fatal("TracerNotes refuses the machine")
			}
			b := trace.NewBatch(16)
			for _, acc := range c.accs {
				b.AppendExec(blk, 0, 1, acc)
			}
			for _, a := range c.flushes {
				b.Append(trace.BelowWrite, a, 64, 0, 1)
			}
			err = sim.Run(context.Background(), h, sim.OnceReader(b), nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Run = %v, want an error about %q", err, c.want)
			}
		})
	}
}
