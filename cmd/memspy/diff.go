package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memspy/memspy/profile"
	"github.com/memspy/memspy/report"
)

func newDiffCmd() *cobra.Command {
	var opt report.DiffOptions
	var renames []string
	cmd := &cobra.Command{
		Use:   "diff A B [VIEW]",
		Short: "Compare two saved profiles: before and after a change, sequential and parallel",
		Long: `Compare two saved profiles (--profile of run or sim), A before and B after:
for each counter its value in A, in B, the change (B − A) and the relative
change (over A's value). Entries are matched by name (references by PC,
function and object); those only in A are "removed", those only in B
"added". Only the caches both machines have are compared, and the notes say
which caches differ. Without VIEW, the summary. The views of entries need
--where in both runs and are sorted by the absolute change of stall cycles
(--sort COUNTER: ` + strings.Join(report.DiffCounters(), ", ") + `).
docs/diff.md has the details.

Views:
` + viewsHelp(report.DiffViews(), report.DiffViewHelp),
		Example: `  memspy sim trace.din.gz --where --cache L1D:size=1k,assoc=2,line=32 --profile small.memspy
  memspy sim trace.din.gz --where --cache L1D:size=8k,assoc=4,line=32 --profile big.memspy
  memspy diff small.memspy big.memspy
  memspy diff small.memspy big.memspy objects --top 10
  memspy diff before.memspy after.memspy pairs --rename A_old=A --sort misses --format csv
  memspy diff seq.memspy par.memspy functions --focus L2`,
		Args: cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			view := "summary"
			if len(args) == 3 {
				view = args[2]
			}
			a, err := profile.ReadFile(args[0])
			if err != nil {
				return err
			}
			b, err := profile.ReadFile(args[1])
			if err != nil {
				return err
			}
			// The --rename flag of run and sim, parsed the same way.
			names, err := renameMap(renames)
			if err != nil {
				return err
			}
			if len(names) > 0 && !a.Options.Where {
				return fmt.Errorf("--rename: %s has no where-and-why data (run with --where)", args[0])
			}
			if err := a.Rename(names); err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			opt.NameA, opt.NameB = args[0], args[1]
			return report.Diff(cmd.OutOrStdout(), a, b, view, opt)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&renames, "rename", nil, "rename an object or function of A before matching, `OLD=NEW` (repeatable)")
	fl.StringVar(&opt.Focus, "focus", "", "the cache whose misses and causes the entries compare (default: A's focus)")
	fl.StringVar(&opt.Sort, "sort", "", "order the entries by the absolute change of `COUNTER` (default: stall_cycles)")
	fl.IntVar(&opt.Top, "top", 0, "entries per table (0: 20; negative: all)")
	fl.StringVar(&opt.Format, "format", "", "output format: text (default), csv or json")
	return cmd
}
