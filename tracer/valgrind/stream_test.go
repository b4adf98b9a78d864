package valgrind

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/memspy/memspy/trace"
	vt "github.com/memspy/memspy/tracer/valgrind/valgrindtest"
)

// ev is one decoded event, for comparisons. Extended events have Size 0
// (not their Ext index) and their details in X.
type ev struct {
	K    trace.Kind
	Addr uint64
	Size uint32
	PC   uint64
	T    uint32
	X    xev
}

// xev is a comparable copy of a trace.Ext.
type xev struct {
	Size  uint64
	SP    uint64
	Stack string // stackString of the call stack
	Type  uint64
	Name  string
	Mark  trace.MarkKind
	Sync  trace.SyncKind
}

// stackString returns a call stack as text: "" when empty.
func stackString(s []uint64) string {
	if len(s) == 0 {
		return ""
	}
	return fmt.Sprintf("%x", s)
}

// acc returns an access event (or an instruction fetch).
func acc(k trace.Kind, addr uint64, size uint32, pc uint64, tid uint32) ev {
	return ev{K: k, Addr: addr, Size: size, PC: pc, T: tid}
}

// ext returns an extended event.
func ext(k trace.Kind, addr, pc uint64, tid uint32, x xev) ev {
	return ev{K: k, Addr: addr, PC: pc, T: tid, X: x}
}

// readAll decodes the whole stream with batches of capacity c and returns
// the events and the error that ended it (nil after END). It checks that
// the extended events of each batch index its Ext in order.
func readAll(t testing.TB, r *StreamReader, c int) ([]ev, error) {
	t.Helper()
	b := trace.NewBatch(c)
	var evs []ev
	for range 1 << 24 {
		err := r.Read(b)
		if b.Len() > c {
			t.Fatalf("batch of capacity %d holds %d events", c, b.Len())
		}
		next := 0 // the Ext index of the next extended event
		for i := range b.Len() {
			e := ev{b.Kind[i], b.Addr[i], b.Size[i], b.PC[i], b.Thread[i], xev{}}
			if e.K.IsExtended() {
				if int(e.Size) != next || next >= len(b.Ext) {
					t.Fatalf("extended event %d of the batch has Ext index %d, want %d (of %d)", i, e.Size, next, len(b.Ext))
				}
				next++
				x := b.ExtOf(i)
				e.Size, e.X = 0, xev{x.Size, x.SP, stackString(x.Stack), x.Type, x.Name, x.Mark, x.Sync}
			}
			evs = append(evs, e)
		}
		if next != len(b.Ext) {
			t.Fatalf("batch of %d extended events has %d Ext", next, len(b.Ext))
		}
		if err == io.EOF {
			if b.Len() != 0 {
				t.Fatalf("io.EOF with %d events", b.Len())
			}
			return evs, nil
		}
		if err != nil {
			if err2 := r.Read(b); err2 != err || b.Len() != 0 || len(b.Ext) != 0 {
				t.Fatalf("error not sticky: %v, then %v with %d events", err, err2, b.Len())
			}
			return evs, err
		}
		if b.Len() == 0 {
			t.Fatalf("Read returned no events and no error")
		}
	}
	t.Fatal("the reader does not end")
	return nil, nil
}

func decode(t testing.TB, data []byte, c int) ([]ev, error) {
	return readAll(t, NewStreamReader(bytes.NewReader(data)), c)
}

// sampleStream is a stream using every record type, entry kind and exit.
func sampleStream() ([]byte, []ev) {
	var s vt.Stream
	s.Header(vt.FlagIFetch|vt.FlagCalls, 4242).Thread(100)
	s.String(1, "malloc").String(2, "free").String(3, "12345678").String(4, "").String(5, "phase one")
	s.String(8, "/usr/bin/prog").Map(8, 0x1000, 0x1008) // the executable
	s.Describe(1,
		vt.Entry{Kind: vt.IFetch, Size: 4, PC: 0x1000},
		vt.Entry{Kind: vt.Read, Size: 8, PC: 0x1000},
		vt.Entry{Kind: vt.Exit, PC: 0x1000},
		vt.Entry{Kind: vt.IFetch, Size: 3, PC: 0x1004},
		vt.Entry{Kind: vt.Write, Size: 4, PC: 0x1004},
		vt.Entry{Kind: vt.Modify, Size: 2, PC: 0x1004},
		vt.Entry{Kind: vt.Exit, PC: 0x1004},
		vt.Entry{Kind: vt.IFetch, Size: 1, PC: 0x1007},
	)
	s.Exec(1, 2, 0xa0, 0xb0, 0xc0) // ran to the end
	s.Exec(1, 0, 0xa8)             // exit 0: ifetch, read
	s.Thread(101)
	s.Exec(1, 1, 0xd0, 0xe0, 0xf0) // exit 1: everything but the last ifetch
	// A library loaded later.
	s.String(9, "/tmp/plugin.so").Map(9, 0x2000, 0x6000)
	s.Describe(7, vt.Entry{Kind: vt.Exit, PC: 0x2000}, vt.Entry{Kind: vt.Read, Size: 16, PC: 0x2000})
	s.Exec(7, 0)       // no events
	s.Exec(7, 1, 0x99) // one read
	// A call: it pushes the return address, then goes to 0x4000.
	s.Describe(8,
		vt.Entry{Kind: vt.IFetch, Size: 5, PC: 0x3000},
		vt.Entry{Kind: vt.Write, Size: 8, PC: 0x3000},
		vt.Entry{Kind: vt.Call, PC: 0x3000},
	)
	s.ExecFinal(8, 0, 0x4000, 0x7ff0, 0x7ff0)
	s.Alloc(1, 0x10000, 48, 0x4004, 0x3004, 0x2004)
	s.String(11, "runtime.mallocgc").AllocType(11, 0x10040, 16, 0x4a2380, 0x4005)
	// A return, after a side exit.
	s.Describe(9,
		vt.Entry{Kind: vt.Exit, PC: 0x4010},
		vt.Entry{Kind: vt.IFetch, Size: 1, PC: 0x4018},
		vt.Entry{Kind: vt.Read, Size: 8, PC: 0x4018},
		vt.Entry{Kind: vt.Return, PC: 0x4018},
	)
	s.Exec(9, 0) // left by the side exit: no return
	s.ExecFinal(9, 1, 0x3005, 0x7ff8, 0x7ff0)
	s.Free(2, 0x10000, 48, 0x3010)
	s.Alloc(0, 0x20000, 0) // no name, no stack
	s.Describe(10, vt.Entry{Kind: vt.Return, PC: 0x5000})
	s.ExecFinal(10, 0, 0x6000, 0x8000)
	s.Mark(int(trace.MarkRange), 3, 0x10000, 48)
	s.Mark(int(trace.MarkRegionBegin), 4, 0, 0)
	s.Mark(int(trace.MarkStop), 0, 0, 0)
	s.String(6, "seventeen bytes!!")
	s.Mark(int(trace.MarkDump), 6, 0, 0)
	s.Mark(int(trace.MarkDump), 5, 0, 0) // a name defined long before
	// Atomics (a sync event then a modify), and synchronization records.
	s.Describe(11,
		vt.Entry{Kind: vt.IFetch, Size: 4, PC: 0x7000},
		vt.Entry{Kind: vt.Read, Size: 8, PC: 0x7000},
		vt.Entry{Kind: vt.Atomic, Size: 8, PC: 0x7004},
		vt.Entry{Kind: vt.Exit, PC: 0x7004},
		vt.Entry{Kind: vt.Atomic, Size: 4, PC: 0x7008},
	)
	s.Exec(11, 1, 0xaa0, 0xbb0, 0xcc0) // ran to the end
	s.Thread(102)
	s.Exec(11, 0, 0xdd0, 0xee0) // exit 0: the fetch, the read, the first atomic
	s.Sync(int(trace.SyncAcquire), 0x600, 1, 0x7010)
	s.Sync(int(trace.SyncBarrierArrive), 0x700, 4, 0x7020)
	s.Sync(int(trace.SyncStart), 0x7ff0, 1<<64-1, 0x7030)
	// References left out (a sampling gap): none makes no event.
	s.Skip(12345).Skip(0).Thread(103).Skip(1<<60 - 1)
	// Addresses derived from others: data entries 1, 2 and 3 follow from
	// data entry 0, 5 from 4.
	s.Describe(12,
		vt.Entry{Kind: vt.IFetch, Size: 4, PC: 0x8000},
		vt.Entry{Kind: vt.Read, Size: 8, PC: 0x8000},
		vt.Entry{Kind: vt.Write, Size: 8, PC: 0x8004, Derived: true},
		vt.Entry{Kind: vt.Exit, PC: 0x8004},
		vt.Entry{Kind: vt.Read, Size: 8, PC: 0x8008, Derived: true, Off: 8},
		vt.Entry{Kind: vt.Atomic, Size: 4, PC: 0x800c, Derived: true, Off: 1<<64 - 8},
		vt.Entry{Kind: vt.Modify, Size: 2, PC: 0x8010},
		vt.Entry{Kind: vt.Read, Size: 1, PC: 0x8014, Derived: true, Base: 4, Off: 16},
	)
	s.Exec(12, 1, 0x1000, 0x2000) // ran to the end
	s.Exec(12, 0, 0x3000)         // exit 0
	s.End(3)
	want := []ev{
		ext(trace.Map, 0x1000, 0, 100, xev{Size: 0x1008, Name: "/usr/bin/prog"}),
		acc(trace.IFetch, 0x1000, 4, 0x1000, 100),
		acc(trace.Read, 0xa0, 8, 0x1000, 100),
		acc(trace.IFetch, 0x1004, 3, 0x1004, 100),
		acc(trace.Write, 0xb0, 4, 0x1004, 100),
		acc(trace.Modify, 0xc0, 2, 0x1004, 100),
		acc(trace.IFetch, 0x1007, 1, 0x1007, 100),

		acc(trace.IFetch, 0x1000, 4, 0x1000, 100),
		acc(trace.Read, 0xa8, 8, 0x1000, 100),

		acc(trace.IFetch, 0x1000, 4, 0x1000, 101),
		acc(trace.Read, 0xd0, 8, 0x1000, 101),
		acc(trace.IFetch, 0x1004, 3, 0x1004, 101),
		acc(trace.Write, 0xe0, 4, 0x1004, 101),
		acc(trace.Modify, 0xf0, 2, 0x1004, 101),

		ext(trace.Map, 0x2000, 0, 101, xev{Size: 0x6000, Name: "/tmp/plugin.so"}),
		acc(trace.Read, 0x99, 16, 0x2000, 101),

		acc(trace.IFetch, 0x3000, 5, 0x3000, 101),
		acc(trace.Write, 0x7ff0, 8, 0x3000, 101),
		ext(trace.Call, 0x4000, 0x3000, 101, xev{SP: 0x7ff0}),
		ext(trace.Alloc, 0x10000, 0x4004, 101, xev{Size: 48, Stack: "[4004 3004 2004]", Name: "malloc"}),
		ext(trace.Alloc, 0x10040, 0x4005, 101, xev{Size: 16, Stack: "[4005]", Type: 0x4a2380, Name: "runtime.mallocgc"}),

		acc(trace.IFetch, 0x4018, 1, 0x4018, 101),
		acc(trace.Read, 0x7ff0, 8, 0x4018, 101),
		ext(trace.Return, 0x3005, 0x4018, 101, xev{SP: 0x7ff8}),
		ext(trace.Free, 0x10000, 0x3010, 101, xev{Size: 48, Stack: "[3010]", Name: "free"}),
		ext(trace.Alloc, 0x20000, 0, 101, xev{}),
		ext(trace.Return, 0x6000, 0x5000, 101, xev{SP: 0x8000}),

		ext(trace.Marker, 0x10000, 0, 101, xev{Mark: trace.MarkRange, Name: "12345678", Size: 48}),
		ext(trace.Marker, 0, 0, 101, xev{Mark: trace.MarkRegionBegin}),
		ext(trace.Marker, 0, 0, 101, xev{Mark: trace.MarkStop}),
		ext(trace.Marker, 0, 0, 101, xev{Mark: trace.MarkDump, Name: "seventeen bytes!!"}),
		ext(trace.Marker, 0, 0, 101, xev{Mark: trace.MarkDump, Name: "phase one"}),

		acc(trace.IFetch, 0x7000, 4, 0x7000, 101),
		acc(trace.Read, 0xaa0, 8, 0x7000, 101),
		ext(trace.Sync, 0xbb0, 0x7004, 101, xev{Sync: trace.SyncAtomic}),
		acc(trace.Modify, 0xbb0, 8, 0x7004, 101),
		ext(trace.Sync, 0xcc0, 0x7008, 101, xev{Sync: trace.SyncAtomic}),
		acc(trace.Modify, 0xcc0, 4, 0x7008, 101),
		acc(trace.IFetch, 0x7000, 4, 0x7000, 102),
		acc(trace.Read, 0xdd0, 8, 0x7000, 102),
		ext(trace.Sync, 0xee0, 0x7004, 102, xev{Sync: trace.SyncAtomic}),
		acc(trace.Modify, 0xee0, 8, 0x7004, 102),
		ext(trace.Sync, 0x600, 0x7010, 102, xev{Sync: trace.SyncAcquire, Size: 1}),
		ext(trace.Sync, 0x700, 0x7020, 102, xev{Sync: trace.SyncBarrierArrive, Size: 4}),
		ext(trace.Sync, 0x7ff0, 0x7030, 102, xev{Sync: trace.SyncStart, Size: 1<<64 - 1}),
		acc(trace.Skip, 12345, 0, 0, 102),
		acc(trace.Skip, 1<<60-1, 0, 0, 103),
		acc(trace.IFetch, 0x8000, 4, 0x8000, 103),
		acc(trace.Read, 0x1000, 8, 0x8000, 103),
		acc(trace.Write, 0x1000, 8, 0x8004, 103),
		acc(trace.Read, 0x1008, 8, 0x8008, 103),
		ext(trace.Sync, 0xff8, 0x800c, 103, xev{Sync: trace.SyncAtomic}),
		acc(trace.Modify, 0xff8, 4, 0x800c, 103),
		acc(trace.Modify, 0x2000, 2, 0x8010, 103),
		acc(trace.Read, 0x2010, 1, 0x8014, 103),
		acc(trace.IFetch, 0x8000, 4, 0x8000, 103),
		acc(trace.Read, 0x3000, 8, 0x8000, 103),
		acc(trace.Write, 0x3000, 8, 0x8004, 103),
	}
	return s.Bytes(), want
}

