package sim_test

// The minimal traces of issue 26, one per rule of docs/semantics.md where
// memspy used to differ from Dinero IV, with the numbers Dinero IV d4-7
// (built for 64-bit addresses) reports for them: demand fetches and misses
// by kind (misc references apart from reads), the 3C split, and the bytes
// from and to the level below ("Bytes From Memory", "Bytes To Memory" of
// each cache). Both the reference model and the engine must give them.
// scripts/dinero-compare.sh compares the two simulators at large.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/profile"
	"github.com/memspy/memspy/sim"
	"github.com/memspy/memspy/trace"
)

// dineroCounts are the numbers Dinero IV reports for one cache.
type dineroCounts struct {
	Fetches, IFetches, Reads, Writes, Misc                    uint64
	Misses, IFetchMisses, ReadMisses, WriteMisses, MiscMisses uint64
	Compulsory, Capacity, Conflict                            uint64
	BytesFromBelow, BytesToBelow                              uint64
}

func dineroView(caches []profile.CacheStats) []dineroCounts {
	var out []dineroCounts
	for _, c := range caches {
		out = append(out, dineroCounts{
			Fetches: c.Accesses, IFetches: c.IFetches, Reads: c.Reads, Writes: c.Writes, Misc: c.Misc,
			Misses: c.Misses, IFetchMisses: c.IFetchMisses, ReadMisses: c.ReadMisses, WriteMisses: c.WriteMisses, MiscMisses: c.MiscMisses,
			Compulsory: c.Compulsory, Capacity: c.Capacity, Conflict: c.Conflict,
			BytesFromBelow: c.BytesFromBelow, BytesToBelow: c.BytesToBelow,
		})
	}
	return out
}

// dm returns a direct-mapped unified cache of size bytes.
func dm(name string, level, size, line int) machine.Cache {
	return hc(name, level, size/line, 1, line, machine.LRU)
}

// checkDinero runs events on m with the reference model and the engine and
// compares both with Dinero's counts.
func checkDinero(t *testing.T, m *machine.Machine, classify bool, events []refEvent, want []dineroCounts) {
	t.Helper()
	if d := cmp.Diff(want, dineroView(runReference(m, classify, false, events).Caches)); d != "" {
		t.Errorf("reference model (-dinero +reference):\n%s", d)
	}
	for _, batchSeed := range []uint64{0, 1} {
		got := runEngine(t, m, sim.Options{Classify: classify}, events, batchSeed)
		if d := cmp.Diff(want, dineroView(got.Caches)); d != "" {
			t.Errorf("engine, batches from seed %d (-dinero +engine):\n%s", batchSeed, d)
		}
	}
}

// Rule A: a write of a whole line allocates without a fetch. xdin `w 0 4`
// on a cache of 4-byte lines: nothing from below, the flush writes 4 bytes.
func TestDineroWholeLineWrite(t *testing.T) {
	checkDinero(t, mach(dm("L1", 1, 16, 4)), false, []refEvent{wr(0, 4)}, []dineroCounts{
		{Fetches: 1, Writes: 1, Misses: 1, WriteMisses: 1, BytesToBelow: 4},
	})
}

// Rule A at L2: din `1 0`, `0 10`, `0 20` on a 32-byte direct-mapped L1 of
// 16-byte lines over a one-line L2 of 16 bytes. The write-back of line 0
// when 0x20 replaces it is a whole-line write at L2: no fetch (48 bytes
// from below, not 64).
func TestDineroWholeLineWriteBack(t *testing.T) {
	checkDinero(t, mach(dm("L1", 1, 32, 16), dm("L2", 2, 16, 16)), false,
		[]refEvent{wr(0, 4), rd(0x10, 4), rd(0x20, 4)}, []dineroCounts{
			{Fetches: 3, Reads: 2, Writes: 1, Misses: 3, ReadMisses: 2, WriteMisses: 1, BytesFromBelow: 48, BytesToBelow: 16},
			{Fetches: 4, Reads: 3, Writes: 1, Misses: 4, ReadMisses: 3, WriteMisses: 1, BytesFromBelow: 48, BytesToBelow: 16},
		})
}

