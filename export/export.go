// Package export turns a profile's where-and-why data into the formats of
// other tools (pprof, callgrind, cachegrind), one file per format. Every
// format renders from Samples, an intermediate form like pprof's: sample
// types (a name and a unit each) and samples, each a value per type at a
// location stack with labels. FromProfile derives it from a
// profile.Profile, by function or by data object.
package export

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/memspy/memspy/profile"
)

// ErrNoWhere is the error of FromProfile on a profile without
// where-and-why data.
var ErrNoWhere = errors.New("needs a --where profile (simulate with --where)")

// SampleType is one kind of value the samples carry.
type SampleType struct {
	Name string // l1d_misses, stall_cycles, instructions, ...
	Unit string // count or cycles
	// Short is a short name of ASCII letters and digits (L1Dm, Stall,
	// Ir, ...), for formats whose readers want such names (cachegrind).
	Short string
}

// Frame is one entry of a location stack: code of a function at a source
// line (Line 0: the function as a whole).
type Frame struct {
	PC       uint64 // 0 when not known
	Function string
	File     string // the file of Line
	Line     int
	Column   int
}

// Sample is a value per sample type at a location stack.
type Sample struct {
	// Stack is the location stack, innermost first.
	Stack []Frame
	// Values has one value per sample type of the Samples.
	Values []int64
	// Labels: object (the data object), kind (the object's kind: heap,
	// global, ...), access (a reference's kind: read, write, modify,
	// ifetch). A label without value is left out.
	Labels map[string]string
}

// Function describes a function the samples name.
type Function struct {
	Name string
	File string
	Line int // its first line (0: not known)
}

// Call is the calls from one function to another, along every call path
// of the profile's call tree, with the inclusive values of the callee's
// executions in those calls.
type Call struct {
	Caller, Callee string
	Count          uint64
	Values         []int64
}

// Samples are a profile as samples.
type Samples struct {
	Types []SampleType
	// Default is the sample type a viewer shows first.
	Default string
	Samples []Sample
	// Calls, by function with a call tree, are the calls between
	// functions (in the call tree's order of first call).
	Calls []Call
	// Functions describe the functions the samples name.
	Functions []Function
	// Modules are the object files the program mapped, the program first
	// when the profile names it.
	Modules []profile.Module
	// Command is the profiled program, or the trace simulated.
	Command string
	// Comments describe the run.
	Comments []string
}

// By says what the innermost frame of every sample is.
type By string

const (
	// ByFunction: the code that made the references, at its source line.
	ByFunction By = "function"
	// ByObject: the data object they touched, at its allocation site
	// when the profile has it, called from that code.
	ByObject By = "object"
	// ByStack: the function, under the call path of its callers (the
	// profile's call tree), without source lines or objects.
	ByStack By = "stack"
)

// ParseBy returns the By named s: function, object or stack.
func ParseBy(s string) (By, error) {
	switch b := By(s); b {
	case ByFunction, ByObject, ByStack:
		return b, nil
	}
	return "", fmt.Errorf("--by %s: unknown (function, object or stack)", s)
}

// ErrNoCallTree is the error of FromProfile by stack on a profile
// without a call tree.
var ErrNoCallTree = errors.New("--by stack needs a profile with a call tree (made by `memspy run --where`, or `memspy sim --where` of a trace with calls and returns, by this memspy or a later one)")

// counter is one of the counters kept per cache, and when a profile has
// it. Its short name is the cache's short prefix and short (no short
// name ends with another: the short names of two caches never meet).
type counter struct {
	name, short, unit string
	get               func(*profile.Stats) uint64
	in                func(*profile.Profile) bool
}

func always(*profile.Profile) bool           { return true }
func knownAccesses(p *profile.Profile) bool  { return !p.Options.MissOnly }
func multiprocessor(p *profile.Profile) bool { return len(p.Processors) > 0 }
func sampled(p *profile.Profile) bool        { return p.Sampling != nil }

