package corpus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memspy/memspy/tracer/valgrind/valgrindtest"
)

// harness knows where memspy, its Valgrind tool and valgrind are.
type harness struct {
	memspyBin   string // bin/memspy
	lib         string // the directory of the memspy Valgrind tool
	valgrindBin string // the valgrind memspy runs ($MEMSPY_VALGRIND or valgrind)
	launcher    string // what valgrindBin execs: valgrind.bin beside Debian's script (see harness.underMemspy)
	standIn     string // memspy's preload without its symbols (see harness.valgrind)
	big         bool   // MEMSPY_CORPUS=big: bigger inputs, timings, a table
	required    bool   // MEMSPY_REQUIRE_TOOL is set: fail instead of skipping
}

// newHarness finds memspy and its tool from the module root (the test runs
// in corpus/). Without valgrind or the tool it skips, or fails when
// MEMSPY_REQUIRE_TOOL is set; without bin/memspy it fails.
func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{required: os.Getenv("MEMSPY_REQUIRE_TOOL") != ""}
	switch v := os.Getenv("MEMSPY_CORPUS"); v {
	case "", "fast":
	case "big":
		h.big = true
	default:
		t.Fatalf("MEMSPY_CORPUS=%s: want fast (the default) or big", v)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	h.lib = os.Getenv("MEMSPY_VALGRIND_LIB")
	if h.lib == "" {
		h.lib = filepath.Join(root, "bin", "valgrind")
	}
	if h.lib, err = filepath.Abs(h.lib); err != nil {
		t.Fatal(err)
	}
	h.valgrindBin = os.Getenv("MEMSPY_VALGRIND")
	if h.valgrindBin == "" {
		h.valgrindBin = "valgrind"
	}
	_, terr := os.Stat(filepath.Join(h.lib, "memspy-amd64-linux"))
	vg, verr := exec.LookPath(h.valgrindBin)
	if terr != nil || verr != nil {
		if h.required {
			t.Fatalf("the memspy Valgrind tool is required but not usable (tool: %v; valgrind: %v): run make build", terr, verr)
		}
		t.Skipf("the memspy Valgrind tool is not usable (tool: %v; valgrind: %v): run make build", terr, verr)
	}
	h.valgrindBin = vg
	if h.launcher, err = valgrindtest.Launcher(vg); err != nil {
		t.Fatal(err)
	}
	h.standIn = standIn(t, h.lib)
	h.memspyBin = filepath.Join(root, "bin", "memspy")
	if _, err := os.Stat(h.memspyBin); err != nil {
		t.Fatalf("no memspy binary (%v): run make build", err)
	}
	return h
}

// standIn returns the path of a link to the stand-in for memspy's preload
// that make builds (vgpreload_nobody: the preload without its symbols, so
// without its wrappers) as long as the preload's path: in the environment
// of a program under another Valgrind tool, it takes the place of the
// preload's path in LD_PRELOAD without moving anything on the stack. It
// lies outside lib, whose vgpreload_*.so files Valgrind drops from
// LD_PRELOAD when the program execs another.
func standIn(t *testing.T, lib string) string {
	t.Helper()
	file := filepath.Join(lib, "vgpreload_nobody-amd64-linux.so")
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("no stand-in for memspy's preload (%v): run make build", err)
	}
	base, err := os.MkdirTemp("", "ms")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	pad := len(lib) - len(base) - 1
	if pad < 1 {
		t.Fatalf("the memspy tool's directory %s is a shorter path than a temporary directory (%s): the stand-in for its preload cannot have a path as long as the preload's", lib, base)
	}
	dir := filepath.Join(base, strings.Repeat("d", pad))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "vgpreload_nobody-amd64-linux.so")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	return link
}

// need fails (with MEMSPY_REQUIRE_TOOL) or skips the test when a command
// is not installed.
func (h *harness) need(t *testing.T, cmds ...string) {
	t.Helper()
	for _, c := range cmds {
		if _, err := exec.LookPath(c); err != nil {
			if h.required {
				t.Fatalf("%s is not installed: run make check-corpus", c)
			}
			t.Skipf("%s is not installed (make check-corpus installs it)", c)
		}
	}
}

// baseEnv is the environment of every run: fixed locale, time zone, home
// and hash seeds, so that outputs and counts do not depend on the caller's
// environment (PATH leaves out version-manager shims such as pyenv's).
func baseEnv(home string) []string {
	return []string{
		"PATH=/usr/bin:/bin",
		"HOME=" + home,
		"LC_ALL=C",
		"TZ=UTC",
		"PYTHONHASHSEED=0",
		"PERL_HASH_SEED=0",
		"PERL_PERTURB_KEYS=0",
		"GIT_CONFIG_NOSYSTEM=1",
	}
}