// Rule B: the fetch goes below before the dirty victim's write-back. din
// `1 0`, `0 20`, L1 one 16-byte line, L2 one 32-byte line: L1's fetch of
// 0x20 misses in L2 (evicting line 0), then L1's write-back of 0 misses
// there too (a write miss, which fetches: 16 of 32 bytes).
func TestDineroFetchBeforeWriteBack(t *testing.T) {
	checkDinero(t, mach(dm("L1", 1, 16, 16), dm("L2", 2, 32, 32)), false,
		[]refEvent{wr(0, 4), rd(0x20, 4)}, []dineroCounts{
			{Fetches: 2, Reads: 1, Writes: 1, Misses: 2, ReadMisses: 1, WriteMisses: 1, BytesFromBelow: 32, BytesToBelow: 16},
			{Fetches: 3, Reads: 2, Writes: 1, Misses: 3, ReadMisses: 2, WriteMisses: 1, BytesFromBelow: 96, BytesToBelow: 32},
		})
}

// Rule D: invalidating the whole cache forgets the lines seen: the second
// read of 0 is compulsory again.
func TestDineroInvalidateForgetsSeen(t *testing.T) {
	checkDinero(t, mach(dm("L1", 1, 16, 16)), true,
		[]refEvent{rd(0, 4), inv(0, 0), rd(0, 4)}, []dineroCounts{
			{Fetches: 2, Reads: 2, Misses: 2, ReadMisses: 2, Compulsory: 2, BytesFromBelow: 32},
		})
}

// Rule E: the final flush, set by set from the highest. xdin `w 0 4`,
// `w 30 4`, L1 32 bytes of 16-byte lines, direct-mapped, over a one-line
// L2 of 32 bytes: L1 flushes 0x30 (set 1) first, a write miss in L2 that
// fetches line 0x20, then 0 (set 0), which evicts it: 3 misses, not 4.
func TestDineroFlushOrder(t *testing.T) {
	checkDinero(t, mach(dm("L1", 1, 32, 16), dm("L2", 2, 32, 32)), false,
		[]refEvent{wr(0, 4), wr(0x30, 4)}, []dineroCounts{
			{Fetches: 2, Writes: 2, Misses: 2, WriteMisses: 2, BytesFromBelow: 32, BytesToBelow: 32},
			{Fetches: 4, Reads: 2, Writes: 2, Misses: 3, ReadMisses: 2, WriteMisses: 1, BytesFromBelow: 96, BytesToBelow: 64},
		})
}

// Rule E within a set: from the least recently used (LRU) or the oldest
// fill (FIFO). xdin `w 0 4`, `w 40 4`, `r 0 4` on one 2-way set of 16-byte
// lines over a one-line L2 of 64 bytes, which holds 0x40's line after the
// fills. LRU flushes 0x40 first (an L2 hit), then 0 (a write miss that
// fetches and evicts 0x40's line, dirty): 3 L2 misses. FIFO flushes 0
// first, then 0x40: 4.
func TestDineroFlushOrderWithinSet(t *testing.T) {
	for _, tc := range []struct {
		rep             machine.Replacement
		misses, wmisses uint64
	}{{machine.LRU, 3, 1}, {machine.FIFO, 4, 2}} {
		t.Run(string(tc.rep), func(t *testing.T) {
			m := mach(hc("L1", 1, 1, 2, 16, tc.rep), dm("L2", 2, 64, 64))
			checkDinero(t, m, false, []refEvent{wr(0, 4), wr(0x40, 4), rd(0, 4)}, []dineroCounts{
				{Fetches: 3, Reads: 1, Writes: 2, Misses: 2, WriteMisses: 2, BytesFromBelow: 32, BytesToBelow: 32},
				{Fetches: 4, Reads: 2, Writes: 2, Misses: tc.misses, ReadMisses: 2, WriteMisses: tc.wmisses,
					BytesFromBelow: 64 * tc.misses, BytesToBelow: 128},
			})
		})
	}
}

// Rule F: din label 5 invalidates the block holding its address only.
// din `0 0`, `0 100`, `5 0`, `0 100` on a 2-way cache: 0x100 stays, 2 misses.
func TestDineroInvalidateOneBlock(t *testing.T) {
	checkDinero(t, mach(hc("L1", 1, 2, 2, 16, machine.LRU)), false,
		[]refEvent{rd(0, 4), rd(0x100, 4), inv(0, 4), rd(0x100, 4)}, []dineroCounts{
			{Fetches: 3, Reads: 3, Misses: 2, ReadMisses: 2, BytesFromBelow: 32},
		})
}

