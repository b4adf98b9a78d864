package trace

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"time"
	"unsafe"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
)

// Version and limits of the .mst format, memspy's own binary trace format.
//
// An .mst stream is a header, a sequence of blocks and a trailer. All
// integers are little-endian; "uvarint" is the unsigned LEB128 varint of
// encoding/binary; CRC-32C uses the Castagnoli polynomial. docs/mst.md is
// the byte-level specification; this is a summary.
//
//	header   magic "\x89MST\r\n\x1a\n", u16 major, u16 minor, u32 flags,
//	         u32 metaLen, metaLen bytes of JSON (MSTMeta), u32 CRC-32C of
//	         all preceding header bytes
//	blocks   32-byte block header + stored payload; 'C' blocks (chunks)
//	         carry events, one 'I' block (the index) ends the sequence,
//	         lower-case tags are optional blocks that readers skip
//	trailer  u64 index offset, u64 total events, u32 chunk count,
//	         u32 CRC-32C of those 20 bytes, end magic "\x89MSTEND\n"
//
// Block header: u8 tag, u8 codec, u8 columns, u8 reserved, u32 count, u64
// first, u32 rawLen, u32 storedLen, u32 CRC-32C of the stored payload, u32
// CRC-32C of the header's first 28 bytes. For a chunk, count is its
// number of events (1..MSTMaxChunkEvents), first the number of its first
// event in the file, codec 0 (none), 1 (S2 block) or 2 (zstd frame), and
// columns tells whether the optional PC (bit 0), thread (bit 1) and ext
// (bit 2, since 1.1) columns are present. Chunks decode independently:
// predictions start at zero in each. The decompressed payload (rawLen
// bytes) is
//
//	u8 T, then T op table entries {u8 kind, u8 flags, u8 lens, uvarint size}
//	uvarint len(addr), uvarint len(esc), [uvarint len(pc)], [uvarint len(thread)],
//	[uvarint len(ext)]
//	ops     count bytes: an index into the op table, or 255 (escape: the
//	        entry comes from the esc column instead)
//	addr    per event, its address minus its stream's prediction as a
//	        little-endian two's complement number of lens&15 (0..8) bytes
//	esc     one op entry per escaped event
//	pc      per event, its PC minus the previous event's PC, in lens>>4
//	        (0..8) bytes
//	thread  runs {uvarint thread, uvarint length} covering the events
//	ext     per extended event (alloc, free, call, return, marker, map,
//	        sync; their op entries have size 0), its Ext: u8 fields present,
//	        then uvarint size, uvarint zigzag SP delta, uvarint depth and
//	        zigzag stack deltas, uvarint name length and name, u8 mark,
//	        u8 sync, uvarint type
//
// Flags bit 0 puts an event in the instruction stream (else the data
// stream). Each stream predicts its next address as its last address plus
// that event's size, so a straight-line instruction fetch or a sequential
// data access costs a single op byte. Fixed-width deltas whose length
// comes with the op let the decoder run without branches: the hot loop
// decodes several hundred million events per second.
//
// Versioning: the major version changes only for layout changes an older
// reader cannot handle; readers reject a higher major version with an
// error naming both versions. Minor versions add features announced where
// they are used (event kinds, op flags, codecs, column bits, required
// header flags, block tags), each of which an older reader rejects with
// an ErrMSTUnsupported error ("written by a newer memspy") when it meets
// it, after delivering the events before it.
const (
	// MSTVersionMajor is the major .mst version this package reads and
	// writes. Readers reject files with a higher major version.
	MSTVersionMajor = 1
	// MSTVersionMinor is the minor .mst version this package writes
	// (1.1 added extended events, 1.2 the map event, 1.3 the sync event,
	// 1.4 an allocation's type, 1.5 the misc reference). Readers accept
	// any minor version of their major version.
	MSTVersionMinor = 5
	// MSTMaxChunkEvents is the largest number of events in one chunk.
	MSTMaxChunkEvents = 1 << 20
	// MSTDefaultChunkEvents is the writer's default chunk size in events.
	MSTDefaultChunkEvents = 1 << 16
	// MSTMaxMetaLen is the largest metadata blob in an .mst header.
	MSTMaxMetaLen = 1 << 20
	// MSTMaxStackDepth is the deepest call stack (Ext.Stack) of an
	// extended event in an .mst file.
	MSTMaxStackDepth = 256
	// MSTMaxNameLen is the longest name (Ext.Name) of an extended event
	// in an .mst file, in bytes.
	MSTMaxNameLen = 4096
)

