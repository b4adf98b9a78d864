package trace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// This file holds the machinery shared by the text readers: a line
// scanner over one large reused buffer, byte classes and number parsers.
//
// The scanner hands out runs of complete lines (every run ends with '\n'),
// so a format's parser can walk a line byte by byte without bounds worries
// beyond the final '\n', which no parser accepts as part of a token. A
// line cut by a buffer refill is moved to the front of the buffer and
// completed by the next read; the last line of the input gets a '\n'
// appended if it lacks one. No memory is allocated per line.

// textBufSize is the default size of a text reader's buffer; it is also
// the longest line a text reader accepts.
const textBufSize = 1 << 20

// detectLines is the number of events a Detect function decodes from the
// head of an input before accepting it.
const detectLines = 16

// errZeroCap is returned by Read when given a batch without room.
var errZeroCap = errors.New("trace: Read called with a zero-capacity batch (use NewBatch)")

// Byte classes.
const (
	clsBlank = 1 << iota // ' ', '\t', '\r', '\v', '\f': separates fields
	clsEnd               // '\n'
)

var (
	// hexVal maps a byte to its hex digit value, or 0xff.
	hexVal [256]uint8
	// byteCls maps a byte to its class bits.
	byteCls [256]uint8
)

func init() {
	for i := range hexVal {
		hexVal[i] = 0xff
	}
	for c := '0'; c <= '9'; c++ {
		hexVal[c] = uint8(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		hexVal[c] = uint8(c - 'a' + 10)
		hexVal[c-'a'+'A'] = uint8(c - 'a' + 10)
	}
	for _, c := range []byte(" \t\r\v\f") {
		byteCls[c] = clsBlank
	}
	byteCls['\n'] = clsEnd
}

// isBlank reports whether c separates fields (any space but '\n').
func isBlank(c byte) bool { return byteCls[c]&clsBlank != 0 }

// isSep reports whether c ends a field: a blank or the end of the line.
func isSep(c byte) bool { return byteCls[c] != 0 }

// lineScanner buffers a text input and hands out runs of complete lines.
// Text readers embed it; it implements Skipper for them.
type lineScanner struct {
	rd      io.Reader
	name    string
	skipBad bool
	buf     []byte // len(buf) == size+1: room for a final '\n'
	size    int    // usable bytes of buf; also the maximum line length
	pos     int    // first byte not yet parsed
	lim     int    // end of the complete lines in buf[pos:]
	end     int    // end of the buffered data
	line    int64  // lines consumed so far
	skipped int64  // malformed lines skipped (SkipBad)
	rerr    error  // error from rd, io.EOF at the end of the input
	err     error  // sticky error returned by Read
	discard bool   // dropping the rest of an over-long line (SkipBad)
	stopped bool   // the format saw its end-of-trace marker
}

func (s *lineScanner) init(r io.Reader, opt Options, bufSize int) {
	if bufSize < 1 {
		bufSize = textBufSize
	}
	s.rd = r
	s.name = opt.Name
	if s.name == "" {
		s.name = "input"
	}
	s.skipBad = opt.SkipBad
	s.size = bufSize
	s.buf = make([]byte, bufSize+1)
}

// Skipped returns how many malformed lines were skipped (Options.SkipBad).
func (s *lineScanner) Skipped() int64 { return s.skipped }

// begin starts a Read: it empties b and returns how many events fit.
func (s *lineScanner) begin(b *Batch) (int, error) {
	b.Reset()
	if s.err != nil {
		return 0, s.err
	}
	n := min(cap(b.Kind), cap(b.Addr), cap(b.Size), cap(b.PC), cap(b.Thread))
	if n == 0 {
		return 0, errZeroCap
	}
	return n, nil
}

// finish ends a Read that stored n events in b (up to capacity) and
// stopped because of err (nil if b is full). It sets the batch lengths
// and turns err into Read's result.
func (s *lineScanner) finish(b *Batch, n int, err error) error {
	b.Kind = b.Kind[:n]
	b.Addr = b.Addr[:n]
	b.Size = b.Size[:n]
	b.PC = b.PC[:n]
	b.Thread = b.Thread[:n]
	if err == nil {
		return nil
	}
	if err == io.EOF && n > 0 {
		return nil // report the end on the next call, with an empty batch
	}
	s.err = err
	return err
}

// lines returns the buffered complete lines, reading more input if none
// is left. Every run it returns ends with '\n'. At the end of the input it
// returns io.EOF; a failure of the underlying reader is returned wrapped.
// The caller must call consume with the number of bytes parsed.
func (s *lineScanner) lines() ([]byte, error) {
	if s.pos < s.lim {
		return s.buf[s.pos:s.lim], nil
	}
	if err := s.fill(); err != nil {
		return nil, err
	}
	return s.buf[s.pos:s.lim], nil
}

// consume marks n bytes of the run returned by lines as parsed,
// holding lines complete lines.
func (s *lineScanner) consume(n int, lines int64) {
	s.pos += n
	s.line += lines
}

// stop ends the input: the format found its end-of-trace marker.
func (s *lineScanner) stop() {
	s.stopped = true
	s.pos, s.lim, s.end = 0, 0, 0
}

// fill reads until buf holds at least one complete line after pos.
func (s *lineScanner) fill() error {
	if s.stopped {
		return io.EOF
	}
	// Keep the partial last line: move it to the front.
	if s.pos > 0 {
		s.end = copy(s.buf, s.buf[s.pos:s.end])
		s.pos, s.lim = 0, 0
	}
	empty := 0
	for {
		if s.rerr != nil {
			if s.rerr == io.EOF {
				if s.end > 0 && !s.discard {
					// The last line lacks its '\n'.
					s.buf[s.end] = '\n'
					s.end++
					s.lim = s.end
					return nil
				}
				s.end = 0
				return io.EOF
			}
			// A partial line before a read error is not trusted.
			s.end = 0
			return fmt.Errorf("reading %s: %w", s.name, s.rerr)
		}
		if s.end == s.size {
			// The buffer holds one line without its end.
			s.line++
			if !s.skipBad {
				return s.blame(s.syntax(s.line, s.buf[:min(s.end, 80)], "line too long"))
			}
			s.skipped++
			s.discard = true
			s.end = 0
		}
		n, err := s.rd.Read(s.buf[s.end:s.size])
		if n < 0 || n > s.size-s.end {
			n, err = 0, errors.New("invalid Read result")
		}
		if err != nil {
			s.rerr = err
		}
		if n == 0 {
			if err == nil {
				if empty++; empty >= 100 {
					s.rerr = io.ErrNoProgress
				}
			}
			continue
		}
		empty = 0
		// A '\r' that ended the data before is judged now that the byte
		// after it is known.
		from := s.end
		if from > 0 && s.buf[from-1] == '\r' {
			from--
		}
		crLineEnds(s.buf[from : s.end+n])
		data := s.buf[from : s.end+n]
		if s.discard {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				// Drop the data, but keep a final '\r', which may end the line.
				s.end = 0
				if data[len(data)-1] == '\r' {
					s.buf[0] = '\r'
					s.end = 1
				}
				continue
			}
			s.discard = false
			n = copy(s.buf, data[i+1:])
			data = s.buf[:n]
			s.end = n
		} else {
			s.end += n
		}
		if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
			s.lim = s.end - len(data) + i + 1
			return nil
		}
	}
}