// Misc references (din label 3) simulate as reads but count apart, at
// every cache: a misc miss fetches as misc below, as in Dinero IV. din
// `3 0`, `3 4`, `1 20`, `3 8`, `0 30` on a 32-byte direct-mapped L1 of
// 16-byte lines over a 64-byte direct-mapped L2 of 32-byte lines, with 3C:
// L1 has misc misses at 0 (compulsory) and 8 (a conflict: 0x20 took the
// set, and goes back dirty), a misc hit at 4; L2 sees the two misc fills
// (the first misses) besides the write's fill and the read's. The same
// trace with label 0 for label 3 counts the same in all, the misc counts
// as reads.
func TestDineroMisc(t *testing.T) {
	m := mach(dm("L1", 1, 32, 16), dm("L2", 2, 64, 32))
	misc := []refEvent{msc(0, 4), msc(4, 4), wr(0x20, 4), msc(8, 4), rd(0x30, 4)}
	checkDinero(t, m, true, misc, []dineroCounts{
		{Fetches: 5, Reads: 1, Writes: 1, Misc: 3, Misses: 4, ReadMisses: 1, WriteMisses: 1, MiscMisses: 2,
			Compulsory: 3, Conflict: 1, BytesFromBelow: 64, BytesToBelow: 16},
		{Fetches: 5, Reads: 2, Writes: 1, Misc: 2, Misses: 2, ReadMisses: 1, MiscMisses: 1,
			Compulsory: 2, BytesFromBelow: 64, BytesToBelow: 32},
	})
	reads := slices.Clone(misc)
	for i := range reads {
		if reads[i].Kind == trace.Misc {
			reads[i].Kind = trace.Read
		}
	}
	checkDinero(t, m, true, reads, []dineroCounts{
		{Fetches: 5, Reads: 4, Writes: 1, Misses: 4, ReadMisses: 3, WriteMisses: 1,
			Compulsory: 3, Conflict: 1, BytesFromBelow: 64, BytesToBelow: 16},
		{Fetches: 5, Reads: 4, Writes: 1, Misses: 2, ReadMisses: 2,
			Compulsory: 2, BytesFromBelow: 64, BytesToBelow: 32},
	})
	// Beyond Dinero's columns, everything else is the same too: the
	// memory traffic, evictions and write-backs, and the events (the misc
	// ones by their own name).
	a, b := runEngine(t, m, sim.Options{Classify: true}, misc, 0), runEngine(t, m, sim.Options{Classify: true}, reads, 0)
	for i := range a.Caches {
		c := &a.Caches[i]
		c.Reads, c.ReadMisses, c.Misc, c.MiscMisses = c.Reads+c.Misc, c.ReadMisses+c.MiscMisses, 0, 0
	}
	if d := cmp.Diff(b, a); d != "" {
		t.Errorf("misc references counted as reads differ from reads (-reads +misc):\n%s", d)
	}
}

