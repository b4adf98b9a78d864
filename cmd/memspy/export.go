package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memspy/memspy/atomicfile"
	"github.com/memspy/memspy/export"
	"github.com/memspy/memspy/profile"
)

func newExportCmd() *cobra.Command {
	var out, format, by string
	cmd := &cobra.Command{
		Use:   "export PROFILE -o OUTPUT",
		Short: "Export a saved --where profile for other tools (pprof, callgrind, cachegrind)",
		Long: `Export the where and why of a saved profile (run or sim with --where and
--profile FILE) in another tool's format (see docs/export.md):

  pprof       gzip-compressed pprof protocol buffers for go tool pprof: a
              sample type per counter of each cache (l1d_misses, l1d_cold,
              ...) plus stall_cycles (the default) and instructions; a
              sample per reference labelled object=, kind= and access=
  callgrind   Callgrind's format for KCachegrind and callgrind_annotate: an
              event per sample type, costs by function and source line, and
              the calls between functions with their inclusive costs (from
              the profile's call tree)
  cachegrind  Cachegrind's format for cg_annotate, cg_diff and cg_merge: the
              same events under short names (L1Dm for l1d_misses, L1Dcold,
              L2st for l2_stall_cycles, Stall, Ir for instructions; a desc:
              line lists them), costs by function and source line

--by object puts the data objects in place of the functions, so that the
tools' views of code show data structures: each object at its allocation
site when the profile has it (a heap block's), else at no file, with its
counters (they add up to the profile's entry of the object). Objects run
no code, so there are no instructions or sync cycles, and no calls: in
KCachegrind and callgrind_annotate an object's inclusive cost is its self
cost. In pprof the object is the innermost frame, under the code that
touched it (-top: objects flat, functions cumulative).

--by stack puts each function under the call path of its callers, from the
profile's call tree (memspy run --where; sim --where of a trace with calls
and returns): a sample per calling context with its own counters, without
source lines or objects. In go tool pprof -http, the flame graph.

The output is written atomically.`,
		Example: `  memspy sim --where --profile mm.memspy trace.din
  memspy export mm.memspy -o mm.pb.gz
  go tool pprof -top -sample_index=l1d_misses mm.pb.gz
  go tool pprof -top -tagfocus=object=B mm.pb.gz
  memspy export --format callgrind mm.memspy -o callgrind.out.mm
  callgrind_annotate callgrind.out.mm
  memspy export --by object mm.memspy -o mm-data.pb.gz
  go tool pprof -top -sample_index=l1d_misses mm-data.pb.gz
  memspy export --format callgrind --by object mm.memspy -o callgrind.out.mm-data
  kcachegrind callgrind.out.mm-data          # the treemap of the data objects
  memspy export --by stack mm.memspy -o mm-stacks.pb.gz
  go tool pprof -http=: -sample_index=l1d_misses mm-stacks.pb.gz   # flame graph
  memspy export --format cachegrind mm.memspy -o cachegrind.out.mm
  cg_annotate --show=L1Dm,L1Dcold --sort=L1Dm cachegrind.out.mm
  cg_diff cachegrind.out.before cachegrind.out.mm > cachegrind.diff`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return errors.New("give the output file with -o")
			}
			if !slices.Contains(export.Formats(), format) {
				return fmt.Errorf("--format %s: unknown (formats: %s)", format, strings.Join(export.Formats(), ", "))
			}
			b, err := export.ParseBy(by)
			if err != nil {
				return err
			}
			return runExport(args[0], out, format, b)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&out, "output", "o", "", "output `FILE`")
	fl.StringVar(&format, "format", "pprof", "output `FORMAT`: "+strings.Join(export.Formats(), ", "))
	fl.StringVar(&by, "by", string(export.ByFunction), "what the costs are at: `function` (the code), object (the data objects) or stack (the code under its callers)")
	return cmd
}

// runExport writes the profile at in to out in format, by function or
// object.
func runExport(in, out, format string, by export.By) error {
	p, err := profile.ReadFile(in)
	if err != nil {
		return err
	}
	s, err := export.FromProfile(p, by)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	f, err := atomicfile.Create(out)
	if err != nil {
		return err
	}
	if err := export.Write(f, format, s); err != nil {
		f.Abort()
		return fmt.Errorf("writing %s: %w", out, err)
	}
	return f.Commit()
}
