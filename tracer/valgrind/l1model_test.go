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

// TestFirstLevelModel checks the tool's first-level cache model (ms_l1.c,
// built for the host with tool/ms_l1_harness.c) against the engine: on
// random references, the engine fed what the model sends below and its
// counters (trace.BelowRead... and trace.FirstLevel events) gives the
// profile that the engine gives on the references themselves, byte for
// byte.
func TestFirstLevelModel(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc")
	}
	harness := filepath.Join(t.TempDir(), "ms_l1_harness")
	if out, err := exec.Command(gcc, "-O2", "-Wall", "-Werror", "-o", harness, "tool/ms_l1_harness.c", "tool/ms_l1.c").CombinedOutput(); err != nil {
		t.Fatalf("building the harness: %v\n%s", err, out)
	}
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
				want := engineProfile(t, m, events)
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
				got := engineProfile(t, m, below)
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

// engineProfile returns the JSON of the engine's profile of m on events.
func engineProfile(t *testing.T, m *machine.Machine, events *trace.Batch) []byte {
	t.Helper()
	h, err := sim.New(m, sim.Options{})
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
