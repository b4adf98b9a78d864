package corpus

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// l1Machines are the machines TestFirstLevelInTool runs programs on, by
// name (nil flags: memspy run's default machine, x86-modern), and the
// programs each runs: the default one every deterministic program of the
// corpus, the others a few. bash-loop is not deterministic: its SIGCHLD
// handler runs at a point of the loop that depends on timing (two runs
// with the first-level caches in the engine measured 13 events apart).
var l1Machines = []struct {
	name     string
	flags    []string
	programs []string
}{
	{name: "x86-modern", programs: []string{"echo", "sh-exit", "env-true", "env-path", "ls", "sort", "sha256sum",
		"perl", "gzip", "xz", "git-log", "sqlite3", "mapsort", "python3", "forkexec", "printfg", "markers"}},
	{name: "trace-fn", flags: []string{"--trace-fn", "kernel"}, programs: []string{"markers"}},
	{name: "start-stopped", flags: []string{"--start-stopped"}, programs: []string{"markers"}},
	{name: "direct-mapped-write-through", programs: []string{"mapsort", "forkexec", "env-path"}, flags: []string{
		"--cache", "L1I:size=4k,assoc=1,line=32,holds=instructions",
		"--cache", "L1D:size=4k,assoc=1,line=32,holds=data,write=through,allocate=no",
		"--cache", "L2:size=64k,assoc=4,line=64"}},
	{name: "fifo-2-way-16", programs: []string{"mapsort", "python3", "gzip"}, flags: []string{
		"--cache", "L1I:size=8k,assoc=2,line=16,holds=instructions,replacement=fifo",
		"--cache", "L1D:size=8k,assoc=2,line=16,holds=data,replacement=fifo",
		"--cache", "L2:size=128k,assoc=8,line=64", "--cache", "L3:size=1m,assoc=16,line=64,replacement=random"}},
	{name: "unified-128", programs: []string{"mapsort", "sqlite3", "forkexec"}, flags: []string{
		"--cache", "L1:size=16k,assoc=4,line=128", "--cache", "L2:size=256k,assoc=8,line=64"}},
}

// envPath is a program whose execvp tries a directory that does not hold
// the program first: a failing exec (after which the stream goes on), then
// one that succeeds.
var envPath = program{name: "env-path", prepare: func(t *testing.T, h *harness, in *input) {
	in.argv = []string{"/usr/bin/env", "PATH=/nonexistent:/usr/bin:/bin", "true"}
}}

// markers talks to memspy through memspy.h: a dump and a reset marker,
// tracing stopped and started again (examples/c/markers.c).
var markers = program{name: "markers", prepare: func(t *testing.T, h *harness, in *input) {
	h.need(t, "gcc")
	exe := filepath.Join(t.TempDir(), "markers")
	if out, err := exec.Command("gcc", "-O1", "-g", "-I", "../tracer/valgrind/tool", "-o", exe, "../examples/c/markers.c").CombinedOutput(); err != nil {
		t.Fatalf("building markers: %v\n%s", err, out)
	}
	in.argv = []string{exe, "5"}
}}

// statsLines are memspy's --stats lines: the time taken, and whether the
// tool simulated the first-level caches.
var (
	statsLine = regexp.MustCompile(`(?m)^memspy: \d+ events in .*\n`)
	l1Line    = regexp.MustCompile(`(?m)^memspy: the Valgrind tool simulated .* \(--l1-in-tool\)\n`)
	// The process table of the summary, and the processes of a profile:
	// their ids change from run to run.
	pidColumns = regexp.MustCompile(`(?m)^( +)\d+( +)\d+(  )`)
	pidFields  = regexp.MustCompile(`"(pid|parent)": \d+`)
	// Runs of spaces: the process table's columns are as wide as its pids.
	spaces = regexp.MustCompile(` +`)
	// A profile's timeline (as memspy writes the JSON: indented, its
	// closing brace alone at its indentation).
	timeline = regexp.MustCompile(`(?s)\n  "timeline": \{.*?\n  \},`)
)

// TestFirstLevelInTool runs programs of the corpus under plain memspy run
// with the first-level caches simulated in the Valgrind tool (the default,
// --l1-in-tool) and by the engine (--l1-in-tool=false), on several
// machines, and checks that the two give the same exit status, summary and
// profile, byte for byte (process ids aside), and that the tool did
// simulate them. Multi-threaded programs are left out: their counts change
// from run to run.
func TestFirstLevelInTool(t *testing.T) { testFirstLevel(t, nil) }

