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
func (p *Profile) Write(w io.Writer) error { return p.write(w, Uncompressed) }

// WriteCompressed writes p compressed with c (Zstd, as .memspy files
// are, or Gzip), as JSON whose where-and-why entries are compact, one a
// line, and leave out their focus copy (the top-level counters, a copy of
// those of the focus cache: Read restores them): the JSON is encoded and
// compressed a few entries at a time on every CPU, each part a zstd frame
// or gzip member of its own (a stream may hold several; every reader
// reads them as one). Uncompressed writes what Write does.
func (p *Profile) WriteCompressed(w io.Writer, c Compression) error { return p.write(w, c) }

// write writes p as WriteCompressed does.
func (p *Profile) write(w io.Writer, c Compression) error {
	head := *p
	head.Functions, head.Objects, head.Pairs, head.Lines, head.References, head.CallTree = nil, nil, nil, nil, nil, nil
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
	pw := &partWriter{w: bufio.NewWriterSize(w, 1<<16), c: c}
	pw.write(b[:i-1])
	for _, err := range []error{
		writeEntries(pw, "functions", p.Functions, appendFunction),
		writeEntries(pw, "objects", p.Objects, appendObject),
		writeEntries(pw, "pairs", p.Pairs, appendPair),
		writeEntries(pw, "lines", p.Lines, appendLine),
		writeEntries(pw, "references", p.References, appendReference),
		writeCallTree(pw, p.CallTree),
	} {
		if err != nil {
			return err
		}
	}
	pw.write(append(b[i-1:], '\n'))
	if pw.err != nil {
		return pw.err
	}
	return pw.w.Flush()
}

// partWriter writes the parts of an encoded profile in order, each
// compressed on its own with c.
type partWriter struct {
	w   *bufio.Writer
	c   Compression
	err error
}

// write writes a part that is not compressed yet.
func (pw *partWriter) write(b []byte) {
	if pw.c != Uncompressed {
		var z bytes.Buffer
		pw.writeEncoded(compress(&z, b, pw.c))
		return
	}
	pw.writeEncoded(b)
}

// writeEncoded writes a part ready to be written.
func (pw *partWriter) writeEncoded(b []byte) {
	if pw.err == nil {
		_, pw.err = pw.w.Write(b)
	}
}

// entriesPerPart is how many entries one goroutine encodes at a time.
const entriesPerPart = 256

// partBuffer holds a part of a list of entries, encoded (b) and
// compressed (z).
type partBuffer struct {
	b []byte
	z bytes.Buffer
}

// encodedPart is a part of a list of entries, encoded (and compressed).
type encodedPart struct {
	*partBuffer
	err error
}

// bytes returns what the part writes, compressed with c.
func (e encodedPart) bytes(c Compression) []byte {
	if c != Uncompressed {
		return e.z.Bytes()
	}
	return e.b
}

// partBuffers keeps the buffers of encoded parts for the next ones.
var partBuffers = sync.Pool{New: func() any { return new(partBuffer) }}

// entryAppender appends an entry as compact JSON, with its focus copy
// when focusCopy is set (appendFunction and the others, encode.go).
type entryAppender[T any] func(b []byte, e *T, focusCopy bool) ([]byte, error)

// writeEntries writes the list es as the value of the top-level key after
// a comma, unless it is empty (the lists are left out when empty), its
// elements as writeElements writes them.
func writeEntries[T any](pw *partWriter, key string, es []T, appendEntry entryAppender[T]) error {
	if len(es) == 0 {
		return nil
	}
	pw.write(fmt.Appendf(nil, ",\n  %q: [", key))
	if err := writeElements(pw, key, "    ", es, appendEntry); err != nil {
		return err
	}
	pw.write([]byte("\n  ]"))
	return nil
}

// writeCallTree writes the call tree t (unless nil) as the value of the
// top-level key call_tree after a comma, its nodes as writeEntries writes
// a list's entries.
func writeCallTree(pw *partWriter, t *CallTree) error {
	if t == nil {
		return nil
	}
	pw.write([]byte(",\n  \"call_tree\": {\n    \"nodes\": ["))
	if err := writeElements(pw, "call_tree.nodes", "      ", t.Nodes, appendCallNode); err != nil {
		return err
	}
	pw.write([]byte("\n    ]"))
	if t.Elided > 0 {
		pw.write(fmt.Appendf(nil, ",\n    \"elided\": %d", t.Elided))
	}
	pw.write([]byte("\n  }"))
	return nil
}

// writeElements writes the elements of the list es (called key in
// errors), each on a line of its own indented by indent. Parts of the
// list are encoded concurrently, a few at a time, and written in order.
func writeElements[T any](pw *partWriter, key, indent string, es []T, appendEntry entryAppender[T]) error {
	parts := make(chan chan encodedPart, runtime.GOMAXPROCS(0))
	go func() {
		for i := 0; i < len(es); i += entriesPerPart {
			c := make(chan encodedPart, 1)
			parts <- c
			go func() { c <- encodeEntries(key, indent, es[i:min(i+entriesPerPart, len(es))], i, pw.c, appendEntry) }()
		}
		close(parts)
	}()
	var err error
	for c := range parts { // to the end, for the goroutines' sake
		part := <-c
		if err == nil {
			if err = part.err; err == nil {
				pw.writeEncoded(part.bytes(pw.c))
			}
		}
		partBuffers.Put(part.partBuffer)
	}
	return err
}

// encodeEntries encodes es, the entries of the list key from index at
// on, as elements of the list: each on a new line, after a comma unless
// it is the list's first; indented by indent (as a json.Encoder indenting
// by two spaces would), or compact, without focus copies, and compressed
// with c unless it is Uncompressed.
func encodeEntries[T any](key, indent string, es []T, at int, c Compression, appendEntry entryAppender[T]) encodedPart {
	out := encodedPart{partBuffer: partBuffers.Get().(*partBuffer)}
	b := out.b[:0]
	var compact []byte // an entry to indent
	for i := range es {
		if at+i > 0 {
			b = append(b, ',')
		}
		b = append(append(b, '\n'), indent...)
		var err error
		if c != Uncompressed {
			b, err = appendEntry(b, &es[i], false)
		} else if compact, err = appendEntry(compact[:0], &es[i], true); err == nil {
			b, err = appendIndented(b, indent, compact)
		}
		if err != nil {
			out.err = fmt.Errorf("profile: %s[%d]: %w", key, at+i, err)
			return out
		}
	}
	out.b = b
	if c != Uncompressed {
		compress(&out.z, b, c)
	}
	return out
}

// appendIndented appends the compact JSON entry indented as an element of
// a list whose elements are indented by indent.
func appendIndented(b []byte, indent string, entry []byte) ([]byte, error) {
	buf := bytes.NewBuffer(b)
	err := json.Indent(buf, entry, indent, "  ")
	return buf.Bytes(), err
}
