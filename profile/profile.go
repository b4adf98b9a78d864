// Package profile is memspy's one result model. Every simulation produces
// a Profile; every output (text tables, JSON, later HTML, pprof, diff)
// renders from it and never from engine internals. A Profile is versioned,
// serialisable as JSON and mergeable: profiles of disjoint shards of the
// same run add up.
package profile

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"

	"github.com/memspy/memspy/atomicfile"
	"github.com/memspy/memspy/machine"
)

// Version is the version of the Profile schema written by this memspy.
// Readers reject profiles with a higher version. Version 2 let the
// compressed form (WriteCompressed) leave out the entries' focus copies;
// version 3 added the timeline and the objects' line use (both absent in
// older profiles, which read as before).
const Version = 3

// Profile is the result of one simulation.
type Profile struct {
	Version int    `json:"version"`
	Tool    string `json:"tool"` // "memspy"
	// Source describes where the events came from.
	Source Source `json:"source"`
	// Machine is the simulated hierarchy, normalized.
	Machine *machine.Machine `json:"machine"`
	// Options are the counting conventions used.
	Options Options `json:"options"`
	// Events is the total number of events simulated: memory references
	// and cache maintenance events alike, but not the extended events
	// (alloc, free, call, return, marker), which are not references. Like
	// every counter it starts again from zero at a reset marker.
	Events uint64 `json:"events"`
	// EventsByKind splits Events by kind name (read, write, ifetch, ...).
	EventsByKind map[string]uint64 `json:"events_by_kind"`
	// NotSimulated counts instruction fetches that no cache holds (or that
	// --cachelab ignores); they are otherwise ignored.
	NotSimulated uint64 `json:"not_simulated"`
	// Skipped counts malformed input lines skipped with --skip-bad.
	Skipped uint64 `json:"skipped"`
	// Caches holds one entry per cache, in machine order.
	Caches []CacheStats `json:"caches"`
	// Memory counts the traffic that reached main memory.
	Memory MemoryStats `json:"memory"`
	// Processors, on a machine of several, hold each processor's counters
	// (nil on one processor).
	Processors []ProcessorStats `json:"processors,omitempty"`
	// Threads, on a machine of several processors, hold each thread's
	// simulated time, in order of first appearance; Interleave and Quantum
	// say how the engine ordered the threads' events.
	Threads    []ThreadStats `json:"threads,omitempty"`
	Interleave string        `json:"interleave,omitempty"` // "clock" or "trace"
	Quantum    int           `json:"quantum,omitempty"`
	// Sync holds the synchronization objects (locks, barriers, condition
	// variables, joined threads, atomically updated words) with the time
	// threads waited at them, most waiting first.
	Sync []SyncObject `json:"sync,omitempty"`
	// Sampling, in a sampled run, says how the references were chosen:
	// every counter then covers the counted references only (nil: every
	// reference was simulated).
	Sampling *Sampling `json:"sampling,omitempty"`
	// Numa holds the statistics of a machine of several NUMA nodes (nil
	// otherwise).
	Numa *Numa `json:"numa,omitempty"`
	// Dumps are the snapshots the program asked for with dump markers, in
	// order.
	Dumps []Dump `json:"dumps,omitempty"`
	// Resets counts the reset markers seen: when it is not zero, every
	// counter covers only what came after the last of them.
	Resets uint64 `json:"resets,omitempty"`
	// Timeline, with --where, holds the caches' counters over the run, in
	// a bounded number of intervals (nil without --where, and in profiles
	// before version 3).
	Timeline *Timeline `json:"timeline,omitempty"`
	// Focus is the cache whose counters the entries below carry at their
	// top level (each also has them for every cache under levels).
	Focus string `json:"focus,omitempty"`
	// Modules are the object files the program mapped, in order.
	Modules []Module `json:"modules,omitempty"`
	// Functions, Objects, Pairs, Lines and References are the where and
	// why of the run (with --where): its counters by procedure (or named
	// region), by data object, by procedure × object pair, by source line
	// and by access point, most stall cycles first.
	Functions  []Function  `json:"functions,omitempty"`
	Objects    []Object    `json:"objects,omitempty"`
	Pairs      []Pair      `json:"pairs,omitempty"`
	Lines      []Line      `json:"lines,omitempty"`
	References []Reference `json:"references,omitempty"`
	// OmittedReferences add up the references left out of References when
	// there are more than MaxReferences (nil when none were), and
	// OmittedPairs the pairs left out of Pairs beyond MaxPairs.
	OmittedReferences *OmittedReferences `json:"omitted_references,omitempty"`
	OmittedPairs      *OmittedPairs      `json:"omitted_pairs,omitempty"`
	// CallTree holds the counters of the code by calling context (with
	// --where, of a trace with calls and returns; nil otherwise).
	CallTree *CallTree `json:"call_tree,omitempty"`
	// EvictorsError, when not 0, is the most by which a count of the
	// references' evictor lists may be too high: the engine keeps a bounded
	// number of (evicted, evicting) reference pairs per cache, and beyond it
	// a new pair takes over the least counted one's count (space-saving).
	// Every other counter, evicted_by included, stays exact.
	EvictorsError uint64 `json:"evictors_error,omitempty"`
	// Processes, in a run that followed a process tree (memspy run), hold
	// each program each process ran, in the order they started; every
	// other counter of the profile is their total. Nil for one program.
	Processes []Process `json:"processes,omitempty"`
	// Complete is false when the input ended with an error and the
	// counts cover only the events read before it.
	Complete bool `json:"complete"`
	// Error is the input error that ended an incomplete run.
	Error string `json:"error,omitempty"`
}

