package corpus

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/tabwriter"
	"time"
)

// countTolerance is the largest relative difference allowed between
// memspy's counts and cachegrind's.
const countTolerance = 0.001

// tolerances returns the relative differences allowed on p's I refs and D
// refs, and why they are larger than countTolerance ("" when they are not).
func (p program) tolerances() (i, d float64, why string) {
	if p.tol > 0 {
		return p.tol, p.tol, "its threads' scheduling"
	}
	return countTolerance, countTolerance, ""
}

// mode is one way of running a program under memspy.
type mode struct {
	name    string
	flags   []string
	threads bool // only for multi-threaded programs
}

// String returns the command line of the mode.
func (m mode) String() string {
	return strings.Join(append([]string{"memspy run"}, m.flags...), " ")
}

// modes are the ways the corpus runs under memspy.
var modes = []mode{
	{name: "run"},
	{name: "where", flags: []string{"--where"}},
	{name: "where-miss", flags: []string{"--where", "--miss-only"}},
	{name: "procs4", flags: []string{"--procs", "4"}, threads: true},
}

// modes returns the modes p runs in.
func (p program) modes() []mode {
	var ms []mode
	for _, m := range modes {
		if !m.threads || p.threads {
			ms = append(ms, m)
		}
	}
	return ms
}

// memspy runs the program under memspy in mode m (with --stats in the
// benchmark, for memspy's peak memory), writing its profile to a JSON file
// when profile is not "".
func (h *harness) memspy(t *testing.T, in *input, m mode, profile string) proc {
	t.Helper()
	argv := append([]string{h.memspyBin, "run"}, m.flags...)
	if h.big {
		argv = append(argv, "--stats")
	}
	if profile != "" {
		argv = append(argv, "--json", profile)
	}
	argv = append(append(argv, "--"), in.argv...)
	env := append(in.env(), "MEMSPY_VALGRIND_LIB="+h.lib)
	if os.Getenv("MEMSPY_VALGRIND") != "" {
		env = append(env, "MEMSPY_VALGRIND="+h.valgrindBin)
	}
	return h.run(t, in, m.name, argv, env)
}

// valgrind runs the program under another Valgrind tool, in the
// environment it gets under memspy (see underMemspy) but with memspy's
// preload's stand-in (see standIn) in place of the preload: the program
// (and every program it execs) then loads the same libraries at the same
// addresses and does the same start-up work as under memspy. With native,
// it loads no preload beside Valgrind's core, as it would without memspy,
// in an environment of the same size. No run translates with superblock chasing,
// which memspy's tool does not do: cachegrind counts the instructions of
// the blocks VEX speculates into a superblock when chasing, even when they
// do not run (1,164 more I refs on printfg, in the dynamic loader's
// tunables and cache-information code).
func (h *harness) valgrind(t *testing.T, in *input, name string, native bool, args ...string) proc {
	t.Helper()
	argv := append([]string{h.launcher, "--vex-guest-chase=no"}, args...)
	argv = append(append(argv, "--"), in.argv...)
	var env []string
	for _, kv := range in.vgEnv {
		k, v, _ := strings.Cut(kv, "=")
		if k != "LD_PRELOAD" {
			env = append(env, kv)
			continue
		}
		// Valgrind puts its core's preload first again.
		var keep []string
		for _, lib := range filepath.SplitList(v) {
			switch base := filepath.Base(lib); {
			case strings.HasPrefix(base, "vgpreload_core-"):
			case strings.HasPrefix(base, "vgpreload_memspy-"):
				if native {
					// As many colons (empty entries, which the dynamic
					// loader skips) as the stand-in's path has bytes: the
					// environment keeps its size, so the stack keeps its
					// alignment. Without this, how the path's length
					// aligns the program's stack buffers moves mapsort's
					// count by up to ±75,000 instructions.
					keep = append(keep, strings.Repeat(":", len(h.standIn)))
				} else {
					keep = append(keep, h.standIn)
				}
			default:
				keep = append(keep, lib)
			}
		}
		if len(keep) > 0 {
			env = append(env, "LD_PRELOAD="+strings.Join(keep, ":"))
		}
	}
	return h.run(t, in, name, argv, env)
}

