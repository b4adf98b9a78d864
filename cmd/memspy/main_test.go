package main

import (
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/memspy/memspy/profile"
	"github.com/memspy/memspy/tracer/valgrind"
	"github.com/memspy/memspy/tracer/valgrind/valgrindtest"
)

var update = flag.Bool("update", false, "rewrite the golden files of the scripts in testdata/script")

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"memspy": main,
		// fakevalgrind stands in for valgrind in runfake.txtar.
		"fakevalgrind": func() { os.Exit(valgrindtest.FakeValgrind()) },
	})
}

// TestScripts runs the command-line scripts in testdata/script. Each runs in
// a fresh directory where `traces` links to ../shared/traces.
func TestScripts(t *testing.T) {
	shared, err := filepath.Abs(filepath.Join("..", "..", "..", "shared", "traces"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(shared); err != nil {
		t.Fatalf("the shared traces are missing: %v", err)
	}
	toolLib := ""
	if _, err := os.Stat(filepath.Join(toolDir(), valgrind.ToolFile)); err == nil {
		if _, err := exec.LookPath("valgrind"); err == nil {
			toolLib = toolDir()
		}
	}
	testscript.Run(t, testscript.Params{
		Dir:           filepath.Join("testdata", "script"),
		UpdateScripts: *update,
		Setup: func(env *testscript.Env) error {
			if toolLib != "" {
				env.Setenv("MEMSPY_VALGRIND_LIB", toolLib)
			}
			// The directory of memspy.h, for programs with markers.
			include, err := filepath.Abs(filepath.Join("..", "..", "tracer", "valgrind", "tool"))
			if err != nil {
				return err
			}
			env.Setenv("MEMSPY_INCLUDE", include)
			// The example programs (examples/where).
			examples, err := filepath.Abs(filepath.Join("..", "..", "examples"))
			if err != nil {
				return err
			}
			env.Setenv("EXAMPLES", examples)
			return os.Symlink(shared, filepath.Join(env.WorkDir, "traces"))
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "valgrindtool":
				// The memspy Valgrind tool is built (make test sets
				// MEMSPY_REQUIRE_TOOL=1 to fail without it).
				if toolLib == "" && os.Getenv("MEMSPY_REQUIRE_TOOL") != "" {
					return false, fmt.Errorf("the memspy Valgrind tool is required but not built in %s", toolDir())
				}
				return toolLib != "", nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// truncate FILE N: cut FILE to its first N bytes.
			"truncate": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 2 {
					ts.Fatalf("usage: truncate FILE N")
				}
				n, err := strconv.ParseInt(args[1], 10, 64)
				ts.Check(err)
				ts.Check(os.Truncate(ts.MkAbs(args[0]), n))
			},
			// samestats A B: the profiles A and B have the same cache and
			// memory counters and where-and-why entries (event counts may differ:
			// xdin writes a modify as a read and a write).
			"samestats": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 2 {
					ts.Fatalf("usage: samestats A B")
				}
				a, b := readProfile(ts, args[0]), readProfile(ts, args[1])
				diff := cmp.Diff(a.Caches, b.Caches) + cmp.Diff(a.Memory, b.Memory) + cmp.Diff(a.Functions, b.Functions) +
					cmp.Diff(a.Objects, b.Objects) + cmp.Diff(a.Pairs, b.Pairs) + cmp.Diff(a.Lines, b.Lines) + cmp.Diff(a.References, b.References)
				if same := diff == ""; same == neg {
					ts.Fatalf("%s and %s: same counters = %v (-%s +%s):\n%s", args[0], args[1], same, args[0], args[1], diff)
				}
			},
			// evalmatches EVAL FULL SAMPLED: the sample-eval JSON EVAL
			// reports the miss rate of the focus cache of the profile FULL
			// as the truth, and the estimate and bounds the sampled
			// profile SAMPLED gives.
			"evalmatches": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 3 {
					ts.Fatalf("usage: evalmatches EVAL FULL SAMPLED")
				}
				data, err := os.ReadFile(ts.MkAbs(args[0]))
				ts.Check(err)
				var ev profile.Evaluation
				ts.Check(json.Unmarshal(data, &ev))
				full, sampled := readProfile(ts, args[1]), readProfile(ts, args[2])
				// Every cache's evaluation, and the focus cache's at the
				// top, must be what the two profiles give.
				matches := func(name string, e profile.MissRateEvaluation) bool {
					fc, ok1 := full.Cache(name)
					sc, ok2 := sampled.Cache(name)
					if !ok1 || !ok2 || sc.Sampled == nil {
						ts.Fatalf("no sampled cache %q in %s and %s", name, args[1], args[2])
					}
					est, lo, hi := sc.Sampled.Estimate(sampled.Sampling.MuOf(sc.Sampled))
					truth := float64(fc.Misses) / float64(fc.Accesses)
					if e.TrueMissRate != truth || e.EstimatedMissRate != est || e.Lower != lo || e.Upper != hi {
						ts.Logf("%s: evaluation %+v; from the profiles: truth %v, estimate %v [%v, %v]", name, e, truth, est, lo, hi)
						return false
					}
					return true
				}
				same := matches(ev.Focus, ev.MissRateEvaluation) && ev.Ratio == sampled.Sampling.Ratio() &&
					len(ev.Caches) == len(sampled.Caches)
				for _, c := range ev.Caches {
					same = matches(c.Cache, c.MissRateEvaluation) && same
				}
				if same == neg {
					ts.Fatalf("evaluation %+v against the profiles: ratio %v, %d caches", ev, sampled.Sampling.Ratio(), len(sampled.Caches))
				}
			},
			// eventsdiff A B N: profile A has N more events than B.
			"eventsdiff": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 3 {
					ts.Fatalf("usage: eventsdiff A B N")
				}
				n, err := strconv.ParseUint(args[2], 10, 64)
				ts.Check(err)
				a, b := readProfile(ts, args[0]), readProfile(ts, args[1])
				if (a.Events == b.Events+n) == neg {
					ts.Fatalf("%s has %d events, %s %d: difference %d, want %d", args[0], a.Events, args[1], b.Events, a.Events-b.Events, n)
				}
			},
			// sharing PROFILE OBJECT KIND MIN: of OBJECT's invalidation
			// misses at the focus cache (at least 100), the share of KIND
			// (true or false) sharing is at least MIN percent; with !, below.
			"sharing": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 4 {
					ts.Fatalf("usage: sharing PROFILE OBJECT true|false MIN")
				}
				min, err := strconv.ParseFloat(args[3], 64)
				ts.Check(err)
				p := readProfile(ts, args[0])
				for _, o := range p.Objects {
					if o.Name != args[1] {
						continue
					}
					c := o.Causes
					n := c.TrueSharing
					if args[2] == "false" {
						n = c.FalseSharing
					}
					share := 100 * float64(n) / float64(max(c.Invalidation, 1))
					if c.Invalidation < 100 || (share >= min) == neg {
						ts.Fatalf("%s: %s sharing is %d of %d invalidation misses (%.1f%%), want %s %.1f%% of at least 100",
							args[1], args[2], n, c.Invalidation, share, map[bool]string{false: "at least", true: "below"}[neg], min)
					}
					return
				}
				ts.Fatalf("%s: no object %q", args[0], args[1])
			},
			// procsum PROFILE: the processors' private caches add up to the
			// totals of the caches.
			"procsum": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 1 {
					ts.Fatalf("usage: procsum PROFILE")
				}
				p := readProfile(ts, args[0])
				if len(p.Processors) < 2 {
					ts.Fatalf("%s: %d processors", args[0], len(p.Processors))
				}
				for i, c := range p.Processors[0].Caches {
					var copies []profile.CacheStats
					for _, q := range p.Processors {
						copies = append(copies, q.Caches[i])
					}
					sum := profile.Sum(copies)
					total, ok := p.Cache(c.Name)
					sum.Causes = total.Causes
					if d := cmp.Diff(*total, sum); !ok || d != "" {
						ts.Fatalf("%s: cache %s: processors do not add up to the total (-total +sum):\n%s", args[0], c.Name, d)
					}
				}
			},
			// treesum PROFILE VAR: the processes of a process tree add up to
			// its totals, and their summaries hold no where-and-why; VAR is
			// set to the pid of its last process.
			"treesum": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 2 {
					ts.Fatalf("usage: treesum PROFILE VAR")
				}
				p := readProfile(ts, args[0])
				if len(p.Processes) < 2 {
					ts.Fatalf("%s: %d processes", args[0], len(p.Processes))
				}
				var events, misses, accesses uint64
				for _, pr := range p.Processes {
					q := pr.Profile
					events += q.Events
					misses += q.Caches[0].Misses
					accesses += q.Caches[0].Accesses
					if q.Options.Where || len(q.Functions)+len(q.Objects)+len(q.References) > 0 {
						ts.Fatalf("%s: process %d keeps where-and-why", args[0], pr.Pid)
					}
				}
				if events != p.Events || misses != p.Caches[0].Misses || accesses != p.Caches[0].Accesses {
					ts.Fatalf("%s: processes add up to %d events, %d misses, %d accesses; the total has %d, %d, %d",
						args[0], events, misses, accesses, p.Events, p.Caches[0].Misses, p.Caches[0].Accesses)
				}
				if p.Options.Where {
					var fa uint64
					for _, f := range p.Functions {
						fa += f.Accesses
					}
					if fa != p.Caches[0].Accesses-p.Caches[0].IFetches {
						ts.Fatalf("%s: the functions' accesses add up to %d, the cache's data accesses are %d", args[0], fa, p.Caches[0].Accesses-p.Caches[0].IFetches)
					}
				}
				ts.Setenv(args[1], fmt.Sprint(p.Processes[len(p.Processes)-1].Pid))
			},
			// invalidations PROFILE OBJECT MAX: OBJECT had at most MAX
			// invalidation misses.
			"invalidations": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 3 {
					ts.Fatalf("usage: invalidations PROFILE OBJECT MAX")
				}
				most, err := strconv.ParseUint(args[2], 10, 64)
				ts.Check(err)
				p := readProfile(ts, args[0])
				for _, o := range p.Objects {
					if o.Name == args[1] {
						if n := o.Causes.Invalidation; (n <= most) == neg {
							ts.Fatalf("%s: %d invalidation misses, want %s %d", args[1], n, map[bool]string{false: "at most", true: "more than"}[neg], most)
						}
						return
					}
				}
				ts.Fatalf("%s: no object %q", args[0], args[1])
			},
			// numalocal PROFILE OBJECT MIN: at least MIN percent of the
			// NUMA misses on OBJECT (at least 100) were local.
			"numalocal": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 3 {
					ts.Fatalf("usage: numalocal PROFILE OBJECT MIN")
				}
				min, err := strconv.ParseFloat(args[2], 64)
				ts.Check(err)
				p := readProfile(ts, args[0])
				if p.Numa == nil {
					ts.Fatalf("%s: no NUMA statistics", args[0])
				}
				for _, o := range p.Numa.Objects {
					if o.Name != args[1] {
						continue
					}
					share := 100 * float64(o.Local) / float64(max(o.Misses(), 1))
					if o.Misses() < 100 || (share >= min) == neg {
						ts.Fatalf("%s: %d of %d misses local (%.1f%%), want %s %.1f%% of at least 100",
							args[1], o.Local, o.Misses(), share, map[bool]string{false: "at least", true: "below"}[neg], min)
					}
					return
				}
				ts.Fatalf("%s: no NUMA object %q", args[0], args[1])
			},
			// gzip SRC DST: compress SRC into DST.
			"gzipfile": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 2 {
					ts.Fatalf("usage: gzipfile SRC DST")
				}
				ts.Check(gzipFile(ts.MkAbs(args[0]), ts.MkAbs(args[1])))
			},
		},
	})
}

// toolDir returns where the memspy Valgrind tool should be:
// $MEMSPY_VALGRIND_LIB, else ../../bin/valgrind.
func toolDir() string {
	if d := os.Getenv("MEMSPY_VALGRIND_LIB"); d != "" {
		return d
	}
	d, _ := filepath.Abs(filepath.Join("..", "..", "bin", "valgrind"))
	return d
}

func readProfile(ts *testscript.TestScript, name string) *profile.Profile {
	f, err := os.Open(ts.MkAbs(name))
	ts.Check(err)
	defer f.Close()
	p, err := profile.Read(f)
	ts.Check(err)
	return p
}

func gzipFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	zw := gzip.NewWriter(f)
	if _, err := zw.Write(data); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return f.Close()
}
