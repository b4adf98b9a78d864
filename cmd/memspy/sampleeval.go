package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/spf13/cobra"

	"github.com/memspy/memspy/atomicfile"
	"github.com/memspy/memspy/profile"
	"github.com/memspy/memspy/report"
	"github.com/memspy/memspy/sim"
)

func newSampleEvalCmd() *cobra.Command {
	var f simFlags
	cmd := &cobra.Command{
		Use:   "sample-eval --sample SPEC [flags] TRACE | -- PROG [ARGS...]",
		Short: "Measure how well a sampling request estimates a full run",
		Long: `Simulate a trace (or a program, traced once in full) both fully and as
--sample asks, and report how the sample does: the true miss rate of the
focus cache overall and within the samples, the estimate with its bounds,
the absolute and relative error and whether the bounds hold; the Pearson r
between the full and the sampled memory time per data object (SIGMA's
characteristic data object pattern) and per function; and the bottleneck
ranking side by side (MemSpy), flagging pairs of objects above 2% of the
stall time that the sample puts the other way round.

The two runs attribute their counters (--where); a third run simulates
every reference and counts only the sampled ones, for the truth within
the samples. --json FILE writes the evaluation (docs/sampling.md lists
its fields).`,
		Example: `  memspy sample-eval --sample ratio=0.1,length=500k --cache 'L1D:size=32k,assoc=8,line=64' trace.mst
  memspy sample-eval --sample timesteps=2.5% --json eval.json -- ./stencil 200`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSampleEval(cmd, args, &f)
		},
	}
	f.simulationFlags.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.format, "format", "", "trace `FORMAT` (default: detect)")
	fl.StringArrayVar(&f.binaries, "binary", nil, "name code and data from the ELF/DWARF of the traced program `FILE`, at its link-time addresses (repeatable)")
	fl.Lookup("json").Usage = "write the evaluation as JSON to `FILE` ('-': standard output)"
	return cmd
}

func runSampleEval(cmd *cobra.Command, args []string, f *simFlags) error {
	spec, err := f.sampleSpec()
	if err != nil {
		return err
	}
	if !spec.Active() {
		return fmt.Errorf("sample-eval needs --sample SPEC")
	}
	if f.profOut != "" {
		return fmt.Errorf("--profile: sample-eval writes the evaluation (--json), not a profile")
	}
	if err := f.checkOutputs(); err != nil {
		return err
	}
	jsonOut := f.jsonOut
	f.jsonOut = ""
	f.where = true
	var full *profile.Profile
	path := args[0]
	var progErr error
	if cmd.ArgsLenAtDash() == 0 {
		// Trace the program once, in full: the full run, and a recording
		// for the other two.
		dir, err := os.MkdirTemp("", "memspy-eval")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		path = filepath.Join(dir, "run.mst")
		rf := runFlags{simulationFlags: f.simulationFlags, record: path, stackDepth: 8}
		rf.sample = ""
		rf.profOut = filepath.Join(dir, "full.json")
		progErr = runRun(cmd, args, &rf)
		if full, err = profile.ReadFile(rf.profOut); err != nil {
			if progErr != nil {
				return progErr // (why the program did not run)
			}
			return fmt.Errorf("the full run left no profile: %w", err)
		}
		if _, err := os.Stat(path); err != nil {
			return errors.Join(progErr, fmt.Errorf("the full run left no trace: %w", err))
		}
	} else if len(args) != 1 {
		return fmt.Errorf("sample-eval takes one TRACE, or -- PROG [ARGS...]")
	}
	if path == "-" {
		return fmt.Errorf("sample-eval reads the trace more than once: give a file, not standard input")
	}
	if err := f.sampleLength(path); err != nil {
		return err
	}
	runs := []struct {
		sample, where, shadow bool
		p                     *profile.Profile
		err                   error
	}{{false, f.where, false, full, nil}, {true, f.where, false, nil, nil}, {true, false, true, nil, nil}}
	var wg sync.WaitGroup
	for i := range runs {
		r := &runs[i]
		if r.p != nil {
			continue
		}
		g := *f
		if !r.sample {
			g.sample = ""
		}
		g.where = r.where
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.p, r.err = simulateFile(cmd.Context(), &g, path, r.shadow)
		}()
	}
	wg.Wait()
	for _, r := range runs {
		if r.err != nil {
			return errors.Join(progErr, r.err)
		}
	}
	focus := runs[1].p.Focus
	if focus == "" {
		focus = f.focus
	}
	if focus == "" {
		focus = runs[1].p.DefaultFocus()
	}
	ev := profile.Evaluate(runs[0].p, runs[1].p, runs[2].p, focus)
	if err := report.SampleEval(cmd.OutOrStdout(), &ev); err != nil {
		return err
	}
	if jsonOut != "" {
		data, err := json.MarshalIndent(&ev, "", "  ")
		if err != nil {
			return err
		}
		data = append(data, '\n')
		if jsonOut == "-" {
			_, err = cmd.OutOrStdout().Write(data)
		} else {
			err = atomicfile.WriteFile(jsonOut, data)
		}
		if err != nil {
			return errors.Join(progErr, err)
		}
	}
	return progErr
}

// simulateFile simulates the trace at path as f says (a shadow run:
// sim.Options.SampleShadow) and returns the profile.
func simulateFile(ctx context.Context, f *simFlags, path string, shadow bool) (*profile.Profile, error) {
	sym, err := f.symbolizer(f.binaries)
	if err != nil {
		return nil, err
	}
	f.shadow = shadow
	_, h, err := f.hierarchy(false, sym)
	if err != nil {
		return nil, err
	}
	for _, b := range f.binaries {
		h.Map(b, 0)
	}
	in, _, r, err := f.openTrace(path)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	err = sim.Run(ctx, h, r, nil)
	h.Finish()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", in.name, err)
	}
	p := h.Profile()
	return p, f.finishProfile(p)
}
