package trace

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// extEdgeEvents returns extended events of every kind with edge-case Exts
// (every field alone, the limits of depth and name length, wrapping
// deltas), between memory references.
func extEdgeEvents() *Batch {
	long := make([]uint64, MSTMaxStackDepth)
	for i := range long {
		long[i] = uint64(i) * 0x9E3779B97F4A7C15
	}
	exts := []Ext{
		{},
		{Size: math.MaxUint64},
		{SP: 1},
		{SP: math.MaxUint64},
		{SP: 1},
		{Stack: []uint64{0}},
		{Stack: []uint64{math.MaxUint64, 0, math.MaxUint64}},
		{Stack: long},
		{Name: "x"},
		{Name: strings.Repeat("\xff", MSTMaxNameLen)},
		{Mark: MarkDump, Name: "phase 1"},
		{Mark: MarkReset},
		{Size: 24, SP: 0x7ffc0000, Stack: []uint64{0x401000, 0x400800}, Name: "calloc", Mark: MarkRange},
		{Size: 0x1a2b5, Name: "/usr/lib/x86_64-linux-gnu/libc.so.6"}, // a Map's
		{Type: 1},
		{Type: math.MaxUint64},
		{Size: 48, Stack: []uint64{0x4a1f20, 0x49e2c4}, Type: 0x4b6e40, Name: "runtime.makeslice"}, // a Go allocation's
	}
	b := NewBatch(0)
	for i, e := range exts {
		for k := Alloc; k <= Sync; k++ {
			b.Append(Read, 0x1000+uint64(i), 8, uint64(i)<<40, uint32(i))
			b.AppendExt(k, uint64(k)<<60|uint64(i), 0x401000+uint64(i), uint32(k), e)
		}
	}
	for m := range MarkKind(numMarkKinds) {
		b.AppendExt(Marker, 0, 0, 0, Ext{Mark: m})
	}
	for s := range SyncKind(numSyncKinds) {
		b.AppendExt(Sync, 0x601040, 0x401000, 3, Ext{Sync: s, Size: uint64(s)})
	}
	return b
}

func TestMSTExtRoundTrip(t *testing.T) {
	want := extEdgeEvents()
	noPC := NewBatch(0)
	for i := range want.Len() {
		noPC.AppendEvent(want, i)
		noPC.PC[i] = 0
	}
	for _, codec := range []MSTCodec{MSTCodecS2, MSTCodecZstd, MSTCodecNone} {
		for _, in := range []*Batch{want, noPC} {
			for _, chunk := range []int{1, 7, 0} {
				data := encodeMST(t, in, MSTWriterOptions{Codec: codec, ChunkEvents: chunk}, 5)
				for _, readCap := range []int{1, 3, 1000} {
					got, err := readAllMST(NewMSTReader(bytes.NewReader(data), Options{}), readCap)
					if err != nil {
						t.Fatalf("%v, chunks of %d, batches of %d: %v", codec, chunk, readCap, err)
					}
					if d := batchEqual(in, got); d != "" {
						t.Fatalf("%v, chunks of %d, batches of %d: %s", codec, chunk, readCap, d)
					}
				}
			}
		}
	}
}

// Stacks decoded into one batch survive the reader's later batches.
func TestMSTExtStacksKept(t *testing.T) {
	in := NewBatch(0)
	for i := range 100 {
		in.AppendExt(Alloc, uint64(i), 0, 0, Ext{Stack: []uint64{uint64(i), uint64(i) + 1}, Name: "malloc"})
	}
	data := encodeMST(t, in, MSTWriterOptions{ChunkEvents: 10}, 100)
	r := NewMSTReader(bytes.NewReader(data), Options{})
	var kept []Ext
	b := NewBatch(3)
	for {
		err := r.Read(b)
		kept = append(kept, b.Ext...)
		if err != nil {
			break
		}
	}
	if len(kept) != 100 {
		t.Fatalf("read %d Exts, want 100", len(kept))
	}
	for i, e := range kept {
		if !extEqual(&e, in.ExtOf(i)) {
			t.Fatalf("Ext %d is %+v after later reads, want %+v", i, e, *in.ExtOf(i))
		}
	}
}

