package valgrind

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/sim"
	"github.com/memspy/memspy/trace"
)

// l1Machines are the hierarchies of TestFirstLevelModel: first caches of
// every geometry and policy the tool simulates, above levels with larger,
// equal and smaller lines.
var l1Machines = map[string][]string{
	"direct-mapped": {
		"L1I:size=256,assoc=1,line=16,holds=instructions", "L1D:size=256,assoc=1,line=16,holds=data",
		"L2:size=1k,assoc=2,line=32", "L3:size=4k,assoc=4,line=64"},
	"2-way-fifo": {
		"L1I:size=512,assoc=2,line=32,holds=instructions,replacement=fifo", "L1D:size=512,assoc=2,line=32,holds=data,replacement=fifo",
		"L2:size=2k,assoc=4,line=32,replacement=fifo"},
	"8-way-64": {
		"L1D:size=2k,assoc=8,line=64,holds=data", "L1I:size=1k,assoc=8,line=64,holds=instructions", "L2:size=8k,assoc=8,line=64"},
	"128-byte-lines-3-sets": {
		"L1D:sets=3,assoc=2,line=128,holds=data", "L2:size=4k,assoc=4,line=32,replacement=random"},
	"write-through-no-allocate": {
		"L1D:size=512,assoc=4,line=16,holds=data,write=through,allocate=no", "L2:size=2k,assoc=2,line=8"},
	"write-through-allocate": {
		"L1D:size=512,assoc=2,line=32,holds=data,write=through,allocate=yes", "L2:size=1k,assoc=2,line=64"},
	"write-back-no-allocate": {
		"L1D:size=512,assoc=2,line=32,holds=data,write=back,allocate=no,replacement=fifo", "L2:size=1k,assoc=4,line=32"},
	"unified": {
		"L1:size=1k,assoc=4,line=32", "L2:size=4k,assoc=4,line=64"},
	"fully-associative": {
		"L1I:size=256,assoc=16,line=16,holds=instructions", "L1D:size=512,assoc=32,line=16,holds=data", "L2:size=2k,assoc=2,line=64"},
}

// buildHarness builds the model's test harness for the host
// (tool/ms_l1_harness.c) and returns its path; it skips t without gcc.
func buildHarness(t *testing.T) string {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc")
	}
	harness := filepath.Join(t.TempDir(), "ms_l1_harness")
	if out, err := exec.Command(gcc, "-O2", "-Wall", "-Werror", "-o", harness, "tool/ms_l1_harness.c", "tool/ms_l1.c").CombinedOutput(); err != nil {
		t.Fatalf("building the harness: %v\n%s", err, out)
	}
	return harness
}

// TestFirstLevelModel checks the tool's first-level cache model (ms_l1.c,
// built for the host with tool/ms_l1_harness.c) against the engine: on
// random references, the engine fed what the model sends below and its
// counters (trace.BelowRead... and trace.FirstLevel events) gives the
// profile that the engine gives on the references themselves, byte for
// byte.
func TestFirstLevelModel(t *testing.T) {
	harness := buildHarness(t)
	for name, specs := range l1Machines {
		t.Run(name, func(t *testing.T) {
			m, err := machine.FromSpecs(specs, 100)
			if err != nil {
				t.Fatal(err)
			}
			for seed := range uint64(4) {
				// Instruction fetches go to a first cache of their own or
				// a unified one; elsewhere they would reach a cache below
				// the first data cache, which the tool does not simulate.
				ifetch := seed%2 == 0 && (m.Caches[0].HoldsInstructions() || m.Caches[1].Holds == machine.Instructions)
				events := randomRefs(seed, 100000, ifetch)
				want := attributedProfile(t, m, sim.Options{}, events)
				h, err := sim.New(m, sim.Options{})
				if err != nil {
					t.Fatal(err)
				}
				d, i, ok := h.TracerFirstLevels(ifetch)
				if !ok {
					t.Fatalf("the tool would not simulate the first caches of %s", name)
				}
				fl := FirstLevel{DataIndex: d, Data: &m.Caches[d], InstrIndex: i}
				ispec := "-"
				if i >= 0 {
					ispec = cacheArg(i, &m.Caches[i])
				}
				below := runHarness(t, harness, ispec, cacheArg(fl.DataIndex, fl.Data), events)
				got := attributedProfile(t, m, sim.Options{}, below)
				if !bytes.Equal(got, want) {
					t.Errorf("seed %d (ifetch %v): the profile from the model's requests differs from the engine's:\n%s",
						seed, ifetch, firstLines(got, want))
				}
			}
		})
	}
}

