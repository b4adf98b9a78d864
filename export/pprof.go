package export

import (
	"fmt"
	"io"

	"github.com/google/pprof/profile"
)

// WritePprof writes s to w as a gzip-compressed pprof profile (protocol
// buffers), which `go tool pprof` reads: a sample type per type of s, a
// location per frame (with the module holding its PC as mapping), a
// function per name and file (named as in s, without a system name), and
// the labels as pprof's string labels.
func WritePprof(w io.Writer, s *Samples) error {
	p := toPprof(s)
	if err := p.CheckValid(); err != nil {
		return fmt.Errorf("pprof: %w", err)
	}
	return p.Write(w)
}

// toPprof builds the pprof profile of s.
func toPprof(s *Samples) *profile.Profile {
	p := &profile.Profile{DefaultSampleType: s.Default, Comments: s.Comments}
	for _, t := range s.Types {
		p.SampleType = append(p.SampleType, &profile.ValueType{Type: t.Name, Unit: t.Unit})
	}
	for i, m := range s.Modules {
		p.Mapping = append(p.Mapping, &profile.Mapping{
			ID: uint64(i + 1), Start: m.TextAddr, Limit: m.TextAddr + m.TextSize, File: m.Path,
			HasFunctions: true, HasFilenames: true, HasLineNumbers: true,
		})
	}
	starts := map[string]Function{}
	for _, f := range s.Functions {
		starts[f.Name] = f
	}
	type funcKey struct{ name, file string }
	funcs := map[funcKey]*profile.Function{}
	function := func(name, file string) *profile.Function {
		k := funcKey{name, file}
		if f := funcs[k]; f != nil {
			return f
		}
		// No system name: pprof takes a name that differs from it as
		// demangled already, and leaves it as it is (else it strips
		// what lies between < and >, all of <unknown> or <other>).
		f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, Filename: file}
		if d, ok := starts[name]; ok && d.File == file {
			f.StartLine = int64(d.Line)
		}
		funcs[k] = f
		p.Function = append(p.Function, f)
		return f
	}
	locs := map[Frame]*profile.Location{}
	location := func(fr Frame) *profile.Location {
		if l := locs[fr]; l != nil {
			return l
		}
		l := &profile.Location{
			ID: uint64(len(p.Location) + 1), Address: fr.PC, Mapping: mappingOf(p.Mapping, fr.PC),
			Line: []profile.Line{{Function: function(fr.Function, fr.File), Line: int64(fr.Line), Column: int64(fr.Column)}},
		}
		locs[fr] = l
		p.Location = append(p.Location, l)
		return l
	}
	for _, sm := range s.Samples {
		ps := &profile.Sample{Value: sm.Values}
		for _, fr := range sm.Stack {
			ps.Location = append(ps.Location, location(fr))
		}
		if len(sm.Labels) > 0 {
			ps.Label = map[string][]string{}
			for k, v := range sm.Labels {
				ps.Label[k] = []string{v}
			}
		}
		p.Sample = append(p.Sample, ps)
	}
	return p
}

// mappingOf returns the mapping holding pc (nil for none, and for pc 0).
func mappingOf(ms []*profile.Mapping, pc uint64) *profile.Mapping {
	if pc == 0 {
		return nil
	}
	for _, m := range ms {
		if m.Start <= pc && pc < m.Limit {
			return m
		}
	}
	return nil
}