// Source describes the input of a run.
type Source struct {
	Name   string `json:"name"`   // file name, or "-" for standard input
	Format string `json:"format"` // trace format name
}

// Options records the counting conventions of a run.
type Options struct {
	// Classify is "3c" when misses are split into compulsory, capacity and
	// conflict, "" otherwise.
	Classify string `json:"classify,omitempty"`
	// CacheLab is true under the CS:APP cache lab conventions.
	CacheLab bool `json:"cachelab,omitempty"`
	// Where is true when the run attributed its counters to functions and
	// objects (--where).
	Where bool `json:"where,omitempty"`
	// MissOnly is true when attribution counted misses only (--miss-only):
	// the entries' accesses, hits, temporal and spatial hits and spatial
	// use are then not known (0).
	MissOnly bool `json:"miss_only,omitempty"`
}

// CacheStats are the counters of one cache. Accesses are counted per line
// touched: a reference spanning k lines counts k accesses. Accesses and
// Misses split by kind: IFetches + Reads + Writes + Misc, likewise for
// misses.
type CacheStats struct {
	Name         string `json:"name"`
	Level        int    `json:"level"`
	Accesses     uint64 `json:"accesses"`
	Misses       uint64 `json:"misses"`
	IFetches     uint64 `json:"ifetches"`
	Reads        uint64 `json:"reads"`
	Writes       uint64 `json:"writes"`
	IFetchMisses uint64 `json:"ifetch_misses"`
	ReadMisses   uint64 `json:"read_misses"`
	WriteMisses  uint64 `json:"write_misses"`
	// Misc and MiscMisses count Dinero IV's misc references (din label
	// 3, xdin m) and the fills their misses sent here from above: reads
	// that Reads and ReadMisses leave out (0 and omitted when the trace
	// has none).
	Misc       uint64 `json:"misc,omitempty"`
	MiscMisses uint64 `json:"misc_misses,omitempty"`
	// Compulsory, Capacity and Conflict split Misses under --classify 3c
	// (they are 0 otherwise).
	Compulsory uint64 `json:"compulsory"`
	Capacity   uint64 `json:"capacity"`
	Conflict   uint64 `json:"conflict"`
	// Evictions counts valid lines replaced to make room for a fill.
	Evictions uint64 `json:"evictions"`
	// Writebacks counts dirty lines written to the level below (on
	// eviction, copy-back events and the final flush).
	Writebacks uint64 `json:"writebacks"`
	// BackInvalidations counts lines removed because an inclusive level
	// below evicted them.
	BackInvalidations uint64 `json:"back_invalidations"`
	BytesFromBelow    uint64 `json:"bytes_from_below"`
	BytesToBelow      uint64 `json:"bytes_to_below"`
	// Causes splits Misses by cause, with --where.
	Causes *Causes `json:"causes,omitempty"`
	// Invalidations counts the lines this (private) cache lost to other
	// processors' writes; TrueSharingMisses and FalseSharingMisses count
	// its misses on lines such an invalidation removed, split by whether
	// its processor had used bytes the invalidating write wrote.
	Invalidations      uint64 `json:"invalidations,omitempty"`
	TrueSharingMisses  uint64 `json:"true_sharing_misses,omitempty"`
	FalseSharingMisses uint64 `json:"false_sharing_misses,omitempty"`
	// Sampled, in a sampled run, splits Accesses into known and unknown
	// hits and misses (nil otherwise).
	Sampled *SampledCounts `json:"sampled,omitempty"`
}

