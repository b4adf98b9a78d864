// Package valgrind runs programs under memspy's Valgrind tool and decodes its
// event stream.
//
// The tool (tool/ms_main.c, built by make into bin/valgrind/) instruments every
// superblock Valgrind translates and writes the stream described in
// docs/valgrind-stream.md to a pipe; Start runs a program under it and
// StreamReader turns the stream into batches of trace events while the
// program runs.
package valgrind

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/memspy/memspy/trace"
)

// StreamVersion is the version of the event stream this package decodes.
const StreamVersion = 13

// StreamMagic is the first word of every stream: the bytes "memspyVG".
const StreamMagic = "memspyVG"

// Record types: the top 4 bits of a record's first word.
const (
	recExec     = 1
	recDescribe = 2
	recThread   = 3
	recAlloc    = 4
	recFree     = 5
	recMark     = 6
	recString   = 7
	recMap      = 8
	recSync     = 9
	recSkip     = 10
	recProc     = 11
	recEnd      = 15
)

// Entry kinds of a DESCRIBE record.
const (
	entRead   = 0
	entWrite  = 1
	entIFetch = 2
	entModify = 3
	entExit   = 4
	entCall   = 5
	entReturn = 6
	entAtomic = 7 // an atomic read-modify-write: a Sync event, then a Modify of the same address
)

// Kinds of PROC records.
const (
	procExec       = 1 // the process execs the program named (word 1: 1 if the tool cannot trace it): the stream ends here if it succeeds
	procExecFailed = 2 // that exec failed (word 1: the errno)
	procStart      = 3 // the process's command line, and its parent's pid (word 1)
)

// A data entry whose word has entDerived set has no address word in EXEC
// records: its address is that of the data entry numbered by the bits from
// entBaseShift up, plus an offset that follows the DESCRIBE record's
// entries. Bits 39..33 are reserved (0).
const (
	entDerived   = 1 << 32
	entBaseShift = 40
	entReserved  = 0x7f << 33
)

// MaxEntries is the largest number of entries a superblock description may
// have; larger counts are taken for corruption.
const MaxEntries = 1 << 20

// Limits of the other records; larger values are taken for corruption.
const (
	MaxStackDepth = trace.MSTMaxStackDepth // return addresses in an ALLOC or FREE record
	MaxString     = trace.MSTMaxNameLen    // bytes in a STRING record (so that .mst can record every name)
)

const (
	headerLen = 32
	flagRing  = 4 // header flag: the data comes through the ring
	idMask    = 1<<44 - 1
	bufSize   = 1 << 20 // the read buffer
)

var le = binary.LittleEndian

// ErrNoEnd is matched (with errors.Is) by the error a StreamReader returns
// when the stream ends without its END record: the tool died, or the
// program was killed.
var ErrNoEnd = errors.New("the memspy Valgrind tool's stream ended without its END record (the tool died or the program was killed)")

// ErrCorrupt is matched (with errors.Is) by the errors about malformed
// streams: a bad magic, an unknown record, an EXEC of an unknown superblock,
// an exit index or an entry count out of range.
var ErrCorrupt = errors.New("corrupt memspy Valgrind tool stream")

// ErrVersion is matched (with errors.Is) by the error about a stream of a
// version this package does not read.
var ErrVersion = errors.New("memspy Valgrind tool stream version mismatch")

type noEndError struct {
	off    int64
	header bool // the stream ended inside its header
}

func (e *noEndError) Error() string {
	if e.header {
		if e.off == 0 {
			return "the memspy Valgrind tool's stream is empty: the tool did not start (see valgrind's messages)"
		}
		return fmt.Sprintf("the memspy Valgrind tool's stream ended in its header after %d bytes (the tool died)", e.off)
	}
	return fmt.Sprintf("the memspy Valgrind tool's stream ended without its END record after %d bytes (the tool died or the program was killed)", e.off)
}

func (e *noEndError) Is(target error) bool { return target == ErrNoEnd }

type corruptError struct {
	off int64
	msg string
}

func (e *corruptError) Error() string {
	return fmt.Sprintf("corrupt memspy Valgrind tool stream at byte %d: %s", e.off, e.msg)
}

func (e *corruptError) Is(target error) bool { return target == ErrCorrupt }

type versionError struct {
	got uint64
	lib string // the tool's directory, when known
}

func (e *versionError) Error() string {
	if e.got == 0 {
		return fmt.Sprintf("the memspy Valgrind tool in %s does not say its stream version (it is older than this memspy, which reads version %d): rebuild both with make",
			e.lib, StreamVersion)
	}
	if e.lib != "" {
		return fmt.Sprintf("the memspy Valgrind tool in %s speaks stream version %d, this memspy reads version %d: the tool and memspy disagree, rebuild both with make",
			e.lib, e.got, StreamVersion)
	}
	return fmt.Sprintf("the memspy Valgrind tool speaks stream version %d, this memspy reads version %d: rebuild with make", e.got, StreamVersion)
}

func (e *versionError) Is(target error) bool { return target == ErrVersion }

// superblock is the decoded description of one translated superblock: the
// events it makes (exit entries removed), in execution order, and where its
// exits fall.
type superblock struct {
	kind []trace.Kind
	size []uint32
	pc   []uint64
	// col holds the PC column of the events: pc itself, but for the runs
	// of fetches of a reader making spans (the ends of their instructions).
	col []uint64
	// dataPos holds the event index of each data event (read, write,
	// modify), in order.
	dataPos []int32
	// direct holds the event index of each data event with an address
	// word, in order: the i-th address word of an EXEC is the address of
	// event direct[i]. derived holds the others, in order. Without derived
	// events direct is dataPos.
	direct  []int32
	derived []derivedAddr
	// derivedOf gives, per event, its index in derived, or -1; nil when
	// there are no derived events.
	derivedOf []int32
	// exits[e] counts what comes before exit entry e; the last element
	// covers the whole superblock (it ran to its end).
	exits []exitCounts
	// allData is true when every event is a data event with an address word
	// (no instruction fetches, nothing derived): address words then map one
	// to one onto events.
	allData bool
	// syncs holds the event index of each atomic Sync event, in order:
	// its address is that of the Modify event that follows it.
	syncs []int32
	// final is trace.Call or trace.Return when the superblock ends in a
	// call or a return (an execution that runs to its end then carries the
	// target and the stack pointer after its addresses), else 0; finalPC
	// is the address of that instruction.
	final   trace.Kind
	finalPC uint64
	// block describes sb for trace.Exec events and entryEv maps its
	// entries to the events of block (-1 for exits, calls and returns),
	// when the tool notes first-level accesses (see notes.go); else nil.
	block   *trace.Block
	entryEv []int32
}