// crLineEnds turns every '\r' of b not followed by '\n' into '\n', so
// that old Mac line ends (a lone '\r') end lines; a '\r' before '\n' stays
// a blank. A '\r' at the end of b is left for the caller to look at again
// once the next byte is known (at the end of the input, the '\n' appended
// to the last line follows it).
func crLineEnds(b []byte) {
	for i := bytes.IndexByte(b, '\r'); i >= 0 && i+1 < len(b); {
		if b[i+1] != '\n' {
			b[i] = '\n'
		}
		j := bytes.IndexByte(b[i+1:], '\r')
		if j < 0 {
			return
		}
		i += 1 + j
	}
}

// syntax returns a SyntaxError for line number ln with text line
// (without its end), trimmed to 80 bytes.
func (s *lineScanner) syntax(ln int64, line []byte, msg string) error {
	line = bytes.TrimRight(line, "\r\n")
	if len(line) > 80 {
		line = line[:80]
	}
	return &SyntaxError{File: s.name, Line: ln, Text: string(line), Msg: msg}
}

// bad reports the malformed line starting at buf[start] (number ln): it
// returns nil and counts the line if the reader skips bad lines, a
// SyntaxError otherwise. It also returns the index just past the line.
func (s *lineScanner) bad(buf []byte, start int, ln int64, msg string) (int, error) {
	end := start + bytes.IndexByte(buf[start:], '\n')
	if s.skipBad {
		s.skipped++
		return end + 1, nil
	}
	return end + 1, s.blame(s.syntax(ln, buf[start:end], msg))
}

// blame returns err, the error of a malformed line, unless the input is
// compressed and its decompressor fails further on: corrupt compressed
// data can decompress to garbage before its checksum fails, and then the
// decompressor's error is the one to report.
func (s *lineScanner) blame(err error) error {
	if c, ok := s.rd.(corruptionChecker); ok {
		if cerr := c.corruption(); cerr != nil {
			return fmt.Errorf("reading %s: %w", s.name, cerr)
		}
	}
	return err
}

// Number parsing. Every parser takes the buffer and the index of the first
// byte and returns the value and the index of the first byte not taken.
// Buffers always end with '\n', which no parser accepts, so the loops need
// no length checks beyond the slice's own.

