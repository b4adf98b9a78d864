package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/memspy/memspy/atomicfile"
	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/profile"
	"github.com/memspy/memspy/sample"
	"github.com/memspy/memspy/sim"
	"github.com/memspy/memspy/symbolize"
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

// machineFlags select the simulated machine on the command line: its
// source (--machine, --config or --cache), then the processors, thread
// mapping and NUMA nodes that override the source's (--procs, --map,
// --numa, --placement, --page-size, --remote-latency,
// --remote-dirty-latency).
type machineFlags struct {
	preset             string
	config             string
	caches             []string
	memoryLatency      int
	procs              int
	mapping            string
	nodes              int
	placement          string
	pageSize           string
	remoteLatency      int
	remoteDirtyLatency int

	flags interface{ Changed(name string) bool } // the command's flags: was --procs given?
}

func (f *machineFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	f.flags = fl
	fl.StringVar(&f.preset, "machine", "", "preset machine (see `memspy machines`; default x86-modern)")
	fl.StringVar(&f.config, "config", "", "machine description `FILE` (YAML, see docs/machine.md)")
	fl.StringArrayVar(&f.caches, "cache", nil, "inline cache `SPEC` 'NAME:key=value,...', repeatable, from the CPU outward (shared=true: one copy for all processors)")
	fl.IntVar(&f.memoryLatency, "memory-latency", 0, "memory latency in cycles for --cache machines (default 100)")
	fl.IntVar(&f.procs, "procs", 0, "simulate `N` processors instead of the machine's; each has its own copy of every cache not shared (default: the machine's, 1 for --cache)")
	fl.StringVar(&f.mapping, "map", "", "place threads on processors in the order they appear: `MAP` is round-robin (rr), or a processor per thread like 0,1,1,0, later threads round-robin (default: the machine's)")
	fl.IntVar(&f.nodes, "numa", 0, "group the processors into `N` NUMA nodes, each with its own memory, instead of the machine's (1: one uniform memory; default: the machine's)")
	fl.StringVar(&f.placement, "placement", "", "with several NUMA nodes, home each page at a node: `PLACEMENT` is first-touch (ft), round-robin (rr) or interleave (default: the machine's, else first-touch)")
	fl.StringVar(&f.pageSize, "page-size", "", "with several NUMA nodes, the page size in `BYTES`, like 4k (default: the machine's, else 4k)")
	fl.IntVar(&f.remoteLatency, "remote-latency", 0, "with several NUMA nodes, the `CYCLES` of a miss served by another node's memory (default: the machine's, else 2 × the memory latency)")
	fl.IntVar(&f.remoteDirtyLatency, "remote-dirty-latency", 0, "with several NUMA nodes, the `CYCLES` of a miss on a line another node's processor holds dirty (default: the machine's, else 3 × the memory latency)")
}

// build returns the machine the flags select.
func (f *machineFlags) build() (*machine.Machine, error) {
	m, err := f.source()
	if err != nil {
		return nil, err
	}
	if err := f.override(m); err != nil {
		return nil, err
	}
	return m, nil
}

// override applies --procs, --map and the NUMA flags to m and normalizes
// it again.
func (f *machineFlags) override(m *machine.Machine) error {
	changed := func(name string) bool { return f.flags != nil && f.flags.Changed(name) }
	var given []string
	if changed("procs") {
		if f.procs < 1 {
			return fmt.Errorf("--procs %d: want at least 1 processor", f.procs)
		}
		m.Processors = f.procs
		given = append(given, fmt.Sprintf("--procs %d", f.procs))
	}
	if f.mapping != "" {
		mapping, pin, err := parseMap(f.mapping)
		if err != nil {
			return err
		}
		m.Mapping, m.Pin = mapping, pin
		given = append(given, "--map "+f.mapping)
	}
	if changed("numa") {
		if f.nodes < 1 {
			return fmt.Errorf("--numa %d: want at least 1 node", f.nodes)
		}
		m.Nodes = f.nodes
		given = append(given, fmt.Sprintf("--numa %d", f.nodes))
	}
	var numa []string // the NUMA flags that need several nodes
	if changed("placement") {
		placement, err := machine.ParsePlacement(f.placement)
		if err != nil {
			return fmt.Errorf("--placement %s: %s", f.placement, configMsg(err))
		}
		m.Placement = placement
		numa = append(numa, "--placement "+f.placement)
	}
	if changed("page-size") {
		size, err := machine.ParsePageSize(f.pageSize)
		if err != nil {
			return fmt.Errorf("--page-size %s: %s", f.pageSize, configMsg(err))
		}
		m.PageSize = size
		numa = append(numa, "--page-size "+f.pageSize)
	}
	for _, l := range []struct {
		name string
		val  int
		dst  *int
	}{{"remote-latency", f.remoteLatency, &m.RemoteLatency}, {"remote-dirty-latency", f.remoteDirtyLatency, &m.RemoteDirtyLatency}} {
		if !changed(l.name) {
			continue
		}
		if l.val < 1 {
			return fmt.Errorf("--%s %d: want at least 1 cycle", l.name, l.val)
		}
		*l.dst = l.val
		numa = append(numa, fmt.Sprintf("--%s %d", l.name, l.val))
	}
	given = append(given, numa...)
	if len(given) == 0 {
		return nil
	}
	if err := m.Normalize(); err != nil {
		return fmt.Errorf("%s on machine %s: %w", strings.Join(given, " "), m.Name, err)
	}
	if len(numa) > 0 && m.Nodes <= 1 {
		return fmt.Errorf("%s on machine %s: the machine has one NUMA node (give --numa N for several)", strings.Join(numa, " "), m.Name)
	}
	return nil
}