// exitCounts are the numbers of events, of data events, of address words
// and of derived data events before an exit of a superblock; need is the
// size in bytes of an EXEC record that takes the exit, and final is 1 when
// that record ends with the superblock's final call or return, else 0.
type exitCounts struct {
	ev, data, words, derived int32
	need, final              int32
}

// derivedAddr is a data event whose address is that of an earlier event
// (one with an address word) plus off; both are event indexes.
type derivedAddr struct {
	pos, base int32
	off       uint64
}

// StreamReader decodes the event stream of memspy's Valgrind tool (see
// docs/valgrind-stream.md) into trace events. It implements trace.Reader.
//
// Every executed data entry becomes a Read, Write or Modify event with its
// address (an address word of the stream, or an earlier entry's address
// plus the offset of a derived entry), its size and the PC of its
// instruction; every
// executed instruction-fetch entry becomes an IFetch event whose address and
// PC are the instruction's address; every executed atomic entry becomes a
// Sync event (Ext.Sync trace.SyncAtomic) followed by a Modify event, both
// with the address from the stream. ALLOC, FREE, MARK, MAP and SYNC
// records become Alloc, Free, Marker, Map and Sync events; a SKIP record
// (references left out between samples) becomes a trace.Skip event whose
// Addr is their number (PC 0), none when that is 0; a Map event (an
// object file the program mapped) has the address of the object's .text,
// its length in Ext.Size, its path in Ext.Name and PC 0, and comes before
// every event whose PC lies in that .text. Thread is the OS thread id of the last
// THREAD record (0 before the first). An EXEC record whose events do not fit
// the caller's batch continues in the next Read.
//
// When the tool simulates the first-level caches (FirstLevel), BELOW
// records become trace.BelowRead, BelowWrite and BelowIFetch events and
// L1STATS records trace.FirstLevel events (Ext.Stack: the record's
// words); the tentative ones written before an exec are delivered only if
// the stream ends with it.
//
// The stream ends with its END record: Read then returns io.EOF and Ended
// reports the exit code it carries. A stream that ends without END yields
// every complete event (those of an EXEC record cut short included, up to
// the first missing address), then an error matching ErrNoEnd. Malformed
// input yields an error matching ErrCorrupt that gives the byte offset.
// Errors are sticky: later Reads return the same error.
type StreamReader struct {
	r    io.Reader
	buf  []byte
	pos  int   // next byte to decode in buf
	end  int   // end of the valid bytes in buf
	base int64 // stream offset of buf[0]
	rerr error // error returned by r (io.EOF at its end)
	zero int   // consecutive empty reads

	header bool // the header was read
	pid    int
	flags  uint64
	tid    uint32

	sbs   []*superblock          // by id, for dense ids
	sbMap map[uint64]*superblock // ids too far beyond len(sbs)
	nsb   int                    // superblocks described

	// The EXEC being delivered across Read calls: next event index and
	// end (one past the events when the final call or return follows).
	cur    *superblock
	curEv  int
	curEnd int
	// curAddr holds, by event index, the addresses of the current EXEC's
	// data events delivered so far, when its superblock has derived events.
	curAddr []uint64

	strings map[uint64]string // STRING records by id

	events  uint64
	ended   bool
	code    int
	exited  bool   // the END record carries the status the program exited with
	exec    string // the program of an exec under way (PROC record), if any
	foreign bool   // that program cannot be traced (not 64-bit x86)
	command string // the process's command line (PROC start record)
	parent  int    // its parent's pid
	err     error  // sticky

	// Scratch space for DESCRIBE records.
	scratchEnt  []uint64
	scratchPC   []uint64
	scratchBase []int64

	below int          // requests left to deliver of the current BELOW record
	final pendingFinal // tentative records waiting for the stream's end
	call  heldFinal    // a noted execution's call or return waiting for room (notes.go)

	runBlock uint64 // fold fetches into IFetchRun events within blocks of this size (0: never)
	spans    bool   // runs are of contiguous fetches, their PC the ends of their instructions
	slim     bool   // leave PC and Thread unset, drop calls and returns (see Slim)

	// The ring (docs/valgrind-stream.md), when the stream's data comes
	// through shared memory: r then carries the header and one word per
	// chunk filled, and free takes a byte per chunk handed back.
	ring    []byte
	free    io.Writer
	next    int    // the chunk to come
	held    bool   // s.buf is a chunk not handed back yet
	pending []byte // bytes read from r after the header

	lib     string    // the tool's directory, for the version error
	onFatal func()    // called once when the stream is corrupt
	in      io.Closer // the input, when the reader owns it (a child's FIFO)
}

// NewStreamReader returns a reader of the stream r. It reads through its
// own 1 MiB buffer; r should not be buffered.
func NewStreamReader(r io.Reader) *StreamReader { return newStreamReaderSize(r, bufSize) }

// newStreamReaderSize returns a reader with a buffer of size bytes, at
// least headerLen (tests use small buffers).
func newStreamReaderSize(r io.Reader, size int) *StreamReader {
	return &StreamReader{r: r, buf: make([]byte, max(size, headerLen))}
}

// ChunkSize is the size in bytes of a chunk of the ring.
const ChunkSize = 1 << 20

// setRing makes the reader take the stream's data from the chunks of ring
// when the tool says it uses it, handing chunks back on free.
func (s *StreamReader) setRing(ring []byte, free io.Writer) {
	s.ring, s.free = ring, free
}

// SetIFetchRuns makes the reader fold the instruction fetches of each
// superblock described from now on into trace.IFetchRun events: a fetch of
// an instruction lying inside one aligned block of block bytes joins the
// run of the superblock's previous fetch when that is in the same block and
// no exit lies between them (data events may). The result is exact for the
// engine when block and spans are what sim.Hierarchy.IFetchRuns returns, but it
// loses the later fetches' addresses: no trace format can store it. Call it
// before the first Read; block must be a power of two (0: no folding).
//
// With spans (block at most 64), a run holds only fetches that each begin
// where the one before ended, and its PC is not its address but the ends
// of its instructions: bit o set when one's last byte is at offset o of
// the block (trace.IFetchRun).
func (s *StreamReader) SetIFetchRuns(block int, spans bool) {
	s.runBlock, s.spans = uint64(block), spans && block <= 64
}

