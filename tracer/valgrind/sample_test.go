package valgrind

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/memspy/memspy/sample"
	"github.com/memspy/memspy/trace"
)

// sref is a memory reference, compactly (runs hold millions).
type sref struct {
	k    trace.Kind
	size uint32
	addr uint64
	pc   uint64
}

// posEvent is an event that is not a reference, with the number of
// references (recorded or skipped) before it.
type posEvent struct {
	pos uint64
	e   ev
}

// sampledRun is what a run delivered: the references recorded and their
// positions among all references (recorded or skipped), the other events
// with their positions, and the number of references in all.
type sampledRun struct {
	refs   []sref
	pos    []uint64
	other  []posEvent
	total  uint64
	skips  int
	stdout string
}

// traceSampled runs exe under the tool with opt and collects its events.
func traceSampled(t *testing.T, exe string, opt Options, args ...string) sampledRun {
	t.Helper()
	run, stdout := startTool(t, exe, opt, args...)
	var r sampledRun
	readAllOK(t, run, exe, func(b *trace.Batch) {
		for i, k := range b.Kind {
			switch {
			case k.IsAccess():
				r.refs = append(r.refs, sref{k, b.Size[i], b.Addr[i], b.PC[i]})
				r.pos = append(r.pos, r.total)
				r.total++
			case k == trace.Skip:
				r.total += b.Addr[i]
				r.skips++
			case k.IsExtended():
				x := b.ExtOf(i)
				e := ev{k, b.Addr[i], 0, b.PC[i], b.Thread[i], xev{x.Size, x.SP, stackString(x.Stack), x.Type, x.Name, x.Mark, x.Sync}}
				r.other = append(r.other, posEvent{r.total, e})
			default:
				t.Fatalf("event of kind %v", k)
			}
		}
	})
	r.stdout = stdout.String()
	return r
}

// recorded returns the index of the reference recorded at position p, or -1.
func (r sampledRun) recorded(p uint64) int {
	i := sort.Search(len(r.pos), func(i int) bool { return r.pos[i] >= p })
	if i < len(r.pos) && r.pos[i] == p {
		return i
	}
	return -1
}

// events returns the events that are not Map events (an object is reported
// at the first translation of code after its mapping, which comes earlier
// when sampling discards translations), without the markers if noMarks,
// and without their thread (a process id of its own in every run).
func (r sampledRun) events(noMarks bool) []posEvent {
	var out []posEvent
	for _, o := range r.other {
		if o.e.K != trace.Map && !(noMarks && o.e.K == trace.Marker) {
			o.e.T = 0
			out = append(out, o)
		}
	}
	return out
}

// buildSampling compiles examples/sampling/NAME.c statically and not
// position-independent (so that two runs make the same references).
func buildSampling(t *testing.T, name string, extra ...string) string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), name)
	args := append([]string{"-O2", "-g", "-static", "-no-pie", "-I", "tool", "-o", exe,
		filepath.Join("..", "..", "examples", "sampling", name+".c")}, extra...)
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %v: %v\n%s", args, err, out)
	}
	return exe
}

// checkSame checks that every reference recorded is the one the full run
// made at its position, and that the other events are the full run's, at
// the same positions (but the markers if noMarks).
func checkSame(t *testing.T, full, got sampledRun, noMarks bool) {
	t.Helper()
	if got.stdout != full.stdout {
		t.Errorf("output %q, full run %q", got.stdout, full.stdout)
	}
	if got.total != full.total {
		t.Errorf("%d references recorded and skipped, the full run has %d", got.total, full.total)
	}
	for i, p := range got.pos {
		if p >= full.total || got.refs[i] != full.refs[p] {
			t.Fatalf("reference %d is %+v, not the full run's", p, got.refs[i])
		}
	}
	if g, f := got.events(noMarks), full.events(noMarks); !slices.Equal(g, f) {
		for i := range min(len(g), len(f)) {
			if g[i] != f[i] {
				t.Fatalf("event %d (of %d) is %+v, the full run's (of %d) %+v", i, len(g), g[i], len(f), f[i])
			}
		}
		t.Fatalf("%d events but references, the full run has %d", len(g), len(f))
	}
}

// checkInterval checks that every reference of [lo, hi) is recorded as
// the full run made it.
func checkInterval(t *testing.T, what string, full, got sampledRun, lo, hi uint64) {
	t.Helper()
	for p := lo; p < min(hi, full.total); p++ {
		i := got.recorded(p)
		if i < 0 {
			t.Fatalf("%s [%d, %d): reference %d not recorded", what, lo, hi, p)
		}
		if got.refs[i] != full.refs[p] {
			t.Fatalf("%s: reference %d is %+v, the full run's %+v", what, p, got.refs[i], full.refs[p])
		}
	}
}

