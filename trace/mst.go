package trace

// The .mst format: memspy's own binary trace format.
//
// An .mst stream is a header, a sequence of blocks and a trailer. All
// integers are little-endian; "uvarint" is the unsigned LEB128 varint of
// encoding/binary and "zigzag" maps a signed value s to (s<<1)^(s>>63).
// docs/mst.md is the byte-level specification; this is a summary.
//
//	header   magic "\x89MST\r\n\x1a\n", u16 major, u16 minor, u32 flags,
//	         u32 metaLen, metaLen bytes of JSON (MSTMeta), u32 CRC-32C of
//	         all preceding header bytes
//	block    32-byte block header + stored payload (see below); 'C' blocks
//	         carry events, one 'I' block (the index) ends the sequence,
//	         lower-case tags are optional blocks a reader skips
//	trailer  u64 index offset, u64 total events, u32 chunk count,
//	         u32 CRC-32C of the previous 20 bytes, end magic "\x89MSTEND\n"
//
// Block header: u8 tag, u8 codec, u8 columns, u8 reserved, u32 count, u64
// first, u32 rawLen, u32 storedLen, u32 CRC-32C of the stored payload, u32
// CRC-32C of the preceding 28 header bytes. For a chunk ('C'), count is the
// number of events (1..MSTMaxChunkEvents), first the number of the chunk's
// first event in the file, codec 0 (none), 1 (S2 block) or 2 (zstd frame),
// and columns says whether the optional PC (bit 0) and thread (bit 1)
// columns are present. Each chunk decodes on its own: all predictors start
// at zero.
//
// The decompressed chunk payload holds an op table and columns:
//
//	u8 T, then T entries {u8 kind, u8 flags, uvarint size}
//	uvarint len(addr), uvarint len(esc), [uvarint len(pc)], [uvarint len(thread)]
//	ops     count bytes: an index into the op table, or 255 (escape: the
//	        entry is read from the esc column instead)
//	addr    one zigzag uvarint per event whose op lacks the "seq" flag:
//	        address minus the prediction of the op's stream
//	esc     one {u8 kind, u8 flags, uvarint size} per escaped event
//	pc      one zigzag uvarint per event: PC minus the previous PC
//	thread  runs {uvarint thread, uvarint length} covering count events
//
// An op's flags: bit 0 selects the stream (0 data, 1 instruction), bit 1
// "seq" says the address equals the stream's prediction (no addr entry).
// Each stream predicts its next address as its last address plus that
// event's size, so straight-line instruction fetches and sequential data
// sweeps cost one op byte per event.
//
// Versioning: the major version changes only for layout changes an older
// reader cannot skip; readers reject a higher major version with an error
// naming both versions. Minor versions add features that are announced
// where they are used (new kinds, codecs, column bits, required header
// flags, block tags), each of which an older reader rejects with an
// ErrMSTUnsupported error ("written by a newer memspy") when it meets it.

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"time"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
)

// Version and limits of the .mst format.
const (
	// MSTVersionMajor is the major .mst version this package reads and
	// writes. Readers reject files with a higher major version.
	MSTVersionMajor = 1
	// MSTVersionMinor is the minor .mst version this package writes.
	// Readers accept any minor version of their major version.
	MSTVersionMinor = 0
	// MSTMaxChunkEvents is the largest number of events in one chunk.
	MSTMaxChunkEvents = 1 << 20
	// MSTDefaultChunkEvents is the writer's default chunk size in events.
	MSTDefaultChunkEvents = 1 << 16
	// MSTMaxMetaLen is the largest metadata blob in an .mst header.
	MSTMaxMetaLen = 1 << 20
)

