// Package cache implements one set-associative cache array: tags, valid and
// dirty bits, and the replacement state of every policy memspy offers. It
// knows nothing of hierarchies or statistics (see package sim); callers
// address it by line number (address >> log2(line size)) and by slot (set *
// ways + way).
package cache

import (
	"fmt"
	"math/bits"

	"memspy/machine"
)

// hashThreshold is the associativity above which a cache keeps a line →
// slot map instead of scanning the ways of a set.
const hashThreshold = 16

// Policy numbers, dispatched with a switch on the hot path.
type policy uint8

const (
	lru policy = iota
	fifo
	random
	plru
	srrip
	brrip
)

// RRIP parameters: 2-bit re-reference prediction values.
const (
	rrpvMax  = 3 // distant re-reference
	rrpvLong = 2 // SRRIP insertion
	// brripLongEvery: BRRIP inserts at rrpvLong once every this many
	// insertions (deterministic bimodal throttle), else at rrpvMax.
	brripLongEvery = 32
)

const none = -1

// noLine is the tag of an empty slot, so that a scan of a set's tags finds
// a line without reading its valid bits; line noLine itself (the last byte
// of memory with 1-byte lines) is looked up by the valid bits too.
const noLine = ^uint64(0)

// ordWays is the largest associativity whose LRU or FIFO order is one
// word per set (see Cache.ord).
const ordWays = 16

// Cache is one cache array.
type Cache struct {
	sets, ways int
	setMask    uint64 // sets-1 when sets is a power of two
	pow2       bool
	waysShift  int // log2(ways) when ways is a power of two, else -1
	pol        policy

	tag   []uint64 // line number per slot, noLine when empty
	valid []bool
	dirty []bool

	// LRU and FIFO with at most ordWays ways: the order of the ways of
	// each set in one word, four bits per way, most recent first (nibble
	// 0). It is a permutation of the ways whose first occupied[set]
	// nibbles are the valid ways, in order; nibbles beyond the ways are
	// 0xf.
	ord []uint64
	// LRU and FIFO with more ways: a doubly linked list of the valid
	// slots per set, most recent first.
	prev, next []int32
	tail       []int32
	// LRU and FIFO: the most recent slot of each set (-1 if the set is
	// empty), and its line.
	head    []int32
	headTag []uint64

	tree     []uint8 // PLRU: ways-1 node bits per set (heap order, node 1 is the root)
	rrpv     []uint8 // SRRIP/BRRIP
	inserts  uint64  // BRRIP insertion counter
	rng      splitmix
	index    map[uint64]int32 // line → slot, when ways > hashThreshold
	occupied []int32          // valid lines per set
}

// New returns an empty cache with the geometry and policy of spec (which
// must be normalized).
func New(spec *machine.Cache) (*Cache, error) {
	return NewGeometry(spec.Sets, spec.Assoc, spec.Replacement, spec.Seed)
}