const (
	mstMagic    = "\x89MST\r\n\x1a\n"
	mstEndMagic = "\x89MSTEND\n"

	mstFixedHeaderLen = 20 // magic, major, minor, flags, metaLen
	mstBlockHeaderLen = 32
	mstTrailerLen     = 32
	mstIndexEntryLen  = 20 // u64 offset, u64 first event, u32 count

	// Largest encoding of one event in a raw chunk payload: op byte, addr
	// delta (8), escape entry (3+5), PC delta (8) and a thread run (5+5).
	mstMaxEventBytes = 1 + 8 + 8 + 8 + 10
	// Largest op table and column-length prefix (without the ext column's).
	mstMaxTableBytes = 1 + 255*8 + 4*5
	// mstMaxExtLen is the largest ext column of a chunk: writers end a
	// chunk early rather than exceed it.
	mstMaxExtLen = 16 << 20
	// mstPad is the slack the decoder needs after the fixed-width columns
	// to load 8 bytes at any position inside them.
	mstPad = 8
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
	mstColExt    = 1 << 2
	mstColKnown  = mstColPC | mstColThread | mstColExt

	// Field bits of an ext column entry: the fields present.
	mstExtSize  = 1 << 0
	mstExtSP    = 1 << 1
	mstExtStack = 1 << 2
	mstExtName  = 1 << 3
	mstExtMark  = 1 << 4
	mstExtSync  = 1 << 5 // since 1.3
	mstExtType  = 1 << 6 // since 1.4
	mstExtKnown = mstExtSize | mstExtSP | mstExtStack | mstExtName | mstExtMark | mstExtSync | mstExtType

	// mstMaxNames bounds the reader's table of interned names.
	mstMaxNames = 1024

	// Op flags on the wire.
	mstOpInstr = 1 << 0 // instruction stream
	mstOpKnown = mstOpInstr

	mstEscape = 255 // op code: entry follows in the esc column
	// mstMaxOps is the largest op table.
	mstMaxOps = 255

	// Header flags: bits 0-15 must be understood by a reader, bits 16-31
	// may be ignored. None are defined in version 1.0.
	mstFlagsRequired = 0xffff
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// mstMaxRawLen returns the largest raw payload of a chunk of n events,
// with or without an ext column.
func mstMaxRawLen(n int, ext bool) int {
	if ext {
		return mstMaxTableBytes + 5 + mstMaxExtLen + n*mstMaxEventBytes
	}
	return mstMaxTableBytes + n*mstMaxEventBytes
}

// zigzag maps a difference (mod 2^64) to an unsigned number that is small
// when the difference is small in either direction.
func zigzag(d uint64) uint64 { return d<<1 ^ uint64(int64(d)>>63) }

// unzigzag inverts zigzag.
func unzigzag(z uint64) uint64 { return z>>1 ^ -(z & 1) }

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

// Error returns "file: class: where: what", plus the number of events
// read before the problem for a truncated file.
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

// mstFormat registers .mst from a variable initializer, which runs before
// the init functions that register the text formats: .mst is detected
// first, being the most specific.
var mstFormat = registerMST(Format{
	Name:        "mst",
	Description: "memspy binary trace (.mst): chunked, compressed, indexed",
	Detect: func(head []byte) bool {
		return len(head) >= len(mstMagic) && string(head[:len(mstMagic)]) == mstMagic
	},
	New: func(r io.Reader, opt Options) Reader { return NewMSTReader(r, opt) },
})

func registerMST(f Format) Format {
	Register(f)
	return f
}

// mstOp is a decoded op table entry, laid out for the decoder's hot
// loops. An address delta of alen bytes loaded as 8 bytes x is
// (x&amask ^ asign) - asign: amask keeps its alen bytes, asign is its
// sign bit (both 0 when alen is 0). plen, pmask and psign do the same for
// PC deltas. Ops that need the slow path have alen = plen = mstSlowLen:
// escapes, invalid codes and (with their kind set) extended events.
type mstOp struct {
	alen         int
	amask, asign uint64
	size         uint64
	plen         int
	pmask, psign uint64
	instr        uint32 // 1: instruction stream, 0: data stream
	kind         Kind
}

// mstSlowLen is the delta length of ops that need the slow path: longer
// than any column.
const mstSlowLen = 1 << 40

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
	entry  [mstIndexEntryLen]byte // scratch for the expected index entry
	stored []byte
	raw    []byte
	zdec   *zstd.Decoder

	// Decoding state of the current chunk.
	chunkOff  int64
	cols      byte   // column bits of the chunk
	left      int    // events not yet decoded
	ops       []byte // ops not yet decoded
	addr      []byte // address column + mstPad bytes
	pc        []byte // PC column + mstPad bytes
	cur       mstCursor
	esc       []byte
	epos      int
	hasPC     bool
	thr       []byte
	tp        int
	thrVal    uint32
	thrRun    int
	hasThread bool
	escOp     mstOp // the current escaped op
	tab       [256]mstOp
	zeros     zeroColumns

	// Extended events: their op table entries (tab holds slow-path
	// markers for them), the ext column and its SP prediction, storage
	// for stacks (never reused: batches keep slices of it) and interned
	// names.
	extOps [256]mstOp
	xcol   []byte
	xp     int
	prevSP uint64
	stacks []uint64
	names  map[string]string
}

