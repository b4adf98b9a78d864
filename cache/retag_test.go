package cache

import "testing"

// TestRetag checks that Retag puts a line in place of another, clean,
// without changing the victim the policy chooses next, with and without
// the line index of many-way caches.
func TestRetag(t *testing.T) {
	for _, ways := range []int{4, 2 * hashThreshold} {
		c, err := New(2, ways, "lru", 0)
		if err != nil {
			t.Fatal(err)
		}
		for w := range ways { // set 0 full: lines 0, 2, 4, ...
			slot := c.Victim(uint64(2 * w))
			c.Install(slot, uint64(2*w))
		}
		c.Access(0) // line 0 most recently used: line 2 is the victim
		slot := c.Lookup(0)
		c.SetDirty(slot, true)
		c.Retag(slot, 1000)
		if c.Lookup(0) >= 0 || c.Lookup(1000) != slot || c.Dirty(slot) || !c.Valid(slot) {
			t.Errorf("%d ways: after Retag, line 0 at %d, line 1000 at %d (want %d), dirty %v",
				ways, c.Lookup(0), c.Lookup(1000), slot, c.Dirty(slot))
		}
		if v := c.Victim(2000); c.Line(v) != 2 {
			t.Errorf("%d ways: the victim is line %d, want 2", ways, c.Line(v))
		}
	}
}
