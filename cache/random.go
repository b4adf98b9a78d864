package cache

func init() { register("random", newRandom, true) }

// random evicts way x mod ways, x the next value of a SplitMix64
// generator seeded with the cache's seed, drawn only when a set is full.
type random struct {
	ways int
	rng  uint64
}

func newRandom(_, ways int, seed uint64) (Policy, error) { return &random{ways: ways, rng: seed}, nil }

// Hit changes nothing.
func (*random) Hit(int) {}

// Fill changes nothing.
func (*random) Fill(int) {}

// Remove changes nothing.
func (*random) Remove(int) {}

// Victim draws the way to replace.
func (p *random) Victim(set int) int {
	p.rng += 0x9E3779B97F4A7C15
	z := p.rng
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return set*p.ways + int((z^z>>31)%uint64(p.ways))
}

// AgeOrder lists set's slots in way order.
func (p *random) AgeOrder(set int, dst []int) []int { return wayOrder(set, p.ways, dst) }

// FillIsUse is true: hits change nothing.
func (*random) FillIsUse() bool { return true }
