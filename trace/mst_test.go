package trace

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// genMode selects the shape of a generated event stream.
type genMode int

const (
	genRandom genMode = iota // every field random, edge values included, extended events too
	genIFetch                // instruction-heavy, no PC or thread
	genMixed                 // realistic, with PCs, threads and extended events in some stretches
)

// randExt returns a random Ext: any field may be zero, values include
// edge cases, stacks and names up to the format's limits.
func randExt(rng *rand.Rand) Ext {
	edges := []uint64{0, 1, math.MaxUint64, 1 << 63, 0x7ffe0000}
	var e Ext
	if rng.IntN(2) == 0 {
		e.Size = []uint64{1, 16, 4096, math.MaxUint64, rng.Uint64()}[rng.IntN(5)]
	}
	if rng.IntN(2) == 0 {
		e.SP = edges[rng.IntN(len(edges))] - uint64(rng.IntN(64))*8
	}
	if rng.IntN(2) == 0 {
		depth := 1 + rng.IntN(8)
		if rng.IntN(50) == 0 {
			depth = MSTMaxStackDepth - rng.IntN(3)
		}
		for range depth {
			a := 0x400000 + rng.Uint64N(1<<16)
			if rng.IntN(8) == 0 {
				a = edges[rng.IntN(len(edges))]
			}
			e.Stack = append(e.Stack, a)
		}
	}
	switch rng.IntN(50) {
	case 0:
		e.Name = strings.Repeat("n", MSTMaxNameLen-rng.IntN(3))
	case 1, 2, 3, 4, 5, 6, 7, 8, 9, 10:
		e.Name = "phase \x00\xff é"
	default:
		if rng.IntN(2) == 0 {
			e.Name = []string{"malloc", "free", "calloc", "realloc", "operator new(unsigned long)"}[rng.IntN(5)]
		}
	}
	if rng.IntN(2) == 0 {
		e.Mark = MarkKind(rng.IntN(numMarkKinds))
	}
	if rng.IntN(2) == 0 {
		e.Sync = SyncKind(rng.IntN(numSyncKinds))
	}
	if rng.IntN(2) == 0 {
		e.Type = []uint64{1, 0x4b6e40, math.MaxUint64, rng.Uint64()}[rng.IntN(4)]
	}
	return e
}

// genEvents returns n events of the given shape, deterministic in seed.
func genEvents(n int, mode genMode, seed uint64) *Batch {
	rng := rand.New(rand.NewPCG(seed, 0x6d7374))
	b := NewBatch(n)
	switch mode {
	case genIFetch:
		// 92% instruction fetches of 4 bytes at +4 with small jumps, 8%
		// data reads at scattered addresses, no PC or thread.
		pc := uint64(0x400000)
		for range n {
			if rng.IntN(100) < 8 {
				b.Append(Read, 0x7f0000000000+rng.Uint64N(1<<26)&^7, 8, 0, 0)
				continue
			}
			b.Append(IFetch, pc, 4, 0, 0)
			pc += 4
			if rng.IntN(10) == 0 {
				pc += uint64(int64(rng.IntN(512)-256) * 4)
			}
		}
	case genMixed:
		pc := uint64(0x401000)
		sp := uint64(0x7ffe0000)
		var thread uint32
		withPC := false
		for i := range n {
			if i%1000 == 0 {
				withPC = rng.IntN(2) == 0
				if rng.IntN(3) == 0 {
					thread = uint32(rng.IntN(4))
				}
			}
			ipc := uint64(0)
			if withPC {
				ipc = pc
			}
			switch r := rng.IntN(100); {
			case r < 2 && withPC: // calls and returns, allocations, markers, objects mapped
				k := []Kind{Call, Return, Alloc, Free, Marker, Map}[rng.IntN(6)]
				var e Ext
				switch k {
				case Call, Return:
					sp += uint64(int64(rng.IntN(5)-2) * 16)
					e.SP = sp
				case Alloc, Free:
					e.Size, e.Name = uint64(rng.IntN(1<<12)), []string{"malloc", "free", "calloc"}[rng.IntN(3)]
					e.Stack = []uint64{pc, pc + 0x1234, pc - 0x100}
				case Map: // PC 0, the address and size of a .text
					e.Size, e.Name = uint64(1+rng.IntN(1<<20)), []string{"/usr/bin/prog", "/usr/lib/x86_64-linux-gnu/libc.so.6"}[rng.IntN(2)]
					b.AppendExt(k, 0x7f0000000000+uint64(rng.IntN(1<<20))<<12, 0, thread, e)
					continue
				default:
					e.Mark, e.Name = MarkKind(rng.IntN(numMarkKinds)), "step"
				}
				b.AppendExt(k, 0x600000+uint64(rng.IntN(1<<20)), ipc, thread, e)
			case r < 60:
				b.Append(IFetch, pc, uint32(1+rng.IntN(15)), ipc, thread)
				pc += uint64(1 + rng.IntN(8))
			case r < 80:
				b.Append(Read, sp+uint64(rng.IntN(64))*8, 8, ipc, thread)
			case r < 95:
				b.Append(Write, 0x600000+uint64(rng.IntN(1<<20)), []uint32{1, 2, 4, 8, 16}[rng.IntN(5)], ipc, thread)
			default:
				b.Append(Modify, sp-uint64(rng.IntN(4096)), 4, ipc, thread)
			}
		}
	default:
		edges := []uint64{0, 1, math.MaxUint64, math.MaxUint64 - 1, 1 << 63, 1<<63 - 1}
		sizes := []uint32{0, 1, 2, 4, 8, 16, 32, 64, 3, 4095, 1 << 20, math.MaxUint32}
		var addr, pc uint64
		var thread uint32
		for range n {
			k := Kind(rng.IntN(numKinds))
			switch rng.IntN(6) {
			case 0:
				addr = edges[rng.IntN(len(edges))]
			case 1:
				addr = rng.Uint64()
			default:
				addr += uint64(rng.IntN(64))
			}
			var size uint32
			switch rng.IntN(4) {
			case 0:
				size = rng.Uint32()
			default:
				size = sizes[rng.IntN(len(sizes))]
			}
			switch rng.IntN(8) {
			case 0:
				pc = rng.Uint64()
			case 1:
				pc = edges[rng.IntN(len(edges))]
			case 2:
				pc = 0
			default:
				pc += uint64(rng.IntN(16))
			}
			if rng.IntN(20) == 0 {
				thread = []uint32{0, 1, 7, math.MaxUint32, rng.Uint32()}[rng.IntN(5)]
			}
			if k.IsExtended() {
				b.AppendExt(k, addr, pc, thread, randExt(rng))
			} else {
				b.Append(k, addr, size, pc, thread)
			}
		}
	}
	return b
}