// NewGeometry returns an empty cache of sets × ways lines with the given
// replacement policy; seed drives the random policy.
func NewGeometry(sets, ways int, rep machine.Replacement, seed uint64) (*Cache, error) {
	if sets < 1 || ways < 1 {
		return nil, fmt.Errorf("cache: bad geometry %d sets × %d ways", sets, ways)
	}
	c := &Cache{sets: sets, ways: ways, rng: splitmix(seed)}
	switch rep {
	case machine.LRU, "":
		c.pol = lru
	case machine.FIFO:
		c.pol = fifo
	case machine.Random:
		c.pol = random
	case machine.PLRU:
		if ways&(ways-1) != 0 {
			return nil, fmt.Errorf("cache: plru needs a power-of-two associativity, not %d", ways)
		}
		c.pol = plru
	case machine.SRRIP:
		c.pol = srrip
	case machine.BRRIP:
		c.pol = brrip
	default:
		return nil, fmt.Errorf("cache: unknown replacement policy %q", rep)
	}
	c.waysShift = -1
	if ways&(ways-1) == 0 {
		c.waysShift = bits.TrailingZeros(uint(ways))
	}
	if sets&(sets-1) == 0 {
		c.pow2 = true
		c.setMask = uint64(sets - 1)
	}
	n := sets * ways
	c.tag = make([]uint64, n)
	for i := range c.tag {
		c.tag[i] = noLine
	}
	c.valid = make([]bool, n)
	c.dirty = make([]bool, n)
	c.occupied = make([]int32, sets)
	switch c.pol {
	case lru, fifo:
		c.head = make([]int32, sets)
		c.headTag = make([]uint64, sets)
		for s := range c.head {
			c.head[s] = none
		}
		if ways <= ordWays {
			var w uint64 = ^uint64(0) // 0xf beyond the ways
			for i := range ways {
				w = w&^(0xf<<(4*i)) | uint64(i)<<(4*i)
			}
			c.ord = make([]uint64, sets)
			for s := range c.ord {
				c.ord[s] = w
			}
		} else {
			c.prev = make([]int32, n)
			c.next = make([]int32, n)
			c.tail = make([]int32, sets)
			for s := range c.tail {
				c.tail[s] = none
			}
		}
	case plru:
		c.tree = make([]uint8, sets*ways)
	case srrip, brrip:
		c.rrpv = make([]uint8, n)
	}
	if ways > hashThreshold {
		c.index = make(map[uint64]int32)
	}
	return c, nil
}

// Sets returns the number of sets.
func (c *Cache) Sets() int { return c.sets }

// Ways returns the associativity.
func (c *Cache) Ways() int { return c.ways }

// setOf returns the set of slot, avoiding a division when the
// associativity is a power of two.
func (c *Cache) setOf(slot int) int {
	if c.waysShift >= 0 {
		return slot >> c.waysShift
	}
	return slot / c.ways
}

// Set returns the set a line maps to.
func (c *Cache) Set(line uint64) int {
	if c.pow2 {
		return int(line & c.setMask)
	}
	return int(line % uint64(c.sets))
}

// Lookup returns the slot holding line, or -1.
func (c *Cache) Lookup(line uint64) int {
	if c.index != nil {
		if s, ok := c.index[line]; ok {
			return int(s)
		}
		return none
	}
	base := c.Set(line) * c.ways
	return c.find(base, line)
}

// find returns the slot of the set starting at base that holds line, or
// -1.
func (c *Cache) find(base int, line uint64) int {
	if line == noLine {
		for s := base; s < base+c.ways; s++ {
			if c.tag[s] == line && c.valid[s] {
				return s
			}
		}
		return none
	}
	for i, t := range c.tag[base : base+c.ways] {
		if t == line {
			return base + i
		}
	}
	return none
}

// Access looks line up and, on a hit, records the use (as Touch does). It
// returns the slot, or -1 on a miss. After a hit the slot is always settled
// (see Settled): every policy's use leaves the line where a repeated use
// changes nothing.
func (c *Cache) Access(line uint64) int {
	set := c.Set(line)
	if c.pol == lru {
		// Loops revisit lines that are still the most recent of their set.
		if h := c.head[set]; h >= 0 && c.headTag[set] == line {
			return int(h) // listed lines are valid
		}
	}
	slot := none
	if c.index != nil {
		if s, ok := c.index[line]; ok {
			slot = int(s)
		}
	} else {
		slot = c.find(set*c.ways, line)
	}
	if slot < 0 {
		return none
	}
	switch c.pol {
	case lru:
		if int(c.head[set]) != slot {
			c.toFront(set, slot)
		}
	case plru:
		c.plruTouch(slot)
	case srrip, brrip:
		c.rrpv[slot] = 0
	}
	return slot
}

// MRU returns the slot holding line if line is the most recently used line
// of its set in an LRU cache with a power-of-two number of sets, else -1. A
// hit on it changes nothing, so callers may count it without Access. It is
// small enough to be inlined into the engine's hot loop.
func (c *Cache) MRU(line uint64) int {
	if c.pol != lru || !c.pow2 {
		return none
	}
	set := line & c.setMask
	if h := c.head[set]; h >= 0 && c.headTag[set] == line {
		return int(h) // listed lines are valid
	}
	return none
}