const (
	mstMagic    = "\x89MST\r\n\x1a\n"
	mstEndMagic = "\x89MSTEND\n"

	mstFixedHeaderLen = 20 // magic, major, minor, flags, metaLen
	mstBlockHeaderLen = 32
	mstTrailerLen     = 32
	mstIndexEntryLen  = 20 // u64 offset, u64 first event, u32 count

	// Largest encoding of one event in a raw chunk payload: op byte, addr
	// (10), escape entry (1+1+5), PC (10) and a thread run (5+5).
	mstMaxEventBytes = 1 + 10 + 7 + 10 + 10
	// Largest op table and column-length prefix.
	mstMaxTableBytes = 1 + 255*7 + 4*5
	// mstMaxIndexEntries keeps the index payload length within a u32.
	mstMaxIndexEntries = (1<<32 - 1) / mstIndexEntryLen

	mstTagChunk = 'C'
	mstTagIndex = 'I'

	// Codec ids on the wire.
	mstWireNone = 0
	mstWireS2   = 1
	mstWireZstd = 2

	// Chunk column bits.
	mstColPC     = 1 << 0
	mstColThread = 1 << 1
	mstColKnown  = mstColPC | mstColThread

	// Op flags on the wire.
	mstOpInstr = 1 << 0 // instruction stream
	mstOpSeq   = 1 << 1 // address == prediction
	mstOpKnown = mstOpInstr | mstOpSeq

	mstEscape = 255 // op code: entry follows in the esc column
	// mstMaxOps is the largest op table.
	mstMaxOps = 255

	// Header flags: bits 0-15 must be understood by a reader, bits 16-31
	// may be ignored. None are defined in version 1.0.
	mstFlagsRequired = 0xffff
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// mstMaxRawLen returns the largest raw payload of a chunk of n events.
func mstMaxRawLen(n int) int { return mstMaxTableBytes + n*mstMaxEventBytes }

// MSTMeta is the metadata stored as JSON in an .mst header. All fields are
// optional; readers ignore JSON fields they do not know.
type MSTMeta struct {
	// Creator names the program that wrote the file ("memspy" and its
	// version when known).
	Creator string `json:"creator,omitempty"`
	// Created is when the file was written.
	Created time.Time `json:"created,omitzero"`
	// Source is the name of the trace the file was converted from.
	Source string `json:"source,omitempty"`
	// SourceFormat is the trace format of Source, e.g. "din".
	SourceFormat string `json:"source_format,omitempty"`
	// Extra holds free-form key/value annotations.
	Extra map[string]string `json:"extra,omitempty"`
}

// Errors returned (wrapped in an *MSTError) by the .mst reader; test for
// them with errors.Is.
var (
	// ErrMSTTruncated means the input ended early, e.g. because the
	// writer was stopped before Close.
	ErrMSTTruncated = errors.New("truncated .mst file")
	// ErrMSTCorrupt means a checksum or a structural check failed.
	ErrMSTCorrupt = errors.New("corrupt .mst file")
	// ErrMSTUnsupported means the file uses a version or feature this
	// memspy does not know: it was written by a newer memspy.
	ErrMSTUnsupported = errors.New(".mst file needs a newer memspy")
	// ErrNotMST means the input does not start with the .mst magic.
	ErrNotMST = errors.New("not an .mst file")
)

// MSTError describes a problem found in an .mst input.
type MSTError struct {
	File   string // input name
	Offset int64  // byte offset of the header, block or trailer at fault
	Chunk  int    // 0-based number of the chunk at fault, or -1
	Events uint64 // events delivered before the problem
	Err    error  // ErrMSTTruncated, ErrMSTCorrupt, ErrMSTUnsupported or ErrNotMST
	Msg    string // what is wrong
}

func (e *MSTError) Error() string {
	where := fmt.Sprintf("byte %d", e.Offset)
	if e.Chunk >= 0 {
		where = fmt.Sprintf("chunk %d at byte %d", e.Chunk, e.Offset)
	}
	s := fmt.Sprintf("%s: %v: %s: %s", e.File, e.Err, where, e.Msg)
	if e.Err == ErrMSTTruncated {
		s += fmt.Sprintf(" (%d events were read before it)", e.Events)
	}
	return s
}

// Unwrap returns the error's class (ErrMSTTruncated, ErrMSTCorrupt, ...).
func (e *MSTError) Unwrap() error { return e.Err }

func init() {
	Register(Format{
		Name:        "mst",
		Description: "memspy binary trace (.mst): chunked, compressed, indexed",
		Detect: func(head []byte) bool {
			return len(head) >= len(mstMagic) && string(head[:len(mstMagic)]) == mstMagic
		},
		New: func(r io.Reader, opt Options) Reader { return NewMSTReader(r, opt) },
	})
}

// Decoded op table entries pack size<<32 | kind<<8 | flags.
const (
	opInstr   = mstOpInstr
	opSeq     = mstOpSeq
	opEscape  = 1 << 2 // read the entry from the esc column
	opInvalid = 1 << 3 // code outside the table
	opSlow    = opEscape | opInvalid
)

// MSTReader decodes an .mst stream. It reads the input strictly in order
// and does not need to seek, so it works on pipes.
type MSTReader struct {
	r    io.Reader
	name string

	err      error // sticky error, io.EOF at the end
	pending  error // error to return after the events already in a batch
	started  bool  // header read
	meta     MSTMeta
	major    uint16
	minor    uint16
	off      int64  // bytes consumed from r
	events   uint64 // events in the chunks loaded so far
	chunks   int    // chunks loaded so far
	indexCRC uint32 // CRC-32C of the index entries expected so far

	hdr    [mstBlockHeaderLen]byte
	stored []byte
	raw    []byte
	zdec   *zstd.Decoder

	// Decoding state of the current chunk.
	chunkOff  int64
	left      int // events not yet decoded
	ops       []byte
	addr      []byte
	ap        int
	esc       []byte
	epos      int
	pc        []byte
	pp        int
	prevPC    uint64
	hasPC     bool
	thr       []byte
	tp        int
	thrVal    uint32
	thrRun    int
	hasThread bool
	predI     uint64
	predD     uint64
	tab       [256]uint64
}

// NewMSTReader returns a reader of the .mst stream r. It reads nothing
// until the first call to Read or Meta.
func NewMSTReader(r io.Reader, opt Options) *MSTReader {
	name := opt.Name
	if name == "" {
		name = "mst"
	}
	return &MSTReader{r: r, name: name}
}

// Format returns "mst".
func (r *MSTReader) Format() string { return "mst" }

// Meta returns the metadata of the file's header, reading the header if
// that has not happened yet. If the header cannot be read it returns the
// zero MSTMeta and the next Read reports the error.
func (r *MSTReader) Meta() MSTMeta {
	if !r.started && r.err == nil {
		r.readHeader()
	}
	return r.meta
}

// Version returns the file's major and minor .mst version (0, 0 before the
// header was read).
func (r *MSTReader) Version() (major, minor int) { return int(r.major), int(r.minor) }

// Events returns the number of events in the chunks read so far.
func (r *MSTReader) Events() uint64 { return r.events }

func (r *MSTReader) fail(class error, off int64, chunk int, format string, args ...any) error {
	r.err = &MSTError{File: r.name, Offset: off, Chunk: chunk, Events: r.events,
		Err: class, Msg: fmt.Sprintf(format, args...)}
	return r.err
}

// readFull reads exactly len(p) bytes; a short read is a truncation,
// described by what.
func (r *MSTReader) readFull(p []byte, off int64, chunk int, what string) error {
	n, err := io.ReadFull(r.r, p)
	r.off += int64(n)
	if err == nil {
		return nil
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return r.fail(ErrMSTTruncated, off, chunk, "input ends inside the %s (%d of %d bytes present)", what, n, len(p))
	}
	r.err = fmt.Errorf("%s: reading .mst %s at byte %d: %w", r.name, what, off, err)
	return r.err
}

// readStored reads n bytes into r.stored, growing the buffer only as data
// arrives so that a corrupt length cannot force a large allocation.
func (r *MSTReader) readStored(n int, off int64, chunk int, what string) ([]byte, error) {
	buf := r.stored[:0]
	for len(buf) < n {
		if len(buf) == cap(buf) {
			c := min(max(2*cap(buf), 64<<10), n)
			nb := make([]byte, len(buf), c)
			copy(nb, buf)
			buf = nb
		}
		m := min(n, cap(buf))
		k, err := io.ReadFull(r.r, buf[len(buf):m])
		r.off += int64(k)
		if err != nil {
			r.stored = buf[:0]
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return nil, r.fail(ErrMSTTruncated, off, chunk, "input ends inside the %s (%d of %d bytes present)", what, len(buf)+k, n)
			}
			r.err = fmt.Errorf("%s: reading .mst %s at byte %d: %w", r.name, what, off, err)
			return nil, r.err
		}
		buf = buf[:m]
	}
	r.stored = buf[:0]
	return buf, nil
}