func TestMSTExtWriterErrors(t *testing.T) {
	deep := make([]uint64, MSTMaxStackDepth+1)
	for _, tc := range []struct {
		name string
		b    *Batch
		msg  string
	}{
		{"no Ext", &Batch{Kind: []Kind{Call}, Addr: []uint64{1}, Size: []uint32{0}}, "Ext index 0, but the batch has 0"},
		{"stack too deep", &Batch{Kind: []Kind{Alloc}, Addr: []uint64{1}, Size: []uint32{0}, Ext: []Ext{{Stack: deep}}}, "257 frames"},
		{"name too long", &Batch{Kind: []Kind{Marker}, Addr: []uint64{1}, Size: []uint32{0}, Ext: []Ext{{Name: strings.Repeat("n", MSTMaxNameLen+1)}}}, "4097 bytes"},
		{"invalid mark", &Batch{Kind: []Kind{Marker}, Addr: []uint64{1}, Size: []uint32{0}, Ext: []Ext{{Mark: numMarkKinds}}}, "invalid marker kind"},
		{"invalid sync", &Batch{Kind: []Kind{Sync}, Addr: []uint64{1}, Size: []uint32{0}, Ext: []Ext{{Sync: numSyncKinds}}}, "invalid synchronization kind"},
	} {
		var buf bytes.Buffer
		w, err := NewMSTWriter(&buf, MSTWriterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ok := NewBatch(1)
		ok.Append(Read, 8, 4, 0, 0)
		if err := w.Write(ok); err != nil {
			t.Fatal(err)
		}
		if err := w.Write(tc.b); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: error %v, want one with %q", tc.name, err, tc.msg)
		}
		// Nothing of the rejected batch was written.
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		got, err := readAllMST(NewMSTReader(&buf, Options{}), 10)
		if err != nil || batchEqual(ok, got) != "" {
			t.Errorf("%s: file holds %d events (%v), want the one before", tc.name, got.Len(), err)
		}
	}
}