// Promote makes line the most recently used line of its set and returns
// its slot, and the slot of the line it displaced (now the second most
// recent), if it was the second most recent one in an LRU cache with a
// power-of-two number of sets; else it returns -1, -1 and changes nothing.
// Two lines used in turn in one set (two arrays whose rows map to the same
// sets) are hits that need only this swap, which the engine's hot loop
// does without leaving it.
func (c *Cache) Promote(line uint64) (slot, demoted int) {
	if c.pol != lru || !c.pow2 {
		return none, none
	}
	set := line & c.setMask
	h := c.head[set]
	if h < 0 {
		return none, none
	}
	if c.ord != nil {
		w := c.ord[set]
		s := int(set)*c.ways + int(w>>4&0xf)
		if c.occupied[set] < 2 || c.tag[s] != line {
			return none, none
		}
		c.ord[set] = w&^0xff | w&0xf<<4 | w>>4&0xf
		c.head[set], c.headTag[set] = int32(s), line
		return s, int(h)
	}
	s := c.next[h]
	if s < 0 || c.tag[s] != line {
		return none, none // listed lines are valid
	}
	n := c.next[s]
	c.head[set], c.headTag[set] = s, line
	c.prev[s], c.next[s] = none, h
	c.prev[h], c.next[h] = s, n
	if n >= 0 {
		c.prev[n] = h
	} else {
		c.tail[set] = h
	}
	return int(s), int(h)
}

// Line returns the line number held in slot (a valid one).
func (c *Cache) Line(slot int) uint64 { return c.tag[slot] }

// Valid reports whether slot holds a line.
func (c *Cache) Valid(slot int) bool { return c.valid[slot] }

// Dirty reports whether slot holds a modified line.
func (c *Cache) Dirty(slot int) bool { return c.dirty[slot] }

// SetDirty sets or clears the dirty bit of slot.
func (c *Cache) SetDirty(slot int, d bool) { c.dirty[slot] = d }

// Touch records a hit on slot.
func (c *Cache) Touch(slot int) {
	switch c.pol {
	case lru:
		c.moveToFront(slot)
	case plru:
		c.plruTouch(slot)
	case srrip, brrip:
		c.rrpv[slot] = 0
	}
}

// Settled reports whether a Touch of slot would leave the replacement
// state unchanged, so that a repeated hit on it may skip the Touch (the
// engine's hit bypass). It is false after a fill under srrip and brrip,
// whose fills do not predict a near re-reference as a hit does.
func (c *Cache) Settled(slot int) bool {
	switch c.pol {
	case lru:
		return int(c.head[c.setOf(slot)]) == slot
	case plru:
		if c.ways == 1 {
			return true
		}
		set, way := c.setOf(slot), slot-c.setOf(slot)*c.ways
		t := c.tree[set*c.ways:]
		node := 1
		for l := bits.TrailingZeros(uint(c.ways)) - 1; l >= 0; l-- {
			bit := way >> l & 1
			if int(t[node]) == bit { // points at the way, not away from it
				return false
			}
			node = node*2 + bit
		}
		return true
	case srrip, brrip:
		return c.rrpv[slot] == 0
	}
	return true // fifo, random: hits change nothing
}

// FillSettled reports whether a slot just filled (Install, Replace) is
// settled (see Settled): under every policy but srrip and brrip.
func (c *Cache) FillSettled() bool { return c.pol != srrip && c.pol != brrip }

// Victim returns the slot to fill with line: the lowest invalid way of its
// set if there is one, else the policy's choice. The slot may still hold a
// valid line, which the caller evicts with Remove before Install.
func (c *Cache) Victim(line uint64) int {
	set := c.Set(line)
	base := set * c.ways
	if int(c.occupied[set]) < c.ways {
		for s := base; ; s++ {
			if !c.valid[s] {
				return s
			}
		}
	}
	switch c.pol {
	case lru, fifo:
		if c.ord != nil {
			return base + int(c.ord[set]>>(4*(c.ways-1))&0xf)
		}
		return int(c.tail[set])
	case random:
		return base + int(c.rng.next()%uint64(c.ways))
	case plru:
		return base + c.plruVictim(set)
	default: // srrip, brrip
		for {
			for s := base; s < base+c.ways; s++ {
				if c.rrpv[s] == rrpvMax {
					return s
				}
			}
			for s := base; s < base+c.ways; s++ {
				c.rrpv[s]++
			}
		}
	}
}