// zeroColumns remembers how much of the PC and Thread columns of the batch
// last filled are zeros this reader wrote, so that traces without PCs or
// threads do not clear them again for every batch (consumers do not write
// to batches; see Batch).
type zeroColumns struct {
	pcData     *uint64 // identity of the batch's columns
	thrData    *uint32
	pc, thread int // leading entries known to be zero
}

// track resets the record when b's columns are not the ones it describes.
func (z *zeroColumns) track(b *Batch) {
	pc, thr := unsafe.SliceData(b.PC[:cap(b.PC)]), unsafe.SliceData(b.Thread[:cap(b.Thread)])
	if pc != z.pcData || thr != z.thrData {
		*z = zeroColumns{pcData: pc, thrData: thr}
	}
}

func (z *zeroColumns) clearPC(b *Batch, off, m int) {
	if off+m > z.pc {
		clear(b.PC[off : off+m])
		if off <= z.pc {
			z.pc = off + m
		}
	}
}

func (z *zeroColumns) clearThread(b *Batch, off, m int) {
	if off+m > z.thread {
		clear(b.Thread[off : off+m])
		if off <= z.thread {
			z.thread = off + m
		}
	}
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
	if c, ok := r.r.(corruptionChecker); ok && class == ErrMSTCorrupt {
		// Corrupt compressed data explains a corrupt .mst file inside it.
		if err := c.corruption(); err != nil {
			r.err = fmt.Errorf("%s: reading .mst at byte %d: %w", r.name, off, err)
			return r.err
		}
	}
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
			// Grow at most twice what has arrived (and with headroom,
			// so that chunks of varying size reuse the buffer).
			c := min(max(2*cap(buf), 64<<10), n+n/4+mstPad)
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
	if cap(buf) < n+mstPad { // keep slack for the decoder's 8-byte loads
		buf = append(make([]byte, 0, n+mstPad), buf...)
	}
	r.stored = buf[:0]
	return buf, nil
}

// readCRC reads n bytes in pieces and returns their CRC-32C; what names
// the block starting at off for errors.
func (r *MSTReader) readCRC(n int64, off int64, what string) (uint32, error) {
	if cap(r.stored) < 64<<10 {
		r.stored = make([]byte, 0, 64<<10)
	}
	buf := r.stored[:cap(r.stored)]
	crc := uint32(0)
	for done := int64(0); done < n; {
		p := buf[:min(n-done, int64(len(buf)))]
		k, err := io.ReadFull(r.r, p)
		r.off += int64(k)
		if err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return 0, r.fail(ErrMSTTruncated, off, -1, "input ends inside the %s (%d of %d bytes present)", what, done+int64(k), n)
			}
			r.err = fmt.Errorf("%s: reading .mst %s at byte %d: %w", r.name, what, off, err)
			return 0, r.err
		}
		crc = crc32.Update(crc, castagnoli, p)
		done += int64(k)
	}
	return crc, nil
}

