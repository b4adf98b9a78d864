package cache

import "math/bits"

// ordWays is the largest associativity whose order is one word per set.
const ordWays = 16

// order keeps the valid slots of each set in an order, first to last: by
// recency for lru, by fill time for fifo.
type order struct {
	ways  int
	shift int // log2(ways) when ways is a power of two, else -1
	// With at most ordWays ways: per set, a permutation of the ways, four
	// bits each, first in nibble 0, whose first n[set] nibbles are the
	// listed ways; nibbles beyond the ways are 0xf.
	word []uint64
	n    []int32
	// With more ways: a doubly linked list per set.
	prev, next []int32
	head, tail []int32
}

func newOrder(sets, ways int) *order {
	o := &order{ways: ways, shift: -1}
	if ways&(ways-1) == 0 {
		o.shift = bits.TrailingZeros(uint(ways))
	}
	if ways <= ordWays {
		var w uint64 = ^uint64(0) // 0xf beyond the ways
		for i := range ways {
			w = w&^(0xf<<(4*i)) | uint64(i)<<(4*i)
		}
		o.word = make([]uint64, sets)
		for s := range o.word {
			o.word[s] = w
		}
		o.n = make([]int32, sets)
		return o
	}
	o.prev = make([]int32, sets*ways)
	o.next = make([]int32, sets*ways)
	o.head = make([]int32, sets)
	o.tail = make([]int32, sets)
	for s := range o.head {
		o.head[s], o.tail[s] = none, none
	}
	return o
}

// setOf returns the set of slot.
func (o *order) setOf(slot int) int {
	if o.shift >= 0 {
		return slot >> o.shift
	}
	return slot / o.ways
}

// push lists slot, not listed, first.
func (o *order) push(slot int) {
	set := o.setOf(slot)
	if o.word == nil {
		h := o.head[set]
		o.prev[slot], o.next[slot] = none, h
		if h != none {
			o.prev[h] = int32(slot)
		} else {
			o.tail[set] = int32(slot)
		}
		o.head[set] = int32(slot)
		return
	}
	o.toFront(set, slot)
	o.n[set]++
}

// front moves the listed slot first.
func (o *order) front(slot int) {
	set := o.setOf(slot)
	if o.word == nil {
		if o.head[set] != int32(slot) {
			o.unlink(set, slot)
			o.push(slot)
		}
		return
	}
	o.toFront(set, slot)
}

// toFront moves slot's nibble to nibble 0.
func (o *order) toFront(set, slot int) {
	w := o.word[set]
	way := uint64(slot - set*o.ways)
	p := nibble(w, way)
	below := uint64(1)<<(4*p) - 1 // the nibbles before way's
	o.word[set] = w&^(below<<4|0xf) | w&below<<4 | way
}

// drop takes the listed slot out of the order.
func (o *order) drop(slot int) {
	set := o.setOf(slot)
	if o.word == nil {
		o.unlink(set, slot)
		return
	}
	w := o.word[set]
	way := uint64(slot - set*o.ways)
	p := nibble(w, way)
	below := uint64(1)<<(4*p) - 1               // the nibbles before way's
	before := uint64(1)<<(4*uint(o.ways-1)) - 1 // the nibbles before the last way's
	all := before | 0xf<<(4*uint(o.ways-1))     // every way's
	o.word[set] = w&below | w>>4&^below&before | way<<(4*uint(o.ways-1)) | w&^all
	o.n[set]--
}

func (o *order) unlink(set, slot int) {
	p, n := o.prev[slot], o.next[slot]
	if p != none {
		o.next[p] = n
	} else {
		o.head[set] = n
	}
	if n != none {
		o.prev[n] = p
	} else {
		o.tail[set] = p
	}
}

// last returns the last listed slot of a full set.
func (o *order) last(set int) int {
	if o.word == nil {
		return int(o.tail[set])
	}
	return set*o.ways + int(o.word[set]>>(4*(o.ways-1))&0xf)
}

// rotate, for a full set in word mode, moves the last slot first and
// returns it: the slot a fill replaces, as last, drop and push would.
func (o *order) rotate(set int) int {
	w := o.word[set]
	last := 4 * uint(o.ways-1)
	way := w >> last & 0xf
	all := uint64(1)<<(last+4) - 1 // every way's nibble (all ones at 16 ways)
	o.word[set] = w&^all | w<<4&all | way
	return set*o.ways + int(way)
}

// ages appends the listed slots of set, last first.
func (o *order) ages(set int, dst []int) []int {
	if o.word == nil {
		for s := o.tail[set]; s != none; s = o.prev[s] {
			dst = append(dst, int(s))
		}
		return dst
	}
	w := o.word[set]
	for i := int(o.n[set]) - 1; i >= 0; i-- {
		dst = append(dst, set*o.ways+int(w>>(4*uint(i))&0xf))
	}
	return dst
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