// Remove empties slot (a valid line).
func (c *Cache) Remove(slot int) {
	if !c.valid[slot] {
		return
	}
	set := c.setOf(slot)
	if c.index != nil {
		delete(c.index, c.tag[slot])
	}
	if c.pol == lru || c.pol == fifo {
		c.drop(set, slot)
	}
	c.tag[slot] = noLine
	c.valid[slot] = false
	c.dirty[slot] = false
	c.occupied[set]--
}

// Install puts line into the empty slot returned by Victim (after Remove of
// any line it held), clean, as the most recently used line of its set.
func (c *Cache) Install(slot int, line uint64) {
	set := c.setOf(slot)
	c.tag[slot] = line
	c.valid[slot] = true
	c.dirty[slot] = false
	c.occupied[set]++
	if c.index != nil {
		c.index[line] = int32(slot)
	}
	switch c.pol {
	case lru, fifo:
		if c.ord != nil {
			c.toFront(set, slot)
		} else {
			c.pushFront(set, slot)
		}
	case plru:
		c.plruTouch(slot)
	case srrip:
		c.rrpv[slot] = rrpvLong
	case brrip:
		if c.inserts%brripLongEvery == 0 {
			c.rrpv[slot] = rrpvLong
		} else {
			c.rrpv[slot] = rrpvMax
		}
		c.inserts++
	}
}

// Replace fills line, which the cache does not hold, into the slot Victim
// chooses, as Victim, Remove and Install would: it returns the slot and
// what the slot held before (its line, whether it was valid and dirty).
// With an LRU or FIFO order word and a full set it is one pass: the victim
// is the last way of the order, and making it the first rotates the word
// (an order word means no line map to update: ordWays ≤ hashThreshold).
func (c *Cache) Replace(line uint64) (slot int, old uint64, wasValid, wasDirty bool) {
	set := c.Set(line)
	if c.ord != nil && int(c.occupied[set]) == c.ways {
		w := c.ord[set]
		last := 4 * uint(c.ways-1)
		way := w >> last & 0xf
		all := uint64(1)<<(last+4) - 1 // every way's nibble (all ones at 16 ways)
		c.ord[set] = w&^all | w<<4&all | way
		slot = set*c.ways + int(way)
		old, wasDirty = c.tag[slot], c.dirty[slot]
		c.tag[slot], c.dirty[slot] = line, false
		c.head[set], c.headTag[set] = int32(slot), line
		return slot, old, true, wasDirty
	}
	slot = c.Victim(line)
	old, wasValid, wasDirty = c.tag[slot], c.valid[slot], c.dirty[slot]
	c.Remove(slot)
	c.Install(slot, line)
	return slot, old, wasValid, wasDirty
}

// AgeOrder appends to dst the valid slots of set, oldest first, and returns
// it: under LRU from the least to the most recently used, under FIFO from
// the oldest fill to the newest (Dinero IV's order from the bottom of a
// set's stack); under the other policies in way order.
func (c *Cache) AgeOrder(set int, dst []int) []int {
	base := set * c.ways
	switch {
	case c.ord != nil:
		w := c.ord[set]
		for i := int(c.occupied[set]) - 1; i >= 0; i-- {
			dst = append(dst, base+int(w>>(4*uint(i))&0xf))
		}
	case c.tail != nil:
		for s := c.tail[set]; s != none; s = c.prev[s] {
			dst = append(dst, int(s))
		}
	default:
		for s := base; s < base+c.ways; s++ {
			if c.valid[s] {
				dst = append(dst, s)
			}
		}
	}
	return dst
}

// ForEachValid calls f for every valid slot in slot order.
func (c *Cache) ForEachValid(f func(slot int)) {
	for s, v := range c.valid {
		if v {
			f(s)
		}
	}
}

