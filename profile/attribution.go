package profile

import (
	"fmt"
	"slices"
)

// Attribution is the where and why of a run: its counters split by the
// procedure making each reference and the data bin it touches, with the
// causes of misses and who evicted whom, for every cache. Procedure and bin
// numbers index Procs and Bins.
type Attribution struct {
	// Modules are the object files the program mapped, in order (a
	// module mapped again, after dlclose and dlopen, is listed again).
	Modules []Module           `json:"modules,omitempty"`
	Procs   []Proc             `json:"procs"`
	Bins    []Bin              `json:"bins"`
	Caches  []CacheAttribution `json:"caches"` // in machine order
}

// Module is an object file mapped into the traced process.
type Module struct {
	Path     string `json:"path"`
	TextAddr uint64 `json:"text_addr"` // runtime address of its .text
	TextSize uint64 `json:"text_size"`
}

// Proc is a code bin: a procedure.
type Proc struct {
	Name  string `json:"name"`
	Entry uint64 `json:"entry"` // 0 for <unknown>
}

// Bin is a data bin.
type Bin struct {
	// Kind is other, freed, heap, global, stack or manual.
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Site is a heap bin's allocation call path, innermost first.
	Site []uint64 `json:"site,omitempty"`
	// Blocks and Bytes count a heap bin's blocks and bytes allocated; Bytes
	// is also the size of a global or manual bin.
	Blocks uint64 `json:"blocks,omitempty"`
	Bytes  uint64 `json:"bytes,omitempty"`
}

// CacheAttribution splits one cache's counters by procedure × bin pair.
type CacheAttribution struct {
	Name string `json:"name"`
	// Cold, Replacement and Invalidation split the cache's misses by
	// cause: the line was never there, a fill evicted it, or an
	// invalidation removed it (MemSpy: the first event that removed it
	// since it was last there).
	Cold         uint64 `json:"cold"`
	Replacement  uint64 `json:"replacement"`
	Invalidation uint64 `json:"invalidation"`
	// Pairs holds the pairs that made accesses, most misses first.
	Pairs []PairStats `json:"pairs"`
	// Evictors counts, for each bin whose lines were evicted, the bins
	// whose fills evicted them (Victim == By: self interference), most
	// evictions first.
	Evictors []Evictor `json:"evictors"`
}

// PairStats are the counters of one procedure × data bin pair at a cache.
// A hit counts in the bin of the line (the bin of the reference that filled
// it), a miss in the bin of the missing reference's address.
type PairStats struct {
	Proc         int32  `json:"proc"`
	Bin          int32  `json:"bin"`
	IFetches     uint64 `json:"ifetches"`
	Reads        uint64 `json:"reads"`
	Writes       uint64 `json:"writes"`
	IFetchMisses uint64 `json:"ifetch_misses"`
	ReadMisses   uint64 `json:"read_misses"`
	WriteMisses  uint64 `json:"write_misses"`
	Cold         uint64 `json:"cold"`
	Replacement  uint64 `json:"replacement"`
	Invalidation uint64 `json:"invalidation"`
}

// Accesses returns the pair's accesses of every kind.
func (s *PairStats) Accesses() uint64 { return s.IFetches + s.Reads + s.Writes }

// Misses returns the pair's misses of every kind.
func (s *PairStats) Misses() uint64 { return s.IFetchMisses + s.ReadMisses + s.WriteMisses }

// Evictor counts the lines of bin Victim that fills of bin By evicted.
type Evictor struct {
	Victim    int32  `json:"victim"`
	By        int32  `json:"by"`
	Evictions uint64 `json:"evictions"`
}

// merge adds b's counters to a; both must come from the same run (same
// procedures and bins).
func (a *Attribution) merge(b *Attribution) error {
	if len(a.Procs) != len(b.Procs) || len(a.Bins) != len(b.Bins) || len(a.Caches) != len(b.Caches) ||
		!slices.EqualFunc(a.Bins, b.Bins, func(x, y Bin) bool { return x.Kind == y.Kind && x.Name == y.Name }) {
		return fmt.Errorf("profile: cannot merge attributions of different runs (procedures or data bins differ)")
	}
	for i := range a.Caches {
		x, y := &a.Caches[i], &b.Caches[i]
		x.Cold += y.Cold
		x.Replacement += y.Replacement
		x.Invalidation += y.Invalidation
		pairs := map[[2]int32]int{}
		for j, p := range x.Pairs {
			pairs[[2]int32{p.Proc, p.Bin}] = j
		}
		for _, p := range y.Pairs {
			j, ok := pairs[[2]int32{p.Proc, p.Bin}]
			if !ok {
				x.Pairs = append(x.Pairs, p)
				continue
			}
			q := &x.Pairs[j]
			q.IFetches += p.IFetches
			q.Reads += p.Reads
			q.Writes += p.Writes
			q.IFetchMisses += p.IFetchMisses
			q.ReadMisses += p.ReadMisses
			q.WriteMisses += p.WriteMisses
			q.Cold += p.Cold
			q.Replacement += p.Replacement
			q.Invalidation += p.Invalidation
		}
		ev := map[[2]int32]int{}
		for j, e := range x.Evictors {
			ev[[2]int32{e.Victim, e.By}] = j
		}
		for _, e := range y.Evictors {
			if j, ok := ev[[2]int32{e.Victim, e.By}]; ok {
				x.Evictors[j].Evictions += e.Evictions
			} else {
				x.Evictors = append(x.Evictors, e)
			}
		}
	}
	return nil
}