func TestStreamRecords(t *testing.T) {
	data, want := sampleStream()
	for _, size := range []int{40, bufSize} {
		for _, c := range []int{1, 2, 3, 4, 5, 4096} {
			t.Run(fmt.Sprintf("buf%d/cap%d", size, c), func(t *testing.T) {
				var in io.Reader = bytes.NewReader(data)
				if size < bufSize {
					in = iotest.OneByteReader(in)
				}
				r := newStreamReaderSize(in, size)
				got, err := readAll(t, r, c)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("events (-want +got):\n%s", d)
				}
				if code, ok := r.Ended(); !ok || code != 3 {
					t.Errorf("Ended() = %d, %v; want 3, true", code, ok)
				}
				if r.Pid() != 4242 || !r.IFetch() || !r.Calls() || r.Events() != uint64(len(want)) || r.Format() != "valgrind" {
					t.Errorf("Pid %d IFetch %v Calls %v Events %d Format %q", r.Pid(), r.IFetch(), r.Calls(), r.Events(), r.Format())
				}
				if r.Err() != nil || r.Offset() != int64(len(data)) {
					t.Errorf("Err() = %v, Offset() = %d of %d", r.Err(), r.Offset(), len(data))
				}
			})
		}
	}
}

// The header's flags are reported as they are.
func TestStreamFlags(t *testing.T) {
	for flags := range uint64(4) {
		r := NewStreamReader(bytes.NewReader(new(vt.Stream).Header(flags, 1).End(0).Bytes()))
		if _, err := readAll(t, r, 8); err != nil {
			t.Fatal(err)
		}
		if r.IFetch() != (flags&vt.FlagIFetch != 0) || r.Calls() != (flags&vt.FlagCalls != 0) {
			t.Errorf("flags %d: IFetch %v Calls %v", flags, r.IFetch(), r.Calls())
		}
	}
}

// A zero-capacity batch gets room for trace.BatchSize events.
func TestStreamZeroBatch(t *testing.T) {
	data, want := sampleStream()
	r := NewStreamReader(bytes.NewReader(data))
	var b trace.Batch
	if err := r.Read(&b); err != nil || b.Len() != len(want) {
		t.Fatalf("Read into an empty batch: %v, %d events", err, b.Len())
	}
}

// An EXEC record whose events fill a batch exactly before its final call
// or return delivers the call or return first in the next batch; every
// batch is filled while events remain.
func TestStreamFinalAcrossBatches(t *testing.T) {
	var s vt.Stream
	s.Header(vt.FlagCalls, 1).Thread(7)
	s.Describe(1,
		vt.Entry{Kind: vt.Read, Size: 8, PC: 0x10},
		vt.Entry{Kind: vt.IFetch, Size: 4, PC: 0x14},
		vt.Entry{Kind: vt.Write, Size: 8, PC: 0x14},
		vt.Entry{Kind: vt.Call, PC: 0x14},
	)
	s.Describe(2, vt.Entry{Kind: vt.Return, PC: 0x20})
	s.ExecFinal(1, 0, 0x100, 0x200, 0xa, 0xb)
	s.ExecFinal(2, 0, 0x300, 0x400)
	s.ExecFinal(2, 0, 0x500, 0x600)
	s.ExecFinal(1, 0, 0x700, 0x800, 0xc, 0xd)
	data := s.End(0).Bytes()
	call := func(to, sp uint64) ev { return ext(trace.Call, to, 0x14, 7, xev{SP: sp}) }
	ret := func(to, sp uint64) ev { return ext(trace.Return, to, 0x20, 7, xev{SP: sp}) }
	want := []ev{
		acc(trace.Read, 0xa, 8, 0x10, 7), acc(trace.IFetch, 0x14, 4, 0x14, 7), acc(trace.Write, 0xb, 8, 0x14, 7), call(0x100, 0x200),
		ret(0x300, 0x400),
		ret(0x500, 0x600),
		acc(trace.Read, 0xc, 8, 0x10, 7), acc(trace.IFetch, 0x14, 4, 0x14, 7), acc(trace.Write, 0xd, 8, 0x14, 7), call(0x700, 0x800),
	}
	for _, size := range []int{32, 40, 48, 56, bufSize} {
		for c := 1; c <= len(want)+1; c++ {
			r := newStreamReaderSize(iotest.HalfReader(bytes.NewReader(data)), size)
			b := trace.NewBatch(c)
			var got []ev
			for {
				err := r.Read(b)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("buffer %d, cap %d: %v", size, c, err)
				}
				if b.Len() != min(c, len(want)-len(got)) {
					t.Fatalf("buffer %d, cap %d: a batch of %d events after %d", size, c, b.Len(), len(got))
				}
				for i := range b.Len() {
					e := acc(b.Kind[i], b.Addr[i], b.Size[i], b.PC[i], b.Thread[i])
					if e.K.IsExtended() {
						x := b.ExtOf(i)
						e.Size, e.X = 0, xev{x.Size, x.SP, stackString(x.Stack), x.Type, x.Name, x.Mark, x.Sync}
					}
					got = append(got, e)
				}
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("buffer %d, cap %d: events (-want +got):\n%s", size, c, d)
			}
		}
	}
}