// add adds b's counters to c (name, level and causes aside).
func (c *CacheStats) add(b *CacheStats) {
	c.Accesses += b.Accesses
	c.Misses += b.Misses
	c.IFetches += b.IFetches
	c.Reads += b.Reads
	c.Writes += b.Writes
	c.IFetchMisses += b.IFetchMisses
	c.ReadMisses += b.ReadMisses
	c.WriteMisses += b.WriteMisses
	c.Misc += b.Misc
	c.MiscMisses += b.MiscMisses
	c.Compulsory += b.Compulsory
	c.Capacity += b.Capacity
	c.Conflict += b.Conflict
	c.Evictions += b.Evictions
	c.Writebacks += b.Writebacks
	c.BackInvalidations += b.BackInvalidations
	c.BytesFromBelow += b.BytesFromBelow
	c.BytesToBelow += b.BytesToBelow
	c.Invalidations += b.Invalidations
	c.TrueSharingMisses += b.TrueSharingMisses
	c.FalseSharingMisses += b.FalseSharingMisses
	if b.Sampled != nil {
		if c.Sampled == nil {
			c.Sampled = &SampledCounts{}
		}
		c.Sampled.add(b.Sampled)
	}
}

// Sum returns the total of cs with the name and level of its first entry.
func Sum(cs []CacheStats) CacheStats {
	var t CacheStats
	if len(cs) > 0 {
		t.Name, t.Level = cs[0].Name, cs[0].Level
	}
	for i := range cs {
		t.add(&cs[i])
	}
	return t
}

// ProcessorStats are the counters of one processor of a multiprocessor:
// its copies of the private caches and its part in the coherence protocol.
type ProcessorStats struct {
	Processor int `json:"processor"`
	// Threads are the threads placed on it, in order of first appearance.
	Threads []uint32 `json:"threads"`
	// Caches are its private caches, in machine order; over all
	// processors they add up to the totals in Profile.Caches.
	Caches []CacheStats `json:"caches"`
	// Upgrades count its writes to lines it held while other processors
	// held them too (the others' copies were invalidated).
	Upgrades uint64 `json:"upgrades"`
	// Interventions count the dirty lines it supplied to another
	// processor's reference (written back from its private caches).
	Interventions uint64 `json:"interventions"`
	// InvalidationsSent count the (line, processor) copies its writes
	// invalidated; InvalidationsReceived its own copies invalidated by
	// others' writes (one per line, whichever of its caches held it).
	InvalidationsSent     uint64 `json:"invalidations_sent"`
	InvalidationsReceived uint64 `json:"invalidations_received"`
}

// ThreadStats are one thread's simulated time on a multiprocessor. A
// thread's clock starts at its creator's and advances one cycle per event
// (ComputeCycles), by the stall cycles of its misses (StallCycles, as in
// the where views), and by the cycles it waited at synchronization
// (SyncCycles).
type ThreadStats struct {
	Thread        uint32 `json:"thread"`
	Processor     int    `json:"processor"`
	Events        uint64 `json:"events"`
	ComputeCycles uint64 `json:"compute_cycles"`
	StallCycles   uint64 `json:"stall_cycles"`
	SyncCycles    uint64 `json:"sync_cycles"`
	// Start and End are its clock at its first and its last event.
	Start uint64 `json:"start"`
	End   uint64 `json:"end"`
}

