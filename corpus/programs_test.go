package corpus

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// program is one program of the corpus.
type program struct {
	name string
	// threads marks a multi-threaded program: it also runs with --procs 4.
	threads bool
	// names marks a program whose --where profile is checked for names a
	// person recognises and for its call tree (checkWhere).
	names bool
	// forks marks a program whose children run at the same time as it.
	forks bool
	// tol, when not 0, is the relative difference allowed between its
	// counts and cachegrind's in place of countTolerance: those of a
	// multi-threaded program change from run to run with the scheduling of
	// its threads (futex waits and spins, the Go runtime's background
	// work).
	tol float64
	// noCounts says why there are no counts to compare when memspy does
	// not follow the program's children.
	noCounts string
	// prepare writes the program's inputs into in.dir (building the
	// program if it is one of examples/corpus) and sets in.argv and
	// in.stdin; in.big selects the benchmark's inputs.
	prepare func(t *testing.T, h *harness, in *input)
}

// input is a program ready to run.
type input struct {
	big   bool     // the benchmark's inputs
	dir   string   // the working directory, holding the input files
	home  string   // $HOME: an empty directory
	out   string   // where the runs' output files go
	argv  []string // the command line, argv[0] an absolute path
	stdin string   // a file in dir for standard input ("": /dev/null)
	vgEnv []string // its environment under memspy (harness.underMemspy)
}

// size picks the fast or the big input size.
func (in *input) size(fast, big int) int {
	if in.big {
		return big
	}
	return fast
}

// prepare makes the directories of p's runs and prepares its input.
func (h *harness) prepare(t *testing.T, p program) *input {
	t.Helper()
	in := &input{big: h.big, dir: t.TempDir(), home: t.TempDir(), out: t.TempDir()}
	p.prepare(t, h, in)
	in.vgEnv = h.underMemspy(t, in)
	return in
}

// env is the environment of the program's native runs.
func (in *input) env() []string { return baseEnv(in.home) }

// system returns the absolute path of a command in /usr/bin or /bin (the
// PATH of the runs), skipping or failing the test when it is missing.
func (h *harness) system(t *testing.T, name string) string {
	t.Helper()
	for _, d := range []string{"/usr/bin", "/bin"} {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	h.need(t, "/usr/bin/"+name)
	return ""
}

// source is the path of a file of examples/corpus (the test runs in corpus/).
func source(name string) string {
	return filepath.Join("..", "examples", "corpus", name)
}

// compile builds a C or C++ source of examples/corpus with -O2 -g.
func (h *harness) compile(t *testing.T, compiler, src string, flags ...string) string {
	t.Helper()
	h.need(t, compiler)
	exe := filepath.Join(t.TempDir(), strings.TrimSuffix(src, filepath.Ext(src)))
	args := append([]string{"-O2", "-g", "-o", exe, source(src)}, flags...)
	if out, err := exec.Command(compiler, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", compiler, strings.Join(args, " "), err, out)
	}
	return exe
}

// goBuild builds a Go program of examples/corpus.
func (h *harness) goBuild(t *testing.T, pkg string) string {
	t.Helper()
	h.need(t, "go")
	exe := filepath.Join(t.TempDir(), pkg)
	cmd := exec.Command("go", "build", "-o", exe, "./examples/corpus/"+pkg)
	cmd.Dir = ".." // the module root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/corpus/%s: %v\n%s", pkg, err, out)
	}
	return exe
}

// words are the words of the generated text.
var words = []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
	"india", "juliet", "kilo", "lima", "mike", "november", "oscar", "papa"}