func (r *MSTReader) readHeader() error {
	r.started = true
	var h [mstFixedHeaderLen]byte
	n, err := io.ReadFull(r.r, h[:])
	r.off += int64(n)
	if m := min(n, len(mstMagic)); string(h[:m]) != mstMagic[:m] {
		return r.fail(ErrNotMST, 0, -1, "the input does not start with the .mst magic")
	}
	if err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return r.fail(ErrMSTTruncated, 0, -1, "input ends inside the file header (%d bytes present)", n)
		}
		r.err = fmt.Errorf("%s: reading .mst header: %w", r.name, err)
		return r.err
	}
	r.major = binary.LittleEndian.Uint16(h[8:])
	r.minor = binary.LittleEndian.Uint16(h[10:])
	if r.major > MSTVersionMajor {
		return r.fail(ErrMSTUnsupported, 8, -1,
			"the file is .mst version %d.%d but this memspy reads version %d.x: it was written by a newer memspy",
			r.major, r.minor, MSTVersionMajor)
	}
	if r.major == 0 {
		return r.fail(ErrMSTCorrupt, 8, -1, "invalid version %d.%d", r.major, r.minor)
	}
	flags := binary.LittleEndian.Uint32(h[12:])
	metaLen := binary.LittleEndian.Uint32(h[16:])
	if metaLen > MSTMaxMetaLen {
		return r.fail(ErrMSTCorrupt, 16, -1, "metadata length %d exceeds the maximum %d", metaLen, MSTMaxMetaLen)
	}
	rest, err := r.readStored(int(metaLen)+4, 0, -1, "file header's metadata")
	if err != nil {
		return err
	}
	crc := crc32.Update(crc32.Checksum(h[:], castagnoli), castagnoli, rest[:metaLen])
	if crc != binary.LittleEndian.Uint32(rest[metaLen:]) {
		return r.fail(ErrMSTCorrupt, 0, -1, "file header checksum mismatch")
	}
	if bad := flags & mstFlagsRequired; bad != 0 {
		return r.fail(ErrMSTUnsupported, 12, -1,
			"the file (version %d.%d) uses header flags %#x, which this memspy (version %d.%d) does not know: it was written by a newer memspy",
			r.major, r.minor, bad, MSTVersionMajor, MSTVersionMinor)
	}
	if metaLen > 0 {
		var m MSTMeta
		if err := json.Unmarshal(rest[:metaLen], &m); err != nil {
			return r.fail(ErrMSTCorrupt, mstFixedHeaderLen, -1, "invalid metadata: %v", err)
		}
		r.meta = m
	}
	return nil
}

