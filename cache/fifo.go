package cache

func init() { register("fifo", newFIFO, false) }

// fifo evicts the line filled longest ago; hits change nothing.
type fifo struct{ *order }

func newFIFO(sets, ways int, _ uint64) (Policy, error) { return fifo{newOrder(sets, ways)}, nil }

// Hit changes nothing.
func (fifo) Hit(int) {}

// Fill lists slot as the newest of its set.
func (p fifo) Fill(slot int) { p.push(slot) }

// Remove takes slot out of its set's order.
func (p fifo) Remove(slot int) { p.drop(slot) }

// Victim returns the oldest fill of set.
func (p fifo) Victim(set int) int { return p.last(set) }

// AgeOrder lists set's slots from the oldest fill to the newest.
func (p fifo) AgeOrder(set int, dst []int) []int { return p.ages(set, dst) }

// FillIsUse is true: hits change nothing.
func (fifo) FillIsUse() bool { return true }
