package cache

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// listModel is an obviously right LRU or FIFO cache: per set, a list of
// the valid slots, most recent (or most recently installed) first.
type listModel struct {
	sets, ways int
	fifo       bool
	line       map[int]uint64 // valid slots' lines
	order      [][]int        // per set
}

func newListModel(sets, ways int, fifo bool) *listModel {
	return &listModel{sets: sets, ways: ways, fifo: fifo, line: map[int]uint64{}, order: make([][]int, sets)}
}

func (m *listModel) set(line uint64) int { return int(line % uint64(m.sets)) }

func (m *listModel) lookup(line uint64) int {
	for _, s := range m.order[m.set(line)] {
		if m.line[s] == line {
			return s
		}
	}
	return -1
}

func (m *listModel) front(set, slot int) {
	o := slices.DeleteFunc(m.order[set], func(s int) bool { return s == slot })
	m.order[set] = append([]int{slot}, o...)
}

func (m *listModel) touch(set, slot int) {
	if !m.fifo {
		m.front(set, slot)
	}
}

// victim is the lowest empty slot of the set, else its last listed.
func (m *listModel) victim(line uint64) int {
	set := m.set(line)
	for s := set * m.ways; s < (set+1)*m.ways; s++ {
		if _, ok := m.line[s]; !ok {
			return s
		}
	}
	o := m.order[set]
	return o[len(o)-1]
}

func (m *listModel) remove(slot int) {
	set := slot / m.ways
	delete(m.line, slot)
	m.order[set] = slices.DeleteFunc(m.order[set], func(s int) bool { return s == slot })
}

func (m *listModel) install(slot int, line uint64) {
	m.line[slot] = line
	m.front(slot/m.ways, slot)
}

// linePicker returns a picker of random lines below lines, a few more than
// fit, so that sets fill, hit and evict; one pick in 50 is noLine (or the
// line a set below it), which takes the slow scans.
func linePicker(rng *rand.Rand, sets, ways int) (pick func() uint64, lines uint64) {
	lines = uint64(sets * (ways + 3))
	return func() uint64 {
		if rng.IntN(50) == 0 {
			return noLine - uint64(sets)*uint64(rng.IntN(2))
		}
		return uint64(rng.IntN(int(lines)))
	}, lines
}

// The LRU and FIFO caches (the order word up to 16 ways, lists beyond)
// agree with the list model on random operations, for every associativity
// from 1 to 32 and for one and several sets.
func TestLRUFIFOModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, rep := range []string{"lru", "fifo"} {
		for ways := 1; ways <= 32; ways++ {
			for _, sets := range []int{1, 3, 4} {
				c, err := New(sets, ways, rep, 0)
				if err != nil {
					t.Fatal(err)
				}
				m := newListModel(sets, ways, rep == "fifo")
				pick, _ := linePicker(rng, sets, ways)
				for op := range 3000 {
					line := pick()
					check := func(what string, got, want int) {
						t.Helper()
						if got != want {
							t.Fatalf("%s %d ways %d sets, op %d: %s(%#x) = %d, want %d", rep, ways, sets, op, what, line, got, want)
						}
					}
					check("Lookup", c.Lookup(line), m.lookup(line))
					switch rng.IntN(6) {
					case 0: // Access
						want := m.lookup(line)
						if want >= 0 {
							m.touch(m.set(line), want)
						}
						got := c.Access(line)
						check("Access", got, want)
						if got >= 0 && c.pow2 {
							check("MRU after a hit", c.MRU(line), got)
						}
					case 1: // a miss filled, or a hit touched
						if s := m.lookup(line); s >= 0 {
							m.touch(m.set(line), s)
							c.Touch(s)
							break
						}
						v := c.Victim(line)
						check("Victim", v, m.victim(line))
						check("Valid", b2i(c.Valid(v)), b2i(m.has(v)))
						if c.Valid(v) {
							if c.Line(v) != m.line[v] {
								t.Fatalf("%s %d ways %d sets, op %d: Line(%d) = %#x, want %#x", rep, ways, sets, op, v, c.Line(v), m.line[v])
							}
							c.Remove(v)
							m.remove(v)
						}
						c.Install(v, line)
						m.install(v, line)
					case 2: // Remove
						if s := m.lookup(line); s >= 0 {
							c.Remove(s)
							m.remove(s)
						}
					case 3: // MRU finds only a line a hit would not move
						if got := c.MRU(line); got >= 0 {
							check("MRU", got, m.lookup(line))
							if !m.fifo {
								check("MRU", got, m.order[m.set(line)][0])
							}
						}
					case 4: // Promote: only the second most recent line moves
						got, demoted := c.Promote(line)
						if got < 0 {
							check("Promote's demoted", demoted, -1)
							break
						}
						check("Promote", got, m.lookup(line))
						if o := m.order[m.set(line)]; !m.fifo {
							check("Promote", got, o[1])
							check("Promote's demoted", demoted, o[0])
						}
						m.touch(m.set(line), got)
					case 5: // the set's age order
						set := m.set(line)
						want := slices.Clone(m.order[set])
						slices.Reverse(want)
						if got := c.AgeOrder(set, nil); !slices.Equal(got, want) {
							t.Fatalf("%s %d ways %d sets, op %d: AgeOrder(%d) = %v, want %v", rep, ways, sets, op, set, got, want)
						}
					}
				}
			}
		}
	}
}

