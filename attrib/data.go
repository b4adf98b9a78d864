// Package attrib maps the references of a trace to the program's own code
// and data: the procedure making a reference (from the call stack the
// tracer reports) and the data structure it touches (a data bin: the heap
// blocks of one allocation site and call path, a global variable, a stack
// frame, a range the program named, or freed memory). The engine asks for
// a reference's bin on misses only and keeps it with the cache line.
package attrib

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
)

// BinKind says what a data bin holds.
type BinKind uint8

// Data bin kinds.
const (
	Other     BinKind = iota // memory of no known data structure
	Freed                    // heap memory freed and not allocated again: references to it are use-after-free bugs
	Heap                     // the heap blocks of one allocation site and call path
	Global                   // a global or static variable, or a region of a module's image
	Stack                    // the stack frames of one procedure
	Manual                   // a range named with memspy.h
	CodeLines                // the program's code, as instruction fetches touch it: not data
)

var binKindNames = [...]string{"other", "freed", "heap", "global", "stack", "manual", "code"}

// String returns the kind's name.
func (k BinKind) String() string {
	if int(k) < len(binKindNames) {
		return binKindNames[k]
	}
	return fmt.Sprintf("binkind(%d)", uint8(k))
}

// Bin ids of the bins every Data has.
const (
	OtherBin int32 = 0
	FreedBin int32 = 1
)

// Bin is one data bin.
type Bin struct {
	Kind BinKind
	Name string
	// Site is the allocation call path of a heap bin, innermost first:
	// the allocation call's PC, then return addresses.
	Site []uint64
	// Type is the run-time address of the descriptor of the type a heap
	// bin's blocks were allocated as (Go's, trace.Ext.Type), 0 when
	// unknown.
	Type uint64
	// Proc is the procedure of a stack bin; Name is then the variable's
	// name for a bin of one local variable, "" for the rest of the frame
	// (a stack bin made by mappings, Go's goroutine stacks, has a Site and
	// a name of its own instead).
	Proc int32
	// Blocks and Bytes count the heap blocks allocated into a heap bin and
	// their total size; Bytes is the size of a global, manual or local
	// variable bin.
	Blocks, Bytes uint64
	// Module is the base name of a global variable's object file; Pool,
	// for one smaller than AddGlobals' minSize, the entry its module's
	// cold small variables are shown in together (profile.Object.Pool).
	Module, Pool string
}

// granuleShift is the log2 size of the address blocks under which Data
// indexes ranges: a range is listed under every granule it overlaps.
const granuleShift = 16

// span is a range of addresses [start, end) of one bin; a heap block's
// also records the thread that allocated it.
type span struct {
	start, end uint64
	bin        int32
	thread     uint32
}

// Data is the set of data bins of a run and the address ranges that map to
// them. Heap ranges come and go with allocations and frees; a freed range
// maps to the freed bin until memory is allocated over it. A manual range
// takes precedence over a heap block, a heap block over a global. Mappings
// (Map) lie under everything else: Lookup does not see them, so that the
// blocks, variables and stack frames inside a mapping come first (see
// Mapping).
type Data struct {
	bins   []Bin
	sites  map[string]int32   // heap bins by encoded call path and type
	mapped map[string]int32   // mapping bins by encoded call path
	joined map[string]int32   // heap and mapping bins by the name their call paths joined under (Join)
	stack  map[int32]int32    // stack bins by procedure
	locals map[localKey]int32 // local variable bins by procedure and name
	named  map[string]int32   // manual bins by name

	heap    rangeMap // live heap blocks and freed ranges
	manual  rangeMap // named ranges
	globals []span   // sorted by start, not overlapping
	regions []span   // the modules' regions, sorted by start, not overlapping
	maps    []span   // the mappings, sorted by start, not overlapping

	last span // the heap span of the last Lookup, to check first

	allocator int32 // the allocator's bin (AllocatorBin), 0 until made
	code      int32 // the code's bin (CodeBin), 0 until made
	loader    int32 // the dynamic loader's bin (LoaderBin), 0 until made
}

