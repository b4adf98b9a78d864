package export

import (
	"bytes"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	pprof "github.com/google/pprof/profile"

	"github.com/memspy/memspy/profile"
)

// st returns counters at one cache.
func st(accesses, misses, cold, replacement, stall uint64) *profile.Stats {
	return &profile.Stats{Accesses: accesses, Hits: accesses - misses, Misses: misses,
		Causes: profile.Causes{Cold: cold, Replacement: replacement}, StallCycles: stall}
}

// testProfile is a profile of two functions, two objects (A allocated at
// a.c:40, B a global), three pairs and two listed references: f × A
// wholly listed, f × B in part, g × B not at all (its reference left out,
// in OmittedReferences).
func testProfile() *profile.Profile {
	p := &profile.Profile{
		Version: profile.Version, Tool: "memspy", Complete: true,
		Source:  profile.Source{Name: "./prog", Format: "valgrind"},
		Options: profile.Options{Where: true},
		Caches:  []profile.CacheStats{{Name: "L1D", Level: 1}, {Name: "L2", Level: 2}},
		Modules: []profile.Module{{Path: "/lib/ld.so", TextAddr: 0x40000, TextSize: 0x1000}, {Path: "/src/prog", TextAddr: 0x1000, TextSize: 0x100}},
		Functions: []profile.Function{
			{Name: "f", File: "a.c", Line: 10, Instructions: 100, Levels: map[string]*profile.Stats{"L1D": st(30, 10, 4, 6, 100), "L2": st(10, 3, 3, 0, 300)}},
			{Name: "g", File: "b.c", Line: 5, Instructions: 50, Levels: map[string]*profile.Stats{"L1D": st(8, 2, 2, 0, 20), "L2": st(2, 1, 1, 0, 100)}},
		},
		Objects: []profile.Object{{Name: "A", Kind: "heap", AllocSite: "a.c:40"}, {Name: "B", Kind: "global"}},
		Pairs: []profile.Pair{
			{Function: "f", Object: "A", Levels: map[string]*profile.Stats{"L1D": st(20, 6, 2, 4, 60), "L2": st(6, 2, 2, 0, 200)}},
			{Function: "f", Object: "B", Levels: map[string]*profile.Stats{"L1D": st(10, 4, 2, 2, 40), "L2": st(4, 1, 1, 0, 100)}},
			{Function: "g", Object: "B", Levels: map[string]*profile.Stats{"L1D": st(8, 2, 2, 0, 20), "L2": st(2, 1, 1, 0, 100)}},
		},
		References: []profile.Reference{
			{PC: 0x1010, File: "a.c", Line: 12, Function: "f", Object: "A", Kind: "read", Levels: map[string]*profile.Stats{"L1D": st(20, 6, 2, 4, 60), "L2": st(6, 2, 2, 0, 200)}},
			{PC: 0x1020, File: "a.h", Line: 3, Column: 7, Function: "f", Object: "B", Kind: "write", Levels: map[string]*profile.Stats{"L1D": st(7, 3, 1, 2, 30), "L2": st(3, 1, 1, 0, 100)}},
		},
		OmittedReferences: &profile.OmittedReferences{References: 1, Levels: map[string]*profile.Stats{"L1D": st(8, 2, 2, 0, 20), "L2": st(2, 1, 1, 0, 100)}},
	}
	for i := range p.Objects {
		o := &p.Objects[i]
		o.Levels = map[string]*profile.Stats{}
		for _, pr := range p.Pairs {
			if pr.Object == o.Name {
				addLevels(o.Levels, pr.Levels)
			}
		}
	}
	return p
}

// addLevels adds the counters of b to a, by cache.
func addLevels(a, b map[string]*profile.Stats) {
	for c, s := range b {
		if a[c] == nil {
			a[c] = &profile.Stats{}
		}
		a[c].Add(s)
	}
}

