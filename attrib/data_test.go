package attrib

import (
	"maps"
	"math/rand/v2"
	"testing"
)

func TestDataHeap(t *testing.T) {
	d := NewData()
	siteA := []uint64{0x401000, 0x402000}
	siteB := []uint64{0x401000, 0x403000} // same allocation call, other path
	a1 := d.Alloc(0x10000, 0x100, 0, siteA, 0, nil)
	a2 := d.Alloc(0x20000, 0x100, 0, siteA, 0, nil)
	b := d.Alloc(0x30000, 0x200000, 0, siteB, 0, nil)
	if a1 != a2 || a1 == b || a1 < 2 {
		t.Fatalf("bins: %d %d %d: one per call path", a1, a2, b)
	}
	if got := d.Bin(a1); got.Kind != Heap || got.Blocks != 2 || got.Bytes != 0x200 || got.Name != "heap@0x401000" {
		t.Fatalf("bin %+v", got)
	}
	// Blocks of one path but of other types (Go's) are bins of their own,
	// one per type; a path whose last frame is another's type is not it.
	t1 := d.Alloc(0x300000, 0x10, 0, siteA, 0x4a2000, nil)
	t2 := d.Alloc(0x300010, 0x10, 0, siteA, 0x4a2100, nil)
	t3 := d.Alloc(0x300020, 0x10, 0, siteA, 0x4a2000, nil)
	t4 := d.Alloc(0x300030, 0x10, 0, siteA[:1], 0x402000, nil)
	if t1 == a1 || t1 == t2 || t1 != t3 || t4 == a1 || t4 == t1 || d.Bin(t1).Type != 0x4a2000 || d.Bin(a1).Type != 0 {
		t.Fatalf("bins by type: %d %d %d %d (untyped %d), type %#x", t1, t2, t3, t4, a1, d.Bin(t1).Type)
	}
	for _, c := range []struct {
		addr uint64
		want int32
	}{
		{0x10000, a1}, {0x100ff, a1}, {0x10100, OtherBin}, {0xffff, OtherBin},
		{0x20050, a2}, {0x30000, b}, {0x30000 + 0x1fffff, b}, {0x30000 + 0x200000, OtherBin},
		{0x30000 + 0x12345, b},
	} {
		if got := d.Lookup(c.addr); got != c.want {
			t.Errorf("Lookup(%#x) = %d, want %d", c.addr, got, c.want)
		}
	}
	d.Free(0x10000)
	d.Free(0x10004) // not a block start: ignored
	if got := d.Lookup(0x10010); got != FreedBin {
		t.Errorf("freed block: bin %d, want freed", got)
	}
	// A new block over part of the freed range ends it.
	c := d.Alloc(0x10080, 0x10, 0, []uint64{0x404000}, 0, nil)
	for addr, want := range map[uint64]int32{0x10000: OtherBin, 0x10080: c, 0x10090: OtherBin} {
		if got := d.Lookup(addr); got != want {
			t.Errorf("after reuse: Lookup(%#x) = %d, want %d", addr, got, want)
		}
	}
	// A block allocated over a live one (never freed: garbage collected)
	// replaces it.
	e := d.Alloc(0x30000+0x1000, 0x40, 0, []uint64{0x405000}, 0, nil)
	if got := d.Lookup(0x30000); got != OtherBin {
		t.Errorf("old block still mapped: %d", got)
	}
	if got := d.Lookup(0x31010); got != e {
		t.Errorf("new block: %d, want %d", got, e)
	}
	// Bogus sizes count but map nothing.
	g := d.Alloc(0x50000, 1<<62, 0, []uint64{0x406000}, 0, nil)
	if d.Lookup(0x50000) != OtherBin || d.Bin(g).Bytes != 1<<62 {
		t.Errorf("a bogus size is mapped")
	}
}

