package trace

import "testing"

func TestLackeyReader(t *testing.T) {
	txtRun(t, "lackey", []txtCase{
		{name: "cachelab", in: " L 10,1\n M 20,1\n S 18,8\nI  0400d7d4,3\n", want: []txtEvent{txtR(0x10, 1), txtM(0x20, 1), txtW(0x18, 8), txtI(0x400d7d4, 3)}},
		{name: "valgrind messages", in: "==1234== Lackey, an example Valgrind tool\n==1234== \n--1234-- warning\nI  04016b0,3\n S 7ff000398,8\n==1234== Counted 1 call\n", want: []txtEvent{txtI(0x4016b0, 3), txtW(0x7ff000398, 8)}},
		{name: "trailing spaces", in: " L 10,4 \n S 18,4\t\n", want: []txtEvent{txtR(0x10, 4), txtW(0x18, 4)}},
		{name: "no final newline", in: " L 10,4\n S 18,4", want: []txtEvent{txtR(0x10, 4), txtW(0x18, 4)}},
		{name: "crlf", in: " L 10,4\r\n\r\n S 18,4\r\n", want: []txtEvent{txtR(0x10, 4), txtW(0x18, 4)}},
		{name: "0x prefix", in: "L 0x10,4\n", want: []txtEvent{txtR(0x10, 4)}},
		{name: "large", in: " L ffffffffffffffff,1048576\n", want: []txtEvent{txtR(1<<64-1, 1<<20)}},
		{name: "unknown operation", in: " L 10,4\n X 10,4\n", want: []txtEvent{txtR(0x10, 4)}, err: `t.in:2: unknown operation "X": " X 10,4"`},
		{name: "lower case", in: " l 10,4\n", err: `t.in:1: unknown operation "l": " l 10,4"`},
		{name: "missing address", in: " L\n", err: `t.in:1: missing address: " L"`},
		{name: "missing address blank", in: " L  \n", err: `t.in:1: missing address: " L  "`},
		{name: "missing size", in: " L 10\n", err: `t.in:1: missing size: " L 10"`},
		{name: "missing size comma", in: " L 10,\n", err: `t.in:1: missing size: " L 10,"`},
		{name: "space before comma", in: " L 10 ,4\n", err: `t.in:1: missing size: " L 10 ,4"`},
		{name: "bad address", in: " L 1x0,4\n", err: `t.in:1: bad hex address: " L 1x0,4"`},
		{name: "bad size", in: " L 10,4a\n", err: `t.in:1: bad decimal size: " L 10,4a"`},
		{name: "hex size", in: " L 10,0x4\n", err: `t.in:1: bad decimal size: " L 10,0x4"`},
		{name: "zero size", in: " S 10,0\n", err: `t.in:1: zero size: " S 10,0"`},
		{name: "size too large", in: " L 10,1048577\n", err: `t.in:1: size exceeds the largest reference simulated (1 MiB): " L 10,1048577"`},
		{name: "size overflow", in: " S 10,4294967296\n", err: `t.in:1: size exceeds 32 bits: " S 10,4294967296"`},
		{name: "address overflow", in: " S 10000000000000000,4\n", err: `t.in:1: address exceeds 64 bits: " S 10000000000000000,4"`},
		{name: "trailing text", in: " S 10,4 x\n", err: `t.in:1: unexpected text after size: " S 10,4 x"`},
		{name: "single equals", in: "=1\n", err: `t.in:1: unknown operation "=1": "=1"`},
		{name: "skip bad", in: " L 10,4\n X 1,1\n S 10,0\n S 20,4 \n", skipBad: true, want: []txtEvent{txtR(0x10, 4), txtW(0x20, 4)}, skipped: 2},
	})
}

func FuzzLackey(f *testing.F) {
	f.Add([]byte("==1== x\nI  04016b0,3\n S 7ff000398,8\n L 10,1 \n M 20,1\n--1-- y\n"))
	f.Add([]byte(" L 10\n S 10,0\n X 1,1\r\n S 10,4294967296\n L 1"))
	f.Fuzz(func(t *testing.T, data []byte) { txtFuzz(t, "lackey", data) })
}

// BenchmarkLackeyReader measures the lackey reader on 2M generated lines.
func BenchmarkLackeyReader(b *testing.B) { txtBench(b, "lackey", 2<<20) }
