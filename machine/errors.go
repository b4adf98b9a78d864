package machine

import (
	"fmt"
	"strings"
)

// ConfigError reports one invalid machine description: which cache (empty
// for the machine itself), which key, and why. Its message reads like
//
//	cache "L2": size: 1000000 is not divisible into 16-way sets of 64-byte lines (16*64 = 1024 bytes per set)
//
// Every validation and parse error of this package is a *ConfigError,
// possibly wrapped in a *FileError that adds the position in a file; use
// errors.As to get at it.
type ConfigError struct {
	Cache string // cache name; empty for machine-level errors
	Key   string // key in the schema (size, assoc, memory_latency, …); may be empty
	Msg   string // what is wrong

	index int // 1-based position of the cache in the list; 0 when unknown or machine-level
}

// Error implements error.
func (e *ConfigError) Error() string {
	var b strings.Builder
	switch {
	case e.Cache != "":
		fmt.Fprintf(&b, "cache %q: ", e.Cache)
	case e.index > 0:
		fmt.Fprintf(&b, "cache #%d: ", e.index)
	}
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// FileError places an error in a machine description file. Line is 1-based;
// 0 when the error has no single line.
type FileError struct {
	File string
	Line int
	Err  error
}

// Error implements error: "file:line: message".
func (e *FileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.File, e.Err)
}

// Unwrap returns the underlying error, usually a *ConfigError.
func (e *FileError) Unwrap() error { return e.Err }
