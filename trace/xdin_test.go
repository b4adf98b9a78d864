package trace

import "testing"

func TestXdinReader(t *testing.T) {
	txtRun(t, "xdin", []txtCase{
		{name: "basic", in: "r 1003 8\nw 2001 2\ni 77ad0 4\nm 3e8 1\n", want: []txtEvent{txtR(0x1003, 8), txtW(0x2001, 2), txtI(0x77ad0, 4), txtX(0x3e8, 1)}},
		{name: "upper case and 0x", in: "R 0x10 0x10\nW 0X20 A\n", want: []txtEvent{txtR(0x10, 16), txtW(0x20, 10)}},
		{name: "copyback invalidate", in: "c 1000 40\nv 2000 0\nC 0 0\nV 3000 ffffffff\n", want: []txtEvent{
			{Kind: CopyBack, Addr: 0x1000, Size: 0x40}, {Kind: Invalidate}, {Kind: CopyBack}, {Kind: Invalidate, Addr: 0x3000, Size: 0xffffffff}}},
		{name: "extra columns", in: "r 10 4 main.c:12\n", want: []txtEvent{txtR(0x10, 4)}},
		{name: "no final newline", in: "r 10 4\nw 20 4", want: []txtEvent{txtR(0x10, 4), txtW(0x20, 4)}},
		{name: "crlf and blanks", in: "\r\n  r\t10  4 \r\n\n", want: []txtEvent{txtR(0x10, 4)}},
		{name: "unknown label", in: "r 10 4\nx 20 4\n", want: []txtEvent{txtR(0x10, 4)}, err: `t.in:2: unknown label "x": "x 20 4"`},
		{name: "din label", in: "0 20 4\n", err: `t.in:1: unknown label "0": "0 20 4"`},
		{name: "long label", in: "rw 20 4\n", err: `t.in:1: unknown label "rw": "rw 20 4"`},
		{name: "missing address", in: "r\n", err: `t.in:1: missing address: "r"`},
		{name: "missing size", in: "r 10\n", err: `t.in:1: missing size: "r 10"`},
		{name: "missing size blank", in: "r 10  \r\n", err: `t.in:1: missing size: "r 10  "`},
		{name: "bad address", in: "r 1q 4\n", err: `t.in:1: bad hex address: "r 1q 4"`},
		{name: "bad size", in: "r 10 4q\n", err: `t.in:1: bad hex size: "r 10 4q"`},
		{name: "zero size", in: "w 10 0\n", err: `t.in:1: zero size: "w 10 0"`},
		{name: "largest size", in: "r 10 100000\n", want: []txtEvent{txtR(0x10, 1<<20)}},
		{name: "size too large", in: "r 10 ffffffff\n", err: `t.in:1: size exceeds the largest reference simulated (1 MiB): "r 10 ffffffff"`},
		{name: "size overflow", in: "r 10 100000000\n", err: `t.in:1: size exceeds 32 bits: "r 10 100000000"`},
		{name: "size overflow 64", in: "r 10 100000000000000000\n", err: `t.in:1: size exceeds 32 bits: "r 10 100000000000000000"`},
		{name: "address overflow", in: "r 10000000000000000 4\n", err: `t.in:1: address exceeds 64 bits: "r 10000000000000000 4"`},
		{name: "skip bad", in: "r 10 4\nx\nr 10\nw 10 0\nw 20 4\n", skipBad: true, want: []txtEvent{txtR(0x10, 4), txtW(0x20, 4)}, skipped: 3},
	})
}

func FuzzXdin(f *testing.F) {
	f.Add([]byte("r 1003 8\nw 2001 2\ni 77ad0 4\nm 3e8 1\nc 0 0\nv 1000 40\n"))
	f.Add([]byte("R 0x10 0x10\r\nx 20 4\nr 10\nw 10 0\nr 10 100000000\nr"))
	f.Fuzz(func(t *testing.T, data []byte) { txtFuzz(t, "xdin", data) })
}

// BenchmarkXdinReader measures the xdin reader on 2M generated lines.
func BenchmarkXdinReader(b *testing.B) { txtBench(b, "xdin", 2<<20) }
