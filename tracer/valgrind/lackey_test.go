package valgrind

import (
	"bufio"
	"bytes"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memspy/memspy/trace"
	vt "github.com/memspy/memspy/tracer/valgrind/valgrindtest"
)

// toolLib returns the directory of the built tool, or skips the test when
// it is absent (make test sets MEMSPY_REQUIRE_TOOL=1, which fails instead).
func toolLib(t testing.TB) string {
	t.Helper()
	lib := os.Getenv("MEMSPY_VALGRIND_LIB")
	if lib == "" {
		lib, _ = filepath.Abs(filepath.Join("..", "..", "bin", "valgrind"))
	}
	_, err := os.Stat(filepath.Join(lib, "memspy-amd64-linux"))
	if _, verr := exec.LookPath("valgrind"); err != nil || verr != nil {
		if os.Getenv("MEMSPY_REQUIRE_TOOL") != "" {
			t.Fatalf("the memspy Valgrind tool is required but not usable (lib %s: %v; valgrind: %v)", lib, err, verr)
		}
		t.Skipf("the memspy Valgrind tool is not built in %s (run make)", lib)
	}
	return lib
}

// buildC compiles an example C program statically (so that the dynamic
// loader, whose work depends on the environment Valgrind gives each tool,
// does not differ between runs), or dynamically when extra holds
// "-dynamic".
func buildC(t *testing.T, src string, extra ...string) string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(src), ".c"))
	link := "-static"
	if i := slices.Index(extra, "-dynamic"); i >= 0 {
		link, extra = "", slices.Delete(slices.Clone(extra), i, i+1)
	}
	args := append([]string{"-O1", "-g", "-o", exe, src}, extra...)
	if link != "" {
		args = append(args, link)
	}
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %v: %v\n%s", args, err, out)
	}
	return exe
}

// lackeyCounts runs the program under lackey --trace-mem=yes, in exactly
// the environment the memspy tool gives it (lackeyEnv), and counts its I,
// L, S and M records.
func lackeyCounts(t *testing.T, lib string, exe string, args ...string) map[string]int {
	t.Helper()
	log := filepath.Join(t.TempDir(), "lackey.log")
	// The memspy tool turns superblock chasing off (so that calls end
	// superblocks); lackey must too: glibc's start-up code (the CPUID
	// cache-information loops) takes other paths under Valgrind when it
	// is on.
	cmd := exec.Command(launcher(t), append([]string{"--tool=lackey", "--vex-guest-chase=no", "--trace-mem=yes", "--log-file=" + log, exe}, args...)...)
	cmd.Env = lackeyEnv(t, lib)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("lackey: %v\n%s", err, out)
	}
	f, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	counts := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "I "):
			counts["I"]++
		case strings.HasPrefix(line, " L "):
			counts["L"]++
		case strings.HasPrefix(line, " S "):
			counts["S"]++
		case strings.HasPrefix(line, " M "):
			counts["M"]++
		}
	}
	return counts
}

