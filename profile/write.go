package profile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"sync"
)

// Write encodes p as indented JSON, as a json.Encoder indenting by two
// spaces would, but a few entries at a time, on every CPU: the
// where-and-why entries, most of a large profile, are never all held
// encoded in memory.
func (p *Profile) Write(w io.Writer) error {
	head := *p
	head.Functions, head.Objects, head.Pairs, head.Lines, head.References = nil, nil, nil, nil, nil
	b, err := json.MarshalIndent(&head, "", "  ")
	if err != nil {
		return err
	}
	// The entries go where the fields after them begin: complete is always
	// there, and a top-level key is the only one indented by two spaces.
	next := []byte("\n  \"complete\": ")
	if len(p.Processes) > 0 {
		next = []byte("\n  \"processes\": ")
	}
	i := bytes.Index(b, next)
	if i < 1 || b[i-1] != ',' {
		return fmt.Errorf("profile: no place for the entries in %.40q…", b)
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.Write(b[:i-1])
	for _, err := range []error{
		writeEntries(bw, "functions", p.Functions),
		writeEntries(bw, "objects", p.Objects),
		writeEntries(bw, "pairs", p.Pairs),
		writeEntries(bw, "lines", p.Lines),
		writeEntries(bw, "references", p.References),
	} {
		if err != nil {
			return err
		}
	}
	bw.Write(b[i-1:])
	bw.WriteByte('\n')
	return bw.Flush()
}

// entriesPerPart is how many entries one goroutine encodes at a time.
const entriesPerPart = 256

// encodedPart is a part of a list of entries, encoded.
type encodedPart struct {
	b   *bytes.Buffer
	err error
}

// partBuffers keeps the buffers of encoded parts for the next ones.
var partBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// writeEntries writes the list es as the value of the top-level key after
// a comma, unless it is empty (the lists are left out when empty). Parts
// of the list are encoded concurrently, a few at a time, and written in
// order.
func writeEntries[T any](w *bufio.Writer, key string, es []T) error {
	if len(es) == 0 {
		return nil
	}
	fmt.Fprintf(w, ",\n  %q: [", key)
	parts := make(chan chan encodedPart, runtime.GOMAXPROCS(0))
	go func() {
		for i := 0; i < len(es); i += entriesPerPart {
			c := make(chan encodedPart, 1)
			parts <- c
			go func() { c <- encodeEntries(es[i:min(i+entriesPerPart, len(es))], i == 0) }()
		}
		close(parts)
	}()
	var err error
	for c := range parts { // to the end, for the goroutines' sake
		part := <-c
		if err == nil {
			if err = part.err; err == nil {
				w.Write(part.b.Bytes())
			}
		}
		partBuffers.Put(part.b)
	}
	if err != nil {
		return err
	}
	w.WriteString("\n  ]")
	return nil
}

// encodeEntries encodes es as elements of a top-level list: each on a new
// line, after a comma unless first is set and it is the first.
func encodeEntries[T any](es []T, first bool) encodedPart {
	out := partBuffers.Get().(*bytes.Buffer)
	out.Reset()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("    ", "  ")
	for i := range es {
		buf.Reset()
		if err := enc.Encode(&es[i]); err != nil {
			return encodedPart{out, err}
		}
		if i > 0 || !first {
			out.WriteByte(',')
		}
		out.WriteString("\n    ")
		out.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	}
	return encodedPart{out, nil}
}
