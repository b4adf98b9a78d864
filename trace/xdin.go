package trace

import (
	"io"
	"strconv"
)

// Dinero IV's extended din format ("xdin"): one reference per line, a
// one-letter label, a hex address and a hex size separated by blanks:
//
//	r 7fff1230 8
//	i 400a10 4
//
// Labels (either case): r read, w write, i instruction fetch, m misc
// (Misc: a read that caches count apart), c copy-back, v invalidate. Addresses and sizes are taken as
// given (optionally with 0x), without rounding. For c and v a size of 0
// means every line of the hierarchy (the event then has Addr 0), any other
// size the line holding the address in each cache, as in Dinero IV; other
// labels need a size of at least 1 and at most MaxRefSize. Further
// columns are ignored.

func init() {
	Register(Format{
		Name:        "xdin",
		Description: "Dinero IV extended din: 'r|w|i|m|c|v hexaddr hexsize'",
		Detect: func(head []byte) bool {
			return detectText(head, func(r io.Reader, n int) Reader { return newXdinReader(r, Options{SkipBad: true}, n) })
		},
		New: func(r io.Reader, opt Options) Reader { return newXdinReader(r, opt, textBufSize) },
	})
}

// xdinKinds maps a lower-case xdin label to its kind plus one (0: not a
// label).
var xdinKinds = [256]uint8{
	'r': uint8(Read) + 1, 'w': uint8(Write) + 1, 'i': uint8(IFetch) + 1,
	'm': uint8(Misc) + 1, 'c': uint8(CopyBack) + 1, 'v': uint8(Invalidate) + 1,
}

// xdinReader reads the xdin format.
type xdinReader struct {
	lineScanner
}

func newXdinReader(r io.Reader, opt Options, bufSize int) *xdinReader {
	x := new(xdinReader)
	x.init(r, opt, bufSize)
	return x
}

// Format returns "xdin".
func (x *xdinReader) Format() string { return "xdin" }

// Read fills b with the next events.
func (x *xdinReader) Read(b *Batch) error {
	n, err := x.begin(b)
	if err != nil {
		return err
	}
	kinds, addrs, sizes := b.Kind[:n], b.Addr[:n], b.Size[:n]
	i := 0
	for i < n {
		var buf []byte
		buf, err = x.lines()
		if err != nil {
			break
		}
		p, ln := 0, int64(0)
		for i < n && p < len(buf) {
			start := p
			ln++
			p = skipBlanks(buf, p)
			c := buf[p]
			if c == '\n' {
				p++
				continue
			}
			k := xdinKinds[c|0x20]
			msg := ""
			var a uint64
			var size uint32
			switch {
			case k != 0 && buf[p+1] == '\n':
				msg = "missing address"
			case k == 0 || !isBlank(buf[p+1]):
				msg = badToken(buf, p, "label")
			default:
				p = skipBlanks(buf, p+1)
				a, p, msg = field(buf, p, "address")
				if msg == "" {
					p = skipBlanks(buf, p)
					size, p, msg = hexSize(buf, p)
				}
				if msg == "" && Kind(k-1).IsAccess() {
					switch {
					case size == 0:
						msg = "zero size"
					case size > MaxRefSize:
						msg = sizeTooLarge
					}
				}
			}
			if msg != "" {
				p, err = x.bad(buf, start, x.line+ln, msg)
				if err != nil {
					break
				}
				continue
			}
			p = skipLine(buf, p)
			if size == 0 {
				a = 0
			}
			kinds[i] = Kind(k - 1)
			addrs[i] = a
			sizes[i] = size
			i++
		}
		x.consume(p, ln)
		if err != nil {
			break
		}
	}
	clear(b.PC[:i])
	clear(b.Thread[:i])
	return x.finish(b, i, err)
}

// hexSize parses a hex size at buf[p] that must fit 32 bits and be
// followed by a blank or the end of the line.
func hexSize(buf []byte, p int) (uint32, int, string) {
	v, q, msg := field(buf, p, "size")
	if msg == "size exceeds 64 bits" || msg == "" && v > 1<<32-1 {
		msg = "size exceeds 32 bits"
	}
	return uint32(v), q, msg
}

// badToken describes an unknown label: the field at buf[p] (up to 20
// bytes, quoted) or "missing <what>".
func badToken(buf []byte, p int, what string) string {
	q := p
	for !isSep(buf[q]) {
		q++
	}
	if q == p {
		return "missing " + what
	}
	return "unknown " + what + " " + strconv.Quote(string(buf[p:min(q, p+20)]))
}
