package export

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	pprof "github.com/google/pprof/profile"

	"memspy/profile"
)

// st returns counters at one cache.
func st(accesses, misses, cold, replacement, stall uint64) *profile.Stats {
	return &profile.Stats{Accesses: accesses, Hits: accesses - misses, Misses: misses,
		Causes: profile.Causes{Cold: cold, Replacement: replacement}, StallCycles: stall}
}

// testProfile is a profile of two functions, two objects, three pairs and
// two listed references: f × A wholly listed, f × B in part, g × B not at
// all (its reference left out, in OmittedReferences).
func testProfile() *profile.Profile {
	return &profile.Profile{
		Version: profile.Version, Tool: "memspy", Complete: true,
		Source:  profile.Source{Name: "./prog", Format: "valgrind"},
		Options: profile.Options{Where: true},
		Caches:  []profile.CacheStats{{Name: "L1D", Level: 1}, {Name: "L2", Level: 2}},
		Modules: []profile.Module{{Path: "/lib/ld.so", TextAddr: 0x40000, TextSize: 0x1000}, {Path: "/src/prog", TextAddr: 0x1000, TextSize: 0x100}},
		Functions: []profile.Function{
			{Name: "f", File: "a.c", Line: 10, Instructions: 100, Levels: map[string]*profile.Stats{"L1D": st(30, 10, 4, 6, 100), "L2": st(10, 3, 3, 0, 300)}},
			{Name: "g", File: "b.c", Line: 5, Instructions: 50, Levels: map[string]*profile.Stats{"L1D": st(8, 2, 2, 0, 20), "L2": st(2, 1, 1, 0, 100)}},
		},
		Objects: []profile.Object{{Name: "A", Kind: "heap"}, {Name: "B", Kind: "global"}},
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
	s, err := FromProfile(p)
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
	s, err := FromProfile(p)
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
	} {
		p := testProfile()
		tc.edit(p)
		_, err := FromProfile(p)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
		}
	}
	if _, err := FromProfile(&profile.Profile{}); !errors.Is(err, ErrNoWhere) {
		t.Errorf("profile without where: %v", err)
	}
}

func TestWriteUnknownFormat(t *testing.T) {
	s, err := FromProfile(testProfile())
	if err != nil {
		t.Fatal(err)
	}
	err = Write(new(bytes.Buffer), "svg", s)
	if err == nil || !strings.Contains(err.Error(), `unknown export format "svg" (formats: callgrind, pprof)`) {
		t.Errorf("error %v", err)
	}
}

// TestPprofReadBack parses the pprof output with pprof's own package: the
// values by function and by label, and the locations.
func TestPprofReadBack(t *testing.T) {
	p := testProfile()
	s, err := FromProfile(p)
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

// topRow is a row of pprof -top: flat value, then the function.
var topRow = regexp.MustCompile(`(?m)^ *(\d+) +[0-9.]+% +[0-9.]+% +\d+ +[0-9.]+% +(\S+)$`)

// pprofTop runs go tool pprof -top with args on the pprof file at path
// and returns the flat values by function.
func pprofTop(t *testing.T, path string, args ...string) map[string]int64 {
	t.Helper()
	cmd := exec.Command(goTool(t), append(append([]string{"tool", "pprof", "-top"}, args...), path)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof %v: %v\n%s", args, err, out)
	}
	flat := map[string]int64{}
	for _, m := range topRow.FindAllStringSubmatch(string(out), -1) {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		flat[m[2]] = n
	}
	return flat
}

// TestGoToolPprof checks that go tool pprof reads the output and shows
// the profile's numbers, by function, for all objects and for one.
func TestGoToolPprof(t *testing.T) {
	p := testProfile()
	s, err := FromProfile(p)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "out.pb.gz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := WritePprof(f, s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want map[string]int64
	}{
		{[]string{"-sample_index=l1d_misses"}, map[string]int64{"f": 10, "g": 2}},
		{[]string{"-sample_index=l2_cold"}, map[string]int64{"f": 3, "g": 1}},
		{[]string{"-sample_index=instructions"}, map[string]int64{"f": 100, "g": 50}},
		{[]string{"-sample_index=l1d_misses", "-tagfocus=object=A"}, map[string]int64{"f": 6}},
		{[]string{"-sample_index=l1d_accesses", "-tagfocus=object=B"}, map[string]int64{"f": 10, "g": 8}},
		{[]string{"-sample_index=l1d_misses", "-tagfocus=kind=global"}, map[string]int64{"f": 4, "g": 2}},
	} {
		got := pprofTop(t, path, tc.args...)
		if len(got) != len(tc.want) {
			t.Errorf("%v: %v, want %v", tc.args, got, tc.want)
		}
		for fn, w := range tc.want {
			if got[fn] != w {
				t.Errorf("%v: %s %d, want %d", tc.args, fn, got[fn], w)
			}
		}
	}
}

// TestCallgrindAnnotate checks that callgrind_annotate (Valgrind's) reads
// the callgrind output and shows the profile's numbers by function.
func TestCallgrindAnnotate(t *testing.T) {
	tool, err := exec.LookPath("callgrind_annotate")
	if err != nil {
		t.Skip("callgrind_annotate (Debian package valgrind) is not installed")
	}
	p := testProfile()
	s, err := FromProfile(p)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, "callgrind", s); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"events: l1d_accesses l1d_hits l1d_misses", "\nfl=(1) a.c\nfn=(1) f\n", "\nfi=(2) a.h\n3 7 4 3 ", "\nfl=(3) b.c\nfn=(2) g\n0 8 6 2 "} {
		if !strings.Contains(buf.String(), l) {
			t.Errorf("no %q in\n%s", l, buf.String())
		}
	}
	path := filepath.Join(t.TempDir(), "callgrind.out")
	if err := os.WriteFile(path, buf.Bytes(), 0o666); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		event string
		want  map[string]int64
	}{
		{"l1d_misses", map[string]int64{"f": 10, "g": 2}},
		{"l2_cold", map[string]int64{"f": 3, "g": 1}},
		{"stall_cycles", map[string]int64{"f": 400, "g": 120}},
		{"instructions", map[string]int64{"f": 100, "g": 50}},
	} {
		out, err := exec.Command(tool, "--show="+tc.event, "--sort="+tc.event, "--threshold=100", "--auto=no", path).CombinedOutput()
		if err != nil {
			t.Fatalf("callgrind_annotate: %v\n%s", err, out)
		}
		// Rows are file:function, the lines of f in a.h (fi=) apart.
		got := map[string]int64{}
		for _, m := range regexp.MustCompile(`(?m)^ *([0-9,]+) \([ 0-9.]+%\)  \S+:(\S+)$`).FindAllStringSubmatch(string(out), -1) {
			n, _ := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
			got[m[2]] += n
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s: %v, want %v\n%s", tc.event, got, tc.want, out)
		}
		for fn, w := range tc.want {
			if got[fn] != w {
				t.Errorf("%s: %s %d, want %d", tc.event, fn, got[fn], w)
			}
		}
	}
}