func TestDataPrecedence(t *testing.T) {
	d := NewData()
	d.AddGlobals([]Var{{Name: "A", Addr: 0x1000, Size: 4096}, {Name: "n", Addr: 0x2000, Size: 4}, {Name: "m", Addr: 0x2004, Size: 4}, {Name: "B", Addr: 0x3000, Size: 64}, {Name: "z", Addr: 0x4000, Size: 0}}, 64, "m")
	bins := d.Bins()
	// Small variables have bins of their own that name their pool.
	if len(bins) != 6 || bins[2].Name != "A" || bins[2].Pool != "" || bins[3].Name != "n" || bins[3].Bytes != 4 || bins[3].Pool != "<small globals>@m" ||
		bins[4].Name != "m" || bins[4].Pool != "<small globals>@m" || bins[4].Module != "m" || bins[5].Name != "B" || bins[5].Pool != "" {
		t.Fatalf("bins %+v", bins)
	}
	for addr, want := range map[uint64]int32{0x1000: 2, 0x1fff: 2, 0x2000: 3, 0x2003: 3, 0x2004: 4, 0x2007: 4, 0x2008: OtherBin, 0x303f: 5, 0x3040: OtherBin, 0x4000: OtherBin} {
		if got := d.Lookup(addr); got != want {
			t.Errorf("Lookup(%#x) = %d, want %d", addr, got, want)
		}
	}
	h := d.Alloc(0x1000, 16, 0, nil, 0, nil) // a heap block over a global (a test of precedence only)
	m := d.Name(0x1008, 4, "flag")
	m2 := d.Name(0x9000, 8, "flag")
	if m != m2 || d.Bin(m).Bytes != 12 {
		t.Errorf("manual bins %d %d %+v", m, m2, d.Bin(m))
	}
	for addr, want := range map[uint64]int32{0x1000: h, 0x1008: m, 0x100b: m, 0x100c: h, 0x1010: 2, 0x9004: m} {
		if got := d.Lookup(addr); got != want {
			t.Errorf("Lookup(%#x) = %d, want %d", addr, got, want)
		}
	}
}

// The range index agrees with a slow model on random allocations, frees
// and lookups, blocks spanning granules included.
func TestDataRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		d := NewData()
		type blk struct {
			start, end uint64
			bin        int32
		}
		var model []blk // later entries win
		for range 300 {
			addr := uint64(rng.IntN(1 << 20))
			switch rng.IntN(4) {
			case 0, 1:
				size := uint64(1 + rng.IntN(64))
				if rng.IntN(8) == 0 {
					size = uint64(1 + rng.IntN(1<<18))
				}
				id := d.Alloc(addr, size, 0, []uint64{uint64(rng.IntN(5))}, 0, nil)
				var keep []blk
				for _, b := range model {
					if b.start < addr+size && b.end > addr {
						continue
					}
					keep = append(keep, b)
				}
				model = append(keep, blk{addr, addr + size, id})
			case 2:
				if len(model) > 0 && rng.IntN(2) == 0 {
					addr = model[rng.IntN(len(model))].start
				}
				d.Free(addr)
				for i, b := range model {
					if b.start == addr && b.bin != FreedBin {
						model[i].bin = FreedBin
					}
				}
			default:
				want := OtherBin
				for _, b := range model {
					if addr >= b.start && addr < b.end {
						want = b.bin
					}
				}
				if got := d.Lookup(addr); got != want {
					t.Fatalf("trial %d: Lookup(%#x) = %d, want %d", trial, addr, got, want)
				}
			}
		}
	}
}

func TestHeapNames(t *testing.T) {
	bins := []Bin{
		{Kind: Other},
		{Kind: Heap, Site: []uint64{0x10, 0x20, 0x30}},
		{Kind: Heap, Site: []uint64{0x10, 0x21}},
		{Kind: Heap, Site: []uint64{0x11, 0x20}},
		{Kind: Heap, Site: []uint64{0x10, 0x20, 0x31}},
		{Kind: Heap, Site: []uint64{0x10, 0x20}}, // a prefix of others: stays ambiguous as far as it goes
		{Kind: Heap},
	}
	want := []string{"", "heap@0x10<0x20<0x30", "heap@0x10<0x21", "heap@0x11", "heap@0x10<0x20<0x31", "heap@0x10<0x20", "heap@?"}
	got := HeapNames(bins)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("bin %d: %q, want %q", i, got[i], want[i])
		}
	}
}