// randomRefs returns n random references (instruction fetches too when
// ifetch): mostly small ones in a few KiB, some spanning lines, some of
// size 0, a few at the top of the address space.
func randomRefs(seed uint64, n int, ifetch bool) *trace.Batch {
	r := rand.New(rand.NewPCG(seed, 27))
	b := trace.NewBatch(n)
	sizes := []uint32{1, 2, 4, 8, 8, 8, 16, 32, 0, 3, 100, 64, 128}
	for range n {
		k := []trace.Kind{trace.Read, trace.Write, trace.Modify, trace.IFetch, trace.IFetch}[r.IntN(5)]
		if k == trace.IFetch && !ifetch {
			k = trace.Read
		}
		a := uint64(r.IntN(6000))
		switch {
		case k == trace.IFetch:
			a = 1<<20 + uint64(r.IntN(3000))
		case r.IntN(500) == 0:
			a = ^uint64(0) - uint64(r.IntN(200))
		case r.IntN(3) == 0:
			a = uint64(r.IntN(64)) * 64 // whole lines
		}
		size := sizes[r.IntN(len(sizes))]
		if k == trace.IFetch {
			size = uint32(1 + r.IntN(15))
		}
		b.Append(k, a, size, 0, 0)
	}
	return b
}

// runHarness runs the model on events and returns what it sends below and
// its counters as events.
func runHarness(t *testing.T, harness, ispec, dspec string, events *trace.Batch) *trace.Batch {
	t.Helper()
	var in bytes.Buffer
	for i, k := range events.Kind {
		kind := map[trace.Kind]uint64{trace.Read: 0, trace.Write: 1, trace.IFetch: 2, trace.Modify: 3}[k]
		binary.Write(&in, binary.LittleEndian, [3]uint64{kind, events.Addr[i], uint64(events.Size[i])})
	}
	cmd := exec.Command(harness, ispec, dspec)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ms_l1_harness %s %s: %v", ispec, dspec, err)
	}
	words := make([]uint64, len(out)/8)
	binary.Read(bytes.NewReader(out), binary.LittleEndian, words)
	b := trace.NewBatch(len(words) / 3)
	for len(words) >= 3 {
		w := words[:3]
		words = words[3:]
		if w[0] == ^uint64(0) {
			b.AppendExt(trace.FirstLevel, 0, 0, 0, trace.Ext{Stack: words[:w[2]]})
			break
		}
		b.Append(belowKinds[w[0]], w[1], uint32(w[2]), 0, 0)
	}
	return b
}

// firstLines shows where got first differs from want.
func firstLines(got, want []byte) string {
	gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := range min(len(gl), len(wl)) {
		if !bytes.Equal(gl[i], wl[i]) {
			lo := max(0, i-8)
			return "got:\n" + string(bytes.Join(gl[lo:min(len(gl), i+3)], []byte("\n"))) +
				"\nwant:\n" + string(bytes.Join(wl[lo:min(len(wl), i+3)], []byte("\n")))
		}
	}
	return "lengths differ"
}