// Read implements Reader. Events of complete, valid chunks are delivered
// before any error found after them; a truncated file yields an error
// wrapping ErrMSTTruncated once all its complete chunks were delivered.
func (r *MSTReader) Read(b *Batch) error {
	b.Reset()
	if r.pending != nil {
		r.err, r.pending = r.pending, nil
	}
	if r.err != nil {
		return r.err
	}
	if !r.started {
		if err := r.readHeader(); err != nil {
			return err
		}
	}
	capacity := min(cap(b.Kind), cap(b.Addr), cap(b.Size), cap(b.PC), cap(b.Thread))
	if capacity == 0 {
		*b = *NewBatch(BatchSize)
		capacity = BatchSize
	}
	n := 0
	for n < capacity {
		if r.left == 0 && r.nextChunk() != nil {
			break
		}
		m := min(r.left, capacity-n)
		b.Kind = b.Kind[:n+m]
		b.Addr = b.Addr[:n+m]
		b.Size = b.Size[:n+m]
		b.PC = b.PC[:n+m]
		b.Thread = b.Thread[:n+m]
		if r.decode(b, n, m) != nil {
			break // nothing of this call's part of the failing chunk is delivered
		}
		n += m
	}
	b.Kind = b.Kind[:n]
	b.Addr = b.Addr[:n]
	b.Size = b.Size[:n]
	b.PC = b.PC[:n]
	b.Thread = b.Thread[:n]
	if r.err != nil && n > 0 {
		r.pending, r.err = r.err, nil
	}
	return r.err
}

// nextChunk reads blocks until it has loaded a chunk. At the end of the
// stream it returns io.EOF.
func (r *MSTReader) nextChunk() error {
	for {
		off := r.off
		chunk := r.chunks
		h := r.hdr[:]
		n, err := io.ReadFull(r.r, h)
		r.off += int64(n)
		if err != nil {
			if n == 0 && err == io.EOF {
				return r.fail(ErrMSTTruncated, off, -1,
					"the file ends after %d chunks without the index and trailer (was the writer stopped before Close?)", r.chunks)
			}
			if err == io.ErrUnexpectedEOF {
				return r.fail(ErrMSTTruncated, off, -1, "input ends inside a block header (%d of %d bytes present)", n, len(h))
			}
			r.err = fmt.Errorf("%s: reading .mst block at byte %d: %w", r.name, off, err)
			return r.err
		}
		tag := h[0]
		if tag != mstTagChunk {
			chunk = -1
		}
		if crc32.Checksum(h[:28], castagnoli) != binary.LittleEndian.Uint32(h[28:]) {
			return r.fail(ErrMSTCorrupt, off, chunk, "block header checksum mismatch")
		}
		switch {
		case tag == mstTagChunk:
			return r.loadChunk(off)
		case tag == mstTagIndex:
			return r.finish(off)
		case tag >= 'a' && tag <= 'z':
			// Optional block of a newer version: skip it.
			size := binary.LittleEndian.Uint32(h[20:])
			if _, err := r.readStored(int(size), off, -1, fmt.Sprintf("optional block %q", tag)); err != nil {
				return err
			}
		default:
			return r.fail(ErrMSTUnsupported, off, -1,
				"unknown block tag %#x in a version %d.%d file (this memspy reads %d.%d): written by a newer memspy, or corrupt",
				tag, r.major, r.minor, MSTVersionMajor, MSTVersionMinor)
		}
	}
}