// readHeader reads and checks the file header.
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
		// Metadata is informational: a member of an unexpected type (from
		// a newer writer) is ignored, only text that is not JSON fails.
		var m MSTMeta
		err := json.Unmarshal(rest[:metaLen], &m)
		var te *json.UnmarshalTypeError
		if err != nil && !errors.As(err, &te) {
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
		ne := len(b.Ext)
		if r.decode(b, n, m) != nil {
			// Nothing of this call's part of the failing chunk is delivered.
			clear(b.Ext[ne:])
			b.Ext = b.Ext[:ne]
			break
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
			if _, err := r.readCRC(int64(binary.LittleEndian.Uint32(h[20:])), off, fmt.Sprintf("optional block %q", tag)); err != nil {
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
	case rawLen < count+3 || int(rawLen) > mstMaxRawLen(int(count), cols&mstColExt != 0):
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
		r.growRaw(int(rawLen))
		raw, err = s2.Decode(r.raw[:rawLen], stored)
		if err != nil || len(raw) != int(rawLen) {
			return r.fail(ErrMSTCorrupt, off, ci, "S2 payload does not decode: %v", err)
		}
	case mstWireZstd:
		if r.zdec == nil {
			r.zdec, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1),
				zstd.WithDecoderMaxMemory(uint64(mstMaxRawLen(MSTMaxChunkEvents, true))),
				zstd.WithDecodeAllCapLimit(true))
			if err != nil {
				r.err = fmt.Errorf("%s: zstd: %w", r.name, err)
				return r.err
			}
		}
		r.growRaw(int(rawLen))
		raw, err = r.zdec.DecodeAll(stored, r.raw[:0:rawLen])
		if err != nil || len(raw) != int(rawLen) {
			return r.fail(ErrMSTCorrupt, off, ci, "zstd payload does not decode to %d bytes: %v", rawLen, err)
		}
		if unsafe.SliceData(raw) != unsafe.SliceData(r.raw) {
			copy(r.raw, raw)
		}
		raw = r.raw[:rawLen] // keep the buffer's slack for the decoder
	}
	if err := r.parseChunk(raw, int(count), cols); err != nil {
		return r.fail(errClass(err), off, ci, "%v", err)
	}
	e := r.entry[:]
	binary.LittleEndian.PutUint64(e[0:], uint64(off))
	binary.LittleEndian.PutUint64(e[8:], first)
	binary.LittleEndian.PutUint32(e[16:], count)
	r.indexCRC = crc32.Update(r.indexCRC, castagnoli, e)
	r.chunkOff = off
	r.events += uint64(count)
	r.chunks++
	return nil
}

// growRaw makes room for a decompressed payload of n bytes plus padding.
func (r *MSTReader) growRaw(n int) {
	if cap(r.raw) < n+mstPad {
		r.raw = make([]byte, n+n/4+mstPad)
	}
}