// subBatch returns the events [i, j) of b as a batch: a slice of b's
// columns, or a copy if b has extended events.
func subBatch(b *Batch, i, j int) *Batch {
	if len(b.Ext) == 0 {
		return &Batch{Kind: b.Kind[i:j], Addr: b.Addr[i:j], Size: b.Size[i:j], PC: b.PC[i:j], Thread: b.Thread[i:j]}
	}
	out := NewBatch(j - i)
	for k := i; k < j; k++ {
		out.AppendEvent(b, k)
	}
	return out
}

// encodeMST writes the events of b in batches of batchCap events.
func encodeMST(t testing.TB, b *Batch, opt MSTWriterOptions, batchCap int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewMSTWriter(&buf, opt)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < b.Len(); i += batchCap {
		part := subBatch(b, i, min(i+batchCap, b.Len()))
		if err := w.Write(part); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if w.Events() != uint64(b.Len()) {
		t.Fatalf("writer counted %d events, wrote %d", w.Events(), b.Len())
	}
	return buf.Bytes()
}

// readAllMST reads r to its end with batches of batchCap events and
// returns the events and the final error (nil at a clean end).
func readAllMST(r Reader, batchCap int) (*Batch, error) {
	all := NewBatch(0)
	b := NewBatch(batchCap)
	for {
		err := r.Read(b)
		if b.Len() > batchCap {
			return all, fmt.Errorf("Read returned %d events into a batch of capacity %d", b.Len(), batchCap)
		}
		if err == nil && b.Len() == 0 {
			return all, errors.New("Read returned no events and no error")
		}
		if err != nil && b.Len() != 0 {
			return all, fmt.Errorf("Read returned %d events with error %v", b.Len(), err)
		}
		if n := extIndex(b, b.Len()); n != len(b.Ext) {
			return all, fmt.Errorf("Read returned %d extended events with %d Exts", n, len(b.Ext))
		}
		ext := 0
		for i := range b.Len() {
			if b.Kind[i].IsExtended() {
				if int(b.Size[i]) != ext {
					return all, fmt.Errorf("extended event %d of a batch has Ext index %d, want %d", i, b.Size[i], ext)
				}
				ext++
			}
			all.AppendEvent(b, i)
		}
		if err == io.EOF {
			return all, nil
		}
		if err != nil {
			return all, err
		}
	}
}

// extIndex returns the number of extended events before event i of b:
// the index its Ext must have if it is extended.
func extIndex(b *Batch, i int) int {
	n := 0
	for _, k := range b.Kind[:i] {
		if k.IsExtended() {
			n++
		}
	}
	return n
}

// batchEqual describes the first difference between a and b, or returns
// "" if they hold the same events. The Size of an extended event is the
// index of its Ext, which must be in order; the Exts must be equal.
func batchEqual(a, b *Batch) string {
	for _, x := range []*Batch{a, b} {
		if n := len(x.Kind); len(x.Addr) != n || len(x.Size) != n || len(x.PC) != n || len(x.Thread) != n {
			return "batch slices have different lengths"
		}
		if n := extIndex(x, x.Len()); n != len(x.Ext) {
			return fmt.Sprintf("batch has %d extended events but %d Exts", n, len(x.Ext))
		}
	}
	for i := range min(a.Len(), b.Len()) {
		if a.Kind[i] != b.Kind[i] || a.Addr[i] != b.Addr[i] || a.Size[i] != b.Size[i] || a.PC[i] != b.PC[i] || a.Thread[i] != b.Thread[i] {
			return fmt.Sprintf("event %d: want {%v %#x %d pc %#x thread %d}, got {%v %#x %d pc %#x thread %d}", i,
				a.Kind[i], a.Addr[i], a.Size[i], a.PC[i], a.Thread[i], b.Kind[i], b.Addr[i], b.Size[i], b.PC[i], b.Thread[i])
		}
		if a.Kind[i].IsExtended() && !extEqual(a.ExtOf(i), b.ExtOf(i)) {
			if d := cmp.Diff(*a.ExtOf(i), *b.ExtOf(i), cmpopts.EquateEmpty()); d != "" {
				return fmt.Sprintf("event %d (%v): Ext differs (-want +got):\n%s", i, a.Kind[i], d)
			}
		}
	}
	if a.Len() != b.Len() {
		return fmt.Sprintf("want %d events, got %d", a.Len(), b.Len())
	}
	return ""
}

// extEqual reports whether x and y are equal, a nil Stack equal to an
// empty one.
func extEqual(x, y *Ext) bool {
	return x.Size == y.Size && x.SP == y.SP && slices.Equal(x.Stack, y.Stack) && x.Type == y.Type && x.Name == y.Name && x.Mark == y.Mark && x.Sync == y.Sync
}

// prefixOf reports whether a's events are the first events of b.
func prefixOf(a, b *Batch) bool {
	n := a.Len()
	if n > b.Len() {
		return false
	}
	return batchEqual(subBatch(b, 0, n), a) == ""
}

func TestMSTRoundTrip(t *testing.T) {
	codecs := []MSTCodec{MSTCodecS2, MSTCodecZstd, MSTCodecNone}
	tests := []struct {
		name     string
		n        int
		mode     genMode
		chunk    int
		writeCap int
		readCap  int
	}{
		{"empty", 0, genRandom, 0, 10, 10},
		{"one", 1, genRandom, 0, 10, 10},
		{"random/chunk1", 50, genRandom, 1, 3, 7},
		{"random/chunk7", 3000, genRandom, 7, 5, 3},
		{"random/chunk1000", 20000, genRandom, 1000, 333, 4096},
		{"random/default", 70000, genRandom, 0, 4096, 4095},
		{"ifetch/chunk300", 10000, genIFetch, 300, 1000, 77},
		{"ifetch/default", 200000, genIFetch, 0, 4096, 4096},
		{"mixed/chunk777", 30000, genMixed, 777, 1024, 100},
		{"mixed/max", 100000, genMixed, MSTMaxChunkEvents, 999, 5000},
	}
	for _, codec := range codecs {
		for _, tc := range tests {
			t.Run(codec.String()+"/"+tc.name, func(t *testing.T) {
				want := genEvents(tc.n, tc.mode, uint64(tc.n))
				meta := MSTMeta{Creator: "memspy test", Source: "gen.din", SourceFormat: "din",
					Created: time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC), Extra: map[string]string{"k": "v"}}
				data := encodeMST(t, want, MSTWriterOptions{Codec: codec, ChunkEvents: tc.chunk, Meta: meta}, tc.writeCap)
				r := NewMSTReader(bytes.NewReader(data), Options{Name: "x.mst"})
				if diff := cmp.Diff(meta, r.Meta()); diff != "" {
					t.Errorf("meta (-want +got):\n%s", diff)
				}
				got, err := readAllMST(r, tc.readCap)
				if err != nil {
					t.Fatal(err)
				}
				if diff := batchEqual(want, got); diff != "" {
					t.Fatalf("events differ: %s", diff)
				}
				if r.Events() != uint64(tc.n) {
					t.Errorf("Events() = %d, want %d", r.Events(), tc.n)
				}
				// The index is consistent with the chunks.
				idx, err := ReadMSTIndex(bytes.NewReader(data), int64(len(data)))
				if err != nil {
					t.Fatal(err)
				}
				chunk := tc.chunk
				if chunk == 0 {
					chunk = MSTDefaultChunkEvents
				}
				if wantN := (tc.n + chunk - 1) / chunk; len(idx) != wantN {
					t.Errorf("index has %d chunks, want %d", len(idx), wantN)
				}
			})
		}
	}
}

