package cache

// brrip is registered as seeded, as machine descriptions have always given
// it a seed, though its throttle draws no random numbers.
func init() { register("brrip", newBRRIP, true) }

// brripLongEvery: BRRIP inserts at rrpvLong once every this many fills of
// the cache (the 1st, 33rd, 65th, …: a deterministic bimodal throttle),
// else at rrpvMax.
const brripLongEvery = 32

// brrip is bimodal RRIP: as srrip, but most fills are predicted distant.
type brrip struct {
	srrip
	fills uint64
}

func newBRRIP(sets, ways int, _ uint64) (Policy, error) {
	return &brrip{srrip: srrip{ways: ways, rrpv: make([]uint8, sets*ways)}}, nil
}

// Fill predicts a distant re-reference, or a long interval once every
// brripLongEvery fills.
func (p *brrip) Fill(slot int) {
	if p.fills%brripLongEvery == 0 {
		p.rrpv[slot] = rrpvLong
	} else {
		p.rrpv[slot] = rrpvMax
	}
	p.fills++
}