// SyncObject is one synchronization object and the waiting it caused.
type SyncObject struct {
	// Name is the data bin holding it, with the offset in the bin (with
	// --where), or its address; for a joined thread, "thread N".
	Name string `json:"name"`
	Addr uint64 `json:"addr"`
	// Kind is lock, barrier, condition, join or atomic.
	Kind string `json:"kind"`
	// Operations count its acquisitions (lock), arrivals (barrier), wakes
	// (condition), joins or atomic updates; Waits those that waited, and
	// WaitCycles the cycles they waited.
	Operations uint64 `json:"operations"`
	Waits      uint64 `json:"waits"`
	WaitCycles uint64 `json:"wait_cycles"`
}

// mergeThreads adds q's threads and synchronization objects to p's: those
// of one thread (one object) add up, and a thread's clock spans both.
func (p *Profile) mergeThreads(q *Profile) {
	mergeBy(&p.Threads, q.Threads, func(a, b *ThreadStats) bool { return a.Thread == b.Thread },
		func(a, b *ThreadStats) {
			a.Events += b.Events
			a.ComputeCycles += b.ComputeCycles
			a.StallCycles += b.StallCycles
			a.SyncCycles += b.SyncCycles
			a.Start, a.End = min(a.Start, b.Start), max(a.End, b.End)
		})
	mergeBy(&p.Sync, q.Sync, func(a, b *SyncObject) bool { return a.Kind == b.Kind && a.Name == b.Name },
		func(a, b *SyncObject) {
			a.Operations += b.Operations
			a.Waits += b.Waits
			a.WaitCycles += b.WaitCycles
		})
	SortSync(p.Sync)
}

// SortSync sorts synchronization objects most wait cycles first (then by
// operations, kind, name and address).
func SortSync(s []SyncObject) {
	slices.SortFunc(s, func(a, b SyncObject) int {
		return cmp.Or(cmp.Compare(b.WaitCycles, a.WaitCycles), cmp.Compare(b.Operations, a.Operations),
			cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Addr, b.Addr))
	})
}

// Hits returns Accesses - Misses.
func (c *CacheStats) Hits() uint64 { return c.Accesses - c.Misses }

// MissRate returns Misses / Accesses (0 when there were no accesses).
func (c *CacheStats) MissRate() float64 { return ratio(c.Misses, c.Accesses) }

// Dump is a snapshot of the counters taken at a dump marker (memspy.h):
// what the run counted since its start or its last reset marker, up to
// the marker.
type Dump struct {
	// Name is the name given to the dump.
	Name string `json:"name"`
	// Events counts the events simulated, as Profile.Events.
	Events uint64 `json:"events"`
	// Caches holds one entry per cache, in machine order, as
	// Profile.Caches.
	Caches []CacheStats `json:"caches"`
	// Memory counts the traffic that reached main memory, as
	// Profile.Memory.
	Memory MemoryStats `json:"memory"`
}

// MemoryStats count the requests that reached main memory.
type MemoryStats struct {
	Reads        uint64 `json:"reads"` // line fills and uncached reads
	Writes       uint64 `json:"writes"`
	BytesRead    uint64 `json:"bytes_read"`
	BytesWritten uint64 `json:"bytes_written"`
}

