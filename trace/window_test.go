package trace

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
)

// seqReader yields events 0..n-1 (the address is the event number) in
// batches of at most step, then err.
type seqReader struct {
	n, next, step int
	err           error
	reads         int
}

func (s *seqReader) Format() string { return "seq" }

func (s *seqReader) Read(b *Batch) error {
	s.reads++
	b.Reset()
	for b.Len() < min(b.Cap(), s.step) && s.next < s.n {
		b.Append(Read, uint64(s.next), 4, 0, 0)
		s.next++
	}
	if b.Len() == 0 {
		return s.err
	}
	return nil
}

func TestWindow(t *testing.T) {
	for _, tc := range []struct {
		n, step, batch        int
		skip, max             uint64
		drain                 bool
		wantFirst, wantEvents int
	}{
		{n: 100, step: 7, batch: 16, skip: 10, max: 20, wantFirst: 10, wantEvents: 20},
		{n: 100, step: 7, batch: 16, skip: 0, max: 5, wantFirst: 0, wantEvents: 5},
		{n: 100, step: 50, batch: 64, skip: 99, max: 0, wantFirst: 99, wantEvents: 1},
		{n: 100, step: 7, batch: 3, skip: 200, max: 0, wantFirst: -1, wantEvents: 0},
		{n: 100, step: 7, batch: 16, skip: 90, max: 50, drain: true, wantFirst: 90, wantEvents: 10},
		{n: 100, step: 7, batch: 16, skip: 0, max: 100, wantFirst: 0, wantEvents: 100},
		{n: 100, step: 7, batch: 16, skip: 3, max: 4, drain: true, wantFirst: 3, wantEvents: 4},
	} {
		t.Run(fmt.Sprintf("%+v", tc), func(t *testing.T) {
			src := &seqReader{n: tc.n, step: tc.step, err: io.EOF}
			r := Window(src, tc.skip, tc.max, tc.drain)
			b := NewBatch(tc.batch)
			first, events := -1, 0
			for {
				err := r.Read(b)
				for _, a := range b.Addr {
					if first < 0 {
						first = int(a)
					}
					if want := uint64(first + events); a != want {
						t.Fatalf("event %d has address %d, want %d", events, a, want)
					}
					events++
				}
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if first != tc.wantFirst || events != tc.wantEvents {
				t.Errorf("first %d, %d events; want first %d, %d events", first, events, tc.wantFirst, tc.wantEvents)
			}
			if tc.drain && src.next != tc.n {
				t.Errorf("drained to event %d of %d", src.next, tc.n)
			}
			if !tc.drain && tc.max > 0 && uint64(tc.n) > tc.skip+tc.max+uint64(tc.step+tc.batch) && src.next == tc.n {
				t.Errorf("read the whole input without drain")
			}
			if b.Cap() != tc.batch {
				t.Errorf("batch capacity changed to %d", b.Cap())
			}
		})
	}
}

func TestWindowPassesErrors(t *testing.T) {
	boom := errors.New("boom")
	r := Window(&seqReader{n: 10, step: 4, err: boom}, 2, 0, false)
	b := NewBatch(8)
	var err error
	events := 0
	for err == nil {
		err = r.Read(b)
		events += b.Len()
	}
	if !errors.Is(err, boom) || events != 8 {
		t.Errorf("err %v after %d events, want boom after 8", err, events)
	}
}

// batchReader yields the events of all in batches of at most step, then
// io.EOF.
type batchReader struct {
	all        *Batch
	next, step int
}

func (s *batchReader) Format() string { return "batch" }

func (s *batchReader) Read(b *Batch) error {
	b.Reset()
	for b.Len() < min(b.Cap(), s.step) && s.next < s.all.Len() {
		b.AppendEvent(s.all, s.next)
		s.next++
	}
	if b.Len() == 0 {
		return io.EOF
	}
	return nil
}

// windowModel is Window's specification applied to a whole trace.
func windowModel(all *Batch, skip, max uint64) *Batch {
	out := NewBatch(0)
	for i, k := range all.Kind {
		switch {
		case k.IsExtended():
			out.AppendEvent(all, i)
		case skip > 0:
			skip--
		default:
			out.AppendEvent(all, i)
			if max--; max == 0 {
				return out
			}
		}
	}
	return out
}

// Extended events are never skipped, count toward no limit, and stop with
// the window.
func TestWindowExtended(t *testing.T) {
	all := NewBatch(0)
	ref := uint64(0)
	for i := range 200 {
		switch i % 7 {
		case 2, 3: // runs of extended events
			all.AppendExt([]Kind{Alloc, Call, Marker, Map}[i%4], ref, uint64(i), 0, Ext{Name: fmt.Sprint("ext", i), Stack: []uint64{uint64(i)}})
		default:
			all.Append([]Kind{Read, IFetch, CopyBack}[i%3], ref, 4, uint64(i), 0)
			ref++
		}
	}
	refs := ref
	for _, skip := range []uint64{0, 1, 2, 5, 70, refs - 1, refs, refs + 3} {
		for _, max := range []uint64{0, 1, 2, 9, 60, refs} {
			if skip == 0 && max == 0 {
				continue
			}
			want := windowModel(all, skip, max)
			for _, step := range []int{1, 3, 16, 500} {
				for _, capacity := range []int{1, 4, 64} {
					r := Window(&batchReader{all: all, step: step}, skip, max, step == 3)
					got, err := readAllMST(r, capacity)
					if err != nil {
						t.Fatalf("skip %d max %d step %d cap %d: %v", skip, max, step, capacity, err)
					}
					if d := batchEqual(want, got); d != "" {
						t.Fatalf("skip %d max %d step %d cap %d: %s", skip, max, step, capacity, d)
					}
				}
			}
		}
	}
}

// skipWindowModel is windowModel for streams with Skip events: a Skip
// stands for Addr references, of which the part inside the window passes.
func skipWindowModel(all *Batch, skip, max uint64) *Batch {
	out := NewBatch(0)
	limited := max > 0
	for i, k := range all.Kind {
		n := uint64(1)
		if k == Skip {
			n = all.Addr[i]
		}
		switch {
		case k.IsExtended():
			out.AppendEvent(all, i)
			continue
		case skip >= n:
			skip -= n
			continue
		}
		n -= skip
		skip = 0
		if limited {
			n = min(n, max)
			max -= n
		}
		out.AppendEvent(all, i)
		if k == Skip {
			out.Addr[out.Len()-1] = n
		}
		if limited && max == 0 {
			return out
		}
	}
	return out
}

// A Skip event (references a sampled run left out) counts as its Addr
// references toward both limits, and one across a limit is cut to the part
// inside the window.
func TestWindowSkipEvents(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 300 {
		all := NewBatch(0)
		refs := uint64(0)
		for i := range 1 + rng.IntN(60) {
			switch rng.IntN(5) {
			case 0, 1:
				c := uint64(1 + rng.IntN(20))
				all.Append(Skip, c, 0, 0, 0)
				refs += c
			case 2:
				all.AppendExt(Marker, 0, uint64(i), 0, Ext{Name: fmt.Sprint("m", i)})
			default:
				all.Append(Read, uint64(i), 4, uint64(i), 0)
				refs++
			}
		}
		skip, max := uint64(rng.IntN(int(refs)+3)), uint64(rng.IntN(int(refs)+3))
		if skip == 0 && max == 0 {
			max = 1
		}
		want := skipWindowModel(all, skip, max)
		step, capacity := 1+rng.IntN(20), 1+rng.IntN(20)
		got, err := readAllMST(Window(&batchReader{all: all, step: step}, skip, max, trial%2 == 0), capacity)
		if err != nil {
			t.Fatalf("trial %d (skip %d max %d): %v", trial, skip, max, err)
		}
		if d := batchEqual(want, got); d != "" {
			t.Fatalf("trial %d (skip %d max %d step %d cap %d): %s", trial, skip, max, step, capacity, d)
		}
	}
}
