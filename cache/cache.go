// Package cache implements one set-associative cache array: tags, valid and
// dirty bits, and a replacement policy (a Policy, one file each, registered
// by name). It knows nothing of hierarchies or statistics (see package
// sim); callers address it by line number (address >> log2(line size)) and
// by slot (set * ways + way).
package cache

import (
	"fmt"
	"math/bits"
)

// hashThreshold is the associativity above which a cache keeps a line →
// slot map instead of scanning the ways of a set.
const hashThreshold = 16

const none = -1

// noLine is the tag of an empty slot, so that a scan of a set's tags finds
// a line without reading its valid bits; line noLine itself (the last byte
// of memory with 1-byte lines) is looked up by the valid bits too.
const noLine = ^uint64(0)

// Cache is one cache array.
type Cache struct {
	sets, ways int
	setMask    uint64 // sets-1 when sets is a power of two
	pow2       bool
	waysShift  int // log2(ways) when ways is a power of two, else -1

	tag      []uint64 // line number per slot, noLine when empty
	valid    []bool
	dirty    []bool
	index    map[uint64]int32 // line → slot, when ways > hashThreshold
	occupied []int32          // valid lines per set

	pol       Policy
	fillIsUse bool
	// ord is the order of an lru or fifo policy with at most ordWays
	// ways, for Replace's one pass (nil otherwise); hits is lru's order,
	// which hits reorder without a call through the Policy (nil
	// otherwise).
	ord, hits *order

	// last and prev are, per set, the slots of the last two distinct
	// lines used (hit, or filled when fills are uses) since anything else
	// changed the set's replacement state (-1: none), and lastTag last's
	// line. By the Policy contract a hit on last changes nothing, and a hit
	// on prev only makes the two change places (see MRU and Promote).
	last, prev []int32
	lastTag    []uint64
}