// loadChunk reads and checks the payload of the chunk whose header is in
// r.hdr and prepares its columns for decoding.
func (r *MSTReader) loadChunk(off int64) error {
	h := r.hdr[:]
	ci := r.chunks
	codec, cols := h[1], h[2]
	count := binary.LittleEndian.Uint32(h[4:])
	first := binary.LittleEndian.Uint64(h[8:])
	rawLen := binary.LittleEndian.Uint32(h[16:])
	storedLen := binary.LittleEndian.Uint32(h[20:])
	switch {
	case count == 0 || count > MSTMaxChunkEvents:
		return r.fail(ErrMSTCorrupt, off, ci, "event count %d outside 1..%d", count, MSTMaxChunkEvents)
	case first != r.events:
		return r.fail(ErrMSTCorrupt, off, ci, "chunk starts at event %d, expected %d", first, r.events)
	case codec > mstWireZstd:
		return r.fail(ErrMSTUnsupported, off, ci,
			"unknown codec %d in a version %d.%d file (this memspy reads %d.%d): written by a newer memspy",
			codec, r.major, r.minor, MSTVersionMajor, MSTVersionMinor)
	case cols&^mstColKnown != 0:
		return r.fail(ErrMSTUnsupported, off, ci,
			"unknown column bits %#x in a version %d.%d file (this memspy reads %d.%d): written by a newer memspy",
			cols&^mstColKnown, r.major, r.minor, MSTVersionMajor, MSTVersionMinor)
	case rawLen < count+3 || int(rawLen) > mstMaxRawLen(int(count)):
		return r.fail(ErrMSTCorrupt, off, ci, "raw length %d impossible for %d events", rawLen, count)
	case storedLen > rawLen || (codec == mstWireNone && storedLen != rawLen):
		return r.fail(ErrMSTCorrupt, off, ci, "stored length %d impossible for raw length %d", storedLen, rawLen)
	}
	stored, err := r.readStored(int(storedLen), off, ci, "chunk payload")
	if err != nil {
		return err
	}
	if crc32.Checksum(stored, castagnoli) != binary.LittleEndian.Uint32(h[24:]) {
		return r.fail(ErrMSTCorrupt, off, ci, "payload checksum mismatch")
	}
	var raw []byte
	switch codec {
	case mstWireNone:
		raw = stored
	case mstWireS2:
		if n, err := s2.DecodedLen(stored); err != nil || n != int(rawLen) {
			return r.fail(ErrMSTCorrupt, off, ci, "S2 payload does not decode to %d bytes", rawLen)
		}
		if cap(r.raw) < int(rawLen) {
			r.raw = make([]byte, rawLen)
		}
		raw, err = s2.Decode(r.raw[:rawLen], stored)
		if err != nil || len(raw) != int(rawLen) {
			return r.fail(ErrMSTCorrupt, off, ci, "S2 payload does not decode: %v", err)
		}
	case mstWireZstd:
		if r.zdec == nil {
			r.zdec, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1),
				zstd.WithDecoderMaxMemory(uint64(mstMaxRawLen(MSTMaxChunkEvents))),
				zstd.WithDecodeAllCapLimit(true))
			if err != nil {
				r.err = fmt.Errorf("%s: zstd: %w", r.name, err)
				return r.err
			}
		}
		if cap(r.raw) < int(rawLen) {
			r.raw = make([]byte, rawLen)
		}
		raw, err = r.zdec.DecodeAll(stored, r.raw[:0:rawLen])
		if err != nil || len(raw) != int(rawLen) {
			return r.fail(ErrMSTCorrupt, off, ci, "zstd payload does not decode to %d bytes: %v", rawLen, err)
		}
	}
	if err := r.parseChunk(raw, int(count), cols); err != nil {
		return r.fail(ErrMSTCorrupt, off, ci, "%v", err)
	}
	var e [mstIndexEntryLen]byte
	binary.LittleEndian.PutUint64(e[0:], uint64(off))
	binary.LittleEndian.PutUint64(e[8:], first)
	binary.LittleEndian.PutUint32(e[16:], count)
	r.indexCRC = crc32.Update(r.indexCRC, castagnoli, e[:])
	r.chunkOff = off
	r.events += uint64(count)
	r.chunks++
	return nil
}