// configMsg returns the message of a *machine.ConfigError without its key
// (the flag stands for it), or err's text.
func configMsg(err error) string {
	var ce *machine.ConfigError
	if errors.As(err, &ce) {
		return ce.Msg
	}
	return err.Error()
}

// parseMap parses the value of --map: a mapping name, or the processors
// of the threads (a pinned mapping).
func parseMap(s string) (machine.Mapping, []int, error) {
	if mapping, err := machine.ParseMapping(s); err == nil {
		if mapping == machine.Pinned {
			return "", nil, fmt.Errorf("--map %s: give the processor of each thread instead, like --map 0,1,1,0", s)
		}
		return mapping, nil, nil
	}
	pin, err := machine.ParsePin(s)
	if err != nil {
		msg := fmt.Sprintf("--map %s: want round-robin (rr), or a comma-separated list of processors like 0,1,1,0", s)
		var ce *machine.ConfigError
		if strings.Contains(s, ",") && errors.As(err, &ce) {
			msg += " (" + ce.Msg + ")"
		}
		return "", nil, errors.New(msg)
	}
	return machine.Pinned, pin, nil
}

// source returns the machine of --machine, --config or --cache.
func (f *machineFlags) source() (*machine.Machine, error) {
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
	machine    machineFlags
	classify   string
	where      bool
	missOnly   bool
	focus      string
	minObject  uint64
	renames    []string
	profOut    string
	jsonOut    string
	stats      bool
	skipRefs   uint64
	maxRefs    uint64
	interleave string
	quantum    int
	monitor    string
	cpuprof    string
	memprof    string
	sample     string
	// sampleTotal is the run's length in references when known, for
	// --sample count=.
	sampleTotal uint64
	// shadow makes a sampled run simulate every reference (sample-eval).
	shadow bool
}