// proc is how one run of a command ended.
type proc struct {
	exit   int           // exit status, or 128+N when signal N killed it (as memspy reports it)
	stdout string        // the file holding its standard output
	stderr string        // the file holding its standard error
	wall   time.Duration // wall time
	maxRSS int64         // bytes: ru_maxrss from wait4, the largest of the process and its waited-for descendants
	pid    int           // its process id (Valgrind's tools name their output files after it)
}

// runTimeout bounds one run: a hung program must not hang the test.
func (h *harness) runTimeout() time.Duration {
	if h.big {
		return 2 * time.Hour
	}
	return 3 * time.Minute
}

// run runs argv in the program's directory with env and its standard
// input; its output goes to files named after name in the output
// directory. It fails the test only when the command cannot be run at all.
func (h *harness) run(t *testing.T, in *input, name string, argv, env []string) proc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), h.runTimeout())
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	// memspy passes SIGTERM on to the program and still prints its summary.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	cmd.Dir, cmd.Env = in.dir, env
	if in.stdin != "" {
		f, err := os.Open(filepath.Join(in.dir, in.stdin))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd.Stdin = f
	}
	p := proc{stdout: filepath.Join(in.out, name+".stdout"), stderr: filepath.Join(in.out, name+".stderr")}
	stdout, err := os.Create(p.stdout)
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	stderr, err := os.Create(p.stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	cmd.Stdout, cmd.Stderr = stdout, stderr
	start := time.Now()
	err = cmd.Run()
	p.wall = time.Since(start)
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("%s: %s: %v", name, strings.Join(argv, " "), err)
	}
	if ctx.Err() != nil {
		t.Errorf("%s: %s: stopped after %v", name, strings.Join(argv, " "), h.runTimeout())
	}
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	p.exit = ws.ExitStatus()
	if ws.Signaled() {
		p.exit = 128 + int(ws.Signal())
	}
	p.maxRSS = cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss * 1024 // Linux reports KiB
	p.pid = cmd.ProcessState.Pid()
	return p
}

// counts are the references of a run: instructions, and data references
// with a modify counted once.
type counts struct {
	i, d int64
}

// eventsLine is memspy's summary line of the events seen, like
// "events: 390,346 (290,766 ifetch, 68,507 read, 29,317 write, 1,756 modify)".
var eventsLine = regexp.MustCompile(`(?m)^events: [0-9,]+ \((.*)\)$`)

// summaryHeader is the first line of memspy's summary.
var summaryHeader = regexp.MustCompile(`(?m)^memspy: .* \(valgrind\) on machine `)

// memspyCounts reads the counts from the summary memspy wrote on standard
// error (its last events line); ok is false without a summary.
func memspyCounts(stderr []byte) (c counts, ok bool) {
	if !summaryHeader.Match(stderr) {
		return c, false
	}
	m := eventsLine.FindAllSubmatch(stderr, -1)
	if m == nil {
		return c, false
	}
	for _, part := range strings.Split(string(m[len(m)-1][1]), ", ") {
		num, kind, found := strings.Cut(part, " ")
		n, err := strconv.ParseInt(strings.ReplaceAll(num, ",", ""), 10, 64)
		if !found || err != nil {
			return c, false
		}
		switch kind {
		case "ifetch":
			c.i += n
		case "read", "write", "modify":
			c.d += n
		}
	}
	return c, true
}

// plus returns the sum of c and x.
func (c counts) plus(x counts) counts { return counts{c.i + x.i, c.d + x.d} }

// minus returns c less x.
func (c counts) minus(x counts) counts { return counts{c.i - x.i, c.d - x.d} }

// kindCounts adds up a profile's events by kind.
func kindCounts(byKind map[string]int64) counts {
	return counts{i: byKind["ifetch"], d: byKind["read"] + byKind["write"] + byKind["modify"]}
}

// tally is what memspy counted, from its JSON profile.
type tally struct {
	total counts
	// tree says memspy followed the program's children: the profile has
	// a section per program each process ran.
	tree  bool
	ended []counts // with tree: the programs that ran to their end, in the order they started
	execd counts   // with tree: the programs that exec'd another, which cachegrind does not count
}

