package valgrind

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/memspy/memspy/sample"
)

const (
	fSetPipeSize   = 1031                     // F_SETPIPE_SZ
	pipeSize       = 1 << 20                  // the default /proc/sys/fs/pipe-max-size
	ringChunks     = 16                       // chunks of ChunkSize in the ring
	toolVersionTag = "memspy stream version " // in the tool's file, before its version
	sysMemfdCreate = 319                      // memfd_create on amd64 (the only platform of the tool)
	mfdCloexec     = 1                        // MFD_CLOEXEC
)

// ToolFile is the name of the tool's executable in its directory.
const ToolFile = "memspy-amd64-linux"

// PreloadFile is the name of the tool's malloc-replacement preload in its
// directory.
const PreloadFile = "vgpreload_memspy-amd64-linux.so"

// Options configures Start.
type Options struct {
	// ValgrindLib is the directory holding the tool (ToolFile) and links
	// to the Valgrind core's files; it becomes VALGRIND_LIB. Empty means
	// DefaultLib().
	ValgrindLib string
	// Valgrind is the valgrind program. Empty means $MEMSPY_VALGRIND if
	// set, else "valgrind" from PATH.
	Valgrind string
	// IFetch asks the tool to describe instruction fetches (--ifetch=yes).
	IFetch bool
	// MaxEvents stops tracing soon after this many events (0: no limit).
	MaxEvents uint64
	// MaxTime stops tracing this long after the start (0: no limit).
	MaxTime time.Duration
	// StartFn starts tracing at the first entry of the function so named.
	StartFn string
	// TraceFn traces only while the function so named is on the stack.
	TraceFn string
	// Stopped starts with tracing stopped, until the program's
	// MEMSPY_START_TRACING().
	Stopped bool
	// NoStack drops references through the stack pointer.
	NoStack bool
	// AllocFns are the program's own allocation functions, as NAME or
	// NAME:REG (the register holding the size at entry).
	AllocFns []string
	// StackDepth is the call stack depth of allocations (0: the tool's
	// default, 8).
	StackDepth int
	// NoAllocStacks leaves the call stacks out of the allocation records
	// (StackDepth is then ignored): a consumer that names no data objects
	// has no use for them, and each costs the tool an unwinding.
	NoAllocStacks bool
	// Sample, when it samples in time (ratio and length) or by timesteps,
	// lets the tool leave out what the sampling gate would drop: between
	// time samples (outside every sample's [Warm, End) of
	// sample.Schedule), in timesteps not taken and outside timesteps, the
	// program runs with calls, returns, allocations, markers and
	// synchronization traced but not its memory references, which
	// trace.Skip events count. Sample.TimestepFn makes the tool write
	// sample markers at the outermost entries and returns of that
	// function. Set and processor sampling are left to the engine; so is
	// time sampling by count (the run's length is not known).
	Sample sample.Spec
	// Children follows the program's children (Valgrind's
	// --trace-children=yes): an exec'd program's stream follows the
	// exec'ing one's (StreamReader.Next), and each forked child writes a
	// stream of its own, which Run.Children delivers.
	Children bool
	// FirstLevel, when not nil, has the tool simulate the first-level
	// caches it describes (see FirstLevel).
	FirstLevel *FirstLevel
	// ToolArgs are extra options passed to the tool, before "--".
	ToolArgs []string
	// Stdin, Stdout and Stderr are the program's standard streams; nil
	// means memspy's own (os.Stdin, os.Stdout, os.Stderr). Valgrind's own
	// messages go to Stderr too.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// toolArgs returns the tool's options for opt (docs/valgrind-stream.md).
func (opt *Options) toolArgs() []string {
	var a []string
	if opt.IFetch {
		a = append(a, "--ifetch=yes")
	}
	if opt.FirstLevel != nil {
		a = append(a, opt.FirstLevel.args()...)
	}
	if opt.MaxEvents > 0 {
		a = append(a, fmt.Sprintf("--max-events=%d", opt.MaxEvents))
	}
	if opt.MaxTime > 0 {
		a = append(a, fmt.Sprintf("--max-ms=%d", max(1, opt.MaxTime.Milliseconds())))
	}
	if opt.StartFn != "" {
		a = append(a, "--start-fn="+opt.StartFn)
	}
	if opt.TraceFn != "" {
		a = append(a, "--trace-fn="+opt.TraceFn)
	}
	if opt.Stopped {
		a = append(a, "--started=no")
	}
	if opt.NoStack {
		a = append(a, "--no-stack=yes")
	}
	for _, f := range opt.AllocFns {
		a = append(a, "--alloc-fn="+f)
	}
	switch {
	case opt.NoAllocStacks:
		a = append(a, "--stack-depth=0")
	case opt.StackDepth > 0:
		a = append(a, fmt.Sprintf("--stack-depth=%d", opt.StackDepth))
	}
	a = append(a, sampleArgs(opt.Sample)...)
	return append(a, opt.ToolArgs...)
}

// sampleArgs returns the tool's options for sampling s (none when the
// tool has nothing to leave out): the time schedule, or the fraction of
// timesteps in parts per billion and the timestep function.
func sampleArgs(s sample.Spec) []string {
	var a []string
	if s.Timesteps > 0 {
		a = append(a, fmt.Sprintf("--sample-steps=%d", max(1, uint64(math.Round(s.Timesteps*1e9)))))
		if s.TimestepFn != "" {
			a = append(a, "--timestep-fn="+s.TimestepFn)
		}
	}
	if s.Time() && s.Count == 0 {
		sc, err := s.Schedule(0)
		if err != nil {
			return a
		}
		a = append(a, fmt.Sprintf("--sample-period=%d", sc.Period), fmt.Sprintf("--sample-length=%d", sc.Length))
		if sc.Warmup > 0 {
			a = append(a, fmt.Sprintf("--sample-warmup=%d", sc.Warmup))
		}
		if sc.First > 1 {
			a = append(a, fmt.Sprintf("--sample-first=%d", sc.First))
		}
		if sc.Jitter > 0 {
			a = append(a, fmt.Sprintf("--sample-jitter=%x", math.Float64bits(sc.Jitter)),
				fmt.Sprintf("--sample-seed=%x", sc.Seed))
		}
	}
	return a
}

// DefaultLib returns the directory where memspy looks for its Valgrind
// tool: $MEMSPY_VALGRIND_LIB if set, else the directory "valgrind" beside
// the memspy executable (make puts the tool in bin/valgrind beside
// bin/memspy) if it holds the tool, else ../libexec/memspy/valgrind from
// the executable's directory (where make install puts it).
func DefaultLib() string {
	if d := os.Getenv("MEMSPY_VALGRIND_LIB"); d != "" {
		return d
	}
	exe, err := os.Executable()
	if err != nil {
		return "valgrind"
	}
	if e, err := filepath.EvalSymlinks(exe); err == nil {
		exe = e
	}
	dir := filepath.Dir(exe)
	beside := filepath.Join(dir, "valgrind")
	installed := filepath.Join(dir, "..", "libexec", "memspy", "valgrind")
	if _, err := os.Stat(filepath.Join(beside, ToolFile)); err != nil {
		if _, err := os.Stat(filepath.Join(installed, ToolFile)); err == nil {
			return filepath.Clean(installed)
		}
	}
	return beside
}

// ExitStatus is how a traced program ended.
type ExitStatus struct {
	// Code is the exit code, or -1 when a signal killed the program.
	Code int
	// Signal is the signal that killed the program, or 0.
	Signal syscall.Signal
	// CoreDumped reports whether the kill dumped core.
	CoreDumped bool
}

// Signaled reports whether a signal killed the program.
func (s ExitStatus) Signaled() bool { return s.Signal != 0 }

// ShellCode returns the status as a shell reports it: the exit code, or
// 128 plus the number of the signal that killed the program.
func (s ExitStatus) ShellCode() int {
	if s.Signaled() {
		return 128 + int(s.Signal)
	}
	return s.Code
}

// String describes the status: "exit code 3" or "killed by signal SIGSEGV".
func (s ExitStatus) String() string {
	if s.Signaled() {
		return "killed by signal " + SignalName(s.Signal)
	}
	return fmt.Sprintf("exit code %d", s.Code)
}

var signalNames = map[syscall.Signal]string{
	syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT", syscall.SIGILL: "SIGILL",
	syscall.SIGTRAP: "SIGTRAP", syscall.SIGABRT: "SIGABRT", syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE",
	syscall.SIGKILL: "SIGKILL", syscall.SIGUSR1: "SIGUSR1", syscall.SIGSEGV: "SIGSEGV", syscall.SIGUSR2: "SIGUSR2",
	syscall.SIGPIPE: "SIGPIPE", syscall.SIGALRM: "SIGALRM", syscall.SIGTERM: "SIGTERM", syscall.SIGSTKFLT: "SIGSTKFLT",
	syscall.SIGCHLD: "SIGCHLD", syscall.SIGCONT: "SIGCONT", syscall.SIGSTOP: "SIGSTOP", syscall.SIGTSTP: "SIGTSTP",
	syscall.SIGTTIN: "SIGTTIN", syscall.SIGTTOU: "SIGTTOU", syscall.SIGURG: "SIGURG", syscall.SIGXCPU: "SIGXCPU",
	syscall.SIGXFSZ: "SIGXFSZ", syscall.SIGVTALRM: "SIGVTALRM", syscall.SIGPROF: "SIGPROF", syscall.SIGWINCH: "SIGWINCH",
	syscall.SIGIO: "SIGIO", syscall.SIGPWR: "SIGPWR", syscall.SIGSYS: "SIGSYS",
}

// SignalName returns the name of a Linux signal, such as "SIGSEGV".
func SignalName(sig syscall.Signal) string {
	if n, ok := signalNames[sig]; ok {
		return n
	}
	return fmt.Sprintf("signal %d", int(sig))
}

// Run is a program running under memspy's Valgrind tool.
type Run struct {
	cmd    *exec.Cmd
	prog   string
	pr     *os.File // read end of the stream pipe
	src    *source  // the reader's input, from pr
	reader *StreamReader
	ring   []byte   // the shared memory the tool fills
	free   *os.File // write end of the pipe that hands chunks back
	log    *vgLog   // Valgrind's messages
	exited chan struct{}

	kids *children // forked children's streams (Options.Children)

	mu      sync.Mutex
	stopped bool // the read end was closed and the process killed
	signals int  // signals forwarded
}

// Start starts prog with args under memspy's Valgrind tool:
//
//	valgrind --tool=memspy -q --vex-iropt-unroll-thresh=400 --out-fd=3 --free-fd=4 --ring-fd=5 --log-fd=6 --sigill-diagnostics=yes [--ifetch=yes] TOOLARGS -- PROG ARGS
//
// with VALGRIND_LIB=opt.ValgrindLib, the write end of a pipe as file
// descriptor 3, the ring the stream's data comes through (a shared
// memory file, 5, whose chunks go back to the tool on the pipe 4; see
// docs/valgrind-stream.md) and a pipe for Valgrind's messages after the
// others (6, or 7 with opt.Children), which memspy copies to opt.Stderr as
// they come (the program keeps its own standard error) and watches for
// instructions Valgrind cannot decode (Unsupported). It first checks that the tool speaks StreamVersion and
// that Valgrind's amd64 platform can run the program (checkProgram). Read
// the events with Reader until it returns io.EOF or an error, then call
// Wait.
func Start(prog string, args []string, opt Options) (*Run, error) {
	vg := opt.Valgrind
	if vg == "" {
		vg = os.Getenv("MEMSPY_VALGRIND")
	}
	if vg == "" {
		vg = "valgrind"
	}
	vgPath, err := exec.LookPath(vg)
	if err != nil {
		if vg == "valgrind" {
			return nil, errors.New("valgrind is not installed: apt-get install valgrind (or make, which installs it)")
		}
		return nil, fmt.Errorf("valgrind %s: %w", vg, err)
	}
	lib := opt.ValgrindLib
	if lib == "" {
		lib = DefaultLib()
	}
	if a, err := filepath.Abs(lib); err == nil {
		lib = a
	}
	for _, f := range []string{ToolFile, PreloadFile} {
		if fi, err := os.Stat(filepath.Join(lib, f)); err != nil || !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("the memspy Valgrind tool is not built (no %s in %s): run make", f, lib)
		}
	}
	if err := checkTool(lib); err != nil {
		return nil, err
	}
	if err := checkProgram(prog); err != nil {
		return nil, err
	}

	// Valgrind unrolls small loops into longer superblocks up to a size
	// (120 IR statements by default, 400 at most). The tool's work and
	// the stream's size go by superblock executions more than by
	// references, so memspy asks for the most: on matmul 512 memspy run
	// took 2.78 s instead of 3.04 s, cachegrind 2.54 s either way.
	argv := append([]string{"--tool=memspy", "-q", "--vex-iropt-unroll-thresh=400", "--out-fd=3", "--free-fd=4", "--ring-fd=5"}, opt.toolArgs()...)
	var kids *children
	logFD := 6 // Valgrind's messages: the descriptor after the others
	if opt.Children {
		if kids, err = newChildren(); err != nil {
			return nil, err
		}
		argv = append(argv, "--trace-children=yes", "--fifo-dir="+kids.dir, "--control-fd=6")
		logFD = 7
	}
	argv = append(argv, fmt.Sprintf("--log-fd=%d", logFD), "--sigill-diagnostics=yes")
	argv = append(argv, "--", prog)
	argv = append(argv, args...)
	fail := func(err error) (*Run, error) {
		if kids != nil {
			kids.started(false)
		}
		return nil, err
	}

	ringFile, ring, err := newRing()
	if err != nil {
		return fail(err)
	}
	defer ringFile.Close() // the mapping stays
	freeR, freeW, err := os.Pipe()
	if err != nil {
		syscall.Munmap(ring)
		return fail(err)
	}
	defer freeR.Close() // only the child reads
	pr, pw, err := os.Pipe()
	if err != nil {
		syscall.Munmap(ring)
		freeW.Close()
		return fail(err)
	}
	logR, logW, err := os.Pipe()
	if err != nil {
		syscall.Munmap(ring)
		freeW.Close()
		pr.Close()
		pw.Close()
		return nil, err
	}
	defer logW.Close() // only the child writes
	// With the ring the pipe carries a word per 1 MiB chunk; a larger pipe
	// helps a tool that writes its data into it. Not fatal: the limit may be
	// lower.
	syscall.Syscall(syscall.SYS_FCNTL, pw.Fd(), fSetPipeSize, pipeSize)
	cmd := exec.Command(vgPath, argv...)
	env := make([]string, 0, len(os.Environ())+1)
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "VALGRIND_LIB=") {
			env = append(env, e)
		}
	}
	cmd.Env = append(env, "VALGRIND_LIB="+lib)
	cmd.ExtraFiles = []*os.File{pw, freeR, ringFile} // fds 3, 4 and 5 in the child
	if kids != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, kids.w) // fd 6
	}
	cmd.ExtraFiles = append(cmd.ExtraFiles, logW) // logFD
	cmd.Stdin, cmd.Stdout, cmd.Stderr = opt.Stdin, opt.Stdout, opt.Stderr
	if cmd.Stdin == nil {
		cmd.Stdin = os.Stdin
	}
	if cmd.Stdout == nil {
		cmd.Stdout = os.Stdout
	}
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	if _, ok := cmd.Stderr.(*os.File); !ok {
		// Valgrind's messages and the program's standard error come
		// through two pipes: one writer at a time (os/exec shares one
		// pipe when Stdout and Stderr are the same writer).
		lw := &lockedWriter{w: cmd.Stderr}
		if sameWriter(cmd.Stdout, cmd.Stderr) {
			cmd.Stdout = lw
		}
		cmd.Stderr = lw
	}
	// A child the program leaves behind may hold on to non-file Stdout or
	// Stderr pipes: do not wait for those longer than this.
	cmd.WaitDelay = 2 * time.Second
	err = cmd.Start()
	pw.Close() // only the child writes: its exit closes the stream
	if kids != nil {
		kids.started(err == nil)
	}
	if err != nil {
		pr.Close()
		freeW.Close()
		logR.Close()
		syscall.Munmap(ring)
		return nil, fmt.Errorf("starting valgrind: %w", err)
	}
	r := &Run{cmd: cmd, prog: prog, pr: pr, ring: ring, free: freeW, kids: kids, exited: make(chan struct{})}
	r.src = &source{pr: pr, free: freeW}
	r.reader = NewStreamReader(r.src)
	r.reader.setRing(ring, freeW)
	r.reader.lib = lib
	r.reader.onFatal = r.stop
	r.log = startLog(logR, cmd.Stderr)
	go r.watch()
	return r, nil
}

