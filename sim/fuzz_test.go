package sim_test

import (
	"encoding/binary"
	"testing"

	"github.com/memspy/memspy/sim"
)

// byteChooser makes the choices of genMachine and genTrace from fuzz
// input; once the bytes run out every choice is 0.
type byteChooser struct{ b []byte }

func (c *byteChooser) take(n int) uint64 {
	var buf [8]byte
	k := copy(buf[:n], c.b)
	c.b = c.b[k:]
	return binary.LittleEndian.Uint64(buf[:])
}

func (c *byteChooser) intn(n int) int {
	switch {
	case n <= 1:
		return 0
	case n <= 1<<8:
		return int(c.take(1) % uint64(n))
	case n <= 1<<16:
		return int(c.take(2) % uint64(n))
	default:
		return int(c.take(4) % uint64(n))
	}
}

func (c *byteChooser) u64() uint64 { return c.take(8) }

// FuzzHierarchy derives a small machine and trace from the input and
// compares the engine with the reference model.
//
//	go test ./sim/ -run '^$' -fuzz FuzzHierarchy -fuzztime 60s
func FuzzHierarchy(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	f.Fuzz(func(t *testing.T, data []byte) {
		ch := &byteChooser{data}
		flags := ch.intn(16)
		parallel := flags&4 != 0
		opt := sim.Options{Classify: flags&1 != 0 && !parallel, CacheLab: flags&2 != 0 && !parallel, Attribute: flags&8 != 0}
		batchSeed := uint64(ch.intn(256))
		m := genMachine(ch, opt.Classify, parallel)
		events := genTrace(ch, m, 300)
		if d := diffCase(t, m, opt, events, batchSeed); d != "" {
			short := shrink(t, m, opt, events)
			t.Fatalf("engine and reference differ (-reference +engine):\n%s\noptions: %+v\nmachine: %s\n"+
				"shrunk to %d events (-reference +engine):\n%s\nevents:\n%s",
				d, opt, describeMachine(m), len(short), diffCase(t, m, opt, short, 0), formatEvents(short))
		}
	})
}
