package sim_test

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/sim"
	"github.com/memspy/memspy/trace"
)

// spanEvent is an event with its PC column.
type spanEvent struct {
	refEvent
	pc uint64
}

// TestFetchSpans checks that folding instruction fetches into spans (what
// the Valgrind stream reader does for an engine that attributes every
// hit, sim.Hierarchy.IFetchRuns) changes nothing in the where-and-why
// profile but its timeline: on random walks through code of instructions
// of 1 to 15 bytes, with jumps into lines already partly fetched, data
// references between the fetches, calls and returns, over first caches of
// 32-, 64- and 128-byte lines.
func TestFetchSpans(t *testing.T) {
	for _, line := range []int{32, 64, 128} {
		for _, rep := range []machine.Replacement{machine.LRU, machine.FIFO} {
			l1i := with(hc("L1I", 1, 4, 2, line, rep), func(c *machine.Cache) { c.Holds = machine.Instructions })
			l1d := with(hc("L1D", 1, 4, 2, line, rep), func(c *machine.Cache) { c.Holds = machine.Data })
			m := mach(l1i, l1d, hc("L2", 2, 16, 4, line, machine.LRU))
			for seed := range uint64(40) {
				rng := rand.New(rand.NewPCG(seed, uint64(line)))
				events := spanWalk(rng)
				h, err := sim.New(m, sim.Options{Attribute: true})
				if err != nil {
					t.Fatal(err)
				}
				block, spans := h.IFetchRuns()
				if !spans || block != min(line, 64) {
					t.Fatalf("line %d: IFetchRuns() = %d, %v; want spans of %d bytes", line, block, spans, min(line, 64))
				}
				folded := foldSpans(events, uint64(block))
				if len(folded) >= len(events) {
					t.Fatalf("line %d seed %d: nothing folded", line, seed)
				}
				want, got := spanProfile(t, m, events), spanProfile(t, m, folded)
				if want != got {
					t.Fatalf("line %d %s seed %d: spans change the profile:\n%s", line, rep, seed, cmp.Diff(want, got))
				}
			}
		}
	}
}

// spanWalk returns a random run of code: straight runs of instructions,
// each maybe reading or writing data, jumps, calls and returns.
func spanWalk(rng *rand.Rand) []spanEvent {
	var out []spanEvent
	add := func(k trace.Kind, a uint64, size uint32, pc uint64) {
		out = append(out, spanEvent{refEvent{Kind: k, Addr: a, Size: size, Thread: 1}, pc})
	}
	const code = 0x400000
	sp := uint64(0x7fff0000)
	depth := 0
	pc := uint64(code)
	add(trace.Alloc, 0x10000, 0, 0)
	out[len(out)-1].Ext = trace.Ext{Size: 4096, Stack: []uint64{code + 0x10}, Name: "malloc"}
	for range 60 {
		// A straight run of instructions.
		for range 1 + rng.IntN(20) {
			size := uint32(1 + rng.IntN(15))
			add(trace.IFetch, pc, size, pc)
			switch rng.IntN(4) {
			case 0:
				add(trace.Read, 0x10000+uint64(rng.IntN(4096-8)), uint32(1+rng.IntN(8)), pc)
			case 1:
				add(trace.Write, 0x10000+uint64(rng.IntN(4096-8)), uint32(1+rng.IntN(8)), pc)
			}
			pc += uint64(size)
		}
		switch r := rng.IntN(6); {
		case r == 0 && depth < 6:
			sp -= 64
			depth++
			out = append(out, spanEvent{refEvent{Kind: trace.Call, Addr: code + uint64(rng.IntN(8))*0x100, Ext: trace.Ext{SP: sp}, Thread: 1}, pc})
			pc = out[len(out)-1].Addr
		case r == 1 && depth > 0:
			out = append(out, spanEvent{refEvent{Kind: trace.Return, Addr: pc, Ext: trace.Ext{SP: sp + 8}, Thread: 1}, pc})
			sp += 64
			depth--
			pc = code + uint64(rng.IntN(2048))
		default:
			// A jump, often back into code already run (a loop), into
			// lines partly used.
			pc = code + uint64(rng.IntN(2048))
		}
	}
	return out
}

// foldSpans folds the fetches of events into spans of blocks of block
// bytes as the Valgrind stream reader does: a fetch joins the run before it
// when in the same block and beginning where that run's last fetch ended,
// with only data references between them; the run's PC then holds the ends
// of its instructions.
func foldSpans(events []spanEvent, block uint64) []spanEvent {
	var out []spanEvent
	open, next := -1, uint64(0)
	for _, e := range events {
		switch {
		case e.Kind == trace.Read || e.Kind == trace.Write || e.Kind == trace.Modify:
		case e.Kind == trace.IFetch && e.Addr&(block-1)+uint64(e.Size) <= block:
			end := uint64(1) << ((e.Addr + uint64(e.Size) - 1) & (block - 1))
			if open >= 0 && out[open].Addr/block == e.Addr/block && e.Addr == next {
				r := &out[open]
				if r.Kind == trace.IFetch {
					r.Kind, r.Size, r.pc = trace.IFetchRun, 1, uint64(1)<<((r.Addr+uint64(r.Size)-1)&(block-1))
				}
				r.Size++
				r.pc |= end
				next = e.Addr + uint64(e.Size)
				continue
			}
			open, next = len(out), e.Addr+uint64(e.Size)
		default:
			open = -1
		}
		out = append(out, e)
	}
	return out
}

// spanProfile returns the JSON of the where-and-why profile of events on
// m, without its timeline (whose points may fall a little apart).
func spanProfile(t *testing.T, m *machine.Machine, events []spanEvent) string {
	t.Helper()
	h, err := sim.New(m, sim.Options{Attribute: true})
	if err != nil {
		t.Fatal(err)
	}
	b := trace.NewBatch(64)
	for _, e := range events {
		if e.Kind.IsExtended() {
			b.AppendExt(e.Kind, e.Addr, e.pc, e.Thread, e.Ext)
		} else {
			b.Append(e.Kind, e.Addr, e.Size, e.pc, e.Thread)
		}
	}
	h.Process(b)
	h.Finish()
	p := h.Profile()
	p.Timeline = nil
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}