// want returns the values an entry's samples should add up to, by sample
// type, from its counters by cache.
func want(levels map[string]*profile.Stats, instructions uint64) map[string]int64 {
	w := map[string]int64{"instructions": int64(instructions)}
	for cache, s := range levels {
		c := strings.ToLower(cache) + "_"
		w[c+"accesses"] = int64(s.Accesses)
		w[c+"hits"] = int64(s.Hits)
		w[c+"misses"] = int64(s.Misses)
		w[c+"cold"] = int64(s.Causes.Cold)
		w[c+"replacement"] = int64(s.Causes.Replacement)
		w[c+"invalidation"] = int64(s.Causes.Invalidation)
		w[c+"stall_cycles"] = int64(s.StallCycles)
		w["stall_cycles"] += int64(s.StallCycles)
	}
	return w
}

// sums adds up the values of the samples by the key each gives ("" : not
// counted), by sample type.
func sums(s *Samples, key func(Sample) string) map[string]map[string]int64 {
	out := map[string]map[string]int64{}
	for _, sm := range s.Samples {
		k := key(sm)
		if k == "" {
			continue
		}
		if out[k] == nil {
			out[k] = map[string]int64{}
		}
		for i, t := range s.Types {
			out[k][t.Name] += sm.Values[i]
		}
	}
	return out
}

// check compares got with want on every key of want.
func check(t *testing.T, what string, got, want map[string]int64) {
	t.Helper()
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %s = %d, want %d", what, k, got[k], w)
		}
	}
}

func TestFromProfileAddsUp(t *testing.T) {
	p := testProfile()
	s, err := FromProfile(p, ByFunction)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, ty := range s.Types {
		names[ty.Name] = true
	}
	for k := range want(p.Functions[0].Levels, 0) {
		if !names[k] {
			t.Errorf("no sample type %s (types %v)", k, s.Types)
		}
	}
	if s.Default != "stall_cycles" {
		t.Errorf("default sample type %q", s.Default)
	}
	byFunc := sums(s, func(sm Sample) string { return sm.Stack[0].Function })
	for _, f := range p.Functions {
		check(t, "function "+f.Name, byFunc[f.Name], want(f.Levels, f.Instructions))
	}
	byObject := sums(s, func(sm Sample) string { return sm.Labels["object"] })
	check(t, "object A", byObject["A"], want(p.Pairs[0].Levels, 0))
	b := want(p.Pairs[1].Levels, 0)
	for k, v := range want(p.Pairs[2].Levels, 0) {
		b[k] += v
	}
	check(t, "object B", byObject["B"], b)
	byRef := sums(s, func(sm Sample) string { return strconv.FormatUint(sm.Stack[0].PC, 16) + sm.Labels["access"] })
	for _, r := range p.References {
		k := strconv.FormatUint(r.PC, 16) + r.Kind
		check(t, "reference "+k, byRef[k], want(r.Levels, 0))
	}
	for _, sm := range s.Samples {
		if sm.Labels["object"] == "B" && sm.Labels["kind"] != "global" {
			t.Errorf("sample of B labelled kind=%q", sm.Labels["kind"])
		}
	}
	if s.Modules[0].Path != "/src/prog" {
		t.Errorf("first module %s, want the program's", s.Modules[0].Path)
	}
}

// A pair the profile left out (OmittedPairs) counts in its function's
// sample without an object: the function's samples still add up to its
// self counters.
func TestFromProfileOmittedPairs(t *testing.T) {
	p := testProfile()
	gb := p.Pairs[2]
	p.Pairs = p.Pairs[:2]
	p.OmittedPairs = &profile.OmittedPairs{Pairs: 1, Levels: gb.Levels}
	s, err := FromProfile(p, ByFunction)
	if err != nil {
		t.Fatal(err)
	}
	byFunc := sums(s, func(sm Sample) string { return sm.Stack[0].Function })
	for _, f := range p.Functions {
		check(t, "function "+f.Name, byFunc[f.Name], want(f.Levels, f.Instructions))
	}
	byObject := sums(s, func(sm Sample) string { return sm.Labels["object"] })
	check(t, "object B", byObject["B"], want(p.Pairs[1].Levels, 0))
}