// Slim implements trace.Slimmer: later Reads leave the PC and Thread
// columns of the events they deliver unset and drop Call and Return
// events, and the Sync events of atomics in superblocks described from
// then on (an atomic is its Modify alone), for a consumer that uses none
// of them (the engine when it does not attribute and simulates one
// processor). The other events are the same; the remaining Sync events
// keep their PC and Thread.
func (s *StreamReader) Slim() { s.slim = true }

// Format implements trace.Reader: "valgrind".
func (s *StreamReader) Format() string { return "valgrind" }

// Events returns the number of events delivered so far.
func (s *StreamReader) Events() uint64 { return s.events }

// Pid returns the traced process's pid from the stream header (0 before
// the first Read).
func (s *StreamReader) Pid() int { return s.pid }

// IFetch reports whether the stream header says instruction fetches are
// described (false before the first Read).
func (s *StreamReader) IFetch() bool { return s.flags&1 != 0 }

// Calls reports whether the stream header says calls and returns are
// reported (false before the first Read).
func (s *StreamReader) Calls() bool { return s.flags&2 != 0 }

// Ended returns the exit code carried by the END record, and whether that
// record was read (or the stream ended with the process exec'ing another
// program: see Exec). Run.Wait's status is the authority on how the program
// ended: the tool writes END whenever Valgrind shuts down, also after a
// fatal signal, and Valgrind does not tell it the exit code.
func (s *StreamReader) Ended() (code int, ok bool) { return s.code, s.ended }

// Exit returns how the process ended, from the END record: the status it
// gave exit (exited), or, when it ended without exiting, killed (by a
// signal). Both are false while the stream goes on, when it ended with an
// exec, or without END.
func (s *StreamReader) Exit() (status int, exited, killed bool) {
	if !s.ended || s.exec != "" {
		return 0, false, false
	}
	return s.code, s.exited, !s.exited
}

// Offset returns the number of stream bytes decoded so far.
func (s *StreamReader) Offset() int64 { return s.off() }

// Exec returns the program the traced process exec'd when the stream
// ended with a successful exec, else "". Next reads the exec'd program's
// stream, if it is traced; foreign reports that the tool could not trace
// it (a 32-bit program).
func (s *StreamReader) Exec() (prog string, foreign bool) {
	if !s.ended {
		return "", false
	}
	return s.exec, s.foreign
}

// Close closes the reader's input when the reader owns it (the stream of a
// forked child, from Run.Children); the stream of the program memspy
// started is closed by Run.Wait.
func (s *StreamReader) Close() error {
	if s.in == nil {
		return nil
	}
	return s.in.Close()
}

// Command returns the process's command line and its parent's pid, from
// the stream's start (empty and 0 before the first Read).
func (s *StreamReader) Command() (cmd string, parent int) { return s.command, s.parent }

// Next returns a reader of the stream of the program this one's process
// exec'd, which follows in the same input when Valgrind follows execs
// (memspy run's --children), or nil: the stream did not end with an exec,
// or nothing follows (the exec'd program runs untraced). It may block
// until the exec'd program's tool writes its first bytes.
func (s *StreamReader) Next() *StreamReader {
	if !s.ended || s.exec == "" {
		return nil
	}
	rest := s.buf[s.pos:s.end]
	if s.pending != nil {
		rest = s.pending
	}
	rest = slices.Clone(rest)
	for len(rest) < 8 && s.rerr == nil {
		var b [8]byte
		n, err := s.r.Read(b[:])
		rest = append(rest, b[:n]...)
		if err != nil || n == 0 {
			break
		}
	}
	if len(rest) == 0 {
		return nil
	}
	n := newStreamReaderSize(io.MultiReader(bytes.NewReader(rest), s.r), bufSize)
	if s.ring != nil {
		n.setRing(s.ring, s.free) // the exec'd program's tool starts again at chunk 0
	}
	n.lib, n.onFatal, n.in = s.lib, s.onFatal, s.in
	return n
}

// Err returns the error that ended the stream: nil while it goes on or
// after its END record, otherwise the error Read returned last.
func (s *StreamReader) Err() error {
	if s.err == io.EOF {
		return nil
	}
	return s.err
}

// done reports whether the stream reached its end or an error.
func (s *StreamReader) done() bool { return s.err != nil }

func (s *StreamReader) off() int64 { return s.base + int64(s.pos) }

// more makes at least need bytes available from s.pos, reading as much as
// one read returns each time (the buffer grows if need exceeds it). It
// returns the reader's error (io.EOF at the end) when that is not possible.
func (s *StreamReader) more(need int) error {
	if s.end-s.pos >= need {
		return nil
	}
	if s.pending != nil {
		return s.moreRing(need)
	}
	if need > len(s.buf) {
		b := make([]byte, need)
		s.end = copy(b, s.buf[s.pos:s.end])
		s.base += int64(s.pos)
		s.buf, s.pos = b, 0
	}
	// Move the leftover bytes (fewer than need) to the front when the
	// free tail is small.
	if s.pos > 0 && (len(s.buf)-s.end < 64<<10 || len(s.buf)-s.pos < need || s.pos == s.end) {
		n := copy(s.buf, s.buf[s.pos:s.end])
		s.base += int64(s.pos)
		s.pos, s.end = 0, n
	}
	for s.end-s.pos < need {
		if s.rerr != nil {
			return s.rerr
		}
		n, err := s.r.Read(s.buf[s.end:])
		s.end += n
		if err != nil {
			s.rerr = err
		} else if n == 0 {
			if s.zero++; s.zero > 100 {
				s.rerr = io.ErrNoProgress
			}
		} else {
			s.zero = 0
		}
	}
	return nil
}