// NewData returns a Data with only the other and freed bins.
func NewData() *Data {
	d := &Data{sites: map[string]int32{}, mapped: map[string]int32{}, joined: map[string]int32{}, stack: map[int32]int32{},
		locals: map[localKey]int32{}, named: map[string]int32{}}
	d.bins = append(d.bins, Bin{Kind: Other, Name: "<other>"}, Bin{Kind: Freed, Name: "<freed>"})
	d.heap.init()
	d.manual.init()
	return d
}

// Bins returns the bins, indexed by id. The slice is the Data's own.
func (d *Data) Bins() []Bin { return d.bins }

// Bin returns bin id.
func (d *Data) Bin(id int32) *Bin { return &d.bins[id] }

func (d *Data) add(b Bin) int32 {
	d.bins = append(d.bins, b)
	return int32(len(d.bins) - 1)
}

// Join names the bins of new call paths: the name under which the heap
// blocks allocated through the call path stack as the type whose
// descriptor is at typ (or the mappings made through it) join those of
// every other path given that name, one bin; "" for a bin of the path's
// own.
type Join func(stack []uint64, typ uint64) string

// Alloc records a heap block of size bytes at addr allocated by thread
// through the call path stack (innermost first) as the type whose
// descriptor is at typ (0: unknown): its bin is that of every block
// allocated through the same path as the same type, or, when join (if not
// nil) gives the path a name, of every block of that name and type. Any
// range it overlaps (a freed range, or a block freed without a report, as
// a garbage collector does) ends. It returns the bin.
func (d *Data) Alloc(addr, size uint64, thread uint32, stack []uint64, typ uint64, join Join) int32 {
	id := d.siteBin(d.sites, "h", stack, typ, join)
	b := &d.bins[id]
	b.Blocks++
	b.Bytes += size
	if end, ok := rangeEnd(addr, size); ok {
		d.heap.removeOverlaps(addr, end)
		d.heap.insert(span{addr, end, id, thread})
		d.last = span{}
	}
	return id
}

// siteBin returns the heap bin of the call path stack and type typ among
// sites (Alloc's or Map's, whose joined names have the prefix kind),
// making it on first use: the bin of the name join gives it, if any.
func (d *Data) siteBin(sites map[string]int32, kind string, stack []uint64, typ uint64, join Join) int32 {
	key := siteKey(stack, typ)
	if id, ok := sites[key]; ok {
		return id
	}
	name, jkey := heapName(stack), ""
	if join != nil {
		if n := join(stack, typ); n != "" {
			name, jkey = n, kind+siteKey(nil, typ)+n
		}
	}
	id, ok := d.joined[jkey] // ("" is never a key)
	if !ok {
		id = d.add(Bin{Kind: Heap, Name: name, Site: slices.Clone(stack), Type: typ})
		if jkey != "" {
			d.joined[jkey] = id
		}
	}
	sites[key] = id
	return id
}

// maxRange bounds the ranges Data indexes: a larger one (a bogus size)
// still counts in its bin but maps no address.
const maxRange = 1 << 40

// rangeEnd returns the end of [addr, addr+size) when Data indexes it.
func rangeEnd(addr, size uint64) (uint64, bool) {
	end := addr + size
	return end, size > 0 && size <= maxRange && end > addr
}

// Free records that the heap block at addr was freed: its range maps to
// the freed bin until memory is allocated over it. It returns the block's
// range [start, end); ok is false, and nothing changes, for an address
// that starts no live block.
func (d *Data) Free(addr uint64) (start, end uint64, ok bool) {
	s, ok := d.heap.at(addr)
	if !ok || s.start != addr || s.bin == FreedBin {
		return 0, 0, false
	}
	d.heap.remove(s)
	d.heap.insert(span{s.start, s.end, FreedBin, 0})
	d.last = span{}
	return s.start, s.end, true
}