// parseHex parses hex digits (after an optional 0x or 0X) at buf[p]. The
// result's status is 0 on success, numSyntax if there is no digit and
// numRange if the value exceeds 64 bits.
func parseHex(buf []byte, p int) (v uint64, q int, status int) {
	p = skip0x(buf, p)
	v, q = hexDigits(buf, p)
	if q-p > 16 || q == p {
		return v, q, hexStatus(buf[p:q])
	}
	return v, q, 0
}

// skip0x returns the index after a 0x or 0X prefix at buf[p] that is
// followed by a hex digit, or p.
func skip0x(buf []byte, p int) int {
	if buf[p] == '0' && buf[p+1]|0x20 == 'x' && hexVal[buf[p+2]] < 16 {
		p += 2
	}
	return p
}

// hexDigits parses the hex digits at buf[p], keeping the low 64 bits, and
// returns the index after them. The caller checks how many there were.
func hexDigits(buf []byte, p int) (uint64, int) {
	var v uint64
	for {
		d := hexVal[buf[p]]
		if d > 15 {
			return v, p
		}
		v = v<<4 | uint64(d)
		p++
	}
}

// hexStatus checks a run of hex digits that is empty or longer than 16:
// only leading zeros keep it within 64 bits.
func hexStatus(digits []byte) int {
	if len(digits) == 0 {
		return numSyntax
	}
	for _, c := range digits[:max(len(digits)-16, 0)] {
		if c != '0' {
			return numRange
		}
	}
	return 0
}

// Parser status values.
const (
	numSyntax = 1
	numRange  = 2
)

// field parses a hex number at buf[p] that must be followed by a blank or
// the end of the line; what names it in error messages.
func field(buf []byte, p int, what string) (uint64, int, string) {
	return hexField(buf, p, what, '\n')
}

// hexField parses a hex number at buf[p] that must be followed by a
// blank, the end of the line or the byte stop; what names it in error
// messages. It returns the number, the index after it and an error
// message ("" if none).
func hexField(buf []byte, p int, what string, stop byte) (uint64, int, string) {
	d := skip0x(buf, p)
	v, q := hexDigits(buf, d)
	if q == d || q-d > 16 || !isSep(buf[q]) && buf[q] != stop {
		return hexFieldSlow(buf, p, what, stop)
	}
	return v, q, ""
}

// hexFieldSlow is hexField for the rare cases: errors and more than 16
// digits.
func hexFieldSlow(buf []byte, p int, what string, stop byte) (uint64, int, string) {
	if buf[p] == '\n' {
		return 0, p, "missing " + what
	}
	v, q, st := parseHex(buf, p)
	switch {
	case st == numRange:
		return 0, q, what + " exceeds 64 bits"
	case st != 0 || !isSep(buf[q]) && buf[q] != stop:
		return 0, q, "bad hex " + what
	}
	return v, q, ""
}

// parseDec32 parses a decimal number at buf[p] that must fit 32 bits.
func parseDec32(buf []byte, p int) (v uint32, q int, status int) {
	var x uint64
	q = p
	for {
		d := buf[q] - '0'
		if d > 9 {
			break
		}
		x = x*10 + uint64(d)
		if x > 1<<32-1 {
			for buf[q]-'0' <= 9 {
				q++
			}
			return 0, q, numRange
		}
		q++
	}
	if q == p {
		return 0, q, numSyntax
	}
	return uint32(x), q, 0
}

// skipBlanks returns the index of the first non-blank byte at or after p.
func skipBlanks(buf []byte, p int) int {
	for isBlank(buf[p]) {
		p++
	}
	return p
}

// restBlank returns the index just past the line end if only blanks are
// left on the line starting at buf[p], or -1.
func restBlank(buf []byte, p int) int {
	for isBlank(buf[p]) {
		p++
	}
	if buf[p] != '\n' {
		return -1
	}
	return p + 1
}

// skipLine returns the index just past the end of the line holding buf[p].
func skipLine(buf []byte, p int) int {
	for buf[p] != '\n' {
		p++
	}
	return p + 1
}

// detectText reports whether head, the start of an input, parses as the
// format read by r (a reader built over the head, skipping bad lines): at
// least one event among the first detectLines events, and at most one
// malformed line for every four good ones, so that a stray bad line near
// the top still reaches the reader and gets its precise error. Only
// complete lines of head are used, unless it holds none.
func detectText(head []byte, newReader func(r io.Reader, bufSize int) Reader) bool {
	if i := bytes.LastIndexByte(head, '\n'); i >= 0 {
		head = head[:i+1]
	}
	if len(head) == 0 {
		return false
	}
	r := newReader(bytes.NewReader(head), len(head)+1)
	b := NewBatch(detectLines)
	err := r.Read(b)
	bad := r.(Skipper).Skipped()
	return b.Len() > 0 && bad*4 <= int64(b.Len()) && (err == nil || err == io.EOF)
}