// A module mapped again replaces the globals it overlaps.
func TestDataGlobalsRemapped(t *testing.T) {
	d := NewData()
	d.AddGlobals([]Var{{Name: "old", Addr: 0x1000, Size: 128}, {Name: "kept", Addr: 0x9000, Size: 128}}, 64, "m")
	d.AddGlobals([]Var{{Name: "new", Addr: 0x1040, Size: 128}}, 64, "m")
	for addr, want := range map[uint64]string{0x1000: "<other>", 0x1040: "new", 0x9000: "kept"} {
		if got := d.Bin(d.Lookup(addr)).Name; got != want {
			t.Errorf("Lookup(%#x): %s, want %s", addr, got, want)
		}
	}
}

// TestBlockThread: a live heap block remembers the thread that allocated
// it; a freed one, or memory of no block, has none.
func TestBlockThread(t *testing.T) {
	d := NewData()
	d.Alloc(0x1000, 0x20, 7, []uint64{0x400100}, 0, nil)
	d.Alloc(0x1020, 0x20, 9, []uint64{0x400100}, 0, nil)
	for _, c := range []struct {
		addr, start, end uint64
		thread           uint32
		ok               bool
	}{
		{0x1000, 0x1000, 0x1020, 7, true},
		{0x101f, 0x1000, 0x1020, 7, true},
		{0x1020, 0x1020, 0x1040, 9, true},
		{0x1040, 0, 0, 0, false},
	} {
		start, end, thread, ok := d.Block(c.addr)
		if start != c.start || end != c.end || thread != c.thread || ok != c.ok {
			t.Errorf("Block(%#x) = %#x, %#x, %d, %v; want %#x, %#x, %d, %v", c.addr, start, end, thread, ok, c.start, c.end, c.thread, c.ok)
		}
	}
	d.Free(0x1000)
	if _, _, _, ok := d.Block(0x1008); ok {
		t.Errorf("a freed block is still live")
	}
	if bin, start, end := d.Locate(0x1028); bin == OtherBin || start != 0x1020 || end != 0x1040 {
		t.Errorf("Locate(0x1028) = %d, %#x, %#x", bin, start, end)
	}
}

// A module's regions hold the addresses its variables leave; a module
// mapped again replaces them.
func TestDataRegions(t *testing.T) {
	d := NewData()
	d.AddGlobals([]Var{
		{Name: "<data>@m", Addr: 0x1000, Size: 0x1000, Region: true},
		{Name: "table", Addr: 0x1100, Size: 256},
		{Name: "<bss>@m", Addr: 0x2000, Size: 0x800, Region: true},
		{Name: "<data>@m", Addr: 0x3000, Size: 0x100, Region: true}, // a second part of one region
	}, 64, "m")
	name := func(addr uint64) string { return d.Bin(d.Lookup(addr)).Name }
	for addr, want := range map[uint64]string{0x1000: "<data>@m", 0x1100: "table", 0x11ff: "table", 0x1200: "<data>@m",
		0x2000: "<bss>@m", 0x27ff: "<bss>@m", 0x2800: "<other>", 0x3000: "<data>@m", 0x3100: "<other>"} {
		if got := name(addr); got != want {
			t.Errorf("Lookup(%#x): %s, want %s", addr, got, want)
		}
	}
	if b := d.Bin(d.Lookup(0x1000)); b.Bytes != 0x1100 || b.Kind != Global {
		t.Errorf("the data region's bin: %+v", b)
	}
	d.AddGlobals([]Var{{Name: "<rodata>@n", Addr: 0x1800, Size: 0x1000, Region: true}}, 64, "n")
	for addr, want := range map[uint64]string{0x1000: "<other>", 0x1900: "<rodata>@n", 0x3000: "<data>@m"} {
		if got := name(addr); got != want {
			t.Errorf("after a remap, Lookup(%#x): %s, want %s", addr, got, want)
		}
	}
}

// The allocator's bin keeps its name among the heap bins.
func TestHeapNamesAllocator(t *testing.T) {
	d := NewData()
	d.Alloc(0x1000, 16, 0, []uint64{0x400100}, 0, nil)
	a := d.AllocatorBin()
	names := HeapNames(d.Bins())
	if names[a] != "<allocator>" || names[a-1] != "heap@0x400100" {
		t.Errorf("heap names %q", names)
	}
}

