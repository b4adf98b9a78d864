package trace

import "testing"

func TestPinatraceReader(t *testing.T) {
	pin := func(k Kind, pc, a uint64, tid uint32) txtEvent {
		return txtEvent{Kind: k, Addr: a, Size: 1, PC: pc, Thread: tid}
	}
	txtRun(t, "pinatrace", []txtCase{
		{name: "plain", in: "0x400810: R 0x602040\n0x400943: W 0x6021b0\n#eof\n", want: []txtEvent{pin(Read, 0x400810, 0x602040, 0), pin(Write, 0x400943, 0x6021b0, 0)}},
		{name: "tid", in: "0x400810: R 0x602040; TID: 32746\n0x400943: W 0x6021b0 ; TID:7 \n", want: []txtEvent{pin(Read, 0x400810, 0x602040, 32746), pin(Write, 0x400943, 0x6021b0, 7)}},
		{name: "eof ends", in: "0x1: R 0x10\n#eof\n0x2: W 0x20\ngarbage\n", want: []txtEvent{pin(Read, 1, 0x10, 0)}},
		{name: "eof without newline", in: "0x1: R 0x10\n#eof", want: []txtEvent{pin(Read, 1, 0x10, 0)}},
		{name: "comments", in: "# pinatrace\n#eofx\n0x1: R 0x10\n", want: []txtEvent{pin(Read, 1, 0x10, 0)}},
		{name: "no 0x, crlf, no final newline", in: "1: R 10\r\n\r\n2: W 20", want: []txtEvent{pin(Read, 1, 0x10, 0), pin(Write, 2, 0x20, 0)}},
		{name: "large", in: "0x7fffffffffffffff: W 0xffffffffffffffff; TID: 4294967295\n", want: []txtEvent{pin(Write, 1<<63-1, 1<<64-1, 1<<32-1)}},
		{name: "missing colon", in: "0x1 R 0x10\n", err: `t.in:1: missing ':' after instruction address: "0x1 R 0x10"`},
		{name: "bad ip", in: "0xq: R 0x10\n", err: `t.in:1: bad hex instruction address: "0xq: R 0x10"`},
		{name: "bad access type", in: "0x1: X 0x10\n", err: `t.in:1: unknown access type "X": "0x1: X 0x10"`},
		{name: "long access type", in: "0x1: RW 0x10\n", err: `t.in:1: unknown access type "RW": "0x1: RW 0x10"`},
		{name: "missing access type", in: "0x1:\n", err: `t.in:1: missing access type: "0x1:"`},
		{name: "missing address", in: "0x1: R\n", err: `t.in:1: missing address: "0x1: R"`},
		{name: "missing address blank", in: "0x1: R \n", err: `t.in:1: missing address: "0x1: R "`},
		{name: "bad address", in: "0x1: R 0x1g\n", err: `t.in:1: bad hex address: "0x1: R 0x1g"`},
		{name: "address overflow", in: "0x1: R 0x10000000000000000\n", err: `t.in:1: address exceeds 64 bits: "0x1: R 0x10000000000000000"`},
		{name: "bad tid tag", in: "0x1: R 0x10; PID: 3\n", err: `t.in:1: expected 'TID:' after ';': "0x1: R 0x10; PID: 3"`},
		{name: "bad tid", in: "0x1: R 0x10; TID: x\n", err: `t.in:1: bad decimal thread id: "0x1: R 0x10; TID: x"`},
		{name: "tid overflow", in: "0x1: R 0x10; TID: 4294967296\n", err: `t.in:1: thread id exceeds 32 bits: "0x1: R 0x10; TID: 4294967296"`},
		{name: "trailing text", in: "0x1: R 0x10 x\n", err: `t.in:1: unexpected text at end of line: "0x1: R 0x10 x"`},
		{name: "skip bad", in: "0x1: R 0x10\nbad\n0x2: W 0x20; TID: 1\n0x3: X 0x30\n#eof\nbad\n", skipBad: true, want: []txtEvent{pin(Read, 1, 0x10, 0), pin(Write, 2, 0x20, 1)}, skipped: 2},
	})
}

func FuzzPinatrace(f *testing.F) {
	f.Add([]byte("0x400810: R 0x602040; TID: 32746\n0x400943: W 0x6021b0\n# c\n#eof\n"))
	f.Add([]byte("1: R 10\r\n0x1 R 0x10\n0x1: R 0x10; PID: 3\n0x1: R 0x10; TID: 4294967296\n#eof"))
	f.Fuzz(func(t *testing.T, data []byte) { txtFuzz(t, "pinatrace", data) })
}

// BenchmarkPinatraceReader measures the pinatrace reader on 2M generated
// lines.
func BenchmarkPinatraceReader(b *testing.B) { txtBench(b, "pinatrace", 2<<20) }
