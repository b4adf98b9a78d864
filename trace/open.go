package trace

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// detectHeadSize is how much of the decompressed input Detect functions see.
const detectHeadSize = 64 << 10

// Open opens the trace at path ("-" for standard input) and returns a
// reader of the given format ("" or "auto" to detect it) and a Closer that
// releases the file and any decompressor. Compressed input (gzip, bzip2,
// zstd, xz) is recognised by its magic bytes and decompressed on the fly.
// If opt.Name is empty it is set to path.
func Open(path, format string, opt Options) (Reader, io.Closer, error) {
	if opt.Name == "" {
		opt.Name = path
	}
	var f *os.File
	if path == "-" {
		f = os.Stdin
	} else {
		var err error
		if f, err = os.Open(path); err != nil {
			return nil, nil, err
		}
	}
	r, dec, err := openStream(f, opt.Name, format, opt)
	if err != nil {
		if f != os.Stdin {
			f.Close()
		}
		return nil, nil, err
	}
	return r, &openCloser{f: f, dec: dec}, nil
}

// OpenReader is Open for an already open stream r, called name in error
// messages (opt.Name, if set, takes precedence). It does not close r. If r
// is compressed, a goroutine reads and decompresses it ahead of the
// returned reader; the goroutine ends at the end of r, on an error, or
// once the returned reader is no longer referenced.
func OpenReader(r io.Reader, name, format string, opt Options) (Reader, error) {
	if opt.Name == "" {
		opt.Name = name
	}
	tr, _, err := openStream(r, opt.Name, format, opt)
	return tr, err
}

// openCloser closes the decompressor, then the file.
type openCloser struct {
	f   *os.File
	dec io.Closer
}

func (c *openCloser) Close() error {
	var err error
	if c.dec != nil {
		err = c.dec.Close()
	}
	if c.f != nil && c.f != os.Stdin {
		if e := c.f.Close(); err == nil {
			err = e
		}
	}
	c.f, c.dec = nil, nil
	return err
}

// decompressor describes a compressed stream format.
type decompressor struct {
	name  string
	magic []byte
	open  func(r io.Reader) (io.Reader, io.Closer, error)
}

var decompressors = []decompressor{
	{"gzip", []byte{0x1f, 0x8b}, func(r io.Reader) (io.Reader, io.Closer, error) {
		z, err := gzip.NewReader(r)
		return z, z, err
	}},
	{"bzip2", []byte("BZh"), func(r io.Reader) (io.Reader, io.Closer, error) {
		return bzip2.NewReader(r), nil, nil
	}},
	{"zstd", []byte{0x28, 0xb5, 0x2f, 0xfd}, func(r io.Reader) (io.Reader, io.Closer, error) {
		z, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
		if err != nil {
			return nil, nil, err
		}
		return z, closeFunc(z.Close), nil
	}},
	{"xz", []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}, func(r io.Reader) (io.Reader, io.Closer, error) {
		t := &tailWatcher{r: r}
		z, err := xz.NewReader(t)
		if err != nil {
			return nil, nil, err
		}
		return &xzReader{z: z, tail: t}, nil, nil
	}},
}

// xzReader checks the end of an xz input: the xz package reports a clean
// end for input cut at a block boundary, so xzReader accepts the end only
// if the input ends with a valid stream footer (and optional padding).
type xzReader struct {
	z    *xz.Reader
	tail *tailWatcher
}

func (x *xzReader) Read(p []byte) (int, error) {
	n, err := x.z.Read(p)
	if err == io.EOF && !x.tail.xzFooter() {
		err = fmt.Errorf("xz: stream footer missing: %w", io.ErrUnexpectedEOF)
	}
	return n, err
}

// tailWatcher passes reads through and remembers the last 12 bytes before
// the trailing zero bytes of what it read.
type tailWatcher struct {
	r     io.Reader
	win   [12]byte
	nwin  int
	zeros int64
}

func (w *tailWatcher) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	c := p[:max(n, 0)]
	j := len(c) - 1
	for j >= 0 && c[j] == 0 {
		j--
	}
	if j < 0 {
		w.zeros += int64(len(c))
		return n, err
	}
	var tmp [36]byte // old window, up to 12 zeros, up to 12 new bytes
	k := copy(tmp[:], w.win[:w.nwin])
	k += int(min(w.zeros, 12))
	k += copy(tmp[k:], c[max(0, j+1-12):j+1])
	w.nwin = copy(w.win[:], tmp[max(0, k-12):k])
	w.zeros = int64(len(c) - 1 - j)
	return n, err
}

// xzFooter reports whether the input seen ends with an xz stream footer
// (CRC32 of the backward size and flags, then "YZ") and stream padding.
func (w *tailWatcher) xzFooter() bool {
	f := w.win
	return w.nwin == 12 && w.zeros%4 == 0 && f[10] == 'Y' && f[11] == 'Z' &&
		crc32.ChecksumIEEE(f[4:10]) == binary.LittleEndian.Uint32(f[0:4])
}

// closeFunc adapts a Close method without result to io.Closer.
type closeFunc func()

func (f closeFunc) Close() error { f(); return nil }