// underMemspy returns the environment the program gets under memspy, as
// /usr/bin/env run under memspy in its place prints it. The order of the
// variables matters: getenv and the dynamic loader look through them in
// order, and the same variables in another order change the instruction
// counts (by 0.3% on echo). Debian's valgrind is a shell script that
// orders them its own way before it execs valgrind.bin, and Valgrind
// appends LD_PRELOAD when there is none: so the other tools run
// valgrind.bin (harness.launcher) in this environment.
func (h *harness) underMemspy(t *testing.T, in *input) []string {
	t.Helper()
	probe := *in
	probe.argv, probe.stdin = []string{"/usr/bin/env", "-0"}, ""
	p := h.memspy(t, &probe, mode{name: "env"}, "")
	out, err := os.ReadFile(p.stdout)
	if err != nil || p.exit != 0 {
		t.Fatalf("memspy run -- /usr/bin/env -0: exit status %d, %v; standard error ends %s", p.exit, err, tail(readFile(p.stderr), 5))
	}
	return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
}

// reference is the program's run under cachegrind and its counts.
type reference struct {
	proc
	main counts   // those of the program's own process (of its last program, if it execs)
	all  []counts // those of every process (its last program), in the order they started
	err  error    // why there are no counts
}

// cachegrind runs the program under cachegrind (see valgrind), following
// its children, and reads the counts of every process.
func (h *harness) cachegrind(t *testing.T, in *input, native bool) reference {
	t.Helper()
	name := "cachegrind"
	if native {
		name += "-native"
	}
	out := filepath.Join(in.out, name+".out")
	p := h.valgrind(t, in, name, native, "--tool=cachegrind", "--cache-sim=yes", "--trace-children=yes", "--cachegrind-out-file="+out+".%p")
	r := reference{proc: p}
	r.main, r.all, r.err = cachegrindTree(out, p.pid)
	return r
}

// outcome is how a run under memspy compared with the native one.
type outcome struct {
	stdoutOK bool
	di, dd   float64 // relative differences from cachegrind's counts (NaN: not compared)
	problems []string
}

// ok says whether the run behaved as natively and counted as expected.
func (o *outcome) ok() bool { return len(o.problems) == 0 }

// compare checks a run under memspy against the native run and
// cachegrind's counts. tl is what the plain run's profile counted: when
// memspy followed the program's children, its counts, less those of the
// programs that exec'd another, must equal those of every process
// cachegrind traced; otherwise they must equal those of the program's own
// process. In the benchmark the counts are only measured: the tolerances
// are for the fast inputs.
func (h *harness) compare(p program, native, ms proc, ref reference, tl tally) *outcome {
	o := &outcome{di: math.NaN(), dd: math.NaN()}
	failf := func(format string, args ...any) { o.problems = append(o.problems, fmt.Sprintf(format, args...)) }
	if ms.exit != native.exit {
		failf("exit status %d, native %d", ms.exit, native.exit)
	}
	want, err1 := os.ReadFile(native.stdout)
	out, err2 := os.ReadFile(ms.stdout)
	stderr, err3 := os.ReadFile(ms.stderr)
	if err := cmpErr(err1, err2, err3); err != nil {
		failf("%v", err)
		return o
	}
	at := firstDiff(want, out)
	o.stdoutOK = at < 0
	if !o.stdoutOK {
		failf("standard output differs from native's at byte %d (native %d bytes, memspy %d): native %s, memspy %s",
			at, len(want), len(out), excerpt(want, at), excerpt(out, at))
	}
	got, ok := memspyCounts(stderr)
	if !ok {
		failf("no memspy summary on standard error; its end: %s", tail(stderr, 5))
		return o
	}
	if p.noCounts != "" && !tl.tree {
		return o
	}
	if ref.err != nil {
		failf("no cachegrind counts: %v; cachegrind's standard error ends %s", ref.err, tail(readFile(ref.stderr), 5))
		return o
	}
	wantc, whose := ref.main, "the program's process"
	if tl.tree {
		if len(tl.ended) != len(ref.all) {
			failf("memspy traced %d programs to their end, cachegrind %d", len(tl.ended), len(ref.all))
		}
		got, wantc, whose = got.minus(tl.execd), counts{}, "every process"
		for _, c := range ref.all {
			wantc = wantc.plus(c)
		}
	}
	o.di = float64(got.i-wantc.i) / float64(max(wantc.i, 1))
	o.dd = float64(got.d-wantc.d) / float64(max(wantc.d, 1))
	if h.big {
		return o
	}
	ti, td, why := p.tolerances()
	if why != "" {
		why = " (" + why + ")"
	}
	if math.Abs(o.di) > ti {
		failf("instruction fetches %d, cachegrind's I refs of %s %d: %+.3f%%, allowed ±%.3f%%%s", got.i, whose, wantc.i, 100*o.di, 100*ti, why)
	}
	if math.Abs(o.dd) > td {
		failf("data references %d, cachegrind's D refs of %s %d: %+.3f%%, allowed ±%.3f%%%s", got.d, whose, wantc.d, 100*o.dd, 100*td, why)
	}
	return o
}