// parseChunk splits a raw chunk payload into the op table and columns.
// raw should have mstPad bytes of capacity after its end.
func (r *MSTReader) parseChunk(raw []byte, count int, cols byte) error {
	if len(raw) < count+3 {
		return errors.New("payload too short for its events")
	}
	if cap(raw)-len(raw) < mstPad {
		raw = append(make([]byte, 0, len(raw)+mstPad), raw...)
	}
	hasPC := cols&mstColPC != 0
	p := raw
	nt := int(p[0])
	p = p[1:]
	for i := range r.tab {
		r.tab[i] = mstOp{alen: mstSlowLen, plen: mstSlowLen}
	}
	if nt > mstMaxOps {
		return fmt.Errorf("op table has %d entries, at most %d allowed", nt, mstMaxOps)
	}
	for i := range nt {
		op, n, err := r.parseOp(p, cols)
		if err != nil {
			return fmt.Errorf("op table entry %d: %w", i, err)
		}
		if op.kind.IsExtended() {
			r.extOps[i] = op
			op = mstOp{alen: mstSlowLen, plen: mstSlowLen, kind: op.kind}
		}
		r.tab[i] = op
		p = p[n:]
	}
	var lens [5]uint64
	nl := 2
	if hasPC {
		nl++
	}
	if cols&mstColThread != 0 {
		nl++
	}
	if cols&mstColExt != 0 {
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
	// The fixed-width columns are sliced with mstPad bytes of what follows
	// them (or of the buffer's slack) visible, for 8-byte loads.
	r.ops, p = p[:count], p[count:]
	r.addr, p = p[:lens[0]+mstPad], p[lens[0]:]
	r.esc, p = p[:lens[1]], p[lens[1]:]
	r.epos, r.tp = 0, 0
	r.pc, r.thr = nil, nil
	r.cols = cols
	r.hasPC = hasPC
	r.hasThread = cols&mstColThread != 0
	i := 2
	if r.hasPC {
		r.pc, p = p[:lens[i]+mstPad], p[lens[i]:]
		i++
	}
	if r.hasThread {
		r.thr, p = p[:lens[i]], p[lens[i]:]
		i++
	}
	r.xcol, r.xp, r.prevSP = nil, 0, 0
	if cols&mstColExt != 0 {
		if lens[i] > mstMaxExtLen {
			return fmt.Errorf("ext column of %d bytes, at most %d allowed", lens[i], mstMaxExtLen)
		}
		r.xcol = p[:lens[i]]
	}
	r.thrVal, r.thrRun = 0, 0
	r.cur = mstCursor{aend: int(lens[0])}
	if r.hasPC {
		r.cur.pend = int(lens[2])
	}
	r.left = count
	return nil
}

// errNewer marks a problem caused by a feature of a newer .mst version.
type errNewer struct{ msg string }

func (e *errNewer) Error() string { return e.msg }

// newer says that the file uses what (a description of a value), which
// this memspy does not know.
func (r *MSTReader) newer(what string) string {
	return fmt.Sprintf("the file (.mst %d.%d) uses %s, which this memspy (.mst %d.%d) does not know: it was written by a newer memspy",
		r.major, r.minor, what, MSTVersionMajor, MSTVersionMinor)
}

// parseOp decodes an op table or escape entry {u8 kind, u8 flags, u8
// lens, uvarint size} of a chunk with the given columns.
func (r *MSTReader) parseOp(p []byte, cols byte) (op mstOp, n int, err error) {
	if len(p) < 4 {
		return op, 0, errors.New("cut off")
	}
	k, fl, lens := p[0], p[1], p[2]
	if !Kind(k).Valid() {
		return op, 0, &errNewer{r.newer(fmt.Sprintf("event kind %d", k))}
	}
	if fl&^mstOpKnown != 0 {
		return op, 0, &errNewer{r.newer(fmt.Sprintf("op flags %#x", fl&^mstOpKnown))}
	}
	alen, plen := lens&15, lens>>4
	if alen > 8 || plen > 8 || (plen != 0 && cols&mstColPC == 0) {
		return op, 0, fmt.Errorf("bad delta lengths %#x", lens)
	}
	size, m := binary.Uvarint(p[3:])
	if m <= 0 || size > 1<<32-1 {
		return op, 0, errors.New("bad size")
	}
	if Kind(k).IsExtended() {
		switch {
		case size != 0:
			return op, 0, fmt.Errorf("%v op with size %d (extended events have size 0)", Kind(k), size)
		case cols&mstColExt == 0:
			return op, 0, fmt.Errorf("%v op in a chunk without an ext column", Kind(k))
		}
	}
	op.kind, op.size, op.instr = Kind(k), size, uint32(fl&mstOpInstr)
	op.alen, op.plen = int(alen), int(plen)
	op.amask, op.asign = deltaMask(alen)
	op.pmask, op.psign = deltaMask(plen)
	return op, 3 + m, nil
}

// deltaMask returns the mask of n bytes and the sign bit of an n-byte
// two's complement number.
func deltaMask(n byte) (mask, sign uint64) {
	if n == 0 {
		return 0, 0
	}
	return ^uint64(0) >> (64 - 8*n), 1 << (8*n - 1)
}

// errClass returns the MSTError class of an error from parseChunk.
func errClass(err error) error {
	var n *errNewer
	if errors.As(err, &n) {
		return ErrMSTUnsupported
	}
	return ErrMSTCorrupt
}

// decodeErr records a problem inside the current chunk's columns.
func (r *MSTReader) decodeErr(format string, args ...any) error {
	return r.fail(ErrMSTCorrupt, r.chunkOff, r.chunks-1, format, args...)
}

// mstCursor is the position of the decoder in a chunk's address and PC
// columns and its predictions.
type mstCursor struct {
	ap, pp int    // positions in the address and PC columns
	cur    uint64 // next expected address of the last event's stream
	oth    uint64 // next expected address of the other stream
	instr  uint32 // 1 if the last event's stream is the instruction stream
	prevPC uint64
	aend   int // length of the address column (without padding)
	pend   int // length of the PC column (without padding)
}

// The hot loops below decode until they meet an op whose delta would end
// past its column. Slow ops (escape, invalid code) have a delta length
// larger than any column, so that one comparison also sends them to
// decodeSlow. The 8-byte loads are in bounds because the position is at
// most the column's length and the column is followed by mstPad readable
// bytes (checked once per call).

// mstAddrLoop decodes kinds, sizes and addresses of ops until an op
// needs the slow path (escape or invalid code: their delta length is
// mstSlowLen) or its delta would end past the address column. end points
// to the end of the address column, after which mstPad bytes are
// readable, and ap (<= 0) is the position relative to it, so every 8-byte
// load is in bounds. cur is the prediction of the stream of the last
// event (instr tells which), oth that of the other stream. It returns the
// number of events decoded and the new state.
//
// Tracking "current" and "other" stream rather than instruction and data
// keeps the loop-carried dependency at a conditional move and an add.
func mstAddrLoop(tab []mstOp, ops []byte, kinds []Kind, sizes []uint32, addrs []uint64, end unsafe.Pointer, ap int, cur, oth uint64, instr uint32) (int, int, uint64, uint64, uint32) {
	tab = tab[:256]
	kinds = kinds[:len(ops)]
	sizes = sizes[:len(ops)]
	addrs = addrs[:len(ops)]
	for i, op := range ops {
		t := &tab[op]
		nap := ap + t.alen
		if nap > 0 {
			return i, ap, cur, oth, instr
		}
		x := binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(end, ap))[:])
		d := (x&t.amask ^ t.asign) - t.asign
		ds := d + t.size
		base, other := cur, oth
		if t.instr != instr {
			base, other = oth, cur
		}
		instr = t.instr
		addrs[i] = base + d
		cur, oth = base+ds, other
		kinds[i] = t.kind
		sizes[i] = uint32(t.size)
		ap = nap
	}
	return len(ops), ap, cur, oth, instr
}