// newRing returns an anonymous shared memory file of ringChunks chunks and
// its mapping: the tool fills the chunks (--ring-fd), the reader decodes
// them in place.
func newRing() (*os.File, []byte, error) {
	name := []byte("memspy-ring\x00")
	// Close-on-exec: valgrind gets it as descriptor 5 (ExtraFiles), not as
	// a second descriptor of memspy's number, which the program would see.
	fd, _, errno := syscall.Syscall(sysMemfdCreate, uintptr(unsafe.Pointer(&name[0])), mfdCloexec, 0)
	if errno != 0 {
		return nil, nil, fmt.Errorf("memfd_create: %w", errno)
	}
	f := os.NewFile(fd, "memspy-ring")
	size := ringChunks * ChunkSize
	if err := f.Truncate(int64(size)); err != nil {
		f.Close()
		return nil, nil, err
	}
	ring, err := syscall.Mmap(int(fd), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("mapping the ring: %w", err)
	}
	return f, ring, nil
}

// checkTool reports a version error when the tool in lib does not speak
// StreamVersion: its file carries the text "memspy stream version N".
func checkTool(lib string) error {
	data, err := os.ReadFile(filepath.Join(lib, ToolFile))
	if err != nil {
		return err
	}
	_, v, ok := bytes.Cut(data, []byte(toolVersionTag))
	if !ok {
		return &versionError{lib: lib}
	}
	n := 0
	for n < len(v) && n < 9 && '0' <= v[n] && v[n] <= '9' {
		n++
	}
	if got, _ := strconv.ParseUint(string(v[:n]), 10, 64); got != StreamVersion {
		return &versionError{got: got, lib: lib}
	}
	return nil
}

