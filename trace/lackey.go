package trace

import "io"

// The output of Valgrind's lackey tool (--trace-mem=yes), also the trace
// format of the CS:APP cache lab: one reference per line, an operation
// letter, blanks, a hex address (no 0x needed), a comma and a decimal size:
//
//	I  0400d7d4,8
//	 L 7ff0005b8,8
//	 S 7ff0005b8,8
//	 M 0421c7f0,4
//
// I is an instruction fetch, L a load, S a store and M a modify (a load
// then a store of the same bytes). Leading and trailing blanks are
// ignored; lines starting with "==" or "--" (Valgrind's messages) are
// skipped. The size must be at least 1 and at most MaxRefSize.

func init() {
	Register(Format{
		Name:        "lackey",
		Description: "Valgrind lackey / CS:APP cache lab: ' L addr,size', ' S', ' M', 'I  addr,size'",
		Detect: func(head []byte) bool {
			return detectText(head, func(r io.Reader, n int) Reader { return newLackeyReader(r, Options{SkipBad: true}, n) })
		},
		New: func(r io.Reader, opt Options) Reader { return newLackeyReader(r, opt, textBufSize) },
	})
}

// lackeyKinds maps a lackey operation letter to its kind plus one (0: not
// an operation).
var lackeyKinds = [256]uint8{
	'I': uint8(IFetch) + 1, 'L': uint8(Read) + 1, 'S': uint8(Write) + 1, 'M': uint8(Modify) + 1,
}

// lackeyReader reads the lackey format.
type lackeyReader struct {
	lineScanner
}

func newLackeyReader(r io.Reader, opt Options, bufSize int) *lackeyReader {
	l := new(lackeyReader)
	l.init(r, opt, bufSize)
	return l
}

// Format returns "lackey".
func (l *lackeyReader) Format() string { return "lackey" }

// Read fills b with the next events.
func (l *lackeyReader) Read(b *Batch) error {
	n, err := l.begin(b)
	if err != nil {
		return err
	}
	kinds, addrs, sizes := b.Kind[:n], b.Addr[:n], b.Size[:n]
	i := 0
	for i < n {
		var buf []byte
		buf, err = l.lines()
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
			if (c == '=' || c == '-') && buf[p+1] == c {
				p = skipLine(buf, p) // a Valgrind message
				continue
			}
			k := lackeyKinds[c]
			msg := ""
			var a uint64
			var size uint32
			switch {
			case k != 0 && buf[p+1] == '\n':
				msg = "missing address"
			case k == 0 || !isBlank(buf[p+1]):
				msg = badToken(buf, p, "operation")
			default:
				p = skipBlanks(buf, p+1)
				a, size, p, msg = addrComma(buf, p)
				if msg == "" {
					if p = restBlank(buf, p); p < 0 {
						msg = "unexpected text after size"
					}
				}
			}
			if msg != "" {
				p, err = l.bad(buf, start, l.line+ln, msg)
				if err != nil {
					break
				}
				continue
			}
			kinds[i] = Kind(k - 1)
			addrs[i] = a
			sizes[i] = size
			i++
		}
		l.consume(p, ln)
		if err != nil {
			break
		}
	}
	clear(b.PC[:i])
	clear(b.Thread[:i])
	return l.finish(b, i, err)
}

// addrComma parses "hexaddr,decsize" at buf[p].
func addrComma(buf []byte, p int) (a uint64, size uint32, q int, msg string) {
	a, q, msg = hexField(buf, p, "address", ',')
	if msg == "" && buf[q] != ',' {
		msg = "missing size"
	}
	if msg != "" {
		return 0, 0, q, msg
	}
	size, q, msg = decSize(buf, q+1)
	return a, size, q, msg
}

// decSize parses a decimal size of 1 to MaxRefSize at buf[p], which must end
// at a blank or the end of the line.
func decSize(buf []byte, p int) (uint32, int, string) {
	if isSep(buf[p]) {
		return 0, p, "missing size"
	}
	v, q, st := parseDec32(buf, p)
	switch {
	case st == numRange:
		return 0, q, "size exceeds 32 bits"
	case st != 0 || !isSep(buf[q]):
		return 0, q, "bad decimal size"
	case v == 0:
		return 0, q, "zero size"
	case v > MaxRefSize:
		return 0, q, sizeTooLarge
	}
	return v, q, ""
}
