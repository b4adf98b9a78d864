package trace

import (
	"bytes"
	"io"
)

// The output of Intel Pin's pinatrace example tool: one data reference per
// line, the instruction address, a colon, R (read) or W (write) and the
// data address, optionally followed by a thread id:
//
//	0x400810: R 0x602040
//	0x400943: W 0x6021b0; TID: 32746
//
// The instruction address becomes the event's PC and the thread id its
// Thread (0 without one). pinatrace does not record sizes: every event has
// Size 1, so a reference touches the line holding its address only. The
// line "#eof" ends the trace (anything after it is ignored); other lines
// starting with '#' are comments.

func init() {
	Register(Format{
		Name:        "pinatrace",
		Description: "Intel Pin pinatrace: '0xIP: R|W 0xADDR [; TID: n]' (size unknown: 1)",
		Detect: func(head []byte) bool {
			return detectText(head, func(r io.Reader, n int) Reader { return newPinatraceReader(r, Options{SkipBad: true}, n) })
		},
		New: func(r io.Reader, opt Options) Reader { return newPinatraceReader(r, opt, textBufSize) },
	})
}

// pinatraceReader reads the pinatrace format.
type pinatraceReader struct {
	lineScanner
}

func newPinatraceReader(r io.Reader, opt Options, bufSize int) *pinatraceReader {
	t := new(pinatraceReader)
	t.init(r, opt, bufSize)
	return t
}

// Format returns "pinatrace".
func (t *pinatraceReader) Format() string { return "pinatrace" }

var tidTag = []byte("TID:")

// Read fills b with the next events.
func (t *pinatraceReader) Read(b *Batch) error {
	n, err := t.begin(b)
	if err != nil {
		return err
	}
	kinds, addrs, sizes, pcs, threads := b.Kind[:n], b.Addr[:n], b.Size[:n], b.PC[:n], b.Thread[:n]
	i := 0
	for i < n {
		var buf []byte
		buf, err = t.lines()
		if err != nil {
			break
		}
		p, ln := 0, int64(0)
		end := false
		for i < n && p < len(buf) {
			start := p
			ln++
			p = skipBlanks(buf, p)
			c := buf[p]
			if c == '\n' {
				p++
				continue
			}
			if c == '#' {
				if bytes.HasPrefix(buf[p:], []byte("#eof")) && isSep(buf[p+4]) {
					end = true
					break
				}
				p = skipLine(buf, p) // a comment
				continue
			}
			k, pc, a, tid, q, msg := parsePinLine(buf, p)
			p = q
			if msg != "" {
				p, err = t.bad(buf, start, t.line+ln, msg)
				if err != nil {
					break
				}
				continue
			}
			kinds[i] = k
			addrs[i] = a
			sizes[i] = 1
			pcs[i] = pc
			threads[i] = tid
			i++
		}
		t.consume(p, ln)
		if end {
			t.stop()
			err = io.EOF
		}
		if err != nil {
			break
		}
	}
	return t.finish(b, i, err)
}

// parsePinLine parses the reference at buf[p] and returns the index past
// its line, or an error message.
func parsePinLine(buf []byte, p int) (k Kind, pc, a uint64, tid uint32, q int, msg string) {
	pc, p, msg = hexField(buf, p, "instruction address", ':')
	if msg != "" {
		return
	}
	if buf[p] != ':' {
		return k, pc, a, tid, p, "missing ':' after instruction address"
	}
	p = skipBlanks(buf, p+1)
	switch buf[p] {
	case 'R':
		k = Read
	case 'W':
		k = Write
	default:
		return k, pc, a, tid, p, badToken(buf, p, "access type")
	}
	if buf[p+1] == '\n' {
		return k, pc, a, tid, p, "missing address"
	}
	if !isBlank(buf[p+1]) {
		return k, pc, a, tid, p, badToken(buf, p, "access type")
	}
	a, p, msg = hexField(buf, skipBlanks(buf, p+1), "address", ';')
	if msg != "" {
		return
	}
	p = skipBlanks(buf, p)
	if buf[p] == ';' {
		p = skipBlanks(buf, p+1)
		if !bytes.HasPrefix(buf[p:], tidTag) {
			return k, pc, a, tid, p, "expected 'TID:' after ';'"
		}
		p = skipBlanks(buf, p+len(tidTag))
		var st int
		tid, p, st = parseDec32(buf, p)
		switch {
		case st == numRange:
			return k, pc, a, tid, p, "thread id exceeds 32 bits"
		case st != 0 || !isSep(buf[p]):
			return k, pc, a, tid, p, "bad decimal thread id"
		}
	}
	if q = restBlank(buf, p); q < 0 {
		return k, pc, a, tid, p, "unexpected text at end of line"
	}
	return k, pc, a, tid, q, ""
}