// Map records a mapping (mmap) of size bytes at addr that thread made
// through the call path stack (innermost first): it replaces the mappings
// it overlaps there, as the system's does. Its bin, a heap bin, is that
// of every mapping made through the same path or, when join (if not nil)
// gives the path a name, of every mapping of that name (mappings of one
// purpose: Go's heap arenas). A mapping holds the addresses of its range
// that nothing else does: the blocks, variables and stack frames inside
// it come first. It returns the bin.
func (d *Data) Map(addr, size uint64, thread uint32, stack []uint64, join Join) int32 {
	id := d.siteBin(d.mapped, "m", stack, 0, join)
	b := &d.bins[id]
	b.Blocks++
	b.Bytes += size
	if end, ok := rangeEnd(addr, size); ok {
		d.maps, _ = carve(d.maps, addr, end)
		i := sort.Search(len(d.maps), func(i int) bool { return d.maps[i].start > addr })
		d.maps = slices.Insert(d.maps, i, span{addr, end, id, thread})
	}
	return id
}

// MapStacks records a mapping of stacks (Go's goroutine stacks) as Map
// does, into the one stack bin called name, whatever its call path: the
// frames of the code running on a stack come first, its other references
// are the stacks'. It returns the bin.
func (d *Data) MapStacks(addr, size uint64, thread uint32, stack []uint64, name string) int32 {
	id := d.Map(addr, size, thread, stack, func([]uint64, uint64) string { return name })
	d.bins[id].Kind = Stack
	return id
}

// Unmap records that [addr, addr+size) was unmapped (munmap): the
// mappings there end where they overlap it; with size 0, the mapping that
// starts at addr ends whole. It returns the range unmapped; ok is false,
// and nothing changes, when no mapping overlaps it.
func (d *Data) Unmap(addr, size uint64) (start, end uint64, ok bool) {
	end, ok = rangeEnd(addr, size)
	if size == 0 {
		i := sort.Search(len(d.maps), func(i int) bool { return d.maps[i].start >= addr })
		if ok = i < len(d.maps) && d.maps[i].start == addr; ok {
			end = d.maps[i].end
		}
	}
	if !ok {
		return 0, 0, false
	}
	if d.maps, ok = carve(d.maps, addr, end); !ok {
		return 0, 0, false
	}
	return addr, end, true
}

// Name makes [addr, addr+size) a manual bin called name (memspy.h's range
// marker); a later range of the same name joins the same bin. It returns
// the bin.
func (d *Data) Name(addr, size uint64, name string) int32 {
	id, ok := d.named[name]
	if !ok {
		id = d.add(Bin{Kind: Manual, Name: name})
		d.named[name] = id
	}
	d.bins[id].Bytes += size
	if end, ok := rangeEnd(addr, size); ok {
		d.manual.removeOverlaps(addr, end)
		d.manual.insert(span{addr, end, id, 0})
		d.last = span{}
	}
	return id
}

