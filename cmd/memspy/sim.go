package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/memspy/memspy/profile"
	"github.com/memspy/memspy/report"
	"github.com/memspy/memspy/sim"
	"github.com/memspy/memspy/trace"
)

type simFlags struct {
	simulationFlags
	format   string
	cachelab bool
	skipBad  bool
	binaries []string
}

func newSimCmd() *cobra.Command {
	var f simFlags
	cmd := &cobra.Command{
		Use:   "sim TRACE",
		Short: "Simulate a cache hierarchy on a trace of memory references ('-' reads standard input)",
		Long: `Simulate a cache hierarchy on a trace and print per-cache statistics.

The trace format is detected from the content (din, xdin, lackey, pinatrace,
addrkind, mst); compressed input (.gz, .bz2, .zst, .xz) is recognised by its
magic bytes. The counting rules are in docs/semantics.md.`,
		Example: `  memspy sim ../shared/traces/long.trace --machine x86-modern
  memspy sim trace.din.gz --config mymachine.yaml --classify 3c --json out.json
  bzcat big.din.bz2 | memspy sim - --format din --cache 'L1D:size=32k,assoc=8,line=64'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSim(cmd, args[0], &f)
		},
	}
	f.simulationFlags.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.format, "format", "", "trace `FORMAT` (default: detect); see `memspy sim --help`")
	fl.BoolVar(&f.cachelab, "cachelab", false, "CS:APP cache lab conventions: one line per access, ignore I, print hits/misses/evictions")
	fl.BoolVar(&f.skipBad, "skip-bad", false, "count and skip malformed lines instead of stopping")
	fl.StringArrayVar(&f.binaries, "binary", nil, "with --where: name code and data from the ELF/DWARF of the traced program `FILE`, at its link-time addresses (repeatable)")
	return cmd
}

func runSim(cmd *cobra.Command, path string, f *simFlags) error {
	if err := f.checkOutputs(); err != nil {
		return err
	}
	sym, err := f.symbolizer(f.binaries)
	if err != nil {
		return err
	}
	if err := f.sampleLength(path); err != nil {
		return err
	}
	_, h, err := f.hierarchy(f.cachelab, sym)
	if err != nil {
		return err
	}
	for _, b := range f.binaries {
		h.Map(b, 0)
	}
	in, src, r, err := f.openTrace(path)
	if err != nil {
		return err
	}
	defer in.Close()
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	bar := newProgress(in, "simulating")
	stopProfile, err := f.startProfile()
	if err != nil {
		return err
	}
	defer stopProfile()
	start := time.Now()
	runErr := sim.Run(ctx, h, r, bar.update)
	bar.done()
	h.Finish()
	elapsed := time.Since(start)

	p := h.Profile()
	p.Source = profile.Source{Name: in.name, Format: src.Format()}
	if err := f.writeHeapProfile(); err != nil {
		return err
	}
	if s, ok := src.(trace.Skipper); ok {
		p.Skipped = uint64(s.Skipped())
	}
	if runErr != nil {
		p.Complete = false
		p.Error = runErr.Error()
	}
	if err := f.finishProfile(p); err != nil {
		return err
	}
	warnSymbols(cmd.ErrOrStderr(), sym)
	if err := writeResults(cmd, p, f); err != nil {
		return err
	}
	if f.stats {
		printStats(cmd.ErrOrStderr(), p.Events, elapsed, time.Since(start)-elapsed)
	}
	if p.Skipped > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "memspy: skipped %d malformed lines of %s\n", p.Skipped, in.name)
	}
	if runErr != nil {
		// The reader's errors name the input (and the line or byte).
		return fmt.Errorf("%w (statistics above cover the events before the error)", runErr)
	}
	if p.Events == 0 && f.skipRefs == 0 {
		return fmt.Errorf("no references in %s", in.name)
	}
	return nil
}

// writeResults prints the summary and writes the requested files.
func writeResults(cmd *cobra.Command, p *profile.Profile, f *simFlags) error {
	out := cmd.OutOrStdout()
	if f.jsonOut == "-" {
		if err := p.Write(out); err != nil {
			return err
		}
		return f.writeFiles(p)
	}
	var err error
	if f.cachelab {
		err = report.CacheLab(out, p)
	} else {
		err = report.Text(out, p)
	}
	if err != nil {
		return err
	}
	return f.writeFiles(p)
}

// printStats reports the speed of a run (its events simulated in
// elapsed), the time after it to build and write the results, and the
// process's peak resident memory.
func printStats(w io.Writer, events uint64, elapsed, results time.Duration) {
	var ru syscall.Rusage
	rss := "?"
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		rss = report.Bytes(uint64(ru.Maxrss) * 1024) // Linux reports KiB
	}
	fmt.Fprintf(w, "memspy: %d events in %.3f s: %.1f M events/s; results built and written in %.3f s; peak RSS %s\n",
		events, elapsed.Seconds(), float64(events)/elapsed.Seconds()/1e6, results.Seconds(), rss)
}

// sampleLength checks the --sample request for a trace and, for count=,
// counts the references of the trace at path (within --skip-refs and
// --max-refs) in a first pass.
func (f *simFlags) sampleLength(path string) error {
	spec, err := f.sampleSpec()
	if err != nil || !spec.Active() {
		return err
	}
	if spec.TimestepFn != "" {
		return fmt.Errorf("--sample timestep-fn=%s: memspy run marks the timesteps of a function; a trace carries its timesteps as memspy.h sample markers (use timesteps= alone)", spec.TimestepFn)
	}
	if spec.Count == 0 {
		return nil
	}
	if path == "-" {
		return fmt.Errorf("--sample count=%d needs the trace's length, which standard input cannot give twice: use ratio= and length=", spec.Count)
	}
	in, _, r, err := f.openTrace(path)
	if err != nil {
		return err
	}
	defer in.Close()
	b := trace.NewBatch(trace.BatchSize)
	for {
		err := r.Read(b)
		for _, k := range b.Kind {
			if k.IsAccess() {
				f.sampleTotal++
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("counting the references of %s for --sample count=: %w", in.name, err)
		}
	}
}

// openTrace opens the trace at path: the input, its reader, and the
// reader within --skip-refs and --max-refs.
func (f *simFlags) openTrace(path string) (in *input, src, r trace.Reader, err error) {
	if in, err = openInput(path); err != nil {
		return nil, nil, nil, err
	}
	src, err = trace.OpenReader(in, in.name, f.format, trace.Options{Name: in.name, SkipBad: f.skipBad})
	if err != nil {
		in.Close()
		return nil, nil, nil, err
	}
	return in, src, trace.Window(src, f.skipRefs, f.maxRefs, false), nil
}