// moreRing makes at least need bytes available from s.pos in ring mode:
// when the chunk in s.buf is used up, it hands it back and takes the next
// one the tool announces. Records never straddle chunks.
func (s *StreamReader) moreRing(need int) error {
	for s.end-s.pos < need {
		if s.pos < s.end {
			return &corruptError{off: s.off(), msg: fmt.Sprintf("a record of %d bytes crosses the end of a ring chunk", need)}
		}
		if s.held {
			// An error means the tool is gone: its stream says how it ended.
			s.free.Write([]byte{1})
			s.held = false
		}
		for len(s.pending) < 8 {
			if s.rerr != nil {
				return s.rerr
			}
			var b [64]byte
			n, err := s.r.Read(b[:])
			s.pending = append(s.pending, b[:n]...)
			if err != nil {
				s.rerr = err
			} else if n == 0 {
				if s.zero++; s.zero > 100 {
					s.rerr = io.ErrNoProgress
				}
			}
		}
		if s.exec != "" && string(s.pending[:8]) == StreamMagic {
			return io.EOF // the exec'd program's stream follows (see Next)
		}
		n := le.Uint64(s.pending)
		s.pending = s.pending[8:]
		if n > ChunkSize || n%8 != 0 {
			return &corruptError{off: s.off(), msg: fmt.Sprintf("a ring chunk of %d bytes announced", n)}
		}
		start := s.next * ChunkSize
		s.base += int64(s.end)
		s.buf, s.pos, s.end = s.ring[start:start+int(n):start+int(n)], 0, int(n)
		s.next = (s.next + 1) % (len(s.ring) / ChunkSize)
		s.held = true
	}
	return nil
}

// Drain reads the rest of the stream without decoding it, handing every
// ring chunk back as soon as it is announced, and returns the number of
// bytes it passed over: what tracing costs with a reader that costs
// nothing (memspy run --drain, make bench-run). The stream's end is the
// end of its data, not an END record, which Drain does not look for.
//
// On an error other than the end it stops the tool as Read does (which
// would otherwise wait for ever for its chunks to come back).
func (s *StreamReader) Drain() (int64, error) {
	fail := func(err error) error {
		if s.onFatal != nil {
			f := s.onFatal
			s.onFatal = nil
			f()
		}
		return err
	}
	if !s.header {
		if err := s.readHeader(); err != nil {
			return 0, fail(err)
		}
	}
	start := s.off()
	for {
		s.pos = s.end
		if err := s.more(8); err != nil {
			s.pos = s.end
			if err == io.EOF {
				return s.off() - start, nil
			}
			return s.off() - start, fail(err)
		}
	}
}

// endError turns the failure of more into the error Read returns.
func (s *StreamReader) endError(err error, header bool) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return &noEndError{off: s.base + int64(s.end), header: header}
	}
	return fmt.Errorf("reading the memspy Valgrind tool's stream after %d bytes: %w", s.base+int64(s.end), err)
}

func (s *StreamReader) corrupt(off int64, format string, args ...any) error {
	return &corruptError{off: off, msg: fmt.Sprintf(format, args...)}
}

func (s *StreamReader) readHeader() error {
	if err := s.more(headerLen); err != nil {
		return s.endError(err, true)
	}
	h := s.buf[s.pos : s.pos+headerLen]
	if string(h[:8]) != StreamMagic {
		return s.corrupt(0, "bad magic %q, want %q: not a memspy Valgrind tool stream", h[:8], StreamMagic)
	}
	if v := le.Uint64(h[8:]); v != StreamVersion {
		return &versionError{got: v, lib: s.lib}
	}
	s.flags = le.Uint64(h[16:])
	s.pid = int(int64(le.Uint64(h[24:])))
	s.pos += headerLen
	s.header = true
	if s.flags&flagRing != 0 {
		if s.ring == nil {
			return s.corrupt(16, "the stream says its data is in a ring, but there is none")
		}
		// The rest of the input is announcements of chunks.
		s.pending = append(make([]byte, 0, 64), s.buf[s.pos:s.end]...)
		s.base += int64(s.pos)
		s.buf, s.pos, s.end = nil, 0, 0
	}
	return nil
}

// Read implements trace.Reader.
func (s *StreamReader) Read(b *trace.Batch) error {
	b.Reset()
	if s.err != nil {
		return s.err
	}
	room := min(cap(b.Kind), cap(b.Addr), cap(b.Size), cap(b.PC), cap(b.Thread))
	if room == 0 {
		*b = *trace.NewBatch(trace.BatchSize)
		room = trace.BatchSize
	}
	var err error
	if !s.header {
		err = s.readHeader()
	}
	n := 0
	if err == nil {
		c := columns{b.Kind[:room], b.Addr[:room], b.Size[:room], b.PC[:room], b.Thread[:room], &b.Ext, &b.Blocks, &b.Accesses}
		n, err = s.decode(c)
	}
	b.Kind, b.Addr, b.Size, b.PC, b.Thread = b.Kind[:n], b.Addr[:n], b.Size[:n], b.PC[:n], b.Thread[:n]
	s.events += uint64(n)
	if err != nil {
		s.err = err
		if (errors.Is(err, ErrCorrupt) || errors.Is(err, ErrVersion)) && s.onFatal != nil {
			f := s.onFatal
			s.onFatal = nil
			f()
		}
		if n > 0 {
			return nil // deliver the events first; the error comes next
		}
	}
	return err
}

// columns are the batch's columns, at their full room, being filled.
type columns struct {
	kind []trace.Kind
	addr []uint64
	size []uint32
	pc   []uint64
	thr  []uint32
	ext  *[]trace.Ext
	// blocks and acc: the details of Exec events (trace.Batch.AppendExec).
	blocks *[]*trace.Block
	acc    *[]trace.L1Access
}

// setExt makes event n the extended event k.
func (c columns) setExt(n int, k trace.Kind, addr, pc uint64, thr uint32, e trace.Ext) {
	c.kind[n], c.addr[n], c.size[n], c.pc[n], c.thr[n] = k, addr, uint32(len(*c.ext)), pc, thr
	*c.ext = append(*c.ext, e)
}