func TestFromProfileErrors(t *testing.T) {
	for _, tc := range []struct {
		name, err string
		edit      func(p *profile.Profile)
	}{
		{"no where", "needs a --where profile", func(p *profile.Profile) { p.Options.Where = false }},
		{"reference without pair", "reference at 0x1010 in f to A has no function × object pair", func(p *profile.Profile) { p.Pairs = p.Pairs[1:] }},
		{"references beyond pair", "references in f to A count more l1d_accesses", func(p *profile.Profile) { p.Pairs[0].Levels["L1D"] = st(1, 0, 0, 0, 0) }},
		{"pair without function", "pair g × B names no function", func(p *profile.Profile) { p.Functions = p.Functions[:1] }},
		{"function twice", "lists the function g twice", func(p *profile.Profile) { p.Functions = append(p.Functions, p.Functions[1]) }},
		{"pair twice", "lists the function × object pair f × B twice", func(p *profile.Profile) { p.Pairs = append(p.Pairs, p.Pairs[1]) }},
		{"pairs beyond function", "pairs of g count more l2_accesses", func(p *profile.Profile) { p.Functions[1].Levels["L2"] = st(1, 1, 1, 0, 100) }},
		{"object twice", "lists the object A twice", func(p *profile.Profile) { p.Objects = append(p.Objects, p.Objects[0]) }},
		{"pairs beyond object", "pairs of the object B count more l1d_misses than the object", func(p *profile.Profile) { p.Objects[1].Levels["L1D"].Misses-- }},
	} {
		for _, by := range []By{ByFunction, ByObject} {
			p := testProfile()
			tc.edit(p)
			_, err := FromProfile(p, by)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s by %s: error %v, want %q", tc.name, by, err, tc.err)
			}
		}
	}
	for _, by := range []By{ByFunction, ByObject, ByStack} {
		if _, err := FromProfile(&profile.Profile{}, by); !errors.Is(err, ErrNoWhere) {
			t.Errorf("profile without where by %s: %v", by, err)
		}
	}
	if _, err := FromProfile(testProfile(), "line"); err == nil || err.Error() != "--by line: unknown (function, object or stack)" {
		t.Errorf("by line: error %v", err)
	}
	if b, err := ParseBy("object"); b != ByObject || err != nil {
		t.Errorf("ParseBy(object) = %q, %v", b, err)
	}
}

// TestFromProfileByObject checks the samples by object: each object's add
// up to its counters (the pairs left out included), at its allocation
// site, under the code that touched it; and no sample is of code alone,
// or of an object the profile does not list.
func TestFromProfileByObject(t *testing.T) {
	for _, omit := range []bool{false, true} {
		p := testProfile()
		if omit { // g × B left out: B's samples keep its counters
			gb := p.Pairs[2]
			p.Pairs = p.Pairs[:2]
			p.OmittedPairs = &profile.OmittedPairs{Pairs: 1, Levels: gb.Levels}
		} else { // a pair of g on an object the list lacks
			x := map[string]*profile.Stats{"L1D": st(5, 1, 1, 0, 10)}
			p.Pairs = append(p.Pairs, profile.Pair{Function: "g", Object: "X", Levels: x})
			addLevels(p.Functions[1].Levels, x)
		}
		s, err := FromProfile(p, ByObject)
		if err != nil {
			t.Fatal(err)
		}
		if s.Default != "stall_cycles" {
			t.Errorf("default sample type %q", s.Default)
		}
		for _, ty := range s.Types {
			if ty.Name == "instructions" || ty.Name == "sync_cycles" {
				t.Errorf("sample type %s by object", ty.Name)
			}
		}
		byObject := sums(s, func(sm Sample) string { return sm.Stack[0].Function })
		if len(byObject) != len(p.Objects) {
			t.Errorf("omit %v: samples of %d objects, want %d", omit, len(byObject), len(p.Objects))
		}
		for _, o := range p.Objects {
			check(t, "object "+o.Name, byObject[o.Name], want(o.Levels, 0))
		}
		callers := map[string]bool{}
		for _, sm := range s.Samples {
			top := sm.Stack[0]
			if top.Function != sm.Labels["object"] {
				t.Errorf("sample at %s labelled object=%s", top.Function, sm.Labels["object"])
			}
			if top.Function == "A" && (top.File != "a.c" || top.Line != 40) || top.Function == "B" && (top.File != "" || top.Line != 0) {
				t.Errorf("object %s at %s:%d", top.Function, top.File, top.Line)
			}
			if len(sm.Stack) == 2 {
				callers[top.Function+" from "+sm.Stack[1].Function] = true
			} else if !omit || top.Function != "B" {
				t.Errorf("sample of %s with no code under it", top.Function)
			}
		}
		if !callers["A from f"] || !callers["B from f"] || callers["B from g"] == omit {
			t.Errorf("omit %v: objects from code %v", omit, callers)
		}
		if i := slices.IndexFunc(s.Functions, func(f Function) bool { return f.Name == "A" }); i < 0 || s.Functions[i].File != "a.c" || s.Functions[i].Line != 40 {
			t.Errorf("A in the functions: %v", s.Functions)
		}
	}
}