// cacheCounters are the sample types of each cache, named
// <cache>_<name>.
var cacheCounters = []counter{
	{"accesses", "acc", "count", func(s *profile.Stats) uint64 { return s.Accesses }, knownAccesses},
	{"hits", "hit", "count", func(s *profile.Stats) uint64 { return s.Hits }, knownAccesses},
	{"misses", "m", "count", func(s *profile.Stats) uint64 { return s.Misses }, always},
	{"read_misses", "mr", "count", func(s *profile.Stats) uint64 { return s.ReadMisses }, always},
	{"write_misses", "mw", "count", func(s *profile.Stats) uint64 { return s.WriteMisses }, always},
	{"ifetch_misses", "mi", "count", func(s *profile.Stats) uint64 { return s.IFetchMisses }, always},
	{"cold", "cold", "count", func(s *profile.Stats) uint64 { return s.Causes.Cold }, always},
	{"replacement", "repl", "count", func(s *profile.Stats) uint64 { return s.Causes.Replacement }, always},
	{"invalidation", "inv", "count", func(s *profile.Stats) uint64 { return s.Causes.Invalidation }, always},
	{"true_sharing", "ts", "count", func(s *profile.Stats) uint64 { return s.Causes.TrueSharing }, multiprocessor},
	{"false_sharing", "fs", "count", func(s *profile.Stats) uint64 { return s.Causes.FalseSharing }, multiprocessor},
	{"unknown_misses", "mu", "count", func(s *profile.Stats) uint64 { return s.Causes.Unknown }, sampled},
	{"unknown_hits", "hu", "count", func(s *profile.Stats) uint64 { return s.UnknownHits }, sampled},
	{"stall_cycles", "st", "cycles", func(s *profile.Stats) uint64 { return s.StallCycles }, always},
}

// layout says which value of a sample is which counter: per cache, the
// counters of the profile, then the totals.
type layout struct {
	caches   []string
	counters []counter
	// stall, instructions and sync are the indexes of the totals
	// (instructions and sync: -1 when the samples are by object, which
	// run no code, and sync when no function waited at synchronization).
	stall, instructions, sync int
	types                     []SampleType
}

func newLayout(p *profile.Profile, by By) *layout {
	l := &layout{instructions: -1, sync: -1}
	for _, c := range cacheCounters {
		if c.in(p) {
			l.counters = append(l.counters, c)
		}
	}
	longs, shorts := map[string]bool{}, map[string]bool{}
	for _, c := range p.Caches {
		l.caches = append(l.caches, c.Name)
		long, short := unique(typeName(c.Name), longs), unique(shortPrefix(c.Name), shorts)
		for _, k := range l.counters {
			l.types = append(l.types, SampleType{long + "_" + k.name, k.unit, short + k.short})
		}
	}
	l.stall = len(l.types)
	l.types = append(l.types, SampleType{"stall_cycles", "cycles", "Stall"})
	if by == ByObject {
		return l
	}
	l.instructions = len(l.types)
	l.types = append(l.types, SampleType{"instructions", "count", "Ir"})
	if slices.ContainsFunc(p.Functions, func(f profile.Function) bool { return f.SyncCycles > 0 }) {
		l.sync = len(l.types)
		l.types = append(l.types, SampleType{"sync_cycles", "cycles", "Sync"})
	}
	return l
}

// typeName makes a cache's name a sample type's prefix: lower case, with
// every character but letters and digits an underscore.
func typeName(cache string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r >= 'A' && r <= 'Z':
			return r - 'A' + 'a'
		}
		return '_'
	}, cache)
}

// unique returns prefix, with x added while it is taken (by the prefix
// of a cache whose name differs only in other characters than letters
// and digits), and takes it.
func unique(prefix string, taken map[string]bool) string {
	for taken[prefix] {
		prefix += "x"
	}
	taken[prefix] = true
	return prefix
}

// shortPrefix makes a cache's name the prefix of its short names: its
// ASCII letters and digits, after a C unless the first is a letter (L1D,
// L2, C3 for "3").
func shortPrefix(cache string) string {
	p := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, cache)
	if p == "" || p[0] >= '0' && p[0] <= '9' {
		p = "C" + p
	}
	return p
}