// cmpErr returns the first non-nil error.
func cmpErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// readFile returns the contents of a file, or the error reading it.
func readFile(path string) []byte {
	data, err := os.ReadFile(path)
	if err != nil {
		return []byte(err.Error())
	}
	return data
}

// result is a run of a program under memspy in one mode.
type result struct {
	mode mode
	proc
	*outcome
}

// check runs the program natively, under cachegrind and under memspy in
// each of its modes (the plain one first, writing the profile whose
// process tree the others are compared by), and reports each problem as
// an error.
func (h *harness) check(t *testing.T, p program) (in *input, native proc, ref reference, results []result) {
	t.Helper()
	in = h.prepare(t, p)
	native = h.run(t, in, "native", in.argv, in.env())
	ref = h.cachegrind(t, in, false)
	var tl tally
	for k, m := range p.modes() {
		profile := ""
		if k == 0 || m.name == "where" && p.names {
			profile = filepath.Join(in.out, m.name+".json")
		}
		ms := h.memspy(t, in, m, profile)
		switch {
		case k == 0:
			var err error
			if tl, err = profileTally(profile); err != nil {
				t.Fatalf("%s, %v: the profile: %v; memspy's standard error ends %s", p.name, m, err, tail(readFile(ms.stderr), 5))
			}
		case profile != "" && !h.big:
			for _, problem := range checkWhere(profile) {
				t.Errorf("%s, %v: %s", p.name, m, problem)
			}
		}
		o := h.compare(p, native, ms, ref, tl)
		for _, problem := range o.problems {
			t.Errorf("%s, %v: %s", p.name, m, problem)
		}
		results = append(results, result{mode: m, proc: ms, outcome: o})
	}
	return in, native, ref, results
}

// TestCorpus runs every program of the corpus natively, under cachegrind
// and under memspy in every mode, and checks that memspy runs it as
// natively and counts what cachegrind counts. With MEMSPY_CORPUS=big it
// runs the benchmark instead.
func TestCorpus(t *testing.T) {
	h := newHarness(t)
	if h.big {
		h.bench(t)
		return
	}
	for _, p := range programs {
		t.Run(p.name, func(t *testing.T) {
			// Two at a time (go test's -parallel is GOMAXPROCS): each run
			// under memspy is two busy processes.
			t.Parallel()
			_, native, ref, results := h.check(t, p)
			for _, r := range results {
				t.Logf("%-10s %-10s I refs Δ%% %s, D refs Δ%% %s (%.1f s; native %.2f s, cachegrind %.1f s)",
					p.name, r.mode.name, pct(r.di), pct(r.dd), r.wall.Seconds(), native.wall.Seconds(), ref.wall.Seconds())
			}
		})
	}
}

// preloadBudget is how many instructions memspy's preload may add to a
// program's run, on the fast input: the dynamic loader maps it and looks
// in it for every symbol it binds (measured in checkouts at two paths:
// 6,576-7,028 on echo, 85,138-85,731 on mapsort, a C++ program binding
// more symbols). TestCorpus leaves this out: there cachegrind's program
// loads the preload's stand-in.
var preloadBudget = map[string]int64{"echo": 12000, "mapsort": 100000}