// The largest STRING and call stack are read, whatever the buffer size.
func TestStreamLimits(t *testing.T) {
	long := strings.Repeat("abcdefg", MaxString/7) + "xyz"[:MaxString%7]
	stack := make([]uint64, MaxStackDepth)
	for i := range stack {
		stack[i] = uint64(0x400000 + i)
	}
	var s vt.Stream
	s.Header(0, 1).Thread(1).String(1<<28-1, long).Alloc(1<<28-1, 0x1000, 16, stack...).Free(0, 0x1000, 16, stack...)
	s.Mark(int(trace.MarkRange), 1<<28-1, 0x1000, 16)
	s.Map(1<<28-1, 1<<64-1, 1<<64-1)
	data := s.End(0).Bytes()
	want := []ev{
		ext(trace.Alloc, 0x1000, 0x400000, 1, xev{Size: 16, Stack: stackString(stack), Name: long}),
		ext(trace.Free, 0x1000, 0x400000, 1, xev{Size: 16, Stack: stackString(stack)}),
		ext(trace.Marker, 0x1000, 0, 1, xev{Size: 16, Name: long, Mark: trace.MarkRange}),
		ext(trace.Map, 1<<64-1, 0, 1, xev{Size: 1<<64 - 1, Name: long}),
	}
	if len(long) != MaxString {
		t.Fatalf("a string of %d bytes", len(long))
	}
	for _, size := range []int{32, 100, bufSize} {
		got, err := readAll(t, newStreamReaderSize(iotest.HalfReader(bytes.NewReader(data)), size), 2)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("buffer %d: events (-want +got):\n%s", size, d)
		}
	}
	checkStream(t, data, 64)
}

