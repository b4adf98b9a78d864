package cache

func init() { register("lru", newLRU, false) }

// lru evicts the least recently used line; fills and hits are uses.
type lru struct{ *order }

func newLRU(sets, ways int, _ uint64) (Policy, error) { return lru{newOrder(sets, ways)}, nil }

// Hit makes slot the most recently used of its set.
func (p lru) Hit(slot int) { p.front(slot) }

// Fill makes slot the most recently used of its set.
func (p lru) Fill(slot int) { p.push(slot) }

// Remove takes slot out of its set's order.
func (p lru) Remove(slot int) { p.drop(slot) }

// Victim returns the least recently used slot of set.
func (p lru) Victim(set int) int { return p.last(set) }

// AgeOrder lists set's slots from the least to the most recently used.
func (p lru) AgeOrder(set int, dst []int) []int { return p.ages(set, dst) }

// FillIsUse is true: a fill makes a line the most recently used.
func (lru) FillIsUse() bool { return true }