// values are a sample's values in the order of a layout, signed so that
// one entry's can be taken from another's.
type values []int64

// of returns the values of counters by cache, with the stall cycles of
// every cache as total.
func (l *layout) of(levels map[string]*profile.Stats) values {
	v := make(values, len(l.types))
	i := 0
	for _, c := range l.caches {
		s := levels[c]
		for _, k := range l.counters {
			if s != nil {
				v[i] = clamp(k.get(s))
			}
			i++
		}
		if s != nil {
			v[l.stall] += clamp(s.StallCycles)
		}
	}
	return v
}

// clamp converts a counter to a sample value (no counter comes near the
// largest).
func clamp(n uint64) int64 { return int64(min(n, math.MaxInt64)) }

// sub takes b from v.
func (v values) sub(b values) {
	for i := range v {
		v[i] -= b[i]
	}
}

// zero reports whether every value is 0.
func (v values) zero() bool { return !slices.ContainsFunc(v, func(x int64) bool { return x != 0 }) }

// negative returns the index of the first negative value, or -1.
func (v values) negative() int { return slices.IndexFunc(v, func(x int64) bool { return x < 0 }) }

// FromProfile derives the samples of a profile with where-and-why data
// (else ErrNoWhere), by function, by object or by stack.
//
// By function: one sample per listed reference (its PC, function, source
// line and object), and, for each function × object pair, a sample at
// the function (line 0) with what the pair counted beyond its listed
// references: instruction fetches, references without a PC, and the
// references the profile left out beyond its bound (OmittedReferences
// adds them up without their functions; the pairs still count them). A
// function's instructions (and sync cycles) are a sample at the function
// without an object, with what its pairs left out beyond the profile's
// bound counted (OmittedPairs). So the samples of a function add up to
// its self counters at every cache. Each stack is one frame.
//
// By object: the same samples of references and pairs, each with the
// object's frame (its allocation site, if known) as the innermost, and
// for each object a sample at its frame alone with what its listed pairs
// do not count (the pairs left out); there are no instructions or sync
// cycles, which belong to code. The objects are those the profile lists:
// a pair naming another is left out. So the samples of an object add up
// to its counters at every cache.
//
// By function with a call tree, Calls are the calls between functions.
// By stack: a sample per node of the profile's call tree (else
// ErrNoCallTree), its own counters at its function's frame under its
// callers'.
func FromProfile(p *profile.Profile, by By) (*Samples, error) {
	if _, err := ParseBy(string(by)); err != nil {
		return nil, err
	}
	if !p.Options.Where {
		return nil, ErrNoWhere
	}
	l := newLayout(p, by)
	s := &Samples{Types: l.types, Default: "stall_cycles", Modules: programFirst(p), Command: p.Source.Name, Comments: comments(p, by)}
	funcs := map[string]*profile.Function{}
	for i := range p.Functions {
		f := &p.Functions[i]
		if funcs[f.Name] != nil {
			return nil, fmt.Errorf("the profile lists the function %s twice", f.Name)
		}
		funcs[f.Name] = f
		s.Functions = append(s.Functions, Function{Name: f.Name, File: f.File, Line: f.Line})
	}
	objects := map[string]*profile.Object{}
	for i := range p.Objects {
		o := &p.Objects[i]
		if objects[o.Name] != nil {
			return nil, fmt.Errorf("the profile lists the object %s twice", o.Name)
		}
		objects[o.Name] = o
		if by == ByObject {
			fr := objectFrame(o)
			s.Functions = append(s.Functions, Function{Name: fr.Function, File: fr.File, Line: fr.Line})
		}
	}
	if by == ByStack {
		return s, l.stackSamples(s, p.CallTree, funcs)
	}
	// add adds a sample of the code at fr touching object, under the
	// object's frame by object (where an object the profile does not
	// list has none).
	add := func(fr Frame, v values, object, access string) {
		o := objects[object]
		stack, kind := []Frame{fr}, ""
		if o != nil {
			kind = o.Kind
		}
		if by == ByObject {
			if o == nil {
				return
			}
			stack = []Frame{objectFrame(o), fr}
		}
		s.Samples = append(s.Samples, Sample{Stack: stack, Values: v, Labels: labels(object, kind, access)})
	}
	type pairKey struct{ function, object string }
	rest := map[pairKey]values{} // what a pair counts beyond its references
	for _, pr := range p.Pairs {
		k := pairKey{pr.Function, pr.Object}
		if rest[k] != nil {
			return nil, fmt.Errorf("the profile lists the function × object pair %s × %s twice", pr.Function, pr.Object)
		}
		rest[k] = l.of(pr.Levels)
	}
	for _, r := range p.References {
		v := l.of(r.Levels)
		left, ok := rest[pairKey{r.Function, r.Object}]
		if !ok {
			return nil, fmt.Errorf("the profile's reference at %#x in %s to %s has no function × object pair", r.PC, r.Function, r.Object)
		}
		left.sub(v)
		add(Frame{PC: r.PC, Function: r.Function, File: r.File, Line: r.Line, Column: r.Column}, v, r.Object, r.Kind)
	}
	ownRest := map[string]values{} // what a function counts beyond its pairs
	for _, f := range p.Functions {
		ownRest[f.Name] = l.of(f.Levels)
	}
	objectRest := map[string]values{} // what an object counts beyond its pairs
	for _, o := range p.Objects {
		objectRest[o.Name] = l.of(o.Levels)
	}
	for _, pr := range p.Pairs {
		v := rest[pairKey{pr.Function, pr.Object}]
		if i := v.negative(); i >= 0 {
			return nil, fmt.Errorf("the profile's references in %s to %s count more %s than their function × object pair", pr.Function, pr.Object, l.types[i].Name)
		}
		own, ok := ownRest[pr.Function]
		if !ok {
			return nil, fmt.Errorf("the profile's function × object pair %s × %s names no function of the profile", pr.Function, pr.Object)
		}
		pv := l.of(pr.Levels)
		own.sub(pv)
		if o := objectRest[pr.Object]; o != nil {
			o.sub(pv)
		}
		if !v.zero() {
			add(functionFrame(funcs[pr.Function]), v, pr.Object, "")
		}
	}
	for _, f := range p.Functions {
		v := ownRest[f.Name]
		if i := v.negative(); i >= 0 {
			return nil, fmt.Errorf("the profile's function × object pairs of %s count more %s than the function", f.Name, l.types[i].Name)
		}
		if by != ByFunction {
			continue
		}
		v[l.instructions] = clamp(f.Instructions)
		if l.sync >= 0 {
			v[l.sync] = clamp(f.SyncCycles)
		}
		if !v.zero() {
			s.Samples = append(s.Samples, Sample{Stack: []Frame{functionFrame(&f)}, Values: v})
		}
	}
	if by == ByFunction && p.CallTree != nil {
		s.Calls = l.calls(p.CallTree)
	}
	for _, o := range p.Objects {
		v := objectRest[o.Name]
		if i := v.negative(); i >= 0 {
			return nil, fmt.Errorf("the profile's function × object pairs of the object %s count more %s than the object", o.Name, l.types[i].Name)
		}
		if by == ByObject && !v.zero() {
			s.Samples = append(s.Samples, Sample{Stack: []Frame{objectFrame(&o)}, Values: v, Labels: labels(o.Name, o.Kind, "")})
		}
	}
	return s, nil
}

