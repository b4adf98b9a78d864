package trace

import "io"

// The classic Dinero "din" format: one reference per line, a decimal label
// and a hex address separated by blanks:
//
//	2 77ad0
//	0 7fff1230
//
// Labels: 0 read, 1 write, 2 instruction fetch, 3 misc (Misc: a read that
// caches count apart, as Dinero IV does), 4 copy-back
// (Dinero IV's D4XCOPYB), 5 invalidation (D4XINVAL). Further columns are
// ignored. As in Dinero IV, addresses are rounded down to a multiple of 4
// and every record has size 4, labels 4 and 5 too: they act on the line
// holding the address in each cache.

func init() {
	Register(Format{
		Name:        "din",
		Description: "Dinero din text: 'label hexaddr' (0 read, 1 write, 2 ifetch, 3 misc, 4 copy-back, 5 invalidate)",
		Detect: func(head []byte) bool {
			return detectText(head, func(r io.Reader, n int) Reader { return newDinReader(r, Options{SkipBad: true}, n) })
		},
		New: func(r io.Reader, opt Options) Reader { return newDinReader(r, opt, textBufSize) },
	})
}

// dinKinds maps a din label to its kind.
var dinKinds = [6]Kind{Read, Write, IFetch, Misc, CopyBack, Invalidate}

// dinReader reads the din format.
type dinReader struct {
	lineScanner
}

func newDinReader(r io.Reader, opt Options, bufSize int) *dinReader {
	d := new(dinReader)
	d.init(r, opt, bufSize)
	return d
}

// Format returns "din".
func (d *dinReader) Format() string { return "din" }

// Read fills b with the next events.
func (d *dinReader) Read(b *Batch) error {
	n, err := d.begin(b)
	if err != nil {
		return err
	}
	kinds, addrs, sizes := b.Kind[:n], b.Addr[:n], b.Size[:n]
	i := 0
	for i < n {
		var buf []byte
		buf, err = d.lines()
		if err != nil {
			break
		}
		p, ln := 0, int64(0)
		for i < n && p < len(buf) {
			start := p
			ln++
			c := buf[p]
			if isBlank(c) {
				p = skipBlanks(buf, p)
				c = buf[p]
			}
			label := c - '0'
			if label > 5 || !isBlank(buf[p+1]) {
				if c == '\n' {
					p++ // blank line
					continue
				}
				p, err = d.badLabel(buf, start, p, d.line+ln)
				if err != nil {
					break
				}
				continue
			}
			p = skipBlanks(buf, p+2)
			p = skip0x(buf, p)
			a, q := hexDigits(buf, p)
			if q == p || q-p > 16 && hexStatus(buf[p:q]) != 0 || !isSep(buf[q]) {
				p, err = d.bad(buf, start, d.line+ln, addrMsg(buf, p, q))
				if err != nil {
					break
				}
				continue
			}
			p = q
			if buf[p] == '\n' {
				p++
			} else {
				p = skipLine(buf, p) // extra columns
			}
			kinds[i] = dinKinds[label]
			addrs[i] = a &^ 3
			sizes[i] = 4
			i++
		}
		d.consume(p, ln)
		if err != nil {
			break
		}
	}
	clear(b.PC[:i])
	clear(b.Thread[:i])
	return d.finish(b, i, err)
}

// addrMsg says what is wrong with the address whose digits are buf[p:q].
func addrMsg(buf []byte, p, q int) string {
	switch {
	case buf[p] == '\n':
		return "missing address"
	case hexStatus(buf[p:q]) == numRange:
		return "address exceeds 64 bits"
	}
	return "bad hex address"
}

// badLabel reports a line whose label (at buf[p]) is not 0-5 or lacks
// its address.
func (d *dinReader) badLabel(buf []byte, start, p int, ln int64) (int, error) {
	msg := "missing address"
	if buf[p]-'0' > 5 || buf[p+1] != '\n' {
		msg = badToken(buf, p, "label")
	}
	return d.bad(buf, start, ln, msg)
}
