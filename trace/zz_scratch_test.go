package trace

import (
	"bytes"
	"fmt"
	"io"
	"testing"
)

func genDin() []byte {
	var buf bytes.Buffer
	a := uint64(0x77ad0)
	for i := 0; i < 4<<20; i++ {
		if i%12 == 5 {
			fmt.Fprintf(&buf, "0 %x\n", 0x7fff1230+uint64(i%64)*8)
		} else {
			fmt.Fprintf(&buf, "2 %x\n", a)
			a += 4
		}
	}
	return buf.Bytes()
}

func BenchmarkScratchDin(b *testing.B) {
	data := genDin()
	lines := bytes.Count(data, []byte("\n"))
	batch := NewBatch(BatchSize)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r := newDinReader(bytes.NewReader(data), Options{}, textBufSize)
		n := 0
		for {
			err := r.Read(batch)
			n += batch.Len()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		if n != lines {
			b.Fatal(n, lines)
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