// New returns an empty cache of sets × ways lines with the replacement
// policy called rep (see Policies; "": DefaultPolicy); seed drives the
// policies that draw random numbers.
func New(sets, ways int, rep string, seed uint64) (*Cache, error) {
	if sets < 1 || ways < 1 {
		return nil, fmt.Errorf("cache: bad geometry %d sets × %d ways", sets, ways)
	}
	pol, err := newPolicy(rep, sets, ways, seed)
	if err != nil {
		return nil, err
	}
	c := &Cache{sets: sets, ways: ways, pol: pol, fillIsUse: pol.FillIsUse(), waysShift: -1}
	switch p := pol.(type) {
	case lru:
		c.ord, c.hits = p.order, p.order
	case fifo:
		c.ord = p.order
	}
	if c.ord != nil && c.ord.word == nil {
		c.ord = nil
	}
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
	c.last = make([]int32, sets)
	c.prev = make([]int32, sets)
	c.lastTag = make([]uint64, sets)
	for s := range c.last {
		c.last[s], c.prev[s] = none, none
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
// returns the slot, or -1 on a miss. After a hit a repeated use changes
// nothing (the Policy contract).
func (c *Cache) Access(line uint64) int {
	set := c.Set(line)
	if h := c.last[set]; h >= 0 && c.lastTag[set] == line {
		return int(h) // a use of the last line used changes nothing
	}
	slot := none
	if c.index != nil {
		if s, ok := c.index[line]; ok {
			slot = int(s)
		}
	} else {
		slot = c.find(set*c.ways, line)
	}
	if slot >= 0 {
		c.hit(set, slot)
	}
	return slot
}

// MRU returns the slot holding line if it is the last line used in its set
// of a cache with a power-of-two number of sets, else -1. A hit on it
// changes nothing (the Policy contract), so callers may count it without
// Access. It is small enough to be inlined into the engine's hot loop.
func (c *Cache) MRU(line uint64) int {
	if !c.pow2 {
		return none
	}
	set := line & c.setMask
	if h := c.last[set]; h >= 0 && c.lastTag[set] == line {
		return int(h)
	}
	return none
}

// Promote records a use of line and returns its slot, and the slot of the
// line used before it, if line is the line used before the last one in its
// set of a cache with a power-of-two number of sets; else it returns -1, -1
// and changes nothing. Two lines used in turn in one set (two arrays whose
// rows map to the same sets) are hits that only make the two change places
// (the Policy contract), which the engine's hot loop counts without
// leaving it, promoting once when the run ends.
func (c *Cache) Promote(line uint64) (slot, demoted int) {
	if !c.pow2 {
		return none, none
	}
	set := line & c.setMask
	p := c.prev[set]
	if p < 0 || c.tag[p] != line {
		return none, none
	}
	demoted = int(c.last[set])
	c.hit(int(set), int(p))
	return int(p), demoted
}

// hit records a use of the valid slot of set.
func (c *Cache) hit(set, slot int) {
	if c.hits != nil {
		c.hits.front(slot)
	} else {
		c.pol.Hit(slot)
	}
	c.used(set, slot)
}

// used notes that slot, in set, was used last.
func (c *Cache) used(set, slot int) {
	if l := c.last[set]; l != int32(slot) {
		c.prev[set] = l
		c.last[set] = int32(slot)
		c.lastTag[set] = c.tag[slot]
	}
}

// forget forgets the last uses of set: its replacement state changed.
func (c *Cache) forget(set int) {
	c.last[set], c.prev[set] = none, none
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
	set := c.setOf(slot)
	if c.last[set] != int32(slot) {
		c.hit(set, slot)
	}
}

// FillSettled reports whether a line just filled (Install, Replace) is
// left as a hit would leave it, so that a repeated use of it changes
// nothing: under every policy whose fills are uses (not srrip, brrip).
func (c *Cache) FillSettled() bool { return c.fillIsUse }

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
	c.forget(set)
	return c.pol.Victim(set)
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
	c.pol.Remove(slot)
	if c.last[set] == int32(slot) || c.prev[set] == int32(slot) {
		c.forget(set)
	}
	c.tag[slot] = noLine
	c.valid[slot] = false
	c.dirty[slot] = false
	c.occupied[set]--
}

// Install puts line into the empty slot returned by Victim (after Remove of
// any line it held), clean.
func (c *Cache) Install(slot int, line uint64) {
	set := c.setOf(slot)
	c.tag[slot] = line
	c.valid[slot] = true
	c.dirty[slot] = false
	c.occupied[set]++
	if c.index != nil {
		c.index[line] = int32(slot)
	}
	c.pol.Fill(slot)
	if c.fillIsUse {
		c.used(set, slot)
	} else {
		c.forget(set)
	}
}

// Retag makes the valid slot hold line, clean, in place of its line, and
// leaves the replacement state as it was: for a cache that only stores
// the lines another model places (a tracer's first-level caches, whose
// victims it chooses itself: sim.Hierarchy.TracerNotes).
func (c *Cache) Retag(slot int, line uint64) {
	set := c.setOf(slot)
	if c.index != nil {
		delete(c.index, c.tag[slot])
		c.index[line] = int32(slot)
	}
	if c.last[set] == int32(slot) || c.prev[set] == int32(slot) {
		c.forget(set)
	}
	c.tag[slot], c.dirty[slot] = line, false
}

// Replace fills line, which the cache does not hold, into the slot Victim
// chooses, as Victim, Remove and Install would: it returns the slot and
// what the slot held before (its line, whether it was valid and dirty).
// With an lru or fifo order word and a full set it is one pass: the victim
// is the last way of the order, and making it the first rotates the word
// (an order word means no line map to update: ordWays ≤ hashThreshold).
func (c *Cache) Replace(line uint64) (slot int, old uint64, wasValid, wasDirty bool) {
	set := c.Set(line)
	if c.ord != nil && int(c.occupied[set]) == c.ways {
		slot = c.ord.rotate(set)
		old, wasDirty = c.tag[slot], c.dirty[slot]
		c.tag[slot], c.dirty[slot] = line, false
		c.prev[set], c.last[set], c.lastTag[set] = none, int32(slot), line // as Victim and Install leave them
		return slot, old, true, wasDirty
	}
	slot = c.Victim(line)
	old, wasValid, wasDirty = c.tag[slot], c.valid[slot], c.dirty[slot]
	c.Remove(slot)
	c.Install(slot, line)
	return slot, old, wasValid, wasDirty
}

// AgeOrder appends to dst the valid slots of set, oldest first, and returns
// it: under lru from the least to the most recently used, under fifo from
// the oldest fill to the newest (Dinero IV's order from the bottom of a
// set's stack); in way order under the policies that keep no age.
func (c *Cache) AgeOrder(set int, dst []int) []int {
	n := len(dst)
	dst = c.pol.AgeOrder(set, dst)
	out := dst[:n]
	for _, s := range dst[n:] {
		if c.valid[s] {
			out = append(out, s)
		}
	}
	return out
}

// ForEachValid calls f for every valid slot in slot order.
func (c *Cache) ForEachValid(f func(slot int)) {
	for s, v := range c.valid {
		if v {
			f(s)
		}
	}
}