func (f *simulationFlags) register(cmd *cobra.Command) {
	f.machine.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.classify, "classify", "", "miss classification: `3c` (compulsory/capacity/conflict) or none")
	fl.BoolVar(&f.where, "where", false, "split the counters by procedure × data structure (heap allocation path, global, stack frame, named range) and by access point, with the causes of misses, who evicted whom and how much of each fetched line was used")
	fl.BoolVar(&f.missOnly, "miss-only", false, "with --where: count misses only, no bookkeeping per hit (faster; hits, temporal/spatial hits and spatial use are then unknown)")
	fl.StringVar(&f.focus, "focus", "", "with --where: the cache whose counters the summary and the profile entries show (default: the first cache holding data)")
	fl.Uint64Var(&f.minObject, "min-object-size", sim.DefaultMinObjectSize, "with --where: global variables smaller than `BYTES` are shown together, one entry per module, unless they have 1% of a cache's stall cycles")
	fl.StringArrayVar(&f.renames, "rename", nil, "with --where: rename an object or function in the results, `OLD=NEW` (repeatable)")
	fl.StringVar(&f.jsonOut, "json", "", "write the profile as JSON to `FILE` ('-': standard output)")
	fl.StringVar(&f.profOut, "profile", "", "write the profile to `FILE` for `memspy report` (zstd-compressed JSON when FILE ends in .memspy or .zst, gzip-compressed when in .gz)")
	fl.BoolVar(&f.stats, "stats", false, "print the events simulated per second, the time to build and write the results after them, and peak memory on stderr")
	fl.Uint64Var(&f.skipRefs, "skip-refs", 0, "simulate from reference `N` on (a partial trace, as in METRIC)")
	fl.Uint64Var(&f.maxRefs, "max-refs", 0, "simulate at most `N` references (memspy run: the program then runs on untraced)")
	fl.StringVar(&f.interleave, "interleave", "clock", "on several processors, the order of the threads' events: `ORDER` is clock (in quanta, the thread whose simulated clock is farthest behind first; never across synchronization) or trace (as traced)")
	fl.IntVar(&f.quantum, "quantum", sim.DefaultQuantum, "with --interleave clock: a thread runs `N` events at a time")
	fl.StringVar(&f.monitor, "monitor", "full", "with --numa: how the NUMA statistics find the data structure of a miss: `HOW` is full (from --where) or protocol (FlashPoint: kept in the directory, nothing done on hits; needs no --where)")
	fl.StringVar(&f.sample, "sample", "", "simulate a sample of the references: `SPEC` is comma-separated key=value pairs: time sampling ratio=0.1,length=500k (or count=30), jitter=0..1, warmup=N, first=10 (samples in the first period), seed=N; set sampling sets=1/16[,vary]; processor sampling procs=1/4; timestep sampling timesteps=2.5% (memspy.h sample markers, or timestep-fn=NAME with memspy run); mu=dead (the default: dead-line estimate) or mu=0.5 for the unknown references (docs/sampling.md)")
	fl.StringVar(&f.cpuprof, "cpuprofile", "", "write a Go CPU profile of the simulation and of building and writing its results to `FILE` (for memspy developers)")
	fl.MarkHidden("cpuprofile")
	fl.StringVar(&f.memprof, "memprofile", "", "write a Go heap profile to `FILE` once the profile is built, before it is written (for memspy developers)")
	fl.MarkHidden("memprofile")
}

