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
	switch {
	case err == io.EOF && !x.tail.xzFooter():
		err = fmt.Errorf("xz: stream footer missing: %w", io.ErrUnexpectedEOF)
	case err != nil && err != io.EOF && x.tail.footerEnd > 0 &&
		(err.Error() == "xz: invalid header magic bytes" || errors.Is(err, io.ErrUnexpectedEOF) && x.tail.n-x.tail.footerEnd < xzHeaderLen):
		// The decoder looked for the next stream after a complete one.
		err = &xzTrailing{end: x.tail.footerEnd, err: err}
	}
	return n, err
}

// xzHeaderLen is the length of an xz stream header.
const xzHeaderLen = 12

// xzTrailing reports data after a complete xz stream that is not another
// stream.
type xzTrailing struct {
	end int64 // where the complete stream ends
	err error
}

func (e *xzTrailing) Error() string {
	return fmt.Sprintf("data after the xz stream ending at byte %d: %v", e.end, e.err)
}

func (e *xzTrailing) Unwrap() error { return e.err }

// tailWatcher passes reads through, remembers the last 12 bytes before
// the trailing zero bytes of what it read, and where the last xz stream
// footer seen ends.
type tailWatcher struct {
	r         io.Reader
	win       [12]byte
	nwin      int
	zeros     int64
	n         int64  // bytes read
	prev      []byte // the last up to 11 bytes read
	footerEnd int64  // the offset after the last stream footer seen (0: none)
	// footerRead is the offset after the last stream footer the decoder
	// read as one: the xz package may take the end of the input inside a
	// block header for the end of the stream.
	footerRead int64
}

func (w *tailWatcher) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	c := p[:max(n, 0)]
	w.footers(c)
	w.n += int64(len(c))
	if len(p) == 12 && n == 12 && isXZFooter(c) {
		w.footerRead = w.n
	}
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

// footers looks for stream footers ending in c, the data read after the
// first w.n bytes.
func (w *tailWatcher) footers(c []byte) {
	if len(c) == 0 {
		return
	}
	buf := append(w.prev, c...)
	base := w.n - int64(len(w.prev))
	for i := 0; ; {
		k := bytes.Index(buf[i:], []byte("YZ"))
		if k < 0 {
			break
		}
		i += k + 2
		if i >= 12 && isXZFooter(buf[i-12:i]) {
			w.footerEnd = base + int64(i)
		}
	}
	w.prev = append(w.prev[:0], buf[max(0, len(buf)-11):]...)
}

// isXZFooter reports whether f, 12 bytes, is an xz stream footer: the
// CRC32 of the backward size and flags, then "YZ".
func isXZFooter(f []byte) bool {
	return f[10] == 'Y' && f[11] == 'Z' && crc32.ChecksumIEEE(f[4:10]) == binary.LittleEndian.Uint32(f[0:4])
}

// xzFooter reports whether the input seen ends with an xz stream footer,
// read as one, and stream padding.
func (w *tailWatcher) xzFooter() bool {
	return w.nwin == 12 && w.zeros%4 == 0 && isXZFooter(w.win[:]) && w.footerRead+w.zeros == w.n
}

// corruptionLimit is how much decompressed data a text reader that finds
// a malformed line reads on for a checksum error of the decompressor,
// which explains the line better: bzip2 checks each block of up to 900 kB,
// xz and zstd blocks are checked at their ends, gzip at the end of the
// stream.
const corruptionLimit = 16 << 20

// decompressed is the buffered output of a decompressor.
type decompressed struct {
	*bufio.Reader
	ra *readahead
}

// corruption returns the decompressor's error, if it finds one within
// corruptionLimit more bytes: a reader that meets a malformed line asks
// it, as corrupt compressed data can decompress to garbage before its
// checksum fails. It consumes the input.
func (d *decompressed) corruption() error {
	return d.ra.corruption(corruptionLimit)
}

// corruptionChecker is implemented by decompressed input (see
// decompressed.corruption).
type corruptionChecker interface {
	corruption() error
}

// compressedCounter counts the compressed bytes a decompressor reads and
// remembers the error that ended them.
type compressedCounter struct {
	r   io.Reader
	n   int64
	err error
}

func (c *compressedCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil {
		c.err = err
	}
	return n, err
}

// DecompressError reports compressed input that ends too early or fails
// to decompress.
type DecompressError struct {
	Format    string // gzip, bzip2, xz or zstd
	Offset    int64  // compressed bytes the decompressor had read when it failed
	Truncated bool   // the input ends inside the compressed stream
	Trailing  bool   // the compressed stream ended at Offset, followed by data that is not
	Err       error  // the decompressor's error
}

func (e *DecompressError) Error() string {
	switch {
	case e.Truncated:
		return fmt.Sprintf("truncated %s data: the input ends at compressed byte %d, inside the stream", e.Format, e.Offset)
	case e.Trailing:
		return fmt.Sprintf("data after the end of the %s stream at compressed byte %d is not %s data", e.Format, e.Offset, e.Format)
	}
	what := ""
	if isChecksumError(e.Err) {
		what = " (checksum mismatch)"
	}
	return fmt.Sprintf("corrupt %s data%s, found at compressed byte %d", e.Format, what, e.Offset)
}

// Unwrap returns the decompressor's error.
func (e *DecompressError) Unwrap() error { return e.Err }

