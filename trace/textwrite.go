package trace

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
)

// TextWriter writes events as a Dinero din or extended din (xdin) text
// trace. Both keep memory references and cache maintenance events only:
// extended events (alloc, free, call, return, marker, map) have no text
// form and are skipped. din keeps only kinds and addresses (every din reference
// is 4 bytes); xdin keeps sizes too. Neither keeps PCs or threads. A
// modify is written as a read then a write; a misc reference stays misc
// (din label 3, xdin m).
type TextWriter struct {
	w     *bufio.Writer
	xdin  bool
	line  []byte
	count uint64
}

// NewTextWriter returns a writer of the named text format, "din" or "xdin".
func NewTextWriter(w io.Writer, format string) (*TextWriter, error) {
	switch format {
	case "din", "xdin":
	default:
		return nil, fmt.Errorf("trace: cannot write format %q (text output is din or xdin)", format)
	}
	return &TextWriter{w: bufio.NewWriterSize(w, 1<<20), xdin: format == "xdin"}, nil
}

// din labels and xdin letters by kind; a modify is written as two lines.
var (
	dinLabel   = [numKinds]byte{Read: '0', Write: '1', IFetch: '2', Misc: '3', CopyBack: '4', Invalidate: '5'}
	xdinLetter = [numKinds]byte{Read: 'r', Write: 'w', IFetch: 'i', Misc: 'm', CopyBack: 'c', Invalidate: 'v'}
)

// Write appends the events of b, skipping extended events.
func (t *TextWriter) Write(b *Batch) error {
	for i, k := range b.Kind {
		if !k.Valid() {
			return fmt.Errorf("trace: cannot write event kind %v as text", k)
		}
		if k.IsExtended() {
			continue
		}
		t.line = t.line[:0]
		if k == Modify {
			t.appendLine(Read, b.Addr[i], b.Size[i])
			t.appendLine(Write, b.Addr[i], b.Size[i])
		} else {
			t.appendLine(k, b.Addr[i], b.Size[i])
		}
		if _, err := t.w.Write(t.line); err != nil {
			return err
		}
		t.count++
	}
	return nil
}

func (t *TextWriter) appendLine(k Kind, addr uint64, size uint32) {
	if t.xdin {
		t.line = append(t.line, xdinLetter[k], ' ')
		t.line = strconv.AppendUint(t.line, addr, 16)
		t.line = append(t.line, ' ')
		t.line = strconv.AppendUint(t.line, uint64(size), 16)
	} else {
		t.line = append(t.line, dinLabel[k], ' ')
		t.line = strconv.AppendUint(t.line, addr, 16)
	}
	t.line = append(t.line, '\n')
}

// Events returns the number of events written (extended events skipped
// are not counted).
func (t *TextWriter) Events() uint64 { return t.count }

// Close flushes buffered output; it does not close the underlying writer.
func (t *TextWriter) Close() error { return t.w.Flush() }