// openStream decompresses r if needed, picks the format and returns the
// reader and the decompressor's Closer (nil if none). A decompressor runs
// in its own goroutine, ahead of the reader; the Closer stops it, and so
// does the garbage collector once the reader is unreachable.
func openStream(r io.Reader, name, format string, opt Options) (Reader, io.Closer, error) {
	var f Format
	if format != "" && format != "auto" {
		var ok bool
		if f, ok = Lookup(format); !ok {
			return nil, nil, fmt.Errorf("unknown trace format %q (known: %s)", format, strings.Join(formatNames(), ", "))
		}
	}
	br := bufio.NewReaderSize(r, detectHeadSize)
	magic, err := br.Peek(6)
	if err != nil && err != io.EOF {
		return nil, nil, fmt.Errorf("reading %s: %w", name, err)
	}
	var in io.Reader = br
	var dec io.Closer
	for _, c := range decompressors {
		if !bytes.HasPrefix(magic, c.magic) {
			continue
		}
		if c.name == "bzip2" && (len(magic) < 4 || magic[3] < '1' || magic[3] > '9') {
			continue
		}
		d, cl, err := c.open(br)
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s as %s: %w", name, c.name, err)
		}
		ra := newReadahead(d, cl)
		b := bufio.NewReaderSize(ra, detectHeadSize)
		runtime.AddCleanup(b, func(ra *readahead) { ra.Close() }, ra)
		in, dec = b, ra
		break
	}
	if f.New == nil {
		var head []byte
		if b, ok := in.(*bufio.Reader); ok {
			head, err = b.Peek(detectHeadSize)
		}
		if err != nil && err != io.EOF {
			closeQuietly(dec)
			return nil, nil, fmt.Errorf("reading %s: %w", name, err)
		}
		if len(head) == 0 {
			closeQuietly(dec)
			return nil, nil, fmt.Errorf("%s is empty", name)
		}
		if f, err = DetectFormat(head); err != nil {
			closeQuietly(dec)
			return nil, nil, fmt.Errorf("cannot detect the trace format of %s: %w; use --format", name, err)
		}
	}
	return f.New(in, opt), dec, nil
}

// DetectFormat returns the first registered format whose Detect accepts
// head, the start of a decompressed input. If none does, the error lists
// the formats tried.
func DetectFormat(head []byte) (Format, error) {
	for _, f := range formats {
		if f.Detect != nil && f.Detect(head) {
			return f, nil
		}
	}
	return Format{}, fmt.Errorf("tried %s", strings.Join(formatNames(), ", "))
}

func formatNames() []string {
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = f.Name
	}
	return names
}

func closeQuietly(c io.Closer) {
	if c != nil {
		c.Close()
	}
}

// Readahead sizes: buffers of readaheadSize bytes, readaheadBufs of them.
const (
	readaheadSize = 256 << 10
	readaheadBufs = 4
)

// readahead runs a decompressor in its own goroutine, so decompression
// overlaps parsing and simulation. The goroutine owns the decompressor and
// closes it when it stops: at the end of the input, on an error, or when
// Close is called.
type readahead struct {
	full chan readaheadChunk // filled buffers, in order
	free chan []byte         // buffers to fill
	stop chan struct{}       // closed by Close
	cur  readaheadChunk      // the chunk being consumed
	once sync.Once
}

// readaheadChunk is a filled buffer and the error that followed its data.
type readaheadChunk struct {
	buf  []byte // the whole buffer, to recycle
	data []byte // its unread data
	err  error
}

func newReadahead(src io.Reader, c io.Closer) *readahead {
	ra := &readahead{
		full: make(chan readaheadChunk, readaheadBufs),
		free: make(chan []byte, readaheadBufs),
		stop: make(chan struct{}),
	}
	for range readaheadBufs {
		ra.free <- make([]byte, readaheadSize)
	}
	go ra.run(src, c)
	return ra
}

func (ra *readahead) run(src io.Reader, c io.Closer) {
	defer closeQuietly(c)
	for {
		var buf []byte
		select {
		case buf = <-ra.free:
		case <-ra.stop:
			return
		}
		n := 0
		var err error
		for n < len(buf) && err == nil {
			var k int
			k, err = src.Read(buf[n:])
			n += k
		}
		select {
		case ra.full <- readaheadChunk{buf: buf, data: buf[:n], err: err}:
		case <-ra.stop:
			return
		}
		if err != nil {
			return
		}
	}
}

// Read returns decompressed data.
func (ra *readahead) Read(p []byte) (int, error) {
	for len(ra.cur.data) == 0 {
		if ra.cur.err != nil {
			return 0, ra.cur.err
		}
		if ra.cur.buf != nil {
			ra.free <- ra.cur.buf // never blocks: there are readaheadBufs buffers
			ra.cur.buf = nil
		}
		select {
		case ra.cur = <-ra.full:
		case <-ra.stop:
			return 0, errors.New("trace: read after Close")
		}
	}
	n := copy(p, ra.cur.data)
	ra.cur.data = ra.cur.data[n:]
	return n, nil
}

// Close stops the goroutine, which then closes the decompressor.
func (ra *readahead) Close() error {
	ra.once.Do(func() { close(ra.stop) })
	return nil
}