func TestStreamErrors(t *testing.T) {
	head := func() *vt.Stream {
		var s vt.Stream
		s.Header(0, 1).Thread(1).Describe(5, vt.Entry{Kind: vt.Read, Size: 8, PC: 1}, vt.Entry{Kind: vt.Exit})
		return &s
	}
	// head is 32 + 8 + 16 + 32 = 88 bytes. callHead adds superblock 6,
	// a read and a call: 136 bytes.
	callHead := func() *vt.Stream {
		return head().Describe(6, vt.Entry{Kind: vt.Read, Size: 8, PC: 2}, vt.Entry{Kind: vt.Call, PC: 3})
	}
	// atomicHead adds superblock 7, a read and an atomic: 136 bytes.
	atomicHead := func() *vt.Stream {
		return head().Describe(7, vt.Entry{Kind: vt.Read, Size: 8, PC: 2}, vt.Entry{Kind: vt.Atomic, Size: 8, PC: 3})
	}
	noEnd := func(n int) string {
		return fmt.Sprintf("the memspy Valgrind tool's stream ended without its END record after %d bytes (the tool died or the program was killed)", n)
	}
	corrupt := func(off int, msg string) string {
		return fmt.Sprintf("corrupt memspy Valgrind tool stream at byte %d: %s", off, msg)
	}
	cut := func(s *vt.Stream, n int) []byte { return s.Bytes()[:n] }
	for _, tc := range []struct {
		name   string
		stream []byte
		events int
		want   string
		is     error
	}{
		{"empty", nil, 0, "the memspy Valgrind tool's stream is empty: the tool did not start (see valgrind's messages)", ErrNoEnd},
		{"short header", []byte("memspyVG\x02"), 0, "the memspy Valgrind tool's stream ended in its header after 9 bytes (the tool died)", ErrNoEnd},
		{"magic", new(vt.Stream).Word(0x1234).Word(2).Word(0).Word(0).End(0).Bytes(), 0,
			`corrupt memspy Valgrind tool stream at byte 0: bad magic "4\x12\x00\x00\x00\x00\x00\x00", want "memspyVG": not a memspy Valgrind tool stream`, ErrCorrupt},
		{"version 1", new(vt.Stream).HeaderVersion(1, 0, 1).End(0).Bytes(), 0,
			"the memspy Valgrind tool speaks stream version 1, this memspy reads version 13: rebuild with make", ErrVersion},
		{"version 2", new(vt.Stream).HeaderVersion(2, 0, 1).End(0).Bytes(), 0,
			"the memspy Valgrind tool speaks stream version 2, this memspy reads version 13: rebuild with make", ErrVersion},
		{"version 3", new(vt.Stream).HeaderVersion(3, 0, 1).End(0).Bytes(), 0,
			"the memspy Valgrind tool speaks stream version 3, this memspy reads version 13: rebuild with make", ErrVersion},
		{"version 4", new(vt.Stream).HeaderVersion(4, 0, 1).End(0).Bytes(), 0,
			"the memspy Valgrind tool speaks stream version 4, this memspy reads version 13: rebuild with make", ErrVersion},
		{"version 5", new(vt.Stream).HeaderVersion(5, 0, 1).End(0).Bytes(), 0,
			"the memspy Valgrind tool speaks stream version 5, this memspy reads version 13: rebuild with make", ErrVersion},
		{"version 6", new(vt.Stream).HeaderVersion(6, 0, 1).End(0).Bytes(), 0,
			"the memspy Valgrind tool speaks stream version 6, this memspy reads version 13: rebuild with make", ErrVersion},
		{"version 7", new(vt.Stream).HeaderVersion(7, 0, 1).End(0).Bytes(), 0,
			"the memspy Valgrind tool speaks stream version 7, this memspy reads version 13: rebuild with make", ErrVersion},
		{"version 8", new(vt.Stream).HeaderVersion(8, 0, 1).End(0).Bytes(), 0,
			"the memspy Valgrind tool speaks stream version 8, this memspy reads version 13: rebuild with make", ErrVersion},
		{"version 9", new(vt.Stream).HeaderVersion(9, 0, 1).End(0).Bytes(), 0,
			"the memspy Valgrind tool speaks stream version 9, this memspy reads version 13: rebuild with make", ErrVersion},
		{"version 10", new(vt.Stream).HeaderVersion(10, 0, 1).End(0).Bytes(), 0,
			"the memspy Valgrind tool speaks stream version 10, this memspy reads version 13: rebuild with make", ErrVersion},
		{"version 11", new(vt.Stream).HeaderVersion(11, 0, 1).End(0).Bytes(), 0,
			"the memspy Valgrind tool speaks stream version 11, this memspy reads version 13: rebuild with make", ErrVersion},
		{"version 12", new(vt.Stream).HeaderVersion(12, 0, 1).End(0).Bytes(), 0,
			"the memspy Valgrind tool speaks stream version 12, this memspy reads version 13: rebuild with make", ErrVersion},
		{"version 14", new(vt.Stream).HeaderVersion(14, 0, 1).End(0).Bytes(), 0,
			"the memspy Valgrind tool speaks stream version 14, this memspy reads version 13: rebuild with make", ErrVersion},
		{"record type", head().Exec(5, 1, 0x10).Word(14<<60 | 5).Bytes(), 1,
			corrupt(104, "unknown record type 14 (word 0xe000000000000005)"), ErrCorrupt},
		{"unknown superblock", head().Exec(6, 0).Bytes(), 0,
			corrupt(88, "EXEC of superblock 6, which was not described"), ErrCorrupt},
		{"exit", head().Exec(5, 2, 0x10).Bytes(), 0,
			corrupt(88, "EXEC of superblock 5 takes exit 2, but it has 1 exits (exit 1 means it ran to its end)"), ErrCorrupt},
		{"count", head().Word(2<<60 | 9<<16).Word(1<<20 + 1).Bytes(), 0,
			corrupt(88, "superblock 9 has 1048577 entries, at most 1048576 allowed"), ErrCorrupt},
		{"huge count", head().Word(2<<60 | 9<<16).Word(1<<32 - 1).Bytes(), 0,
			corrupt(88, "superblock 9 has 4294967295 entries, at most 1048576 allowed"), ErrCorrupt},
		{"derived count", head().Word(2<<60 | 9<<16).Word(1<<63 | 3).Bytes(), 0,
			corrupt(88, "superblock 9 has 2147483648 derived entries among 3"), ErrCorrupt},
		{"reserved entry bits", head().Describe(9, vt.Entry{Kind: vt.Read}, vt.Entry{Kind: vt.Read, Size: 1 << 25}).Bytes(), 0,
			corrupt(120, "entry 1 of superblock 9 has reserved bits set (word 0x0000000200000000)"), ErrCorrupt},
		{"base without derived", head().Word(2<<60 | 9<<16).Word(2).Word(0).Word(0).Word(1 << 40).Word(0).Bytes(), 0,
			corrupt(120, "entry 1 of superblock 9 has reserved bits set (word 0x0000010000000000)"), ErrCorrupt},
		{"derived from itself", head().Describe(9, vt.Entry{Kind: vt.Read}, vt.Entry{Kind: vt.Write, Derived: true, Base: 1}).Bytes(), 0,
			corrupt(120, "entry 1 of superblock 9 derives its address from data entry 1, which is not an earlier data entry with an address word"), ErrCorrupt},
		{"derived from derived", head().Describe(9, vt.Entry{Kind: vt.Read}, vt.Entry{Kind: vt.Write, Derived: true}, vt.Entry{Kind: vt.Read, Derived: true, Base: 1}).Bytes(), 0,
			corrupt(136, "entry 2 of superblock 9 derives its address from data entry 1, which is not an earlier data entry with an address word"), ErrCorrupt},
		{"derived fetch", head().Describe(9, vt.Entry{Kind: vt.Read}, vt.Entry{Kind: vt.IFetch, Derived: true}).Bytes(), 0,
			corrupt(120, "entry 1 of superblock 9 derives its address from data entry 0, which is not an earlier data entry with an address word"), ErrCorrupt},
		{"derived exit", head().Describe(9, vt.Entry{Kind: vt.Read}, vt.Entry{Kind: vt.Exit, Derived: true}).Bytes(), 0,
			corrupt(120, "entry 1 of superblock 9 derives its address from data entry 0, which is not an earlier data entry with an address word"), ErrCorrupt},
		{"derived miscount", head().Word(2<<60 | 9<<16).Word(1<<32 | 1).Word(0).Word(1).Word(0).Bytes(), 0,
			corrupt(88, "superblock 9 says it has 1 derived entries, and has 0"), ErrCorrupt},
		{"cut in offsets", cut(head().Describe(9, vt.Entry{Kind: vt.Read}, vt.Entry{Kind: vt.Write, Derived: true, Off: 8}), 140), 0, noEnd(140), ErrNoEnd},
		{"entry kind", head().Describe(9, vt.Entry{Kind: vt.Read}, vt.Entry{Kind: 8}).Bytes(), 0,
			corrupt(120, "entry 1 of superblock 9 has unknown kind 8"), ErrCorrupt},
		{"entry after return", head().Describe(9, vt.Entry{Kind: vt.Return}, vt.Entry{Kind: vt.Atomic}).Bytes(), 0,
			corrupt(120, "entry 1 of superblock 9 follows its final call or return"), ErrCorrupt},
		{"entry after call", head().Describe(9, vt.Entry{Kind: vt.Read}, vt.Entry{Kind: vt.Call}, vt.Entry{Kind: vt.Read}).Bytes(), 0,
			corrupt(136, "entry 2 of superblock 9 follows its final call or return"), ErrCorrupt},
		{"exit after return", head().Describe(9, vt.Entry{Kind: vt.Return}, vt.Entry{Kind: vt.Exit}).Bytes(), 0,
			corrupt(120, "entry 1 of superblock 9 follows its final call or return"), ErrCorrupt},
		{"return after call", head().Describe(9, vt.Entry{Kind: vt.Call}, vt.Entry{Kind: vt.Return}).Bytes(), 0,
			corrupt(120, "entry 1 of superblock 9 follows its final call or return"), ErrCorrupt},
		{"twice", head().Describe(5).Bytes(), 0,
			corrupt(88, "superblock 5 described twice"), ErrCorrupt},
		{"undefined alloc name", head().Exec(5, 1, 0x10).Alloc(3, 0x10, 8).Bytes(), 1,
			corrupt(104, "record names string 3, which was not defined"), ErrCorrupt},
		{"free names a later string", head().Free(3, 0x10, 8, 0x20).String(3, "free").Bytes(), 0,
			corrupt(88, "record names string 3, which was not defined"), ErrCorrupt},
		{"undefined mark name", head().String(1, "a").Mark(int(trace.MarkRange), 2, 0x10, 8).Bytes(), 0,
			corrupt(104, "record names string 2, which was not defined"), ErrCorrupt},
		{"undefined map path", head().Exec(5, 1, 0x10).String(1, "/lib/a.so").Map(2, 0x1000, 0x100).Bytes(), 1,
			corrupt(128, "record names string 2, which was not defined"), ErrCorrupt},
		{"map names a later string", head().Map(1, 0x1000, 0x100).String(1, "/lib/a.so").Bytes(), 0,
			corrupt(88, "record names string 1, which was not defined"), ErrCorrupt},
		{"map without path", head().Map(0, 0x1000, 0x100).End(0).Bytes(), 0,
			corrupt(88, "MAP record without a path (string 0)"), ErrCorrupt},
		{"map low bits", head().String(1, "/lib/a.so").Word(8<<60 | 1<<16 | 3).Word(0x1000).Word(0x100).End(0).Bytes(), 0,
			corrupt(112, "MAP record with bits 15..0 set (word 0x8000000000010003)"), ErrCorrupt},
		{"string id 0", head().String(0, "x").Bytes(), 0,
			corrupt(88, "STRING record defines id 0 twice (or id 0)"), ErrCorrupt},
		{"string twice", head().String(4, "a").Exec(5, 1, 0x10).String(4, "b").Bytes(), 1,
			corrupt(120, "STRING record defines id 4 twice (or id 0)"), ErrCorrupt},
		{"string too long", head().Word(7<<60 | 1<<32 | (MaxString + 1)).Bytes(), 0,
			corrupt(88, "STRING record of 4097 bytes, at most 4096 allowed"), ErrCorrupt},
		{"string length", head().Word(7<<60 | 1<<32 | (1<<32 - 1)).Bytes(), 0,
			corrupt(88, "STRING record of 4294967295 bytes, at most 4096 allowed"), ErrCorrupt},
		{"alloc stack depth", head().Word(4<<60 | (MaxStackDepth + 1)).Word(0x10).Word(8).Bytes(), 0,
			corrupt(88, "an allocation record has a call stack of 257 frames, at most 256 allowed"), ErrCorrupt},
		{"free stack depth", head().Word(5<<60 | 0xffff).Bytes(), 0,
			corrupt(88, "an allocation record has a call stack of 65535 frames, at most 256 allowed"), ErrCorrupt},
		{"mark kind", head().Exec(5, 1, 0x10).Mark(11, 0, 0, 0).Bytes(), 1,
			corrupt(104, "MARK record of unknown kind 11"), ErrCorrupt},
		{"mark kind 256", head().Mark(0x100, 0, 0, 0).Bytes(), 0,
			corrupt(88, "MARK record of unknown kind 256"), ErrCorrupt},
		{"mark kind 65535", head().Mark(0xffff, 0, 0, 0).Bytes(), 0,
			corrupt(88, "MARK record of unknown kind 65535"), ErrCorrupt},
		{"sync kind", head().Exec(5, 1, 0x10).Sync(12, 0x100, 0, 0x1).Bytes(), 1,
			corrupt(104, "SYNC record of unknown kind 12"), ErrCorrupt},
		{"sync kind 255", head().Sync(255, 0x100, 0, 0x1).Bytes(), 0,
			corrupt(88, "SYNC record of unknown kind 255"), ErrCorrupt},
		{"sync reserved bits", head().Word(9<<60 | 1<<8 | 2).Word(0x100).Word(0).Word(1).Bytes(), 0,
			corrupt(88, "SYNC record with bits 59..8 set (word 0x9000000000000102)"), ErrCorrupt},
		{"sync high reserved bit", head().Word(9<<60 | 1<<59).Word(0x100).Word(0).Word(1).Bytes(), 0,
			corrupt(88, "SYNC record with bits 59..8 set (word 0x9800000000000000)"), ErrCorrupt},
		{"cut in sync", cut(head().Exec(5, 1, 0x10).Sync(0, 0x100, 0, 0x1), 128), 1, noEnd(128), ErrNoEnd},
		{"cut in unknown sync", cut(head().Sync(200, 0x100, 0, 0x1), 112), 0, noEnd(112), ErrNoEnd},
		{"cut before atomic", cut(atomicHead().Exec(7, 0, 0x10, 0x20), 152), 1, noEnd(152), ErrNoEnd},
		{"cut in atomic", cut(atomicHead().Exec(7, 0, 0x10, 0x20), 156), 1, noEnd(156), ErrNoEnd},
		{"no end after atomic", atomicHead().Exec(7, 0, 0x10, 0x20).Bytes(), 3, noEnd(160), ErrNoEnd},
		{"no end", head().Exec(5, 1, 0x10).Bytes(), 1, noEnd(104), ErrNoEnd},
		{"cut in exec", head().Exec(5, 1).Bytes(), 0, noEnd(96), ErrNoEnd},
		{"cut in word", cut(head().Exec(5, 1, 0x10), 100), 0, noEnd(100), ErrNoEnd},
		{"cut before target", cut(callHead().ExecFinal(6, 0, 0x40, 0x50, 0x10), 152), 1, noEnd(152), ErrNoEnd},
		{"cut in target", cut(callHead().ExecFinal(6, 0, 0x40, 0x50, 0x10), 155), 1, noEnd(155), ErrNoEnd},
		{"cut before sp", cut(callHead().ExecFinal(6, 0, 0x40, 0x50, 0x10), 160), 1, noEnd(160), ErrNoEnd},
		{"cut in sp", cut(callHead().ExecFinal(6, 0, 0x40, 0x50, 0x10), 167), 1, noEnd(167), ErrNoEnd},
		{"cut in alloc", cut(head().Exec(5, 1, 0x10).Alloc(0, 0x100, 8, 1, 2, 3), 112), 1, noEnd(112), ErrNoEnd},
		{"cut in alloc size", cut(head().Exec(5, 1, 0x10).Alloc(0, 0x100, 8, 1, 2, 3), 124), 1, noEnd(124), ErrNoEnd},
		{"cut in alloc type", cut(head().Exec(5, 1, 0x10).Alloc(0, 0x100, 8, 1, 2, 3), 132), 1, noEnd(132), ErrNoEnd},
		{"cut in alloc stack", cut(head().Exec(5, 1, 0x10).Alloc(0, 0x100, 8, 1, 2, 3), 152), 1, noEnd(152), ErrNoEnd},
		{"cut in free stack", cut(head().Exec(5, 1, 0x10).Free(0, 0x100, 8, 1, 2, 3), 148), 1, noEnd(148), ErrNoEnd},
		{"cut in mark", cut(head().Exec(5, 1, 0x10).Mark(0, 0, 0, 0), 120), 1, noEnd(120), ErrNoEnd},
		{"cut in map", cut(head().Exec(5, 1, 0x10).String(1, "/a.so").Map(1, 0x1000, 0x100), 128), 1, noEnd(128), ErrNoEnd},
		{"cut in map size", cut(head().Exec(5, 1, 0x10).String(1, "/a.so").Map(1, 0x1000, 0x100), 140), 1, noEnd(140), ErrNoEnd},
		{"cut in undefined map", cut(head().Map(7, 0x1000, 0x100), 100), 0, noEnd(100), ErrNoEnd},
		{"cut in string", cut(head().Exec(5, 1, 0x10).String(1, "0123456789"), 120), 1, noEnd(120), ErrNoEnd},
		{"cut in string padding", cut(head().Exec(5, 1, 0x10).String(1, "0123456789"), 126), 1, noEnd(126), ErrNoEnd},
		{"cut after string word", cut(head().Exec(5, 1, 0x10).String(1, "0123456789"), 112), 1, noEnd(112), ErrNoEnd},
		{"no end after string", head().Exec(5, 1, 0x10).String(1, "0123456789").Bytes(), 1, noEnd(128), ErrNoEnd},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range []int{1, 4096} {
				for _, small := range []bool{false, true} {
					var r *StreamReader
					if small {
						r = newStreamReaderSize(iotest.OneByteReader(bytes.NewReader(tc.stream)), 40)
					} else {
						r = NewStreamReader(bytes.NewReader(tc.stream))
					}
					evs, err := readAll(t, r, c)
					if err == nil || err.Error() != tc.want {
						t.Errorf("cap %d, small buffer %v: error\n%v\nwant\n%s", c, small, err, tc.want)
					}
					if !errors.Is(err, tc.is) {
						t.Errorf("cap %d, small buffer %v: %v is not %v", c, small, err, tc.is)
					}
					if len(evs) != tc.events {
						t.Errorf("cap %d, small buffer %v: %d events before the error, want %d", c, small, len(evs), tc.events)
					}
					if want, end := refDecode(tc.stream); end != errKind(err) || !slices.Equal(want, evs) {
						t.Errorf("cap %d, small buffer %v: the reference decoder says %s after %d events", c, small, end, len(want))
					}
				}
			}
		})
	}
}