// Time sampling: the tool records every reference of every sample's
// [Warm, End), the same as a full run makes; the references recorded and
// skipped add up to the full run's; calls, returns, allocations and
// markers are the same, at the same positions. Also with --trace-fn
// (references outside the function are neither recorded nor counted) and
// --no-stack.
func TestToolSampleTime(t *testing.T) {
	exe := buildSampling(t, "jacobi")
	args := []string{"64", "40"}
	for _, tc := range []struct {
		name, spec string
		opt        Options
	}{
		{"plain", "ratio=0.1,length=20k", Options{}},
		{"ifetch", "ratio=0.1,length=20k,jitter=0.5,warmup=5k,seed=7", Options{IFetch: true}},
		{"jitter", "ratio=0.02,length=3000,jitter=1,warmup=20k,seed=3", Options{}},
		{"trace-fn", "ratio=0.02,length=4000", Options{TraceFn: "relax_row", NoStack: true}},
		// Gaps in the first period longer than the tool's MIN_GAP: its
		// samples are gated, not recorded through.
		{"first", "ratio=0.01,length=4000,first=4,jitter=1,seed=5", Options{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec, err := sample.Parse(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			full := traceSampled(t, exe, tc.opt, args...)
			opt := tc.opt
			opt.Sample = spec
			got := traceSampled(t, exe, opt, args...)
			checkSame(t, full, got, false)
			sc, err := spec.Schedule(0)
			if err != nil {
				t.Fatal(err)
			}
			k := uint64(0)
			for ; sc.Window(k).Warm < full.total; k++ {
				w := sc.Window(k)
				checkInterval(t, "window", full, got, w.Warm, w.End)
			}
			if got.skips == 0 || uint64(len(got.refs)) >= full.total*3/4 {
				t.Errorf("%d references of %d recorded, in %d gaps", len(got.refs), full.total, got.skips)
			}
			t.Logf("%d windows: %d references of %d recorded (%.1f%%), %d SKIP events", k, len(got.refs), full.total,
				100*float64(len(got.refs))/float64(full.total), got.skips)
		})
	}
}

// stepIntervals returns the references [begin, end) of each outermost
// timestep of a run, from its sample markers.
func stepIntervals(r sampledRun) [][2]uint64 {
	var steps [][2]uint64
	depth := 0
	for _, o := range r.other {
		if o.e.K != trace.Marker {
			continue
		}
		switch o.e.X.Mark {
		case trace.MarkSampleBegin:
			if depth++; depth == 1 {
				steps = append(steps, [2]uint64{o.pos, 0})
			}
		case trace.MarkSampleEnd:
			if depth--; depth == 0 {
				steps[len(steps)-1][1] = o.pos
			}
		}
	}
	return steps
}

// checkSteps checks that got recorded exactly the references of the taken
// timesteps, as the full run made them, and elsewhere only the modifies
// of atomics (whose sync events a gap keeps).
func checkSteps(t *testing.T, full, got sampledRun, steps [][2]uint64, f float64) {
	t.Helper()
	in := 0
	taken := 0
	for i, s := range steps {
		if sample.TakesStep(uint64(i), f) {
			checkInterval(t, "timestep", full, got, s[0], s[1])
			in += int(s[1] - s[0])
			taken++
		}
	}
	atomic := map[uint64]bool{}
	for _, o := range got.other {
		if o.e.K == trace.Sync && o.e.X.Sync == trace.SyncAtomic {
			atomic[o.pos] = true
		}
	}
	out := 0
	for i, p := range got.pos {
		inStep := false
		for k, s := range steps {
			inStep = inStep || sample.TakesStep(uint64(k), f) && p >= s[0] && p < s[1]
		}
		if !inStep {
			if !atomic[p] || got.refs[i].k != trace.Modify {
				t.Fatalf("reference %d %+v recorded outside the timesteps taken", p, got.refs[i])
			}
			out++
		}
	}
	if len(got.refs) != in+out {
		t.Errorf("%d references recorded, the %d timesteps taken (of %d) have %d, and %d atomics outside", len(got.refs), taken, len(steps), in, out)
	}
	if taken == 0 || taken == len(steps) {
		t.Errorf("%d timesteps taken of %d", taken, len(steps))
	}
}

// Timestep sampling by markers: exactly the references of the timesteps
// taken are recorded, none of the initialization and finalization; every
// event but the references is there, at its place.
func TestToolSampleTimesteps(t *testing.T) {
	exe := buildSampling(t, "jacobi")
	args := []string{"48", "20"}
	for _, ifetch := range []bool{false, true} {
		full := traceSampled(t, exe, Options{IFetch: ifetch}, args...)
		steps := stepIntervals(full)
		if len(steps) != 20 {
			t.Fatalf("%d timesteps, want 20", len(steps))
		}
		spec := sample.Spec{Timesteps: 0.25}
		got := traceSampled(t, exe, Options{IFetch: ifetch, Sample: spec}, args...)
		checkSame(t, full, got, false)
		checkSteps(t, full, got, steps, spec.Timesteps)
	}
}

// Timestep sampling by function: the tool writes a sample-begin marker at
// each entry of timestep() and a sample-end marker after its return, and
// records exactly the references of the timesteps taken.
func TestToolSampleTimestepFn(t *testing.T) {
	exe := buildSampling(t, "spmv", "-lm")
	args := []string{"24", "12"}
	full := traceSampled(t, exe, Options{}, args...)
	entry := elfSymbol(t, exe, "timestep", 2 /* STT_FUNC */).Value
	// The full run's timesteps: from the call of timestep to the return
	// that leaves it (the stack pointer 8 above the call's).
	var steps [][2]uint64
	var sp uint64
	for _, o := range full.other {
		switch {
		case o.e.K == trace.Call && o.e.Addr == entry && sp == 0:
			steps = append(steps, [2]uint64{o.pos, 0})
			sp = o.e.X.SP
		case o.e.K == trace.Return && sp != 0 && o.e.X.SP == sp+8:
			steps[len(steps)-1][1] = o.pos
			sp = 0
		}
	}
	if len(steps) != 12 || steps[11][1] == 0 {
		t.Fatalf("timesteps %v", steps)
	}
	spec := sample.Spec{Timesteps: 0.25, TimestepFn: "timestep"}
	got := traceSampled(t, exe, Options{Sample: spec}, args...)
	checkSame(t, full, got, true)
	if s := stepIntervals(got); !slices.Equal(s, steps) {
		t.Errorf("timesteps by marker %v, by call %v", s, steps)
	}
	checkSteps(t, full, got, steps, spec.Timesteps)
}

// The tool's sampling options: the time schedule (the jitter's exact
// bits), timesteps in parts per billion; nothing for what the tool does
// not gate (sets, processors, a count of samples).
func TestSampleArgs(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{"ratio=0.1,length=500k", "--sample-period=5000000 --sample-length=500000 --sample-first=10"},
		{"ratio=0.1,first=1", "--sample-period=5000000 --sample-length=500000"},
		{"ratio=0.1,length=3,first=4", "--sample-period=30 --sample-length=3 --sample-first=3"},
		{"ratio=1%,length=1000,warmup=200,jitter=0.1,seed=9",
			"--sample-period=100000 --sample-length=1000 --sample-warmup=200 --sample-jitter=3fb999999999999a --sample-seed=9"},
		{"ratio=0.1,length=200k", "--sample-period=2000000 --sample-length=200000 --sample-first=4"},
		{"ratio=0.1,sets=1/4", "--sample-period=5000000 --sample-length=500000 --sample-first=10"},
		{"timesteps=2.5%", "--sample-steps=25000000"},
		{"timesteps=1/3,timestep-fn=step", "--sample-steps=333333333 --timestep-fn=step"},
		{"sets=1/16", ""},
		{"procs=1/2", ""},
		{"count=10", ""},
	} {
		spec, err := sample.Parse(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		opt := Options{Sample: spec}
		if got := strings.Join(opt.toolArgs(), " "); got != tc.want {
			t.Errorf("%s: tool options %q, want %q", tc.spec, got, tc.want)
		}
	}
}

// Threads: sync.c's synchronization operations are reported in sampling
// gaps as when recording: the same number of each kind whose number does
// not depend on how the threads interleave (locks, calls and atomics
// do: the preload's pthread_create waits by yielding), atomics at least
// the program's own, and the same allocations.
func TestToolSampleSync(t *testing.T) {
	p := syncProgram{exe: buildExample(t, "sync", "-pthread"), threads: 4, n: 100, rounds: 3, m: 50}
	counts := func(r sampledRun) map[string]int {
		c := map[string]int{}
		for _, o := range r.events(false) {
			switch o.e.K {
			case trace.Sync:
				c[o.e.X.Sync.String()]++
			case trace.Alloc, trace.Free:
				c[o.e.K.String()]++
			}
		}
		if c["atomic"] >= p.threads*p.m {
			c["atomic"] = p.threads * p.m
		}
		// Locks: the C library's own (the loader's, at thread set-up and
		// exit) vary with the interleaving, acquires and releases alike
		// (410 and 411 releases seen in two runs).
		delete(c, "acquire")
		delete(c, "release")
		delete(c, "cond-wait")
		delete(c, "cond-wake")
		return c
	}
	full := counts(traceSampled(t, p.exe, Options{}, p.args()...))
	for _, spec := range []string{"ratio=0.05,length=5000", "timesteps=0.5"} {
		s, err := sample.Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		got := traceSampled(t, p.exe, Options{Sample: s}, p.args()...)
		if c := counts(got); fmt.Sprint(c) != fmt.Sprint(full) {
			t.Errorf("%s: events %v, full run %v", spec, c, full)
		}
		if got.skips == 0 {
			t.Errorf("%s: no gap", spec)
		}
	}
}