// launcher returns the program that starts Valgrind's core
// (valgrindtest.Launcher of $MEMSPY_VALGRIND or valgrind).
func launcher(t *testing.T) string {
	t.Helper()
	vg := os.Getenv("MEMSPY_VALGRIND")
	if vg == "" {
		vg = "valgrind"
	}
	vg, err := exec.LookPath(vg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := vt.Launcher(vg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// lackeyEnv returns the environment that makes lackey (started by
// launcher) give a program the one the memspy tool gives it, byte for
// byte and in the same order: that of /usr/bin/env run under the tool,
// with the stand-in for the tool's preload (make builds it: the same file
// without the symbols that name wrappers, at a path as long) in place of
// the preload, so that the program loads the same libraries, and without
// Valgrind's core preload, which Valgrind puts first again. The program's
// start-up work depends on where its environment's strings lie on the
// stack (how string functions meet their alignment): lackey run through
// Debian's script, with LD_PRELOAD set, got it in another order than the
// memspy tool, which appends LD_PRELOAD, and matmul's counts differed by
// tens of instructions depending on the length of the tool's directory.
func lackeyEnv(t *testing.T, lib string) []string {
	t.Helper()
	var out bytes.Buffer
	run, err := Start("/usr/bin/env", []string{"-0"}, Options{ValgrindLib: lib, Stdout: &out, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	readAllOK(t, run, "/usr/bin/env", func(*trace.Batch) {})
	env := strings.Split(strings.TrimSuffix(out.String(), "\x00"), "\x00")
	preload := filepath.Join(lib, PreloadFile)
	standIn := filepath.Join(lib, strings.Replace(PreloadFile, "memspy", "nobody", 1))
	for i, kv := range env {
		v, ok := strings.CutPrefix(kv, "LD_PRELOAD=")
		if !ok {
			continue
		}
		var keep []string
		for _, p := range filepath.SplitList(v) {
			switch {
			case strings.HasPrefix(filepath.Base(p), "vgpreload_core-"):
			case p == preload:
				keep = append(keep, standIn)
			default:
				keep = append(keep, p)
			}
		}
		env[i] = "LD_PRELOAD=" + strings.Join(keep, ":")
	}
	return env
}

// toolCounts runs the program under the memspy tool with opt (its
// ValgrindLib set) and counts its events: I, L, S and M as lackey names
// them, and every event under "".
func toolCounts(t *testing.T, opt Options, exe string, args ...string) map[string]int {
	t.Helper()
	opt.Stdout, opt.Stderr = io.Discard, io.Discard
	run, err := Start(exe, args, opt)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	names := map[trace.Kind]string{trace.IFetch: "I", trace.Read: "L", trace.Write: "S", trace.Modify: "M"}
	readAllOK(t, run, exe, func(b *trace.Batch) {
		for _, k := range b.Kind {
			if n, ok := names[k]; ok {
				counts[n]++
			}
		}
		counts[""] += b.Len()
	})
	return counts
}

// The tool sees exactly the loads, stores, modifies and instructions that
// Valgrind's lackey reports.
func TestCountsAgreeWithLackey(t *testing.T) {
	lib := toolLib(t)
	for _, tc := range []struct {
		src  string
		args []string
		ldfl []string
		// slack is the relative difference allowed: thread scheduling
		// (futex waits, spins) changes a threaded program's counts from
		// run to run, by about 0.1% for counters.c.
		slack float64
	}{
		{"matmul.c", []string{"24", "8"}, nil, 0},
		{"listwalk.c", []string{"500", "2"}, nil, 0},
		{"counters.c", []string{"20000"}, []string{"-pthread"}, 0.01},
		// Dynamically linked, allocating through every wrapper: the
		// program's own allocator runs and the wrappers add nothing. The
		// preload's .text records nothing under the memspy tool, but lackey
		// counts the stand-in's: the code its initializers and finalizers
		// run (frame_dummy, ...), 30 instructions, 7 loads and 4 stores.
		{"churn.c", []string{"4000"}, []string{"-dynamic"}, 0.001},
	} {
		t.Run(tc.src, func(t *testing.T) {
			exe := buildC(t, filepath.Join("..", "..", "examples", "c", tc.src), tc.ldfl...)
			want := lackeyCounts(t, lib, exe, tc.args...)
			got := toolCounts(t, Options{ValgrindLib: lib, IFetch: true}, exe, tc.args...)
			for _, k := range []string{"I", "L", "S", "M"} {
				if d := math.Abs(float64(got[k] - want[k])); d > tc.slack*float64(max(want[k], 1000)) {
					t.Errorf("%s: memspy tool %d, lackey %d", k, got[k], want[k])
				}
			}
			if want["I"] == 0 || want["L"] == 0 {
				t.Errorf("lackey saw nothing: %v", want)
			}
		})
	}
}