// parseChunk splits a raw chunk payload into the op table and columns.
func (r *MSTReader) parseChunk(raw []byte, count int, cols byte) error {
	p := raw
	nt := int(p[0])
	p = p[1:]
	for i := range r.tab {
		r.tab[i] = opInvalid
	}
	r.tab[mstEscape] = opEscape
	if nt > mstMaxOps {
		return fmt.Errorf("op table has %d entries, at most %d allowed", nt, mstMaxOps)
	}
	for i := range nt {
		e, n, err := parseOp(p)
		if err != nil {
			return fmt.Errorf("op table entry %d: %v", i, err)
		}
		r.tab[i] = e
		p = p[n:]
	}
	var lens [4]uint64
	nl := 2
	if cols&mstColPC != 0 {
		nl++
	}
	if cols&mstColThread != 0 {
		nl++
	}
	total := uint64(count)
	for i := range nl {
		v, n := binary.Uvarint(p)
		if n <= 0 || v > uint64(len(raw)) {
			return errors.New("bad column length")
		}
		lens[i] = v
		total += v
		p = p[n:]
	}
	if total != uint64(len(p)) {
		return fmt.Errorf("columns take %d bytes but %d remain", total, len(p))
	}
	r.ops, p = p[:count], p[count:]
	r.addr, p = p[:lens[0]], p[lens[0]:]
	r.esc, p = p[:lens[1]], p[lens[1]:]
	r.ap, r.epos, r.pp, r.tp = 0, 0, 0, 0
	r.pc, r.thr = nil, nil
	r.hasPC = cols&mstColPC != 0
	r.hasThread = cols&mstColThread != 0
	i := 2
	if r.hasPC {
		r.pc, p = p[:lens[i]], p[lens[i]:]
		i++
	}
	if r.hasThread {
		r.thr = p[:lens[i]]
	}
	r.prevPC, r.thrVal, r.thrRun = 0, 0, 0
	r.predI, r.predD = 0, 0
	r.left = count
	return nil
}

// parseOp decodes an op table or escape entry {u8 kind, u8 flags,
// uvarint size} into its packed form.
func parseOp(p []byte) (e uint64, n int, err error) {
	if len(p) < 3 {
		return 0, 0, errors.New("cut off")
	}
	k, fl := p[0], p[1]
	if !Kind(k).Valid() {
		return 0, 0, fmt.Errorf("event kind %d, which this memspy (.mst version %d.%d) does not know: written by a newer memspy",
			k, MSTVersionMajor, MSTVersionMinor)
	}
	if fl&^mstOpKnown != 0 {
		return 0, 0, fmt.Errorf("unknown op flags %#x: written by a newer memspy", fl)
	}
	size, m := binary.Uvarint(p[2:])
	if m <= 0 || size > 1<<32-1 {
		return 0, 0, errors.New("bad size")
	}
	return size<<32 | uint64(k)<<8 | uint64(fl), 2 + m, nil
}

// decodeErr records a problem inside the current chunk's columns.
func (r *MSTReader) decodeErr(format string, args ...any) error {
	return r.fail(ErrMSTCorrupt, r.chunkOff, r.chunks-1, format, args...)
}