// AddGlobals makes a bin of each variable of vars (which must not overlap
// one another) of the object file module (a base name); those smaller
// than minSize bytes have the Pool SmallGlobals(module) (the profile shows
// the cold ones there together, the hot ones by their own names).
// Variables of size 0 are skipped. A region's bin
// (one per name) holds its addresses that no variable covers. Earlier
// globals and regions that the new ones overlap (a module mapped again)
// stop mapping addresses.
func (d *Data) AddGlobals(vars []Var, minSize uint64, module string) {
	if len(vars) == 0 {
		return
	}
	lo, hi := ^uint64(0), uint64(0)
	for _, v := range vars {
		if end, ok := rangeEnd(v.Addr, v.Size); ok {
			lo, hi = min(lo, v.Addr), max(hi, end)
		}
	}
	overlaps := func(s span) bool { return s.start < hi && s.end > lo }
	d.globals = slices.DeleteFunc(d.globals, overlaps)
	d.regions = slices.DeleteFunc(d.regions, overlaps)
	regionIDs := map[string]int32{}
	for _, v := range vars {
		end, ok := rangeEnd(v.Addr, v.Size)
		if !ok {
			continue
		}
		var id int32
		switch {
		case v.Region:
			id, ok = regionIDs[v.Name]
			if !ok {
				id = d.add(Bin{Kind: Global, Name: v.Name})
				regionIDs[v.Name] = id
			}
			d.bins[id].Bytes += v.Size
			d.regions = append(d.regions, span{v.Addr, end, id, 0})
			continue
		case v.Size >= minSize:
			id = d.add(Bin{Kind: Global, Name: v.Name, Bytes: v.Size, Module: module})
		default:
			id = d.add(Bin{Kind: Global, Name: v.Name, Bytes: v.Size, Module: module, Pool: SmallGlobals(module)})
		}
		d.globals = append(d.globals, span{v.Addr, end, id, 0})
	}
	sort.Slice(d.globals, func(i, j int) bool { return d.globals[i].start < d.globals[j].start })
	sort.Slice(d.regions, func(i, j int) bool { return d.regions[i].start < d.regions[j].start })
}

// SmallGlobals names the entry of module's cold small global variables.
func SmallGlobals(module string) string { return "<small globals>@" + module }

// Var is a global variable for AddGlobals, or a region of a module's
// memory image.
type Var struct {
	Name       string
	Addr, Size uint64
	// Region marks a part of a module's image (its data, bss, read-only
	// data...): it holds the addresses there that no variable covers.
	Region bool
}

// Local is a variable in a procedure's stack frame, for per-variable stack
// bins: Offset is its address relative to the frame's canonical frame
// address (the stack pointer just before the call instruction pushed the
// return address), so it is negative for locals.
type Local struct {
	Name   string
	Offset int64
	Size   uint64
}

// localKey identifies a local variable bin.
type localKey struct {
	proc int32
	name string
}

// LocalBin returns the bin of local variable v of procedure proc, making
// it on first use.
func (d *Data) LocalBin(proc int32, v Local) int32 {
	k := localKey{proc, v.Name}
	if id, ok := d.locals[k]; ok {
		return id
	}
	id := d.add(Bin{Kind: Stack, Name: v.Name, Proc: proc, Bytes: v.Size})
	d.locals[k] = id
	return id
}

// FindLocal returns the variable of locals (sorted by offset, not
// overlapping) holding offset off.
func FindLocal(locals []Local, off int64) (Local, bool) {
	i := sort.Search(len(locals), func(i int) bool { return locals[i].Offset > off }) - 1
	if i >= 0 && off-locals[i].Offset < int64(locals[i].Size) {
		return locals[i], true
	}
	return Local{}, false
}

// StackBin returns the bin of the stack frames of procedure proc (those
// of their bytes in no local variable bin), making it on first use.
func (d *Data) StackBin(proc int32) int32 {
	if id, ok := d.stack[proc]; ok {
		return id
	}
	id := d.add(Bin{Kind: Stack, Proc: proc})
	d.stack[proc] = id
	return id
}

// AllocatorBin returns the bin of the program allocator's own references
// to freed memory (its free lists: glibc's malloc and free read and write
// freed chunks) and to memory of no block (the chunks' headers, the top
// chunk), "<allocator>", a heap bin made on first use.
func (d *Data) AllocatorBin() int32 {
	return d.ownBin(&d.allocator, Bin{Kind: Heap, Name: "<allocator>"})
}

// CodeBin returns the bin of the lines instruction fetches bring in,
// "<code>", made on first use: code stalls belong to the functions that
// run, not to a data structure.
func (d *Data) CodeBin() int32 { return d.ownBin(&d.code, Bin{Kind: CodeLines, Name: "<code>"}) }