// writeHeapProfile writes the --memprofile heap profile, if asked for:
// what is live after a collection, and what was allocated in all.
func (f *simulationFlags) writeHeapProfile() error {
	if f.memprof == "" {
		return nil
	}
	runtime.GC()
	var b bytes.Buffer
	if err := pprof.WriteHeapProfile(&b); err != nil {
		return err
	}
	return atomicfile.WriteFile(f.memprof, b.Bytes())
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

// hierarchy builds the selected machine and its simulator with the
// selected --classify value and attribution, and the given cache lab
// conventions; sym (nil: none) names code and data when attributing.
func (f *simulationFlags) hierarchy(cachelab bool, sym *symbolize.Symbolizer) (*machine.Machine, *sim.Hierarchy, error) {
	m, err := f.machine.build()
	if err != nil {
		return nil, nil, err
	}
	if _, err := renameMap(f.renames); err != nil {
		return nil, nil, err
	}
	opt := sim.Options{CacheLab: cachelab, Attribute: f.attributing(), MissOnly: f.missOnly, MinObjectSize: f.minObject}
	if sym != nil {
		opt.Symbols = sym
	}
	if f.minObject == 0 {
		return nil, nil, fmt.Errorf("--min-object-size 0: give at least 1 byte")
	}
	if f.focus != "" && !slices.ContainsFunc(m.Caches, func(c machine.Cache) bool { return c.Name == f.focus }) {
		return nil, nil, fmt.Errorf("--focus %s: the machine has no such cache (%s)", f.focus, cacheNames(m))
	}
	if opt.Interleave, err = sim.ParseInterleave(f.interleave); err != nil {
		return nil, nil, fmt.Errorf("--interleave: %w", err)
	}
	if f.quantum < 1 {
		return nil, nil, fmt.Errorf("--quantum %d: give at least 1 event", f.quantum)
	}
	opt.Quantum = f.quantum
	if opt.Sample, err = f.sampleSpec(); err != nil {
		return nil, nil, err
	}
	opt.SampleTotal, opt.SampleShadow = f.sampleTotal, f.shadow
	if opt.Monitor, err = sim.ParseMonitor(f.monitor); err != nil {
		return nil, nil, fmt.Errorf("--monitor: %w", err)
	}
	if opt.Monitor == sim.MonitorProtocol {
		switch {
		case m.Nodes <= 1:
			return nil, nil, fmt.Errorf("--monitor protocol: the machine has one NUMA node: give --numa N")
		case f.where:
			return nil, nil, fmt.Errorf("--monitor protocol replaces the full monitoring of --where: give one of them")
		}
		opt.Attribute, opt.MissOnly = true, true
	}
	switch f.classify {
	case "", "none":
	case "3c":
		opt.Classify = true
	default:
		return nil, nil, fmt.Errorf("--classify %q: want 3c or none", f.classify)
	}
	h, err := sim.New(m, opt)
	return m, h, err
}

// attributing reports whether the run attributes its counters: --where,
// or an option that only means something with it.
func (f *simulationFlags) attributing() bool {
	return f.where || f.missOnly || len(f.renames) > 0 || f.monitor == "protocol"
}

// renameMap reads --rename OLD=NEW values into a map, old → new.
func renameMap(renames []string) (map[string]string, error) {
	m := map[string]string{}
	for _, r := range renames {
		old, new, ok := strings.Cut(r, "=")
		if !ok || old == "" || new == "" {
			return nil, fmt.Errorf("--rename %q: want OLD=NEW", r)
		}
		m[old] = new
	}
	return m, nil
}

// finishProfile applies the where-and-why options to the profile of a run:
// the cold small globals in their pools, the focus cache and the renames.
func (f *simulationFlags) finishProfile(p *profile.Profile) error {
	if !p.Options.Where {
		return nil
	}
	if _, err := p.PoolColdGlobals(); err != nil {
		return err
	}
	// The engine (or the merge of a process tree) made the entries'
	// counters for p.Focus already: another pass over them only for
	// another cache.
	if want := cmp.Or(f.focus, p.DefaultFocus()); want != p.Focus {
		if err := p.SetFocus(f.focus); err != nil {
			return err
		}
	}
	names, err := renameMap(f.renames)
	if err != nil {
		return err
	}
	return p.Rename(names)
}

// cacheNames lists the caches of m.
func cacheNames(m *machine.Machine) string {
	names := make([]string, len(m.Caches))
	for i, c := range m.Caches {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

// symbolizer returns the Symbolizer of a run that attributes (nil
// otherwise), with the binaries given mapped at their link-time addresses.
func (f *simulationFlags) symbolizer(binaries []string) (*symbolize.Symbolizer, error) {
	if !f.attributing() {
		if len(binaries) > 0 {
			return nil, fmt.Errorf("--binary names code and data for --where: give --where too")
		}
		return nil, nil
	}
	sym := symbolize.New()
	for _, b := range binaries {
		if err := sym.Load(b); err != nil {
			return nil, fmt.Errorf("--binary %s: %w", b, err)
		}
	}
	return sym, nil
}

// warnSymbols prints, once each, the object files whose symbols could not
// be read, and those without debugging information.
func warnSymbols(w io.Writer, sym *symbolize.Symbolizer) {
	if sym == nil {
		return
	}
	for _, err := range sym.Errors() {
		fmt.Fprintf(w, "memspy: warning: no names from %v\n", err)
	}
	if u := sym.Undebugged(); len(u) > 0 {
		const most = 8
		more := ""
		if len(u) > most {
			more = fmt.Sprintf(" and %d more", len(u)-most)
			u = u[:most]
		}
		fmt.Fprintf(w, "memspy: without debugging information (no source lines or variables; their code is named by symbols or module+offset): %s%s\n",
			strings.Join(u, ", "), more)
	}
}

// checkOutputs checks, before any work, that the --json, --profile and
// --memprofile files (and others, e.g. --record) can be written.
func (f *simulationFlags) checkOutputs(others ...string) error {
	for _, path := range append([]string{f.jsonOut, f.profOut, f.memprof}, others...) {
		if path == "" || path == "-" {
			continue
		}
		if err := atomicfile.Check(path); err != nil {
			return err
		}
	}
	return nil
}

// writeFiles writes the profile to the --json and --profile files (not
// to standard output) and puts them in place together with the files
// others, already written: all of them, or none if one fails.
func (f *simulationFlags) writeFiles(p *profile.Profile, others ...*atomicfile.File) error {
	files := others
	for _, path := range []string{f.jsonOut, f.profOut} {
		if path == "" || path == "-" {
			continue
		}
		af, err := atomicfile.Create(path)
		if err == nil {
			files = append(files, af)
			if err = p.WriteAs(af, path); err != nil {
				err = fmt.Errorf("writing %s: %w", path, err)
			}
		}
		if err != nil {
			for _, af := range files {
				af.Abort()
			}
			return err
		}
	}
	return atomicfile.CommitAll(files...)
}

// sampleSpec returns the --sample request (the zero Spec without it).
func (f *simulationFlags) sampleSpec() (sample.Spec, error) {
	if f.sample == "" {
		return sample.Spec{}, nil
	}
	return sample.Parse(f.sample)
}
