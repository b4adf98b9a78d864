package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/memspy/memspy/atomicfile"
	"github.com/memspy/memspy/profile"
	"github.com/memspy/memspy/report"
	"github.com/memspy/memspy/sim"
	"github.com/memspy/memspy/symbolize"
	"github.com/memspy/memspy/trace"
	"github.com/memspy/memspy/tracer/valgrind"
)

type runFlags struct {
	simulationFlags
	record     string
	ifetch     bool
	startFn    string
	traceFn    string
	maxTime    time.Duration
	stopped    bool
	noStack    bool
	allocFns   []string
	stackDepth int
	drain      bool
	children   bool
	noChildren bool
	l1InTool   bool
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run [flags] -- PROG [ARGS...]",
		Short: "Run a program under memspy's Valgrind tool and simulate its memory references as it runs",
		Long: `Run a program under memspy's Valgrind tool and simulate a cache hierarchy on
its memory references while it runs.

The program's standard input, output and error pass through unchanged;
memspy's summary goes to standard error when it ends. memspy exits with the
program's exit status (128+N when signal N killed it); when memspy itself
fails, it says why and exits with 1 if the program exited with 0.

Instruction fetches are traced when a cache of the machine holds
instructions (--ifetch overrides). Allocations (malloc and friends, C++
new/delete, Go's runtime.mallocgc, --alloc-fn functions), calls and returns
and the markers of memspy.h are traced too.

Partial traces, as in METRIC: --start-fn begins at the first entry of a
function, --trace-fn records only while a function is on the stack,
--skip-refs/--max-refs cut at exact references, --max-time stops after a
while; outside the traced part the program runs at Valgrind's base speed.
--no-stack drops references through the stack pointer (MemSpy's stack
filter).

On SIGINT or SIGTERM the signal goes to the program and memspy stops
simulating: the events still buffered, and those to come, are dropped (it
says how much of the stream), and the statistics of what was simulated
are printed and written without waiting for the program more than a
moment; memspy then waits for it to exit. A program killed by SIGKILL is
cut short the same way.

memspy traces 64-bit x86 programs (a #! script by its interpreter) and
refuses others. Valgrind cannot run AVX-512 instructions: a program that
meets one dies of SIGILL, and memspy says so. The tool is looked for in
$MEMSPY_VALGRIND_LIB, else in valgrind/ beside the memspy executable (make
builds it there) or ../libexec/memspy/valgrind (make install);
$MEMSPY_VALGRIND names another valgrind.`,
		Example: `  memspy run -- ./matmul 512
  memspy run --machine x86-modern --classify 3c --json prof.json -- ./prog arg
  memspy run --cache 'L1D:size=32k,assoc=8,line=64,holds=data' --record prog.mst -- ./prog
  memspy run --start-fn kernel --max-refs 1000000 -- ./prog
  memspy run --trace-fn solve --no-stack --alloc-fn pool_alloc:rsi -- ./prog`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRun(cmd, args, &f)
		},
	}
	f.simulationFlags.register(cmd)
	fl := cmd.Flags()
	fl.SetInterspersed(false) // flags after PROG belong to it
	fl.StringVar(&f.record, "record", "", "also write the events to the .mst trace `FILE`")
	fl.BoolVar(&f.ifetch, "ifetch", false, "trace instruction fetches (default: when a cache holds instructions)")
	fl.StringVar(&f.startFn, "start-fn", "", "start tracing at the first entry of function `NAME`")
	fl.StringVar(&f.traceFn, "trace-fn", "", "trace only while function `NAME` is on the stack")
	fl.DurationVar(&f.maxTime, "max-time", 0, "stop tracing after this `duration` (e.g. 30s; 0: no limit)")
	fl.BoolVar(&f.stopped, "start-stopped", false, "start with tracing stopped, until the program calls MEMSPY_START_TRACING()")
	fl.BoolVar(&f.noStack, "no-stack", false, "drop references through the stack pointer")
	fl.BoolVar(&f.drain, "drain", false, "hand the tool's stream back undecoded and simulate nothing: the cost of tracing alone (for memspy developers, make bench-run)")
	fl.MarkHidden("drain")
	fl.StringArrayVar(&f.allocFns, "alloc-fn", nil, "treat function `NAME[:REG]` as an allocator: size in REG (rdi by default) at entry, block in rax at return (repeatable)")
	fl.IntVar(&f.stackDepth, "stack-depth", 8, "call stack depth recorded for allocations (1..64)")
	fl.BoolVar(&f.children, "children", true, "follow the program's children (fork and exec): each program each process runs is simulated on its own, "+
		"the summary is their total and the profile has a section per process (memspy report PROFILE processes); "+
		"not with --record, --skip-refs or --max-refs, which cover the program memspy starts")
	fl.BoolVar(&f.noChildren, "no-children", false, "do not follow the program's children: they run untraced")
	fl.BoolVar(&f.l1InTool, "l1-in-tool", true, "let the Valgrind tool simulate the first-level caches itself and send memspy only what they send below them "+
		"(with --where --miss-only: the accesses the attribution needs), "+
		"when that gives the same result (one processor, no --where but with --miss-only, LRU or FIFO first caches, nothing below that removes their lines, no sampling, "+
		"--record, --skip-refs or --max-refs); false: the engine simulates every reference")
	return cmd
}

