package trace

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/bits"
	"strings"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
)

// MSTCodec selects how an .mst writer compresses chunk payloads.
type MSTCodec int

// Codecs. The zero value, MSTCodecS2, is the default.
const (
	// MSTCodecS2 compresses with S2 blocks: fast to decode (the default).
	MSTCodecS2 MSTCodec = iota
	// MSTCodecZstd compresses with zstd frames: smaller, slower to decode.
	MSTCodecZstd
	// MSTCodecNone stores payloads uncompressed.
	MSTCodecNone
)

var mstCodecNames = [...]string{MSTCodecS2: "s2", MSTCodecZstd: "zstd", MSTCodecNone: "none"}

// String returns the codec's name as accepted by ParseMSTCodec.
func (c MSTCodec) String() string {
	if c >= 0 && int(c) < len(mstCodecNames) {
		return mstCodecNames[c]
	}
	return fmt.Sprintf("MSTCodec(%d)", int(c))
}

// ParseMSTCodec returns the codec named "s2", "zstd" or "none".
func ParseMSTCodec(name string) (MSTCodec, error) {
	for c, n := range mstCodecNames {
		if strings.EqualFold(name, n) {
			return MSTCodec(c), nil
		}
	}
	return 0, fmt.Errorf("unknown .mst codec %q (want s2, zstd or none)", name)
}

// MSTWriterOptions configures an MSTWriter. The zero value writes S2
// chunks of MSTDefaultChunkEvents events.
type MSTWriterOptions struct {
	// Codec compresses the chunk payloads.
	Codec MSTCodec
	// ZstdLevel is the zstd level for MSTCodecZstd: 1 (fastest) to 4
	// (best); 0 selects zstd's default (2).
	ZstdLevel int
	// ChunkEvents is the number of events per chunk, 1 to
	// MSTMaxChunkEvents; 0 selects MSTDefaultChunkEvents.
	ChunkEvents int
	// Meta is stored in the header. An empty Creator is set to "memspy".
	Meta MSTMeta
}

// MSTWriter encodes events into an .mst stream. It buffers one chunk of
// events; Close writes the last chunk, the index and the trailer.
type MSTWriter struct {
	w      io.Writer
	codec  MSTCodec
	chunkN int
	off    uint64 // bytes written
	events uint64 // events in chunks written
	index  []byte // index entries
	err    error  // sticky
	closed bool
	zenc   *zstd.Encoder

	// Buffered events of the current chunk; extended events have size 0
	// and their Ext already encoded in ecol.
	kind   []Kind
	addr   []uint64
	size   []uint32
	pc     []uint64
	thr    []uint32
	ecol   []byte // ext column
	prevSP uint64 // SP prediction of the ext column
	kept   *Batch // a batch without its Skip events

	// Scratch space reused for every chunk.
	ops   []byte
	acol  []byte
	esc   []byte
	pcol  []byte
	tcol  []byte
	raw   []byte
	block []byte
	table mstOpTable
	hdr   [mstBlockHeaderLen]byte
}

// NewMSTWriter writes an .mst header to w and returns a writer of events.
func NewMSTWriter(w io.Writer, opt MSTWriterOptions) (*MSTWriter, error) {
	if opt.Codec < 0 || int(opt.Codec) >= len(mstCodecNames) {
		return nil, fmt.Errorf("mst: unknown codec %v", opt.Codec)
	}
	n := opt.ChunkEvents
	if n == 0 {
		n = MSTDefaultChunkEvents
	}
	if n < 1 || n > MSTMaxChunkEvents {
		return nil, fmt.Errorf("mst: chunk size %d outside 1..%d", n, MSTMaxChunkEvents)
	}
	mw := &MSTWriter{w: w, codec: opt.Codec, chunkN: n}
	if opt.Codec == MSTCodecZstd {
		level := zstd.SpeedDefault
		switch opt.ZstdLevel {
		case 0:
		case 1, 2, 3, 4:
			level = zstd.EncoderLevel(opt.ZstdLevel)
		default:
			return nil, fmt.Errorf("mst: zstd level %d outside 1..4", opt.ZstdLevel)
		}
		var err error
		mw.zenc, err = zstd.NewWriter(nil, zstd.WithEncoderLevel(level), zstd.WithEncoderConcurrency(1),
			zstd.WithEncoderCRC(false), zstd.WithZeroFrames(true))
		if err != nil {
			return nil, fmt.Errorf("mst: %w", err)
		}
	}
	meta := opt.Meta
	if meta.Creator == "" {
		meta.Creator = "memspy"
	}
	js, err := json.Marshal(meta)
	if err != nil {
		return nil, fmt.Errorf("mst: encoding metadata: %w", err)
	}
	if len(js) > MSTMaxMetaLen {
		return nil, fmt.Errorf("mst: metadata is %d bytes, at most %d allowed", len(js), MSTMaxMetaLen)
	}
	h := make([]byte, 0, mstFixedHeaderLen+len(js)+4)
	h = append(h, mstMagic...)
	h = binary.LittleEndian.AppendUint16(h, MSTVersionMajor)
	h = binary.LittleEndian.AppendUint16(h, MSTVersionMinor)
	h = binary.LittleEndian.AppendUint32(h, 0) // flags
	h = binary.LittleEndian.AppendUint32(h, uint32(len(js)))
	h = append(h, js...)
	h = binary.LittleEndian.AppendUint32(h, crc32.Checksum(h, castagnoli))
	if err := mw.write(h); err != nil {
		return nil, err
	}
	return mw, nil
}