// LoaderBin returns the bin of the dynamic loader's own data that no
// module or allocation covers (its link maps and small heap, the TLS blocks
// it sets up), "<dynamic loader>", made on first use.
func (d *Data) LoaderBin() int32 {
	return d.ownBin(&d.loader, Bin{Kind: Global, Name: "<dynamic loader>"})
}

// ownBin returns the bin *id, one of the bins that are not an address
// range's, making it as b on first use (*id 0: not made yet).
func (d *Data) ownBin(id *int32, b Bin) int32 {
	if *id == 0 {
		*id = d.add(b)
	}
	return *id
}

// Lookup returns the bin of the heap, manual or global range, or module
// region, holding addr, or OtherBin: not a mapping's (see Mapping).
func (d *Data) Lookup(addr uint64) int32 {
	bin, _, _ := d.locate(addr)
	return bin
}

// Mapping returns the bin of the mapping holding addr, or OtherBin: what
// holds an address that Lookup and the stack frames leave to no bin.
func (d *Data) Mapping(addr uint64) int32 {
	if s, ok := mapAt(d.maps, addr); ok {
		return s.bin
	}
	return OtherBin
}

// Locate returns the bin of the heap, manual or global range, module
// region or, under them, mapping holding addr and the range [start, end),
// or OtherBin and the empty range at addr.
func (d *Data) Locate(addr uint64) (bin int32, start, end uint64) {
	if bin, start, end = d.locate(addr); bin == OtherBin {
		if s, ok := mapAt(d.maps, addr); ok {
			return s.bin, s.start, s.end
		}
	}
	return bin, start, end
}

// locate is Locate without the mappings.
func (d *Data) locate(addr uint64) (bin int32, start, end uint64) {
	if len(d.manual.granules) > 0 {
		if s, ok := d.manual.at(addr); ok {
			return s.bin, s.start, s.end
		}
	}
	if l := d.last; contains(l, addr) {
		return l.bin, l.start, l.end
	}
	if s, ok := d.heap.at(addr); ok {
		d.last = s
		return s.bin, s.start, s.end
	}
	for _, spans := range [2][]span{d.globals, d.regions} {
		if s, ok := mapAt(spans, addr); ok {
			return s.bin, s.start, s.end
		}
	}
	return OtherBin, addr, addr
}

// mapAt returns the span of spans (sorted by start, not overlapping)
// holding a.
func mapAt(spans []span, a uint64) (span, bool) {
	i := sort.Search(len(spans), func(i int) bool { return spans[i].start > a }) - 1
	if i >= 0 && contains(spans[i], a) {
		return spans[i], true
	}
	return span{}, false
}

// carve removes [start, end) from spans (sorted by start, not
// overlapping), cutting the spans that overlap it, and reports whether
// any did.
func carve(spans []span, start, end uint64) ([]span, bool) {
	i := sort.Search(len(spans), func(i int) bool { return spans[i].end > start })
	j := i
	var rest []span
	for ; j < len(spans) && spans[j].start < end; j++ {
		s := spans[j]
		if s.start < start {
			rest = append(rest, span{s.start, start, s.bin, s.thread})
		}
		if s.end > end {
			rest = append(rest, span{end, s.end, s.bin, s.thread})
		}
	}
	return slices.Replace(spans, i, j, rest...), j > i
}

// Block returns the live heap block, or else the mapping, holding addr:
// its range [start, end) and the thread that allocated it; ok is false
// when none holds addr.
func (d *Data) Block(addr uint64) (start, end uint64, thread uint32, ok bool) {
	s, ok := d.heap.at(addr)
	if !ok {
		s, ok = mapAt(d.maps, addr)
	}
	if !ok || s.bin == FreedBin {
		return 0, 0, 0, false
	}
	return s.start, s.end, s.thread, true
}

func contains(s span, a uint64) bool { return a >= s.start && a < s.end }