func runRun(cmd *cobra.Command, argv []string, f *runFlags) error {
	sym, err := f.symbolizer(nil)
	if err != nil {
		return err
	}
	m, h, err := f.hierarchy(false, sym)
	if err != nil {
		return err
	}
	spec, _ := f.sampleSpec() // checked by hierarchy
	ifetch := f.ifetch
	if !cmd.Flags().Changed("ifetch") {
		for i := range m.Caches {
			ifetch = ifetch || m.Caches[i].HoldsInstructions()
		}
	}
	prog, args := argv[0], argv[1:]
	if err := f.checkOutputs(); err != nil {
		return err
	}
	var rec *recording
	if f.record != "" {
		if rec, err = startRecording(f.record, argv); err != nil {
			return err
		}
		defer rec.f.Abort() // nothing once put in place
	}

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if f.stackDepth < 1 || f.stackDepth > 64 {
		return fmt.Errorf("--stack-depth %d: give 1 to 64", f.stackDepth)
	}
	if f.maxTime < 0 {
		return fmt.Errorf("--max-time %v: give a positive duration", f.maxTime)
	}
	for _, a := range f.allocFns {
		if err := checkAllocFn(a); err != nil {
			return err
		}
	}
	var maxEvents uint64
	if f.maxRefs > 0 {
		maxEvents = f.skipRefs + f.maxRefs
	}
	toolSpec := spec
	if f.skipRefs > 0 || f.maxRefs > 0 {
		// The tool would place time samples from the program's first
		// reference, the engine places them from the window's: only the
		// engine leaves references out then.
		toolSpec.Ratio, toolSpec.Count = 0, 0
	}
	opts := valgrind.Options{
		ValgrindLib: valgrind.DefaultLib(),
		IFetch:      ifetch,
		MaxEvents:   maxEvents,
		MaxTime:     f.maxTime,
		StartFn:     f.startFn,
		TraceFn:     f.traceFn,
		Stopped:     f.stopped,
		NoStack:     f.noStack,
		AllocFns:    f.allocFns,
		StackDepth:  f.stackDepth,
		// Only the naming of data objects (--where) and a recording use
		// the allocations' call stacks.
		NoAllocStacks: !f.attributing() && rec == nil,
		Sample:        toolSpec,
		Children:      f.children && !f.noChildren && rec == nil && f.skipRefs == 0 && f.maxRefs == 0,
		Stdin:         cmd.InOrStdin(),
		Stdout:        cmd.OutOrStdout(),
		Stderr:        cmd.ErrOrStderr(),
	}
	if f.l1InTool && rec == nil && f.skipRefs == 0 && f.maxRefs == 0 {
		d, i, ok := h.TracerFirstLevels(ifetch)
		notes := false
		if !ok {
			d, i, ok = h.TracerNotes(ifetch) // --where --miss-only
			notes = ok
		}
		if ok {
			opts.FirstLevel = &valgrind.FirstLevel{DataIndex: d, Data: &m.Caches[d], InstrIndex: i, Notes: notes}
			if i >= 0 {
				opts.FirstLevel.Instr = &m.Caches[i]
			}
		}
	}
	if sym != nil {
		// Read the symbols of the files the program maps first while
		// Valgrind starts.
		symbolize.Prefetch(symbolize.ProgramFiles(prog)...)
	}
	run, err := valgrind.Start(prog, args, opts)
	if err != nil {
		return err
	}
	var kids *tree
	if opts.Children {
		kids = &tree{ctx: context.Background(), building: make(chan struct{}, maxBuilding), engine: func() (*sim.Hierarchy, error) {
			sym, err := f.symbolizer(nil)
			if err != nil {
				return nil, err
			}
			_, h, err := f.hierarchy(false, sym)
			return h, err
		}}
		kids.follow(run.Children())
	}
	var interrupted atomic.Bool
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case sig := <-sigs:
				interrupted.Store(true)
				run.Forward(sig)
				if !f.drain {
					// Nobody waits for the events buffered, nor for those
					// read ahead.
					run.Drop()
					h.Abandon()
				}
			case <-done:
				return
			}
		}
	}()

	if f.drain {
		return drainRun(cmd, prog, run)
	}
	if rec == nil && f.skipRefs == 0 && f.maxRefs == 0 {
		// Only the engine sees the events: fold fetches into runs where
		// that changes no result (a window counts references one by one,
		// a recording keeps every fetch).
		run.Reader().SetIFetchRuns(h.IFetchRuns())
	}
	// The tool stops soon after skip+max events; the window cuts exactly
	// and drains the rest so the tool is never blocked.
	r := trace.Window(run.Reader(), f.skipRefs, f.maxRefs, true)
	if rec != nil {
		r = &teeReader{r: r, w: rec.w}
	}
	stopProfile, err := f.startProfile()
	if err != nil {
		run.Wait()
		return err
	}
	defer stopProfile()
	start := time.Now()
	runErr := sim.Run(context.Background(), h, r, nil)
	h.Finish()
	// The profile is built while the program exits and the children's
	// simulations end (as many profiles built at a time as tree.building
	// allows).
	built := make(chan *profile.Profile, 1)
	go func() {
		if kids != nil {
			built <- kids.build(h)
			return
		}
		built <- h.Profile()
	}()
	var root *image // the first image of the tree, with kids
	if kids != nil {
		// The programs the process execs follow in its stream.
		root = &image{r: run.Reader(), h: h, root: true}
		kids.add(root)
		kids.finish(root, runErr)
		if next := run.Reader().Next(); next != nil {
			kids.chain(next, true)
		}
	}
	// An interrupted program has a moment to exit, so that what it says
	// comes before the statistics; they do not wait for it longer.
	exited := true
	if interrupted.Load() {
		select {
		case <-run.Exited():
		case <-time.After(exitGrace):
			exited = false
		}
	}
	var status valgrind.ExitStatus
	var waitErr error
	if exited {
		status, waitErr = run.Wait()
	}
	if kids != nil {
		// After an interrupt or a kill nobody waits for the children's
		// events either: their streams are closed at once.
		grace := childGrace
		if interrupted.Load() || status.Signal == syscall.SIGKILL {
			grace = 0
		}
		kids.wait(grace, run.StopChildren)
	}
	elapsed := time.Since(start)

	killed := killedBy(prog, status)
	// A stream cut short is expected when the program was killed;
	// anything else wrong with it is memspy's failure (a corrupt stream
	// also made memspy kill the program).
	streamFail := runErr != nil &&
		!(errors.Is(runErr, valgrind.ErrNoEnd) && (killed != "" || interrupted.Load()))
	p := <-built
	if kids != nil && len(kids.images) > 1 {
		rootStatus := status.String()
		if !exited {
			rootStatus = "interrupted, still running"
		}
		kids.keep(root, p)
		if p, err = kids.profile(rootStatus); err != nil {
			return err
		}
	}
	p.Source = profile.Source{Name: prog, Format: "valgrind"}
	if err := f.writeHeapProfile(); err != nil {
		return err
	}
	switch {
	case interrupted.Load():
		p.Complete, p.Error = false, "interrupted"
	case streamFail:
		p.Complete, p.Error = false, runErr.Error()
	case killed != "":
		p.Complete, p.Error = false, killed
	}

	// What went wrong on memspy's side, in order of importance.
	var fail []error
	if streamFail {
		fail = append(fail, fmt.Errorf("tracing %s: %w (the statistics cover the events before the error)", prog, runErr))
	}
	stderr := cmd.ErrOrStderr()
	if err := f.finishProfile(p); err != nil {
		fail = append(fail, err)
	}
	warnSymbols(stderr, sym)
	if err := report.Text(stderr, p); err != nil {
		fail = append(fail, err)
	}
	if f.jsonOut == "-" {
		if err := p.Write(cmd.OutOrStdout()); err != nil {
			fail = append(fail, err)
		}
	}
	var recFile []*atomicfile.File
	if rec != nil {
		if rf, err := rec.finish(); err != nil {
			fail = append(fail, err)
		} else {
			recFile = append(recFile, rf)
		}
	}
	if err := f.writeFiles(p, recFile...); err != nil {
		fail = append(fail, err)
	}
	if f.stats {
		printStats(stderr, p.Events, elapsed, time.Since(start)-elapsed)
		if fl := opts.FirstLevel; fl != nil {
			names := fl.Data.Name
			if fl.Instr != nil && fl.Instr != fl.Data {
				names = fl.Instr.Name + " and " + names
			}
			fmt.Fprintf(stderr, "memspy: the Valgrind tool simulated %s (--l1-in-tool)\n", names)
		}
	}
	if interrupted.Load() {
		fmt.Fprintf(stderr, "memspy: interrupted: the statistics cover %s until then\n", prog)
	}
	if n := run.Dropped(); n > 0 {
		when := "buffered when it was killed"
		if interrupted.Load() {
			when = "buffered at the interrupt or written after it"
		}
		fmt.Fprintf(stderr, "memspy: %s of %s's event stream, %s, went unread and unsimulated\n", report.Bytes(uint64(n)), prog, when)
	}
	if n := h.PassedOver(); n > 0 {
		fmt.Fprintf(stderr, "memspy: %d events of %s's, read ahead at the interrupt, went unsimulated\n", n, prog)
	}
	if !exited {
		fmt.Fprintf(stderr, "memspy: waiting for %s to exit\n", prog)
		status, waitErr = run.Wait()
		killed = killedBy(prog, status)
	}
	if waitErr != nil {
		fail = append(fail, waitErr)
	}
	if err := run.Unsupported(status); err != nil {
		fail = append(fail, err)
	}

	code := status.ShellCode()
	switch {
	case len(fail) > 0:
		if killed != "" && !streamFail {
			fmt.Fprintf(stderr, "memspy: %s\n", killed)
		}
		if code == 0 {
			code = 1
		}
		return &exitError{code: code, err: errors.Join(fail...)}
	case killed != "":
		return &exitError{code: code, err: errors.New(killed)}
	case code != 0:
		return &exitError{code: code} // the program's failure: nothing to add
	}
	return nil
}