// The version error names the tool's directory when Start made the reader.
func TestStreamVersionLib(t *testing.T) {
	r := NewStreamReader(bytes.NewReader(new(vt.Stream).HeaderVersion(StreamVersion+1, 0, 1).Bytes()))
	r.lib = "/opt/memspy/valgrind"
	fatal := 0
	r.onFatal = func() { fatal++ }
	err := r.Read(trace.NewBatch(8))
	want := fmt.Sprintf("the memspy Valgrind tool in /opt/memspy/valgrind speaks stream version %d, this memspy reads version %d: the tool and memspy disagree, rebuild both with make",
		StreamVersion+1, StreamVersion)
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	r.Read(trace.NewBatch(8))
	if fatal != 1 {
		t.Errorf("onFatal called %d times, want 1", fatal)
	}
}

// A read error other than EOF is reported with the offset.
func TestStreamReadError(t *testing.T) {
	data, _ := sampleStream()
	r := NewStreamReader(io.MultiReader(bytes.NewReader(data[:200]), iotest.ErrReader(errors.New("boom"))))
	_, err := readAll(t, r, 4096)
	if err == nil || err.Error() != "reading the memspy Valgrind tool's stream after 200 bytes: boom" {
		t.Errorf("got %v", err)
	}
}

// Cutting the stream anywhere (inside any record) delivers every complete
// event before the cut, as the reference decoder says, then an error
// matching ErrNoEnd; never a panic.
func TestStreamTruncated(t *testing.T) {
	data, want := sampleStream()
	for cut := range len(data) {
		ref, refEnd := refDecode(data[:cut])
		if refEnd != "noend" || len(ref) > len(want) || !slices.Equal(want[:len(ref)], ref) {
			t.Fatalf("cut at %d: the reference decoder says %s after %d events, not a prefix", cut, refEnd, len(ref))
		}
		for _, c := range []int{1, 3, 4096} {
			evs, err := readAll(t, newStreamReaderSize(iotest.OneByteReader(bytes.NewReader(data[:cut])), 40), c)
			if !errors.Is(err, ErrNoEnd) {
				t.Fatalf("cut at %d, cap %d: %v", cut, c, err)
			}
			if !slices.Equal(ref, evs) {
				t.Fatalf("cut at %d, cap %d: events (-want +got):\n%s", cut, c, cmp.Diff(ref, evs))
			}
			wantMsg := fmt.Sprintf("after %d bytes", cut)
			if cut >= 32 && !strings.Contains(err.Error(), wantMsg) {
				t.Fatalf("cut at %d: %v", cut, err)
			}
		}
	}
	// Cutting at the start of the END record delivers every event.
	evs, err := decode(t, data[:len(data)-8], 5)
	if !errors.Is(err, ErrNoEnd) || len(evs) != len(want) {
		t.Errorf("cut before END: %d events, want %d; %v", len(evs), len(want), err)
	}
}

// An EXEC record larger than the read buffer is delivered across refills,
// its final return included.
func TestStreamHugeExec(t *testing.T) {
	const n = 300_000 // 2.4 MB of addresses
	var s vt.Stream
	ents := make([]vt.Entry, 0, 2*n+1)
	for i := range n {
		ents = append(ents, vt.Entry{Kind: vt.IFetch, Size: 2, PC: uint64(i)}, vt.Entry{Kind: vt.Write, Size: 4, PC: uint64(i)})
	}
	ents = append(ents, vt.Entry{Kind: vt.Return, PC: n})
	addrs := make([]uint64, n)
	for i := range addrs {
		addrs[i] = uint64(i) * 3
	}
	s.Header(vt.FlagIFetch|vt.FlagCalls, 1).Thread(9).Describe(1, ents...)
	s.ExecFinal(1, 0, 0x1234, 0x5678, addrs...).ExecFinal(1, 0, 0x1234, 0x5678, addrs...).End(0)
	const per = 2*n + 1 // events per EXEC
	for _, c := range []int{4096, 3 * n} {
		evs, err := decode(t, s.Bytes(), c)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 2*per {
			t.Fatalf("%d events, want %d", len(evs), 2*per)
		}
		for i, e := range evs {
			j := i % per / 2
			w := acc(trace.IFetch, uint64(j), 2, uint64(j), 9)
			switch {
			case i%per == per-1:
				w = ext(trace.Return, 0x1234, n, 9, xev{SP: 0x5678})
			case i%per%2 == 1:
				w = acc(trace.Write, uint64(j)*3, 4, uint64(j), 9)
			}
			if e != w {
				t.Fatalf("event %d: %+v, want %+v", i, e, w)
			}
		}
	}
}

// Ids growing geometrically do not make the table grow with them.
func TestStreamIDGrowth(t *testing.T) {
	var s vt.Stream
	s.Header(0, 1)
	id := uint64(4000)
	for range 28 { // ids stay below 1<<44
		s.Describe(id, vt.Entry{Kind: vt.Read, Size: 1, PC: id})
		id = 2*id + 4096
	}
	r := NewStreamReader(bytes.NewReader(s.End(0).Bytes()))
	if _, err := readAll(t, r, 16); err != nil {
		t.Fatal(err)
	}
	if len(r.sbs) > 10000 || len(r.sbMap) < 20 {
		t.Errorf("table of %d, map of %d superblocks", len(r.sbs), len(r.sbMap))
	}
}

// Ids far apart go to the map, and are found there.
func TestStreamSparseIDs(t *testing.T) {
	var s vt.Stream
	s.Header(0, 1).Thread(1)
	ids := []uint64{0, 1, 1 << 43, 5000, 100_000, 1<<44 - 1, 3}
	for _, id := range ids {
		s.Describe(id, vt.Entry{Kind: vt.Read, Size: 1, PC: id})
	}
	for _, id := range ids {
		s.Exec(id, 0, id+1)
	}
	s.End(0)
	evs, err := decode(t, s.Bytes(), 4096)
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		if evs[i].PC != id || evs[i].Addr != id+1 {
			t.Errorf("event %d: %+v", i, evs[i])
		}
	}
}

// refDecode is a slow, obvious decoder of a complete stream in memory,
// the reference for the differential tests. It returns the events and
// what ended the stream: "end", "noend", "corrupt" or "version".
//
// A record is checked in this order: what its first word says of its own
// size (entry count, stack depth, string length, string id), then its
// words must all be there (else "noend"), then the rest of its contents
// (names, mark kinds, entry kinds). An EXEC delivers each event once the
// words it needs are there.
func refDecode(data []byte) ([]ev, string) { return refDecodeFold(data, 0) }

// refDerived counts the derived addresses the reference decoder delivered,
// for the tests to see that they exercise them.
var refDerived int

// refDecodeFold is refDecode with the instruction fetches of each EXEC
// folded into runs within aligned blocks of block bytes (0: none), as
// SetIFetchRuns does: a fetch inside one block joins the run of the
// execution's previous fetch when that is in the same block and no exit
// came between them.
func refDecodeFold(data []byte, block uint64) ([]ev, string) {
	return refDecodeAs(data, block, false, false)
}