// decode decodes the next m events of the current chunk into b[off:off+m].
func (r *MSTReader) decode(b *Batch, off, m int) error {
	ops := r.ops[:m]
	kinds := b.Kind[off : off+m]
	addrs := b.Addr[off : off+m]
	sizes := b.Size[off : off+m]
	ac, ap := r.addr, r.ap
	pI, pD := r.predI, r.predD
	tab := &r.tab
	for i, op := range ops {
		e := tab[op]
		if e&opSlow != 0 {
			var err error
			if e, err = r.escape(op); err != nil {
				return err
			}
		}
		a := pD
		if e&opInstr != 0 {
			a = pI
		}
		if e&opSeq == 0 {
			if uint(ap) >= uint(len(ac)) {
				return r.decodeErr("address column too short")
			}
			v := uint64(ac[ap])
			ap++
			if v >= 0x80 {
				if uint(ap) < uint(len(ac)) && ac[ap] < 0x80 {
					v = v&0x7f | uint64(ac[ap])<<7
					ap++
				} else {
					var ok bool
					if v, ap, ok = uvarintTail(ac, ap, v); !ok {
						return r.decodeErr("bad address varint")
					}
				}
			}
			a += v>>1 ^ -(v & 1)
		}
		sz := uint32(e >> 32)
		kinds[i] = Kind(e >> 8)
		sizes[i] = sz
		addrs[i] = a
		a += uint64(sz)
		if e&opInstr != 0 {
			pI = a
		} else {
			pD = a
		}
	}
	r.ap, r.predI, r.predD = ap, pI, pD
	r.ops = r.ops[m:]

	pcs := b.PC[off : off+m]
	if !r.hasPC {
		clear(pcs)
	} else {
		pc, pp, prev := r.pc, r.pp, r.prevPC
		for i := range pcs {
			if uint(pp) >= uint(len(pc)) {
				return r.decodeErr("PC column too short")
			}
			v := uint64(pc[pp])
			pp++
			if v >= 0x80 {
				var ok bool
				if v, pp, ok = uvarintTail(pc, pp, v); !ok {
					return r.decodeErr("bad PC varint")
				}
			}
			prev += v>>1 ^ -(v & 1)
			pcs[i] = prev
		}
		r.pp, r.prevPC = pp, prev
	}

	thr := b.Thread[off : off+m]
	if !r.hasThread {
		clear(thr)
	} else {
		for i := 0; i < len(thr); {
			if r.thrRun == 0 {
				t, ok1 := r.thrUvarint()
				run, ok2 := r.thrUvarint()
				if !ok1 || !ok2 || t > 1<<32-1 || run == 0 || run > uint64(r.left-i) {
					return r.decodeErr("bad thread run")
				}
				r.thrVal, r.thrRun = uint32(t), int(run)
			}
			k := min(r.thrRun, len(thr)-i)
			v := r.thrVal
			for j := range thr[i : i+k] {
				thr[i+j] = v
			}
			i += k
			r.thrRun -= k
		}
	}
	r.left -= m
	if r.left == 0 {
		if ap != len(ac) || r.epos != len(r.esc) || r.pp != len(r.pc) || r.tp != len(r.thr) || r.thrRun != 0 {
			return r.decodeErr("columns longer than the events need")
		}
	}
	return nil
}

// thrUvarint reads a uvarint from the thread column.
func (r *MSTReader) thrUvarint() (uint64, bool) {
	v, n := binary.Uvarint(r.thr[r.tp:])
	if n <= 0 {
		return 0, false
	}
	r.tp += n
	return v, true
}

// escape returns the packed entry of an escaped op read from the esc
// column, or an error for an op code outside the table.
func (r *MSTReader) escape(op byte) (uint64, error) {
	if op != mstEscape {
		return 0, r.decodeErr("op code %d outside the op table", op)
	}
	e, n, err := parseOp(r.esc[r.epos:])
	if err != nil {
		return 0, r.decodeErr("escape entry: %v", err)
	}
	r.epos += n
	return e, nil
}

// uvarintTail finishes decoding a uvarint whose first byte v (>= 0x80)
// precedes p[i].
func uvarintTail(p []byte, i int, v uint64) (uint64, int, bool) {
	v &= 0x7f
	for s := uint(7); s < 64; s += 7 {
		if i >= len(p) {
			return 0, i, false
		}
		c := p[i]
		i++
		if c < 0x80 {
			if s == 63 && c > 1 {
				return 0, i, false
			}
			return v | uint64(c)<<s, i, true
		}
		v |= uint64(c&0x7f) << s
	}
	return 0, i, false
}

// finish checks the index block whose header is in r.hdr and the trailer
// after it against the chunks read, then ends the stream with io.EOF.
func (r *MSTReader) finish(off int64) error {
	h := r.hdr[:]
	n := binary.LittleEndian.Uint32(h[4:])
	total := binary.LittleEndian.Uint64(h[8:])
	size := binary.LittleEndian.Uint32(h[20:])
	switch {
	case int(n) != r.chunks:
		return r.fail(ErrMSTCorrupt, off, -1, "index lists %d chunks, the file has %d", n, r.chunks)
	case total != r.events:
		return r.fail(ErrMSTCorrupt, off, -1, "index counts %d events, the chunks hold %d", total, r.events)
	case uint64(size) != uint64(n)*mstIndexEntryLen || binary.LittleEndian.Uint32(h[16:]) != size || h[1] != mstWireNone:
		return r.fail(ErrMSTCorrupt, off, -1, "index block has impossible lengths")
	case binary.LittleEndian.Uint32(h[24:]) != r.indexCRC:
		return r.fail(ErrMSTCorrupt, off, -1, "index does not match the chunks")
	}
	// Read the entries in pieces: the streaming reader needs only their
	// checksum, which must match the one computed from the chunks.
	var buf [64 * mstIndexEntryLen]byte
	crc := uint32(0)
	for left := int(size); left > 0; {
		p := buf[:min(left, len(buf))]
		if err := r.readFull(p, off, -1, "index"); err != nil {
			return err
		}
		crc = crc32.Update(crc, castagnoli, p)
		left -= len(p)
	}
	if crc != r.indexCRC {
		return r.fail(ErrMSTCorrupt, off, -1, "index payload checksum mismatch")
	}
	toff := r.off
	var t [mstTrailerLen]byte
	if err := r.readFull(t[:], toff, -1, "trailer"); err != nil {
		return err
	}
	switch {
	case crc32.Checksum(t[:20], castagnoli) != binary.LittleEndian.Uint32(t[20:]) || string(t[24:]) != mstEndMagic:
		return r.fail(ErrMSTCorrupt, toff, -1, "trailer checksum or end magic mismatch")
	case binary.LittleEndian.Uint64(t[0:]) != uint64(off) || binary.LittleEndian.Uint64(t[8:]) != r.events ||
		binary.LittleEndian.Uint32(t[16:]) != n:
		return r.fail(ErrMSTCorrupt, toff, -1, "trailer does not match the index")
	}
	r.err = io.EOF
	return io.EOF
}

