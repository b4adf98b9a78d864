package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"memspy/atomicfile"
	"memspy/export"
	"memspy/profile"
)

func newExportCmd() *cobra.Command {
	var out, format string
	cmd := &cobra.Command{
		Use:   "export PROFILE -o OUTPUT",
		Short: "Export a saved --where profile for other tools (pprof, callgrind)",
		Long: `Export the where and why of a saved profile (run or sim with --where and
--profile FILE) in another tool's format (see docs/export.md):

  pprof      gzip-compressed pprof protocol buffers for go tool pprof: a
             sample type per counter of each cache (l1d_misses, l1d_cold,
             ...) plus stall_cycles (the default) and instructions; a
             sample per reference labelled object=, kind= and access=
  callgrind  Callgrind's format for KCachegrind and callgrind_annotate: an
             event per sample type, costs by function and source line

The output is written atomically.`,
		Example: `  memspy sim --where --profile mm.memspy trace.din
  memspy export mm.memspy -o mm.pb.gz
  go tool pprof -top -sample_index=l1d_misses mm.pb.gz
  go tool pprof -top -tagfocus=object=B mm.pb.gz
  memspy export --format callgrind mm.memspy -o callgrind.out.mm
  callgrind_annotate callgrind.out.mm`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return errors.New("give the output file with -o")
			}
			if !slices.Contains(export.Formats(), format) {
				return fmt.Errorf("--format %s: unknown (formats: %s)", format, strings.Join(export.Formats(), ", "))
			}
			return runExport(args[0], out, format)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&out, "output", "o", "", "output `FILE`")
	fl.StringVar(&format, "format", "pprof", "output `FORMAT`: "+strings.Join(export.Formats(), ", "))
	return cmd
}

// runExport writes the profile at in to out in format.
func runExport(in, out, format string) error {
	p, err := profile.ReadFile(in)
	if err != nil {
		return err
	}
	s, err := export.FromProfile(p)
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
