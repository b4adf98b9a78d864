package sim_test

// Small cases worked out by hand from docs/semantics.md. The expected
// numbers come from the reasoning in the comments, not from running either
// implementation; both the engine and the reference model must produce
// them.
//
// Conventions in the comments: lines are named by letters; with 16-byte
// lines A = 0x00 (line 0), B = 0x10 (line 1), C = 0x20 (line 2), D = 0x30,
// E = 0x40, and so on. "[X Y]" lists ways 0, 1, ... of a set; "*" marks a
// dirty line.

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/profile"
	"github.com/memspy/memspy/sim"
	"github.com/memspy/memspy/trace"
)

// hc returns a unified, non-inclusive, write-back, write-allocate cache.
func hc(name string, level, sets, assoc, line int, rep machine.Replacement) machine.Cache {
	return machine.Cache{
		Name: name, Level: level, Size: int64(sets * assoc * line), Sets: sets, Assoc: assoc, Line: line,
		Replacement: rep, WriteBack: true, WriteAllocate: true,
		Holds: machine.Unified, Inclusion: machine.NonInclusive, Latency: level,
	}
}

func mach(caches ...machine.Cache) *machine.Machine {
	return &machine.Machine{Name: "hand", MemoryLatency: 100, Caches: caches}
}

func with(c machine.Cache, f func(*machine.Cache)) machine.Cache {
	f(&c)
	return c
}

func rd(a uint64, s uint32) refEvent  { return refEvent{Kind: trace.Read, Addr: a, Size: s} }
func wr(a uint64, s uint32) refEvent  { return refEvent{Kind: trace.Write, Addr: a, Size: s} }
func ifc(a uint64, s uint32) refEvent { return refEvent{Kind: trace.IFetch, Addr: a, Size: s} }
func mod(a uint64, s uint32) refEvent { return refEvent{Kind: trace.Modify, Addr: a, Size: s} }
func msc(a uint64, s uint32) refEvent { return refEvent{Kind: trace.Misc, Addr: a, Size: s} }
func cpb(a uint64, s uint32) refEvent { return refEvent{Kind: trace.CopyBack, Addr: a, Size: s} }
func inv(a uint64, s uint32) refEvent { return refEvent{Kind: trace.Invalidate, Addr: a, Size: s} }

// mark is a marker; ext is an extended event of kind k at a.
func mark(m trace.MarkKind, name string) refEvent {
	return refEvent{Kind: trace.Marker, Ext: trace.Ext{Mark: m, Name: name}}
}
func ext(k trace.Kind, a uint64) refEvent {
	return refEvent{Kind: k, Addr: a, Ext: trace.Ext{Size: 64, SP: 0x7ffc0000, Stack: []uint64{0x401000}, Name: "malloc"}}
}

// lines returns 4-byte reads of the given 16-byte lines.
func lines(ns ...uint64) []refEvent {
	var out []refEvent
	for _, n := range ns {
		out = append(out, rd(n*16, 4))
	}
	return out
}

