package trace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// txtEvent is one event, for comparisons in the text reader tests.
type txtEvent struct {
	Kind   Kind
	Addr   uint64
	Size   uint32
	PC     uint64
	Thread uint32
}

// Shorthands for expected events without PC and thread.
func txtR(a uint64, s uint32) txtEvent { return txtEvent{Kind: Read, Addr: a, Size: s} }
func txtW(a uint64, s uint32) txtEvent { return txtEvent{Kind: Write, Addr: a, Size: s} }
func txtI(a uint64, s uint32) txtEvent { return txtEvent{Kind: IFetch, Addr: a, Size: s} }
func txtM(a uint64, s uint32) txtEvent { return txtEvent{Kind: Modify, Addr: a, Size: s} }
func txtX(a uint64, s uint32) txtEvent { return txtEvent{Kind: Misc, Addr: a, Size: s} }

// txtReaders builds each text format's reader with a given buffer size.
var txtReaders = map[string]func(r io.Reader, opt Options, bufSize int) Reader{
	"din":       func(r io.Reader, o Options, n int) Reader { return newDinReader(r, o, n) },
	"xdin":      func(r io.Reader, o Options, n int) Reader { return newXdinReader(r, o, n) },
	"lackey":    func(r io.Reader, o Options, n int) Reader { return newLackeyReader(r, o, n) },
	"pinatrace": func(r io.Reader, o Options, n int) Reader { return newPinatraceReader(r, o, n) },
	"addrkind":  func(r io.Reader, o Options, n int) Reader { return newAddrKindReader(r, o, n) },
}

// txtReadAll reads r to the end with batches of capacity batchCap and
// checks the Reader contract on the way. It returns the events and the
// error that ended the input (nil for io.EOF).
func txtReadAll(t testing.TB, r Reader, batchCap int) ([]txtEvent, error) {
	t.Helper()
	var evs []txtEvent
	b := NewBatch(batchCap)
	for calls := 0; ; calls++ {
		if calls > 1<<24 {
			t.Fatalf("no end after %d Read calls", calls)
		}
		err := r.Read(b)
		n := b.Len()
		if len(b.Addr) != n || len(b.Size) != n || len(b.PC) != n || len(b.Thread) != n {
			t.Fatalf("batch slices of unequal length")
		}
		if n > batchCap {
			t.Fatalf("batch holds %d events, capacity %d", n, batchCap)
		}
		for i := range n {
			evs = append(evs, txtEvent{b.Kind[i], b.Addr[i], b.Size[i], b.PC[i], b.Thread[i]})
		}
		switch {
		case err == io.EOF:
			if n != 0 {
				t.Fatalf("io.EOF with %d events", n)
			}
			if err := r.Read(b); err != io.EOF || b.Len() != 0 {
				t.Fatalf("Read after io.EOF: %v, %d events", err, b.Len())
			}
			return evs, nil
		case err != nil:
			if err2 := r.Read(b); err2 != err || b.Len() != 0 {
				t.Fatalf("Read after error %v: %v, %d events", err, err2, b.Len())
			}
			return evs, err
		case n == 0:
			t.Fatalf("Read returned no events and no error")
		}
	}
}

// txtCase is a table entry of a text reader test.
type txtCase struct {
	name    string
	in      string
	skipBad bool
	want    []txtEvent // events read (before the error, if any)
	err     string     // the error's text, "" for none
	skipped int64      // lines skipped (with skipBad)
}