// writeText writes n lines of pseudo-random text (a fixed xorshift
// generator: the same file every time) to path.
func writeText(t *testing.T, path string, n int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	x := uint64(88172645463325252)
	for i := range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		fmt.Fprintf(w, "%s %08x %d %s %s\n", words[x%16], x>>32, i, words[x>>8%16], words[x>>16%16])
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// setup runs a command that prepares an input, failing the test if it fails.
func setup(t *testing.T, in *input, stdin []byte, argv ...string) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = in.dir, in.env()
	cmd.Stdin = bytes.NewReader(stdin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
}

// fixedTime is the modification time of the files ls lists.
var fixedTime = time.Date(2020, 2, 29, 12, 34, 56, 0, time.UTC)

// pythonScript fills, sorts and counts dicts and formats floats (with no
// import but sys: each module imported adds to the start-up).
const pythonScript = `import sys
n = int(sys.argv[1])
d = {}
for i in range(n):
    d["k%d" % (i * 7919 % n)] = i * i % 1000003
items = sorted(d.items(), key=lambda kv: (kv[1], kv[0]))
hist = {}
for v in d.values():
    hist[v % 17] = hist.get(v % 17, 0) + 1
print(len(d), items[:3], items[-3:])
print(sorted(hist.items()))
print("%.6f %r %g" % (sum(x ** 0.5 for x in range(n)), 1 / 3, 4.99995e9))
`

// perlScript fills a hash and sorts its keys by value.
const perlScript = `my $n = shift; my %h;
for my $i (1 .. $n) { $h{"k" . ($i * 7919 % $n)} += $i * $i % 1000003 }
my @k = sort { $h{$a} <=> $h{$b} || $a cmp $b } keys %h;
my $s = 0; $s += $h{$_} for @k;
print scalar(@k), " $k[0]=$h{$k[0]} $k[-1]=$h{$k[-1]} $s\n";
printf "%.6g %e\n", $s / 7, $s / 3;
`

// programs is the corpus.
var programs = []program{
	// The slowest first: the parallel subtests start in this order.
	{name: "python3", names: true, prepare: func(t *testing.T, h *harness, in *input) {
		// /usr/bin/python3 itself, not a version manager's shim. The fast
		// run leaves out the site module (-S): with it, python3's start-up
		// alone takes memspy run --where some 30 s (18 s after the
		// program ends) and 4.5 GiB; drop -S when that is fixed.
		h.need(t, "/usr/bin/python3")
		in.argv = []string{"/usr/bin/python3", "-S", "-c", pythonScript, "2000"}
		if in.big {
			in.argv = []string{"/usr/bin/python3", "-c", pythonScript, "500000"}
		}
	}},
	{name: "echo", prepare: func(t *testing.T, h *harness, in *input) {
		in.argv = []string{"/bin/echo", "hi"}
	}},
	{name: "sh-exit", prepare: func(t *testing.T, h *harness, in *input) {
		in.argv = []string{h.system(t, "sh"), "-c", "exit 3"}
	}},
	{name: "env-true",
		noCounts: "env execs true: memspy counts env up to the exec, and cachegrind writes no counts of env's part, only true's",
		prepare: func(t *testing.T, h *harness, in *input) {
			in.argv = []string{"/usr/bin/env", "true"}
		}},
	{name: "ls", prepare: func(t *testing.T, h *harness, in *input) {
		// A fixed directory: names, sizes, modes and times (and those of
		// its parent, in.dir, listed as ..) are the same at every run.
		fix := filepath.Join(in.dir, "fixture")
		if err := os.MkdirAll(filepath.Join(fix, "subdir"), 0o755); err != nil {
			t.Fatal(err)
		}
		for k := range in.size(20, 20000) {
			name := filepath.Join(fix, fmt.Sprintf("file-%05d.txt", k))
			if err := os.WriteFile(name, bytes.Repeat([]byte("x"), k*37%1000), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(name, fixedTime, fixedTime); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink("file-00001.txt", filepath.Join(fix, "link")); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{filepath.Join(fix, "subdir"), fix, in.dir} {
			if err := os.Chtimes(p, fixedTime, fixedTime); err != nil {
				t.Fatal(err)
			}
		}
		in.argv = []string{h.system(t, "ls"), "-la", "fixture"}
	}},
	{name: "sort", prepare: func(t *testing.T, h *harness, in *input) {
		writeText(t, filepath.Join(in.dir, "input.txt"), in.size(2000, 1000000))
		// GNU sort sorts big inputs on several threads, whose scheduling
		// would change the counts from run to run.
		in.argv = []string{h.system(t, "sort"), "--parallel=1", "input.txt"}
	}},
	{name: "sha256sum", prepare: func(t *testing.T, h *harness, in *input) {
		writeText(t, filepath.Join(in.dir, "input.txt"), in.size(2000, 4000000))
		in.argv = []string{h.system(t, "sha256sum"), "input.txt"}
	}},
	{name: "bash-loop", prepare: func(t *testing.T, h *harness, in *input) {
		in.argv = []string{h.system(t, "bash"), "-c", fmt.Sprintf("for i in $(seq %d); do :; done", in.size(1000, 500000))}
	}},
	{name: "perl", prepare: func(t *testing.T, h *harness, in *input) {
		in.argv = []string{h.system(t, "perl"), "-e", perlScript, fmt.Sprint(in.size(2000, 100000))}
	}},
	{name: "gzip", prepare: func(t *testing.T, h *harness, in *input) {
		writeText(t, filepath.Join(in.dir, "input.txt"), in.size(2000, 200000))
		in.argv = []string{h.system(t, "gzip"), "-9", "-c", "input.txt"}
	}},
	{name: "xz", prepare: func(t *testing.T, h *harness, in *input) {
		writeText(t, filepath.Join(in.dir, "input.txt"), in.size(2000, 20000))
		in.argv = []string{h.system(t, "xz"), "-9", "-c", "input.txt"}
	}},
	{name: "git-log", prepare: func(t *testing.T, h *harness, in *input) {
		git := h.system(t, "git")
		// A repository of n commits with fixed authors and dates (so fixed
		// hashes), made by fast-import.
		var stream bytes.Buffer
		for k := range in.size(30, 30000) {
			msg := fmt.Sprintf("commit %d: %s %s", k, words[k%16], words[k*7%16])
			content := fmt.Sprintf("%d %s\n", k, words[k*3%16])
			fmt.Fprintf(&stream, "commit refs/heads/main\nauthor A U Thor <author@example.com> %d +0000\n"+
				"committer C O Mitter <committer@example.com> %d +0000\ndata %d\n%s\nM 644 inline file-%d.txt\ndata %d\n%s\n",
				1600000000+k*3600, 1600000000+k*3600+60, len(msg), msg, k%10, len(content), content)
		}
		setup(t, in, nil, git, "init", "-q", "-b", "main", "repo")
		setup(t, in, stream.Bytes(), git, "-C", "repo", "fast-import", "--quiet")
		in.argv = []string{git, "-C", "repo", "log", "--oneline", "-n", fmt.Sprint(in.size(20, 30000))}
	}},
	{name: "sqlite3", names: true, prepare: func(t *testing.T, h *harness, in *input) {
		n := in.size(300, 200000)
		var sql strings.Builder
		sql.WriteString("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT NOT NULL, v REAL NOT NULL);\nBEGIN;\n")
		x := uint64(2463534242)
		for k := range n {
			x = x*6364136223846793005 + 1442695040888963407
			fmt.Fprintf(&sql, "INSERT INTO t(name, v) VALUES('name-%d', %d.%03d);\n", x>>40%uint64(n/10+1), x>>33%100000, k%1000)
		}
		sql.WriteString("COMMIT;\n" +
			"SELECT name, count(*), sum(v) FROM t GROUP BY name ORDER BY 2 DESC, 1 LIMIT 10;\n" +
			"SELECT id, name, v FROM t ORDER BY v DESC, id LIMIT 10;\n" +
			"SELECT count(*), min(v), max(v), avg(v) FROM t;\n")
		if err := os.WriteFile(filepath.Join(in.dir, "script.sql"), []byte(sql.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		in.argv, in.stdin = []string{h.system(t, "sqlite3"), ":memory:"}, "script.sql"
	}},
	{name: "mapsort", names: true, prepare: func(t *testing.T, h *harness, in *input) {
		in.argv = []string{h.compile(t, "g++", "mapsort.cpp"), fmt.Sprint(in.size(5000, 1000000))}
	}},
	// The Go runtime's background work (its scheduler, sysmon, the
	// collector's workers) depends on timing: measured up to ±0.7% on an
	// idle machine and +2.49% (--procs 4) on a loaded one.
	// Its heap objects are named by type and first frame outside the Go
	// runtime; the runtime's own memory, which it maps with system calls
	// of its own, by what it is for (<Go heap arena>, <Go
	// persistentalloc>...).
	{name: "gosort", threads: true, tol: 0.05, names: true, prepare: func(t *testing.T, h *harness, in *input) {
		in.argv = []string{h.goBuild(t, "gosort"), fmt.Sprint(in.size(20000, 5000000))}
	}},
	// Measured over 2 runs in 4 modes: I refs within ±0.001%, D refs within
	// ±0.083% of cachegrind's.
	{name: "threads", threads: true, tol: 0.002, prepare: func(t *testing.T, h *harness, in *input) {
		in.argv = []string{h.compile(t, "gcc", "threads.c", "-pthread"), fmt.Sprint(in.size(100000, 100000000))}
	}},
	{name: "forkexec", names: true, forks: true, prepare: func(t *testing.T, h *harness, in *input) {
		in.argv = []string{h.compile(t, "gcc", "forkexec.c"), fmt.Sprint(in.size(3, 50))}
	}},
	{name: "printfg", prepare: func(t *testing.T, h *harness, in *input) {
		in.argv = []string{h.compile(t, "gcc", "printfg.c"), fmt.Sprint(in.size(50, 1000000))}
	}},
}
