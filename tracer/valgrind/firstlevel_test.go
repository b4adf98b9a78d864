package valgrind

import (
	"bytes"
	"strings"
	"testing"

	"github.com/memspy/memspy/trace"
	vt "github.com/memspy/memspy/tracer/valgrind/valgrindtest"
)

// record writes a first-level caches' record of type typ (recBelow or
// recL1Stats; see docs/valgrind-stream.md) holding words.
func record(s *vt.Stream, typ uint64, tentative bool, words ...uint64) {
	w := typ<<60 | uint64(len(words))
	if tentative {
		w |= recTentative
	}
	s.Word(w)
	for _, x := range words {
		s.Word(x)
	}
}

// stats15 is an L1STATS record's words for one cache: events by kind,
// then the cache (index 1) and its counters, each n+k.
func stats15(n uint64) []uint64 {
	w := make([]uint64, 15)
	for k := range w {
		w[k] = n + uint64(k)
	}
	w[4] = 1
	return w
}

// TestStreamFirstLevel decodes BELOW and L1STATS records: whole lines in
// one word, write-throughs in two, the counters as a FirstLevel event, and
// the tentative flush before an exec: dropped when the exec fails,
// delivered when the stream ends with it, across batches too.
func TestStreamFirstLevel(t *testing.T) {
	var s vt.Stream
	s.Header(flagL1, 7).Thread(9)
	record(&s, recBelow, false, 0x1000|0, 0x2040|1, 0x3000|2, 3|5<<2, 0x4001)
	record(&s, recL1Stats, false, stats15(100)...)
	s.String(1, "/bin/true")
	s.Word(11<<60 | 1<<16 | procExec).Word(0)
	record(&s, recBelow, true, 0x5000|1)
	record(&s, recL1Stats, true, stats15(200)...)
	s.Word(11<<60 | 1<<16 | procExecFailed).Word(2)
	record(&s, recBelow, false, 0x6000)
	s.Word(11<<60 | 1<<16 | procExec).Word(0)
	record(&s, recBelow, true, 0x7000|1, 0x8000|1)
	record(&s, recL1Stats, true, stats15(300)...)
	data := s.Bytes()
	want := []ev{
		acc(trace.BelowRead, 0x1000, 0, 0, 9),
		acc(trace.BelowWrite, 0x2040, 0, 0, 9),
		acc(trace.BelowIFetch, 0x3000, 0, 0, 9),
		acc(trace.BelowWrite, 0x4001, 5, 0, 9),
		ext(trace.FirstLevel, 0, 0, 9, xev{Stack: stackString(stats15(100))}),
		acc(trace.BelowRead, 0x6000, 0, 0, 9),
		acc(trace.BelowWrite, 0x7000, 0, 0, 9),
		acc(trace.BelowWrite, 0x8000, 0, 0, 9),
		ext(trace.FirstLevel, 0, 0, 9, xev{Stack: stackString(stats15(300))}),
	}
	for _, c := range []int{1, 2, 3, 100} {
		r := NewStreamReader(bytes.NewReader(data))
		b := trace.NewBatch(c)
		var got []ev
		for {
			err := r.Read(b)
			for i := range b.Len() {
				e := ev{b.Kind[i], b.Addr[i], b.Size[i], b.PC[i], b.Thread[i], xev{}}
				if e.K == trace.FirstLevel {
					e.Size, e.X = 0, xev{Stack: stackString(b.ExtOf(i).Stack)}
				}
				got = append(got, e)
			}
			if err != nil {
				break
			}
		}
		if !r.FirstLevel() {
			t.Errorf("batch %d: FirstLevel() is false", c)
		}
		if prog, _ := r.Exec(); prog != "/bin/true" {
			t.Errorf("batch %d: the stream ends with exec %q, want /bin/true", c, prog)
		}
		if len(got) != len(want) {
			t.Fatalf("batch %d: %d events, want %d:\n%v", c, len(got), len(want), got)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("batch %d: event %d is %+v, want %+v", c, i, got[i], want[i])
			}
		}
	}
}

// TestStreamFirstLevelUnannounced: BELOW and L1STATS records in a stream
// whose header does not say the tool simulates the first-level caches are
// corrupt, and the error says so.
func TestStreamFirstLevelUnannounced(t *testing.T) {
	for _, rec := range []struct {
		name string
		typ  uint64
		w    []uint64
	}{{"BELOW", recBelow, []uint64{0x1000}}, {"L1STATS", recL1Stats, stats15(1)}} {
		var s vt.Stream
		s.Header(0, 7).Thread(9)
		record(&s, rec.typ, false, rec.w...)
		s.End(0)
		_, err := readAll(t, NewStreamReader(bytes.NewReader(s.Bytes())), 64)
		if err == nil || !strings.Contains(err.Error(), rec.name+" record in a stream whose header does not say") {
			t.Errorf("%s without the header's flag: %v", rec.name, err)
		}
	}
}