// TestPreloadCost measures what memspy's preload adds to a program's run
// as natively: cachegrind's I refs with the preload's stand-in against
// those without it.
func TestPreloadCost(t *testing.T) {
	h := newHarness(t)
	if h.big {
		t.Skip("MEMSPY_CORPUS=big runs the benchmark only")
	}
	for _, p := range programs {
		budget, ok := preloadBudget[p.name]
		if !ok {
			continue
		}
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			in := h.prepare(t, p)
			with, without := h.cachegrind(t, in, false), h.cachegrind(t, in, true)
			if err := cmpErr(with.err, without.err); err != nil {
				t.Fatalf("%s: no cachegrind counts: %v", p.name, err)
			}
			d := with.main.i - without.main.i
			if d > budget {
				t.Errorf("%s: memspy's preload adds %d instructions to the run (cachegrind: %d I refs with its stand-in, %d without), more than %d",
					p.name, d, with.main.i, without.main.i, budget)
			}
			t.Logf("%s: the preload adds %d instructions (%+.3f%%)", p.name, d, 100*float64(d)/float64(without.main.i))
		})
	}
}

// bench runs the corpus's big inputs one program at a time and prints a
// table: whether memspy ran each as natively, the count differences from
// cachegrind, wall times and peak memory.
func (h *harness) bench(t *testing.T) {
	var table bytes.Buffer
	w := tabwriter.NewWriter(&table, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "program\tmode\tok\texit\tstdout\tI refs Δ%\tD refs Δ%\tnative s\tmemspy s\t×cachegrind\t×none\tRSS memspy MiB\tRSS max MiB\t")
	for _, p := range programs {
		t.Run(p.name, func(t *testing.T) {
			in, native, ref, results := h.check(t, p)
			none := h.valgrind(t, in, "none", false, "--tool=none", "--trace-children=yes")
			for _, r := range results {
				rss := "?"
				if b, ok := memspyPeakRSS(readFile(r.stderr)); ok {
					rss = mib(b)
				}
				row := fmt.Sprintf("%s\t%s\t%s\t%d/%d\t%s\t%s\t%s\t%.2f\t%.1f\t%.2f\t%.2f\t%s\t%s\t",
					p.name, r.mode.name, yes(r.ok()), r.exit, native.exit, same(r.stdoutOK), pct(r.di), pct(r.dd),
					native.wall.Seconds(), r.wall.Seconds(), ratio(r.wall, ref.wall), ratio(r.wall, none.wall),
					rss, mib(r.maxRSS))
				fmt.Fprintln(w, row)
				t.Log(strings.ReplaceAll(row, "\t", " ")) // progress: the run takes a while

			}
		})
	}
	w.Flush()
	fmt.Printf("\n%s\n", table.String())
	fmt.Println("I/D refs Δ%: memspy's instruction fetches and data references (a modify once) against cachegrind's I refs and D refs, the program loading the preload's stand-in.")
	fmt.Println("×cachegrind, ×none: memspy's wall time over cachegrind's (--cache-sim=yes) and valgrind --tool=none's, all without superblock chasing, following children.")
	fmt.Println("RSS memspy: the memspy process alone (its --stats); RSS max: wait4's ru_maxrss for memspy, the largest of memspy and the valgrind processes running the program (not their sum).")
}

// yes renders a flag.
func yes(b bool) string {
	if b {
		return "yes"
	}
	return "NO"
}

// same renders the stdout comparison.
func same(b bool) string {
	if b {
		return "same"
	}
	return "DIFFERS"
}

// pct renders a relative difference in percent ("-": not compared).
func pct(f float64) string {
	if math.IsNaN(f) {
		return "-"
	}
	return fmt.Sprintf("%+.3f", 100*f)
}

// ratio renders a/b.
func ratio(a, b time.Duration) float64 { return a.Seconds() / b.Seconds() }

// mib renders bytes in MiB.
func mib(b int64) string { return fmt.Sprintf("%.1f", float64(b)/(1<<20)) }