// mstPCLoop decodes the PCs of ops into pcs, like mstAddrLoop.
func mstPCLoop(tab []mstOp, ops []byte, pcs []uint64, end unsafe.Pointer, pp int, prev uint64) (int, int, uint64) {
	tab = tab[:256]
	pcs = pcs[:len(ops)]
	for i, op := range ops {
		t := &tab[op]
		npp := pp + t.plen
		if npp > 0 {
			return i, pp, prev
		}
		y := binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(end, pp))[:])
		prev += (y&t.pmask ^ t.psign) - t.psign
		pcs[i] = prev
		pp = npp
	}
	return len(ops), pp, prev
}

// decodeFast decodes events from the start of ops into b[off:] until an
// op needs the slow path, and returns how many it decoded.
func (r *MSTReader) decodeFast(b *Batch, off int, ops []byte) int {
	c := &r.cur
	if c.ap < 0 || c.ap > c.aend || c.aend > len(r.addr)-mstPad ||
		(r.hasPC && (c.pp < 0 || c.pp > c.pend || c.pend > len(r.pc)-mstPad)) {
		return 0 // impossible state: let decodeSlow report it
	}
	aend := unsafe.Pointer(unsafe.SliceData(r.addr[c.aend:]))
	n, ap, cur, oth, instr := mstAddrLoop(r.tab[:], ops, b.Kind[off:], b.Size[off:], b.Addr[off:], aend, c.ap-c.aend, c.cur, c.oth, c.instr)
	if r.hasPC {
		pend := unsafe.Pointer(unsafe.SliceData(r.pc[c.pend:]))
		np, pp, prev := mstPCLoop(r.tab[:], ops[:n], b.PC[off:], pend, c.pp-c.pend, c.prevPC)
		if np < n {
			// The PC column ran out first (corrupt input): redo the
			// addresses up to there.
			n, ap, cur, oth, instr = mstAddrLoop(r.tab[:], ops[:np], b.Kind[off:], b.Size[off:], b.Addr[off:], aend, c.ap-c.aend, c.cur, c.oth, c.instr)
		}
		c.pp, c.prevPC = pp+c.pend, prev
	}
	c.ap, c.cur, c.oth, c.instr = ap+c.aend, cur, oth, instr
	return n
}