// decode fills the columns with up to their length of events. It returns
// the number of events and the error that stopped it early, if any.
func (s *StreamReader) decode(c columns) (int, error) {
	room := len(c.kind)
	n := 0
	for n < room {
		if s.call.kind != 0 {
			n = s.deliverHeld(c, n)
			continue
		}
		if s.below > 0 {
			var err error
			if n, err = s.belowEvents(c, n); err != nil {
				return n, err
			}
			continue
		}
		if s.cur != nil {
			var err error
			if n, err = s.resume(c, n); err != nil || s.cur != nil {
				return n, err
			}
			continue
		}
		if !s.Notes() {
			if n = s.execs(c, n); n == room {
				break
			}
		}
		if s.end-s.pos < 8 {
			if err := s.more(8); err != nil {
				if err == io.EOF && s.exec != "" {
					// The exec succeeded: the process is another program now.
					var all bool
					if n, all = s.deliverFinal(c, n); !all {
						return n, nil
					}
					s.ended = true
					return n, io.EOF
				}
				return n, s.endError(err, false)
			}
		}
		if s.exec != "" && string(s.buf[s.pos:s.pos+8]) == StreamMagic {
			// The exec'd program's stream follows (see Next).
			var all bool
			if n, all = s.deliverFinal(c, n); !all {
				return n, nil
			}
			s.ended = true
			return n, io.EOF
		}
		w := le.Uint64(s.buf[s.pos:])
		if t := w >> 60; (t == recExec || t == recExecL1) && s.Notes() {
			var full bool
			var err error
			if n, full, err = s.notedRecord(c, n, w); err != nil || full {
				return n, err
			}
			continue
		}
		switch w >> 60 {
		case recExec:
			// An EXEC that execs left: its words are not all in the
			// buffer, its events do not fit, or it is corrupt.
			id := w >> 16 & idMask
			sb := s.lookup(id)
			if sb == nil {
				return n, s.corrupt(s.off(), "EXEC of superblock %d, which was not described", id)
			}
			e := int(w & 0xffff)
			if e >= len(sb.exits) {
				return n, s.corrupt(s.off(), "EXEC of superblock %d takes exit %d, but it has %d exits (exit %[3]d means it ran to its end)", id, e, len(sb.exits)-1)
			}
			need, fit, total := s.execSize(sb, e)
			if fit <= room-n && (s.end-s.pos >= need || need <= len(s.buf) && s.more(need) == nil) {
				continue // execs takes it now that its words are here
			}
			// Deliver it event by event, across Reads if need be.
			s.cur, s.curEv, s.curEnd = sb, 0, total
			if sb.derivedOf != nil {
				s.curAddr = slices.Grow(s.curAddr[:0], len(sb.kind))[:len(sb.kind)]
			}
			s.pos += 8
		case recDescribe:
			if err := s.describe(); err != nil {
				return n, err
			}
		case recThread:
			s.tid = uint32(w)
			s.pos += 8
		case recAlloc, recFree, recMark, recMap:
			if err := s.extended(c, n, w); err != nil {
				return n, err
			}
			n++
		case recSync:
			if err := s.sync(c, n, w); err != nil {
				return n, err
			}
			n++
		case recSkip:
			s.pos += 8
			if k := w & (1<<60 - 1); k > 0 {
				c.kind[n], c.addr[n], c.size[n], c.pc[n], c.thr[n] = trace.Skip, k, 0, 0, s.tid
				n++
			}
		case recString:
			if err := s.str(w); err != nil {
				return n, err
			}
		case recBelow:
			if !s.FirstLevel() {
				return n, s.notFirstLevel("BELOW")
			}
			if err := s.belowRecord(w); err != nil {
				return n, err
			}
		case recL1Stats:
			if !s.FirstLevel() {
				return n, s.notFirstLevel("L1STATS")
			}
			made, err := s.statsRecord(c, n, w)
			if err != nil {
				return n, err
			}
			if made {
				n++
			}
		case recProc:
			if err := s.proc(w); err != nil {
				return n, err
			}
		case recEnd:
			s.code, s.exited = int(w&0xff), w>>8&1 == 1
			s.ended = true
			s.pos += 8
			return n, io.EOF
		default:
			return n, s.corrupt(s.off(), "unknown record type %d (word %#016x)", w>>60, w)
		}
	}
	return n, nil
}

// execSize returns the bytes of an EXEC record of sb that takes exit e,
// the number of events it delivers (fit) and the number it has (total):
// they differ by its final call or return when the reader is slim.
func (s *StreamReader) execSize(sb *superblock, e int) (need, fit, total int) {
	x := &sb.exits[e]
	need, fit, total = int(x.need), int(x.ev), int(x.ev+x.final)
	if !s.slim {
		fit = total
	}
	return need, fit, total
}

// execs decodes EXEC records from s.pos into the columns from index n on,
// as long as the next record is an EXEC that is whole in the buffer, of a
// described superblock and exit, whose events fit. It returns the new
// number of events. It is the decoder's hot path: buffer position and
// columns stay in local variables, and each record's events are filled
// from the superblock's description in one loop.
func (s *StreamReader) execs(c columns, n int) int {
	buf, pos := s.buf[:s.end], s.pos
	kind, addr, size := c.kind, c.addr[:len(c.kind)], c.size[:len(c.kind)]
	pc, thr := c.pc[:len(c.kind)], c.thr[:len(c.kind)]
	slim, tid := s.slim, s.tid
	for len(buf)-pos >= 8 {
		w := le.Uint64(buf[pos:])
		if w>>60 != recExec {
			break
		}
		sb := s.lookup(w >> 16 & idMask)
		e := int(w & 0xffff)
		if sb == nil || e >= len(sb.exits) {
			break
		}
		need, fit, _ := s.execSize(sb, e)
		if fit > len(kind)-n || need > len(buf)-pos {
			break
		}
		x := &sb.exits[e]
		nev, nd := int(x.ev), int(x.words)
		words := buf[pos+8 : pos+need]
		a := addr[n : n+nev]
		k, sz := kind[n : n+nev][:len(a)], size[n : n+nev][:len(a)]
		sk, ssz, sp, sc := sb.kind[:len(a)], sb.size[:len(a)], sb.pc[:len(a)], sb.col[:len(a)]
		// Short superblocks fill every column in one loop: a copy per
		// column costs a call each, more than it saves under 8 events.
		switch {
		case slim && sb.allData:
			w := words[:8*len(a)]
			for j := range a {
				a[j] = le.Uint64(w[8*j:])
				k[j], sz[j] = sk[j], ssz[j]
			}
		case slim:
			if len(a) <= 8 {
				for j := range a {
					a[j], k[j], sz[j] = sp[j], sk[j], ssz[j]
				}
			} else {
				copy(a, sp)
				copy(k, sk)
				copy(sz, ssz)
			}
			for j, i := range sb.direct[:nd] {
				a[i] = le.Uint64(words[8*j:])
			}
		default:
			p, t := pc[n : n+nev][:len(a)], thr[n : n+nev][:len(a)]
			for j := range a {
				a[j], k[j], sz[j], p[j], t[j] = sp[j], sk[j], ssz[j], sc[j], tid
			}
			for j, i := range sb.direct[:nd] {
				a[i] = le.Uint64(words[8*j:])
			}
		}
		for _, d := range sb.derived[:x.derived] {
			a[d.pos] = a[d.base] + d.off
		}
		if len(sb.syncs) > 0 {
			// Atomic Sync events: the address of their Modify, an Ext.
			for _, i := range sb.syncs {
				if int(i) >= nev {
					break
				}
				j := n + int(i)
				addr[j], size[j], pc[j], thr[j] = addr[j+1], uint32(len(*c.ext)), sb.pc[i], tid
				*c.ext = append(*c.ext, trace.Ext{Sync: trace.SyncAtomic})
			}
		}
		n += nev
		if fit > nev {
			c.setExt(n, sb.final, le.Uint64(words[8*nd:]), sb.finalPC, tid, trace.Ext{SP: le.Uint64(words[8*nd+8:])})
			n++
		}
		pos += need
	}
	s.pos = pos
	return n
}

