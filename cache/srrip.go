package cache

func init() { register("srrip", newSRRIP, false) }

// RRIP's 2-bit re-reference prediction values.
const (
	rrpvMax  = 3 // distant re-reference: the victim
	rrpvLong = 2 // SRRIP's insertion
)

// srrip is static re-reference interval prediction: fills get rrpvLong,
// hits 0; the victim is the lowest way at rrpvMax, after aging the whole
// set as many times as needed.
type srrip struct {
	ways int
	rrpv []uint8
}

func newSRRIP(sets, ways int, _ uint64) (Policy, error) {
	return &srrip{ways: ways, rrpv: make([]uint8, sets*ways)}, nil
}

// Hit predicts a near re-reference.
func (p *srrip) Hit(slot int) { p.rrpv[slot] = 0 }

// Fill predicts a long re-reference interval.
func (p *srrip) Fill(slot int) { p.rrpv[slot] = rrpvLong }

// Remove changes nothing.
func (*srrip) Remove(int) {}

// Victim returns the lowest way predicted distant, aging the set first if
// none is.
func (p *srrip) Victim(set int) int { return rripVictim(p.rrpv, set, p.ways) }

// AgeOrder lists set's slots in way order.
func (p *srrip) AgeOrder(set int, dst []int) []int { return wayOrder(set, p.ways, dst) }

// FillIsUse is false: a hit after a fill still changes the prediction.
func (*srrip) FillIsUse() bool { return false }

// rripVictim returns the lowest slot of set at rrpvMax, incrementing every
// value of the set until one is.
func rripVictim(rrpv []uint8, set, ways int) int {
	base := set * ways
	for {
		for s := base; s < base+ways; s++ {
			if rrpv[s] == rrpvMax {
				return s
			}
		}
		for s := base; s < base+ways; s++ {
			rrpv[s]++
		}
	}
}
