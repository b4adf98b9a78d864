package symbolize

import (
	"fmt"
	"path/filepath"
	"strconv"

	"memspy/symbols"
)

// HeapName names the heap blocks allocated through site, a call path of
// return addresses, innermost first, whose first entry returns into the
// function that called the allocation routine. Each return address is
// looked up at the address before it, inside the call instruction, and
// expands into the source frames there (inlined calls included).
//
// The short name is the variable that receives the pointer: the left-hand
// side on the allocation line (`Y = malloc(n)` → "Y", see
// [symbols.AssignedVariable]). When that line returns the pointer instead
// (`return malloc(n);` in a wrapper such as AllocMatrix), the name is
// looked for on the caller's line, and so on outwards, so that
// `double *Y = AllocMatrix(n);` names the blocks "Y". Frames without a
// line or with unreadable source (libraries without debugging information,
// such as strdup in libc) are passed through the same way. When no
// variable is found, the name is "heap@file:line" of the innermost frame
// with a line (file as a base name), else "heap@func".
//
// A variable assigned the pointer and then returned by its function (the
// wrapper `m = malloc(n); if (!m) abort(); return m;`) counts as a return:
// the name is looked for in the caller.
//
// path is the whole call path, outermost first, one "func.line" per source
// frame (joined with the name: "main.42.AllocMatrix.17.Y", main's line 42
// called AllocMatrix, whose line 17 called the allocator). A frame without
// a line is just "func"; one in no known function is the return address in
// hex ("0x4011a3"). ok is false when no frame of site is known at all.
func (s *Symbolizer) HeapName(site []uint64) (name string, path []string, ok bool) {
	var frames []siteFrame // innermost first
	for _, ra := range site {
		fs := s.space.Frames(ra - 1)
		if fs == nil {
			frames = append(frames, siteFrame{ra: ra})
			continue
		}
		ok = true
		for _, f := range fs {
			frames = append(frames, siteFrame{ra: ra, Frame: f})
		}
	}
	if !ok {
		return "", nil, false
	}
	name = s.shortName(frames)
	for i := len(frames) - 1; i >= 0; i-- {
		f := &frames[i]
		elem := hex(f.ra)
		if f.Func != "" {
			elem = f.Func
		}
		if f.Line > 0 {
			elem += "." + strconv.Itoa(f.Line)
		}
		path = append(path, elem)
	}
	return name, path, true
}

// siteFrame is one source frame of an allocation site.
type siteFrame struct {
	ra uint64 // the return address it came from
	symbols.Frame
}

func hex(a uint64) string { return fmt.Sprintf("%#x", a) }

// shortName finds the variable receiving the pointer, walking outwards
// while lines return it (or tell nothing), else makes "heap@file:line".
func (s *Symbolizer) shortName(frames []siteFrame) string {
	local := "" // a variable the function returns, if no caller names it
	for _, f := range frames {
		if f.File == "" || f.Line <= 0 {
			continue
		}
		li := s.lineInfo(f.File, f.Line)
		if li.name != "" {
			if !symbols.ReturnsVariable(f.File, f.Line, li.name) {
				return li.name
			}
			if local == "" {
				local = li.name
			}
			continue
		}
		if !li.readable || li.returns {
			continue
		}
		break
	}
	if local != "" {
		return local
	}
	for _, f := range frames {
		if f.File != "" && f.Line > 0 {
			return fmt.Sprintf("heap@%s:%d", filepath.Base(f.File), f.Line)
		}
	}
	for _, f := range frames {
		if f.Func != "" {
			return "heap@" + f.Func
		}
	}
	return "heap@" + hex(frames[0].ra)
}

type fileLine struct {
	file string
	line int
}

// lineInfo is what a source line does with the value of a call on it.
type lineInfo struct {
	name     string // the variable it assigns, if any
	returns  bool   // it returns the value
	readable bool   // the line could be read
}

// lineInfo reads and classifies a source line, once per file and line.
func (s *Symbolizer) lineInfo(file string, line int) lineInfo {
	k := fileLine{file, line}
	if li, ok := s.lines[k]; ok {
		return li
	}
	var li lineInfo
	if li.returns, li.readable = symbols.ReturnsValue(file, line); li.readable {
		li.name, _ = symbols.AssignedVariable(file, line)
	}
	s.lines[k] = li
	return li
}
