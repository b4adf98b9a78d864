package profile

import (
	"slices"
	"strings"
	"testing"
)

// Total adds the processes' counters up and keeps them; ForPid gives one
// process, adding up the programs it ran, and says which processes there
// are when asked for another.
func TestTotalForPid(t *testing.T) {
	one := func(events uint64, misses uint64) *Profile {
		return &Profile{Version: Version, Tool: "memspy", Events: events, EventsByKind: map[string]uint64{"read": events},
			Caches: []CacheStats{{Name: "L1D", Level: 1, Accesses: events, Misses: misses}}, Complete: true}
	}
	procs := []Process{
		{Pid: 10, Parent: 1, Command: "sh -c ./a", Exit: "exit code 0", Profile: one(100, 10)},
		{Pid: 11, Parent: 10, Command: "sh -c ./a", Exec: "./a", Exit: "exec", Profile: one(5, 1)},
		{Pid: 11, Parent: 10, Command: "./a", Exit: "exit code 3", Profile: one(1000, 7)},
	}
	total, err := Total(procs)
	if err != nil {
		t.Fatal(err)
	}
	if total.Events != 1105 || total.Caches[0].Misses != 18 || total.EventsByKind["read"] != 1105 || len(total.Processes) != 3 {
		t.Errorf("total: %d events, %d misses, %v, %d processes", total.Events, total.Caches[0].Misses, total.EventsByKind, len(total.Processes))
	}
	if procs[0].Profile.Events != 100 {
		t.Errorf("Total changed the first process's profile: %d events", procs[0].Profile.Events)
	}
	p11, err := total.ForPid(11)
	if err != nil {
		t.Fatal(err)
	}
	if p11.Events != 1005 || p11.Caches[0].Misses != 8 || p11.Processes != nil {
		t.Errorf("pid 11: %d events, %d misses, %d processes", p11.Events, p11.Caches[0].Misses, len(p11.Processes))
	}
	if p10, err := total.ForPid(10); err != nil || p10 != procs[0].Profile {
		t.Errorf("pid 10: %v, %v", p10, err)
	}
	if _, err := total.ForPid(12); err == nil || !strings.Contains(err.Error(), "no such process in the profile (processes: 10 11)") {
		t.Errorf("pid 12: %v", err)
	}
	if _, err := one(1, 1).ForPid(10); err == nil || !strings.Contains(err.Error(), "holds no process tree") {
		t.Errorf("one program: %v", err)
	}
	// Written and read back, the tree stays.
	var b strings.Builder
	if err := total.Write(&b); err != nil {
		t.Fatal(err)
	}
	back, err := Read(strings.NewReader(b.String()))
	if err != nil || len(back.Processes) != 3 || back.Processes[2].Profile.Events != 1000 || back.Processes[1].Exec != "./a" {
		t.Errorf("read back: %v, %+v", err, back.Processes)
	}
}

// Summary keeps a program's counters without its where-and-why, in a copy
// that adding other programs to the original leaves alone.
func TestSummary(t *testing.T) {
	p := &Profile{Version: Version, Tool: "memspy", Events: 10, EventsByKind: map[string]uint64{"read": 10},
		Options: Options{Where: true}, Focus: "L1D",
		Caches:    []CacheStats{{Name: "L1D", Level: 1, Accesses: 10, Misses: 4, Causes: &Causes{Cold: 4}}},
		Functions: []Function{{Name: "f"}}, Objects: []Object{{Name: "a", FullName: "a"}},
		Modules: []Module{{Path: "/bin/x"}}, Complete: true}
	s, err := p.Summary()
	if err != nil {
		t.Fatal(err)
	}
	if s.Options.Where || s.Focus != "" || s.Functions != nil || s.Objects != nil || s.Modules != nil || s.Caches[0].Causes != nil {
		t.Errorf("summary keeps where-and-why: %+v", s)
	}
	if s.Events != 10 || s.Caches[0].Misses != 4 || s.EventsByKind["read"] != 10 {
		t.Errorf("summary: %d events, %d misses, %v", s.Events, s.Caches[0].Misses, s.EventsByKind)
	}
	tree := Tree{total: p}
	if err := tree.Add(p.clonedForTest(t), 2, "x"); err != nil {
		t.Fatal(err)
	}
	if p.Events != 20 || s.Events != 10 || s.Caches[0].Misses != 4 || s.EventsByKind["read"] != 10 {
		t.Errorf("after adding: total %d events, summary %d events, %d misses", p.Events, s.Events, s.Caches[0].Misses)
	}
	if len(p.Modules) != 1 {
		t.Errorf("modules of the total: %v", p.Modules)
	}
}

