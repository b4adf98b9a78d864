package sample

import (
	"math"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"ratio=0.1", "ratio=0.1,length=500000"},
		{"ratio=10%,length=2k,jitter=0.5,seed=7", "ratio=0.1,length=2000,jitter=0.5,seed=7"},
		{"count=30", "ratio=0.1,count=30"},
		{"sets=1/16,vary", "length=500000,sets=1/16,vary"},
		{"timesteps=2.5%,mu=dead", "timesteps=0.025"},
		{"ratio=0.1,mu=0.5", "ratio=0.1,length=500000,mu=0.5"},
		{"ratio=0.1,mu=0.5,mu=dead", "ratio=0.1,length=500000"},
		{"procs=1/4,mu=0.3", "procs=1/4,mu=0.3"},
		{"ratio=0.1,first=1", "ratio=0.1,length=500000,first=1"},
	} {
		s, err := Parse(c.in)
		if err != nil || s.String() != c.want {
			t.Errorf("Parse(%q) = %q, %v; want %q", c.in, s, err, c.want)
		}
		if again, err := Parse(c.want); err != nil || again != s {
			t.Errorf("Parse(%q) = %+v, %v; want %+v (its own String)", c.want, again, err, s)
		}
	}
	for _, bad := range []string{"", "ratio", "ratio=0", "ratio=1.5", "length=5", "sets=2/1", "sets=x", "jitter=2",
		"warmup=10", "vary", "timesteps=0", "timesteps=1%,ratio=0.1", "timestep-fn=f", "mu=3", "size=4",
		"first=0", "sets=1/4,first=2", "ratio=0.1,first=0"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

// counted runs a gate over n references and returns how many it counted.
func counted(t *testing.T, spec string, n uint64) (uint64, *Gate) {
	t.Helper()
	s, err := Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGate(s, n, 6)
	if err != nil {
		t.Fatal(err)
	}
	var c uint64
	for range n {
		if g.Ref(1) == On {
			c++
		}
	}
	if c != g.Counted {
		t.Fatalf("%s: %d counted, the gate says %d", spec, c, g.Counted)
	}
	return c, g
}

// TestRatio: the sampled share is within 1% (relative) of the ratio asked,
// with and without jitter, for runs of whole periods and with count=.
func TestRatio(t *testing.T) {
	for _, c := range []struct {
		spec string
		n    uint64
	}{
		{"ratio=0.1,length=1000", 2_000_000},
		{"ratio=0.1,length=1000,jitter=1,seed=5", 2_000_000},
		{"ratio=0.025,length=500,jitter=0.5,seed=1", 3_000_000},
		{"count=30,ratio=0.1,jitter=1,seed=9", 1_234_567},
		{"ratio=0.1,length=997,warmup=200", 1_000_000},
		{"ratio=0.1,length=1000,first=10,jitter=1,seed=5", 2_000_000},
		{"ratio=0.1,length=1000,first=7", 100_000}, // one period, in 7 samples
	} {
		got, g := counted(t, c.spec, c.n)
		want := g.spec.Ratio
		if r := float64(got) / float64(c.n); math.Abs(r-want)/want > 0.01 {
			t.Errorf("%s over %d: ratio %.5f, want %.3f ± 1%%", c.spec, c.n, r, want)
		}
	}
}

// TestJitterReproducible: the same seed gives the same samples, another
// seed other ones; every window lies in its period.
func TestJitterReproducible(t *testing.T) {
	a, _ := Parse("ratio=0.1,length=1000,jitter=1,seed=1")
	b, _ := Parse("ratio=0.1,length=1000,jitter=1,seed=2")
	sa, _ := a.Schedule(0)
	sb, _ := b.Schedule(0)
	differ := false
	for k := range uint64(1000) {
		w := sa.Window(k)
		if w != sa.Window(k) {
			t.Fatal("not reproducible")
		}
		differ = differ || w != sb.Window(k)
		if lo, hi := periodOf(sa, k); w.Warm < lo || w.End > hi || w.Start >= w.End {
			t.Fatalf("window %d %+v outside its period [%d, %d)", k, w, lo, hi)
		}
	}
	if !differ {
		t.Error("seeds 1 and 2 gave the same samples")
	}
}

// periodOf returns the references of sample k's period (or sub-period)
// as docs/sampling.md defines them.
func periodOf(sc Schedule, k uint64) (lo, hi uint64) {
	if k < sc.First {
		sub := sc.Period / sc.First
		return k * sub, (k + 1) * sub
	}
	j := k - sc.First + 1
	return j * sc.Period, (j + 1) * sc.Period
}

// TestFirstPeriod: the first period holds First samples, each in its
// sub-period and 1/First as long, the later periods one each; Next finds
// the sample every reference falls in or precedes.
func TestFirstPeriod(t *testing.T) {
	for _, c := range []struct {
		spec  string
		first uint64
	}{
		{"ratio=0.1", 10},
		{"ratio=0.1,length=200k", 4}, // samples of at least MinFirstLength
		{"ratio=0.1,length=1000", 1},
		{"ratio=0.1,length=1000,first=10", 10},
		{"count=30,ratio=0.2", 1},
		{"ratio=0.3,length=7,first=3", 3},
		{"ratio=0.1,length=5,first=8", 5}, // no more samples than references
		{"ratio=0.1,length=1000,jitter=1,warmup=300,first=4,seed=2", 4},
	} {
		s, err := Parse(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := s.Schedule(3_000_000) // count=: periods of 100k
		if err != nil {
			t.Fatal(err)
		}
		if sc.First != c.first {
			t.Fatalf("%s: %d samples in the first period, want %d", c.spec, sc.First, c.first)
		}
		var inFirst uint64
		for k := range sc.First + 5 {
			w := sc.Window(k)
			lo, hi := periodOf(sc, k)
			if w.Warm < lo || w.Start < w.Warm || w.End > hi || w.Start >= w.End {
				t.Fatalf("%s: window %d %+v outside its period [%d, %d)", c.spec, k, w, lo, hi)
			}
			if k < sc.First {
				inFirst += w.End - w.Start
			}
		}
		if s.Jitter == 0 && inFirst != sc.Length/sc.First*sc.First {
			t.Errorf("%s: %d references sampled in the first period, want %d", c.spec, inFirst, sc.Length/sc.First*sc.First)
		}
		for p := range 4 * sc.Period {
			k := sc.Next(p)
			if _, hi := periodOf(sc, k); hi <= p {
				t.Fatalf("%s: Next(%d) = %d, whose period ends at %d", c.spec, p, k, hi)
			}
			if k > 0 {
				if _, hi := periodOf(sc, k-1); hi > p {
					t.Fatalf("%s: Next(%d) = %d, but the period of %d ends at %d", c.spec, p, k, k-1, hi)
				}
			}
		}
	}
}

// TestTimesteps: exactly the requested timesteps, evenly spread, and
// nothing outside them.
func TestTimesteps(t *testing.T) {
	s, _ := Parse("timesteps=2.5%")
	g, _ := NewGate(s, 0, 6)
	if g.Ref(5) != Off {
		t.Error("initialization is sampled")
	}
	var taken []uint64
	for i := range uint64(400) {
		g.Step(true)
		g.Step(true) // nested: one timestep
		if g.Ref(1) == On {
			taken = append(taken, i)
		}
		g.Step(false)
		g.Step(false)
		if g.Ref(1) != Off {
			t.Fatal("between timesteps is sampled")
		}
	}
	if len(taken) != 10 || g.Taken != 10 || g.Steps() != 400 {
		t.Fatalf("took %v (%d of %d), want 10 of 400", taken, g.Taken, g.Steps())
	}
	for j, i := range taken {
		if i != uint64(40*j+39) {
			t.Fatalf("took %v, want every 40th", taken)
		}
	}
}

// FuzzParse: Parse never panics, and what it accepts prints back to a
// request it reads the same.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"ratio=0.1,length=500k", "count=30,jitter=1,seed=3", "sets=1/16,vary", "timesteps=2.5%,mu=dead", "procs=1/4", "ratio=1/3,warmup=1k"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := Parse(s)
		if err != nil {
			return
		}
		again, err := Parse(spec.String())
		if err != nil || again != spec {
			t.Fatalf("Parse(%q) = %+v; its String %q reads as %+v, %v", s, spec, spec.String(), again, err)
		}
		if spec.Time() || spec.Vary {
			if _, err := NewGate(spec, 1000, 6); err != nil && spec.Count == 0 {
				t.Fatalf("Parse(%q) accepted, NewGate: %v", s, err)
			}
		}
	})
}
