package sim

// tableKey is a key a keyTable finds: comparable, and spread over 64 bits
// by its hash.
type tableKey interface {
	comparable
	hash() uint64
}

// keyTable finds entries by key: an open-addressing table of their keys
// and indices, probed linearly, at most half full (a map of a million
// struct keys costs several times the time and the memory).
type keyTable[K tableKey] struct {
	places []keyPlace[K]
	n      int
}

// keyPlace is a place of a keyTable: an entry's key and its index plus
// one, 0 for a free place.
type keyPlace[K tableKey] struct {
	key K
	id  int32
}

// reserve makes room for n entries, so that the table does not grow
// until it holds them.
func (t *keyTable[K]) reserve(n int) {
	size := 1024
	for size < 2*n {
		size *= 2
	}
	if size > len(t.places) {
		old := t.places
		t.places = make([]keyPlace[K], size)
		for _, p := range old {
			if p.id != 0 {
				*t.place(p.key) = p
			}
		}
	}
}

// id returns the index of the entry with key k, or n, the number of
// entries so far, when there is none yet (the caller appends it).
func (t *keyTable[K]) id(k K, n int) int32 {
	if 2*(t.n+1) > len(t.places) {
		t.reserve(max(512, len(t.places)))
	}
	p := t.place(k)
	if p.id == 0 {
		*p = keyPlace[K]{k, int32(n) + 1}
		t.n++
	}
	return p.id - 1
}

// place returns the place of k: its own, or the free one where it goes.
func (t *keyTable[K]) place(k K) *keyPlace[K] {
	mask := len(t.places) - 1
	for i := int(k.hash()>>32) & mask; ; i = (i + 1) & mask {
		if p := &t.places[i]; p.id == 0 || p.key == k {
			return p
		}
	}
}