// resume delivers events of the current EXEC record from event s.curEv on,
// into the columns from index n, until the record or the batch ends.
func (s *StreamReader) resume(c columns, n int) (int, error) {
	kind, addr, size, pc, thr := c.kind, c.addr, c.size, c.pc, c.thr
	sb := s.cur
	for s.curEv < s.curEnd && n < len(kind) {
		i := s.curEv
		if i == len(sb.kind) {
			// The final call or return: its target and stack pointer.
			if err := s.more(16); err != nil {
				return n, s.endError(err, false)
			}
			if !s.slim {
				c.setExt(n, sb.final, le.Uint64(s.buf[s.pos:]), sb.finalPC, s.tid, trace.Ext{SP: le.Uint64(s.buf[s.pos+8:])})
				n++
			}
			s.pos += 16
			s.curEv++
			continue
		}
		a := sb.pc[i]
		if sb.kind[i] == trace.Sync {
			// An atomic: the address of its Modify, which follows.
			addr, err := s.curAddress(sb, i+1, false)
			if err != nil {
				return n, err
			}
			c.setExt(n, trace.Sync, addr, a, s.tid, trace.Ext{Sync: trace.SyncAtomic})
			n++
			s.curEv++
			continue
		}
		if k := sb.kind[i]; k != trace.IFetch && k != trace.IFetchRun {
			var err error
			if a, err = s.curAddress(sb, i, true); err != nil {
				return n, err
			}
		}
		kind[n], addr[n], size[n], pc[n], thr[n] = sb.kind[i], a, sb.size[i], sb.col[i], s.tid
		n++
		s.curEv++
	}
	if s.curEv == s.curEnd {
		s.cur = nil
	}
	return n, nil
}

// curAddress returns the address of data event i of the current EXEC:
// derived from an earlier one's, or the address word at s.pos, consumed
// if consume.
func (s *StreamReader) curAddress(sb *superblock, i int, consume bool) (uint64, error) {
	if sb.derivedOf != nil {
		if d := sb.derivedOf[i]; d >= 0 {
			x := sb.derived[d]
			a := s.curAddr[x.base] + x.off
			s.curAddr[i] = a
			return a, nil
		}
	}
	if s.end-s.pos < 8 {
		if err := s.more(8); err != nil {
			return 0, s.endError(err, false)
		}
	}
	a := le.Uint64(s.buf[s.pos:])
	if consume {
		s.pos += 8
		if sb.derivedOf != nil {
			s.curAddr[i] = a
		}
	}
	return a, nil
}

func (s *StreamReader) lookup(id uint64) *superblock {
	if id < uint64(len(s.sbs)) {
		if sb := s.sbs[id]; sb != nil {
			return sb
		}
	}
	return s.sbMap[id]
}

// store files sb under id: in the slice when id is at most about twice
// the number of superblocks described (so the slice stays proportional to
// the input), else in the map.
func (s *StreamReader) store(id uint64, sb *superblock) {
	s.nsb++
	switch {
	case id < uint64(len(s.sbs)):
		s.sbs[id] = sb
	case id <= 2*uint64(s.nsb)+4096:
		for uint64(len(s.sbs)) < id {
			s.sbs = append(s.sbs, nil)
		}
		s.sbs = append(s.sbs, sb)
	default:
		if s.sbMap == nil {
			s.sbMap = make(map[uint64]*superblock)
		}
		s.sbMap[id] = sb
	}
}