// functionFrame is the frame of function f as a whole.
func functionFrame(f *profile.Function) Frame {
	return Frame{Function: f.Name, File: f.File}
}

// objectFrame is the frame of object o: at its allocation site when it
// has one.
func objectFrame(o *profile.Object) Frame {
	fr := Frame{Function: o.Name}
	if o.AllocSite == "" {
		return fr
	}
	fr.File = o.AllocSite
	if i := strings.LastIndexByte(o.AllocSite, ':'); i >= 0 {
		if n, err := strconv.Atoi(o.AllocSite[i+1:]); err == nil {
			fr.File, fr.Line = o.AllocSite[:i], n
		}
	}
	return fr
}

// programFirst returns the profile's modules with the program's (the one
// named like the source) first, where pprof looks for it.
func programFirst(p *profile.Profile) []profile.Module {
	ms := slices.Clone(p.Modules)
	i := slices.IndexFunc(ms, func(m profile.Module) bool { return filepath.Base(m.Path) == filepath.Base(p.Source.Name) })
	if i > 0 {
		m := ms[i]
		copy(ms[1:i+1], ms[:i])
		ms[0] = m
	}
	return ms
}

// labels returns a sample's labels, without those not known.
func labels(object, kind, access string) map[string]string {
	m := map[string]string{}
	for k, v := range map[string]string{"object": object, "kind": kind, "access": access} {
		if v != "" {
			m[k] = v
		}
	}
	return m
}