// txtRun runs cases through the named text reader with several buffer
// sizes and batch capacities, which must all give the same result.
func txtRun(t *testing.T, format string, cases []txtCase) {
	t.Helper()
	newReader := txtReaders[format]
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			longest := 0
			for line := range strings.Lines(tc.in) {
				longest = max(longest, len(line))
			}
			for _, bufSize := range []int{textBufSize, longest + 1, longest + 2, longest + 5, 64} {
				if bufSize < longest+1 && tc.err == "" {
					continue
				}
				for _, batchCap := range []int{BatchSize, 1, 2, 3} {
					r := newReader(strings.NewReader(tc.in), Options{Name: "t.in", SkipBad: tc.skipBad}, bufSize)
					if r.Format() != format {
						t.Fatalf("Format() = %q", r.Format())
					}
					got, err := txtReadAll(t, r, batchCap)
					where := fmt.Sprintf("buffer %d, batch %d", bufSize, batchCap)
					if bufSize < longest+1 {
						// Lines may be too long: only check the error kind.
						if err == nil {
							t.Errorf("%s: no error with a too small buffer", where)
						}
						continue
					}
					if diff := cmp.Diff(tc.want, got); diff != "" {
						t.Errorf("%s: events (-want +got):\n%s", where, diff)
					}
					if errText(err) != tc.err {
						t.Errorf("%s: error %q, want %q", where, errText(err), tc.err)
					}
					if err != nil {
						var se *SyntaxError
						if !errors.As(err, &se) {
							t.Errorf("%s: error %T, want *SyntaxError", where, err)
						}
					}
					if s := r.(Skipper).Skipped(); s != tc.skipped {
						t.Errorf("%s: Skipped() = %d, want %d", where, s, tc.skipped)
					}
				}
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// txtFuzz checks one fuzz input against the named text reader: no panic,
// an end, valid events, and the same result from a small buffer as from
// one holding the whole input.
func txtFuzz(t *testing.T, format string, data []byte) {
	newReader := txtReaders[format]
	for _, skip := range []bool{false, true} {
		opt := Options{Name: "fuzz", SkipBad: skip}
		big, errBig := txtReadAll(t, newReader(bytes.NewReader(data), opt, len(data)+1), 7)
		for _, e := range big {
			if !e.Kind.Valid() {
				t.Fatalf("invalid kind %v", e.Kind)
			}
			if e.Kind.IsAccess() && (e.Size == 0 || e.Size > MaxRefSize) {
				t.Fatalf("access of size 0 or above MaxRefSize: %+v", e)
			}
		}
		if errBig != nil {
			var se *SyntaxError
			if skip || !errors.As(errBig, &se) {
				t.Fatalf("unexpected error %v", errBig)
			}
		}
		small, errSmall := txtReadAll(t, newReader(iotest.HalfReader(bytes.NewReader(data)), opt, 24), 3)
		if errSmall != nil && strings.Contains(errSmall.Error(), "line too long") {
			continue
		}
		if !skip && errText(errSmall) != errText(errBig) {
			t.Fatalf("errors differ: %v (small buffer) vs %v", errSmall, errBig)
		}
		if !skip && !cmp.Equal(small, big) {
			t.Fatalf("events differ with a small buffer: %s", cmp.Diff(big, small))
		}
		if bytes.IndexByte(data, '\r') >= 0 {
			continue
		}
		// Old Mac ('\r') and DOS ("\r\n") line ends read as '\n' does.
		for _, end := range []string{"\r", "\r\n"} {
			other := bytes.ReplaceAll(data, []byte("\n"), []byte(end))
			evs, err := txtReadAll(t, newReader(iotest.HalfReader(bytes.NewReader(other)), opt, 24), 3)
			if err != nil && strings.Contains(err.Error(), "line too long") {
				continue
			}
			if errText(err) != errText(errSmall) || !skip && !cmp.Equal(evs, small) {
				t.Fatalf("line ends %q: %v, %s; want %v", end, err, cmp.Diff(small, evs), errSmall)
			}
		}
	}
}

// TestCRLineEnds reads a trace with old Mac line ends ('\r' alone) and one
// with DOS line ends as the same trace with '\n' (issue 29, item 1), with
// every buffer size, so that a '\r' at the end of a buffer is seen.
func TestCRLineEnds(t *testing.T) {
	in := "2 400000\n0 7fff10\n\n1 7fff18\n7 1\n2 400004"
	want, wantErr := txtReadAll(t, newDinReader(strings.NewReader(in), Options{Name: "t", SkipBad: true}, 100), 5)
	if len(want) != 4 || wantErr != nil {
		t.Fatalf("reference read: %v, %v", want, wantErr)
	}
	for _, end := range []string{"\r", "\r\n", "\n\r"} {
		other := strings.ReplaceAll(in, "\n", end)
		for size := 12; size <= len(other)+1; size++ {
			r := newDinReader(iotest.OneByteReader(strings.NewReader(other)), Options{Name: "t", SkipBad: true}, size)
			got, err := txtReadAll(t, r, 2)
			if err != nil || !cmp.Equal(got, want) || r.Skipped() != 1 {
				t.Errorf("line ends %q, buffer %d: %v, %d skipped, %s", end, size, err, r.Skipped(), cmp.Diff(want, got))
			}
		}
		_, err := txtReadAll(t, newDinReader(strings.NewReader(other), Options{Name: "t"}, 100), 5)
		if got := errText(err); got != `t:5: unknown label "7": "7 1"` && !(end == "\n\r" && got == `t:8: unknown label "7": "7 1"`) {
			t.Errorf("line ends %q: error %q", end, got)
		}
	}
}

// errReader returns its data, then err.
type errReader struct {
	data []byte
	err  error
}

func (r *errReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// emptyReader returns no data and no error, forever.
type emptyReader struct{}

func (emptyReader) Read(p []byte) (int, error) { return 0, nil }

func TestScannerReadError(t *testing.T) {
	boom := errors.New("boom")
	for format, newReader := range txtReaders {
		t.Run(format, func(t *testing.T) {
			line := map[string]string{
				"din": "2 1000\n", "xdin": "i 1000 4\n", "lackey": "I  1000,4\n",
				"pinatrace": "0x1: R 0x1000\n", "addrkind": "0x1000 I\n",
			}[format]
			// A complete line, then a partial one, then an error: the
			// partial line must not be parsed, the error must surface.
			in := &errReader{data: []byte(line + line[:3]), err: boom}
			got, err := txtReadAll(t, newReader(in, Options{Name: "t.in"}, 64), 16)
			if len(got) != 1 || !errors.Is(err, boom) {
				t.Errorf("got %d events, error %v; want 1 and boom", len(got), err)
			}
			if err != nil && err.Error() != "reading t.in: boom" {
				t.Errorf("error text %q", err)
			}
			// Data and io.ErrUnexpectedEOF in the same call.
			r := newReader(iotest.DataErrReader(&errReader{data: []byte(line), err: io.ErrUnexpectedEOF}), Options{}, 64)
			got, err = txtReadAll(t, r, 16)
			if len(got) != 1 || !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("got %d events, error %v; want 1 and io.ErrUnexpectedEOF", len(got), err)
			}
			// A reader that never makes progress.
			_, err = txtReadAll(t, newReader(emptyReader{}, Options{}, 64), 16)
			if !errors.Is(err, io.ErrNoProgress) {
				t.Errorf("empty reader: error %v, want io.ErrNoProgress", err)
			}
			// A zero-capacity batch is an error, not an endless loop.
			if err := newReader(strings.NewReader(line), Options{}, 64).Read(&Batch{}); err == nil || err == io.EOF {
				t.Errorf("zero-capacity batch: error %v", err)
			}
			// A one-byte-at-a-time reader gives the same events.
			in2 := strings.Repeat(line, 50)
			got, err = txtReadAll(t, newReader(iotest.OneByteReader(strings.NewReader(in2)), Options{}, 32), 7)
			if len(got) != 50 || err != nil {
				t.Errorf("one-byte reader: %d events, error %v", len(got), err)
			}
			// An empty input is an empty trace.
			got, err = txtReadAll(t, newReader(strings.NewReader(""), Options{}, 64), 16)
			if len(got) != 0 || err != nil {
				t.Errorf("empty input: %d events, error %v", len(got), err)
			}
		})
	}
}

func TestScannerLineTooLong(t *testing.T) {
	in := "2 1000\n2 " + strings.Repeat("0", 100) + "2000\n2 3000\n"
	r := newDinReader(strings.NewReader(in), Options{Name: "t.in"}, 32)
	got, err := txtReadAll(t, r, 16)
	want := `t.in:2: line too long: "2 ` + strings.Repeat("0", 30) + `"`
	if len(got) != 1 || errText(err) != want {
		t.Errorf("got %d events, error %v; want 1 and %s", len(got), err, want)
	}
	r = newDinReader(iotest.HalfReader(strings.NewReader(in)), Options{Name: "t.in", SkipBad: true}, 32)
	got, err = txtReadAll(t, r, 16)
	if diff := cmp.Diff([]txtEvent{txtI(0x1000, 4), txtI(0x3000, 4)}, got); diff != "" || err != nil {
		t.Errorf("SkipBad: error %v, events (-want +got):\n%s", err, diff)
	}
	if r.Skipped() != 1 {
		t.Errorf("Skipped() = %d, want 1", r.Skipped())
	}
	// An over-long last line without newline, skipped.
	r = newDinReader(strings.NewReader("2 1000\n"+strings.Repeat("x", 100)), Options{SkipBad: true}, 32)
	got, err = txtReadAll(t, r, 16)
	if len(got) != 1 || err != nil || r.Skipped() != 1 {
		t.Errorf("over-long last line: %d events, error %v, %d skipped", len(got), err, r.Skipped())
	}
}

func TestSyntaxErrorTruncated(t *testing.T) {
	in := "2 1000 \r\n9 " + strings.Repeat("a", 200) + "\r\n"
	_, err := txtReadAll(t, newDinReader(strings.NewReader(in), Options{Name: "t.in"}, 1024), 16)
	var se *SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("error %v, want *SyntaxError", err)
	}
	if se.Line != 2 || len(se.Text) != 80 || se.Msg != `unknown label "9"` || se.File != "t.in" {
		t.Errorf("got %+v", se)
	}
}

func TestParseHex(t *testing.T) {
	for _, tc := range []struct {
		in     string
		v      uint64
		n      int
		status int
	}{
		{"0\n", 0, 1, 0},
		{"77ad0 ", 0x77ad0, 5, 0},
		{"0x77AD0\n", 0x77ad0, 7, 0},
		{"0X1f,", 0x1f, 4, 0},
		{"0x\n", 0, 1, 0}, // the 0 only: the caller rejects the x
		{"ffffffffffffffff\n", 1<<64 - 1, 16, 0},
		{"0000ffffffffffffffff\n", 1<<64 - 1, 20, 0},
		{"10000000000000000\n", 0, 17, numRange},
		{"0x10000000000000000\n", 0, 19, numRange},
		{"g\n", 0, 0, numSyntax},
		{"\n", 0, 0, numSyntax},
	} {
		v, n, st := parseHex([]byte(tc.in), 0)
		if st != tc.status || n != tc.n || st == 0 && v != tc.v {
			t.Errorf("parseHex(%q) = %#x, %d, %d; want %#x, %d, %d", tc.in, v, n, st, tc.v, tc.n, tc.status)
		}
	}
}

func TestParseDec32(t *testing.T) {
	for _, tc := range []struct {
		in     string
		v      uint32
		n      int
		status int
	}{
		{"0\n", 0, 1, 0},
		{"4294967295\n", 1<<32 - 1, 10, 0},
		{"4294967296\n", 0, 10, numRange},
		{"99999999999999999999999\n", 0, 23, numRange},
		{"12a\n", 12, 2, 0},
		{"\n", 0, 0, numSyntax},
	} {
		v, n, st := parseDec32([]byte(tc.in), 0)
		if st != tc.status || n != tc.n || st == 0 && v != tc.v {
			t.Errorf("parseDec32(%q) = %d, %d, %d; want %d, %d, %d", tc.in, v, n, st, tc.v, tc.n, tc.status)
		}
	}
}

// TestTextReadersNoAllocs checks that reading does not allocate per line.
func TestTextReadersNoAllocs(t *testing.T) {
	for format := range txtReaders {
		t.Run(format, func(t *testing.T) {
			data := txtBenchInput(format, 1<<14)
			r := bytes.NewReader(data)
			tr := txtReaders[format](r, Options{}, 1<<12)
			b := NewBatch(BatchSize)
			allocs := testing.AllocsPerRun(100, func() {
				if err := tr.Read(b); err == io.EOF {
					r.Reset(data)
					tr = txtReaders[format](r, Options{}, 1<<12)
				} else if err != nil {
					t.Fatal(err)
				}
			})
			// One reader (two allocations) per four Reads at most.
			if allocs > 0.6 {
				t.Errorf("%.2f allocations per Read", allocs)
			}
		})
	}
}

// txtBenchInput returns n lines of the given format resembling a real
// trace: instruction fetches at consecutive addresses and every sixth line
// a data reference.
func txtBenchInput(format string, n int) []byte {
	txtBenchMu.Lock()
	defer txtBenchMu.Unlock()
	key := format + strconv.Itoa(n)
	if d, ok := txtBenchCache[key]; ok {
		return d
	}
	buf := make([]byte, 0, n*24)
	ip := uint64(0x77ad0)
	for i := range n {
		data := i%6 == 5
		a := ip
		if data {
			a = 0x7fff1230 + uint64(i%512)*8
		}
		switch format {
		case "din":
			if data {
				buf = append(buf, '0', ' ')
			} else {
				buf = append(buf, '2', ' ')
			}
			buf = strconv.AppendUint(buf, a, 16)
		case "xdin":
			if data {
				buf = append(buf, 'r', ' ')
			} else {
				buf = append(buf, 'i', ' ')
			}
			buf = strconv.AppendUint(buf, a, 16)
			buf = append(buf, " 4"...)
		case "lackey":
			if data {
				buf = append(buf, " L "...)
			} else {
				buf = append(buf, "I  "...)
			}
			buf = strconv.AppendUint(buf, a, 16)
			buf = append(buf, ",4"...)
		case "pinatrace":
			buf = append(buf, "0x"...)
			buf = strconv.AppendUint(buf, ip, 16)
			buf = append(buf, ": R 0x"...)
			buf = strconv.AppendUint(buf, a, 16)
			buf = append(buf, "; TID: 32746"...)
		case "addrkind":
			buf = append(buf, "0x"...)
			buf = strconv.AppendUint(buf, a, 16)
			if data {
				buf = append(buf, " D"...)
			} else {
				buf = append(buf, " I"...)
			}
		}
		buf = append(buf, '\n')
		if !data {
			ip += 4
		}
	}
	txtBenchCache[key] = buf
	return buf
}

var (
	txtBenchMu    sync.Mutex
	txtBenchCache = map[string][]byte{}
)

// txtBench measures a text reader over generated input.
func txtBench(b *testing.B, format string, lines int) {
	data := txtBenchInput(format, lines)
	batch := NewBatch(BatchSize)
	newReader := txtReaders[format]
	r := bytes.NewReader(data)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r.Reset(data)
		tr := newReader(r, Options{}, textBufSize)
		n := 0
		for {
			err := tr.Read(batch)
			n += batch.Len()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		if n != lines {
			b.Fatalf("read %d events, want %d", n, lines)
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