// TestShortNames checks that the short names of the sample types are
// letters and digits, start with a letter, and differ, even for caches
// whose names have the same letters and digits or none; and that the
// sample types' names differ too.
func TestShortNames(t *testing.T) {
	p := testProfile()
	p.Processors = make([]profile.ProcessorStats, 2) // true and false sharing
	p.Sampling = &profile.Sampling{}                 // unknown misses and hits
	p.Caches = nil
	for _, name := range []string{"L1-D", "L1.D", "L1Dx", "3", "é", "L1Dm", "L1Du", "Sta", "I", "ab"} {
		p.Caches = append(p.Caches, profile.CacheStats{Name: name})
	}
	l := newLayout(p, ByFunction)
	seen, names := map[string]string{}, map[string]bool{}
	valid := regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*$`)
	for _, ty := range l.types {
		if !valid.MatchString(ty.Short) {
			t.Errorf("%s: short name %q", ty.Name, ty.Short)
		}
		if seen[ty.Short] != "" {
			t.Errorf("%s and %s: short name %s", seen[ty.Short], ty.Name, ty.Short)
		}
		if names[ty.Name] {
			t.Errorf("sample type %s twice", ty.Name)
		}
		seen[ty.Short], names[ty.Name] = ty.Name, true
	}
	for short, name := range map[string]string{"L1Dm": "l1_d_misses", "L1Dxcold": "l1_dx_cold", "C3st": "3_stall_cycles", "Cmr": "__read_misses",
		"L1Dmfs": "l1dm_false_sharing", "abm": "ab_misses", "Stall": "stall_cycles", "Ir": "instructions"} {
		if seen[short] != name {
			t.Errorf("short name %s: %s, want %s", short, seen[short], name)
		}
	}
}

func TestWriteUnknownFormat(t *testing.T) {
	s, err := FromProfile(testProfile(), ByFunction)
	if err != nil {
		t.Fatal(err)
	}
	err = Write(new(bytes.Buffer), "svg", s)
	if err == nil || !strings.Contains(err.Error(), `unknown export format "svg" (formats: cachegrind, callgrind, pprof)`) {
		t.Errorf("error %v", err)
	}
}

// TestPprofReadBack parses the pprof output with pprof's own package: the
// values by function and by label, and the locations.
func TestPprofReadBack(t *testing.T) {
	p := testProfile()
	s, err := FromProfile(p, ByFunction)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, "pprof", s); err != nil {
		t.Fatal(err)
	}
	if b := buf.Bytes(); len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("not gzip-compressed")
	}
	pp, err := pprof.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if pp.DefaultSampleType != "stall_cycles" || len(pp.SampleType) != len(s.Types) {
		t.Fatalf("sample types %v (default %q)", pp.SampleType, pp.DefaultSampleType)
	}
	byFunc := map[string]map[string]int64{}
	byObject := map[string]map[string]int64{}
	for _, sm := range pp.Sample {
		if len(sm.Location) != 1 || len(sm.Location[0].Line) != 1 {
			t.Fatalf("sample stack %v", sm.Location)
		}
		ln := sm.Location[0].Line[0]
		for _, m := range []struct {
			into map[string]map[string]int64
			key  string
		}{{byFunc, ln.Function.Name}, {byObject, strings.Join(sm.Label["object"], ",")}} {
			if m.into[m.key] == nil {
				m.into[m.key] = map[string]int64{}
			}
			for i, ty := range pp.SampleType {
				m.into[m.key][ty.Type] += sm.Value[i]
			}
		}
		if loc := sm.Location[0]; loc.Address == 0x1020 {
			if ln.Line != 3 || ln.Column != 7 || ln.Function.Filename != "a.h" || loc.Mapping == nil || loc.Mapping.File != "/src/prog" {
				t.Errorf("reference 0x1020 at %s:%d:%d in %v", ln.Function.Filename, ln.Line, ln.Column, loc.Mapping)
			}
		}
	}
	for _, f := range p.Functions {
		check(t, "function "+f.Name, byFunc[f.Name], want(f.Levels, f.Instructions))
	}
	check(t, "object A", byObject["A"], want(p.Pairs[0].Levels, 0))
	for _, f := range pp.Function {
		if f.Name == "f" && f.Filename == "a.c" && f.StartLine != 10 {
			t.Errorf("f starts at line %d", f.StartLine)
		}
	}
}

// goTool returns the go command running the tests.
func goTool(t *testing.T) string {
	t.Helper()
	if path, err := exec.LookPath("go"); err == nil {
		return path
	}
	path := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no go command for go tool pprof: %v", err)
	}
	return path
}

// topRow is a row of pprof -top: flat value, cumulative value, then the
// function.
var topRow = regexp.MustCompile(`(?m)^ *(\d+) +[0-9.]+% +[0-9.]+% +(\d+) +[0-9.]+% +(\S+)$`)

// pprofTop runs go tool pprof -top with args on the pprof file at path
// and returns the flat and the cumulative values by function.
func pprofTop(t *testing.T, path string, args ...string) (flat, cum map[string]int64) {
	t.Helper()
	cmd := exec.Command(goTool(t), append(append([]string{"tool", "pprof", "-top"}, args...), path)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof %v: %v\n%s", args, err, out)
	}
	flat, cum = map[string]int64{}, map[string]int64{}
	for _, m := range topRow.FindAllStringSubmatch(string(out), -1) {
		flat[m[3]], _ = strconv.ParseInt(m[1], 10, 64)
		cum[m[3]], _ = strconv.ParseInt(m[2], 10, 64)
	}
	return flat, cum
}

// writeFile writes the samples of p by by in format to a file in dir and
// returns its path.
func writeFile(t *testing.T, dir string, p *profile.Profile, format string, by By) string {
	t.Helper()
	s, err := FromProfile(p, by)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, format, s); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, format+".out."+string(by))
	if err := os.WriteFile(path, buf.Bytes(), 0o666); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestGoToolPprof checks that go tool pprof reads the output and shows
// the profile's numbers: by function, for all objects and for one; by
// object, the objects' as flat values, under the functions' cumulative
// ones.
func TestGoToolPprof(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		by        By
		args      []string
		flat, cum map[string]int64
	}{
		{ByFunction, []string{"-sample_index=l1d_misses"}, map[string]int64{"f": 10, "g": 2}, nil},
		{ByFunction, []string{"-sample_index=l2_cold"}, map[string]int64{"f": 3, "g": 1}, nil},
		{ByFunction, []string{"-sample_index=instructions"}, map[string]int64{"f": 100, "g": 50}, nil},
		{ByFunction, []string{"-sample_index=l1d_misses", "-tagfocus=object=A"}, map[string]int64{"f": 6}, nil},
		{ByFunction, []string{"-sample_index=l1d_accesses", "-tagfocus=object=B"}, map[string]int64{"f": 10, "g": 8}, nil},
		{ByFunction, []string{"-sample_index=l1d_misses", "-tagfocus=kind=global"}, map[string]int64{"f": 4, "g": 2}, nil},
		{ByObject, []string{"-sample_index=l1d_misses"}, map[string]int64{"A": 6, "B": 6, "f": 0, "g": 0}, map[string]int64{"f": 10, "g": 2}},
		{ByObject, []string{"-sample_index=l1d_accesses"}, map[string]int64{"A": 20, "B": 18, "f": 0, "g": 0}, map[string]int64{"f": 30, "g": 8}},
		{ByObject, []string{"-sample_index=l2_accesses", "-tagfocus=object=B"}, map[string]int64{"B": 6, "f": 0, "g": 0}, map[string]int64{"f": 4, "g": 2}},
	} {
		flat, cum := pprofTop(t, writeFile(t, dir, testProfile(), "pprof", tc.by), tc.args...)
		if len(flat) != len(tc.flat) {
			t.Errorf("by %s %v: %v, want %v", tc.by, tc.args, flat, tc.flat)
		}
		for fn, w := range tc.flat {
			if flat[fn] != w {
				t.Errorf("by %s %v: %s %d, want %d", tc.by, tc.args, fn, flat[fn], w)
			}
		}
		for fn, w := range tc.cum {
			if cum[fn] != w {
				t.Errorf("by %s %v: %s cumulative %d, want %d", tc.by, tc.args, fn, cum[fn], w)
			}
		}
	}
	// pprof keeps names that would look like C++ to it (it strips what
	// lies between < and > from a name it has not demangled).
	p := testProfile()
	p.Objects[1].Name, p.Pairs[1].Object, p.Pairs[2].Object, p.References[1].Object = "<b>", "<b>", "<b>", "<b>"
	p.Functions[1].Name, p.Pairs[2].Function = "g<int>", "g<int>"
	flat, _ := pprofTop(t, writeFile(t, dir, p, "pprof", ByObject), "-sample_index=l1d_misses")
	if flat["<b>"] != 6 || flat["g<int>"] != 0 || len(flat) != 4 {
		t.Errorf("by object with <b> and g<int>: %v", flat)
	}
}

// TestCallgrindAnnotate checks that callgrind_annotate (Valgrind's) reads
// the callgrind output and shows the profile's numbers, by function and
// by object, with inclusive costs equal to self costs, and warns of
// nothing.
func TestCallgrindAnnotate(t *testing.T) {
	tool, err := exec.LookPath("callgrind_annotate")
	if err != nil {
		t.Skip("callgrind_annotate (Debian package valgrind) is not installed")
	}
	dir := t.TempDir()
	path := writeFile(t, dir, testProfile(), "callgrind", ByFunction)
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"\ncmd: ./prog\npositions: line\nevents: l1d_accesses l1d_hits l1d_misses", "\nfl=(1) a.c\nfn=(1) f\n",
		"\nfi=(2) a.h\n3 7 4 3 ", "\nfl=(3) b.c\nfn=(2) g\n0 8 6 2 "} {
		if !strings.Contains(string(text), l) {
			t.Errorf("no %q in\n%s", l, text)
		}
	}
	for _, tc := range []struct {
		by    By
		event string
		want  map[string]int64
	}{
		{ByFunction, "l1d_misses", map[string]int64{"f": 10, "g": 2}},
		{ByFunction, "l2_cold", map[string]int64{"f": 3, "g": 1}},
		{ByFunction, "stall_cycles", map[string]int64{"f": 400, "g": 120}},
		{ByFunction, "instructions", map[string]int64{"f": 100, "g": 50}},
		{ByObject, "l1d_accesses", map[string]int64{"a.c:A": 20, "???:B": 18}},
		{ByObject, "l2_cold", map[string]int64{"a.c:A": 2, "???:B": 2}},
		{ByObject, "l2_stall_cycles", map[string]int64{"a.c:A": 200, "???:B": 200}},
	} {
		path := writeFile(t, dir, testProfile(), "callgrind", tc.by)
		for _, inclusive := range []string{"no", "yes"} {
			out, err := exec.Command(tool, "--show="+tc.event, "--sort="+tc.event, "--threshold=100", "--auto=no", "--inclusive="+inclusive, path).CombinedOutput()
			if err != nil || strings.Contains(string(out), "WARNING") {
				t.Fatalf("callgrind_annotate: %v\n%s", err, out)
			}
			// Rows are file:function, the lines of f in a.h (fi=) apart.
			got := map[string]int64{}
			for _, m := range regexp.MustCompile(`(?m)^ *([0-9,]+) \([ 0-9.]+%\)  (\S+):(\S+)$`).FindAllStringSubmatch(string(out), -1) {
				n, _ := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
				if tc.by == ByObject {
					got[m[2]+":"+m[3]] += n
				} else {
					got[m[3]] += n
				}
			}
			if len(got) != len(tc.want) {
				t.Errorf("by %s, %s, inclusive=%s: %v, want %v\n%s", tc.by, tc.event, inclusive, got, tc.want, out)
			}
			for fn, w := range tc.want {
				if got[fn] != w {
					t.Errorf("by %s, %s, inclusive=%s: %s %d, want %d", tc.by, tc.event, inclusive, fn, got[fn], w)
				}
			}
		}
	}
}

// withCallTree gives testProfile's p a call tree: f at the top, calling g
// three times; each node with its function's own counters.
func withCallTree(p *profile.Profile) *profile.Profile {
	p.CallTree = &profile.CallTree{Nodes: []profile.CallNode{
		{Function: "f", Caller: -1, Instructions: 100, Levels: p.Functions[0].Levels},
		{Function: "g", Caller: 0, Calls: 3, Instructions: 50, Levels: p.Functions[1].Levels},
	}}
	return p
}

// TestCallTreeExports checks the exports of a call tree with the real
// tools: by stack, go tool pprof gives g's counters under f's; by
// function, callgrind_annotate adds g's into f's inclusive costs from the
// calls (cfn=, calls=); and a profile without a call tree has no samples
// by stack.
func TestCallTreeExports(t *testing.T) {
	dir := t.TempDir()
	if _, err := FromProfile(testProfile(), ByStack); !errors.Is(err, ErrNoCallTree) {
		t.Errorf("by stack without a call tree: %v", err)
	}
	for index, want := range map[string][2]map[string]int64{
		"instructions": {{"f": 100, "g": 50}, {"f": 150, "g": 50}},
		"l1d_misses":   {{"f": 10, "g": 2}, {"f": 12, "g": 2}},
		"l2_cold":      {{"f": 3, "g": 1}, {"f": 4, "g": 1}},
	} {
		flat, cum := pprofTop(t, writeFile(t, dir, withCallTree(testProfile()), "pprof", ByStack), "-sample_index="+index)
		if !maps.Equal(flat, want[0]) || !maps.Equal(cum, want[1]) {
			t.Errorf("pprof by stack, %s: flat %v cum %v, want %v %v", index, flat, cum, want[0], want[1])
		}
	}
	path := writeFile(t, dir, withCallTree(testProfile()), "callgrind", ByFunction)
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(text), "\ncfi=(3) b.c\ncfn=(2) g\ncalls=3 5\n0 8 6 2 ") {
		t.Errorf("no call of g in\n%s", text)
	}
	tool, err := exec.LookPath("callgrind_annotate")
	if err != nil {
		t.Skip("callgrind_annotate (Debian package valgrind) is not installed")
	}
	for event, want := range map[string]map[string]int64{
		"instructions": {"f": 150, "g": 50},
		"l1d_misses":   {"f": 12, "g": 2},
		"l2_cold":      {"f": 4, "g": 1},
	} {
		out, err := exec.Command(tool, "--show="+event, "--sort="+event, "--threshold=100", "--auto=no", "--inclusive=yes", path).CombinedOutput()
		if err != nil || strings.Contains(string(out), "WARNING") {
			t.Fatalf("callgrind_annotate: %v\n%s", err, out)
		}
		got := map[string]int64{}
		for _, m := range regexp.MustCompile(`(?m)^ *([0-9,]+) \([ 0-9.]+%\)  (\S+):(\S+)$`).FindAllStringSubmatch(string(out), -1) {
			n, _ := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
			got[m[3]] += n // (f's lines in a.h are a row of their own)
		}
		if !maps.Equal(got, want) {
			t.Errorf("callgrind_annotate --inclusive=yes, %s: %v, want %v\n%s", event, got, want, out)
		}
	}
}