func cat(parts ...[]refEvent) []refEvent {
	var out []refEvent
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

type handCase struct {
	name   string
	m      *machine.Machine
	opt    sim.Options
	events []refEvent
	want   refResult
}

func handCases() []handCase {
	const (
		A, B, C, D, E, G = 0x00, 0x10, 0x20, 0x30, 0x40, 0x50
	)
	one := func(st profile.CacheStats, mem profile.MemoryStats) refResult {
		return refResult{Caches: []profile.CacheStats{st}, Memory: mem}
	}
	return []handCase{
		{
			// 1 set × 2 ways. A miss [A]; B miss [A B]; A hit (B is now
			// least recent); C miss evicts B [A C]; B miss evicts A (C was
			// used after A) [B C]; A miss evicts C [B A]. 5 misses, 3
			// evictions, 5 fills of 16 bytes.
			name:   "lru",
			m:      mach(hc("L1", 1, 1, 2, 16, machine.LRU)),
			events: lines(0, 1, 0, 2, 1, 0),
			want: one(profile.CacheStats{Name: "L1", Level: 1, Accesses: 6, Misses: 5, Reads: 6, ReadMisses: 5,
				Evictions: 3, BytesFromBelow: 80},
				profile.MemoryStats{Reads: 5, BytesRead: 80}),
		},
		{
			// The same references under FIFO: A, B filled; the hit on A
			// does not matter; C evicts A, the oldest fill [C B]; B hits;
			// A evicts B, now the oldest fill [C A]. 4 misses, 2 evictions.
			name:   "fifo",
			m:      mach(hc("L1", 1, 1, 2, 16, machine.FIFO)),
			events: lines(0, 1, 0, 2, 1, 0),
			want: one(profile.CacheStats{Name: "L1", Level: 1, Accesses: 6, Misses: 4, Reads: 6, ReadMisses: 4,
				Evictions: 2, BytesFromBelow: 64},
				profile.MemoryStats{Reads: 4, BytesRead: 64}),
		},
		{
			// 1 set × 3 ways, seed 1. SplitMix64 from state 1 gives
			// 0x910a2dec89025cc1 (mod 3 = 2), 0xbeeb8da1658eec67 (1),
			// 0xf893a2eefb32555e (0), 0x71c18690ee42c90b (2),
			// 0x71bb54d8d101b5b9 (0), 0xc34d0bff90150280 (2).
			// Lines 0 1 2 fill the ways, no draw [0 1 2]; 3 draws 2 [0 1 3];
			// 4 draws 1 [0 4 3]; 0 hits; 1 draws 0 [1 4 3]; 3 hits; 2 draws
			// 2 [1 4 2]; 4 hits. Invalidating line 4 empties way 1; 5 fills
			// it without a draw [1 5 2]; 6 draws 0 [6 5 2]; 2 hits; 1 draws
			// 2 [6 5 1]. Misses: 0 1 2 3 4 1 2 5 6 1 = 10; evictions 6.
			name: "random",
			m: mach(with(hc("L1", 1, 1, 3, 16, machine.Random), func(c *machine.Cache) {
				c.Seed = 1
			})),
			events: cat(lines(0, 1, 2, 3, 4, 0, 1, 3, 2, 4), []refEvent{inv(0x40, 1)}, lines(5, 6, 2, 1)),
			want: one(profile.CacheStats{Name: "L1", Level: 1, Accesses: 14, Misses: 10, Reads: 14, ReadMisses: 10,
				Evictions: 6, BytesFromBelow: 160},
				profile.MemoryStats{Reads: 10, BytesRead: 160}),
		},
		{
			// 1 set × 4 ways; tree bits r (root: ways 0-1 | 2-3), p (0|1),
			// q (2|3), all 0. Fills of A B C D in ways 0..3 leave r=0 p=0
			// q=0. A hits: r=1 p=1. E misses: r=1 → q=0 → way 2 (C, which
			// LRU would keep); E in way 2: r=0 q=1. B hits (under LRU it
			// would have been evicted): r=1 p=0. G misses: r=1 → q=1 → way 3
			// (D); G: r=0 q=0. D misses: r=0 → p=0 → way 0 (A); D: r=1 p=1.
			// B hits. Misses A B C D E G D = 7 (LRU: 8), evictions 3.
			name:   "plru",
			m:      mach(hc("L1", 1, 1, 4, 16, machine.PLRU)),
			events: lines(0, 1, 2, 3, 0, 4, 1, 5, 3, 1),
			want: one(profile.CacheStats{Name: "L1", Level: 1, Accesses: 10, Misses: 7, Reads: 10, ReadMisses: 7,
				Evictions: 3, BytesFromBelow: 112},
				profile.MemoryStats{Reads: 7, BytesRead: 112}),
		},
		{
			// 1 set × 2 ways, values in brackets. A fills [A2]; A hits
			// [A0] (a hit right after the fill must still set 0); B fills
			// [A0 B2]; C: no 3, age once [A1 B3], evict B [A1 C2]; A hits
			// [A0 C2]; D: [A1 C3] evicts C [A1 D2]; E: [A2 D3] evicts D
			// [A2 E2]; A hits. Misses A B C D E = 5, evictions 3.
			name:   "srrip",
			m:      mach(hc("L1", 1, 1, 2, 16, machine.SRRIP)),
			events: lines(0, 0, 1, 2, 0, 3, 4, 0),
			want: one(profile.CacheStats{Name: "L1", Level: 1, Accesses: 8, Misses: 5, Reads: 8, ReadMisses: 5,
				Evictions: 3, BytesFromBelow: 80},
				profile.MemoryStats{Reads: 5, BytesRead: 80}),
		},
		{
			// 1 set × 2 ways. Fill 1 (A, line 0) gets 2 [A2]; fills 2..32
			// (lines 2..32) get 3: line 2 takes way 1, each next one evicts
			// the 3 in way 1 without ageing. Fill 33 (line 33) evicts line 32
			// and gets 2 [A2 33₂]. Line 100 (fill 34): no 3, age once
			// [A3 33₃], evict A, gets 3 [100₃ 33₃]. Line 33 hits [100₃ 33₀].
			// A (fill 35) evicts line 100. Misses 1+32+1+1 = 35, hits 1,
			// evictions 31+1+1 = 33.
			name:   "brrip",
			m:      mach(hc("L1", 1, 1, 2, 16, machine.BRRIP)),
			events: cat(lines(0), lines(seq(2, 33)...), lines(100, 33, 0)),
			want: one(profile.CacheStats{Name: "L1", Level: 1, Accesses: 36, Misses: 35, Reads: 36, ReadMisses: 35,
				Evictions: 33, BytesFromBelow: 560},
				profile.MemoryStats{Reads: 35, BytesRead: 560}),
		},
		{
			// Write-back, write-allocate; 1 set × 2 ways LRU; 4-byte
			// references: W A, W A, R B, W C, R A, W A.
			// W A misses: fill (a read below), then dirty [A*]. W A hits.
			// R B misses [A* B]. W C misses, evicts A (LRU) with a
			// write-back [C* B]. R A misses, evicts B (clean) [C* A].
			// W A hits [C* A*]. The final flush writes back C and A.
			// Misses 4 (2 writes, 2 reads), write-backs 3.
			name:   "write-back allocate",
			m:      mach(hc("L1", 1, 1, 2, 16, machine.LRU)),
			events: []refEvent{wr(A, 4), wr(A, 4), rd(B, 4), wr(C, 4), rd(A, 4), wr(A, 4)},
			want: one(profile.CacheStats{Name: "L1", Level: 1, Accesses: 6, Misses: 4, Reads: 2, Writes: 4,
				ReadMisses: 2, WriteMisses: 2, Evictions: 2, Writebacks: 3, BytesFromBelow: 64, BytesToBelow: 48},
				profile.MemoryStats{Reads: 4, Writes: 3, BytesRead: 64, BytesWritten: 48}),
		},
		{
			// Write-through, write-allocate: the same hits and misses, lines
			// stay clean, each of the 4 writes sends its 4 bytes down.
			name: "write-through allocate",
			m: mach(with(hc("L1", 1, 1, 2, 16, machine.LRU), func(c *machine.Cache) {
				c.WriteBack = false
			})),
			events: []refEvent{wr(A, 4), wr(A, 4), rd(B, 4), wr(C, 4), rd(A, 4), wr(A, 4)},
			want: one(profile.CacheStats{Name: "L1", Level: 1, Accesses: 6, Misses: 4, Reads: 2, Writes: 4,
				ReadMisses: 2, WriteMisses: 2, Evictions: 2, BytesFromBelow: 64, BytesToBelow: 16},
				profile.MemoryStats{Reads: 4, Writes: 4, BytesRead: 64, BytesWritten: 16}),
		},
		{
			// Write-back, no write-allocate: W A misses (4 bytes down), W A
			// misses again, R B fills [B], W C misses (down), R A fills
			// [B A], W A hits and dirties A, flushed at the end (16 bytes).
			name: "write-back no-allocate",
			m: mach(with(hc("L1", 1, 1, 2, 16, machine.LRU), func(c *machine.Cache) {
				c.WriteAllocate = false
			})),
			events: []refEvent{wr(A, 4), wr(A, 4), rd(B, 4), wr(C, 4), rd(A, 4), wr(A, 4)},
			want: one(profile.CacheStats{Name: "L1", Level: 1, Accesses: 6, Misses: 5, Reads: 2, Writes: 4,
				ReadMisses: 2, WriteMisses: 3, Writebacks: 1, BytesFromBelow: 32, BytesToBelow: 28},
				profile.MemoryStats{Reads: 2, Writes: 4, BytesRead: 32, BytesWritten: 28}),
		},
		{
			// Write-through, no write-allocate: as above, but the final W A
			// hit writes its 4 bytes through instead of dirtying A.
			name: "write-through no-allocate",
			m: mach(with(hc("L1", 1, 1, 2, 16, machine.LRU), func(c *machine.Cache) {
				c.WriteBack, c.WriteAllocate = false, false
			})),
			events: []refEvent{wr(A, 4), wr(A, 4), rd(B, 4), wr(C, 4), rd(A, 4), wr(A, 4)},
			want: one(profile.CacheStats{Name: "L1", Level: 1, Accesses: 6, Misses: 5, Reads: 2, Writes: 4,
				ReadMisses: 2, WriteMisses: 3, BytesFromBelow: 32, BytesToBelow: 16},
				profile.MemoryStats{Reads: 2, Writes: 4, BytesRead: 32, BytesWritten: 16}),
		},
		{
			// L1 and an inclusive L2, both 1 set × 2 ways LRU.
			// W A: L1 [A*], L2 [A]. R B: L1 [A* B], L2 [A B]. W A hits in
			// L1 (L2 does not see it). R C: L1 fetches C first; L2 misses
			// and evicts A (LRU there), back-invalidating L1's dirty A, whose
			// data merges into the victim: L2 writes A back. L2 [B C]. L1
			// then chooses its victim: A's way, now empty [B C]. R A: L2
			// evicts B, back-invalidating it in L1, which fills that way.
			// Back-invalidations are not evictions: L1 evicts nothing.
			name: "inclusive",
			m: mach(hc("L1", 1, 1, 2, 16, machine.LRU),
				with(hc("L2", 2, 1, 2, 16, machine.LRU), func(c *machine.Cache) { c.Inclusion = machine.Inclusive })),
			events: []refEvent{wr(A, 4), rd(B, 4), wr(A, 4), rd(C, 4), rd(A, 4)},
			want: refResult{Caches: []profile.CacheStats{
				{Name: "L1", Level: 1, Accesses: 5, Misses: 4, Reads: 3, Writes: 2, ReadMisses: 3, WriteMisses: 1,
					BackInvalidations: 2, BytesFromBelow: 64},
				{Name: "L2", Level: 2, Accesses: 4, Misses: 4, Reads: 4, ReadMisses: 4,
					Evictions: 2, Writebacks: 1, BytesFromBelow: 64, BytesToBelow: 16},
			}, Memory: profile.MemoryStats{Reads: 4, Writes: 1, BytesRead: 64, BytesWritten: 16}},
		},
		{
			// L1 and an exclusive (victim) L2, both 1 set × 2 ways LRU.
			// R A, W B: L2 misses and passes both fills through (16 bytes
			// each from below), L1 [A B*]. R C: C passes through; then L1
			// evicts A into L2 [A]; L1 [C B*]. R D: D passes through; L1
			// evicts B, a write-back, into L2 [A B*]; L1 [C D]. R B: B hits
			// in L2 and moves up dirty: L2 [A -]; L1 evicts C into L2 [A C],
			// L1 [B* D]. W E: E passes through; L1 evicts D into L2, which
			// evicts A (LRU) [C D]; L1 [B* E*]. Final flush: B and E are
			// written back as writes that miss in L2 and go on to memory.
			name: "exclusive",
			m: mach(hc("L1", 1, 1, 2, 16, machine.LRU),
				with(hc("L2", 2, 1, 2, 16, machine.LRU), func(c *machine.Cache) { c.Inclusion = machine.Exclusive })),
			events: []refEvent{rd(A, 4), wr(B, 4), rd(C, 4), rd(D, 4), rd(B, 4), wr(E, 4)},
			want: refResult{Caches: []profile.CacheStats{
				{Name: "L1", Level: 1, Accesses: 6, Misses: 6, Reads: 4, Writes: 2, ReadMisses: 4, WriteMisses: 2,
					Evictions: 4, Writebacks: 3, BytesFromBelow: 96, BytesToBelow: 96},
				{Name: "L2", Level: 2, Accesses: 8, Misses: 7, Reads: 6, Writes: 2, ReadMisses: 5, WriteMisses: 2,
					Evictions: 1, BytesFromBelow: 80, BytesToBelow: 32},
			}, Memory: profile.MemoryStats{Reads: 5, Writes: 2, BytesRead: 80, BytesWritten: 32}},
		},
		{
			// Direct mapped, 2 sets × 1 way; the twin is fully associative
			// with 2 lines, LRU. Lines A=0, B=2 (set 0), C=1 (set 1), E=4.
			// A comp; B comp (evicts A); A: twin [A B] hits → conflict;
			// C comp (twin evicts B: [A C]); B: twin misses → capacity
			// (twin [C B]); A: capacity (twin [B A]); C hits (the twin
			// misses and refills); E comp. 4 + 2 + 1 = 7 misses; the cache
			// evicts at B, A, B, A, E = 5.
			name:   "3c",
			m:      mach(hc("L1", 1, 2, 1, 16, machine.LRU)),
			opt:    sim.Options{Classify: true},
			events: lines(0, 2, 0, 1, 2, 0, 1, 4),
			want: one(profile.CacheStats{Name: "L1", Level: 1, Accesses: 8, Misses: 7, Reads: 8, ReadMisses: 7,
				Compulsory: 4, Capacity: 2, Conflict: 1, Evictions: 5, BytesFromBelow: 112},
				profile.MemoryStats{Reads: 7, BytesRead: 112}),
		},
		{
			// L1 with 32-byte lines over an L2 with 16-byte lines.
			// R 0x1c+8 touches L1 lines 0 and 1: 2 misses, each a 32-byte
			// fill that touches 2 L2 lines: 4 L2 misses, 4 memory reads.
			// R 0x20+4 hits L1 line 1. W 0x00+64 hits L1 lines 0 and 1 and
			// dirties them. The flush writes both back (32 bytes each, 2 L2
			// lines each, all hits that dirty L2), then L2 writes back its 4
			// lines.
			name:   "spanning",
			m:      mach(hc("L1", 1, 1, 4, 32, machine.LRU), hc("L2", 2, 1, 8, 16, machine.LRU)),
			events: []refEvent{rd(0x1c, 8), rd(0x20, 4), wr(0x00, 64)},
			want: refResult{Caches: []profile.CacheStats{
				{Name: "L1", Level: 1, Accesses: 5, Misses: 2, Reads: 3, Writes: 2, ReadMisses: 2,
					Writebacks: 2, BytesFromBelow: 64, BytesToBelow: 64},
				{Name: "L2", Level: 2, Accesses: 8, Misses: 4, Reads: 4, Writes: 4, ReadMisses: 4,
					Writebacks: 4, BytesFromBelow: 64, BytesToBelow: 64},
			}, Memory: profile.MemoryStats{Reads: 4, Writes: 4, BytesRead: 64, BytesWritten: 64}},
		},
		{
			// The same under --cachelab: every reference from the CPU
			// touches only the line holding its address; fills and
			// write-backs between levels span as usual. R 0x1c+8: L1 line 0
			// misses; its fill (32 bytes at 0) misses L2 lines 0 and 1.
			// R 0x20+4: L1 line 1 misses, L2 lines 2 and 3 miss. W 0x00+64:
			// L1 line 0 hits and is dirtied. Flush: L1 line 0 goes down as
			// a 32-byte write hitting L2 lines 0 and 1 (dirty), which L2
			// then writes back.
			name:   "spanning cachelab",
			m:      mach(hc("L1", 1, 1, 4, 32, machine.LRU), hc("L2", 2, 1, 8, 16, machine.LRU)),
			opt:    sim.Options{CacheLab: true},
			events: []refEvent{rd(0x1c, 8), rd(0x20, 4), wr(0x00, 64)},
			want: refResult{Caches: []profile.CacheStats{
				{Name: "L1", Level: 1, Accesses: 3, Misses: 2, Reads: 2, Writes: 1, ReadMisses: 2,
					Writebacks: 1, BytesFromBelow: 64, BytesToBelow: 32},
				{Name: "L2", Level: 2, Accesses: 6, Misses: 4, Reads: 4, Writes: 2, ReadMisses: 4,
					Writebacks: 2, BytesFromBelow: 64, BytesToBelow: 32},
			}, Memory: profile.MemoryStats{Reads: 4, Writes: 2, BytesRead: 64, BytesWritten: 32}},
		},
		{
			// M 0x0c+8 is a read of lines 0 and 1 (2 misses) then a write of
			// both (2 hits, dirty); the flush writes both back.
			name:   "modify",
			m:      mach(hc("L1", 1, 1, 4, 16, machine.LRU)),
			events: []refEvent{mod(0x0c, 8)},
			want: one(profile.CacheStats{Name: "L1", Level: 1, Accesses: 4, Misses: 2, Reads: 2, Writes: 2,
				ReadMisses: 2, Writebacks: 2, BytesFromBelow: 32, BytesToBelow: 32},
				profile.MemoryStats{Reads: 2, Writes: 2, BytesRead: 32, BytesWritten: 32}),
		},
		{
			// L1 (4 ways) and L2 (8 ways), no evictions. W A, W B, W C fill
			// both (L1 dirty). Copyback of 0x10 writes back the line holding
			// it, L1's B: a write hit in L2 that dirties it; then, L2's turn,
			// L2 writes B back. Invalidate A+1 drops A everywhere, dirty or not,
			// with no write-back. Copyback of everything: L1's C (A is gone,
			// B clean) down to L2, then L2's C to memory. R A misses in both.
			// Invalidate everything. R B misses in both. Nothing is dirty at
			// the end.
			name: "copyback invalidate",
			m:    mach(hc("L1", 1, 1, 4, 16, machine.LRU), hc("L2", 2, 1, 8, 16, machine.LRU)),
			events: []refEvent{wr(A, 4), wr(B, 4), wr(C, 4), cpb(0x10, 16), inv(A, 1), cpb(0, 0), rd(A, 4),
				inv(0, 0), rd(B, 4)},
			want: refResult{Caches: []profile.CacheStats{
				{Name: "L1", Level: 1, Accesses: 5, Misses: 5, Reads: 2, Writes: 3, ReadMisses: 2, WriteMisses: 3,
					Writebacks: 2, BytesFromBelow: 80, BytesToBelow: 32},
				{Name: "L2", Level: 2, Accesses: 7, Misses: 5, Reads: 5, Writes: 2, ReadMisses: 5,
					Writebacks: 2, BytesFromBelow: 80, BytesToBelow: 32},
			}, Memory: profile.MemoryStats{Reads: 5, Writes: 2, BytesRead: 80, BytesWritten: 32}},
		},
		{
			// Only a data cache: the two instruction fetches are not
			// simulated. R A and W 0x100 miss; the flush writes 0x100 back.
			name: "no instruction cache",
			m: mach(with(hc("L1D", 1, 1, 2, 16, machine.LRU), func(c *machine.Cache) {
				c.Holds = machine.Data
			})),
			events: []refEvent{ifc(0, 4), ifc(4, 4), rd(0, 4), wr(0x100, 8)},
			want: refResult{Caches: []profile.CacheStats{
				{Name: "L1D", Level: 1, Accesses: 2, Misses: 2, Reads: 1, Writes: 1, ReadMisses: 1, WriteMisses: 1,
					Writebacks: 1, BytesFromBelow: 32, BytesToBelow: 16},
			}, Memory: profile.MemoryStats{Reads: 2, Writes: 1, BytesRead: 32, BytesWritten: 16}, NotSimulated: 2},
		},
		{
			// Only an instruction cache: data references go straight to
			// memory with their own sizes (4 read, 8 written); I 0 misses
			// (a 16-byte fill, a memory read), I 8 hits.
			name: "no data cache",
			m: mach(with(hc("L1I", 1, 1, 2, 16, machine.LRU), func(c *machine.Cache) {
				c.Holds = machine.Instructions
			})),
			events: []refEvent{rd(0, 4), wr(0x10, 8), ifc(0, 4), ifc(8, 4)},
			want: refResult{Caches: []profile.CacheStats{
				{Name: "L1I", Level: 1, Accesses: 2, Misses: 1, IFetches: 2, IFetchMisses: 1, BytesFromBelow: 16},
			}, Memory: profile.MemoryStats{Reads: 2, Writes: 1, BytesRead: 20, BytesWritten: 8}},
		},
		{
			// Split L1s over a unified L2: the instruction miss stays an
			// instruction fetch at L2; the data miss to the same line then
			// hits there.
			name: "split",
			m: mach(with(hc("L1I", 1, 1, 2, 16, machine.LRU), func(c *machine.Cache) { c.Holds = machine.Instructions }),
				with(hc("L1D", 1, 1, 2, 16, machine.LRU), func(c *machine.Cache) { c.Holds = machine.Data }),
				hc("L2", 2, 1, 4, 16, machine.LRU)),
			events: []refEvent{ifc(0, 4), rd(0, 4)},
			want: refResult{Caches: []profile.CacheStats{
				{Name: "L1I", Level: 1, Accesses: 1, Misses: 1, IFetches: 1, IFetchMisses: 1, BytesFromBelow: 16},
				{Name: "L1D", Level: 1, Accesses: 1, Misses: 1, Reads: 1, ReadMisses: 1, BytesFromBelow: 16},
				{Name: "L2", Level: 2, Accesses: 2, Misses: 1, IFetches: 1, Reads: 1, IFetchMisses: 1, BytesFromBelow: 16},
			}, Memory: profile.MemoryStats{Reads: 1, BytesRead: 16}},
		},
		{
			// An inclusive unified L3 at the level of L2D is on L1I's
			// instruction path only: L1D cannot reach it (its data path is
			// L2D, then memory), so L3's evictions do not touch L1D.
			// R A: L1D, L2D miss. I A: L1I, L3 miss. I B: L1I fetches B
			// first: L3 evicts A and back-invalidates it in L1I, not in L1D;
			// L1I fills the freed way (no eviction). R A hits in L1D.
			name: "paths",
			m: mach(with(hc("L1I", 1, 1, 1, 16, machine.LRU), func(c *machine.Cache) { c.Holds = machine.Instructions }),
				with(hc("L1D", 1, 1, 2, 16, machine.LRU), func(c *machine.Cache) { c.Holds = machine.Data }),
				with(hc("L2D", 2, 1, 4, 16, machine.LRU), func(c *machine.Cache) { c.Holds = machine.Data }),
				with(hc("L3", 2, 1, 1, 16, machine.LRU), func(c *machine.Cache) { c.Inclusion = machine.Inclusive })),
			events: []refEvent{rd(A, 4), ifc(A, 4), ifc(B, 4), rd(A, 4)},
			want: refResult{Caches: []profile.CacheStats{
				{Name: "L1I", Level: 1, Accesses: 2, Misses: 2, IFetches: 2, IFetchMisses: 2, BackInvalidations: 1, BytesFromBelow: 32},
				{Name: "L1D", Level: 1, Accesses: 2, Misses: 1, Reads: 2, ReadMisses: 1, BytesFromBelow: 16},
				{Name: "L2D", Level: 2, Accesses: 1, Misses: 1, Reads: 1, ReadMisses: 1, BytesFromBelow: 16},
				{Name: "L3", Level: 2, Accesses: 2, Misses: 2, IFetches: 2, IFetchMisses: 2, Evictions: 1, BytesFromBelow: 32},
			}, Memory: profile.MemoryStats{Reads: 3, BytesRead: 48}},
		},
		{
			// A dirty line can reach an instruction-only cache: U1 (4 ways)
			// over an inclusive instruction-only I2 (2 ways), then an
			// instruction-only I3 (1 way) and a data-only D4 that only U1's
			// data path uses. I A fills U1, I2, I3. W A dirties it in U1.
			// I B: U1 [A* B], I2 [A B], I3 evicts A [B]. I C: I2 fetches C
			// first (I3 evicts B [C]), then evicts A, back-invalidating U1's
			// dirty A, and writes the merged line to I3 down its instruction
			// path (not to D4): a write miss of the whole line, which
			// allocates without a fetch: I3 evicts C [A*]. The final flush
			// writes A from I3 to memory.
			name: "instruction path",
			m: mach(hc("U1", 1, 1, 4, 16, machine.LRU),
				with(hc("I2", 2, 1, 2, 16, machine.LRU), func(c *machine.Cache) {
					c.Holds, c.Inclusion = machine.Instructions, machine.Inclusive
				}),
				with(hc("I3", 3, 1, 1, 16, machine.LRU), func(c *machine.Cache) { c.Holds = machine.Instructions }),
				with(hc("D4", 4, 1, 2, 16, machine.LRU), func(c *machine.Cache) { c.Holds = machine.Data })),
			events: []refEvent{ifc(A, 4), wr(A, 4), ifc(B, 4), ifc(C, 4)},
			want: refResult{Caches: []profile.CacheStats{
				{Name: "U1", Level: 1, Accesses: 4, Misses: 3, IFetches: 3, Writes: 1, IFetchMisses: 3,
					BackInvalidations: 1, BytesFromBelow: 48},
				{Name: "I2", Level: 2, Accesses: 3, Misses: 3, IFetches: 3, IFetchMisses: 3,
					Evictions: 1, Writebacks: 1, BytesFromBelow: 48, BytesToBelow: 16},
				{Name: "I3", Level: 3, Accesses: 4, Misses: 4, IFetches: 3, Writes: 1, IFetchMisses: 3, WriteMisses: 1,
					Evictions: 3, Writebacks: 1, BytesFromBelow: 48, BytesToBelow: 16},
				{Name: "D4", Level: 4},
			}, Memory: profile.MemoryStats{Reads: 3, Writes: 1, BytesRead: 48, BytesWritten: 16}},
		},
		{
			// Addresses stop at 2^64-1. With only an instruction cache, data
			// references go to memory with the bytes that exist: 4 of the
			// read at 2^64-4, 16 of the write at 2^64-16.
			name: "top of memory uncached",
			m: mach(with(hc("L1I", 1, 1, 2, 16, machine.LRU), func(c *machine.Cache) {
				c.Holds = machine.Instructions
			})),
			events: []refEvent{rd(^uint64(3), 8), wr(^uint64(15), 100)},
			want: refResult{Caches: []profile.CacheStats{{Name: "L1I", Level: 1}},
				Memory: profile.MemoryStats{Reads: 1, Writes: 1, BytesRead: 4, BytesWritten: 16}},
		},
		{
			// In a cache both references touch only the last line: the read
			// misses, the write hits and dirties it, the flush writes it
			// back.
			name:   "top of memory cached",
			m:      mach(hc("L1", 1, 1, 2, 16, machine.LRU)),
			events: []refEvent{rd(^uint64(7), 100), wr(^uint64(15), 40)},
			want: one(profile.CacheStats{Name: "L1", Level: 1, Accesses: 2, Misses: 1, Reads: 1, Writes: 1,
				ReadMisses: 1, Writebacks: 1, BytesFromBelow: 16, BytesToBelow: 16},
				profile.MemoryStats{Reads: 1, Writes: 1, BytesRead: 16, BytesWritten: 16}),
		},
		{
			// 1-byte lines reach line number 2^64-1, the engine's "no
			// bypass" marker: the first read of the last byte misses, the
			// repeats (one of size 0, treated as 1) hit.
			name:   "top of memory 1-byte lines",
			m:      mach(hc("L1", 1, 1, 2, 1, machine.LRU)),
			events: []refEvent{rd(^uint64(0), 1), rd(^uint64(0), 1), rd(^uint64(0), 0)},
			want: one(profile.CacheStats{Name: "L1", Level: 1, Accesses: 3, Misses: 1, Reads: 3, ReadMisses: 1,
				BytesFromBelow: 1},
				profile.MemoryStats{Reads: 1, BytesRead: 1}),
		},
		{
			// The cache lab's rules, s=1 E=1 b=4 (2 sets, direct mapped,
			// 16-byte lines; set = bit 4 of the address). I ignored. L 0x10
			// misses (set 1). M 0x20: load misses (set 0), store hits. L 0x22
			// hits. S 0x18 hits (line 1 dirty). L 0x110 misses, evicts dirty
			// line 1. L 0x1c,8 touches only line 1: misses, evicts 0x110.
			// M 0x12: two hits. hits:5 misses:4 evictions:2; the dirty line
			// 1 eviction and the flush of lines 2 and 1 are 3 write-backs.
			name: "cachelab",
			m:    mach(hc("L1", 1, 2, 1, 16, machine.LRU)),
			opt:  sim.Options{CacheLab: true},
			events: []refEvent{ifc(0, 4), rd(0x10, 1), mod(0x20, 1), rd(0x22, 1), wr(0x18, 1), rd(0x110, 1),
				rd(0x1c, 8), mod(0x12, 1)},
			want: refResult{Caches: []profile.CacheStats{
				{Name: "L1", Level: 1, Accesses: 9, Misses: 4, Reads: 6, Writes: 3, ReadMisses: 4,
					Evictions: 2, Writebacks: 3, BytesFromBelow: 64, BytesToBelow: 48},
			}, Memory: profile.MemoryStats{Reads: 4, Writes: 3, BytesRead: 64, BytesWritten: 48}, NotSimulated: 1},
		},
		{
			// 1 set × 2 ways, LRU. A and B miss [A B]; an ifetch no cache
			// holds is not simulated. Dump "warm" holds that. Reset: the
			// counters restart, the cache still holds [A B]. Extended events
			// change nothing. A hits, C misses and evicts B [A C]. Dump
			// "after": 2 events, 2 accesses, 1 miss. A write to A hits and
			// dirties it; the final flush writes it back.
			name: "reset and dump",
			m: mach(with(hc("L1", 1, 1, 2, 16, machine.LRU), func(c *machine.Cache) {
				c.Holds = machine.Data
			})),
			events: []refEvent{rd(A, 4), rd(B, 4), ifc(0x400000, 4), mark(trace.MarkDump, "warm"),
				mark(trace.MarkReset, ""), ext(trace.Alloc, C), ext(trace.Call, 0x401000), ext(trace.Free, C),
				mark(trace.MarkRegionBegin, "loop"), rd(A, 4), ext(trace.Return, 0x400800), rd(C, 4),
				mark(trace.MarkDump, "after"), mark(trace.MarkStop, ""), wr(A, 4), mark(trace.MarkStart, "")},
			want: refResult{
				Caches: []profile.CacheStats{{Name: "L1", Level: 1, Accesses: 3, Misses: 1, Reads: 2, Writes: 1, ReadMisses: 1,
					Evictions: 1, Writebacks: 1, BytesFromBelow: 16, BytesToBelow: 16}},
				Memory: profile.MemoryStats{Reads: 1, Writes: 1, BytesRead: 16, BytesWritten: 16},
				Dumps: []profile.Dump{
					{Name: "warm", Events: 3, Caches: []profile.CacheStats{{Name: "L1", Level: 1, Accesses: 2, Misses: 2, Reads: 2,
						ReadMisses: 2, BytesFromBelow: 32}}, Memory: profile.MemoryStats{Reads: 2, BytesRead: 32}},
					{Name: "after", Events: 2, Caches: []profile.CacheStats{{Name: "L1", Level: 1, Accesses: 2, Misses: 1, Reads: 2,
						ReadMisses: 1, Evictions: 1, BytesFromBelow: 16}}, Memory: profile.MemoryStats{Reads: 1, BytesRead: 16}},
				},
				Resets: 1,
			},
		},
		{
			// A reset keeps the 3C state. 1 line, its twin 1 line: A and B
			// are compulsory misses (B evicts A). Reset. A misses again: it
			// was seen before the reset, so it is not compulsory; the twin
			// holds B, so it is a capacity miss.
			name:   "reset keeps 3C state",
			m:      mach(hc("L1", 1, 1, 1, 16, machine.LRU)),
			opt:    sim.Options{Classify: true},
			events: []refEvent{rd(A, 4), rd(B, 4), mark(trace.MarkDump, "before"), mark(trace.MarkReset, ""), rd(A, 4)},
			want: refResult{
				Caches: []profile.CacheStats{{Name: "L1", Level: 1, Accesses: 1, Misses: 1, Reads: 1, ReadMisses: 1, Capacity: 1,
					Evictions: 1, BytesFromBelow: 16}},
				Memory: profile.MemoryStats{Reads: 1, BytesRead: 16},
				Dumps: []profile.Dump{{Name: "before", Events: 2, Caches: []profile.CacheStats{{Name: "L1", Level: 1, Accesses: 2,
					Misses: 2, Reads: 2, ReadMisses: 2, Compulsory: 2, Evictions: 1, BytesFromBelow: 32}},
					Memory: profile.MemoryStats{Reads: 2, BytesRead: 32}}},
				Resets: 1,
			},
		},
	}
}

func seq(from, to uint64) []uint64 {
	var out []uint64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

func TestHandWorked(t *testing.T) {
	for _, tc := range handCases() {
		t.Run(tc.name, func(t *testing.T) {
			ref := runReference(tc.m, tc.opt.Classify, tc.opt.CacheLab, tc.events)
			if d := cmp.Diff(tc.want, ref); d != "" {
				t.Errorf("reference model (-want +got):\n%s", d)
			}
			for _, batchSeed := range []uint64{0, 1, 2} {
				got := runEngine(t, tc.m, tc.opt, tc.events, batchSeed)
				if d := cmp.Diff(tc.want, got); d != "" {
					t.Errorf("engine, batches from seed %d (-want +got):\n%s", batchSeed, d)
				}
			}
		})
	}
}