// checkProgram reports a clear error when prog cannot be run, or not by
// memspy's tool (checkArch).
func checkProgram(prog string) error {
	if !strings.Contains(prog, "/") {
		path, err := exec.LookPath(prog)
		switch {
		case err == nil, errors.Is(err, exec.ErrDot):
			return checkArch(prog, path)
		case errors.Is(err, exec.ErrNotFound):
			return fmt.Errorf("program not found: %s (not in PATH; give its path, e.g. ./%s)", prog, prog)
		}
		return fmt.Errorf("%s: %w", prog, err)
	}
	fi, err := os.Stat(prog)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("program not found: %s", prog)
	case err != nil:
		return err
	case fi.IsDir():
		return fmt.Errorf("%s is a directory, not a program", prog)
	case fi.Mode()&0o111 == 0:
		return fmt.Errorf("%s is not executable", prog)
	}
	return checkArch(prog, prog)
}

// Reader returns the reader of the tool's event stream.
func (r *Run) Reader() *StreamReader { return r.reader }

// Pid returns the process id of valgrind (which is the traced program's).
func (r *Run) Pid() int { return r.cmd.Process.Pid }

// stop closes the read end of the stream and kills valgrind, so that a
// tool whose stream is no longer read never blocks.
func (r *Run) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return
	}
	r.stopped = true
	r.pr.Close()
	r.cmd.Process.Kill()
}

