package trace

import (
	"fmt"
	"io"
)

// Options controls how readers treat their input.
type Options struct {
	// Name is the input's name (file name or "-") used in error messages.
	Name string
	// SkipBad makes text readers count and skip malformed lines instead of
	// failing on the first one.
	SkipBad bool
}

// Format describes one trace format: how to recognise it and how to read it.
// Adding a format is one new file that calls Register from an init function.
type Format struct {
	Name        string // short name used by --format, e.g. "din"
	Description string // one line for help texts
	// Detect reports whether head, the first bytes of the decompressed
	// input (up to 64 KiB, possibly cut mid-line), looks like this format.
	Detect func(head []byte) bool
	// New returns a reader of this format over r.
	New func(r io.Reader, opt Options) Reader
}

var formats []Format

// Register adds a format. Formats are tried for detection in the order
// they were registered; the binary .mst format is registered first by
// being the most specific.
func Register(f Format) {
	for _, g := range formats {
		if g.Name == f.Name {
			panic("trace: format registered twice: " + f.Name)
		}
	}
	formats = append(formats, f)
}

// Formats returns the registered formats in detection order.
func Formats() []Format { return append([]Format(nil), formats...) }

// Lookup returns the format with the given name.
func Lookup(name string) (Format, bool) {
	for _, f := range formats {
		if f.Name == name {
			return f, true
		}
	}
	return Format{}, false
}

// MaxRefSize is the largest size of a memory reference that a text trace
// may give (1 MiB): a reference is simulated line by line, and a larger
// one is a corrupt size rather than a memory access (an xdin size of
// ffffffff would take seconds a line).
const MaxRefSize = 1 << 20

// sizeTooLarge is the message for a size above MaxRefSize.
const sizeTooLarge = "size exceeds the largest reference simulated (1 MiB)"

// SyntaxError reports a malformed line of a text trace.
type SyntaxError struct {
	File string // input name
	Line int64  // 1-based line number
	Text string // the offending line (truncated to 80 bytes)
	Msg  string // what is wrong
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s:%d: %s: %q", e.File, e.Line, e.Msg, e.Text)
}

// Skipper is implemented by readers that can skip malformed input
// (Options.SkipBad); Skipped returns how many lines were skipped so far.
type Skipper interface {
	Skipped() int64
}
