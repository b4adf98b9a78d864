package trace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// sharedTraces is where the public test traces live, relative to the
// package directory.
const sharedTraces = "../../shared/traces"

// kindCounts counts events by kind.
type kindCounts [numKinds]int64

// countTrace reads r to the end and counts its events by kind.
func countTrace(t testing.TB, r Reader) (kindCounts, error) {
	t.Helper()
	var c kindCounts
	b := NewBatch(BatchSize)
	for {
		err := r.Read(b)
		for _, k := range b.Kind {
			if !k.Valid() {
				t.Fatalf("invalid kind %v", k)
			}
			c[k]++
		}
		if err == io.EOF {
			return c, nil
		}
		if err != nil {
			return c, err
		}
	}
}

func TestSharedTraces(t *testing.T) {
	for _, tc := range []struct {
		file   string
		format string
		want   kindCounts
	}{
		{"long.trace", "lackey", kindCounts{Read: 230025, Write: 18987, Modify: 18976}},
		{"yi.trace", "lackey", kindCounts{Read: 4, Write: 1, Modify: 2}},
		{"yi2.trace", "lackey", kindCounts{Read: 9, Write: 6, Modify: 1}},
		{"dave.trace", "lackey", kindCounts{Read: 2, Write: 3}},
		{"trans.trace", "lackey", kindCounts{Read: 156, Write: 42, IFetch: 378, Modify: 20}},
		{"cc1_9140.din", "din", kindCounts{Read: 1571, Write: 829, IFetch: 6741}},
		{"mm32.din.gz", "din", kindCounts{Read: 70370, Write: 6426, IFetch: 188971, Misc: 8}},
		{"pinatrace_sample.out.gz", "pinatrace", kindCounts{Read: 100032, Write: 1}},
		{"mat_20M.bz2", "addrkind", kindCounts{Read: 1601035, IFetch: 18398965}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			if tc.file == "mat_20M.bz2" && testing.Short() {
				t.Skip("20M references through bzip2 take seconds")
			}
			t.Parallel()
			path := filepath.Join(sharedTraces, tc.file)
			if _, err := os.Stat(path); err != nil {
				t.Skipf("shared trace missing: %v", err)
			}
			r, c, err := Open(path, "", Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if r.Format() != tc.format {
				t.Errorf("detected %q, want %q", r.Format(), tc.format)
			}
			got, err := countTrace(t, r)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("counts by kind %v, want %v", got, tc.want)
			}
			if s := r.(Skipper).Skipped(); s != 0 {
				t.Errorf("%d lines skipped", s)
			}
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
}

// TestSharedTraceEvents checks a few decoded events of the shared traces.
func TestSharedTraceEvents(t *testing.T) {
	first := func(path string, n int) []txtEvent {
		t.Helper()
		r, c, err := Open(filepath.Join(sharedTraces, path), "", Options{})
		if err != nil {
			t.Skip(err)
		}
		defer c.Close()
		b := NewBatch(n)
		if err := r.Read(b); err != nil {
			t.Fatal(err)
		}
		var evs []txtEvent
		for i := range b.Len() {
			evs = append(evs, txtEvent{b.Kind[i], b.Addr[i], b.Size[i], b.PC[i], b.Thread[i]})
		}
		return evs
	}
	for _, tc := range []struct {
		file string
		want []txtEvent
	}{
		{"cc1_9140.din", []txtEvent{txtI(0x408ed4, 4), txtR(0x10019d94, 4), txtI(0x408ed8, 4), txtW(0x10019d88, 4)}},
		{"mm32.din.gz", []txtEvent{txtI(0x130, 4), txtI(0x134, 4), txtR(0xff2f80, 4)}},
		{"dave.trace", []txtEvent{txtR(0x10, 4), txtW(0x18, 4), txtR(0x20, 4)}},
		{"pinatrace_sample.out.gz", []txtEvent{{Read, 0x602040, 1, 0x400810, 32746}, {Read, 0x602008, 1, 0x4007b0, 32746}}},
		{"mat_20M.bz2", []txtEvent{txtI(0x77ad0, 4), txtI(0x77ad4, 4)}},
	} {
		if diff := cmp.Diff(tc.want, first(tc.file, len(tc.want))); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.file, diff)
		}
	}
}