func (m *listModel) has(slot int) bool {
	_, ok := m.line[slot]
	return ok
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Replace does what Victim, Remove and Install do, for every policy and
// geometry (order words, lists and the line map; powers of two and
// others): twin caches, one filling with Replace and one step by step,
// agree on everything observable after every random operation.
func TestReplaceTwin(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, rep := range Policies() {
		for _, ways := range []int{1, 2, 3, 5, 8, 15, 16, 17, 32} {
			if rep == "plru" && ways&(ways-1) != 0 {
				continue
			}
			for _, sets := range []int{1, 3, 4, 64} {
				fused, err := New(sets, ways, rep, 9)
				if err != nil {
					t.Fatal(err)
				}
				steps, _ := New(sets, ways, rep, 9)
				pick, lines := linePicker(rng, sets, ways)
				for op := range 2000 {
					line := pick()
					fail := func(format string, args ...any) {
						t.Helper()
						t.Fatalf("%s %d ways %d sets, op %d, line %#x: %s", rep, ways, sets, op, line, fmt.Sprintf(format, args...))
					}
					switch rng.IntN(8) {
					case 0, 1, 2: // a miss filled, or a hit touched
						if s := steps.Lookup(line); s >= 0 {
							steps.Touch(s)
							fused.Touch(s)
							break
						}
						v := steps.Victim(line)
						old, valid, dirty := steps.Line(v), steps.Valid(v), steps.Dirty(v)
						steps.Remove(v)
						steps.Install(v, line)
						gv, gold, gvalid, gdirty := fused.Replace(line)
						if gv != v || gold != old || gvalid != valid || gdirty != dirty {
							fail("Replace = %d, %#x, %v, %v; want %d, %#x, %v, %v", gv, gold, gvalid, gdirty, v, old, valid, dirty)
						}
					case 3:
						if a, b := fused.Access(line), steps.Access(line); a != b {
							fail("Access = %d and %d", a, b)
						}
					case 4:
						if s := steps.Lookup(line); s >= 0 {
							steps.SetDirty(s, true)
							fused.SetDirty(s, true)
						}
					case 5:
						if s := steps.Lookup(line); s >= 0 && rng.IntN(3) == 0 {
							steps.Remove(s)
							fused.Remove(s)
						}
					case 6:
						a, ad := fused.Promote(line)
						b, bd := steps.Promote(line)
						if a != b || ad != bd {
							fail("Promote = %d, %d and %d, %d", a, ad, b, bd)
						}
					case 7: // Victim changes state under some policies: both twins choose
						if a, b := fused.Victim(line), steps.Victim(line); a != b {
							fail("Victim = %d and %d", a, b)
						}
					}
					for l := range lines {
						if a, b := fused.Lookup(l), steps.Lookup(l); a != b {
							fail("Lookup(%#x) = %d and %d", l, a, b)
						}
						if a, b := fused.MRU(l), steps.MRU(l); a != b {
							fail("MRU(%#x) = %d and %d", l, a, b)
						}
					}
					for _, l := range []uint64{noLine, noLine - uint64(sets)} {
						if a, b := fused.Lookup(l), steps.Lookup(l); a != b {
							fail("Lookup(%#x) = %d and %d", l, a, b)
						}
					}
					for s := range sets * ways {
						if fused.Valid(s) != steps.Valid(s) || fused.Dirty(s) != steps.Dirty(s) || fused.Line(s) != steps.Line(s) {
							fail("slot %d: %v %v %#x and %v %v %#x", s, fused.Valid(s), fused.Dirty(s), fused.Line(s), steps.Valid(s), steps.Dirty(s), steps.Line(s))
						}
					}
				}
			}
		}
	}
}

// Under the policies without an age order, AgeOrder lists the valid ways
// in way order.
func TestAgeOrderWays(t *testing.T) {
	for _, rep := range []string{"random", "plru", "srrip", "brrip"} {
		c, err := New(2, 4, rep, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range []uint64{7, 1, 3} { // set 1, ways 0, 1, 2
			c.Install(c.Victim(line), line)
		}
		c.Remove(c.Lookup(1))
		if got, want := c.AgeOrder(1, nil), []int{4, 6}; !slices.Equal(got, want) {
			t.Errorf("%s: AgeOrder(1) = %v, want %v", rep, got, want)
		}
		if got := c.AgeOrder(0, nil); len(got) != 0 {
			t.Errorf("%s: AgeOrder(0) = %v, want none", rep, got)
		}
	}
}