func (c *Cache) moveToFront(slot int) {
	set := c.setOf(slot)
	if int(c.head[set]) == slot {
		return
	}
	c.toFront(set, slot)
}

// toFront makes slot, valid or being installed, the most recent of its
// set; with lists, slot is listed.
func (c *Cache) toFront(set, slot int) {
	if c.ord == nil {
		c.unlink(set, slot)
		c.pushFront(set, slot)
		return
	}
	w := c.ord[set]
	way := uint64(slot - set*c.ways)
	p := nibble(w, way)
	below := uint64(1)<<(4*p) - 1 // the nibbles before way's
	c.ord[set] = w&^(below<<4|0xf) | w&below<<4 | way
	c.head[set], c.headTag[set] = int32(slot), c.tag[slot]
}

// drop takes the valid slot out of its set's order: to the end of the
// ways with a word, out of the list with lists.
func (c *Cache) drop(set, slot int) {
	if c.ord == nil {
		c.unlink(set, slot)
		return
	}
	w := c.ord[set]
	way := uint64(slot - set*c.ways)
	p := nibble(w, way)
	below := uint64(1)<<(4*p) - 1               // the nibbles before way's
	before := uint64(1)<<(4*uint(c.ways-1)) - 1 // the nibbles before the last way's
	all := before | 0xf<<(4*uint(c.ways-1))     // every way's
	w = w&below | w>>4&^below&before | way<<(4*uint(c.ways-1)) | w&^all
	c.ord[set] = w
	if int(c.head[set]) == slot {
		if c.occupied[set] > 1 {
			h := set*c.ways + int(w&0xf)
			c.head[set], c.headTag[set] = int32(h), c.tag[h]
		} else {
			c.head[set] = none
		}
	}
}

// nibble returns the position of way in the order word w: the lowest
// 4-bit field of w equal to it.
func nibble(w, way uint64) uint {
	const ones, highs = 0x1111111111111111, 0x8888888888888888
	v := w ^ way*ones // zero nibbles where w holds way
	// The lowest nibble with its high bit set marks the lowest zero nibble
	// exactly (borrows only make false marks above it).
	return uint(bits.TrailingZeros64((v-ones)&^v&highs)) / 4
}

func (c *Cache) pushFront(set, slot int) {
	h := c.head[set]
	c.prev[slot] = none
	c.next[slot] = h
	if h != none {
		c.prev[h] = int32(slot)
	} else {
		c.tail[set] = int32(slot)
	}
	c.head[set] = int32(slot)
	c.headTag[set] = c.tag[slot]
}

func (c *Cache) unlink(set, slot int) {
	p, n := c.prev[slot], c.next[slot]
	if p != none {
		c.next[p] = n
	} else {
		c.head[set] = n
		if n != none {
			c.headTag[set] = c.tag[n]
		}
	}
	if n != none {
		c.prev[n] = p
	} else {
		c.tail[set] = p
	}
}

// plruTouch points every node on the path to slot's way away from it.
func (c *Cache) plruTouch(slot int) {
	set, way := c.setOf(slot), slot-c.setOf(slot)*c.ways
	if c.ways == 1 {
		return
	}
	t := c.tree[set*c.ways:]
	levels := bits.TrailingZeros(uint(c.ways))
	node := 1
	for l := levels - 1; l >= 0; l-- {
		right := way>>l&1 == 1
		if right {
			t[node] = 0 // victim search goes left
		} else {
			t[node] = 1 // victim search goes right
		}
		node = node*2 + way>>l&1
	}
}

func (c *Cache) plruVictim(set int) int {
	if c.ways == 1 {
		return 0
	}
	t := c.tree[set*c.ways:]
	node := 1
	for node < c.ways {
		node = node*2 + int(t[node])
	}
	return node - c.ways
}

// splitmix is the SplitMix64 generator: the random policy's source, so
// results are reproducible from the configured seed.
type splitmix uint64

func (s *splitmix) next() uint64 {
	*s += 0x9E3779B97F4A7C15
	z := uint64(*s)
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}
