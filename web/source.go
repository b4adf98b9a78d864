package web

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Bounds on the source files read for context lines: a file larger than
// maxSourceSize is not read (nor one that is not a regular file, or holds
// a NUL byte: not text), and a line is cut to maxLineBytes.
const (
	maxSourceSize = 8 << 20
	maxLineBytes  = 240
)

// readSources reads the lines around each reference's line, context
// either side, from the files the references name, as they are now. A
// file that cannot be read is left out.
func readSources(refs []Reference, context int) map[string]map[int]string {
	want := map[string]map[int]bool{}
	for _, r := range refs {
		if r.File == "" || r.Line <= 0 {
			continue
		}
		if want[r.File] == nil {
			want[r.File] = map[int]bool{}
		}
		for n := max(1, r.Line-context); n <= r.Line+context; n++ {
			want[r.File][n] = true
		}
	}
	out := map[string]map[int]string{}
	for file, lines := range want {
		if got := readLines(file, lines); len(got) > 0 {
			out[file] = got
		}
	}
	return out
}

// sourceExts are the file name extensions of source files whose lines a
// page may hold. A profile names the files (its references' debugging
// information): a page made from somebody else's profile must not carry
// lines of this machine's other files (/etc/passwd at line 1, say) to
// wherever the page goes.
var sourceExts = map[string]bool{
	".c": true, ".h": true, ".cc": true, ".cpp": true, ".cxx": true, ".c++": true, ".hh": true, ".hpp": true,
	".hxx": true, ".h++": true, ".ipp": true, ".tcc": true, ".inc": true, ".inl": true, ".cu": true, ".m": true,
	".mm": true, ".go": true, ".rs": true, ".f": true, ".for": true, ".f90": true, ".f95": true, ".f03": true,
	".s": true, ".asm": true, ".zig": true, ".d": true, ".swift": true, ".java": true, ".py": true,
}

// isSource reports whether file is named as a source file: by its
// extension (case aside), or without one in an include directory (the
// C++ library's headers: .../include/c++/12/map).
func isSource(file string) bool {
	ext := filepath.Ext(file)
	if ext == "" {
		return strings.Contains(file, "/include/")
	}
	return sourceExts[strings.ToLower(ext)]
}

// readLines returns the lines of file numbered in want (from 1), or nil
// when file is not a source file (isSource), or not a readable text file
// within maxSourceSize.
func readLines(file string, want map[int]bool) map[int]string {
	if !isSource(file) {
		return nil
	}
	fi, err := os.Stat(file)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxSourceSize {
		return nil
	}
	data, err := os.ReadFile(file)
	if err != nil || bytes.IndexByte(data, 0) >= 0 {
		return nil
	}
	last := 0
	for n := range want {
		last = max(last, n)
	}
	got := map[int]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, maxSourceSize+1)
	for n := 1; n <= last && sc.Scan(); n++ {
		if want[n] {
			got[n] = cut(sc.Text())
		}
	}
	return got
}

// cut shortens line to maxLineBytes, at a character's start, marking the
// cut with "…"; bytes that are not UTF-8 become U+FFFD.
func cut(line string) string {
	line = string(bytes.ToValidUTF8([]byte(line), []byte("\uFFFD")))
	if len(line) <= maxLineBytes {
		return line
	}
	n := maxLineBytes
	for n > 0 && !utf8.RuneStart(line[n]) {
		n--
	}
	return line[:n] + "…"
}
