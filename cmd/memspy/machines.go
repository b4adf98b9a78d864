package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"memspy/machine"
	"memspy/sim"
)

func newMachinesCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "machines [NAME]",
		Short: "List machine presets, or describe one (`host` detects this machine's caches)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			if len(args) == 1 {
				m, err := machine.Preset(args[0])
				if err != nil {
					return err
				}
				fmt.Fprint(out, m.Describe())
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			for _, p := range machine.Presets() {
				fmt.Fprintf(tw, "%s\t%s\n", p.Name, p.Description)
			}
			return tw.Flush()
		},
	}
}

// machineFlags select the simulated machine on the command line.
type machineFlags struct {
	preset        string
	config        string
	caches        []string
	memoryLatency int
}

func (f *machineFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.preset, "machine", "", "preset machine (see `memspy machines`; default x86-modern)")
	fl.StringVar(&f.config, "config", "", "machine description `FILE` (YAML, see docs/machine.md)")
	fl.StringArrayVar(&f.caches, "cache", nil, "inline cache `SPEC` 'NAME:key=value,...', repeatable, from the CPU outward")
	fl.IntVar(&f.memoryLatency, "memory-latency", 0, "memory latency in cycles for --cache machines (default 100)")
}

// build returns the machine the flags select.
func (f *machineFlags) build() (*machine.Machine, error) {
	given := 0
	for _, set := range []bool{f.preset != "", f.config != "", len(f.caches) > 0} {
		if set {
			given++
		}
	}
	if given > 1 {
		return nil, fmt.Errorf("give only one of --machine, --config and --cache")
	}
	switch {
	case f.config != "":
		return machine.Load(f.config)
	case len(f.caches) > 0:
		return machine.FromSpecs(f.caches, f.memoryLatency)
	case f.preset != "":
		return machine.Preset(f.preset)
	default:
		return machine.Preset("x86-modern")
	}
}

// simulationFlags are the flags of every command that simulates: the
// machine, miss classification, outputs and the window of references.
type simulationFlags struct {
	machine  machineFlags
	classify string
	where    bool
	jsonOut  string
	stats    bool
	skipRefs uint64
	maxRefs  uint64
	cpuprof  string
}

func (f *simulationFlags) register(cmd *cobra.Command) {
	f.machine.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.classify, "classify", "", "miss classification: `3c` (compulsory/capacity/conflict) or none")
	fl.BoolVar(&f.where, "where", false, "split the counters by procedure × data structure (heap allocation path, global, stack frame, named range), with the causes of misses and who evicted whom")
	fl.StringVar(&f.jsonOut, "json", "", "write the profile as JSON to `FILE` ('-': standard output)")
	fl.BoolVar(&f.stats, "stats", false, "print events/s, elapsed time and peak memory on stderr")
	fl.Uint64Var(&f.skipRefs, "skip-refs", 0, "simulate from reference `N` on (a partial trace, as in METRIC)")
	fl.Uint64Var(&f.maxRefs, "max-refs", 0, "simulate at most `N` references (memspy run: the program then runs on untraced)")
	fl.StringVar(&f.cpuprof, "cpuprofile", "", "write a Go CPU profile of the simulation to `FILE` (for memspy developers)")
	fl.MarkHidden("cpuprofile")
}

// startProfile starts the --cpuprofile profile, if asked for, and returns
// the function that ends it.
func (f *simulationFlags) startProfile() (stop func(), err error) {
	if f.cpuprof == "" {
		return func() {}, nil
	}
	pf, err := os.Create(f.cpuprof)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(pf); err != nil {
		pf.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		pf.Close()
	}, nil
}

// hierarchy builds the selected machine and its simulator with the given
// --classify value, cache lab conventions and attribution (--where).
func (f *machineFlags) hierarchy(classify string, cachelab, where bool) (*machine.Machine, *sim.Hierarchy, error) {
	m, err := f.build()
	if err != nil {
		return nil, nil, err
	}
	opt := sim.Options{CacheLab: cachelab, Attribute: where}
	switch classify {
	case "", "none":
	case "3c":
		opt.Classify = true
	default:
		return nil, nil, fmt.Errorf("--classify %q: want 3c or none", classify)
	}
	h, err := sim.New(m, opt)
	return m, h, err
}
