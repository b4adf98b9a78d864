package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memspy/memspy/profile"
	"github.com/memspy/memspy/report"
)

type reportFlags struct {
	opt   report.ViewOptions
	focus string
	pid   int
	html  string // --html: the file of the web UI
}

// viewsHelp lists views in a command's help, each with its description.
func viewsHelp(views []string, help func(string) string) string {
	var b strings.Builder
	for _, v := range views {
		fmt.Fprintf(&b, "  %-10s %s\n", v, help(v))
	}
	return b.String()
}

func newReportCmd() *cobra.Command {
	var f reportFlags
	cmd := &cobra.Command{
		Use:   "report PROFILE [VIEW]",
		Short: "Render a view of a saved profile (--profile or --json of run/sim) without running again",
		Long: `Render one view of the where and why of a saved profile (run or sim with
--where and --profile FILE or --json FILE). Without VIEW, the summary that
run and sim print. The processors, threads and sync views need no --where,
but a machine of several processors (--procs N); the numa view a machine of
several NUMA nodes (--numa N), and --where or --monitor protocol for its
data structures.

With --html FILE, instead of a view, the web UI of the profile: one
self-contained HTML file with every level below, clickable from the
overview down to a reference's source lines, charts (cycles by procedure,
a treemap of the data structures, who evicts whom) and controls for the
cache, process, processor and a threshold (docs/web.md; memspy serve
serves the same pages).

Views, from the broad to the detailed (MemSpy's hierarchy of detail):
` + viewsHelp(report.Views(), report.ViewHelp),
		Example: `  memspy run --where --profile mm.memspy -- ./matmul 256
  memspy report mm.memspy overview
  memspy report mm.memspy --html mm.html
  memspy report mm.memspy overview --inclusive
  memspy report mm.memspy stalls --top 10
  memspy report mm.memspy lines --function mult
  memspy report mm.memspy data --function mult
  memspy report mm.memspy detail --object B
  memspy report mm.memspy evictors --object B --focus L2
  memspy report mm.memspy refs --evictors --format csv
  memspy run --machine memspy-par --procs 4 --where --profile c.memspy -- ./counters
  memspy report c.memspy processors
  memspy report c.memspy sharing
  memspy run --where --profile make.memspy -- make
  memspy report make.memspy processes
  memspy report make.memspy --pid 4242`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.html != "" {
				return reportHTML(cmd, args, f)
			}
			p, err := profile.ReadFile(args[0])
			if err != nil {
				return err
			}
			treeWhere := false // a process's summary, of a tree with where-and-why
			if cmd.Flags().Changed("pid") {
				treeWhere = p.Options.Where
				if p, err = p.ForPid(f.pid); err != nil {
					return err
				}
			}
			if p.Options.Where {
				if err := p.SetFocus(f.focus); err != nil {
					return err
				}
			} else if f.focus != "" {
				return fmt.Errorf("--focus: %s has no where-and-why data (run with --where)", args[0])
			}
			if len(args) == 1 {
				if f.opt.Format != "" && f.opt.Format != "text" {
					return fmt.Errorf("--format %s: give a view (%s)", f.opt.Format, strings.Join(report.Views(), ", "))
				}
				return report.Text(cmd.OutOrStdout(), p)
			}
			err = report.View(cmd.OutOrStdout(), p, args[1], f.opt)
			if errors.Is(err, report.ErrNoWhere) && treeWhere {
				return fmt.Errorf("--pid %d: the where-and-why of a process tree adds up over its processes (kept per process, it would grow with their number): "+
					"memspy report %s %s shows the tree's; memspy report %s --pid %d this process's counters", f.pid, args[0], args[1], args[0], f.pid)
			}
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.opt.Function, "function", "", "the function to break down (data), or to restrict to (lines, detail, evictors, refs)")
	fl.StringVar(&f.opt.Object, "object", "", "the object to show (detail, evictors), or to restrict to (refs)")
	fl.BoolVar(&f.opt.Evictors, "evictors", false, "refs: list each reference's evictor references")
	fl.BoolVar(&f.opt.Inclusive, "inclusive", false, "overview: rank functions by inclusive cycles (with their callees)")
	fl.IntVar(&f.opt.Top, "top", 0, "rows per table (0: the view's default)")
	fl.StringVar(&f.opt.Format, "format", "", "output format: text (default), csv or json")
	fl.StringVar(&f.focus, "focus", "", "the cache to show (default: the profile's focus)")
	fl.StringVar(&f.html, "html", "", "write the web UI of the profile, one self-contained HTML `FILE` (docs/web.md; --focus: the cache shown first)")
	fl.IntVar(&f.pid, "pid", 0, "of a process tree (memspy run follows forks and execs), show process `PID` alone")
	return cmd
}
