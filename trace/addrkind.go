package trace

import "io"

// The "addrkind" format: one reference per line, a hex address (0x
// optional) and a letter, I for an instruction fetch or D for a data
// reference (read; the format does not tell reads from writes):
//
//	0x77ad0 I
//	0x7fff1230 D
//
// Every reference has size 4; the address is taken as given. The letter
// may be lower case; further columns are ignored.

func init() {
	Register(Format{
		Name:        "addrkind",
		Description: "one reference per line: '0xADDR I|D' (ifetch or data read)",
		Detect: func(head []byte) bool {
			return detectText(head, func(r io.Reader, n int) Reader { return newAddrKindReader(r, Options{SkipBad: true}, n) })
		},
		New: func(r io.Reader, opt Options) Reader { return newAddrKindReader(r, opt, textBufSize) },
	})
}

// addrKindReader reads the addrkind format.
type addrKindReader struct {
	lineScanner
}

func newAddrKindReader(r io.Reader, opt Options, bufSize int) *addrKindReader {
	x := new(addrKindReader)
	x.init(r, opt, bufSize)
	return x
}

// Format returns "addrkind".
func (x *addrKindReader) Format() string { return "addrkind" }

// Read fills b with the next events.
func (x *addrKindReader) Read(b *Batch) error {
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
			if isBlank(buf[p]) {
				p = skipBlanks(buf, p)
			}
			if buf[p] == '\n' {
				p++
				continue
			}
			p = skip0x(buf, p)
			a, q := hexDigits(buf, p)
			var k Kind
			msg := ""
			if q == p || q-p > 16 && hexStatus(buf[p:q]) != 0 || !isBlank(buf[q]) {
				msg = addrMsg(buf, p, q)
				if buf[q] == '\n' && msg == "bad hex address" {
					msg = "missing kind"
				}
			} else {
				q = skipBlanks(buf, q)
				switch c := buf[q] | 0x20; {
				case buf[q] == '\n':
					msg = "missing kind"
				case c == 'i' && isSep(buf[q+1]):
					k = IFetch
				case c == 'd' && isSep(buf[q+1]):
					k = Read
				default:
					msg = badToken(buf, q, "kind")
				}
			}
			if msg != "" {
				p, err = x.bad(buf, start, x.line+ln, msg)
				if err != nil {
					break
				}
				continue
			}
			p = q + 1
			if buf[p] == '\n' {
				p++
			} else {
				p = skipLine(buf, p)
			}
			kinds[i] = k
			addrs[i] = a
			sizes[i] = 4
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
