// Package export turns a profile's where-and-why data into the formats of
// other tools (pprof, callgrind), one file per format. Every format
// renders from Samples, an intermediate form like pprof's: sample types
// (a name and a unit each) and samples, each a value per type at a
// location stack with labels. FromProfile derives it from a
// profile.Profile.
package export

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"memspy/profile"
)

// ErrNoWhere is the error of FromProfile on a profile without
// where-and-why data.
var ErrNoWhere = errors.New("needs a --where profile (simulate with --where)")

// SampleType is one kind of value the samples carry.
type SampleType struct {
	Name string // l1d_misses, stall_cycles, instructions, ...
	Unit string // count or cycles
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

// Samples are a profile as samples.
type Samples struct {
	Types []SampleType
	// Default is the sample type a viewer shows first.
	Default string
	Samples []Sample
	// Functions describe the functions the samples name.
	Functions []Function
	// Modules are the object files the program mapped, the program first
	// when the profile names it.
	Modules []profile.Module
	// Comments describe the run.
	Comments []string
}

// counter is one of the counters kept per cache, and when a profile has
// it.
type counter struct {
	name, unit string
	get        func(*profile.Stats) uint64
	in         func(*profile.Profile) bool
}

func always(*profile.Profile) bool           { return true }
func knownAccesses(p *profile.Profile) bool  { return !p.Options.MissOnly }
func multiprocessor(p *profile.Profile) bool { return len(p.Processors) > 0 }
func sampled(p *profile.Profile) bool        { return p.Sampling != nil }

// cacheCounters are the sample types of each cache, named
// <cache>_<name>.
var cacheCounters = []counter{
	{"accesses", "count", func(s *profile.Stats) uint64 { return s.Accesses }, knownAccesses},
	{"hits", "count", func(s *profile.Stats) uint64 { return s.Hits }, knownAccesses},
	{"misses", "count", func(s *profile.Stats) uint64 { return s.Misses }, always},
	{"read_misses", "count", func(s *profile.Stats) uint64 { return s.ReadMisses }, always},
	{"write_misses", "count", func(s *profile.Stats) uint64 { return s.WriteMisses }, always},
	{"ifetch_misses", "count", func(s *profile.Stats) uint64 { return s.IFetchMisses }, always},
	{"cold", "count", func(s *profile.Stats) uint64 { return s.Causes.Cold }, always},
	{"replacement", "count", func(s *profile.Stats) uint64 { return s.Causes.Replacement }, always},
	{"invalidation", "count", func(s *profile.Stats) uint64 { return s.Causes.Invalidation }, always},
	{"true_sharing", "count", func(s *profile.Stats) uint64 { return s.Causes.TrueSharing }, multiprocessor},
	{"false_sharing", "count", func(s *profile.Stats) uint64 { return s.Causes.FalseSharing }, multiprocessor},
	{"unknown_misses", "count", func(s *profile.Stats) uint64 { return s.Causes.Unknown }, sampled},
	{"unknown_hits", "count", func(s *profile.Stats) uint64 { return s.UnknownHits }, sampled},
	{"stall_cycles", "cycles", func(s *profile.Stats) uint64 { return s.StallCycles }, always},
}

// layout says which value of a sample is which counter: per cache, the
// counters of the profile, then the totals.
type layout struct {
	caches   []string
	counters []counter
	// stall, instructions and sync are the indexes of the totals (sync:
	// -1 when no function waited at synchronization).
	stall, instructions, sync int
	types                     []SampleType
}

func newLayout(p *profile.Profile) *layout {
	l := &layout{sync: -1}
	for _, c := range cacheCounters {
		if c.in(p) {
			l.counters = append(l.counters, c)
		}
	}
	for _, c := range p.Caches {
		l.caches = append(l.caches, c.Name)
		for _, k := range l.counters {
			l.types = append(l.types, SampleType{typeName(c.Name) + "_" + k.name, k.unit})
		}
	}
	l.stall = len(l.types)
	l.types = append(l.types, SampleType{"stall_cycles", "cycles"})
	l.instructions = len(l.types)
	l.types = append(l.types, SampleType{"instructions", "count"})
	if slices.ContainsFunc(p.Functions, func(f profile.Function) bool { return f.SyncCycles > 0 }) {
		l.sync = len(l.types)
		l.types = append(l.types, SampleType{"sync_cycles", "cycles"})
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
// (else ErrNoWhere): one sample per listed reference (its PC, function,
// source line and object), and, for each function × object pair, a
// sample at the function (line 0) with what the pair counted beyond its
// listed references: instruction fetches, references without a PC, and
// the references the profile left out beyond its bound (OmittedReferences
// adds them up without their functions; the pairs still count them). A
// function's instructions (and sync cycles) are a sample at the function
// without an object, with what its pairs left out beyond the profile's
// bound counted (OmittedPairs). So the samples of a function add up to
// its self counters at every cache. Today's profile has no call stacks: each stack
// is one frame.
func FromProfile(p *profile.Profile) (*Samples, error) {
	if !p.Options.Where {
		return nil, ErrNoWhere
	}
	l := newLayout(p)
	s := &Samples{Types: l.types, Default: "stall_cycles", Modules: programFirst(p), Comments: comments(p)}
	kinds := map[string]string{}
	for _, o := range p.Objects {
		kinds[o.Name] = o.Kind
	}
	funcs := map[string]*profile.Function{}
	for i := range p.Functions {
		f := &p.Functions[i]
		if funcs[f.Name] != nil {
			return nil, fmt.Errorf("the profile lists the function %s twice", f.Name)
		}
		funcs[f.Name] = f
		s.Functions = append(s.Functions, Function{Name: f.Name, File: f.File, Line: f.Line})
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
		s.Samples = append(s.Samples, Sample{
			Stack:  []Frame{{PC: r.PC, Function: r.Function, File: r.File, Line: r.Line, Column: r.Column}},
			Values: v,
			Labels: labels(r.Object, kinds[r.Object], r.Kind),
		})
	}
	ownRest := map[string]values{} // what a function counts beyond its pairs
	for _, f := range p.Functions {
		ownRest[f.Name] = l.of(f.Levels)
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
		own.sub(l.of(pr.Levels))
		if !v.zero() {
			s.Samples = append(s.Samples, Sample{Stack: functionFrame(funcs[pr.Function]), Values: v, Labels: labels(pr.Object, kinds[pr.Object], "")})
		}
	}
	for _, f := range p.Functions {
		v := ownRest[f.Name]
		if i := v.negative(); i >= 0 {
			return nil, fmt.Errorf("the profile's function × object pairs of %s count more %s than the function", f.Name, l.types[i].Name)
		}
		v[l.instructions] = clamp(f.Instructions)
		if l.sync >= 0 {
			v[l.sync] = clamp(f.SyncCycles)
		}
		if !v.zero() {
			s.Samples = append(s.Samples, Sample{Stack: functionFrame(&f), Values: v})
		}
	}
	return s, nil
}

// functionFrame is the stack of a sample at function f as a whole.
func functionFrame(f *profile.Function) []Frame {
	return []Frame{{Function: f.Name, File: f.File}}
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

// comments describe the run of p.
func comments(p *profile.Profile) []string {
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
	return c
}

// writers are the formats, by name.
var writers = map[string]func(io.Writer, *Samples) error{
	"pprof":     WritePprof,
	"callgrind": WriteCallgrind,
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