// TestFirstLevelNotesModel checks the tool's first-level cache model with
// --l1-notes (ms_l1.c, built for the host with tool/ms_l1_harness.c)
// against the engine when it attributes misses only: on random
// references run as superblocks in calling contexts, threads and heap
// blocks, the engine fed the superblocks' executions with the accesses the
// model notes (trace.Exec events) and its end-of-trace flush gives the
// profile that the engine gives on the references themselves, byte for
// byte: every function, object, pair, reference, evictor, calling context
// and the timeline.
func TestFirstLevelNotesModel(t *testing.T) {
	harness := buildHarness(t)
	opt := sim.Options{Attribute: true, MissOnly: true, TimelineInterval: 5001}
	for name, specs := range l1Machines {
		t.Run(name, func(t *testing.T) {
			m, err := machine.FromSpecs(specs, 100)
			if err != nil {
				t.Fatal(err)
			}
			for seed := range uint64(4) {
				ifetch := seed%2 == 0 && (m.Caches[0].HoldsInstructions() || m.Caches[1].Holds == machine.Instructions)
				refs := randomRefs(seed, 60000, ifetch)
				full, execs, order := randomRun(seed, refs)
				want := attributedProfile(t, m, opt, full)
				h, err := sim.New(m, opt)
				if err != nil {
					t.Fatal(err)
				}
				d, i, ok := h.TracerNotes(ifetch)
				if !ok {
					t.Fatalf("the tool would not note the first caches of %s", name)
				}
				ispec := "-"
				if i >= 0 {
					ispec = cacheArg(i, &m.Caches[i])
				}
				notes, end := runNotes(t, harness, ispec, cacheArg(d, &m.Caches[d]), refs)
				for i, ns := range notes {
					at := order[i]
					for _, n := range ns {
						n.Event = at.event
						execs[at.exec].acc = append(execs[at.exec].acc, n)
					}
				}
				b := trace.NewBatch(len(execs))
				for _, p := range execs {
					if p.block == nil {
						b.AppendEvent(p.events, p.at)
					} else {
						b.AppendExec(p.block, 0, p.tid, p.acc)
					}
				}
				for i, k := range end.Kind {
					if k == trace.FirstLevel {
						b.Append(k, 0, uint32(len(b.Ext)), 0, 0)
						b.Ext = append(b.Ext, *end.ExtOf(i))
						continue
					}
					b.AppendEvent(end, i)
				}
				got := attributedProfile(t, m, opt, b)
				if !bytes.Equal(got, want) {
					t.Errorf("seed %d (ifetch %v): the profile from the model's notes differs from the engine's:\n%s",
						seed, ifetch, firstLines(got, want))
				}
			}
		})
	}
}

// runPart is an event of the run of a randomRun with Exec events: event
// at of events, or an execution of block on thread tid with the accesses
// acc.
type runPart struct {
	events *trace.Batch
	at     int
	block  *trace.Block
	tid    uint32
	acc    []trace.L1Access
}

// noteRef locates a reference of a randomRun: its execution (the index
// of its block) and its event in the block.
type noteRef struct{ exec, event int32 }