// Signal sends sig to valgrind, which delivers it to the program.
func (r *Run) Signal(sig os.Signal) error { return r.cmd.Process.Signal(sig) }

// Forward passes on to the program a signal memspy received, such as
// SIGINT or SIGTERM, unless the terminal already sent it there: SIGINT
// and SIGQUIT typed at a terminal go to its whole foreground process
// group, valgrind included, so they are not sent twice while memspy is in
// the foreground. The third signal forwarded kills the program (SIGKILL).
// Forward is safe to call from any goroutine.
func (r *Run) Forward(sig os.Signal) error {
	r.mu.Lock()
	r.signals++
	n := r.signals
	r.mu.Unlock()
	if n >= 3 {
		return r.cmd.Process.Kill()
	}
	if (sig == syscall.SIGINT || sig == syscall.SIGQUIT) && inForeground() {
		return nil
	}
	return r.cmd.Process.Signal(sig)
}

// inForeground reports whether memspy belongs to the foreground process
// group of its controlling terminal.
func inForeground() bool {
	tty, err := os.Open("/dev/tty")
	if err != nil {
		return false
	}
	defer tty.Close()
	var pgrp int32
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, tty.Fd(), syscall.TIOCGPGRP, uintptr(unsafe.Pointer(&pgrp)))
	return errno == 0 && int(pgrp) == syscall.Getpgrp()
}

