package cache

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// policyDriver drives a Policy as a cache would: it keeps the valid bits,
// fills the lowest invalid way of a set and asks Victim only of a full set.
type policyDriver struct {
	p          Policy
	sets, ways int
	valid      []bool
	log        []string // what the policy chose and listed: its observable behaviour
}

func newDriver(t *testing.T, name string, sets, ways int) *policyDriver {
	p, err := policies[name].new(sets, ways, 7)
	if err != nil {
		t.Fatal(err)
	}
	return &policyDriver{p: p, sets: sets, ways: ways, valid: make([]bool, sets*ways)}
}

// fill fills a slot of set, evicting the policy's victim if it is full.
func (d *policyDriver) fill(set int) int {
	for s := set * d.ways; s < (set+1)*d.ways; s++ {
		if !d.valid[s] {
			d.valid[s] = true
			d.p.Fill(s)
			return s
		}
	}
	v := d.p.Victim(set)
	d.log = append(d.log, fmt.Sprint("victim ", v))
	d.p.Remove(v)
	d.p.Fill(v)
	return v
}

func (d *policyDriver) remove(s int) {
	if d.valid[s] {
		d.valid[s] = false
		d.p.Remove(s)
	}
}

// validIn returns a random valid slot of set, or -1.
func (d *policyDriver) validIn(rng *rand.Rand, set int) int {
	var vs []int
	for s := set * d.ways; s < (set+1)*d.ways; s++ {
		if d.valid[s] {
			vs = append(vs, s)
		}
	}
	if len(vs) == 0 {
		return -1
	}
	return vs[rng.IntN(len(vs))]
}

// step does one random operation.
func (d *policyDriver) step(rng *rand.Rand) {
	set := rng.IntN(d.sets)
	switch rng.IntN(6) {
	case 0, 1, 2:
		if s := d.validIn(rng, set); s >= 0 {
			d.p.Hit(s)
		}
	case 3, 4:
		d.fill(set)
	default:
		if s := d.validIn(rng, set); s >= 0 && rng.IntN(3) == 0 {
			d.remove(s)
		}
	}
}

// observe logs every set's age order of the valid slots.
func (d *policyDriver) observe() {
	for set := range d.sets {
		var vs []int
		for _, s := range d.p.AgeOrder(set, nil) {
			if d.valid[s] {
				vs = append(vs, s)
			}
		}
		d.log = append(d.log, fmt.Sprint("ages ", set, vs))
	}
}

// TestPolicyContract checks the cache.Policy contract, which the engine's
// hit bypass relies on, for every registered policy: two drivers in the
// same state, one given a sequence of operations and the other one the
// contract says is equivalent, then both given the same random operations,
// must choose the same victims and list the same ages ever after.
func TestPolicyContract(t *testing.T) {
	type pair struct {
		name string
		// x and y are the two sequences; a and b are valid slots of one
		// set (a != b), c a valid slot of another set (-1: none).
		x, y func(d *policyDriver, a, b, c int)
	}
	pairs := []pair{
		{"hit twice", func(d *policyDriver, a, _, _ int) { d.p.Hit(a); d.p.Hit(a) },
			func(d *policyDriver, a, _, _ int) { d.p.Hit(a) }},
		{"two lines in turn", func(d *policyDriver, a, b, _ int) { d.p.Hit(a); d.p.Hit(b); d.p.Hit(a) },
			func(d *policyDriver, a, b, _ int) { d.p.Hit(b); d.p.Hit(a) }},
		{"remove another", func(d *policyDriver, a, b, _ int) { d.p.Hit(a); d.remove(b); d.p.Hit(a) },
			func(d *policyDriver, a, b, _ int) { d.p.Hit(a); d.remove(b) }},
		{"another set between", func(d *policyDriver, a, _, c int) { d.p.Hit(a); d.p.Hit(c); d.remove(c); d.p.Hit(a) },
			func(d *policyDriver, a, _, c int) { d.p.Hit(a); d.p.Hit(c); d.remove(c) }},
	}
	for _, name := range Policies() {
		for _, geom := range [][2]int{{1, 2}, {2, 4}, {3, 3}, {2, 8}, {1, 32}} {
			sets, ways := geom[0], geom[1]
			if name == "plru" && ways&(ways-1) != 0 {
				continue
			}
			for pi, pr := range pairs {
				if pr.name == "another set between" && sets < 2 {
					continue
				}
				for trial := range 60 {
					seed := uint64(trial)*31 + uint64(pi)
					rng1 := rand.New(rand.NewPCG(seed, 1))
					rng2 := rand.New(rand.NewPCG(seed, 1))
					d1, d2 := newDriver(t, string(name), sets, ways), newDriver(t, string(name), sets, ways)
					for range 50 {
						d1.step(rng1)
						d2.step(rng2)
					}
					// Two valid slots of set 0 (filled if need be), one of
					// another set.
					for d1.validIn(rng1, 0) < 0 || countValid(d1, 0) < 2 {
						d1.fill(0)
						d2.fill(0)
					}
					a := d1.validIn(rng1, 0)
					b := a
					for b == a {
						b = d1.validIn(rng1, 0)
					}
					c := -1
					if sets > 1 {
						for d1.validIn(rng1, 1) < 0 {
							d1.fill(1)
							d2.fill(1)
						}
						c = d1.validIn(rng1, 1)
					}
					rng2 = rand.New(rand.NewPCG(seed, 2))
					rng1 = rand.New(rand.NewPCG(seed, 2))
					pr.x(d1, a, b, c)
					pr.y(d2, a, b, c)
					d1.log, d2.log = nil, nil
					if !sameFuture(d1, d2, rng1, rng2) {
						t.Fatalf("%s, %d sets × %d ways, trial %d: %q breaks the contract:\n%v\n%v", name, sets, ways, trial, pr.name, d1.log, d2.log)
					}
				}
			}
			// A fill is a use when the policy says so.
			d := newDriver(t, string(name), sets, ways)
			if d.p.FillIsUse() {
				for trial := range 60 {
					seed := uint64(trial)
					rng1, rng2 := rand.New(rand.NewPCG(seed, 3)), rand.New(rand.NewPCG(seed, 3))
					d1, d2 := newDriver(t, string(name), sets, ways), newDriver(t, string(name), sets, ways)
					for range 50 {
						d1.step(rng1)
						d2.step(rng2)
					}
					set := rng1.IntN(sets)
					rng2.IntN(sets)
					s := d1.fill(set)
					d2.fill(set)
					d1.p.Hit(s)
					if !sameFuture(d1, d2, rng1, rng2) {
						t.Fatalf("%s, %d sets × %d ways, trial %d: a fill is not a use:\n%v\n%v", name, sets, ways, trial, d1.log, d2.log)
					}
				}
			}
		}
	}
}

func countValid(d *policyDriver, set int) int {
	n := 0
	for s := set * d.ways; s < (set+1)*d.ways; s++ {
		if d.valid[s] {
			n++
		}
	}
	return n
}

// sameFuture runs d1 and d2 through 100 random steps each (rng1, rng2:
// the same sequence) and reports whether they observed the same: whether
// what made them differ before changed nothing to come.
func sameFuture(d1, d2 *policyDriver, rng1, rng2 *rand.Rand) bool {
	for range 100 {
		d1.step(rng1)
		d2.step(rng2)
		d1.observe()
		d2.observe()
	}
	return slices.Equal(d1.log, d2.log)
}