// siteKey returns a map key for a call path and a type.
func siteKey(stack []uint64, typ uint64) string {
	b := make([]byte, 8*len(stack)+8)
	for i, pc := range stack {
		binary.LittleEndian.PutUint64(b[8*i:], pc)
	}
	binary.LittleEndian.PutUint64(b[8*len(stack):], typ)
	return string(b)
}

// heapName is the name of a heap bin before symbols name it better: its
// allocation site.
func heapName(stack []uint64) string {
	if len(stack) == 0 {
		return "heap@?"
	}
	return fmt.Sprintf("heap@%#x", stack[0])
}

// HeapNames returns, for each heap bin of bins, a name made of as many
// frames of its call path as tell it from the other heap bins
// ("heap@site<caller<..."), or its own name when it has no call path, and
// "" for the other bins.
func HeapNames(bins []Bin) []string {
	names := make([]string, len(bins))
	depth := make([]int, len(bins))
	count := map[string]int{}
	for changed := true; changed; {
		clear(count)
		for i, b := range bins {
			switch {
			case b.Kind != Heap:
			case len(b.Site) == 0 && b.Name != "":
				names[i] = b.Name // no call path: a bin of its own (AllocatorBin)
			default:
				names[i] = pathName(b.Site, depth[i]+1)
				count[names[i]]++
			}
		}
		changed = false
		for i, b := range bins {
			if b.Kind == Heap && count[names[i]] > 1 && len(b.Site) > depth[i]+1 {
				depth[i]++
				changed = true
			}
		}
	}
	return names
}

// pathName names a call path by its first depth frames.
func pathName(stack []uint64, depth int) string {
	name := heapName(stack)
	for _, pc := range stack[min(1, len(stack)):min(depth, len(stack))] {
		name += fmt.Sprintf("<%#x", pc)
	}
	return name
}

// rangeMap holds non-overlapping spans, each listed under every granule
// (2^granuleShift bytes) it overlaps, sorted by start within a granule.
type rangeMap struct {
	granules map[uint64][]span
}

func (m *rangeMap) init() { m.granules = map[uint64][]span{} }

// granules returns the first and last granule of [start, end).
func granules(start, end uint64) (uint64, uint64) {
	return start >> granuleShift, (end - 1) >> granuleShift
}

// at returns the span holding a.
func (m *rangeMap) at(a uint64) (span, bool) {
	list := m.granules[a>>granuleShift]
	i := sort.Search(len(list), func(i int) bool { return list[i].start > a }) - 1
	if i >= 0 && contains(list[i], a) {
		return list[i], true
	}
	return span{}, false
}

func (m *rangeMap) insert(s span) {
	first, last := granules(s.start, s.end)
	for g := first; ; g++ {
		list := m.granules[g]
		i := sort.Search(len(list), func(i int) bool { return list[i].start > s.start })
		m.granules[g] = slices.Insert(list, i, s)
		if g == last {
			break
		}
	}
}

func (m *rangeMap) remove(s span) {
	first, last := granules(s.start, s.end)
	for g := first; ; g++ {
		list := m.granules[g]
		if i := slices.Index(list, s); i >= 0 {
			list = slices.Delete(list, i, i+1)
		}
		if len(list) == 0 {
			delete(m.granules, g)
		} else {
			m.granules[g] = list
		}
		if g == last {
			break
		}
	}
}

// removeOverlaps removes every span overlapping [start, end).
func (m *rangeMap) removeOverlaps(start, end uint64) {
	first, last := granules(start, end)
	var gone []span
	for g := first; ; g++ {
		for _, s := range m.granules[g] {
			// Each span once: in its first granule, or in the first one
			// looked at.
			if s.start < end && s.end > start && (s.start>>granuleShift == g || g == first) {
				gone = append(gone, s)
			}
		}
		if g == last {
			break
		}
	}
	for _, s := range gone {
		m.remove(s)
	}
}