// exitGrace is how long memspy run waits, after an interrupt, for the
// program to exit before it prints the statistics (it then waits for the
// exit status after them).
const exitGrace = 300 * time.Millisecond

// killedBy says what killed prog, or "" if no signal did.
func killedBy(prog string, status valgrind.ExitStatus) string {
	if !status.Signaled() {
		return ""
	}
	return fmt.Sprintf("%s was killed by signal %s", prog, valgrind.SignalName(status.Signal))
}

// checkAllocFn checks an --alloc-fn value: NAME, or NAME:REG where the
// colon is not part of a C++ "::".
func checkAllocFn(a string) error {
	name, reg := a, ""
	if i := strings.LastIndex(a, ":"); i > 0 && a[i-1] != ':' {
		name, reg = a[:i], a[i+1:]
		if reg == "" || !slices.Contains([]string{"rdi", "rsi", "rdx", "rcx", "r8", "r9", "rax", "rbx"}, reg) {
			return fmt.Errorf("--alloc-fn %q: the size register must be one of rdi rsi rdx rcx r8 r9 rax rbx", a)
		}
	}
	if name == "" || strings.HasSuffix(name, ":") {
		return fmt.Errorf("--alloc-fn %q: give a function name", a)
	}
	return nil
}

// teeReader passes events on and writes them to w. A write error stops
// the writing, not the reading; it is kept in err.
type teeReader struct {
	r   trace.Reader
	w   trace.Writer
	err error
}