// writeReadMST writes in to an .mst file in chunks of 3 events and returns
// what reading the file back gives.
func writeReadMST(t *testing.T, in *Batch) *Batch {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewMSTWriter(&buf, MSTWriterOptions{ChunkEvents: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(in); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := readAllMST(NewMSTReader(&buf, Options{}), 10)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestMSTNilPCThreadBatch(t *testing.T) {
	in := &Batch{Kind: []Kind{Read, Write, IFetch, Modify}, Addr: []uint64{1, 2, 3, 4}, Size: []uint32{1, 2, 3, 4}}
	got := writeReadMST(t, in)
	in.PC, in.Thread = make([]uint64, 4), make([]uint32, 4)
	if diff := batchEqual(in, got); diff != "" {
		t.Fatal(diff)
	}
}

// Skip events (references a sampling tracer left out) are not stored: the
// rest is written as if they were not there, with or without PC and
// thread columns.
func TestMSTDropsSkips(t *testing.T) {
	for _, cols := range []bool{false, true} {
		in, want := NewBatch(5), NewBatch(6)
		for range 2 {
			in.Append(Skip, 100, 0, 0, 1)
			in.Append(Read, 2, 2, 7, 1)
			in.Append(Skip, 5, 0, 0, 2)
			in.Append(Write, 4, 4, 9, 2)
			in.AppendExt(Marker, 0, 0, 2, Ext{Mark: MarkSampleBegin})
			want.Append(Read, 2, 2, 7, 1)
			want.Append(Write, 4, 4, 9, 2)
			want.AppendExt(Marker, 0, 0, 2, Ext{Mark: MarkSampleBegin})
		}
		if !cols {
			in.PC, in.Thread = nil, nil
			clear(want.PC)
			clear(want.Thread)
		}
		if diff := batchEqual(want, writeReadMST(t, in)); diff != "" {
			t.Errorf("columns %v: %s", cols, diff)
		}
	}
}

func TestMSTWriterErrors(t *testing.T) {
	if _, err := NewMSTWriter(io.Discard, MSTWriterOptions{ChunkEvents: MSTMaxChunkEvents + 1}); err == nil {
		t.Error("oversized chunks accepted")
	}
	if _, err := NewMSTWriter(io.Discard, MSTWriterOptions{Codec: 7}); err == nil {
		t.Error("unknown codec accepted")
	}
	w, err := NewMSTWriter(io.Discard, MSTWriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&Batch{Kind: []Kind{Kind(numKinds)}, Addr: []uint64{0}, Size: []uint32{0}}); err == nil {
		t.Error("invalid kind accepted")
	}
	if err := w.Write(&Batch{Kind: []Kind{Read}, Addr: []uint64{0}}); err == nil {
		t.Error("ragged batch accepted")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(genEvents(1, genRandom, 1)); err == nil {
		t.Error("Write after Close accepted")
	}
}

func TestParseMSTCodec(t *testing.T) {
	for _, c := range []MSTCodec{MSTCodecS2, MSTCodecZstd, MSTCodecNone} {
		got, err := ParseMSTCodec(c.String())
		if err != nil || got != c {
			t.Errorf("ParseMSTCodec(%q) = %v, %v", c.String(), got, err)
		}
	}
	if _, err := ParseMSTCodec("gzip"); err == nil {
		t.Error("gzip accepted")
	}
}

func TestMSTPipe(t *testing.T) {
	want := genEvents(50000, genMixed, 3)
	pr, pw := io.Pipe()
	go func() {
		w, err := NewMSTWriter(pw, MSTWriterOptions{ChunkEvents: 4000})
		if err == nil {
			err = w.Write(want)
		}
		if err == nil {
			err = w.Close()
		}
		pw.CloseWithError(err)
	}()
	// A reader that is neither a Seeker nor a ReaderAt.
	f, ok := Lookup("mst")
	if !ok {
		t.Fatal("format mst not registered")
	}
	r := f.New(struct{ io.Reader }{pr}, Options{Name: "pipe"})
	if r.Format() != "mst" {
		t.Errorf("Format() = %q", r.Format())
	}
	got, err := readAllMST(r, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if diff := batchEqual(want, got); diff != "" {
		t.Fatal(diff)
	}
}

func TestMSTDetect(t *testing.T) {
	f, ok := Lookup("mst")
	if !ok {
		t.Fatal("format mst not registered")
	}
	data := encodeMST(t, genEvents(10, genRandom, 1), MSTWriterOptions{}, 10)
	if !f.Detect(data[:64]) {
		t.Error("Detect rejects an .mst file")
	}
	for _, head := range []string{"", "\x89MST", "I 0x1000 4\n", "0 1000\n2 2000\n"} {
		if f.Detect([]byte(head)) {
			t.Errorf("Detect(%q) = true", head)
		}
	}
}

// smallMST returns a small file of several chunks of every kind of column.
func smallMST(t testing.TB) (*Batch, []byte) {
	want := genEvents(40, genRandom, 9)
	for i := 10; i < 20; i++ { // a chunk without PC and thread
		want.PC[i], want.Thread[i] = 0, 0
	}
	return want, encodeMST(t, want, MSTWriterOptions{ChunkEvents: 10, Codec: MSTCodecNone}, 7)
}

func TestMSTTruncated(t *testing.T) {
	for _, codec := range []MSTCodec{MSTCodecS2, MSTCodecNone, MSTCodecZstd} {
		want := genEvents(40, genRandom, 9)
		for i := 10; i < 20; i++ {
			want.PC[i], want.Thread[i] = 0, 0
		}
		data := encodeMST(t, want, MSTWriterOptions{ChunkEvents: 10, Codec: codec}, 7)
		idx, err := ReadMSTIndex(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		indexOff := int64(binary.LittleEndian.Uint64(data[len(data)-mstTrailerLen:]))
		for cut := 0; cut < len(data); cut++ {
			r := NewMSTReader(bytes.NewReader(data[:cut]), Options{Name: "cut.mst"})
			got, err := readAllMST(r, 6)
			if err == nil {
				t.Fatalf("%v: cut at %d of %d: no error", codec, cut, len(data))
			}
			if !prefixOf(got, want) {
				t.Fatalf("%v: cut at %d: events are not a prefix of the written ones", codec, cut)
			}
			// Exactly the chunks that end before the cut are delivered.
			complete := 0
			for i, c := range idx {
				end := indexOff
				if i+1 < len(idx) {
					end = idx[i+1].Offset
				}
				if end <= int64(cut) {
					complete += c.Events
				}
			}
			if got.Len() != complete {
				t.Fatalf("%v: cut at %d: got %d events, want %d", codec, cut, got.Len(), complete)
			}
			if !errors.Is(err, ErrMSTTruncated) {
				t.Fatalf("%v: cut at %d: error %q does not report truncation", codec, cut, err)
			}
			if !strings.Contains(err.Error(), "truncated") || !strings.Contains(err.Error(), fmt.Sprintf("%d events were read", got.Len())) {
				t.Fatalf("%v: cut at %d: error %q lacks truncation or event count", codec, cut, err)
			}
		}
	}
}

// TestMSTEscapes writes chunks with more distinct (kind, size, delta
// length) combinations than the op table holds.
func TestMSTEscapes(t *testing.T) {
	want := NewBatch(0)
	for i := range 3000 {
		if k := Kind(i % numKinds); k.IsExtended() {
			want.AppendExt(k, uint64(i)*4096, uint64(i%7), 0, Ext{Size: uint64(i), Name: "x"})
		} else {
			want.Append(k, uint64(i)*4096, uint32(i), uint64(i%7), 0)
		}
	}
	for _, chunk := range []int{1000, 3000} {
		var buf bytes.Buffer
		w, err := NewMSTWriter(&buf, MSTWriterOptions{ChunkEvents: chunk, Codec: MSTCodecNone})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(want); err != nil {
			t.Fatal(err)
		}
		if w.table.n != mstMaxOps {
			t.Fatalf("op table has %d entries, want it full", w.table.n)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		got, err := readAllMST(NewMSTReader(&buf, Options{}), 500)
		if err != nil {
			t.Fatal(err)
		}
		if diff := batchEqual(want, got); diff != "" {
			t.Fatal(diff)
		}
	}
}

func TestMSTCorrupt(t *testing.T) {
	want, data := smallMST(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range len(data) {
		for _, bit := range []byte{1, 0x80, byte(1 + rng.IntN(255))} {
			bad := bytes.Clone(data)
			bad[i] ^= bit
			got, err := readAllMST(NewMSTReader(bytes.NewReader(bad), Options{}), 8)
			if err == nil {
				t.Fatalf("flip %#x at byte %d of %d: no error", bit, i, len(data))
			}
			if !prefixOf(got, want) {
				t.Fatalf("flip %#x at byte %d: wrong events delivered", bit, i)
			}
		}
	}
	// Random multi-byte damage of every codec.
	for _, codec := range []MSTCodec{MSTCodecS2, MSTCodecZstd} {
		data := encodeMST(t, want, MSTWriterOptions{ChunkEvents: 10, Codec: codec}, 7)
		for range 2000 {
			bad := bytes.Clone(data)
			for range 1 + rng.IntN(4) {
				bad[rng.IntN(len(bad))] = byte(rng.Uint32())
			}
			if bytes.Equal(bad, data) {
				continue
			}
			got, err := readAllMST(NewMSTReader(bytes.NewReader(bad), Options{}), 8)
			if err == nil || !prefixOf(got, want) {
				t.Fatalf("%v: damage not detected (err %v)", codec, err)
			}
		}
	}
}

func TestMSTPayloadCRC(t *testing.T) {
	_, data := smallMST(t)
	idx, err := ReadMSTIndex(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(data)
	off := idx[2].Offset + 32 + 5
	bad[off] ^= 0x10
	got, err := readAllMST(NewMSTReader(bytes.NewReader(bad), Options{Name: "bad.mst"}), 100)
	if !errors.Is(err, ErrMSTCorrupt) || !strings.Contains(err.Error(), "chunk 2 at byte") ||
		!strings.Contains(err.Error(), "payload checksum mismatch") {
		t.Fatalf("error = %v", err)
	}
	if got.Len() != 20 {
		t.Errorf("got %d events before the bad chunk, want 20", got.Len())
	}
}

// rewriteHeader changes the fixed header of an .mst file and fixes its CRC.
func rewriteHeader(data []byte, edit func(h []byte)) []byte {
	data = bytes.Clone(data)
	metaLen := int(data[16]) | int(data[17])<<8 | int(data[18])<<16 | int(data[19])<<24
	edit(data[:mstFixedHeaderLen])
	end := mstFixedHeaderLen + metaLen
	c := crc32Castagnoli(data[:end])
	data[end], data[end+1], data[end+2], data[end+3] = byte(c), byte(c>>8), byte(c>>16), byte(c>>24)
	return data
}

func TestMSTVersion(t *testing.T) {
	_, data := smallMST(t)
	tests := []struct {
		name  string
		edit  func(h []byte)
		class error
		msg   string
	}{
		{"major 2", func(h []byte) { h[8], h[10] = 2, 1 }, ErrMSTUnsupported, "version 2.1 but this memspy reads version 1.x"},
		{"major 0", func(h []byte) { h[8] = 0 }, ErrMSTCorrupt, "invalid version"},
		{"required flag", func(h []byte) { h[12] = 4 }, ErrMSTUnsupported, "header flags 0x4"},
		{"optional flag", func(h []byte) { h[14] = 1 }, nil, ""},
		{"minor 9", func(h []byte) { h[10] = 9 }, nil, ""},
		{"magic", func(h []byte) { h[1] = 'X' }, ErrNotMST, "magic"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bad := rewriteHeader(data, tc.edit)
			_, err := readAllMST(NewMSTReader(bytes.NewReader(bad), Options{Name: "v.mst"}), 100)
			if tc.class == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, tc.class) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("error = %v, want %v with %q", err, tc.class, tc.msg)
			}
		})
	}
}

// rewriteChunk decodes chunk ci of an uncompressed file, lets edit change
// its raw payload and header, and fixes the checksums.
func rewriteChunk(t *testing.T, data []byte, off int64, edit func(h, raw []byte) []byte) []byte {
	t.Helper()
	h := bytes.Clone(data[off : off+32])
	if h[1] != 0 {
		t.Fatal("rewriteChunk needs codec none")
	}
	size := int64(h[20]) | int64(h[21])<<8 | int64(h[22])<<16 | int64(h[23])<<24
	raw := edit(h, bytes.Clone(data[off+32:off+32+size]))
	h[16], h[17], h[18], h[19] = byte(len(raw)), byte(len(raw)>>8), byte(len(raw)>>16), byte(len(raw)>>24)
	h[20], h[21], h[22], h[23] = h[16], h[17], h[18], h[19]
	c := crc32Castagnoli(raw)
	h[24], h[25], h[26], h[27] = byte(c), byte(c>>8), byte(c>>16), byte(c>>24)
	c = crc32Castagnoli(h[:28])
	h[28], h[29], h[30], h[31] = byte(c), byte(c>>8), byte(c>>16), byte(c>>24)
	out := append(bytes.Clone(data[:off]), h...)
	out = append(out, raw...)
	return append(out, data[off+32+size:]...)
}

func TestMSTNewerFeatures(t *testing.T) {
	_, data := smallMST(t)
	idx, err := ReadMSTIndex(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	off := idx[1].Offset
	tests := []struct {
		name  string
		edit  func(h, raw []byte) []byte
		class error
		msg   string
	}{
		{"unknown kind", func(h, raw []byte) []byte { raw[1] = 200; return raw }, ErrMSTUnsupported, "event kind 200"},
		{"unknown op flag", func(h, raw []byte) []byte { raw[2] |= 0x40; return raw }, ErrMSTUnsupported, "op flags"},
		{"unknown codec", func(h, raw []byte) []byte { h[1] = 9; return raw }, ErrMSTUnsupported, "unknown codec 9"},
		{"unknown column", func(h, raw []byte) []byte { h[2] |= 0x20; return raw }, ErrMSTUnsupported, "column bits 0x20"},
		{"unknown block", func(h, raw []byte) []byte { h[0] = 'Q'; return raw }, ErrMSTUnsupported, "unknown block tag 0x51"},
		{"too many events", func(h, raw []byte) []byte { h[6] = 0x20; return raw }, ErrMSTCorrupt, "event count"},
		{"wrong first event", func(h, raw []byte) []byte { h[8]++; return raw }, ErrMSTCorrupt, "starts at event"},
		{"raw too long", func(h, raw []byte) []byte { return append(raw, 0) }, ErrMSTCorrupt, "columns take"},
		{"raw too short", func(h, raw []byte) []byte { return raw[:len(raw)-1] }, ErrMSTCorrupt, "columns take"},
		{"op outside table", func(h, raw []byte) []byte { raw[0] = 0; return raw }, ErrMSTCorrupt, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bad := rewriteChunk(t, data, off, tc.edit)
			got, err := readAllMST(NewMSTReader(bytes.NewReader(bad), Options{Name: "n.mst"}), 100)
			if !errors.Is(err, tc.class) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("error = %v, want %v with %q", err, tc.class, tc.msg)
			}
			if !strings.Contains(err.Error(), "chunk 1 at byte") && tc.name != "unknown block" {
				t.Errorf("error %q does not name the chunk", err)
			}
			if got.Len() != 10 {
				t.Errorf("got %d events, want the 10 of chunk 0", got.Len())
			}
		})
	}
	// Optional blocks (lower-case tags) are skipped, wherever they are.
	withOpt := insertOptionalBlocks(t, data, idx, 70000)
	got, err := readAllMST(NewMSTReader(bytes.NewReader(withOpt), Options{}), 100)
	if err != nil || got.Len() != 40 {
		t.Fatalf("with optional blocks: got %d events, error %v", got.Len(), err)
	}
	if _, err := ReadMSTIndex(bytes.NewReader(withOpt), int64(len(withOpt))); err != nil {
		t.Fatal(err)
	}
}

// insertOptionalBlocks returns data with an optional block of size bytes
// before every chunk, and its index and trailer rebuilt to match.
func insertOptionalBlocks(t *testing.T, data []byte, idx []MSTChunkInfo, size int) []byte {
	t.Helper()
	indexOff := int64(binary.LittleEndian.Uint64(data[len(data)-mstTrailerLen:]))
	blk := make([]byte, 32, 32+size)
	blk[0] = 'q'
	binary.LittleEndian.PutUint32(blk[16:], uint32(size))
	binary.LittleEndian.PutUint32(blk[20:], uint32(size))
	for i := range size {
		blk = append(blk, byte(i))
	}
	binary.LittleEndian.PutUint32(blk[24:], crc32Castagnoli(blk[32:]))
	binary.LittleEndian.PutUint32(blk[28:], crc32Castagnoli(blk[:28]))
	out := bytes.Clone(data[:idx[0].Offset])
	var entries []byte
	for i, c := range idx {
		end := indexOff
		if i+1 < len(idx) {
			end = idx[i+1].Offset
		}
		out = append(out, blk...)
		entries = binary.LittleEndian.AppendUint64(entries, uint64(len(out)))
		entries = binary.LittleEndian.AppendUint64(entries, c.First)
		entries = binary.LittleEndian.AppendUint32(entries, uint32(c.Events))
		out = append(out, data[c.Offset:end]...)
	}
	newIndex := int64(len(out))
	h := bytes.Clone(data[indexOff : indexOff+32])
	binary.LittleEndian.PutUint32(h[24:], crc32Castagnoli(entries))
	binary.LittleEndian.PutUint32(h[28:], crc32Castagnoli(h[:28]))
	out = append(append(out, h...), entries...)
	tr := bytes.Clone(data[len(data)-mstTrailerLen:])
	binary.LittleEndian.PutUint64(tr, uint64(newIndex))
	binary.LittleEndian.PutUint32(tr[20:], crc32Castagnoli(tr[:20]))
	return append(out, tr...)
}

// TestMSTBadColumns feeds chunk payloads with valid checksums but
// inconsistent contents (a buggy or newer writer): the reader reports the
// chunk and delivers none of its events.
func TestMSTBadColumns(t *testing.T) {
	_, data := smallMST(t)
	idx, err := ReadMSTIndex(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	rep := func(b []byte, n int) []byte { return bytes.Repeat(b, n) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	op := func(kind, flags, lens, size byte) []byte { return []byte{kind, flags, lens, size} }
	tests := []struct {
		name  string
		cols  byte
		raw   []byte
		class error
		msg   string
	}{
		{"op outside table", 0, cat([]byte{1}, op(0, 0, 1, 4), []byte{10, 0}, rep([]byte{0}, 9), []byte{3}, rep([]byte{1}, 10)),
			ErrMSTCorrupt, "op code 3 outside the op table"},
		{"address column short", 0, cat([]byte{1}, op(0, 0, 2, 4), []byte{10, 0}, rep([]byte{0}, 10), rep([]byte{1}, 10)),
			ErrMSTCorrupt, "column too short"},
		{"address column long", 0, cat([]byte{1}, op(0, 0, 1, 4), []byte{11, 0}, rep([]byte{0}, 10), rep([]byte{1}, 11)),
			ErrMSTCorrupt, "column lengths do not match"},
		{"escape of newer kind", 0, cat([]byte{0}, []byte{0, 40}, rep([]byte{255}, 10), rep(op(1, 0, 0, 1), 9), op(99, 0, 0, 1)),
			ErrMSTUnsupported, "event kind 99"},
		{"escape cut off", 0, cat([]byte{0}, []byte{0, 36}, rep([]byte{255}, 10), rep(op(1, 0, 0, 1), 9)),
			ErrMSTCorrupt, "escape entry: cut off"},
		{"PC length without PC column", 0, cat([]byte{1}, op(0, 0, 0x10, 4), []byte{0, 0}, rep([]byte{0}, 10)),
			ErrMSTCorrupt, "bad delta lengths"},
		{"thread run too long", mstColThread, cat([]byte{1}, op(0, 0, 0, 4), []byte{0, 0, 2}, rep([]byte{0}, 10), []byte{7, 11}),
			ErrMSTCorrupt, "bad thread run"},
		{"thread runs short", mstColThread, cat([]byte{1}, op(0, 0, 0, 4), []byte{0, 0, 2}, rep([]byte{0}, 10), []byte{7, 9}),
			ErrMSTCorrupt, "bad thread run"},
		{"PC column short", mstColPC, cat([]byte{1}, op(0, 0, 0x20, 4), []byte{0, 0, 4}, rep([]byte{0}, 10), rep([]byte{1}, 4)),
			ErrMSTCorrupt, "column too short"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bad := rewriteChunk(t, data, idx[1].Offset, func(h, raw []byte) []byte {
				h[2] = tc.cols
				return tc.raw
			})
			got, err := readAllMST(NewMSTReader(bytes.NewReader(bad), Options{Name: "c.mst"}), 100)
			if !errors.Is(err, tc.class) || !strings.Contains(err.Error(), tc.msg) || !strings.Contains(err.Error(), "chunk 1 at byte") {
				t.Fatalf("error = %v, want %v with %q", err, tc.class, tc.msg)
			}
			if got.Len() != 10 {
				t.Errorf("got %d events, want the 10 of chunk 0", got.Len())
			}
		})
	}
	// The same payload with a valid layout decodes.
	good := rewriteChunk(t, data, idx[1].Offset, func(h, raw []byte) []byte {
		h[2] = mstColThread | mstColPC
		return cat([]byte{1}, op(1, 0, 0x11, 4), []byte{10, 0, 10, 2}, rep([]byte{0}, 10), rep([]byte{3}, 10), rep([]byte{1}, 10), []byte{7, 10})
	})
	got, err := readAllMST(NewMSTReader(bytes.NewReader(good), Options{}), 100)
	if err == nil || !strings.Contains(err.Error(), "index") { // the index CRC no longer matches
		t.Fatalf("error = %v", err)
	}
	for i := 10; i < 20; i++ {
		k := uint64(i - 9)
		if got.Kind[i] != Write || got.Addr[i] != 3*k+4*(k-1) || got.Size[i] != 4 || got.PC[i] != k || got.Thread[i] != 7 {
			t.Fatalf("event %d = %v %#x %d %#x %d", i, got.Kind[i], got.Addr[i], got.Size[i], got.PC[i], got.Thread[i])
		}
	}
}

func TestMSTReadIntoOddBatches(t *testing.T) {
	want := genEvents(1000, genMixed, 5)
	data := encodeMST(t, want, MSTWriterOptions{ChunkEvents: 64}, 1000)
	// A zero-capacity batch gets storage of BatchSize events.
	r := NewMSTReader(bytes.NewReader(data), Options{})
	var b Batch
	if err := r.Read(&b); err != nil || b.Len() != 1000 {
		t.Fatalf("Read into empty batch: %d events, %v", b.Len(), err)
	}
	// Slices of different capacities: the smallest wins.
	r = NewMSTReader(bytes.NewReader(data), Options{})
	b2 := NewBatch(100)
	b2.PC = make([]uint64, 0, 30)
	if err := r.Read(b2); err != nil || b2.Len() != 30 {
		t.Fatalf("Read into ragged batch: %d events, %v", b2.Len(), err)
	}
}

func crc32Castagnoli(p []byte) uint32 { return crc32.Checksum(p, castagnoli) }

// writeSeedCorpus regenerates testdata/fuzz/FuzzMST when MST_WRITE_SEEDS
// is set.
func TestMSTWriteSeedCorpus(t *testing.T) {
	if os.Getenv("MST_WRITE_SEEDS") == "" {
		t.Skip("set MST_WRITE_SEEDS=1 to regenerate the fuzz seed corpus")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzMST")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	seeds := map[string][]byte{}
	for i, codec := range []MSTCodec{MSTCodecNone, MSTCodecS2, MSTCodecZstd} {
		seeds[fmt.Sprintf("valid-random-%v", codec)] = encodeMST(t, genEvents(12, genRandom, uint64(i)), MSTWriterOptions{ChunkEvents: 5, Codec: codec}, 4)
		seeds[fmt.Sprintf("valid-mixed-%v", codec)] = encodeMST(t, genEvents(30, genMixed, uint64(i)), MSTWriterOptions{ChunkEvents: 16, Codec: codec}, 30)
	}
	seeds["valid-empty"] = encodeMST(t, genEvents(0, genRandom, 0), MSTWriterOptions{}, 1)
	ext, err := hex.DecodeString(mstSpecExtExample)
	if err != nil {
		t.Fatal(err)
	}
	seeds["valid-ext-example"] = ext
	for _, codec := range []MSTCodec{MSTCodecNone, MSTCodecS2, MSTCodecZstd} {
		seeds[fmt.Sprintf("valid-ifetch-%v", codec)] = encodeMST(t, genEvents(300, genIFetch, 0), MSTWriterOptions{ChunkEvents: 128, Codec: codec}, 300)
	}
	full := seeds["valid-random-none"]
	seeds["truncated"] = full[:len(full)/2]
	seeds["magic-only"] = []byte(mstMagic)
	seeds["text"] = []byte("I 0x1000 4\n")
	for name, data := range seeds {
		content := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMSTSeedCorpusValid checks that the valid files of the fuzz seed
// corpus still decode, so that a format change cannot leave the corpus
// stale.
func TestMSTSeedCorpusValid(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzMST", "valid-*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no valid seed files (%v)", err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(raw), "\n")
		if len(lines) < 2 || !strings.HasPrefix(lines[1], "[]byte(") {
			t.Fatalf("%s: not a fuzz corpus file", f)
		}
		data, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if _, err := readAllMST(NewMSTReader(strings.NewReader(data), Options{Name: f}), 50); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func FuzzMST(f *testing.F) {
	f.Add(encodeMST(f, genEvents(20, genRandom, 1), MSTWriterOptions{ChunkEvents: 6, Codec: MSTCodecNone}, 20))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewMSTReader(bytes.NewReader(data), Options{Name: "fuzz"})
		b := NewBatch(64)
		total := 0
		for {
			err := r.Read(b)
			total += b.Len()
			if err != nil {
				if err == io.EOF && total != int(r.Events()) {
					t.Fatalf("clean end after %d events, reader counted %d", total, r.Events())
				}
				break
			}
			if b.Len() == 0 {
				t.Fatal("Read returned no events and no error")
			}
		}
		_, _ = ReadMSTIndex(bytes.NewReader(data), int64(len(data)))
	})
}

// FuzzMSTChunk fuzzes the chunk payload decoder behind the checksums,
// which random input almost never gets past.
func FuzzMSTChunk(f *testing.F) {
	escapes := NewBatch(0)
	for i := range 300 {
		if k := Kind(i % numKinds); k.IsExtended() {
			escapes.AppendExt(k, uint64(i)<<20, uint64(i%3), uint32(i/100), Ext{SP: uint64(i) << 4, Stack: []uint64{uint64(i)}})
		} else {
			escapes.Append(k, uint64(i)<<20, uint32(i), uint64(i%3), uint32(i/100))
		}
	}
	for _, b := range []*Batch{genEvents(30, genRandom, 2), genEvents(100, genMixed, 3), genEvents(100, genIFetch, 4), escapes} {
		data := encodeMST(f, b, MSTWriterOptions{ChunkEvents: 300, Codec: MSTCodecNone}, 300)
		hl := mstFixedHeaderLen + int(binary.LittleEndian.Uint32(data[16:])) + 4
		h := data[hl : hl+mstBlockHeaderLen]
		rawLen := int(binary.LittleEndian.Uint32(h[16:]))
		f.Add(h[2], binary.LittleEndian.Uint32(h[4:]), data[hl+mstBlockHeaderLen:hl+mstBlockHeaderLen+rawLen])
	}
	f.Fuzz(func(t *testing.T, cols byte, count uint32, raw []byte) {
		if count == 0 || count > 1000 {
			return
		}
		r := &MSTReader{name: "fuzz", started: true, chunks: 1}
		if err := r.parseChunk(raw, int(count), cols&mstColKnown); err != nil {
			return
		}
		b := NewBatch(7)
		for r.left > 0 {
			m := min(r.left, 7)
			b.Reset()
			b.Kind, b.Addr, b.Size, b.PC, b.Thread = b.Kind[:m], b.Addr[:m], b.Size[:m], b.PC[:m], b.Thread[:m]
			if err := r.decode(b, 0, m); err != nil {
				return
			}
			if d := batchEqual(b, b); d != "" {
				t.Fatal(d)
			}
		}
	})
}

// benchMST is the benchmark stream: 4 Mi instruction-heavy events.
var benchMST *Batch

func benchEvents() *Batch {
	if benchMST == nil {
		benchMST = genEvents(4<<20, genIFetch, 42)
	}
	return benchMST
}

func BenchmarkMSTDecode(b *testing.B) {
	ev := benchEvents()
	for _, codec := range []MSTCodec{MSTCodecS2, MSTCodecZstd, MSTCodecNone} {
		b.Run(codec.String(), func(b *testing.B) {
			data := encodeMST(b, ev, MSTWriterOptions{Codec: codec}, BatchSize)
			batch := NewBatch(BatchSize)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				r := NewMSTReader(bytes.NewReader(data), Options{})
				n := 0
				for {
					err := r.Read(batch)
					n += batch.Len()
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				if n != ev.Len() {
					b.Fatalf("read %d events, want %d", n, ev.Len())
				}
			}
			b.ReportMetric(float64(ev.Len())*float64(b.N)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(len(data))/float64(ev.Len()), "B/event")
		})
	}
}

func BenchmarkMSTEncode(b *testing.B) {
	ev := benchEvents()
	for _, codec := range []MSTCodec{MSTCodecS2, MSTCodecZstd, MSTCodecNone} {
		b.Run(codec.String(), func(b *testing.B) {
			var buf bytes.Buffer
			size := 0
			for range b.N {
				buf.Reset()
				w, err := NewMSTWriter(&buf, MSTWriterOptions{Codec: codec})
				if err != nil {
					b.Fatal(err)
				}
				for i := 0; i < ev.Len(); i += BatchSize {
					j := min(i+BatchSize, ev.Len())
					if err := w.Write(&Batch{Kind: ev.Kind[i:j], Addr: ev.Addr[i:j], Size: ev.Size[i:j], PC: ev.PC[i:j], Thread: ev.Thread[i:j]}); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
				size = buf.Len()
			}
			b.ReportMetric(float64(ev.Len())*float64(b.N)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(size)/float64(ev.Len()), "B/event")
		})
	}
}

// BenchmarkMSTDecodeColumns measures the column decoder alone: one
// uncompressed chunk of the benchmark stream, decoded again and again.
func BenchmarkMSTDecodeColumns(b *testing.B) {
	ev := benchEvents()
	part := &Batch{Kind: ev.Kind[:MSTDefaultChunkEvents], Addr: ev.Addr[:MSTDefaultChunkEvents],
		Size: ev.Size[:MSTDefaultChunkEvents], PC: ev.PC[:MSTDefaultChunkEvents], Thread: ev.Thread[:MSTDefaultChunkEvents]}
	data := encodeMST(b, part, MSTWriterOptions{Codec: MSTCodecNone}, MSTDefaultChunkEvents)
	hl := mstFixedHeaderLen + int(data[16]) + int(data[17])<<8 + 4
	h := data[hl : hl+mstBlockHeaderLen]
	rawLen := int(h[16]) | int(h[17])<<8 | int(h[18])<<16
	raw := append(make([]byte, 0, rawLen+mstPad), data[hl+mstBlockHeaderLen:hl+mstBlockHeaderLen+rawLen]...)
	r := &MSTReader{name: "bench", started: true, chunks: 1}
	batch := NewBatch(BatchSize)
	b.ResetTimer()
	for range b.N {
		if err := r.parseChunk(raw, MSTDefaultChunkEvents, h[2]); err != nil {
			b.Fatal(err)
		}
		for r.left > 0 {
			m := min(r.left, BatchSize)
			batch.Kind, batch.Addr, batch.Size, batch.PC, batch.Thread = batch.Kind[:m], batch.Addr[:m], batch.Size[:m], batch.PC[:m], batch.Thread[:m]
			if err := r.decode(batch, 0, m); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(MSTDefaultChunkEvents)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// A reused batch must not keep PCs or threads of an earlier chunk where a
// later chunk has none (the reader clears those columns only when needed).
func TestMSTZeroColumnsReused(t *testing.T) {
	in := NewBatch(0)
	for c := range 5 {
		for i := range 50 {
			var pc uint64
			var thr uint32
			if c%2 == 1 {
				pc, thr = uint64(0x400000+i), uint32(c)
			}
			in.Append(Read, uint64(0x1000+8*(50*c+i)), 8, pc, thr)
		}
	}
	data := encodeMST(t, in, MSTWriterOptions{ChunkEvents: 50}, 64)
	for _, cap := range []int{30, 50, 64, 200} {
		out, err := readAllMST(NewMSTReader(bytes.NewReader(data), Options{}), cap)
		if err != nil {
			t.Fatal(err)
		}
		if d := batchEqual(in, out); d != "" {
			t.Errorf("batch capacity %d: %s", cap, d)
		}
	}
}