// smallDin is the uncompressed content of testdata/small.din.bz2 (made
// with the bzip2 command): 3000 din lines.
func smallDin(t *testing.T) []byte {
	t.Helper()
	f, err := os.Open("testdata/small.din.bz2")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := OpenReader(f, "small.din.bz2", "din", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var sb bytes.Buffer
	got, err := txtReadAll(t, r, BatchSize)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range got {
		sb.WriteString([]string{"0 ", "1 ", "2 "}[e.Kind])
		sb.WriteString(strings.TrimPrefix(hexString(e.Addr), "0x"))
		sb.WriteByte('\n')
	}
	return sb.Bytes()
}

func compressGzip(t testing.TB, data []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func compressZstd(t testing.TB, data []byte) []byte {
	w, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	return w.EncodeAll(data, nil)
}

func compressXz(t testing.TB, data []byte) []byte {
	var buf bytes.Buffer
	w, err := xz.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestOpenCompressed(t *testing.T) {
	plain := smallDin(t)
	bz2, err := os.ReadFile("testdata/small.din.bz2")
	if err != nil {
		t.Fatal(err)
	}
	want, err := txtReadAll(t, newDinReader(bytes.NewReader(plain), Options{}, 0), BatchSize)
	if err != nil || len(want) != 3000 {
		t.Fatalf("plain: %d events, %v", len(want), err)
	}
	gz := compressGzip(t, plain)
	half := len(plain) / 2
	for half > 0 && plain[half-1] != '\n' {
		half--
	}
	multi := append(compressGzip(t, plain[:half]), compressGzip(t, plain[half:])...)
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"plain", plain},
		{"gzip", gz},
		{"gzip multistream", multi},
		{"bzip2", bz2},
		{"zstd", compressZstd(t, plain)},
		{"xz", compressXz(t, plain)},
		{"xz multistream padded", append(append(compressXz(t, plain[:half]), 0, 0, 0, 0), compressXz(t, plain[half:])...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, format := range []string{"", "auto", "din"} {
				r, err := OpenReader(bytes.NewReader(tc.data), tc.name, format, Options{})
				if err != nil {
					t.Fatal(err)
				}
				got, err := txtReadAll(t, r, BatchSize)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("format %q: events (-want +got):\n%s", format, diff)
				}
			}
			if tc.name == "plain" {
				return
			}
			// Truncated input is an error, never a silent end: try the
			// cuts in the first and last 40 bytes and 40 in between.
			var cuts []int
			for i := 1; i <= 40; i++ {
				cuts = append(cuts, i, len(tc.data)-i, i*len(tc.data)/41)
			}
			for _, cut := range cuts {
				if tc.name == "gzip multistream" && cut == len(multi)-len(compressGzip(t, plain[half:])) {
					continue // a cut between members leaves a valid gzip file
				}
				for _, format := range []string{"din", ""} {
					r, err := OpenReader(bytes.NewReader(tc.data[:cut]), tc.name, format, Options{})
					if err == nil {
						_, err = txtReadAll(t, r, BatchSize)
					}
					if err == nil {
						t.Fatalf("cut at %d of %d, format %q: no error", cut, len(tc.data), format)
					}
					var de *DecompressError
					if cut >= 6 && (!errors.As(err, &de) || !de.Truncated || !errors.Is(err, io.ErrUnexpectedEOF)) {
						t.Fatalf("cut at %d of %d, format %q: error %v, want a truncated stream", cut, len(tc.data), format, err)
					}
				}
			}
		})
	}
}

func TestOpenFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.trace.zst") // the extension does not matter
	if err := os.WriteFile(path, compressGzip(t, []byte(" L 10,4\n S 20,8\n")), 0o666); err != nil {
		t.Fatal(err)
	}
	r, c, err := Open(path, "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := txtReadAll(t, r, 4)
	if diff := cmp.Diff([]txtEvent{txtR(0x10, 4), txtW(0x20, 8)}, got); diff != "" || err != nil {
		t.Errorf("error %v, events (-want +got):\n%s", err, diff)
	}
	if err := c.Close(); err != nil {
		t.Error(err)
	}
	// Errors name the file.
	bad := filepath.Join(dir, "bad.din")
	os.WriteFile(bad, []byte("0 10\n0 1\n0 2\n0 3\n0 4\n0 5\n0 6\n0 7\n0 8\n0 9\n0 a\n0 b\n0 c\n0 d\n0 e\n0 f\n0 zz\n"), 0o666)
	r, c, err = Open(bad, "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = txtReadAll(t, r, 64)
	if want := bad + `:17: bad hex address: "0 zz"`; errText(err) != want {
		t.Errorf("error %v, want %s", err, want)
	}
	c.Close()
	r, c, err = Open(bad, "", Options{Name: "other", SkipBad: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err = txtReadAll(t, r, 64)
	if len(got) != 16 || err != nil || r.(Skipper).Skipped() != 1 {
		t.Errorf("SkipBad: %d events, error %v", len(got), err)
	}
	c.Close()
	if _, _, err := Open(filepath.Join(dir, "missing"), "", Options{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: error %v", err)
	}
	// "-" is standard input.
	stdin := os.Stdin
	defer func() { os.Stdin = stdin }()
	if os.Stdin, err = os.Open(path); err != nil {
		t.Fatal(err)
	}
	r, c, err = Open("-", "lackey", Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err = txtReadAll(t, r, 4)
	if len(got) != 2 || err != nil {
		t.Errorf("stdin: %d events, error %v", len(got), err)
	}
	c.Close()
	os.Stdin.Close()
}

func TestDetect(t *testing.T) {
	var names []string
	for _, f := range Formats() {
		names = append(names, f.Name)
	}
	tried := strings.Join(names, ", ")
	many := strings.Repeat("2 77ad0\n", 20) + "2 zz\n"
	for _, tc := range []struct {
		name, in, want, err string
	}{
		{name: "din", in: "2 408ed4\n0 10019d94\n", want: "din"},
		{name: "din one line no newline", in: "1 7ffd8c7c", want: "din"},
		{name: "din extra columns", in: "2 130 4\ti1\n", want: "din"},
		{name: "din bad after 16 events", in: many, want: "din"},
		{name: "din cut line", in: "2 77ad0\n2 77a", want: "din"},
		{name: "xdin", in: "r 1000 4\ni 2000 4\n", want: "xdin"},
		{name: "lackey", in: " L 10,1\n M 20,1\n", want: "lackey"},
		{name: "lackey ifetch", in: "I  004005b6,5\n S 7ff000398,8\n", want: "lackey"},
		{name: "lackey valgrind", in: "==1== Lackey\n==1== Copyright\n\nI  04016b0,3\n", want: "lackey"},
		{name: "pinatrace", in: "0x400810: R 0x602040; TID: 32746\n", want: "pinatrace"},
		{name: "pinatrace plain", in: "0x400810: R 0x602040\n#eof\n", want: "pinatrace"},
		{name: "addrkind", in: "0x77ad0 I\n0x77ad4 I\n", want: "addrkind"},
		{name: "garbage", in: "hello world\n", err: "cannot detect the trace format of t.in: tried " + tried + "; use --format"},
		{name: "bad second line", in: "2 77ad0\nhello\n", err: "cannot detect the trace format of t.in: tried " + tried + "; use --format"},
		{name: "only comments", in: "==1== nothing\n", err: "no references in t.in"},
		{name: "only blank lines", in: "\n \n\t\r\n\r", err: "no references in t.in"},
		{name: "pinatrace comments", in: "# a\n#eof\n", err: "no references in t.in"},
		{name: "binary", in: "\x00\x01\x02\x03", err: "cannot detect the trace format of t.in: tried " + tried + "; use --format"},
		{name: "empty", in: "", err: "t.in is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, gz := range []bool{false, true} {
				in := []byte(tc.in)
				if gz {
					in = compressGzip(t, in)
				}
				r, err := OpenReader(bytes.NewReader(in), "t.in", "", Options{})
				if errText(err) != tc.err {
					t.Errorf("gzip %v: error %q, want %q", gz, errText(err), tc.err)
				}
				if err == nil && r.Format() != tc.want {
					t.Errorf("gzip %v: format %q, want %q", gz, r.Format(), tc.want)
				}
			}
		})
	}
	// Each text format accepts only its own sample.
	samples := map[string]string{
		"din": "2 408ed4\n", "xdin": "r 1000 4\n", "lackey": " L 10,1\n",
		"pinatrace": "0x1: R 0x2\n", "addrkind": "0x77ad0 I\n",
	}
	for name, sample := range samples {
		for _, f := range Formats() {
			if _, ok := samples[f.Name]; !ok {
				continue
			}
			if got := f.Detect([]byte(sample)); got != (f.Name == name) {
				t.Errorf("%s.Detect(%q) = %v", f.Name, sample, got)
			}
		}
	}
	if _, err := OpenReader(strings.NewReader("2 0\n"), "t.in", "nope", Options{}); err == nil || !strings.Contains(err.Error(), `unknown trace format "nope" (known: `+tried+")") {
		t.Errorf("unknown format: error %v", err)
	}
	// A named format skips detection, even of an empty input.
	r, err := OpenReader(strings.NewReader(""), "t.in", "din", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := txtReadAll(t, r, 4); len(got) != 0 || err != nil {
		t.Errorf("empty din: %d events, %v", len(got), err)
	}
}

// compressedInputs returns plain compressed with each compressor, by
// name.
func compressedInputs(t testing.TB, plain []byte) map[string][]byte {
	bz2, err := os.ReadFile("testdata/small.din.bz2")
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]byte{"gzip": compressGzip(t, plain), "bzip2": bz2, "zstd": compressZstd(t, plain), "xz": compressXz(t, plain)}
}

// readEnd reads data through OpenReader to its end and returns the
// number of events and the error that ended them (nil for io.EOF).
func readEnd(t testing.TB, data []byte) (int, error) {
	r, err := OpenReader(bytes.NewReader(data), "t.in", "", Options{})
	if err != nil {
		return 0, err
	}
	b := NewBatch(BatchSize)
	n := 0
	for calls := 0; ; calls++ {
		if calls > 1<<20 {
			t.Fatalf("no end after %d Read calls", calls)
		}
		err := r.Read(b)
		n += b.Len()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// Compressed input cut short gives its events, then says where it ends
// (issue 29, item 3); corrupt compressed input is blamed on the
// decompressor, not on the garbage it made (item 4); an xz stream followed
// by garbage says so (item 5).
func TestCompressedErrors(t *testing.T) {
	plain := smallDin(t)
	for name, data := range compressedInputs(t, plain) {
		t.Run(name, func(t *testing.T) {
			cut := len(data) * 2 / 3
			n, err := readEnd(t, data[:cut])
			want := fmt.Sprintf("reading t.in: truncated %s data: the input ends at compressed byte %d, inside the stream", name, cut)
			if err == nil || !strings.HasSuffix(err.Error(), want) {
				t.Errorf("cut at %d: %d events, error %v, want %q", cut, n, err, want)
			}
			if n == 0 && name == "gzip" {
				t.Errorf("cut at %d: no events", cut)
			}
			for i := 10; i < len(data)-4; i += max(1, len(data)/97) {
				bad := bytes.Clone(data)
				bad[i] ^= 0x10
				n, err := readEnd(t, bad)
				var de *DecompressError
				if !errors.As(err, &de) {
					t.Errorf("byte %d flipped: %d events, error %v, want corrupt data", i, n, err)
				} else if de.Truncated || !strings.Contains(err.Error(), "corrupt "+name+" data") {
					t.Errorf("byte %d flipped: %v", i, err)
				}
			}
		})
	}
	xzData := compressXz(t, plain)
	for _, tail := range []string{"garbage!", "\x00\x00\x00\x00garbage and more garbage"} {
		n, err := readEnd(t, append(bytes.Clone(xzData), tail...))
		want := fmt.Sprintf("reading t.in: data after the end of the xz stream at compressed byte %d is not xz data", len(xzData))
		if n != 3000 || err == nil || err.Error() != want {
			t.Errorf("xz and %q: %d events, %v; want 3000 events, %q", tail, n, err, want)
		}
	}
}

// FuzzCompressedDamage damages a compressed trace (a cut and a flipped
// byte after the magic bytes) and checks that reading it ends with a
// decompressor's error or, if the damage left it valid, the full trace:
// never with an error blamed on a line.
func FuzzCompressedDamage(f *testing.F) {
	plain := []byte(strings.Repeat("2 408ed4\n0 10019d94\n1 7fff0010\n", 200))
	inputs := compressedInputs(f, plain)
	names := []string{"gzip", "bzip2", "zstd", "xz"}
	f.Add(uint8(0), uint16(100), uint16(0), uint8(1))
	f.Add(uint8(1), uint16(0), uint16(200), uint8(4))
	f.Add(uint8(3), uint16(30), uint16(9), uint8(0x80))
	f.Fuzz(func(t *testing.T, which uint8, cut, flip uint16, mask uint8) {
		name := names[int(which)%len(names)]
		data := bytes.Clone(inputs[name])
		if name == "bzip2" {
			data = compressedInputs(t, smallDin(t))["bzip2"]
		}
		if c := int(cut) % (len(data) + 1); c > 6 {
			data = data[:c]
		}
		if i := 6 + int(flip)%max(1, len(data)-6); i < len(data) {
			data[i] ^= mask
		}
		n, err := readEnd(t, data)
		var de *DecompressError
		if err != nil && !errors.As(err, &de) {
			t.Fatalf("%s: %d events, error %v, want the decompressor's", name, n, err)
		}
	})
}

func FuzzOpenReader(f *testing.F) {
	f.Add([]byte("2 408ed4\n0 10019d94\n"))
	f.Add([]byte("r 1000 4\ni 2000 4\n"))
	f.Add([]byte("==1== Lackey\nI  04016b0,3\n L 10,1\n"))
	f.Add([]byte("0x400810: R 0x602040; TID: 32746\n#eof\n"))
	f.Add([]byte("0x77ad0 I\n0x77ad4 D\n"))
	f.Add(compressGzip(f, []byte("2 408ed4\n0 10019d94\n")))
	f.Add(compressZstd(f, []byte(" L 10,1\n")))
	f.Add(compressXz(f, []byte("0x77ad0 I\n")))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := OpenReader(bytes.NewReader(data), "fuzz", "", Options{})
		if err != nil {
			return
		}
		b := NewBatch(64)
		for calls := 0; ; calls++ {
			if calls > 1<<20 {
				t.Fatalf("no end after %d Read calls", calls)
			}
			err := r.Read(b)
			for _, k := range b.Kind {
				if !k.Valid() {
					t.Fatalf("invalid kind %v", k)
				}
			}
			if err != nil {
				break
			}
			if b.Len() == 0 {
				t.Fatal("no events and no error")
			}
		}
	})
}

// BenchmarkOpenDin measures a din trace read through OpenReader (format
// detection, buffering).
func BenchmarkOpenDin(b *testing.B) {
	data := txtBenchInput("din", 4<<20)
	batch := NewBatch(BatchSize)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := OpenReader(bytes.NewReader(data), "bench", "", Options{})
		if err != nil {
			b.Fatal(err)
		}
		for {
			if err := r.Read(batch); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(4<<20)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}

// BenchmarkOpenDinGzip measures a gzip-compressed din trace.
func BenchmarkOpenDinGzip(b *testing.B) {
	data := compressGzip(b, txtBenchInput("din", 4<<20))
	batch := NewBatch(BatchSize)
	b.ReportAllocs()
	for b.Loop() {
		r, err := OpenReader(bytes.NewReader(data), "bench", "", Options{})
		if err != nil {
			b.Fatal(err)
		}
		for {
			if err := r.Read(batch); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(4<<20)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}

// TestOpenReadahead reads compressed files through Open, whose
// decompressor runs ahead in a goroutine, to the end and partly.
func TestOpenReadahead(t *testing.T) {
	plain := txtBenchInput("din", 1<<18)
	dir := t.TempDir()
	for name, data := range map[string][]byte{
		"gz": compressGzip(t, plain), "zst": compressZstd(t, plain), "xz": compressXz(t, plain),
	} {
		path := filepath.Join(dir, "t."+name)
		if err := os.WriteFile(path, data, 0o666); err != nil {
			t.Fatal(err)
		}
		for _, limit := range []int{0, 1, 100} {
			r, c, err := Open(path, "", Options{})
			if err != nil {
				t.Fatal(err)
			}
			b := NewBatch(1000)
			n := 0
			for calls := 1; limit == 0 || calls <= limit; calls++ {
				err = r.Read(b)
				n += b.Len()
				if err != nil {
					break
				}
			}
			if limit == 0 && (err != io.EOF || n != 1<<18) {
				t.Errorf("%s: %d events, error %v", name, n, err)
			}
			if err := c.Close(); err != nil {
				t.Errorf("%s: Close: %v", name, err)
			}
			// Reading after Close may return buffered events, then fails.
			for range 1 << 12 {
				if err := r.Read(b); err != nil {
					break
				}
			}
		}
		// Truncated: the error reaches the reader.
		os.WriteFile(path, data[:len(data)-10], 0o666)
		r, c, err := Open(path, "din", Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := countTrace(t, r); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("%s truncated: error %v", name, err)
		}
		c.Close()
	}
	// A reader dropped before its end does not leak its goroutine.
	gz := compressGzip(t, plain)
	before := runtime.NumGoroutine()
	b := NewBatch(16)
	for range 10 {
		r, err := OpenReader(bytes.NewReader(gz), "t.gz", "", Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Read(b); err != nil {
			t.Fatal(err)
		}
	}
	for try := 0; try < 100 && runtime.NumGoroutine() > before; try++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines, %d before opening", n, before)
	}
}