// refDecodeAs is refDecodeFold, with spans in spans (a fetch joins a run
// only where its last fetch ended, the run's PC the ends of its
// instructions in the block), or with slim what a slim reader delivers of
// its calls, returns and atomics: no Call and Return events, and each
// atomic its Modify alone, which (being no synchronization) fetches may
// fold across. PCs and threads are the same.
func refDecodeAs(data []byte, block uint64, spans, slim bool) ([]ev, string) {
	word := func(i int) (uint64, bool) {
		if i+8 > len(data) {
			return 0, false
		}
		return binary.LittleEndian.Uint64(data[i:]), true
	}
	if len(data) < 32 {
		return nil, "noend"
	}
	if string(data[:8]) != "memspyVG" {
		return nil, "corrupt"
	}
	if v, _ := word(8); v != StreamVersion {
		return nil, "version"
	}
	if f, _ := word(16); f&flagRing != 0 {
		return nil, "corrupt" // no ring given
	} else if f&(flagL1|flagNotes) != 0 {
		return nil, "unmodelled" // (firstlevel_test.go, notes_test.go)
	}
	type ent struct{ w, pc, off uint64 }
	sbs := map[uint64][]ent{}
	strs := map[uint64]string{}
	var evs []ev
	var tid uint32
	for p := 32; ; {
		w, ok := word(p)
		if !ok {
			return evs, "noend"
		}
		p += 8
		switch w >> 60 {
		case 1: // EXEC
			d, ok := sbs[w>>16&(1<<44-1)]
			if !ok {
				return evs, "corrupt"
			}
			e, exits := int(w&0xffff), 0
			for _, x := range d {
				if x.w&0xff == 4 {
					exits++
				}
			}
			if e > exits {
				return evs, "corrupt"
			}
			// Fold the description's fetches first, as the decoder does.
			type fent struct {
				w, pc, off uint64
				run        uint32 // > 1: a run of this many fetches
				ends, next uint64 // with spans: the ends of its fetches, where the last ended
			}
			var fd []fent
			open := -1 // the run a fetch may join
			for _, x := range d {
				k, size := x.w&0xff, x.w>>8&0xffffff
				switch {
				case k == 4, k == 7 && !slim: // no run across an exit or an atomic
					open = -1
				case k != 2 || block == 0:
				case size == 0 || x.pc%block+size > block:
					open = -1
				case open >= 0 && fd[open].pc/block == x.pc/block && (!spans || fd[open].next == x.pc):
					fd[open].run = max(fd[open].run, 1) + 1
					fd[open].ends |= 1 << ((x.pc + size - 1) % block)
					fd[open].next = x.pc + size
					continue
				default:
					open = len(fd)
					fd = append(fd, fent{x.w, x.pc, x.off, 0, 1 << ((x.pc + size - 1) % block), x.pc + size})
					continue
				}
				fd = append(fd, fent{x.w, x.pc, x.off, 0, 0, 0})
			}
			var daddr []uint64 // the addresses of the data entries so far
			// dataAddr returns the address of the next data entry, x: derived
			// or the next word.
			dataAddr := func(x fent) (uint64, bool) {
				a, ok := x.off, true
				if x.w&(1<<32) != 0 {
					a += daddr[x.w>>40]
					refDerived++
				} else if a, ok = word(p); ok {
					p += 8
				}
				daddr = append(daddr, a)
				return a, ok
			}
		entries:
			for _, x := range fd {
				switch k := x.w & 0xff; k {
				case 4: // exit
					if e == 0 {
						break entries
					}
					e--
				case 5, 6: // call, return: the last entry, reached when it ran to its end
					target, ok1 := word(p)
					sp, ok2 := word(p + 8)
					if !ok1 || !ok2 {
						return evs, "noend"
					}
					p += 16
					kind := trace.Call
					if k == 6 {
						kind = trace.Return
					}
					if !slim {
						evs = append(evs, ext(kind, target, x.pc, tid, xev{SP: sp}))
					}
				case 7: // atomic: a sync event, then a modify, of one address
					a, ok := dataAddr(x)
					if !ok {
						return evs, "noend"
					}
					if !slim {
						evs = append(evs, ext(trace.Sync, a, x.pc, tid, xev{Sync: trace.SyncAtomic}))
					}
					evs = append(evs, acc(trace.Modify, a, uint32(x.w>>8&0xffffff), x.pc, tid))
				default:
					a := x.pc
					if k != 2 {
						if a, ok = dataAddr(x); !ok {
							return evs, "noend"
						}
					}
					if x.run > 1 {
						pc := x.pc
						if spans {
							pc = x.ends
						}
						evs = append(evs, acc(trace.IFetchRun, a, x.run, pc, tid))
					} else {
						evs = append(evs, acc(trace.Kind(k), a, uint32(x.w>>8&0xffffff), x.pc, tid))
					}
				}
			}
		case 2: // DESCRIBE
			id := w >> 16 & (1<<44 - 1)
			n, ok := word(p)
			if !ok {
				return evs, "noend"
			}
			p += 8
			n, nderived := n&(1<<32-1), n>>32
			if n > 1<<20 || nderived > n {
				return evs, "corrupt"
			}
			if _, dup := sbs[id]; dup {
				return evs, "corrupt"
			}
			var d []ent
			var direct []bool // per data entry: it has an address word
			for range n {
				e, ok1 := word(p)
				pc, ok2 := word(p + 8)
				if !ok1 || !ok2 {
					return evs, "noend"
				}
				if e&0xff > 7 || len(d) > 0 && (d[len(d)-1].w&0xff == 5 || d[len(d)-1].w&0xff == 6) {
					return evs, "corrupt"
				}
				data := e&0xff <= 3 && e&0xff != 2 || e&0xff == 7
				derived, base := e&(1<<32) != 0, e>>40
				if e>>33&0x7f != 0 || !derived && base != 0 ||
					derived && (!data || base >= uint64(len(direct)) || !direct[base]) {
					return evs, "corrupt"
				}
				if data {
					direct = append(direct, !derived)
				}
				d = append(d, ent{e, pc, 0})
				p += 16
			}
			var derived uint64
			for i := range d {
				if d[i].w&(1<<32) != 0 {
					derived++
				}
			}
			if derived != nderived {
				return evs, "corrupt"
			}
			for i := range d {
				if d[i].w&(1<<32) != 0 {
					off, ok := word(p)
					if !ok {
						return evs, "noend"
					}
					d[i].off = off
					p += 8
				}
			}
			sbs[id] = d
		case 3: // THREAD
			tid = uint32(w)
		case 4, 5, 6: // ALLOC, FREE, MARK
			name, low := w>>16&(1<<44-1), w&0xffff
			depth := 0
			if w>>60 != 6 {
				depth = int(low)
			}
			if depth > 256 {
				return evs, "corrupt"
			}
			head := 2 // address, size (ALLOC: and type), then the stack
			if w>>60 == 4 {
				head = 3
			}
			var ws []uint64
			for range head + depth {
				x, ok := word(p)
				if !ok {
					return evs, "noend"
				}
				ws = append(ws, x)
				p += 8
			}
			nm, ok := strs[name]
			if name != 0 && !ok {
				return evs, "corrupt"
			}
			if w>>60 == 6 {
				if low > 8 {
					return evs, "corrupt"
				}
				evs = append(evs, ext(trace.Marker, ws[0], 0, tid, xev{Size: ws[1], Name: nm, Mark: trace.MarkKind(low)}))
				continue
			}
			kind, pc, typ := trace.Alloc, uint64(0), uint64(0)
			if w>>60 == 5 {
				kind = trace.Free
			} else {
				typ = ws[2]
			}
			if depth > 0 {
				pc = ws[head]
			}
			evs = append(evs, ext(kind, ws[0], pc, tid, xev{Size: ws[1], Stack: stackString(ws[head:]), Type: typ, Name: nm}))
		case 8: // MAP
			addr, ok1 := word(p)
			size, ok2 := word(p + 8)
			if !ok1 || !ok2 {
				return evs, "noend"
			}
			p += 16
			name := w >> 16 & (1<<44 - 1)
			nm, ok := strs[name]
			if !ok || w&0xffff != 0 {
				return evs, "corrupt"
			}
			evs = append(evs, ext(trace.Map, addr, 0, tid, xev{Size: size, Name: nm}))
		case 9: // SYNC
			var ws [3]uint64 // address, argument, PC
			for i := range ws {
				if ws[i], ok = word(p); !ok {
					return evs, "noend"
				}
				p += 8
			}
			if w&(1<<60-1)>>8 != 0 || w&0xff >= 12 {
				return evs, "corrupt"
			}
			evs = append(evs, ext(trace.Sync, ws[0], ws[2], tid, xev{Size: ws[1], Sync: trace.SyncKind(w & 0xff)}))
		case 7: // STRING
			id, n := w>>32&(1<<28-1), int(w&0xffffffff)
			if n > 4096 { // MaxString, the .mst limit of names
				return evs, "corrupt"
			}
			if _, dup := strs[id]; id == 0 || dup {
				return evs, "corrupt"
			}
			padded := (n + 7) / 8 * 8
			if p+padded > len(data) {
				return evs, "noend"
			}
			strs[id] = string(data[p : p+n])
			p += padded
		case 10: // SKIP: references left out, none
			if n := w & (1<<60 - 1); n > 0 {
				evs = append(evs, acc(trace.Skip, n, 0, 0, tid))
			}
		case 15:
			return evs, "end"
		case 11: // PROC (see checkStreamFold)
			return evs, "unmodelled"
		default:
			return evs, "corrupt"
		}
	}
}

func errKind(err error) string {
	switch {
	case err == nil:
		return "end"
	case errors.Is(err, ErrNoEnd):
		return "noend"
	case errors.Is(err, ErrCorrupt):
		return "corrupt"
	case errors.Is(err, ErrVersion):
		return "version"
	}
	return "other: " + err.Error()
}