func (t *teeReader) Read(b *trace.Batch) error {
	err := t.r.Read(b)
	if t.err == nil && b.Len() > 0 {
		t.err = t.w.Write(b)
	}
	return err
}

func (t *teeReader) Format() string { return t.r.Format() }

// recording is an .mst file being written atomically (package
// atomicfile): it appears, complete, when the run's outputs are put in
// place together.
type recording struct {
	f *atomicfile.File
	w *trace.MSTWriter
}

func startRecording(path string, argv []string) (*recording, error) {
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, err
	}
	w, err := trace.NewMSTWriter(f, trace.MSTWriterOptions{Meta: trace.MSTMeta{
		Creator: "memspy " + version, Created: time.Now().UTC(), Source: commandLine(argv), SourceFormat: "valgrind",
	}})
	if err != nil {
		f.Abort()
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	return &recording{f: f, w: w}, nil
}

// finish completes the .mst data and returns the file to put in place,
// or aborts it.
func (r *recording) finish() (*atomicfile.File, error) {
	if err := r.w.Close(); err != nil {
		r.f.Abort()
		return nil, fmt.Errorf("writing %s: %w", r.f.Path(), err)
	}
	return r.f, nil
}

// commandLine joins a command and its arguments, quoting those that need
// it.
func commandLine(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = a
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\$`;&|<>()*?[]#~") {
			q[i] = strconv.Quote(a)
		}
	}
	return strings.Join(q, " ")
}

// drainRun passes over the stream of run undecoded (--drain), says how
// much there was and how long it took, and exits as the program did.
func drainRun(cmd *cobra.Command, prog string, run *valgrind.Run) error {
	start := time.Now()
	n, err := run.Reader().Drain()
	status, waitErr := run.Wait()
	fmt.Fprintf(cmd.ErrOrStderr(), "memspy: drained %s bytes of %s's stream in %.3f s\n", report.Count(uint64(n)), prog, time.Since(start).Seconds())
	if err = errors.Join(err, waitErr); err != nil {
		return &exitError{code: max(1, status.ShellCode()), err: err}
	}
	if code := status.ShellCode(); code != 0 {
		return &exitError{code: code}
	}
	return nil
}
