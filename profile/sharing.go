package profile

import (
	"cmp"
	"slices"
)

// Sharing counts the invalidations between an entry and one other side of
// the coherence protocol at one cache: the object and processor whose
// writes invalidated the entry's lines (Stats.InvalidatedBy, suffered), or
// the object and processor whose lines the entry's writes invalidated
// (Stats.Invalidated, caused).
type Sharing struct {
	Object    string `json:"object"`
	Processor int    `json:"processor"`
	// Lines counts the lines invalidated at the cache, one per line and
	// private cache that lost it; FalseSharing those whose processor had
	// not used the bytes the write wrote.
	Lines        uint64 `json:"lines"`
	FalseSharing uint64 `json:"false_sharing"`
}

// MaxSharing bounds the entries of an InvalidatedBy or Invalidated list
// (the rest are added up in one entry of object OtherEvictors, processor
// -1), and MaxSharingWrites an object's SharingWrites.
const (
	MaxSharing       = 16
	MaxSharingWrites = 16
)

// AddSharing adds the counts of b to *s by object and processor (in no
// particular order: TrimLists sorts them).
func AddSharing(s *[]Sharing, b []Sharing) {
	mergeBy(s, b, func(x, y *Sharing) bool { return x.Object == y.Object && x.Processor == y.Processor },
		func(into, from *Sharing) {
			into.Lines += from.Lines
			into.FalseSharing += from.FalseSharing
		})
}

// SortSharing sorts sharing counts most lines first, then by object and
// processor.
func SortSharing(s []Sharing) {
	slices.SortFunc(s, func(a, b Sharing) int {
		return cmp.Or(cmp.Compare(b.Lines, a.Lines), cmp.Compare(a.Object, b.Object), cmp.Compare(a.Processor, b.Processor))
	})
}

// TrimLists bounds the lists of every entry at every cache (trimLists).
// The entries' top-level counters, copies of the focus cache's sharing
// its lists, are left out and stale until SetFocus makes them again.
func (p *Profile) TrimLists() {
	p.forLevelled(func(e levelled) {
		_, levels := e.parts()
		for _, s := range levels {
			s.trimLists()
		}
	})
}

// trimLists sorts s's InvalidatedBy and Invalidated lists, most first,
// and bounds them to MaxSharing, and bounds its EvictedBy to MaxEvictedBy
// objects (s may be nil).
func (s *Stats) trimLists() {
	if s == nil {
		return
	}
	if s.InvalidatedBy != nil || s.Invalidated != nil {
		s.InvalidatedBy, s.Invalidated = trimSharing(s.InvalidatedBy), trimSharing(s.Invalidated)
	}
	s.trimEvictedBy()
}

// trimSharing sorts counts and keeps the MaxSharing-1 largest, adding
// the rest up in one entry of object OtherEvictors and processor -1.
func trimSharing(s []Sharing) []Sharing {
	SortSharing(s)
	if len(s) <= MaxSharing {
		return s
	}
	rest := Sharing{Object: OtherEvictors, Processor: -1}
	for _, x := range s[MaxSharing-1:] {
		rest.Lines += x.Lines
		rest.FalseSharing += x.FalseSharing
	}
	return append(s[:MaxSharing-1], rest)
}

// SharingWrite counts the copies of an object's lines in other processors'
// caches that one processor's writes at one place of the object
// invalidated.
type SharingWrite struct {
	Processor int `json:"processor"`
	// Offset is the first byte the writes wrote, from the object's start
	// (from its heap block's start for a heap object); Size their bytes.
	Offset uint64 `json:"offset"`
	Size   uint64 `json:"size"`
	// Copies counts the copies invalidated (one per line and processor);
	// FalseSharing those whose processor had not used the written bytes;
	// Neighbour those whose processor had used none of the bytes of the
	// object (or block) in the line, only data beside it.
	Copies       uint64 `json:"copies"`
	FalseSharing uint64 `json:"false_sharing"`
	Neighbour    uint64 `json:"neighbour,omitempty"`
	// OwnBlock marks writes to a heap block by the thread that allocated
	// it.
	OwnBlock bool `json:"own_block,omitempty"`
}

// sameWrite reports whether a and b count writes of one processor at one
// place.
func sameWrite(a, b SharingWrite) bool {
	return a.Processor == b.Processor && a.Offset == b.Offset && a.Size == b.Size && a.OwnBlock == b.OwnBlock
}

// AddSharingWrites adds the counts of b to *s by processor and place, most
// copies first, keeping at most MaxSharingWrites.
func AddSharingWrites(s *[]SharingWrite, b []SharingWrite) {
	mergeBy(s, b, func(x, y *SharingWrite) bool { return sameWrite(*x, *y) },
		func(into, from *SharingWrite) {
			into.Copies += from.Copies
			into.FalseSharing += from.FalseSharing
			into.Neighbour += from.Neighbour
		})
	SortSharingWrites(*s)
	if len(*s) > MaxSharingWrites {
		*s = (*s)[:MaxSharingWrites]
	}
}

// SortSharingWrites sorts writes most copies first, then by processor,
// offset, size and OwnBlock.
func SortSharingWrites(s []SharingWrite) {
	slices.SortFunc(s, func(a, b SharingWrite) int {
		own := func(w SharingWrite) int {
			if w.OwnBlock {
				return 1
			}
			return 0
		}
		return cmp.Or(cmp.Compare(b.Copies, a.Copies), cmp.Compare(a.Processor, b.Processor), cmp.Compare(a.Offset, b.Offset),
			cmp.Compare(a.Size, b.Size), cmp.Compare(own(a), own(b)))
	})
}
