package cache

import (
	"fmt"
	"math/bits"
)

func init() { register("plru", newPLRU, false) }

// plru is tree pseudo-LRU: per set, one bit per inner node of a binary
// tree over the ways (heap order, node 1 the root); a use points every
// node on the way's path away from it, and the victim is found by
// following the bits from the root. Bits start at 0 (the lower half).
type plru struct {
	ways   int
	levels int
	tree   []uint8 // ways-1 node bits per set, at set*ways+node
}

func newPLRU(sets, ways int, _ uint64) (Policy, error) {
	if ways&(ways-1) != 0 {
		return nil, fmt.Errorf("cache: plru needs a power-of-two associativity, not %d", ways)
	}
	return &plru{ways: ways, levels: bits.TrailingZeros(uint(ways)), tree: make([]uint8, sets*ways)}, nil
}

// Hit points slot's path away from it.
func (p *plru) Hit(slot int) {
	if p.ways == 1 {
		return
	}
	set, way := slot>>p.levels, slot&(p.ways-1)
	t := p.tree[set*p.ways:]
	node := 1
	for l := p.levels - 1; l >= 0; l-- {
		bit := way >> l & 1
		t[node] = uint8(1 - bit) // the victim search goes the other way
		node = node*2 + bit
	}
}

// Fill is a use.
func (p *plru) Fill(slot int) { p.Hit(slot) }

// Remove changes nothing.
func (*plru) Remove(int) {}

// Victim follows the bits from the root.
func (p *plru) Victim(set int) int {
	t := p.tree[set*p.ways:]
	node := 1
	for node < p.ways {
		node = node*2 + int(t[node])
	}
	return set*p.ways + node - p.ways
}

// AgeOrder lists set's slots in way order.
func (p *plru) AgeOrder(set int, dst []int) []int { return wayOrder(set, p.ways, dst) }

// FillIsUse is true: a fill is a use.
func (*plru) FillIsUse() bool { return true }