// An unmapped range maps to nothing, not to the freed bin; an unmap from
// inside a mapping cuts it, one of size 0 ends only the mapping that
// starts at its address, and one that overlaps no mapping changes nothing.
func TestDataUnmap(t *testing.T) {
	d := NewData()
	m := d.Map(0x10000, 0x4000, 0, []uint64{0x400100}, nil)
	if d.Mapping(0x10010) != m {
		t.Fatalf("the mapping is not found")
	}
	if _, _, ok := d.Unmap(0x10010, 0); ok {
		t.Errorf("Unmap of size 0 inside a mapping succeeded")
	}
	if _, _, ok := d.Unmap(0x20000, 0x1000); ok {
		t.Errorf("Unmap outside every mapping succeeded")
	}
	if s, e, ok := d.Unmap(0x11000, 0x1000); !ok || s != 0x11000 || e != 0x12000 {
		t.Errorf("Unmap(0x11000, 0x1000) = %#x, %#x, %v", s, e, ok)
	}
	for addr, want := range map[uint64]int32{0x10fff: m, 0x11000: OtherBin, 0x11fff: OtherBin, 0x12000: m} {
		if got := d.Mapping(addr); got != want {
			t.Errorf("after the unmap of the middle, Mapping(%#x) = %d, want %d", addr, got, want)
		}
	}
	if s, e, ok := d.Unmap(0x12000, 0); !ok || s != 0x12000 || e != 0x14000 {
		t.Errorf("Unmap(0x12000, 0) = %#x, %#x, %v", s, e, ok)
	}
	if d.Mapping(0x13000) != OtherBin || d.Mapping(0x10000) != m {
		t.Errorf("after the unmap of the mapping at 0x12000: %d at 0x13000, %d at 0x10000", d.Mapping(0x13000), d.Mapping(0x10000))
	}
	if b := d.Bin(m); b.Kind != Heap || b.Blocks != 1 || b.Bytes != 0x4000 || b.Name != "heap@0x400100" {
		t.Errorf("the mapping's bin: %+v", b)
	}
}

// A mapping lies under everything else: Lookup sees the heap blocks,
// globals and named ranges inside it, not the mapping, which Mapping,
// Locate and Block give for the rest of its range. A mapping over part of
// another (a reservation made usable) replaces it there; mappings of one
// name share a bin, unnamed ones a bin per call path.
func TestDataMap(t *testing.T) {
	d := NewData()
	join := func(stack []uint64, typ uint64) string {
		if stack[0] == 0x401000 || stack[0] == 0x404000 {
			return "<Go heap arena>"
		}
		return ""
	}
	arena := d.Map(0x100000, 0x100000, 7, []uint64{0x401000, 0x402000}, join)
	block := d.Alloc(0x140000, 0x100, 1, []uint64{0x403000}, 0, nil)
	d.AddGlobals([]Var{{Name: "g", Addr: 0x150000, Size: 0x40}}, 64, "m")
	named := d.Name(0x160000, 0x10, "mine")
	for addr, want := range map[uint64]int32{0x140010: block, 0x150000: d.Lookup(0x150000), 0x160000: named, 0x100000: OtherBin, 0x1fffff: OtherBin} {
		if got := d.Lookup(addr); got != want {
			t.Errorf("Lookup(%#x) = %d, want %d", addr, got, want)
		}
	}
	if d.Bin(d.Lookup(0x150000)).Name != "g" {
		t.Errorf("the global inside the mapping is %q", d.Bin(d.Lookup(0x150000)).Name)
	}
	if bin, s, e := d.Locate(0x120000); bin != arena || s != 0x100000 || e != 0x200000 {
		t.Errorf("Locate(0x120000) = %d [%#x, %#x), want the arena %d", bin, s, e, arena)
	}
	if bin, _, _ := d.Locate(0x140010); bin != block {
		t.Errorf("Locate(0x140010) = %d, want the block %d", bin, block)
	}
	if s, e, th, ok := d.Block(0x120000); !ok || s != 0x100000 || e != 0x200000 || th != 7 {
		t.Errorf("Block(0x120000) = %#x, %#x, %d, %v: want the mapping's", s, e, th, ok)
	}
	if s, _, th, ok := d.Block(0x140010); !ok || s != 0x140000 || th != 1 {
		t.Errorf("Block(0x140010) = %#x, %d, %v: want the heap block's", s, th, ok)
	}
	// A usable part mapped over the reservation by another path, of the
	// same name: the same bin; an unnamed one over its end: a bin of its
	// own, only there.
	if got := d.Map(0x180000, 0x10000, 7, []uint64{0x404000}, join); got != arena {
		t.Errorf("a mapping of the same name has bin %d, want %d", got, arena)
	}
	other := d.Map(0x1f0000, 0x20000, 7, []uint64{0x405000}, join)
	if other == arena {
		t.Fatalf("an unnamed mapping shares the arena's bin")
	}
	if again := d.Map(0x300000, 0x1000, 7, []uint64{0x405000}, join); again != other {
		t.Errorf("an unnamed mapping through the same path has bin %d, want %d", again, other)
	}
	for addr, want := range map[uint64]int32{0x17ffff: arena, 0x180000: arena, 0x190000: arena, 0x1effff: arena, 0x1f0000: other, 0x20ffff: other, 0x210000: OtherBin} {
		if got := d.Mapping(addr); got != want {
			t.Errorf("Mapping(%#x) = %d, want %d", addr, got, want)
		}
	}
	if len(d.maps) != 5 {
		t.Errorf("mappings %+v, want 5 spans", d.maps)
	}
	if b := d.Bin(arena); b.Blocks != 2 || b.Bytes != 0x110000 || b.Name != "<Go heap arena>" || len(b.Site) != 2 {
		t.Errorf("the arena's bin: %+v", b)
	}
}