// MSTChunkInfo describes one chunk listed in an .mst index.
type MSTChunkInfo struct {
	Offset int64  // byte offset of the chunk's block header
	First  uint64 // number of the chunk's first event
	Events int    // events in the chunk
}

// ReadMSTIndex reads the trailer and index of the .mst file r of the given
// size, for random access (e.g. to split a trace between workers). Each
// chunk decodes on its own: a reader positioned at a chunk's Offset after
// the file header reads from there.
func ReadMSTIndex(r io.ReaderAt, size int64) ([]MSTChunkInfo, error) {
	bad := func(off int64, format string, args ...any) error {
		return &MSTError{File: "mst", Offset: off, Chunk: -1, Err: ErrMSTCorrupt, Msg: fmt.Sprintf(format, args...)}
	}
	if size < mstFixedHeaderLen+4+mstBlockHeaderLen+mstTrailerLen {
		return nil, &MSTError{File: "mst", Offset: size, Chunk: -1, Err: ErrMSTTruncated, Msg: "file too short for a trailer"}
	}
	var t [mstTrailerLen]byte
	toff := size - mstTrailerLen
	if _, err := r.ReadAt(t[:], toff); err != nil {
		return nil, err
	}
	if string(t[24:]) != mstEndMagic || crc32.Checksum(t[:20], castagnoli) != binary.LittleEndian.Uint32(t[20:]) {
		return nil, &MSTError{File: "mst", Offset: toff, Chunk: -1, Err: ErrMSTTruncated,
			Msg: "no valid trailer at the end (was the writer stopped before Close?)"}
	}
	ioff := int64(binary.LittleEndian.Uint64(t[0:]))
	n := binary.LittleEndian.Uint32(t[16:])
	if n > mstMaxIndexEntries || ioff < 0 || ioff+mstBlockHeaderLen+int64(n)*mstIndexEntryLen != toff {
		return nil, bad(toff, "trailer does not match the file size")
	}
	var h [mstBlockHeaderLen]byte
	if _, err := r.ReadAt(h[:], ioff); err != nil {
		return nil, err
	}
	if h[0] != mstTagIndex || crc32.Checksum(h[:28], castagnoli) != binary.LittleEndian.Uint32(h[28:]) ||
		binary.LittleEndian.Uint32(h[4:]) != n {
		return nil, bad(ioff, "bad index block header")
	}
	p := make([]byte, int(n)*mstIndexEntryLen)
	if _, err := r.ReadAt(p, ioff+mstBlockHeaderLen); err != nil {
		return nil, err
	}
	if crc32.Checksum(p, castagnoli) != binary.LittleEndian.Uint32(h[24:]) {
		return nil, bad(ioff, "index payload checksum mismatch")
	}
	out := make([]MSTChunkInfo, n)
	next := uint64(0)
	for i := range out {
		e := p[i*mstIndexEntryLen:]
		c := MSTChunkInfo{Offset: int64(binary.LittleEndian.Uint64(e)), First: binary.LittleEndian.Uint64(e[8:]),
			Events: int(binary.LittleEndian.Uint32(e[16:]))}
		if c.First != next || c.Events <= 0 || c.Events > MSTMaxChunkEvents || c.Offset < 0 || c.Offset >= ioff {
			return nil, bad(ioff, "index entry %d is impossible", i)
		}
		next += uint64(c.Events)
		out[i] = c
	}
	if next != binary.LittleEndian.Uint64(t[8:]) {
		return nil, bad(toff, "index and trailer disagree on the number of events")
	}
	return out, nil
}