// comments describe the run of p, and the samples by by.
func comments(p *profile.Profile, by By) []string {
	c := []string{fmt.Sprintf("memspy profile of %s (%s)", p.Source.Name, p.Source.Format)}
	if p.Machine != nil {
		c = append(c, "machine: "+p.Machine.Name)
	}
	if !p.Complete {
		c = append(c, "incomplete: "+p.Error)
	}
	if p.Sampling != nil {
		c = append(c, "sampled ("+p.Sampling.Spec+"): the counters cover the counted references only")
	}
	switch by {
	case ByObject:
		c = append(c, "by object: the data objects in place of functions, at their allocation sites")
	case ByStack:
		c = append(c, "by stack: the code of each calling context under its callers")
	}
	return c
}

// writers are the formats, by name.
var writers = map[string]func(io.Writer, *Samples) error{
	"pprof":      WritePprof,
	"callgrind":  WriteCallgrind,
	"cachegrind": WriteCachegrind,
}

// Formats returns the names of the formats, sorted.
func Formats() []string {
	return slices.Sorted(maps.Keys(writers))
}

// Write writes s to w in the named format.
func Write(w io.Writer, format string, s *Samples) error {
	write, ok := writers[format]
	if !ok {
		return fmt.Errorf("unknown export format %q (formats: %s)", format, strings.Join(Formats(), ", "))
	}
	return write(w, s)
}

// node returns the values of a call tree node's counters.
func (l *layout) node(n *profile.CallNode) values {
	v := l.of(n.Levels)
	v[l.instructions] = clamp(n.Instructions)
	if l.sync >= 0 {
		v[l.sync] = clamp(n.SyncCycles)
	}
	return v
}

// stackSamples adds to s a sample per node of t with counters: its own,
// at the call path of its function's frames (funcs describe the
// functions the profile lists).
func (l *layout) stackSamples(s *Samples, t *profile.CallTree, funcs map[string]*profile.Function) error {
	if t == nil {
		return ErrNoCallTree
	}
	for i := range t.Nodes {
		v := l.node(&t.Nodes[i])
		if v.zero() {
			continue
		}
		var stack []Frame
		for _, name := range t.Stack(int32(i)) {
			fr := Frame{Function: name}
			if f := funcs[name]; f != nil {
				fr = functionFrame(f)
			}
			stack = append(stack, fr)
		}
		s.Samples = append(s.Samples, Sample{Stack: stack, Values: v})
	}
	return nil
}

// calls returns the calls between functions that t's nodes make, each
// with its callee's inclusive values.
func (l *layout) calls(t *profile.CallTree) []Call {
	type edge struct{ caller, callee string }
	index := map[edge]int{}
	var out []Call
	incl := t.Inclusive()
	for i := range t.Nodes {
		n := &t.Nodes[i]
		if n.Caller < 0 {
			continue
		}
		e := edge{t.Nodes[n.Caller].Function, n.Function}
		k, ok := index[e]
		if !ok {
			k = len(out)
			index[e] = k
			out = append(out, Call{Caller: e.caller, Callee: e.callee, Values: make(values, len(l.types))})
		}
		out[k].Count += n.Calls
		for j, x := range l.node(&incl[i]) {
			out[k].Values[j] += x
		}
	}
	return out
}