// clonedForTest returns a deep copy of p.
func (p *Profile) clonedForTest(t *testing.T) *Profile {
	t.Helper()
	q, err := clone(p)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// A Tree of many programs keeps at most twice MaxReferences references
// between programs and MaxReferences in its total, the references left
// out adding up in OmittedReferences: every access is counted once.
func TestTreeBoundsReferences(t *testing.T) {
	program := func(seed int) *Profile {
		p := &Profile{Version: Version, Tool: "memspy", Options: Options{Where: true}, Focus: "L1D",
			Caches: []CacheStats{{Name: "L1D", Level: 1, Causes: &Causes{}}}, Complete: true}
		for i := range 20000 {
			pc := uint64(seed*15000 + i) // programs share some references
			st := &Stats{Accesses: uint64(1 + (i*7+seed)%50), Misses: uint64(i % 5), StallCycles: uint64(i % 13)}
			p.References = append(p.References, Reference{PC: pc, Function: "f", Object: "o", Levels: map[string]*Stats{"L1D": st}})
		}
		if err := p.SetFocus(""); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var tree Tree
	var want uint64
	for seed := range 6 {
		q := program(seed)
		for _, r := range q.References {
			want += r.Accesses
		}
		if err := tree.Add(q, seed+1, "x"); err != nil {
			t.Fatal(err)
		}
		if n := len(tree.total.References); n > 2*MaxReferences {
			t.Fatalf("after program %d: %d references", seed, n)
		}
	}
	total, err := tree.Total()
	if err != nil {
		t.Fatal(err)
	}
	if len(total.References) != MaxReferences || total.OmittedReferences == nil {
		t.Fatalf("%d references listed, omitted %+v", len(total.References), total.OmittedReferences)
	}
	got := total.OmittedReferences.Levels["L1D"].Accesses
	for i, r := range total.References {
		got += r.Accesses
		if i > 0 && CompareReferences(&total.References[i-1], &r) > 0 {
			t.Fatalf("references out of order at %d", i)
		}
		if r.Accesses != r.Levels["L1D"].Accesses {
			t.Fatalf("reference %x: top-level accesses %d, L1D's %d", r.PC, r.Accesses, r.Levels["L1D"].Accesses)
		}
	}
	if got != want {
		t.Errorf("the total counts %d accesses, the programs %d", got, want)
	}
}

// A Tree's total lists each entry's evictors in order, counted by key,
// at every cache and in its focus copy.
func TestTreeEvictorsInOrder(t *testing.T) {
	program := func(es ...RefEvictor) *Profile {
		p := &Profile{Version: Version, Tool: "memspy", Options: Options{Where: true}, Focus: "L1D",
			Caches: []CacheStats{{Name: "L1D", Level: 1, Causes: &Causes{}}}, Complete: true,
			References: []Reference{{PC: 1, Function: "f", Object: "o",
				Levels: map[string]*Stats{"L1D": {Accesses: 1, Evictors: es}}}}}
		if err := p.SetFocus(""); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var tree Tree
	for _, p := range []*Profile{
		program(RefEvictor{"0xa", "x", 5}, RefEvictor{"0xb", "x", 1}),
		program(RefEvictor{"0xb", "x", 10}, RefEvictor{"0xc", "x", 2}),
	} {
		if err := tree.Add(p, 1, "x"); err != nil {
			t.Fatal(err)
		}
	}
	total, err := tree.Total()
	if err != nil {
		t.Fatal(err)
	}
	want := []RefEvictor{{"0xb", "x", 11}, {"0xa", "x", 5}, {"0xc", "x", 2}}
	r := total.References[0]
	if !slices.Equal(r.Levels["L1D"].Evictors, want) || !slices.Equal(r.Evictors, want) {
		t.Errorf("evictors %v, focus copy %v, want %v", r.Levels["L1D"].Evictors, r.Evictors, want)
	}
}