// decodeSlow decodes the one event at index i of b whose op is not in
// the fast path's reach: an extended event, an escaped op, or an error.
func (r *MSTReader) decodeSlow(b *Batch, i int, op byte) error {
	t := &r.tab[op]
	if t.alen == mstSlowLen {
		if t.kind.IsExtended() {
			t = &r.extOps[op]
		} else if t = r.escape(op); t == nil {
			return r.err
		}
	}
	c := &r.cur
	if c.ap < 0 || c.ap+t.alen > c.aend || c.aend > len(r.addr)-mstPad ||
		(r.hasPC && (c.pp < 0 || c.pp+t.plen > c.pend || c.pend > len(r.pc)-mstPad)) {
		return r.decodeErr("address or PC column too short")
	}
	x := binary.LittleEndian.Uint64(r.addr[c.ap:])
	c.ap += t.alen
	if t.instr != c.instr {
		c.cur, c.oth, c.instr = c.oth, c.cur, t.instr
	}
	a := c.cur + (x&t.amask ^ t.asign) - t.asign
	b.Kind[i], b.Size[i], b.Addr[i] = t.kind, uint32(t.size), a
	c.cur = a + t.size
	var pc uint64
	if r.hasPC {
		y := binary.LittleEndian.Uint64(r.pc[c.pp:])
		c.pp += t.plen
		c.prevPC += (y&t.pmask ^ t.psign) - t.psign
		b.PC[i] = c.prevPC
		pc = c.prevPC
	}
	if t.kind.IsExtended() {
		e, err := r.ext(pc)
		if err != nil {
			return err
		}
		b.Size[i] = uint32(len(b.Ext))
		b.Ext = append(b.Ext, e)
	}
	return nil
}

// ext decodes the next entry of the ext column: the Ext of an extended
// event whose PC is pc.
func (r *MSTReader) ext(pc uint64) (Ext, error) {
	var e Ext
	x := extCursor{p: r.xcol[r.xp:]}
	fields := x.byte()
	if fields&^mstExtKnown != 0 {
		return e, r.fail(ErrMSTUnsupported, r.chunkOff, r.chunks-1,
			"ext entry with field bits %#x in a version %d.%d file (this memspy reads %d.%d): written by a newer memspy",
			fields&^mstExtKnown, r.major, r.minor, MSTVersionMajor, MSTVersionMinor)
	}
	if fields&mstExtSize != 0 {
		e.Size = x.uvarint()
	}
	if fields&mstExtSP != 0 {
		r.prevSP += unzigzag(x.uvarint())
		e.SP = r.prevSP
	}
	if fields&mstExtStack != 0 {
		depth := x.uvarint()
		switch {
		case depth > MSTMaxStackDepth:
			return e, r.decodeErr("ext entry with a stack of %d frames, at most %d allowed", depth, MSTMaxStackDepth)
		case depth > uint64(len(x.p)-x.n): // every frame takes a byte at least
			return e, r.decodeErr("ext column too short")
		case depth > 0:
			e.Stack = r.stack(int(depth))
			prev := pc
			for j := range e.Stack {
				prev += unzigzag(x.uvarint())
				e.Stack[j] = prev
			}
		}
	}
	if fields&mstExtName != 0 {
		n := x.uvarint()
		switch {
		case n > MSTMaxNameLen:
			return e, r.decodeErr("ext entry with a name of %d bytes, at most %d allowed", n, MSTMaxNameLen)
		case n > uint64(len(x.p)-x.n):
			return e, r.decodeErr("ext column too short")
		}
		e.Name = r.intern(x.p[x.n : x.n+int(n)])
		x.n += int(n)
	}
	if fields&mstExtMark != 0 {
		e.Mark = MarkKind(x.byte())
		if !x.bad && !e.Mark.Valid() {
			return e, r.fail(ErrMSTUnsupported, r.chunkOff, r.chunks-1, "%s", r.newer(fmt.Sprintf("marker kind %d", e.Mark)))
		}
	}
	if fields&mstExtSync != 0 {
		e.Sync = SyncKind(x.byte())
		if !x.bad && !e.Sync.Valid() {
			return e, r.fail(ErrMSTUnsupported, r.chunkOff, r.chunks-1, "%s", r.newer(fmt.Sprintf("synchronization kind %d", e.Sync)))
		}
	}
	if fields&mstExtType != 0 {
		e.Type = x.uvarint()
	}
	if x.bad {
		return e, r.decodeErr("ext column too short")
	}
	r.xp += x.n
	return e, nil
}