// classify turns the error err of the decompressor named format, which
// read its input through cnt, into a *DecompressError, unless it is an
// error of the input itself.
func classify(format string, cnt *compressedCounter, err error) error {
	if cnt.err != nil && cnt.err != io.EOF {
		return err // the input failed, not the data
	}
	e := &DecompressError{Format: format, Offset: cnt.n, Err: err}
	var xe *xzTrailing
	switch {
	case errors.As(err, &xe):
		e.Offset, e.Trailing = xe.end, true
	case cnt.err == io.EOF && (errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)):
		e.Truncated = true
	}
	return e
}

// isChecksumError reports whether err is a decompressor's checksum error.
func isChecksumError(err error) bool {
	var se bzip2.StructuralError
	return errors.Is(err, gzip.ErrChecksum) || errors.Is(err, zstd.ErrCRCMismatch) ||
		errors.As(err, &se) && strings.Contains(string(se), "checksum") ||
		err != nil && strings.HasPrefix(err.Error(), "xz: ") && strings.Contains(err.Error(), "checksum")
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
		cnt := &compressedCounter{r: br}
		d, cl, err := c.open(cnt)
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", name, classify(c.name, cnt, err))
		}
		ra := newReadahead(d, cl, func(err error) error { return classify(c.name, cnt, err) })
		b := bufio.NewReaderSize(ra, detectHeadSize)
		runtime.AddCleanup(b, func(ra *readahead) { ra.Close() }, ra)
		in, dec = &decompressed{Reader: b, ra: ra}, ra
		break
	}
	if f.New == nil {
		var head []byte
		sticky := false // a read error comes back on the next read
		switch b := in.(type) {
		case *bufio.Reader:
			head, err = b.Peek(detectHeadSize)
		case *decompressed:
			head, err = b.Peek(detectHeadSize)
			sticky = true
		}
		// A decompressor's error after some data is left for the reader
		// to meet after that data, so that what comes before it is read.
		if err != nil && err != io.EOF && (len(head) == 0 || !sticky) {
			var de *DecompressError
			if errors.As(err, &de) {
				// Nothing decompressed: a reader of no events that
				// fails as the input does, so that the statistics (of
				// nothing) are still given.
				return &failedReader{format: de.Format, err: fmt.Errorf("reading %s: %w", name, err)}, dec, nil
			}
			closeQuietly(dec)
			return nil, nil, fmt.Errorf("reading %s: %w", name, err)
		}
		if len(head) == 0 {
			closeQuietly(dec)
			return nil, nil, fmt.Errorf("%s is empty", name)
		}
		if f, err = DetectFormat(head); err != nil && len(head) < detectHeadSize && noReferences(head) {
			closeQuietly(dec)
			return nil, nil, fmt.Errorf("no references in %s", name)
		}
		if err != nil {
			if d, ok := in.(*decompressed); ok {
				// Garbage from corrupt data is the decompressor's fault.
				var de *DecompressError
				if cerr := d.corruption(); errors.As(cerr, &de) {
					return &failedReader{format: de.Format, err: fmt.Errorf("reading %s: %w", name, cerr)}, dec, nil
				}
			}
			closeQuietly(dec)
			return nil, nil, fmt.Errorf("cannot detect the trace format of %s: %w; use --format", name, err)
		}
	}
	return f.New(in, opt), dec, nil
}

// failedReader is the reader of compressed input that fails before any of
// it decompresses: it has no events and returns the error.
type failedReader struct {
	format string // the compression's name, as no trace format is known
	err    error
}

// Read returns the error.
func (r *failedReader) Read(b *Batch) error {
	b.Reset()
	return r.err
}

// Format returns the name of the compression.
func (r *failedReader) Format() string { return r.format }

// noReferences reports whether some text format reads the whole input
// head without an event and without a malformed line: it is blank lines
// and comments only.
func noReferences(head []byte) bool {
	for _, f := range formats {
		if f.Name == "mst" {
			continue
		}
		r := f.New(bytes.NewReader(head), Options{SkipBad: true})
		b := NewBatch(detectLines)
		err := r.Read(b)
		if s, ok := r.(Skipper); ok && b.Len() == 0 && err == io.EOF && s.Skipped() == 0 {
			return true
		}
	}
	return false
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

// newReadahead starts decompressing src; wrap turns the error that ends
// src (other than io.EOF) into the one Read returns.
func newReadahead(src io.Reader, c io.Closer, wrap func(error) error) *readahead {
	ra := &readahead{
		full: make(chan readaheadChunk, readaheadBufs),
		free: make(chan []byte, readaheadBufs),
		stop: make(chan struct{}),
	}
	for range readaheadBufs {
		ra.free <- make([]byte, readaheadSize)
	}
	go ra.run(src, c, wrap)
	return ra
}

func (ra *readahead) run(src io.Reader, c io.Closer, wrap func(error) error) {
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
		if err != nil && err != io.EOF {
			err = wrap(err)
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

// corruption reads ahead, discarding up to limit bytes, for an error of
// the decompressor, and returns it (nil if there is none so far).
func (ra *readahead) corruption(limit int) error {
	for n := 0; n <= limit; {
		if ra.cur.err != nil {
			if ra.cur.err == io.EOF {
				return nil
			}
			return ra.cur.err
		}
		n += len(ra.cur.data)
		ra.cur.data = nil
		if ra.cur.buf != nil {
			ra.free <- ra.cur.buf
			ra.cur.buf = nil
		}
		select {
		case ra.cur = <-ra.full:
		case <-ra.stop:
			return nil
		}
	}
	return nil
}

// Close stops the goroutine, which then closes the decompressor.
func (ra *readahead) Close() error {
	ra.once.Do(func() { close(ra.stop) })
	return nil
}