// A din trace with misc records (label 3) gives the profile of the same
// trace with label 0 in their place but for the misc counters, which the
// caches' reads then leave out, and the events by kind: on split L1s over
// an L2, plain, with 3C and with the where and why (whose entries count
// misc references as reads), with copy-backs and invalidations between.
func TestMiscDinTrace(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 4))
	var misc, reads strings.Builder
	for range 20000 {
		label := []int{0, 0, 1, 2, 2, 3, 3}[rng.IntN(7)]
		if rng.IntN(500) == 0 {
			label = 4 + rng.IntN(2)
		}
		a := 0x10000 + rng.Uint64N(1<<14)
		fmt.Fprintf(&misc, "%d %x\n", label, a)
		if label == 3 {
			label = 0
		}
		fmt.Fprintf(&reads, "%d %x\n", label, a)
	}
	m := mach(with(hc("L1I", 1, 4, 2, 32, machine.LRU), func(c *machine.Cache) { c.Holds = machine.Instructions }),
		with(hc("L1D", 1, 4, 2, 32, machine.LRU), func(c *machine.Cache) { c.Holds = machine.Data }),
		hc("L2", 2, 16, 4, 64, machine.LRU))
	run := func(opt sim.Options, din string) *profile.Profile {
		h, err := sim.New(m, opt)
		if err != nil {
			t.Fatal(err)
		}
		r, err := trace.OpenReader(strings.NewReader(din), "t.din", "din", trace.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := sim.Run(context.Background(), h, r, nil); err != nil {
			t.Fatal(err)
		}
		h.Finish()
		return h.Profile()
	}
	for _, opt := range []sim.Options{{}, {Classify: true}, {Attribute: true}} {
		got, want := run(opt, misc.String()), run(opt, reads.String())
		if got.EventsByKind["misc"] == 0 || got.Caches[1].Misc == 0 || got.Caches[1].MiscMisses == 0 || got.Caches[2].Misc == 0 {
			t.Fatalf("%+v: no misc counted: %+v, %+v", opt, got.EventsByKind, got.Caches)
		}
		got.EventsByKind["read"] += got.EventsByKind["misc"]
		delete(got.EventsByKind, "misc")
		for i := range got.Caches {
			c := &got.Caches[i]
			c.Reads, c.ReadMisses, c.Misc, c.MiscMisses = c.Reads+c.Misc, c.ReadMisses+c.MiscMisses, 0, 0
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%+v: misc references counted as reads differ from reads (-reads +misc):\n%s", opt, d)
		}
	}
}

// The public mm32 trace on split 32 KiB 8-way L1s and a 256 KiB 8-way L2,
// 64-byte lines, with 3C: Dinero IV's report, cache by cache (L2 3,614
// misses; memspy used to count 3,621).
func TestDineroMM32(t *testing.T) {
	path := filepath.Join("..", "..", "shared", "traces", "mm32.din.gz")
	m := &machine.Machine{Name: "mm32", MemoryLatency: 100, Caches: []machine.Cache{
		with(hc("L1I", 1, 64, 8, 64, machine.LRU), func(c *machine.Cache) { c.Holds = machine.Instructions }),
		with(hc("L1D", 1, 64, 8, 64, machine.LRU), func(c *machine.Cache) { c.Holds = machine.Data }),
		hc("L2", 2, 512, 8, 64, machine.LRU),
	}}
	h, err := sim.New(m, sim.Options{Classify: true})
	if err != nil {
		t.Fatal(err)
	}
	runFile(t, h, path)
	want := []dineroCounts{
		{Fetches: 188971, IFetches: 188971, Misses: 198, IFetchMisses: 198, Compulsory: 198, BytesFromBelow: 12672},
		{Fetches: 76804, Reads: 70370, Writes: 6426, Misc: 8, Misses: 6812, ReadMisses: 6463, WriteMisses: 346, MiscMisses: 3,
			Compulsory: 394, Conflict: 6418, BytesFromBelow: 435968, BytesToBelow: 105472},
		{Fetches: 8658, IFetches: 198, Reads: 6809, Writes: 1648, Misc: 3, Misses: 3614, IFetchMisses: 198, ReadMisses: 3256, WriteMisses: 160,
			Compulsory: 589, Conflict: 3025, BytesFromBelow: 221056, BytesToBelow: 53248},
	}
	if d := cmp.Diff(want, dineroView(h.Profile().Caches)); d != "" {
		t.Errorf("(-dinero +engine):\n%s", d)
	}
}

// Dinero IV's 3C bookkeeping breaks for lines in the top 8 MiB of the
// address space; memspy's does not copy the bug. One 16-byte line: reads
// of the last line, the one before it, then the last again: two
// compulsory misses and a capacity miss (the fully associative twin of one
// line lost it too).
func TestTopOfAddressSpace3C(t *testing.T) {
	top := ^uint64(15)
	m, events := mach(dm("L1", 1, 16, 16)), []refEvent{rd(top, 4), rd(top-16, 4), rd(top, 4)}
	want := []dineroCounts{{Fetches: 3, Reads: 3, Misses: 3, ReadMisses: 3, Compulsory: 2, Capacity: 1, BytesFromBelow: 48}}
	if d := cmp.Diff(want, dineroView(runReference(m, true, false, events).Caches)); d != "" {
		t.Errorf("reference model (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want, dineroView(runEngine(t, m, sim.Options{Classify: true}, events, 0).Caches)); d != "" {
		t.Errorf("engine (-want +got):\n%s", d)
	}
}