// profileTally reads a memspy JSON profile's counts.
func profileTally(path string) (tally, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return tally{}, err
	}
	var p struct {
		EventsByKind map[string]int64 `json:"events_by_kind"`
		Processes    []struct {
			Exec    string `json:"exec"`
			Profile struct {
				EventsByKind map[string]int64 `json:"events_by_kind"`
			} `json:"profile"`
		} `json:"processes"`
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return tally{}, fmt.Errorf("%s: %v", path, err)
	}
	tl := tally{total: kindCounts(p.EventsByKind), tree: len(p.Processes) > 0}
	for _, pr := range p.Processes {
		c := kindCounts(pr.Profile.EventsByKind)
		if pr.Exec != "" {
			tl.execd = tl.execd.plus(c)
		} else {
			tl.ended = append(tl.ended, c)
		}
	}
	return tl, nil
}

// peakRSSLine is the end of memspy's --stats line: the memspy process's
// own peak resident memory.
var peakRSSLine = regexp.MustCompile(`(?m)^memspy: \d+ events in .*; peak RSS ([0-9.]+) (B|KiB|MiB|GiB)$`)

// memspyPeakRSS reads the peak RSS in bytes from memspy's --stats line.
func memspyPeakRSS(stderr []byte) (int64, bool) {
	m := peakRSSLine.FindSubmatch(stderr)
	if m == nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		return 0, false
	}
	scale := map[string]float64{"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[string(m[2])]
	return int64(v * scale), true
}

// cachegrindTree reads the counts of every process cachegrind traced
// from its output files, PREFIX.PID, in the order of their pids (the
// order they started in), and those of process main.
func cachegrindTree(prefix string, main int) (mainCounts counts, all []counts, err error) {
	files, err := filepath.Glob(prefix + ".*")
	if err != nil {
		return counts{}, nil, err
	}
	pids := map[string]int{}
	for _, f := range files {
		pid, err := strconv.Atoi(strings.TrimPrefix(f, prefix+"."))
		if err != nil {
			return counts{}, nil, fmt.Errorf("%s: not named after a pid", f)
		}
		pids[f] = pid
	}
	slices.SortFunc(files, func(a, b string) int { return pids[a] - pids[b] })
	found := false
	for _, f := range files {
		c, err := cachegrindCounts(f)
		if err != nil {
			return counts{}, nil, err
		}
		all = append(all, c)
		if pids[f] == main {
			mainCounts, found = c, true
		}
	}
	if !found {
		return counts{}, nil, fmt.Errorf("no %s.%d", prefix, main)
	}
	return mainCounts, all, nil
}

// cachegrindCounts reads I refs and D refs (Dr + Dw: cachegrind counts a
// modify as one write) from cachegrind's output file.
func cachegrindCounts(path string) (counts, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return counts{}, err
	}
	var names, values []string
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "events: "); ok {
			names = strings.Fields(v)
		}
		if v, ok := strings.CutPrefix(line, "summary: "); ok {
			values = strings.Fields(v)
		}
	}
	if names == nil || len(values) != len(names) {
		return counts{}, fmt.Errorf("%s: no events and summary lines", path)
	}
	ev := map[string]int64{}
	for k, name := range names {
		n, err := strconv.ParseInt(values[k], 10, 64)
		if err != nil {
			return counts{}, fmt.Errorf("%s: summary: %v", path, err)
		}
		ev[name] = n
	}
	for _, name := range []string{"Ir", "Dr", "Dw"} {
		if _, ok := ev[name]; !ok {
			return counts{}, fmt.Errorf("%s: no %s count (events: %s)", path, name, strings.Join(names, " "))
		}
	}
	return counts{i: ev["Ir"], d: ev["Dr"] + ev["Dw"]}, nil
}

// firstDiff returns the offset of the first byte where a and b differ
// (the shorter one's length when one is a prefix of the other), or -1 when
// they are equal.
func firstDiff(a, b []byte) int {
	n := min(len(a), len(b))
	for k := 0; k < n; k++ {
		if a[k] != b[k] {
			return k
		}
	}
	if len(a) == len(b) {
		return -1
	}
	return n
}

// excerpt quotes up to 40 bytes of data from offset at.
func excerpt(data []byte, at int) string {
	return strconv.Quote(string(data[min(at, len(data)):min(at+40, len(data))]))
}

// tail quotes the last n lines of data, for failure messages.
func tail(data []byte, n int) string {
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	return strconv.Quote(string(bytes.Join(lines[max(0, len(lines)-n):], []byte("\n"))))
}