// describe decodes a DESCRIBE record at s.pos.
func (s *StreamReader) describe() error {
	start := s.off()
	if err := s.more(16); err != nil {
		return s.endError(err, false)
	}
	id := le.Uint64(s.buf[s.pos:]) >> 16 & idMask
	countWord := le.Uint64(s.buf[s.pos+8:])
	count, nderived := countWord&(1<<32-1), countWord>>32
	if count > MaxEntries {
		return s.corrupt(start, "superblock %d has %d entries, at most %d allowed", id, count, MaxEntries)
	}
	if nderived > count {
		return s.corrupt(start, "superblock %d has %d derived entries among %d", id, nderived, count)
	}
	if s.lookup(id) != nil {
		return s.corrupt(start, "superblock %d described twice", id)
	}
	s.pos += 16
	ents, pcs, bases := s.scratchEnt[:0], s.scratchPC[:0], s.scratchBase[:0]
	nev, nexit, derived, final := 0, 0, 0, false
	for range count {
		if err := s.more(16); err != nil {
			return s.endError(err, false)
		}
		ent, p := le.Uint64(s.buf[s.pos:]), le.Uint64(s.buf[s.pos+8:])
		if final {
			return s.corrupt(s.off(), "entry %d of superblock %d follows its final call or return", len(ents), id)
		}
		data := false
		switch ent & 0xff {
		case entRead, entWrite, entModify:
			nev++
			data = true
		case entIFetch:
			nev++
		case entAtomic:
			nev += 2
			data = true
		case entExit:
			nexit++
		case entCall, entReturn:
			final = true
		default:
			return s.corrupt(s.off(), "entry %d of superblock %d has unknown kind %d", len(ents), id, ent&0xff)
		}
		base := int64(-1) // the data entry a derived one follows
		switch {
		case ent&entReserved != 0 || ent&entDerived == 0 && ent>>entBaseShift != 0:
			return s.corrupt(s.off(), "entry %d of superblock %d has reserved bits set (word %#016x)", len(ents), id, ent)
		case ent&entDerived != 0:
			base = int64(ent >> entBaseShift)
			if !data || base >= int64(len(bases)) || bases[base] >= 0 {
				return s.corrupt(s.off(), "entry %d of superblock %d derives its address from data entry %d, which is not an earlier data entry with an address word", len(ents), id, base)
			}
			derived++
		}
		if data {
			bases = append(bases, base)
		}
		ents, pcs = append(ents, ent), append(pcs, p)
		s.pos += 16
	}
	if uint64(derived) != nderived {
		return s.corrupt(start, "superblock %d says it has %d derived entries, and has %d", id, nderived, derived)
	}
	offs := make([]uint64, 0, nderived)
	for range nderived {
		if err := s.more(8); err != nil {
			return s.endError(err, false)
		}
		offs = append(offs, le.Uint64(s.buf[s.pos:]))
		s.pos += 8
	}
	s.scratchEnt, s.scratchPC, s.scratchBase = ents, pcs, bases

	sb := &superblock{
		kind:  make([]trace.Kind, 0, nev),
		size:  make([]uint32, 0, nev),
		pc:    make([]uint64, 0, nev),
		exits: make([]exitCounts, 0, nexit+1),
	}
	if s.Notes() {
		sb.entryEv = make([]int32, len(ents))
	}
	for i, ent := range ents {
		if sb.entryEv != nil {
			sb.entryEv[i] = -1
			if k := ent & 0xff; k != entExit && k != entCall && k != entReturn {
				sb.entryEv[i] = int32(len(sb.kind))
				if k == entAtomic && !s.slim {
					sb.entryEv[i]++ // the Modify, after the Sync
				}
			}
		}
		var k trace.Kind
		switch ent & 0xff {
		case entRead:
			k = trace.Read
		case entWrite:
			k = trace.Write
		case entModify:
			k = trace.Modify
		case entIFetch:
			k = trace.IFetch
		case entAtomic:
			if !s.slim { // a slim consumer has no use for atomics' Sync events
				sb.syncs = append(sb.syncs, int32(len(sb.kind)))
				sb.kind = append(sb.kind, trace.Sync)
				sb.size = append(sb.size, 0)
				sb.pc = append(sb.pc, pcs[i])
			}
			k = trace.Modify
		case entExit:
			sb.exits = append(sb.exits, exitCounts{ev: int32(len(sb.kind)), data: int32(len(sb.dataPos))})
			continue
		case entCall, entReturn:
			sb.final, sb.finalPC = trace.Call, pcs[i]
			if ent&0xff == entReturn {
				sb.final = trace.Return
			}
			continue
		}
		if k != trace.IFetch {
			sb.dataPos = append(sb.dataPos, int32(len(sb.kind)))
		}
		sb.kind = append(sb.kind, k)
		sb.size = append(sb.size, uint32(ent>>8&0xffffff))
		sb.pc = append(sb.pc, pcs[i])
	}
	sb.exits = append(sb.exits, exitCounts{ev: int32(len(sb.kind)), data: int32(len(sb.dataPos))})
	sb.col = sb.pc
	if s.runBlock > 0 && len(sb.dataPos) < len(sb.kind) {
		sb.foldRuns(s.runBlock, s.spans)
	}
	sb.link(bases, offs)
	if sb.entryEv != nil {
		sb.describeBlock()
	}
	s.store(id, sb)
	return nil
}

// link sets the address words and derived events of sb from the base of
// each data event (the number of the data event it derives its address
// from, or -1 if it has an address word) and the offsets of the derived
// ones, in order.
func (sb *superblock) link(bases []int64, offs []uint64) {
	sb.direct = sb.dataPos
	if len(offs) > 0 {
		sb.direct = make([]int32, 0, len(bases)-len(offs))
		sb.derived = make([]derivedAddr, 0, len(offs))
		sb.derivedOf = make([]int32, len(sb.kind))
		for i := range sb.derivedOf {
			sb.derivedOf[i] = -1
		}
		for j, b := range bases {
			pos := sb.dataPos[j]
			if b < 0 {
				sb.direct = append(sb.direct, pos)
				continue
			}
			sb.derivedOf[pos] = int32(len(sb.derived))
			sb.derived = append(sb.derived, derivedAddr{pos: pos, base: sb.dataPos[b], off: offs[len(sb.derived)]})
		}
	}
	var words, derived int32
	j := 0 // data events counted
	for e := range sb.exits {
		x := &sb.exits[e]
		for ; j < int(x.data); j++ {
			if bases[j] < 0 {
				words++
			} else {
				derived++
			}
		}
		x.words, x.derived = words, derived
		x.need = 8 + 8*words
		if sb.final != 0 && e == len(sb.exits)-1 {
			x.need += 16
			x.final = 1
		}
	}
	sb.allData = len(sb.dataPos) == len(sb.kind) && len(offs) == 0
}

// foldRuns rewrites the fetches of sb into trace.IFetchRun events within
// aligned blocks of block bytes (see SetIFetchRuns), in place; with spans,
// of contiguous fetches only, each run's PC column the ends of its
// instructions.
func (sb *superblock) foldRuns(block uint64, spans bool) {
	n := len(sb.kind)
	kind, size, pc, dataPos, syncs := sb.kind[:0], sb.size[:0], sb.pc[:0], sb.dataPos[:0], sb.syncs[:0]
	var col []uint64 // with spans
	exit := 0        // next element of exits, renumbered as its event is reached
	open := -1       // index of the run the next fetch may join
	var next uint64  // with spans, where the open run's last fetch ended
	var newIndex []int32
	if sb.entryEv != nil {
		newIndex = make([]int32, n)
	}
	for i := range n {
		if newIndex != nil {
			newIndex[i] = int32(len(kind)) // (a fetch joining a run: its index, set below)
		}
		for ; exit < len(sb.exits)-1 && int(sb.exits[exit].ev) == i; exit++ {
			sb.exits[exit].ev = int32(len(kind))
			open = -1
		}
		k, sz, p := sb.kind[i], sb.size[i], sb.pc[i]
		switch {
		case k == trace.Sync:
			// No fetch moves across a synchronization.
			syncs = append(syncs, int32(len(kind)))
			open = -1
		case k != trace.IFetch:
			dataPos = append(dataPos, int32(len(kind)))
		case sz > 0 && p&(block-1)+uint64(sz) <= block:
			end := uint64(1) << ((p + uint64(sz) - 1) & (block - 1)) // (spans)
			if open >= 0 && pc[open]/block == p/block && (!spans || p == next) {
				if kind[open] == trace.IFetch {
					kind[open], size[open] = trace.IFetchRun, 2
				} else {
					size[open]++
				}
				if newIndex != nil {
					newIndex[i] = int32(open)
				}
				if spans {
					col[open] |= end
					next = p + uint64(sz)
				}
				continue
			}
			open = len(kind)
			if spans {
				// A run's first fetch: its end, should others join.
				col = append(col, end)
				next = p + uint64(sz)
				kind, size, pc = append(kind, k), append(size, sz), append(pc, p)
				continue
			}
		default: // it crosses a block boundary: a fetch of its own
			open = -1
		}
		kind, size, pc = append(kind, k), append(size, sz), append(pc, p)
		if spans {
			col = append(col, p)
		}
	}
	if spans {
		// A fetch left alone keeps its address as its PC.
		for i, k := range kind {
			if k == trace.IFetch {
				col[i] = pc[i]
			}
		}
	}
	for ; exit < len(sb.exits); exit++ {
		sb.exits[exit].ev = int32(len(kind))
	}
	sb.kind, sb.size, sb.pc, sb.dataPos, sb.syncs = kind, size, pc, dataPos, syncs
	sb.col = pc
	if spans {
		sb.col = col
	}
	for i, e := range sb.entryEv {
		if e >= 0 {
			sb.entryEv[i] = newIndex[e]
		}
	}
}