func ratio(a, b uint64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Cache returns the stats of the cache with the given name.
func (p *Profile) Cache(name string) (*CacheStats, bool) {
	for i := range p.Caches {
		if p.Caches[i].Name == name {
			return &p.Caches[i], true
		}
	}
	return nil, false
}

// MachineCache returns the description of the cache with the given name.
func (p *Profile) MachineCache(name string) (*machine.Cache, bool) {
	if p.Machine != nil {
		for i := range p.Machine.Caches {
			if p.Machine.Caches[i].Name == name {
				return &p.Machine.Caches[i], true
			}
		}
	}
	return nil, false
}

// Merge adds q's counters to p. Both must describe the same machine (same
// cache names in the same order); this is how profiles of disjoint shards
// of one run combine. q's dumps follow p's: each keeps what its own shard
// counted, since that shard's start or last reset (Merge cannot know what
// the shards before it counted by then). Objects of q that another object
// of p's name is taken by are renamed in q (objectRenames).
func (p *Profile) Merge(q *Profile) error {
	if err := p.add(q, &whereIndex{}); err != nil {
		return err
	}
	if p.Options.Where {
		return p.settleWhere()
	}
	return nil
}

// add adds q's counters to p as Merge does, finding p's where-and-why
// entries through ix (made for p's entries, or empty), but leaves them
// unsettled: their sharing lists unbounded, their top-level counters
// stale and their references not trimmed (settleWhere).
func (p *Profile) add(q *Profile, ix *whereIndex) error {
	if err := sameCaches(p.Caches, q.Caches); err != nil {
		return err
	}
	for _, d := range q.Dumps {
		if err := sameCaches(p.Caches, d.Caches); err != nil {
			return fmt.Errorf("%w (in dump %q)", err, d.Name)
		}
	}
	if p.Options.Where != q.Options.Where || p.Options.MissOnly != q.Options.MissOnly {
		return fmt.Errorf("profile: cannot merge profiles with different where-and-why options (--where, --miss-only)")
	}
	if len(p.Processors) != len(q.Processors) {
		return fmt.Errorf("profile: cannot merge: %d processors vs %d", len(p.Processors), len(q.Processors))
	}
	if err := p.mergeSampling(q); err != nil {
		return err
	}
	for i := range p.Caches {
		p.Caches[i].add(&q.Caches[i])
	}
	for i := range p.Processors {
		a, b := &p.Processors[i], &q.Processors[i]
		if err := sameCaches(a.Caches, b.Caches); err != nil {
			return fmt.Errorf("%w (processor %d)", err, a.Processor)
		}
		for j := range a.Caches {
			a.Caches[j].add(&b.Caches[j])
		}
		for _, t := range b.Threads {
			if !slices.Contains(a.Threads, t) {
				a.Threads = append(a.Threads, t)
			}
		}
		a.Upgrades += b.Upgrades
		a.Interventions += b.Interventions
		a.InvalidationsSent += b.InvalidationsSent
		a.InvalidationsReceived += b.InvalidationsReceived
	}
	p.mergeThreads(q)
	switch {
	case p.Numa == nil:
		p.Numa = q.Numa
	case q.Numa != nil:
		p.Numa.merge(q.Numa)
	}
	p.Events += q.Events
	AddCounts(&p.EventsByKind, q.EventsByKind)
	p.NotSimulated += q.NotSimulated
	p.Skipped += q.Skipped
	p.Memory.Reads += q.Memory.Reads
	p.Memory.Writes += q.Memory.Writes
	p.Memory.BytesRead += q.Memory.BytesRead
	p.Memory.BytesWritten += q.Memory.BytesWritten
	p.mergeTimeline(q)
	p.Dumps = append(p.Dumps, q.Dumps...)
	p.Resets += q.Resets
	p.EvictorsError += q.EvictorsError
	p.Complete = p.Complete && q.Complete
	if p.Options.Where {
		for i := range p.Caches {
			a, b := p.Caches[i].Causes, q.Caches[i].Causes
			if a != nil && b != nil {
				a.Add(*b)
			}
		}
		p.mergeWhere(q, ix)
	}
	return nil
}

// sameCaches checks that b lists the caches of a.
func sameCaches(a, b []CacheStats) error {
	if len(a) != len(b) {
		return fmt.Errorf("profile: cannot merge: %d caches vs %d", len(a), len(b))
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Level != b[i].Level {
			return fmt.Errorf("profile: cannot merge: cache %d is %q (level %d) vs %q (level %d)", i, a[i].Name, a[i].Level, b[i].Name, b[i].Level)
		}
	}
	return nil
}

// WriteFile writes p as JSON to path atomically (see package atomicfile),
// compressed as CompressionOf(path) says.
func (p *Profile) WriteFile(path string) error {
	f, err := atomicfile.Create(path)
	if err != nil {
		return err
	}
	if err := p.WriteAs(f, path); err != nil {
		f.Abort()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Commit()
}

// WriteAs writes p to w as WriteFile writes it to path: as JSON,
// compressed as CompressionOf(path) says.
func (p *Profile) WriteAs(w io.Writer, path string) error {
	return p.WriteCompressed(w, CompressionOf(path))
}

// ReadFile reads a profile written by WriteFile, compressed or not.
func ReadFile(path string) (*Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// Read decodes a JSON profile, zstd- or gzip-compressed or not, and checks that it
// is one: a single JSON object with a version this memspy understands
// (and memspy's tool name, if any), followed by nothing but white space. Errors say
// where the input goes wrong, as a byte offset into the JSON (after
// decompression).
func Read(r io.Reader) (*Profile, error) {
	var size int64 // of a file: the JSON is about that, or compressedRatio times it
	if f, ok := r.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			size = fi.Size()
		}
	}
	r, closeFn, compressed, err := decompressor(bufio.NewReader(r))
	if err != nil {
		return nil, fmt.Errorf("profile: %w", readError(err, 0))
	}
	defer closeFn()
	if compressed {
		size = min(size*compressedRatio, maxGuess) // (a guess: the buffer grows beyond it)
	}
	data, err := readAll(r, size)
	if err != nil {
		return nil, fmt.Errorf("profile: %w", readError(err, int64(len(data))))
	}
	p, ok := decodeFields(data)
	if !ok {
		if p, err = decode(bytes.NewReader(data)); err != nil {
			return nil, err
		}
	} else if err := p.check(); err != nil {
		return nil, err
	}
	if err := p.restoreFocusCopies(); err != nil {
		return nil, err
	}
	if t := p.CallTree; t != nil {
		if err := t.check(); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// readAll reads r to its end as io.ReadAll does, into a buffer of size
// bytes made at once (grown when that is not enough): a profile's JSON
// runs to hundreds of megabytes, and growing a buffer from nothing
// writes twice as much memory. The pages of the buffer that the data does
// not reach are never touched.
func readAll(r io.Reader, size int64) ([]byte, error) {
	b := make([]byte, 0, max(512, size+1))
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // (grown as append grows it)
		}
	}
}

// check checks that p is a profile this memspy understands.
func (p *Profile) check() error {
	if p.Version < 1 || p.Tool != "memspy" && p.Tool != "" {
		return fmt.Errorf("profile: not a memspy profile (tool %q, version %d)", p.Tool, p.Version)
	}
	if p.Version > Version {
		return fmt.Errorf("profile: version %d is newer than this memspy understands (%d)", p.Version, Version)
	}
	if p.Timeline != nil {
		return p.Timeline.check(p.Caches)
	}
	return nil
}

// decode decodes the JSON profile r as encoding/json does, and describes
// what is wrong with it.
func decode(r io.Reader) (*Profile, error) {
	cr := &countingReader{r: r}
	dec := json.NewDecoder(cr)
	var p Profile
	if err := dec.Decode(&p); err != nil {
		if err == io.EOF {
			return nil, errors.New("profile: empty input")
		}
		return nil, fmt.Errorf("profile: %w", decodeError(err, cr.n))
	}
	if err := p.check(); err != nil {
		return nil, err
	}
	end := dec.InputOffset()
	var extra json.RawMessage
	switch err := dec.Decode(&extra); err {
	case io.EOF:
	case nil:
		return nil, fmt.Errorf("profile: more data after the profile, at byte %d", end)
	default:
		var se *json.SyntaxError
		if errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("profile: more data after the profile, at byte %d", end)
		}
		return nil, fmt.Errorf("profile: after the profile, at byte %d: %w", end, readError(err, cr.n))
	}
	return &p, nil
}

// decodeError describes an error of json.Decoder.Decode; n is how many
// bytes were read when it happened.
func decodeError(err error, n int64) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("invalid JSON at byte %d: %s", se.Offset, se.Error())
	case errors.As(err, &te):
		return fmt.Errorf("at byte %d: %s is a JSON %s, not a %v", te.Offset, strconv.Quote(te.Field), te.Value, te.Type)
	}
	return readError(err, n)
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