// extCursor reads the fields of an ext column entry; reading past the
// end of the column sets bad.
type extCursor struct {
	p   []byte
	n   int
	bad bool
}

func (x *extCursor) byte() byte {
	if x.n >= len(x.p) {
		x.bad = true
		return 0
	}
	x.n++
	return x.p[x.n-1]
}

func (x *extCursor) uvarint() uint64 {
	v, m := binary.Uvarint(x.p[x.n:])
	if m <= 0 {
		x.bad = true
		x.n = len(x.p)
		return 0
	}
	x.n += m
	return v
}

// stack returns room for a stack of depth frames, from storage that is
// never reused.
func (r *MSTReader) stack(depth int) []uint64 {
	if cap(r.stacks)-len(r.stacks) < depth {
		r.stacks = make([]uint64, 0, max(4096, depth))
	}
	n := len(r.stacks)
	r.stacks = r.stacks[:n+depth]
	return r.stacks[n : n+depth : n+depth]
}

// intern returns p as a string, interning the first mstMaxNames names met
// (allocation routines and marker names repeat).
func (r *MSTReader) intern(p []byte) string {
	if s, ok := r.names[string(p)]; ok {
		return s
	}
	s := string(p)
	if len(r.names) < mstMaxNames {
		if r.names == nil {
			r.names = make(map[string]string)
		}
		r.names[s] = s
	}
	return s
}

// decode decodes the next m events of the current chunk into b[off:off+m].
func (r *MSTReader) decode(b *Batch, off, m int) error {
	ops := r.ops[:m]
	for i := 0; i < m; {
		i += r.decodeFast(b, off+i, ops[i:])
		if i < m {
			if err := r.decodeSlow(b, off+i, ops[i]); err != nil {
				return err
			}
			i++
		}
	}
	r.zeros.track(b)
	if !r.hasPC {
		r.zeros.clearPC(b, off, m)
	} else {
		r.zeros.pc = min(r.zeros.pc, off)
	}
	r.ops = r.ops[m:]

	thr := b.Thread[off : off+m]
	if !r.hasThread {
		r.zeros.clearThread(b, off, m)
	} else {
		r.zeros.thread = min(r.zeros.thread, off)
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
		if r.cur.ap != r.cur.aend || r.epos != len(r.esc) || r.cur.pp != r.cur.pend || r.tp != len(r.thr) || r.thrRun != 0 ||
			r.xp != len(r.xcol) {
			return r.decodeErr("column lengths do not match the events")
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

// escape returns the entry of an escaped op read from the esc column, or
// nil after recording an error for an op code outside the table.
func (r *MSTReader) escape(op byte) *mstOp {
	if op != mstEscape {
		r.decodeErr("op code %d outside the op table", op)
		return nil
	}
	e, n, err := r.parseOp(r.esc[r.epos:], r.cols)
	if err != nil {
		r.fail(errClass(err), r.chunkOff, r.chunks-1, "escape entry: %v", err)
		return nil
	}
	r.epos += n
	r.escOp = e
	return &r.escOp
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
	// The streaming reader needs only the entries' checksum, which must
	// match the one computed from the chunks.
	crc, err := r.readCRC(int64(size), off, "index")
	if err != nil {
		return err
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
// size without reading the chunks, e.g. to count events or to plan how to
// split a trace between workers (chunks decode independently of each
// other; this package does not yet expose decoding from a given chunk).
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