// TestFirstLevelNotes is TestFirstLevelInTool under memspy run --where
// --miss-only, where the tool notes the accesses of its first-level caches
// that the attribution needs (sim.Hierarchy.TracerNotes): the profiles,
// with every function, object, pair, reference, evictor, calling context
// and the timeline, are the same byte for byte.
func TestFirstLevelNotes(t *testing.T) { testFirstLevel(t, []string{"--where", "--miss-only"}) }

// testFirstLevel is TestFirstLevelInTool with the flags of memspy run's
// mode added.
func testFirstLevel(t *testing.T, flags []string) {
	h := newHarness(t)
	if h.big {
		t.Skip("the benchmark does not compare modes")
	}
	byName := map[string]program{envPath.name: envPath, markers.name: markers}
	for _, p := range programs {
		byName[p.name] = p
	}
	for _, mach := range l1Machines {
		for _, name := range mach.programs {
			p, ok := byName[name]
			if !ok || p.threads {
				t.Fatalf("%s: not a deterministic program of the corpus", name)
			}
			t.Run(mach.name+"/"+name, func(t *testing.T) {
				if len(flags) > 0 && mach.name == "direct-mapped-write-through" && (name == "env-path" || name == "forkexec") {
					// The dynamic loader indexes a table on its stack
					// (strcspn's) with the 16 random bytes of AT_RANDOM,
					// new at every run: on these 32-byte lines an exec'd
					// program's misses land on other instructions from run
					// to run (two runs with the caches in the engine
					// measured a miss apart at two instructions; forkexec
					// 3 read misses against 4 in one pair).
					t.Skip("the attribution of its misses to instructions changes from run to run")
				}
				t.Parallel()
				in := h.prepare(t, p)
				fl := append(slices.Clone(mach.flags), flags...)
				on := mode{name: "l1-on", flags: append(slices.Clone(fl), "--stats")}
				off := mode{name: "l1-off", flags: append(slices.Clone(fl), "--stats", "--l1-in-tool=false")}
				a := h.memspy(t, in, on, in.out+"/on.json")
				b := h.memspy(t, in, off, in.out+"/off.json")
				sa, sb := readFile(a.stderr), readFile(b.stderr)
				if !l1Line.Match(sa) {
					t.Errorf("memspy run did not let the tool simulate the first-level caches; its standard error ends %s", tail(sa, 5))
				}
				if a.exit != b.exit {
					t.Errorf("exit status %d with the first-level caches in the tool, %d without", a.exit, b.exit)
				}
				normal := func(stderr []byte) []byte {
					stderr = statsLine.ReplaceAll(stderr, nil)
					stderr = l1Line.ReplaceAll(stderr, nil)
					stderr = pidColumns.ReplaceAll(stderr, []byte("${1}PID${2}PPID${3}"))
					return spaces.ReplaceAll(stderr, []byte(" "))
				}
				if x, y := normal(sa), normal(sb); !bytes.Equal(x, y) {
					at := firstDiff(x, y)
					t.Errorf("the summaries differ at byte %d:\nin the tool: %s\nin the engine: %s", at, excerpt(x, at), excerpt(y, at))
				}
				ja, ea := os.ReadFile(in.out + "/on.json")
				jb, eb := os.ReadFile(in.out + "/off.json")
				if ea != nil || eb != nil {
					t.Fatalf("the profiles: %v; %v", ea, eb)
				}
				ja, jb = pidFields.ReplaceAll(ja, []byte(`"$1": 0`)), pidFields.ReplaceAll(jb, []byte(`"$1": 0`))
				if len(flags) > 0 && p.forks {
					// The timeline of a process tree follows its programs
					// in the order their profiles were made, which varies
					// from run to run when they run at once.
					ja, jb = timeline.ReplaceAll(ja, nil), timeline.ReplaceAll(jb, nil)
				}
				if !bytes.Equal(ja, jb) {
					at := firstDiff(ja, jb)
					t.Errorf("the profiles differ at byte %d:\nin the tool: %s\nin the engine: %s", at, excerpt(ja, at), excerpt(jb, at))
				}
			})
		}
	}
}
