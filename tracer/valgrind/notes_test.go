package valgrind

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/memspy/memspy/trace"
	vt "github.com/memspy/memspy/tracer/valgrind/valgrindtest"
)

// notesStream is a stream of a tool noting first-level accesses: one
// superblock (two fetches in one line, a read, an atomic, an exit, a
// write, a call) run three times: to its end without notes, to its end
// with three notes, and to its exit with one.
func notesStream() *vt.Stream {
	var s vt.Stream
	s.Header(flagL1|flagNotes|vt.FlagCalls, 7).Thread(9)
	s.Describe(1,
		vt.Entry{Kind: vt.IFetch, Size: 4, PC: 0x1000},
		vt.Entry{Kind: vt.Read, Size: 8, PC: 0x1000},
		vt.Entry{Kind: vt.IFetch, Size: 4, PC: 0x1004},
		vt.Entry{Kind: vt.Atomic, Size: 4, PC: 0x1004},
		vt.Entry{Kind: vt.Exit, PC: 0x1008},
		vt.Entry{Kind: vt.Write, Size: 8, PC: 0x100c},
		vt.Entry{Kind: vt.Call, PC: 0x1010})
	s.Word(vt.RecExec<<60 | 1<<16 | 1).Word(0x2000).Word(0x7ff0)
	note := func(flags, kind, size, entry uint64) uint64 { return flags | kind<<4 | size<<8 | entry<<32 }
	s.Word(recExecL1<<60 | 1<<16 | 1).Word(3 | 7<<32).Word(0x2000).Word(0x7fe0)
	s.Word(note(trace.L1Victim|trace.L1Dirty, 0, 8, 1)).Word(0x5008).Word(0x9000)
	s.Word(note(trace.L1Hit|trace.L1Next, 1, 2, 3)).Word(0x6040)
	s.Word(note(0, 2, 4, 0)).Word(0x1000)
	s.Word(recExecL1<<60 | 1<<16 | 0).Word(1 | 2<<32).Word(note(0, 0, 8, 1)).Word(0x5010)
	return &s
}

// TestStreamNotes decodes EXEC and EXECL1 records of a tool noting
// first-level accesses into Exec events, with fetches folded into runs,
// at every batch size.
func TestStreamNotes(t *testing.T) {
	data := notesStream().End(0).Bytes()
	type exec struct {
		exit int
		acc  []trace.L1Access
	}
	// Events: the run of two fetches (0), the read (1), the atomic's Sync
	// (2) and Modify (3), the write (4).
	wantExecs := []exec{
		{1, nil},
		{1, []trace.L1Access{
			{Addr: 0x5008, Victim: 0x9000, Size: 8, Event: 1, Kind: trace.Read, Flags: trace.L1Victim | trace.L1Dirty},
			{Addr: 0x6040, Size: 2, Event: 3, Kind: trace.Write, Flags: trace.L1Hit | trace.L1Next},
			{Addr: 0x1000, Size: 4, Event: 0, Kind: trace.IFetch}}},
		{0, []trace.L1Access{{Addr: 0x5010, Size: 8, Event: 1, Kind: trace.Read}}},
	}
	wantBlock := &trace.Block{
		Kind: []trace.Kind{trace.IFetchRun, trace.Read, trace.Sync, trace.Modify, trace.Write},
		Size: []uint32{2, 8, 0, 4, 8},
		PC:   []uint64{0x1000, 0x1000, 0x1004, 0x1004, 0x100c},
		Exits: []trace.BlockExit{{Events: 4, Reads: 1, IFetches: 2, Modifies: 1},
			{Events: 5, Reads: 1, Writes: 1, IFetches: 2, Modifies: 1}},
	}
	for _, c := range []int{1, 2, 3, 100} {
		r := NewStreamReader(bytes.NewReader(data))
		r.SetIFetchRuns(64, false)
		b := trace.NewBatch(c)
		var execs []exec
		calls := 0
		for {
			err := r.Read(b)
			for i, k := range b.Kind {
				switch k {
				case trace.Exec:
					blk, exit, acc := b.ExecOf(i)
					if !reflect.DeepEqual(blk, wantBlock) {
						t.Fatalf("batch %d: block %+v, want %+v", c, blk, wantBlock)
					}
					if b.Thread[i] != 9 {
						t.Errorf("batch %d: thread %d", c, b.Thread[i])
					}
					execs = append(execs, exec{exit, append([]trace.L1Access(nil), acc...)})
				case trace.Call:
					calls++
					if b.Addr[i] != 0x2000 || b.PC[i] != 0x1010 {
						t.Errorf("batch %d: call to %#x from %#x", c, b.Addr[i], b.PC[i])
					}
				default:
					t.Errorf("batch %d: event of kind %v", c, k)
				}
			}
			if err != nil {
				break
			}
		}
		if !r.Notes() {
			t.Errorf("batch %d: Notes() is false", c)
		}
		if calls != 2 || !reflect.DeepEqual(execs, wantExecs) {
			t.Errorf("batch %d: %d calls and executions %+v, want 2 and %+v", c, calls, execs, wantExecs)
		}
	}
}

// TestStreamNotesCorrupt rejects notes that do not fit their record or
// superblock.
func TestStreamNotesCorrupt(t *testing.T) {
	note := func(flags, kind, entry uint64) uint64 { return flags | kind<<4 | 8<<8 | entry<<32 }
	for name, words := range map[string][]uint64{
		"the entry of an exit":     {1 | 2<<32, note(0, 0, 4), 0x10},
		"an entry past the exit":   {1 | 2<<32, note(0, 0, 5), 0x10},
		"kind 3":                   {1 | 2<<32, note(0, 3, 1), 0x10},
		"reserved bits":            {1 | 2<<32, note(0x40, 0, 1), 0x10},
		"no notes":                 {0},
		"more words than notes":    {1 | 3<<32, note(0, 0, 1), 0x10, 0},
		"a victim past the record": {1 | 2<<32, note(trace.L1Victim, 0, 1), 0x10},
	} {
		s := notesStream()
		s.Word(recExecL1<<60 | 1<<16 | 0)
		for _, w := range words {
			s.Word(w)
		}
		s.End(0)
		r := NewStreamReader(bytes.NewReader(s.Bytes()))
		b := trace.NewBatch(100)
		var err error
		for err == nil {
			err = r.Read(b)
		}
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want a corrupt stream", name, err)
		}
	}
}