// TestMSTExtColumnLimit writes Exts too large for one chunk's ext column:
// the writer ends chunks early, and everything reads back.
func TestMSTExtColumnLimit(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	in := NewBatch(0)
	name := strings.Repeat("n", MSTMaxNameLen)
	for i := range 6000 {
		st := make([]uint64, MSTMaxStackDepth)
		for j := range st {
			st[j] = rng.Uint64()
		}
		in.AppendExt(Free, uint64(i), rng.Uint64(), 0, Ext{Stack: st, Name: name})
		in.Append(Write, uint64(i), 8, 0, 0)
	}
	data := encodeMST(t, in, MSTWriterOptions{Codec: MSTCodecS2}, 1000)
	idx, err := ReadMSTIndex(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if len(idx) < 3 {
		t.Errorf("%d chunks, want the ext column to end chunks early", len(idx))
	}
	got, err := readAllMST(NewMSTReader(bytes.NewReader(data), Options{}), 4096)
	if err != nil {
		t.Fatal(err)
	}
	if d := batchEqual(in, got); d != "" {
		t.Fatal(d)
	}
}

// TestMSTBadExtColumn feeds chunk payloads with extended events whose
// checksums are valid but whose contents are not.
func TestMSTBadExtColumn(t *testing.T) {
	_, data := smallMST(t)
	idx, err := ReadMSTIndex(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	rep := func(b []byte, n int) []byte { return bytes.Repeat(b, n) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	// chunk returns a payload of ten events of one op, with the ext column.
	chunk := func(op []byte, ext []byte) []byte {
		return cat([]byte{1}, op, []byte{0, 0, byte(len(ext))}, rep([]byte{0}, 10), ext)
	}
	alloc, marker := []byte{6, 0, 0, 0}, []byte{10, 0, 0, 0}
	tests := []struct {
		name  string
		cols  byte
		raw   []byte
		class error
		msg   string
	}{
		{"extended op without ext column", 0, cat([]byte{1}, alloc, []byte{0, 0}, rep([]byte{0}, 10)),
			ErrMSTCorrupt, "alloc op in a chunk without an ext column"},
		{"extended op with a size", mstColExt, chunk([]byte{6, 0, 0, 4}, rep([]byte{0}, 10)),
			ErrMSTCorrupt, "alloc op with size 4"},
		{"escaped extended op without ext column", 0, cat([]byte{0}, []byte{0, 40}, rep([]byte{255}, 10), rep(alloc, 10)),
			ErrMSTCorrupt, "without an ext column"},
		{"stack too deep", mstColExt, chunk(alloc, cat(rep([]byte{0}, 9), []byte{4, 0x81, 0x02}, rep([]byte{0}, 40))),
			ErrMSTCorrupt, "stack of 257 frames"},
		{"stack cut off", mstColExt, chunk(alloc, cat(rep([]byte{0}, 9), []byte{4, 5, 1, 1})),
			ErrMSTCorrupt, "ext column too short"},
		{"stack frame cut off", mstColExt, chunk(alloc, cat(rep([]byte{0}, 9), []byte{4, 2, 1, 0x80})),
			ErrMSTCorrupt, "ext column too short"},
		{"name too long", mstColExt, chunk(alloc, cat(rep([]byte{0}, 9), []byte{8, 0x81, 0x20}, rep([]byte{'n'}, 40))),
			ErrMSTCorrupt, "name of 4097 bytes"},
		{"name cut off", mstColExt, chunk(alloc, cat(rep([]byte{0}, 9), []byte{8, 3, 'a', 'b'})),
			ErrMSTCorrupt, "ext column too short"},
		{"size cut off", mstColExt, chunk(alloc, cat(rep([]byte{0}, 9), []byte{1, 0x80})),
			ErrMSTCorrupt, "ext column too short"},
		{"ext column short", mstColExt, chunk(alloc, rep([]byte{0}, 9)),
			ErrMSTCorrupt, "ext column too short"},
		{"ext column long", mstColExt, chunk(alloc, rep([]byte{0}, 11)),
			ErrMSTCorrupt, "column lengths do not match"},
		{"type cut off", mstColExt, chunk(alloc, cat(rep([]byte{0}, 9), []byte{0x40, 0x80})),
			ErrMSTCorrupt, "ext column too short"},
		{"unknown ext field", mstColExt, chunk(alloc, cat(rep([]byte{0}, 9), []byte{0x80})),
			ErrMSTUnsupported, "field bits 0x80"},
		{"unknown marker kind", mstColExt, chunk(marker, cat(rep([]byte{0}, 9), []byte{0x10, 99})),
			ErrMSTUnsupported, "marker kind 99"},
		{"marker kind cut off", mstColExt, chunk(marker, cat(rep([]byte{0}, 9), []byte{0x10})),
			ErrMSTCorrupt, "ext column too short"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bad := rewriteChunk(t, data, idx[1].Offset, func(h, raw []byte) []byte {
				h[2] = tc.cols
				return tc.raw
			})
			for _, readCap := range []int{3, 100} {
				got, err := readAllMST(NewMSTReader(bytes.NewReader(bad), Options{Name: "x.mst"}), readCap)
				if !errors.Is(err, tc.class) || !strings.Contains(err.Error(), tc.msg) || !strings.Contains(err.Error(), "chunk 1 at byte") {
					t.Fatalf("error = %v, want %v with %q", err, tc.class, tc.msg)
				}
				if got.Len() > 10 && readCap == 100 {
					t.Errorf("got %d events, want the 10 of chunk 0", got.Len())
				}
			}
		})
	}
	// The same layout with valid entries decodes.
	good := rewriteChunk(t, data, idx[1].Offset, func(h, raw []byte) []byte {
		h[2] = mstColExt
		return chunk(marker, cat(rep([]byte{0x10, 8}, 9), []byte{0x0c, 2, 4, 1, 2, 'h', 'i'}))
	})
	got, err := readAllMST(NewMSTReader(bytes.NewReader(good), Options{}), 100)
	if err == nil || !strings.Contains(err.Error(), "index") { // the index CRC no longer matches
		t.Fatalf("error = %v", err)
	}
	if got.Len() < 20 {
		t.Fatalf("got %d events", got.Len())
	}
	for i := 10; i < 19; i++ {
		if got.Kind[i] != Marker || got.ExtOf(i).Mark != MarkDump {
			t.Fatalf("event %d = %v %+v", i, got.Kind[i], *got.ExtOf(i))
		}
	}
	if e := got.ExtOf(19); !extEqual(e, &Ext{Stack: []uint64{2, 1}, Name: "hi"}) {
		t.Errorf("last Ext = %+v", *e)
	}
}

// The examples of docs/mst.md §13, byte for byte.
const (
	mstSpecExample = "894d53540d0a1a0a0100050000000000140000007b2263726561746f72223a226d656d737079227d72ebb0c943000000" +
		"0600000000000000000000002700000027000000eca62a1d9e5164b10502010304020100040000040801000108020102040a00" +
		"0001020103040000401000fe7ff0f40049000000010000000600000000000000140000001400000027906beef81367632c0000" +
		"0000000000000000000000000006000000730000000000000006000000000000000100000059c8bffc894d5354454e440a"
	mstSpecExtExample = "894d53540d0a1a0a0100050000000000140000007b2263726561746f72223a226d656d737079227d72ebb0c943000500" +
		"0500000000000000000000004d0000004d0000008972f75d741ff65e050801330002012004060013000a001300090112000b00" +
		"081c0001020304001240a0524060adbf01fe001040000204040402f0bfe0ff0f0d400200fd07066d616c6c6f631804696e6974" +
		"0802104900000001000000050000000000000014000000140000001e19498c568ce7e12c000000000000000000000000000000" +
		"0500000099000000000000000500000000000000010000001a39e6b9894d5354454e440a"
)

func TestMSTSpecExamples(t *testing.T) {
	plain := NewBatch(0)
	plain.Append(IFetch, 0x400000, 4, 0, 0)
	plain.Append(IFetch, 0x400004, 4, 0, 0)
	plain.Append(Read, 0x7ffe0010, 8, 0, 0)
	plain.Append(IFetch, 0x400008, 4, 0, 0)
	plain.Append(Write, 0x7ffe0008, 8, 0, 0)
	plain.Append(IFetch, 0x400100, 4, 0, 0)
	ext := NewBatch(0)
	ext.AppendExt(Call, 0x401200, 0x401000, 0, Ext{SP: 0x7ffc0ff8})
	ext.Append(IFetch, 0x401200, 4, 0x401200, 0)
	ext.AppendExt(Alloc, 0x4052a0, 0x401204, 0, Ext{Size: 64, Stack: []uint64{0x401204, 0x401005}, Name: "malloc"})
	ext.AppendExt(Marker, 0, 0x401208, 0, Ext{Mark: MarkDump, Name: "init"})
	ext.AppendExt(Return, 0x401005, 0x40120c, 0, Ext{SP: 0x7ffc1000})
	for _, tc := range []struct {
		name string
		b    *Batch
		spec string
	}{{"plain", plain, mstSpecExample}, {"extended", ext, mstSpecExtExample}} {
		want, err := hex.DecodeString(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		got := encodeMST(t, tc.b, MSTWriterOptions{Codec: MSTCodecNone, Meta: MSTMeta{Creator: "memspy"}}, 10)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: writer output differs from the documented bytes:\n%x", tc.name, got)
		}
		// The same file marked 1.0 (chunks without extended events are
		// unchanged since) or 1.3 (the last version before Ext.Type) reads
		// the same.
		for _, data := range [][]byte{want, rewriteHeader(want, func(h []byte) { h[10] = 0 }), rewriteHeader(want, func(h []byte) { h[10] = 3 })} {
			events, err := readAllMST(NewMSTReader(bytes.NewReader(data), Options{}), 4)
			if err != nil {
				t.Fatal(err)
			}
			if d := batchEqual(tc.b, events); d != "" {
				t.Errorf("%s: %s", tc.name, d)
			}
		}
	}
}

// fuzzBytes hands out the bytes of a fuzz input; zeros once they run out.
type fuzzBytes []byte

func (f *fuzzBytes) next() byte {
	if len(*f) == 0 {
		return 0
	}
	c := (*f)[0]
	*f = (*f)[1:]
	return c
}

// u64 returns a value of 0 to 8 bytes, so that small and large values,
// and small and large deltas between them, both occur.
func (f *fuzzBytes) u64() uint64 {
	n := f.next() % 9
	var v uint64
	for range n {
		v = v<<8 | uint64(f.next())
	}
	if n > 0 && v&1 != 0 {
		v = -v
	}
	return v
}

// FuzzMSTRoundTrip writes events derived from the input, extended events
// with arbitrary Exts among them, and checks that they read back exactly.
func FuzzMSTRoundTrip(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{3, 1, 6, 2, 0x10, 0, 1, 0xff, 7, 3, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 3, 'a', 'b', 'c', 8})
	f.Add(bytes.Repeat([]byte{10, 4, 1, 2, 3, 4, 0, 1, 0xff, 0x1f, 2, 1, 1}, 20))
	f.Fuzz(func(t *testing.T, data []byte) {
		in := fuzzBytes(data)
		opt := MSTWriterOptions{ChunkEvents: 1 + int(in.next()%16), Codec: MSTCodec(in.next() % 3)}
		b := NewBatch(0)
		for len(in) > 0 && b.Len() < 300 {
			k := Kind(in.next() % numKinds)
			addr, pc, thread := in.u64(), in.u64(), uint32(in.u64())
			if !k.IsExtended() {
				b.Append(k, addr, uint32(in.u64()), pc, thread)
				continue
			}
			fields := in.next()
			var e Ext
			if fields&1 != 0 {
				e.Size = in.u64()
			}
			if fields&2 != 0 {
				e.SP = in.u64()
			}
			if fields&4 != 0 {
				depth := int(in.next())
				if fields&0x80 != 0 {
					depth = MSTMaxStackDepth
				}
				for range depth {
					e.Stack = append(e.Stack, in.u64())
				}
			}
			if fields&8 != 0 {
				n := int(in.next())
				if fields&0x40 != 0 {
					n = MSTMaxNameLen
				}
				e.Name = strings.Repeat(string(rune('a'+n%26)), n)
			}
			if fields&16 != 0 {
				e.Mark = MarkKind(in.next() % numMarkKinds)
			}
			if fields&32 != 0 {
				e.Sync = SyncKind(in.next() % numSyncKinds)
			}
			e.Type = in.u64()
			b.AppendExt(k, addr, pc, thread, e)
		}
		data = encodeMST(t, b, opt, 1+b.Len()/3)
		got, err := readAllMST(NewMSTReader(bytes.NewReader(data), Options{}), 7)
		if err != nil {
			t.Fatal(err)
		}
		if d := batchEqual(b, got); d != "" {
			t.Fatal(d)
		}
	})
}