// randomStream returns a valid stream of random superblocks (some ending
// in calls or returns, some with atomics) and records: executions,
// threads, allocations with call stacks of 0 to 10 frames, marks and
// synchronizations of every kind, objects mapped, and strings (some long,
// some defined long before their use).
func randomStream(rng *rand.Rand) []byte {
	var s vt.Stream
	s.Header(uint64(rng.IntN(4)), 77).Thread(1)

	var names []uint64 // the string ids defined
	defined := map[uint64]bool{}
	str := func() {
		id := 1 + rng.Uint64N(1<<28-1)
		if rng.IntN(2) == 0 {
			id = uint64(1 + rng.IntN(100)) // small ids, as the tool makes
		}
		if defined[id] {
			return
		}
		defined[id] = true
		names = append(names, id)
		n := rng.IntN(20)
		switch rng.IntN(20) {
		case 0:
			n = rng.IntN(300)
		case 1:
			n = rng.IntN(2000)
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		s.String(id, string(b))
	}
	name := func() uint64 {
		if len(names) == 0 || rng.IntN(4) == 0 {
			return 0
		}
		return names[rng.IntN(len(names))]
	}

	type sb struct {
		exits []int // address words before each exit, and in all
		final bool  // it ends in a call or a return
	}
	var sbs []sb
	describe := func() {
		var ents []vt.Entry
		var d sb
		nw := 0
		var direct []uint64 // the data entries with address words
		data := 0
		pc := rng.Uint64()
		for range rng.IntN(12) {
			k := rng.IntN(6)
			if k == 5 {
				k = vt.Atomic
			}
			if rng.IntN(2) == 0 {
				pc = rng.Uint64()
			}
			e := vt.Entry{Kind: k, Size: uint32(rng.IntN(64)), PC: pc}
			if k == vt.IFetch {
				pc += uint64(rng.IntN(16)) // code: often in the same block as the last fetch
			}
			switch k {
			case vt.Exit:
				d.exits = append(d.exits, nw)
			case vt.Read, vt.Write, vt.Modify, vt.Atomic:
				if len(direct) > 0 && rng.IntN(3) == 0 {
					e.Derived, e.Base, e.Off = true, direct[rng.IntN(len(direct))], rng.Uint64()
					if rng.IntN(2) == 0 {
						e.Off = uint64(rng.IntN(129)) - 64 // near the base, as the tool's are
					}
				} else {
					direct = append(direct, uint64(data))
					nw++
				}
				data++
			}
			ents = append(ents, e)
		}
		d.exits = append(d.exits, nw)
		if rng.IntN(3) == 0 {
			ents = append(ents, vt.Entry{Kind: vt.Call + rng.IntN(2), PC: rng.Uint64()})
			d.final = true
		}
		s.Describe(uint64(len(sbs)+1), ents...)
		sbs = append(sbs, d)
	}

	for range rng.IntN(4) {
		str()
	}
	for range 1 + rng.IntN(6) {
		describe()
	}
	for range rng.IntN(60) {
		switch r := rng.IntN(20); {
		case r == 0:
			s.Thread(rng.Uint32())
		case r == 1:
			str()
		case r == 2:
			describe()
		case r <= 4:
			stack := make([]uint64, rng.IntN(11))
			for i := range stack {
				stack[i] = rng.Uint64()
			}
			if r == 3 {
				nm, a, size := name(), rng.Uint64(), rng.Uint64N(1<<20)
				s.AllocType(nm, a, size, size%2*a, stack...) // a type on every other one
			} else {
				s.Free(name(), rng.Uint64(), rng.Uint64N(1<<20), stack...)
			}
		case r == 5:
			s.Mark(rng.IntN(9), name(), rng.Uint64(), rng.Uint64())
		case r == 7:
			s.Sync(rng.IntN(12), rng.Uint64(), rng.Uint64(), rng.Uint64())
		case r == 8:
			switch n := rng.Uint64N(1 << 20); rng.IntN(4) {
			case 0:
				s.Skip(0) // no event
			case 1:
				s.Skip(1<<60 - 1) // the largest count
			default:
				s.Skip(n)
			}
		case r == 6:
			if len(names) == 0 {
				str()
			}
			if len(names) > 0 { // a path is never string 0
				s.Map(names[rng.IntN(len(names))], rng.Uint64(), rng.Uint64())
			}
		default:
			id := rng.IntN(len(sbs))
			e := rng.IntN(len(sbs[id].exits))
			addrs := make([]uint64, sbs[id].exits[e])
			for i := range addrs {
				addrs[i] = rng.Uint64()
			}
			if sbs[id].final && e == len(sbs[id].exits)-1 {
				s.ExecFinal(uint64(id+1), e, rng.Uint64(), rng.Uint64(), addrs...)
			} else {
				s.Exec(uint64(id+1), e, addrs...)
			}
		}
	}
	return s.End(rng.IntN(256)).Bytes()
}

// The decoder agrees with the reference on random streams, whole, cut and
// with a word overwritten, whatever the batch size and however the input
// is split into reads.
func TestStreamRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[string]int{} // what the streams exercise
	defer func() {
		for _, k := range []string{"end", "noend", "corrupt", "read", "write", "ifetch", "modify", "alloc", "free",
			"call", "return", "marker", "map", "sync", "skip", "stack", "deep stack", "name", "long name", "no name", "sp", "ifetch-run", "derived"} {
			if seen[k] == 0 {
				t.Errorf("the random streams have no %s", k)
			}
		}
		for m := range trace.MarkKind(9) {
			if seen[m.String()] == 0 {
				t.Errorf("the random streams have no %v marker", m)
			}
		}
		for k := range trace.SyncKind(12) {
			if seen[k.String()] == 0 {
				t.Errorf("the random streams have no %v sync event", k)
			}
		}
	}()
	for i := range 600 {
		data := randomStream(rng)
		derived := refDerived
		evs, end := refDecode(data)
		seen[end]++
		if refDerived > derived {
			seen["derived"]++
		}
		folded, _ := refDecodeFold(data, 16)
		for _, e := range folded {
			if e.K == trace.IFetchRun {
				seen["ifetch-run"]++
			}
		}
		for _, e := range evs {
			seen[e.K.String()]++
			if e.K == trace.Marker {
				seen[e.X.Mark.String()]++
			}
			if e.K == trace.Sync {
				seen[e.X.Sync.String()]++
			}
			if e.X.Stack != "" {
				seen["stack"]++
				if strings.Count(e.X.Stack, " ") == 9 {
					seen["deep stack"]++ // 10 frames
				}
			}
			if e.X.SP != 0 {
				seen["sp"]++
			}
			if e.K == trace.Alloc || e.K == trace.Free || e.K == trace.Marker || e.K == trace.Map {
				switch n := len(e.X.Name); {
				case n > 100:
					seen["long name"]++
				case n > 0:
					seen["name"]++
				default:
					seen["no name"]++
				}
			}
		}
		switch i % 4 {
		case 1:
			data = data[:rng.IntN(len(data)+1)]
		case 3:
			// Overwrite a word after the header (often a record word)
			// with a random value, a random record type, or a plausible
			// record word: small ids (some defined, some not), entry
			// counts, exits, depths, mark kinds and lengths, or a MAP
			// record word naming a small string id (some defined, some
			// not).
			at := 32 + 8*rng.IntN((len(data)-32)/8)
			w := rng.Uint64()
			switch rng.IntN(4) {
			case 0:
				w = w>>4 | uint64(rng.IntN(16))<<60
			case 1:
				w = uint64(rng.IntN(16))<<60 | uint64(rng.IntN(4))<<32 | uint64(rng.IntN(8))<<16 | uint64(rng.IntN(12))
			case 2:
				w = vt.RecMap<<60 | uint64(rng.IntN(8))<<16
			}
			binary.LittleEndian.PutUint64(data[at:], w)
		}
		_, end = refDecode(data)
		seen[end]++
		checkStream(t, data, bufSize)
	}
}

// chunkReader returns reads of 1 to 13 bytes, in turn.
type chunkReader struct {
	r io.Reader
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	c.n = c.n%13 + 1
	return c.r.Read(p[:min(len(p), c.n)])
}

// checkStream decodes data with several batch sizes, buffer sizes (the
// last one given by buf) and readers, and compares with refDecode.
func checkStream(t *testing.T, data []byte, buf int) {
	t.Helper()
	for _, f := range []struct {
		block uint64
		spans bool
	}{{0, false}, {16, false}, {16, true}, {64, true}} {
		checkStreamFold(t, data, buf, f.block, f.spans)
	}
}

