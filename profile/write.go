package profile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// Write encodes p as indented JSON, as a json.Encoder indenting by two
// spaces would, but an entry at a time: the where-and-why entries, most of
// a large profile, are never all held encoded in memory.
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
	ew := &entryWriter{w: bw}
	ew.enc = json.NewEncoder(&ew.buf)
	ew.enc.SetIndent("    ", "  ")
	writeEntries(ew, "functions", p.Functions)
	writeEntries(ew, "objects", p.Objects)
	writeEntries(ew, "pairs", p.Pairs)
	writeEntries(ew, "lines", p.Lines)
	writeEntries(ew, "references", p.References)
	if ew.err != nil {
		return ew.err
	}
	bw.Write(b[i-1:])
	bw.WriteByte('\n')
	return bw.Flush()
}

// entryWriter writes the entries of a profile's lists one by one.
type entryWriter struct {
	w   *bufio.Writer
	buf bytes.Buffer
	enc *json.Encoder // into buf, indented as an element of a top-level list
	err error
}

// writeEntries writes the list es as the value of the top-level key after
// a comma, unless it is empty (the lists are left out when empty).
func writeEntries[T any](ew *entryWriter, key string, es []T) {
	if ew.err != nil || len(es) == 0 {
		return
	}
	fmt.Fprintf(ew.w, ",\n  %q: [", key)
	for i := range es {
		ew.buf.Reset()
		if ew.err = ew.enc.Encode(&es[i]); ew.err != nil {
			return
		}
		if i > 0 {
			ew.w.WriteByte(',')
		}
		ew.w.WriteString("\n    ")
		ew.w.Write(bytes.TrimSuffix(ew.buf.Bytes(), []byte("\n")))
	}
	ew.w.WriteString("\n  ]")
}
