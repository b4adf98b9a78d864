package trace

import (
	"strings"
	"testing"
)

func TestDinReader(t *testing.T) {
	txtRun(t, "din", []txtCase{
		{name: "basic", in: "0 1000\n1 2000\n2 77ad0\n", want: []txtEvent{txtR(0x1000, 4), txtW(0x2000, 4), txtI(0x77ad0, 4)}},
		{name: "rounding", in: "0 1003\n1 1001\n2 ffffffffffffffff\n", want: []txtEvent{txtR(0x1000, 4), txtW(0x1000, 4), txtI(0xfffffffffffffffc, 4)}},
		{name: "misc copyback invalidate", in: "3 3e8\n4 0\n5 1234\n", want: []txtEvent{txtX(0x3e8, 4), {Kind: CopyBack, Size: 4}, {Kind: Invalidate, Addr: 0x1234, Size: 4}}},
		{name: "0x prefix and case", in: "0 0x1A2b\n0 0XABC\n", want: []txtEvent{txtR(0x1a28, 4), txtR(0xabc, 4)}},
		{name: "extra columns", in: "2 130 4\ti1\n3 3e8 4\tsyscall 4\n", want: []txtEvent{txtI(0x130, 4), txtX(0x3e8, 4)}},
		{name: "no final newline", in: "0 10\n1 7ffd8c7c", want: []txtEvent{txtR(0x10, 4), txtW(0x7ffd8c7c, 4)}},
		{name: "crlf", in: "0 10\r\n\r\n1 20\r\n", want: []txtEvent{txtR(0x10, 4), txtW(0x20, 4)}},
		{name: "blanks", in: "\n   \n\t2\t\t10  \n  0 20\n\n", want: []txtEvent{txtI(0x10, 4), txtR(0x20, 4)}},
		{name: "leading zeros", in: "0 00000000000000000000001004\n", want: []txtEvent{txtR(0x1004, 4)}},
		{name: "empty", in: ""},
		{name: "only blank lines", in: "\n\n \r\n"},
		{name: "unknown label", in: "0 10\n7 20\n0 30\n", want: []txtEvent{txtR(0x10, 4)}, err: `t.in:2: unknown label "7": "7 20"`},
		{name: "long label", in: "02 20\n", err: `t.in:1: unknown label "02": "02 20"`},
		{name: "letter label", in: "r 20\n", err: `t.in:1: unknown label "r": "r 20"`},
		{name: "missing address", in: "0 10\n\n1\n", want: []txtEvent{txtR(0x10, 4)}, err: `t.in:3: missing address: "1"`},
		{name: "missing address blank", in: "1  \r\n", err: `t.in:1: missing address: "1  "`},
		{name: "bad hex", in: "0 12g4\n", err: `t.in:1: bad hex address: "0 12g4"`},
		{name: "bad hex 0x", in: "0 0x\n", err: `t.in:1: bad hex address: "0 0x"`},
		{name: "bad hex comma", in: "0 10,4\n", err: `t.in:1: bad hex address: "0 10,4"`},
		{name: "overflow", in: "0 10000000000000000\n", err: `t.in:1: address exceeds 64 bits: "0 10000000000000000"`},
		{name: "bad last line", in: "0 10\n0 zz", want: []txtEvent{txtR(0x10, 4)}, err: `t.in:2: bad hex address: "0 zz"`},
		{name: "skip bad", in: "0 10\n7 20\nx\n0 zz\n0 10000000000000000\n1 30\n1\n", skipBad: true, want: []txtEvent{txtR(0x10, 4), txtW(0x30, 4)}, skipped: 5},
	})
}

// TestDinStraddle reads lines that cross buffer refills at every offset.
func TestDinStraddle(t *testing.T) {
	var sb strings.Builder
	var want []txtEvent
	for i := range 200 {
		a := uint64(1) << (i % 40)
		sb.WriteString([]string{"0 ", "1\t", "2  "}[i%3])
		sb.WriteString(strings.Repeat("0", i%7))
		sb.WriteString(strings.ToUpper(strings.TrimPrefix(hexString(a), "0x")))
		sb.WriteString([]string{"\n", "\r\n", " x\n", "\n\n"}[i%4])
		want = append(want, txtEvent{Kind: []Kind{Read, Write, IFetch}[i%3], Addr: a &^ 3, Size: 4})
	}
	txtRun(t, "din", []txtCase{{name: "straddle", in: sb.String(), want: want}})
}

func hexString(a uint64) string {
	const digits = "0123456789abcdef"
	s := ""
	for {
		s = string(digits[a&15]) + s
		a >>= 4
		if a == 0 {
			return "0x" + s
		}
	}
}

func FuzzDin(f *testing.F) {
	f.Add([]byte("0 1000\n1 2000\n2 77ad0\n3 3e8 4\tsyscall\n4 0\n5 0\n"))
	f.Add([]byte("2 130 4\ti1\r\n0 0x10\n7 20\n0 10000000000000000\n1"))
	f.Fuzz(func(t *testing.T, data []byte) { txtFuzz(t, "din", data) })
}

// BenchmarkDinReader measures the din reader on 4M generated lines.
func BenchmarkDinReader(b *testing.B) { txtBench(b, "din", 4<<20) }