// checkStreamFold is checkStream with fetches folded into runs (spans)
// within blocks of block bytes (0: none).
func checkStreamFold(t *testing.T, data []byte, buf int, block uint64, spans bool) {
	t.Helper()
	want, wantEnd := refDecodeAs(data, block, spans, false)
	if wantEnd == "unmodelled" {
		// The records of the tool's first-level caches and of process
		// trees have tests of their own (firstlevel_test.go,
		// notes_test.go, and the process trees of the corpus): here the reader
		// must only end, without a panic.
		for _, c := range []int{1, 3, 4096} {
			r := newStreamReaderSize(&chunkReader{r: bytes.NewReader(data)}, buf)
			r.SetIFetchRuns(int(block), spans)
			readAll(t, r, c)
		}
		return
	}
	var firstErr error
	for i, c := range []int{1, 2, 3, 4096} {
		var in io.Reader = bytes.NewReader(data)
		size := 40
		switch i {
		case 1:
			in = &chunkReader{r: in}
			size = 32
		case 2:
			in = iotest.OneByteReader(in)
			size = 100
		case 3:
			in = iotest.HalfReader(in)
			size = buf
		}
		r := newStreamReaderSize(in, size)
		r.SetIFetchRuns(int(block), spans)
		got, err := readAll(t, r, c)
		if k := errKind(err); k != wantEnd {
			t.Fatalf("cap %d, runs in %d-byte blocks: stream %x: ended with %v, want %s", c, block, data, err, wantEnd)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("cap %d, runs in %d-byte blocks: stream %x: events (-want +got):\n%s", c, block, data, cmp.Diff(want, got))
		}
		if i == 0 {
			firstErr = err
		} else if fmt.Sprint(err) != fmt.Sprint(firstErr) {
			t.Fatalf("cap %d: error %v, but %v with cap 1", c, err, firstErr)
		}
	}
	// A slim reader delivers the same events but calls, returns and the
	// Sync events of atomics (see refDecodeAs), with the same error; their
	// PC and Thread are unspecified, but for Sync events.
	slimWant, _ := refDecodeAs(data, block, spans, true)
	for i, c := range []int{1, 3, 4096} {
		var in io.Reader = bytes.NewReader(data)
		size := buf
		if i == 1 {
			in, size = &chunkReader{r: in}, 40
		}
		r := newStreamReaderSize(in, size)
		r.SetIFetchRuns(int(block), spans)
		r.Slim()
		got, err := readAll(t, r, c)
		if fmt.Sprint(err) != fmt.Sprint(firstErr) {
			t.Fatalf("slim, cap %d, runs in %d-byte blocks: stream %x: ended with %v, want %v", c, block, data, err, firstErr)
		}
		if !slices.EqualFunc(got, slimWant, func(g, w ev) bool {
			if w.K != trace.Sync {
				g.PC, g.T, w.PC, w.T = 0, 0, 0, 0
			}
			return g == w
		}) {
			t.Fatalf("slim, cap %d, runs in %d-byte blocks: stream %x: events (-want +got):\n%s", c, block, data, cmp.Diff(slimWant, got))
		}
	}
}

func FuzzStream(f *testing.F) {
	data, _ := sampleStream()
	f.Add(data)
	f.Add(data[:77])
	rng := rand.New(rand.NewPCG(3, 4))
	for range 4 {
		f.Add(randomStream(rng))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// Events grow with the square of the input (every EXEC word can
		// repeat a large description): keep inputs small.
		if len(data) > 4096 {
			data = data[:4096]
		}
		checkStream(t, data, 4096)
	})
}

// benchStream returns a stream of n EXEC records of superblocks of
// typical shape: 12 instructions, 5 data accesses, a side exit.
func benchStream(ifetch bool, n int) ([]byte, int) {
	var s vt.Stream
	s.Header(vt.FlagIFetch, 1).Thread(1)
	const nsb = 64
	events := 0
	perSB := make([]int, nsb)
	for id := range nsb {
		var ents []vt.Entry
		for i := range 12 {
			pc := uint64(0x400000 + 64*id + 4*i)
			if ifetch {
				ents = append(ents, vt.Entry{Kind: vt.IFetch, Size: 4, PC: pc})
			}
			if i%5 == 1 || i%5 == 3 {
				ents = append(ents, vt.Entry{Kind: []int{vt.Read, vt.Write, vt.Modify}[i%3], Size: 8, PC: pc})
			}
		}
		ents = append(ents, vt.Entry{Kind: vt.Exit})
		for _, e := range ents {
			if e.Kind != vt.Exit {
				perSB[id]++
			}
		}
		s.Describe(uint64(id+1), ents...)
	}
	addrs := make([]uint64, 5)
	for i := range n {
		id := i * 7 % nsb
		for j := range addrs {
			addrs[j] = uint64(0x7f0000000000 + 8*(i+j))
		}
		s.Exec(uint64(id+1), 1, addrs...)
		events += perSB[id]
	}
	return s.End(0).Bytes(), events
}

// countEvents reads r to its end through batch and returns the events
// read; a read error other than EOF stops the benchmark.
func countEvents(b *testing.B, r *StreamReader, batch *trace.Batch) int {
	n := 0
	for {
		err := r.Read(batch)
		n += batch.Len()
		if err != nil {
			if err != io.EOF {
				b.Fatal(err)
			}
			return n
		}
	}
}

func BenchmarkStream(b *testing.B) {
	for _, ifetch := range []bool{false, true} {
		b.Run(fmt.Sprintf("ifetch=%v", ifetch), func(b *testing.B) {
			data, events := benchStream(ifetch, 200_000)
			batch := trace.NewBatch(trace.BatchSize)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				n := countEvents(b, NewStreamReader(bytes.NewReader(data)), batch)
				if n != events {
					b.Fatalf("%d events, want %d", n, events)
				}
			}
			b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mevents/s")
		})
	}
}

// The ring: records in chunks announced on the pipe decode as they do
// inline; each chunk used up is handed back; a record crossing the end of
// a chunk is corrupt.
func TestRing(t *testing.T) {
	recs := new(vt.Stream).Thread(7).Describe(1, vt.Entry{Kind: vt.IFetch, Size: 4, PC: 0x1000},
		vt.Entry{Kind: vt.Read, Size: 8, PC: 0x1000}, vt.Entry{Kind: vt.Write, Size: 4, PC: 0x1004})
	for i := range uint64(300) {
		recs.Exec(1, 0, 0x5000+8*i, 0x9000+4*i)
	}
	end := new(vt.Stream).End(0).Bytes()
	inline := new(vt.Stream).Header(0, 1)
	inline.B = append(append(inline.B, recs.Bytes()...), end...)
	want, err := readAll(t, NewStreamReader(bytes.NewReader(inline.Bytes())), 64)
	if err != nil {
		t.Fatal(err)
	}

	// Cut at record boundaries: a DESCRIBE of 9 words, EXECs of 3.
	b := recs.Bytes()
	cut1, cut2 := 8*9+24*100, 8*9+24*250
	got, err := readRing(t, [][]byte{b[:cut1], b[cut1:cut2], b[cut2:], end})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("the ring decodes to %d events, inline to %d (or they differ)", len(got), len(want))
	}

	_, err = readRing(t, [][]byte{b[:16], b[16:], end}) // THREAD, half a DESCRIBE header
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "crosses the end of a ring chunk") {
		t.Errorf("a record across chunks: error %v", err)
	}
}

// readRing decodes the chunks through a ring of as many chunks, checking
// that every chunk but the last is handed back.
func readRing(t *testing.T, chunks [][]byte) ([]ev, error) {
	t.Helper()
	ring := make([]byte, len(chunks)*ChunkSize)
	pipe := new(vt.Stream).Header(flagRing, 1).Bytes()
	for i, c := range chunks {
		copy(ring[i*ChunkSize:], c)
		pipe = binary.LittleEndian.AppendUint64(pipe, uint64(len(c)))
	}
	var free bytes.Buffer
	r := NewStreamReader(bytes.NewReader(pipe))
	r.setRing(ring, &free)
	evs, err := readAll(t, r, 64)
	if err == nil && free.Len() != len(chunks)-1 {
		t.Errorf("%d chunks handed back, want %d", free.Len(), len(chunks)-1)
	}
	return evs, err
}

// Drain passes over every byte after the header, and reports a bad header
// and a failing read.
func TestStreamDrain(t *testing.T) {
	data, _ := sampleStream()
	n, err := NewStreamReader(bytes.NewReader(data)).Drain()
	if err != nil || n != int64(len(data)-headerLen) {
		t.Errorf("Drain = %d, %v; want %d, nil", n, err, len(data)-headerLen)
	}
	bad := NewStreamReader(bytes.NewReader([]byte("not a stream at all, not a stream at all")))
	stopped := false
	bad.onFatal = func() { stopped = true }
	if _, err := bad.Drain(); !errors.Is(err, ErrCorrupt) || !stopped {
		t.Errorf("bad magic: %v, tool stopped %v; want ErrCorrupt, stopped", err, stopped)
	}
	r := NewStreamReader(io.MultiReader(bytes.NewReader(data[:200]), iotest.ErrReader(errors.New("boom"))))
	if n, err := r.Drain(); err == nil || err.Error() != "boom" || n != 200-headerLen {
		t.Errorf("failing read: %d, %v; want %d, boom", n, err, 200-headerLen)
	}
}

// BenchmarkToolStream decodes what the tool writes for real programs, as
// memspy run reads it when it does not attribute: slim, with fetches
// folded into runs of 64-byte lines. The list walk's shuffle calls rand
// a million times: short superblocks, calls and atomics; matmul is long
// unrolled loops.
func BenchmarkToolStream(b *testing.B) {
	lib := toolLib(b)
	for _, prog := range [][]string{{"listwalk", "200000", "1"}, {"matmul", "96"}} {
		b.Run(prog[0], func(b *testing.B) {
			exe := buildExample(b, prog[0], "-O2")
			file := filepath.Join(b.TempDir(), "stream")
			out, err := os.Create(file)
			if err != nil {
				b.Fatal(err)
			}
			cmd := exec.Command("valgrind", "--tool=memspy", "-q", "--vex-iropt-unroll-thresh=400", "--out-fd=3", "--ifetch=yes", exe)
			cmd.Args = append(cmd.Args, prog[1:]...)
			cmd.Env = append(os.Environ(), "VALGRIND_LIB="+lib)
			cmd.ExtraFiles = []*os.File{out}
			if msg, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v: %v\n%s", cmd.Args, err, msg)
			}
			out.Close()
			data, err := os.ReadFile(file)
			if err != nil {
				b.Fatal(err)
			}
			batch := trace.NewBatch(trace.BatchSize)
			events := 0
			b.SetBytes(int64(len(data)))
			b.ResetTimer()
			for range b.N {
				r := NewStreamReader(bytes.NewReader(data))
				r.SetIFetchRuns(64, false)
				r.Slim()
				events = countEvents(b, r, batch)
			}
			b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N)/float64(events), "ns/event")
		})
	}
}