// Events returns the number of events written so far, including those
// still buffered.
func (w *MSTWriter) Events() uint64 { return w.events + uint64(len(w.kind)) }

func (w *MSTWriter) write(p []byte) error {
	n, err := w.w.Write(p)
	w.off += uint64(n)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		w.err = fmt.Errorf("mst: %w", err)
	}
	return w.err
}

// Write implements Writer. b.PC and b.Thread may be empty (all zero);
// otherwise every slice of b but Ext must have the same length. Extended
// events are written with their whole Ext; a stack deeper than
// MSTMaxStackDepth or a name longer than MSTMaxNameLen is an error. Skip
// events are dropped (the format stores only references that were
// recorded: a sampled run's trace lacks its gaps).
func (w *MSTWriter) Write(b *Batch) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errors.New("mst: Write after Close")
	}
	n := len(b.Kind)
	if len(b.Addr) != n || len(b.Size) != n || (len(b.PC) != n && len(b.PC) != 0) ||
		(len(b.Thread) != n && len(b.Thread) != 0) {
		return errors.New("mst: batch slices have different lengths")
	}
	skips := false
	for i, k := range b.Kind {
		switch {
		case k == Skip:
			skips = true
		case k >= Alloc && k != Misc:
			if err := checkExtended(b, i); err != nil {
				return err
			}
		}
	}
	if skips {
		b = w.withoutSkips(b)
		n = len(b.Kind)
	}
	if w.kind == nil {
		c := min(w.chunkN, 1<<16)
		w.kind = make([]Kind, 0, c)
		w.addr = make([]uint64, 0, c)
		w.size = make([]uint32, 0, c)
		w.pc = make([]uint64, 0, c)
		w.thr = make([]uint32, 0, c)
	}
	for i := 0; i < n; {
		if b.Kind[i].IsExtended() {
			if err := w.appendExt(b, i); err != nil {
				return err
			}
			i++
		} else {
			m := min(n-i, w.chunkN-len(w.kind))
			if len(b.Ext) > 0 { // stop before the next extended event
				for j, k := range b.Kind[i : i+m] {
					if k.IsExtended() {
						m = j
						break
					}
				}
			}
			w.appendRefs(b, i, m)
			i += m
		}
		if len(w.kind) == w.chunkN {
			if err := w.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// withoutSkips returns a copy of b without its Skip events, in the
// writer's own batch.
func (w *MSTWriter) withoutSkips(b *Batch) *Batch {
	if w.kept == nil {
		w.kept = NewBatch(len(b.Kind))
	}
	k := w.kept
	k.Reset()
	for i, kind := range b.Kind {
		if kind == Skip {
			continue
		}
		var pc uint64
		var thr uint32
		if len(b.PC) > 0 {
			pc = b.PC[i]
		}
		if len(b.Thread) > 0 {
			thr = b.Thread[i]
		}
		if kind.IsExtended() {
			k.AppendExt(kind, b.Addr[i], pc, thr, *b.ExtOf(i))
		} else {
			k.Append(kind, b.Addr[i], b.Size[i], pc, thr)
		}
	}
	return k
}

// checkExtended checks event i of b, whose kind is at least Alloc and not
// Misc: an extended event, or an invalid kind.
func checkExtended(b *Batch, i int) error {
	k := b.Kind[i]
	if !k.Valid() {
		return fmt.Errorf("mst: event %d of the batch has invalid kind %v", i, k)
	}
	if int(b.Size[i]) >= len(b.Ext) {
		return fmt.Errorf("mst: %v event %d of the batch has Ext index %d, but the batch has %d", k, i, b.Size[i], len(b.Ext))
	}
	e := b.ExtOf(i)
	switch {
	case len(e.Stack) > MSTMaxStackDepth:
		return fmt.Errorf("mst: %v event %d of the batch has a stack of %d frames, at most %d allowed", k, i, len(e.Stack), MSTMaxStackDepth)
	case len(e.Name) > MSTMaxNameLen:
		return fmt.Errorf("mst: %v event %d of the batch has a name of %d bytes, at most %d allowed", k, i, len(e.Name), MSTMaxNameLen)
	case !e.Mark.Valid():
		return fmt.Errorf("mst: %v event %d of the batch has invalid marker kind %v", k, i, e.Mark)
	case !e.Sync.Valid():
		return fmt.Errorf("mst: %v event %d of the batch has invalid synchronization kind %v", k, i, e.Sync)
	}
	return nil
}

// appendRefs buffers the m events of b from i on, none of them extended.
func (w *MSTWriter) appendRefs(b *Batch, i, m int) {
	w.kind = append(w.kind, b.Kind[i:i+m]...)
	w.addr = append(w.addr, b.Addr[i:i+m]...)
	w.size = append(w.size, b.Size[i:i+m]...)
	if len(b.PC) == 0 {
		w.pc = append(w.pc, make([]uint64, m)...)
	} else {
		w.pc = append(w.pc, b.PC[i:i+m]...)
	}
	if len(b.Thread) == 0 {
		w.thr = append(w.thr, make([]uint32, m)...)
	} else {
		w.thr = append(w.thr, b.Thread[i:i+m]...)
	}
}

// appendExt buffers the extended event i of b, encoding its Ext into the
// ext column. It ends the chunk first if the column could outgrow
// mstMaxExtLen.
func (w *MSTWriter) appendExt(b *Batch, i int) error {
	e := b.ExtOf(i)
	if len(w.kind) > 0 && len(w.ecol)+mstExtMaxBytes(e) > mstMaxExtLen {
		if err := w.flush(); err != nil {
			return err
		}
	}
	var pc uint64
	if len(b.PC) > 0 {
		pc = b.PC[i]
	}
	var thr uint32
	if len(b.Thread) > 0 {
		thr = b.Thread[i]
	}
	w.ecol = w.appendExtEntry(w.ecol, e, pc)
	w.kind = append(w.kind, b.Kind[i])
	w.addr = append(w.addr, b.Addr[i])
	w.size = append(w.size, 0)
	w.pc = append(w.pc, pc)
	w.thr = append(w.thr, thr)
	return nil
}

// mstExtMaxBytes bounds the length of e's ext column entry.
func mstExtMaxBytes(e *Ext) int {
	return 1 + 10 + 10 + 2 + 10*len(e.Stack) + 2 + len(e.Name) + 1 + 1 + 10
}

// appendExtEntry appends the ext column entry of e, the Ext of an event
// whose PC is pc: u8 fields, then the fields present (those that are not
// zero) in this order: uvarint size, uvarint zigzag SP delta, uvarint depth
// and depth uvarint zigzag stack deltas, uvarint name length and the name,
// u8 marker kind, u8 synchronization kind, uvarint type.
func (w *MSTWriter) appendExtEntry(p []byte, e *Ext, pc uint64) []byte {
	var fields byte
	if e.Size != 0 {
		fields |= mstExtSize
	}
	if e.SP != 0 {
		fields |= mstExtSP
	}
	if len(e.Stack) > 0 {
		fields |= mstExtStack
	}
	if e.Name != "" {
		fields |= mstExtName
	}
	if e.Mark != 0 {
		fields |= mstExtMark
	}
	if e.Sync != 0 {
		fields |= mstExtSync
	}
	if e.Type != 0 {
		fields |= mstExtType
	}
	p = append(p, fields)
	if e.Size != 0 {
		p = binary.AppendUvarint(p, e.Size)
	}
	if e.SP != 0 {
		p = binary.AppendUvarint(p, zigzag(e.SP-w.prevSP))
		w.prevSP = e.SP
	}
	if len(e.Stack) > 0 {
		p = binary.AppendUvarint(p, uint64(len(e.Stack)))
		prev := pc
		for _, a := range e.Stack {
			p = binary.AppendUvarint(p, zigzag(a-prev))
			prev = a
		}
	}
	if e.Name != "" {
		p = binary.AppendUvarint(p, uint64(len(e.Name)))
		p = append(p, e.Name...)
	}
	if e.Mark != 0 {
		p = append(p, byte(e.Mark))
	}
	if e.Sync != 0 {
		p = append(p, byte(e.Sync))
	}
	if e.Type != 0 {
		p = binary.AppendUvarint(p, e.Type)
	}
	return p
}

// Close writes the buffered events, the index and the trailer. It does not
// close the underlying io.Writer.
func (w *MSTWriter) Close() error {
	if w.closed || w.err != nil {
		return w.err
	}
	w.closed = true
	if len(w.kind) > 0 {
		if err := w.flush(); err != nil {
			return err
		}
	}
	if w.zenc != nil {
		w.zenc.Close()
	}
	ioff := w.off
	nc := len(w.index) / mstIndexEntryLen
	h := w.blockHeader(mstTagIndex, mstWireNone, 0, uint32(nc), w.events, uint32(len(w.index)), w.index)
	if err := w.write(h); err != nil {
		return err
	}
	if err := w.write(w.index); err != nil {
		return err
	}
	t := w.hdr[:mstTrailerLen]
	binary.LittleEndian.PutUint64(t[0:], ioff)
	binary.LittleEndian.PutUint64(t[8:], w.events)
	binary.LittleEndian.PutUint32(t[16:], uint32(nc))
	binary.LittleEndian.PutUint32(t[20:], crc32.Checksum(t[:20], castagnoli))
	copy(t[24:], mstEndMagic)
	return w.write(t)
}

// blockHeader returns (in scratch space) a block header for a payload
// stored uncompressed (rawLen == len(payload)) or compressed.
func (w *MSTWriter) blockHeader(tag, codec, cols byte, count uint32, first uint64, rawLen uint32, payload []byte) []byte {
	h := w.hdr[:]
	h[0], h[1], h[2] = tag, codec, cols
	binary.LittleEndian.PutUint32(h[4:], count)
	binary.LittleEndian.PutUint64(h[8:], first)
	binary.LittleEndian.PutUint32(h[16:], rawLen)
	binary.LittleEndian.PutUint32(h[20:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(h[24:], crc32.Checksum(payload, castagnoli))
	binary.LittleEndian.PutUint32(h[28:], crc32.Checksum(h[:28], castagnoli))
	return h
}

// mstOpTable assigns op codes to (kind, flags, size) triples within a
// chunk: an open-addressing hash table with room for every code.
type mstOpTable struct {
	keys    [512]uint64 // key+1; 0 is empty
	codes   [512]byte
	entries []byte // encoded table entries, in code order
	n       int
}

func (t *mstOpTable) reset() {
	clear(t.keys[:])
	t.entries = t.entries[:0]
	t.n = 0
}

// code returns the op code of key (size<<24 | kind<<16 | lens<<8 |
// flags), adding it if there is room, or mstEscape.
func (t *mstOpTable) code(key uint64) byte {
	h := (key * 0x9E3779B97F4A7C15) >> 55 // 9 bits
	for {
		switch t.keys[h] {
		case key + 1:
			return t.codes[h]
		case 0:
			if t.n == mstMaxOps {
				return mstEscape
			}
			c := byte(t.n)
			t.n++
			t.keys[h], t.codes[h] = key+1, c
			t.entries = appendOp(t.entries, key)
			return c
		}
		h = (h + 1) & 511
	}
}

// appendOp appends the wire form {u8 kind, u8 flags, u8 lens, uvarint
// size} of key.
func appendOp(p []byte, key uint64) []byte {
	p = append(p, byte(key>>16), byte(key), byte(key>>8))
	return binary.AppendUvarint(p, key>>24)
}

// deltaLen returns the number of bytes of the shortest two's complement
// form of d (0 for 0).
func deltaLen(d uint64) uint64 {
	if d == 0 {
		return 0
	}
	s := int64(d)
	return uint64(bits.Len64(uint64(s^s>>63))+8) / 8
}

// appendDelta appends the n low bytes of d, little-endian.
func appendDelta(p []byte, d, n uint64) []byte {
	p = binary.LittleEndian.AppendUint64(p, d)
	return p[:len(p)-8+int(n)]
}

// flush encodes and writes the buffered chunk.
func (w *MSTWriter) flush() error {
	n := len(w.kind)
	if len(w.index)/mstIndexEntryLen >= mstMaxIndexEntries {
		w.err = errors.New("mst: too many chunks for the index; use larger chunks")
		return w.err
	}
	kinds, addrs, sizes, pcs := w.kind[:n], w.addr[:n], w.size[:n], w.pc[:n]
	if cap(w.ops) < n {
		w.ops = make([]byte, n)
	}
	ops := w.ops[:n]
	acol, esc, pcol := w.acol[:0], w.esc[:0], w.pcol[:0]
	var cols byte
	for _, p := range pcs {
		if p != 0 {
			cols |= mstColPC
			break
		}
	}
	t := &w.table
	t.reset()
	var pI, pD, prevPC uint64
	lastKey, lastCode := ^uint64(0), byte(0)
	for i, k := range kinds {
		a, sz := addrs[i], sizes[i]
		var fl uint64
		pred := pD
		instr := k == IFetch || k == Call || k == Return
		if instr {
			fl = mstOpInstr
			pred = pI
		}
		d := a - pred
		alen := deltaLen(d)
		acol = appendDelta(acol, d, alen)
		key := uint64(sz)<<24 | uint64(k)<<16 | alen<<8 | fl
		if cols&mstColPC != 0 {
			dp := pcs[i] - prevPC
			plen := deltaLen(dp)
			pcol = appendDelta(pcol, dp, plen)
			prevPC = pcs[i]
			key |= plen << 12
		}
		if key != lastKey {
			lastKey, lastCode = key, t.code(key)
		}
		ops[i] = lastCode
		if lastCode == mstEscape {
			esc = appendOp(esc, key)
		}
		if instr {
			pI = a + uint64(sz)
		} else {
			pD = a + uint64(sz)
		}
	}
	tcol := w.tcol[:0]
	for _, th := range w.thr {
		if th != 0 {
			cols |= mstColThread
			for i := 0; i < n; {
				j := i + 1
				for j < n && w.thr[j] == w.thr[i] {
					j++
				}
				tcol = binary.AppendUvarint(tcol, uint64(w.thr[i]))
				tcol = binary.AppendUvarint(tcol, uint64(j-i))
				i = j
			}
			break
		}
	}
	w.acol, w.esc, w.pcol, w.tcol = acol, esc, pcol, tcol
	if len(w.ecol) > 0 {
		cols |= mstColExt
	}

	raw := w.raw[:0]
	raw = append(raw, byte(t.n))
	raw = append(raw, t.entries...)
	raw = binary.AppendUvarint(raw, uint64(len(acol)))
	raw = binary.AppendUvarint(raw, uint64(len(esc)))
	if cols&mstColPC != 0 {
		raw = binary.AppendUvarint(raw, uint64(len(pcol)))
	}
	if cols&mstColThread != 0 {
		raw = binary.AppendUvarint(raw, uint64(len(tcol)))
	}
	if cols&mstColExt != 0 {
		raw = binary.AppendUvarint(raw, uint64(len(w.ecol)))
	}
	raw = append(raw, ops...)
	raw = append(raw, acol...)
	raw = append(raw, esc...)
	raw = append(raw, pcol...)
	raw = append(raw, tcol...)
	raw = append(raw, w.ecol...)
	w.raw = raw

	// Compress into w.block after room for the block header.
	need := mstBlockHeaderLen + max(s2.MaxEncodedLen(len(raw)), len(raw))
	if cap(w.block) < need {
		w.block = make([]byte, need)
	}
	blk := w.block[:mstBlockHeaderLen]
	codec := byte(mstWireNone)
	switch w.codec {
	case MSTCodecS2:
		c := s2.Encode(w.block[mstBlockHeaderLen:need], raw)
		if len(c) < len(raw) {
			blk, codec = w.block[:mstBlockHeaderLen+len(c)], mstWireS2
		}
	case MSTCodecZstd:
		c := w.zenc.EncodeAll(raw, w.block[mstBlockHeaderLen:mstBlockHeaderLen])
		if len(c) < len(raw) {
			if &c[0] != &w.block[mstBlockHeaderLen] { // grew
				w.block = append(w.block[:mstBlockHeaderLen], c...)
			}
			blk, codec = w.block[:mstBlockHeaderLen+len(c)], mstWireZstd
		}
	}
	if codec == mstWireNone {
		blk = append(blk, raw...)
	}
	copy(blk, w.blockHeader(mstTagChunk, codec, cols, uint32(n), w.events, uint32(len(raw)), blk[mstBlockHeaderLen:]))
	w.index = binary.LittleEndian.AppendUint64(w.index, w.off)
	w.index = binary.LittleEndian.AppendUint64(w.index, w.events)
	w.index = binary.LittleEndian.AppendUint32(w.index, uint32(n))
	if err := w.write(blk); err != nil {
		return err
	}
	w.events += uint64(n)
	w.kind, w.addr, w.size, w.pc, w.thr = w.kind[:0], w.addr[:0], w.size[:0], w.pc[:0], w.thr[:0]
	w.ecol, w.prevSP = w.ecol[:0], 0
	return nil
}