// randomRun makes of refs a run of superblocks (each executes once, 1 to
// 8 references, its data references at a few PCs) on two threads, with
// calls and returns between them and heap blocks allocated and freed: the
// events themselves (full), the same run with trace.Exec events in place
// of the references (execs: the blocks and their events in order, the
// Exec events to be made), and where each reference went.
func randomRun(seed uint64, refs *trace.Batch) (full *trace.Batch, execs []runPart, order []noteRef) {
	r := rand.New(rand.NewPCG(seed, 2027))
	full = trace.NewBatch(refs.Len())
	other := trace.NewBatch(64)
	both := func(k trace.Kind, addr, pc uint64, tid uint32, e trace.Ext) {
		full.AppendExt(k, addr, pc, tid, e)
		other.AppendExt(k, addr, pc, tid, e)
		execs = append(execs, runPart{events: other, at: other.Len() - 1})
	}
	sp := map[uint32]uint64{1: 1 << 40, 2: 1 << 41}
	both(trace.Alloc, 512, 0x401000, 1, trace.Ext{Size: 1500, Name: "malloc", Stack: []uint64{0x401000}})
	both(trace.Alloc, 3000, 0x401010, 1, trace.Ext{Size: 800, Name: "malloc", Stack: []uint64{0x401010}})
	tid := uint32(1)
	for i := 0; i < refs.Len(); {
		switch r.IntN(12) {
		case 0:
			tid = 3 - tid
		case 1, 2:
			sp[tid] -= 64
			both(trace.Call, 0x500000+uint64(r.IntN(6))*0x100, 0x400800+uint64(r.IntN(20)), tid, trace.Ext{SP: sp[tid]})
		case 3:
			if sp[tid]&0xfff != 0 {
				sp[tid] += 64
				both(trace.Return, 0x400900, 0x400a00, tid, trace.Ext{SP: sp[tid]})
			}
		case 4:
			if r.IntN(50) == 0 {
				both(trace.Free, 512, 0x401020, tid, trace.Ext{Size: 1500, Name: "free"})
				both(trace.Alloc, 512, 0x401030, tid, trace.Ext{Size: 700, Name: "malloc", Stack: []uint64{0x401030}})
			}
		}
		n := min(1+r.IntN(8), refs.Len()-i)
		blk := &trace.Block{}
		var x trace.BlockExit
		for j := range n {
			k, a, s := refs.Kind[i+j], refs.Addr[i+j], refs.Size[i+j]
			pc := a
			x.Add(k, s)
			if k != trace.IFetch {
				pc = 0x400000 + uint64(r.IntN(40))*4
			}
			full.Append(k, a, s, pc, tid)
			blk.Kind, blk.Size, blk.PC = append(blk.Kind, k), append(blk.Size, s), append(blk.PC, pc)
			order = append(order, noteRef{int32(len(execs)), int32(j)})
		}
		x.Events = int32(n)
		blk.Exits = []trace.BlockExit{x}
		execs = append(execs, runPart{block: blk, tid: tid})
		i += n
	}
	return full, execs, order
}

// runNotes runs the model with --l1-notes on the references of order
// (those of the executions, in order), and returns the accesses it noted
// by reference, then its flush's write-backs and counters as events.
func runNotes(t *testing.T, harness, ispec, dspec string, refs *trace.Batch) (notes [][]trace.L1Access, end *trace.Batch) {
	t.Helper()
	var in bytes.Buffer
	for i, k := range refs.Kind {
		kind := map[trace.Kind]uint64{trace.Read: 0, trace.Write: 1, trace.IFetch: 2, trace.Modify: 3}[k]
		binary.Write(&in, binary.LittleEndian, [3]uint64{kind, refs.Addr[i], uint64(refs.Size[i])})
	}
	cmd := exec.Command(harness, ispec, dspec, "notes")
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ms_l1_harness %s %s notes: %v", ispec, dspec, err)
	}
	words := make([]uint64, len(out)/8)
	binary.Read(bytes.NewReader(out), binary.LittleEndian, words)
	notes = make([][]trace.L1Access, refs.Len())
	end = trace.NewBatch(16)
	for len(words) >= 3 {
		w := words[0]
		switch {
		case w == ^uint64(0):
			end.AppendExt(trace.FirstLevel, 0, 0, 0, trace.Ext{Stack: words[3 : 3+words[2]]})
			words = nil
		case w&16 != 0:
			i := words[1]
			notes[i] = append(notes[i], trace.L1Access{Addr: words[2], Size: uint32(words[3]), Victim: words[4],
				Kind: noteKinds[w>>8&3], Flags: uint8(w >> 16)})
			words = words[5:]
		default:
			end.Append(belowKinds[w], words[1], uint32(words[2]), 0, 0)
			words = words[3:]
		}
	}
	return notes, end
}

// attributedProfile returns the JSON of the engine's profile of m with
// opt (attributing or not: sim.Options{} is the plain engine) on events.
func attributedProfile(t *testing.T, m *machine.Machine, opt sim.Options, events *trace.Batch) []byte {
	t.Helper()
	h, err := sim.New(m, opt)
	if err != nil {
		t.Fatal(err)
	}
	h.Process(events)
	h.Finish()
	out, err := json.MarshalIndent(h.Profile(), "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return out
}
