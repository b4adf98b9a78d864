package trace

import "testing"

func TestAddrKindReader(t *testing.T) {
	txtRun(t, "addrkind", []txtCase{
		{name: "basic", in: "0x77ad0 I\n0x77ad4 I\n0x7fff1233 D\n", want: []txtEvent{txtI(0x77ad0, 4), txtI(0x77ad4, 4), txtR(0x7fff1233, 4)}},
		{name: "lower case, no 0x", in: "77ad0 i\n7fff1230\td\n", want: []txtEvent{txtI(0x77ad0, 4), txtR(0x7fff1230, 4)}},
		{name: "extra columns", in: "0x10 I 4 x\n", want: []txtEvent{txtI(0x10, 4)}},
		{name: "no final newline", in: "0x10 I\n0x20 D", want: []txtEvent{txtI(0x10, 4), txtR(0x20, 4)}},
		{name: "crlf and blanks", in: "\r\n 0x10 I \r\n\n", want: []txtEvent{txtI(0x10, 4)}},
		{name: "leading zeros", in: "0x00000000000000000010 D\n", want: []txtEvent{txtR(0x10, 4)}},
		{name: "bad kind", in: "0x10 I\n0x20 W\n", want: []txtEvent{txtI(0x10, 4)}, err: `t.in:2: unknown kind "W": "0x20 W"`},
		{name: "long kind", in: "0x20 DI\n", err: `t.in:1: unknown kind "DI": "0x20 DI"`},
		{name: "missing kind", in: "0x20\n", err: `t.in:1: missing kind: "0x20"`},
		{name: "missing kind blank", in: "0x20  \r\n", err: `t.in:1: missing kind: "0x20  "`},
		{name: "bad address", in: "0x2z I\n", err: `t.in:1: bad hex address: "0x2z I"`},
		{name: "din line", in: "2 77ad0\n", err: `t.in:1: unknown kind "77ad0": "2 77ad0"`},
		{name: "address overflow", in: "0x10000000000000000 I\n", err: `t.in:1: address exceeds 64 bits: "0x10000000000000000 I"`},
		{name: "skip bad", in: "0x10 I\nxx\n0x20 W\n0x30 D\n", skipBad: true, want: []txtEvent{txtI(0x10, 4), txtR(0x30, 4)}, skipped: 2},
	})
}

func FuzzAddrKind(f *testing.F) {
	f.Add([]byte("0x77ad0 I\n0x77ad4 I\n0x7fff1233 D\n77ad0 i\n"))
	f.Add([]byte("0x20 W\n0x20\n0x2z I\r\n0x10000000000000000 I\n0x1 D"))
	f.Fuzz(func(t *testing.T, data []byte) { txtFuzz(t, "addrkind", data) })
}

// BenchmarkAddrKindReader measures the addrkind reader on 4M generated
// lines.
func BenchmarkAddrKindReader(b *testing.B) { txtBench(b, "addrkind", 4<<20) }