// Heap blocks of call paths that join under one name are one bin per
// name and type, named so; join is asked once per new call path and
// type; a path it gives no name keeps a bin of its own.
func TestDataJoin(t *testing.T) {
	d := NewData()
	asked := map[uint64]int{}
	join := func(stack []uint64, typ uint64) string {
		asked[stack[len(stack)-1]]++
		if stack[0] == 0x401000 {
			return "mp (runtime.mPadded)"
		}
		return ""
	}
	a := d.Alloc(0x10000, 0x100, 0, []uint64{0x401000, 0x402000}, 0x4a2000, join)
	b := d.Alloc(0x20000, 0x100, 0, []uint64{0x401000, 0x403000}, 0x4a2000, join) // another path: joins
	c := d.Alloc(0x30000, 0x100, 0, []uint64{0x401000, 0x402000}, 0x4a2000, join) // a's path again
	e := d.Alloc(0x40000, 0x100, 0, []uint64{0x401000, 0x404000}, 0x4a2100, join) // another type
	f := d.Alloc(0x50000, 0x100, 0, []uint64{0x405000, 0x406000}, 0x4a2000, join) // no name
	g := d.Alloc(0x60000, 0x100, 0, []uint64{0x401000, 0x407000}, 0x4a2000, nil)  // not asked
	if a != b || a != c || e == a || f == a || g == a || g == f {
		t.Fatalf("bins %d %d %d %d %d %d", a, b, c, e, f, g)
	}
	if bin := d.Bin(a); bin.Name != "mp (runtime.mPadded)" || bin.Blocks != 3 || bin.Type != 0x4a2000 || len(bin.Site) != 2 || bin.Site[1] != 0x402000 {
		t.Errorf("the joined bin: %+v", bin)
	}
	if d.Bin(e).Name != "mp (runtime.mPadded)" || d.Bin(f).Name != "heap@0x405000" || d.Bin(g).Name != "heap@0x401000" {
		t.Errorf("names %q %q %q", d.Bin(e).Name, d.Bin(f).Name, d.Bin(g).Name)
	}
	if want := map[uint64]int{0x402000: 1, 0x403000: 1, 0x404000: 1, 0x406000: 1}; !maps.Equal(asked, want) {
		t.Errorf("join asked %v, want %v", asked, want)
	}
	// A mapping of a joined name is not a heap block's bin.
	if m := d.Map(0x100000, 0x1000, 0, []uint64{0x401000, 0x402000}, join); m == a {
		t.Errorf("a mapping joined the heap blocks' bin")
	}
}