// Wait waits for valgrind to exit, and for the last of its messages and
// of a dropped stream (Drop), and returns how the program ended. Call it
// after the reader returned io.EOF or an error; if the stream was not read
// to its end, Wait first closes it and kills the program, so that the tool
// does not block on a full pipe. The error is about waiting itself, never
// about the program's exit status.
func (r *Run) Wait() (ExitStatus, error) {
	if !r.reader.done() {
		r.stop()
	}
	err := r.cmd.Wait()
	r.src.finish()
	r.log.caughtUp()
	r.mu.Lock()
	if !r.stopped {
		r.pr.Close()
	}
	r.stopped = true
	if r.ring != nil {
		r.free.Close()
		syscall.Munmap(r.ring)
		r.ring = nil
	}
	r.mu.Unlock()
	if r.cmd.ProcessState == nil {
		return ExitStatus{Code: -1}, err
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		// The process ended, but copying its output failed.
		return statusOf(r.cmd.ProcessState), err
	}
	return statusOf(r.cmd.ProcessState), nil
}

func statusOf(ps *os.ProcessState) ExitStatus {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok {
		return ExitStatus{Code: ps.ExitCode()}
	}
	if ws.Signaled() {
		return ExitStatus{Code: -1, Signal: ws.Signal(), CoreDumped: ws.CoreDump()}
	}
	return ExitStatus{Code: ws.ExitStatus()}
}