// extended decodes an ALLOC, FREE, MARK or MAP record (first word w) at
// s.pos into event n.
func (s *StreamReader) extended(c columns, n int, w uint64) error {
	start := s.off()
	typ, name := w>>60, w>>16&(1<<44-1)
	depth := 0
	if typ == recAlloc || typ == recFree {
		depth = int(w & 0xffff)
		if depth > MaxStackDepth {
			return s.corrupt(start, "an allocation record has a call stack of %d frames, at most %d allowed", depth, MaxStackDepth)
		}
	}
	head := 24 // the words before the call stack
	if typ == recAlloc {
		head = 32
	}
	need := head + 8*depth
	if err := s.more(need); err != nil {
		return s.endError(err, false)
	}
	nm, ok := s.strings[name]
	if name != 0 && !ok {
		return s.corrupt(start, "record names string %d, which was not defined", name)
	}
	a, size := le.Uint64(s.buf[s.pos+8:]), le.Uint64(s.buf[s.pos+16:])
	e := trace.Ext{Size: size, Name: nm}
	var k trace.Kind
	var pc uint64
	switch typ {
	case recMark:
		m := trace.MarkKind(w & 0xffff)
		if w&0xffff > 0xff || !m.Valid() { // MarkKind is 8 bits: 256 is not MarkStart
			return s.corrupt(start, "MARK record of unknown kind %d", w&0xffff)
		}
		k, e.Mark = trace.Marker, m
	case recMap:
		switch {
		case name == 0:
			return s.corrupt(start, "MAP record without a path (string 0)")
		case w&0xffff != 0:
			return s.corrupt(start, "MAP record with bits 15..0 set (word %#016x)", w)
		}
		k = trace.Map
	default:
		k = trace.Alloc
		if typ == recFree {
			k = trace.Free
		} else {
			e.Type = le.Uint64(s.buf[s.pos+24:])
		}
		if depth > 0 {
			e.Stack = make([]uint64, depth)
			for i := range e.Stack {
				e.Stack[i] = le.Uint64(s.buf[s.pos+head+8*i:])
			}
			pc = e.Stack[0]
		}
	}
	c.setExt(n, k, a, pc, s.tid, e)
	s.pos += need
	return nil
}

// str decodes a STRING record (first word w) at s.pos.
func (s *StreamReader) str(w uint64) error {
	start := s.off()
	id, length := w>>32&(1<<28-1), int(w&0xffffffff)
	if length > MaxString {
		return s.corrupt(start, "STRING record of %d bytes, at most %d allowed", length, MaxString)
	}
	if _, dup := s.strings[id]; id == 0 || dup {
		return s.corrupt(start, "STRING record defines id %d twice (or id 0)", id)
	}
	need := 8 + 8*((length+7)/8)
	if err := s.more(need); err != nil {
		return s.endError(err, false)
	}
	if s.strings == nil {
		s.strings = make(map[uint64]string)
	}
	s.strings[id] = string(s.buf[s.pos+8 : s.pos+8+length])
	s.pos += need
	return nil
}

// proc decodes a PROC record (first word w) at s.pos.
func (s *StreamReader) proc(w uint64) error {
	start := s.off()
	if err := s.more(16); err != nil {
		return s.endError(err, false)
	}
	name := w >> 16 & (1<<44 - 1)
	nm, ok := s.strings[name]
	switch {
	case name != 0 && !ok:
		return s.corrupt(start, "record names string %d, which was not defined", name)
	case w&0xffff == procExec:
		if nm == "" {
			nm = "?" // a path the tool could not read
		}
		s.exec, s.foreign = nm, le.Uint64(s.buf[s.pos+8:]) == 1
	case w&0xffff == procExecFailed:
		s.exec, s.foreign = "", false
		s.final = pendingFinal{} // the flush before the exec did not happen
	case w&0xffff == procStart:
		s.command, s.parent = nm, int(int64(le.Uint64(s.buf[s.pos+8:])))
	default:
		return s.corrupt(start, "PROC record of unknown kind %d", w&0xffff)
	}
	s.pos += 16
	return nil
}

// sync decodes a SYNC record (first word w) at s.pos into event n.
func (s *StreamReader) sync(c columns, n int, w uint64) error {
	start := s.off()
	if err := s.more(32); err != nil {
		return s.endError(err, false)
	}
	k := trace.SyncKind(w & 0xff)
	switch {
	case w&(1<<60-1)>>8 != 0:
		return s.corrupt(start, "SYNC record with bits 59..8 set (word %#016x)", w)
	case !k.Valid():
		return s.corrupt(start, "SYNC record of unknown kind %d", w&0xff)
	}
	b := s.buf[s.pos:]
	c.setExt(n, trace.Sync, le.Uint64(b[8:]), le.Uint64(b[24:]), s.tid, trace.Ext{Sync: k, Size: le.Uint64(b[16:])})
	s.pos += 32
	return nil
}
