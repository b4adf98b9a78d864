package valgrind

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"memspy/trace"
	vt "memspy/tracer/valgrind/valgrindtest"
)

// ev is one decoded event, for comparisons.
type ev struct {
	K    trace.Kind
	Addr uint64
	Size uint32
	PC   uint64
	T    uint32
}

// readAll decodes the whole stream with batches of capacity c and returns
// the events and the error that ended it (nil after END).
func readAll(t testing.TB, r *StreamReader, c int) ([]ev, error) {
	t.Helper()
	b := trace.NewBatch(c)
	var evs []ev
	for range 1 << 24 {
		err := r.Read(b)
		if b.Len() > c {
			t.Fatalf("batch of capacity %d holds %d events", c, b.Len())
		}
		for i := range b.Len() {
			evs = append(evs, ev{b.Kind[i], b.Addr[i], b.Size[i], b.PC[i], b.Thread[i]})
		}
		if err == io.EOF {
			if b.Len() != 0 {
				t.Fatalf("io.EOF with %d events", b.Len())
			}
			return evs, nil
		}
		if err != nil {
			if err2 := r.Read(b); err2 != err || b.Len() != 0 {
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

// sample is a stream using every record type and exit.
func sample() ([]byte, []ev) {
	var s vt.Stream
	s.Header(1, 1, 4242).Thread(100)
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
	s.Describe(7, vt.Entry{Kind: vt.Exit, PC: 0x2000}, vt.Entry{Kind: vt.Read, Size: 16, PC: 0x2000})
	s.Exec(7, 0)       // no events
	s.Exec(7, 1, 0x99) // one read
	s.End(3)
	want := []ev{
		{trace.IFetch, 0x1000, 4, 0x1000, 100},
		{trace.Read, 0xa0, 8, 0x1000, 100},
		{trace.IFetch, 0x1004, 3, 0x1004, 100},
		{trace.Write, 0xb0, 4, 0x1004, 100},
		{trace.Modify, 0xc0, 2, 0x1004, 100},
		{trace.IFetch, 0x1007, 1, 0x1007, 100},

		{trace.IFetch, 0x1000, 4, 0x1000, 100},
		{trace.Read, 0xa8, 8, 0x1000, 100},

		{trace.IFetch, 0x1000, 4, 0x1000, 101},
		{trace.Read, 0xd0, 8, 0x1000, 101},
		{trace.IFetch, 0x1004, 3, 0x1004, 101},
		{trace.Write, 0xe0, 4, 0x1004, 101},
		{trace.Modify, 0xf0, 2, 0x1004, 101},

		{trace.Read, 0x99, 16, 0x2000, 101},
	}
	return s.Bytes(), want
}

func TestStreamRecords(t *testing.T) {
	data, want := sample()
	for _, c := range []int{1, 2, 3, 4, 5, 4096} {
		t.Run(fmt.Sprint("cap", c), func(t *testing.T) {
			r := NewStreamReader(bytes.NewReader(data))
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
			if r.Pid() != 4242 || !r.IFetch() || r.Events() != uint64(len(want)) || r.Format() != "valgrind" {
				t.Errorf("Pid %d IFetch %v Events %d Format %q", r.Pid(), r.IFetch(), r.Events(), r.Format())
			}
			if r.Err() != nil || r.Offset() != int64(len(data)) {
				t.Errorf("Err() = %v, Offset() = %d of %d", r.Err(), r.Offset(), len(data))
			}
		})
	}
}

// A zero-capacity batch gets room for trace.BatchSize events.
func TestStreamZeroBatch(t *testing.T) {
	data, want := sample()
	r := NewStreamReader(bytes.NewReader(data))
	var b trace.Batch
	if err := r.Read(&b); err != nil || b.Len() != len(want) {
		t.Fatalf("Read into an empty batch: %v, %d events", err, b.Len())
	}
}

func TestStreamErrors(t *testing.T) {
	head := func() *vt.Stream {
		var s vt.Stream
		s.Header(1, 0, 1).Thread(1).Describe(5, vt.Entry{Kind: vt.Read, Size: 8, PC: 1}, vt.Entry{Kind: vt.Exit})
		return &s
	}
	// head is 32 + 8 + 16 + 32 = 88 bytes.
	for _, tc := range []struct {
		name   string
		stream []byte
		events int
		want   string
		is     error
	}{
		{"empty", nil, 0, "the memspy Valgrind tool's stream is empty: the tool did not start (see valgrind's messages)", ErrNoEnd},
		{"short header", []byte("memspyVG\x01"), 0, "the memspy Valgrind tool's stream ended in its header after 9 bytes (the tool died)", ErrNoEnd},
		{"magic", new(vt.Stream).Word(0x1234).Word(1).Word(0).Word(0).End(0).Bytes(), 0,
			`corrupt memspy Valgrind tool stream at byte 0: bad magic "4\x12\x00\x00\x00\x00\x00\x00", want "memspyVG": not a memspy Valgrind tool stream`, ErrCorrupt},
		{"version", new(vt.Stream).Header(2, 0, 1).End(0).Bytes(), 0,
			"the memspy Valgrind tool speaks stream version 2, this memspy reads version 1: rebuild with make", ErrVersion},
		{"record type", head().Exec(5, 1, 0x10).Word(7<<60 | 5).Bytes(), 1,
			"corrupt memspy Valgrind tool stream at byte 104: unknown record type 7 (word 0x7000000000000005)", ErrCorrupt},
		{"unknown superblock", head().Exec(6, 0).Bytes(), 0,
			"corrupt memspy Valgrind tool stream at byte 88: EXEC of superblock 6, which was not described", ErrCorrupt},
		{"exit", head().Exec(5, 2, 0x10).Bytes(), 0,
			"corrupt memspy Valgrind tool stream at byte 88: EXEC of superblock 5 takes exit 2, but it has 1 exits (exit 1 means it ran to its end)", ErrCorrupt},
		{"count", head().Word(2<<60 | 9<<16).Word(1<<20 + 1).Bytes(), 0,
			"corrupt memspy Valgrind tool stream at byte 88: superblock 9 has 1048577 entries, at most 1048576 allowed", ErrCorrupt},
		{"huge count", head().Word(2<<60 | 9<<16).Word(1 << 63).Bytes(), 0,
			"corrupt memspy Valgrind tool stream at byte 88: superblock 9 has 9223372036854775808 entries, at most 1048576 allowed", ErrCorrupt},
		{"entry kind", head().Describe(9, vt.Entry{Kind: vt.Read}, vt.Entry{Kind: 5}).Bytes(), 0,
			"corrupt memspy Valgrind tool stream at byte 120: entry 1 of superblock 9 has unknown kind 5", ErrCorrupt},
		{"twice", head().Describe(5).Bytes(), 0,
			"corrupt memspy Valgrind tool stream at byte 88: superblock 5 described twice", ErrCorrupt},
		{"no end", head().Exec(5, 1, 0x10).Bytes(), 1,
			"the memspy Valgrind tool's stream ended without its END record after 104 bytes (the tool died or the program was killed)", ErrNoEnd},
		{"cut in exec", head().Exec(5, 1).Bytes(), 0,
			"the memspy Valgrind tool's stream ended without its END record after 96 bytes (the tool died or the program was killed)", ErrNoEnd},
		{"cut in word", head().Exec(5, 1, 0x10).Bytes()[:100], 0,
			"the memspy Valgrind tool's stream ended without its END record after 100 bytes (the tool died or the program was killed)", ErrNoEnd},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range []int{1, 4096} {
				evs, err := decode(t, tc.stream, c)
				if err == nil || err.Error() != tc.want {
					t.Errorf("cap %d: error\n%v\nwant\n%s", c, err, tc.want)
				}
				if !errors.Is(err, tc.is) {
					t.Errorf("cap %d: %v is not %v", c, err, tc.is)
				}
				if len(evs) != tc.events {
					t.Errorf("cap %d: %d events before the error, want %d", c, len(evs), tc.events)
				}
			}
		})
	}
}

// The version error names the tool's directory when Start made the reader.
func TestStreamVersionLib(t *testing.T) {
	r := NewStreamReader(bytes.NewReader(new(vt.Stream).Header(7, 0, 1).Bytes()))
	r.lib = "/opt/memspy/valgrind"
	fatal := 0
	r.onFatal = func() { fatal++ }
	err := r.Read(trace.NewBatch(8))
	want := "the memspy Valgrind tool in /opt/memspy/valgrind speaks stream version 7, this memspy reads version 1: the tool and memspy disagree, rebuild both with make"
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
	data, _ := sample()
	r := NewStreamReader(io.MultiReader(bytes.NewReader(data[:200]), iotest.ErrReader(errors.New("boom"))))
	_, err := readAll(t, r, 4096)
	if err == nil || err.Error() != "reading the memspy Valgrind tool's stream after 200 bytes: boom" {
		t.Errorf("got %v", err)
	}
}

// Cutting the stream anywhere delivers a prefix of its events, then an
// error matching ErrNoEnd; never a panic.
func TestStreamTruncated(t *testing.T) {
	data, want := sample()
	for cut := range len(data) {
		for _, c := range []int{1, 3, 4096} {
			evs, err := readAll(t, NewStreamReader(iotest.OneByteReader(bytes.NewReader(data[:cut]))), c)
			if !errors.Is(err, ErrNoEnd) {
				t.Fatalf("cut at %d, cap %d: %v", cut, c, err)
			}
			if len(evs) > len(want) || len(evs) > 0 && cmp.Diff(want[:len(evs)], evs) != "" {
				t.Fatalf("cut at %d: events are not a prefix", cut)
			}
			wantMsg := fmt.Sprintf("after %d bytes", cut)
			if cut >= 32 && !strings.Contains(err.Error(), wantMsg) {
				t.Fatalf("cut at %d: %v", cut, err)
			}
		}
	}
	// Cutting at the start of the END record delivers every event.
	evs, _ := decode(t, data[:len(data)-8], 5)
	if len(evs) != len(want) {
		t.Errorf("cut before END: %d events, want %d", len(evs), len(want))
	}
}

// An EXEC record larger than the read buffer is delivered across refills.
func TestStreamHugeExec(t *testing.T) {
	const n = 300_000 // 2.4 MB of addresses
	var s vt.Stream
	ents := make([]vt.Entry, 0, 2*n)
	for i := range n {
		ents = append(ents, vt.Entry{Kind: vt.IFetch, Size: 2, PC: uint64(i)}, vt.Entry{Kind: vt.Write, Size: 4, PC: uint64(i)})
	}
	addrs := make([]uint64, n)
	for i := range addrs {
		addrs[i] = uint64(i) * 3
	}
	s.Header(1, 1, 1).Thread(9).Describe(1, ents...).Exec(1, 0, addrs...).Exec(1, 0, addrs...).End(0)
	for _, c := range []int{4096, 3 * n} {
		evs, err := decode(t, s.Bytes(), c)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 4*n {
			t.Fatalf("%d events, want %d", len(evs), 4*n)
		}
		for i, e := range evs {
			j := i % (2 * n) / 2
			w := ev{trace.IFetch, uint64(j), 2, uint64(j), 9}
			if i%2 == 1 {
				w = ev{trace.Write, uint64(j) * 3, 4, uint64(j), 9}
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
	s.Header(1, 0, 1)
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
	s.Header(1, 0, 1).Thread(1)
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
func refDecode(data []byte) ([]ev, string) {
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
	if v, _ := word(8); v != 1 {
		return nil, "version"
	}
	type ent struct{ w, pc uint64 }
	sbs := map[uint64][]ent{}
	var evs []ev
	var tid uint32
	for p := 32; ; {
		w, ok := word(p)
		if !ok {
			return evs, "noend"
		}
		p += 8
		switch w >> 60 {
		case 1:
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
			for _, x := range d {
				k := x.w & 0xff
				if k == 4 {
					if e == 0 {
						break
					}
					e--
					continue
				}
				a := x.pc
				if k != 2 {
					if a, ok = word(p); !ok {
						return evs, "noend"
					}
					p += 8
				}
				evs = append(evs, ev{trace.Kind(k), a, uint32(x.w >> 8 & 0xffffff), x.pc, tid})
			}
		case 2:
			id := w >> 16 & (1<<44 - 1)
			n, ok := word(p)
			if !ok {
				return evs, "noend"
			}
			p += 8
			if n > 1<<20 {
				return evs, "corrupt"
			}
			if _, dup := sbs[id]; dup {
				return evs, "corrupt"
			}
			var d []ent
			for range n {
				e, ok1 := word(p)
				pc, ok2 := word(p + 8)
				if !ok1 || !ok2 {
					return evs, "noend"
				}
				if e&0xff > 4 {
					return evs, "corrupt"
				}
				d = append(d, ent{e, pc})
				p += 16
			}
			sbs[id] = d
		case 3:
			tid = uint32(w)
		case 15:
			return evs, "end"
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

// randomStream returns a valid stream of random superblocks and records.
func randomStream(rng *rand.Rand) []byte {
	var s vt.Stream
	s.Header(1, 1, 77).Thread(1)
	type sb struct {
		exits, data []int // data entries before each exit, and in all
	}
	var sbs []sb
	nsb := 1 + rng.IntN(6)
	for id := range nsb {
		var ents []vt.Entry
		var d sb
		nd := 0
		for range rng.IntN(12) {
			k := rng.IntN(5)
			ents = append(ents, vt.Entry{Kind: k, Size: uint32(rng.IntN(64)), PC: rng.Uint64()})
			switch k {
			case vt.Exit:
				d.exits = append(d.exits, nd)
			case vt.Read, vt.Write, vt.Modify:
				nd++
			}
		}
		d.exits = append(d.exits, nd)
		s.Describe(uint64(id+1), ents...)
		sbs = append(sbs, d)
	}
	for range rng.IntN(60) {
		if rng.IntN(10) == 0 {
			s.Thread(rng.Uint32())
			continue
		}
		id := rng.IntN(len(sbs))
		e := rng.IntN(len(sbs[id].exits))
		addrs := make([]uint64, sbs[id].exits[e])
		for i := range addrs {
			addrs[i] = rng.Uint64()
		}
		s.Exec(uint64(id+1), e, addrs...)
	}
	return s.End(rng.IntN(256)).Bytes()
}

// The decoder agrees with the reference on random streams, whole and cut,
// whatever the batch size and however the input is split into reads.
func TestStreamRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		data := randomStream(rng)
		if i%2 == 1 {
			data = data[:rng.IntN(len(data)+1)]
		}
		checkStream(t, data, bufSize)
	}
}

// checkStream decodes data with several batch sizes, buffer sizes (the
// last one given by buf) and readers, and compares with refDecode.
func checkStream(t *testing.T, data []byte, buf int) {
	t.Helper()
	want, wantEnd := refDecode(data)
	var firstErr error
	for i, c := range []int{1, 3, 4096} {
		var in io.Reader = bytes.NewReader(data)
		size := 40
		switch i {
		case 1:
			in = iotest.OneByteReader(in)
			size = 100
		case 2:
			in = iotest.HalfReader(in)
			size = buf
		}
		got, err := readAll(t, newStreamReaderSize(in, size), c)
		if k := errKind(err); k != wantEnd {
			t.Fatalf("cap %d: stream %x: ended with %v, want %s", c, data, err, wantEnd)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("cap %d: stream %x: events (-want +got):\n%s", c, data, cmp.Diff(want, got))
		}
		if i == 0 {
			firstErr = err
		} else if fmt.Sprint(err) != fmt.Sprint(firstErr) {
			t.Fatalf("cap %d: error %v, but %v with cap 1", c, err, firstErr)
		}
	}
}

func FuzzStream(f *testing.F) {
	data, _ := sample()
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
	s.Header(1, 1, 1).Thread(1)
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

func BenchmarkStream(b *testing.B) {
	for _, ifetch := range []bool{false, true} {
		b.Run(fmt.Sprintf("ifetch=%v", ifetch), func(b *testing.B) {
			data, events := benchStream(ifetch, 200_000)
			batch := trace.NewBatch(trace.BatchSize)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				r := NewStreamReader(bytes.NewReader(data))
				n := 0
				for {
					err := r.Read(batch)
					n += batch.Len()
					if err != nil {
						if err != io.EOF {
							b.Fatal(err)
						}
						break
					}
				}
				if n != events {
					b.Fatalf("%d events, want %d", n, events)
				}
			}
			b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mevents/s")
		})
	}
}
