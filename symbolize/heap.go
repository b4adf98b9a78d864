package symbolize

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

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
			if !s.returnsVar(f.File, f.Line, li.name) {
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
	src := s.source(file)
	li := lineInfo{readable: line >= 1 && line <= len(src)}
	if li.readable {
		li.name, _ = symbols.AssignedVariable(file, line)
		li.returns = returns(src, line, strings.HasSuffix(file, ".go"))
	}
	s.lines[k] = li
	return li
}

// source returns the lines of a source file, reading it once (nil when
// it cannot be read).
func (s *Symbolizer) source(file string) []string {
	if src, ok := s.sources[file]; ok {
		return src
	}
	var src []string
	if data, err := os.ReadFile(file); err == nil {
		src = strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	}
	s.sources[file] = src
	return src
}

// maxFuncLines bounds how far returnsVar looks for the end of a function.
const maxFuncLines = 200

// returnsVar reports whether the function holding line of file returns
// variable v: a later line, before the function's closing brace (a line
// starting with "}"), is `return v;` (or `return v` in Go).
func (s *Symbolizer) returnsVar(file string, line int, v string) bool {
	src := s.source(file)
	goSrc := strings.HasSuffix(file, ".go")
	for i := line; i < len(src) && i < line+maxFuncLines; i++ {
		if strings.HasPrefix(src[i], "}") {
			return false
		}
		code := strings.TrimSpace(stripLiterals(src[i], goSrc))
		if rest, ok := strings.CutPrefix(code, "return"); ok {
			rest = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), ";"))
			if rest == v {
				return true
			}
		}
	}
	return false
}

// returns reports whether the statement holding line (1-based) of src is a
// return: the line holds the keyword "return", or continues (over at most
// three lines) a statement begun on a line that does, as in
// `return (double *)` / `malloc(n);`.
func returns(src []string, line int, goSrc bool) bool {
	for i := line - 1; i >= 0 && i >= line-4; i-- {
		code := stripLiterals(src[i], goSrc)
		if hasWord(code, "return") {
			return true
		}
		// Does line i continue a statement begun on an earlier line?
		j := i - 1
		for j >= 0 && strings.TrimSpace(stripLiterals(src[j], goSrc)) == "" {
			j--
		}
		if j < 0 {
			return false
		}
		prev := strings.TrimSpace(stripLiterals(src[j], goSrc))
		if strings.HasPrefix(prev, "#") || strings.HasSuffix(prev, ";") ||
			strings.HasSuffix(prev, "{") || strings.HasSuffix(prev, "}") || strings.HasSuffix(prev, ":") {
			return false
		}
		if goSrc && !strings.HasSuffix(prev, "(") && !strings.HasSuffix(prev, ",") && !strings.HasSuffix(prev, "=") {
			return false // Go ends statements at line ends
		}
		i = j + 1
	}
	return false
}

// stripLiterals blanks out string and character literals and removes
// comments within one line.
func stripLiterals(s string, goSrc bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\'' || c == '`' && goSrc:
			j := i + 1
			for j < len(s) && s[j] != c {
				if s[j] == '\\' && c != '`' {
					j++
				}
				j++
			}
			b.WriteByte(' ')
			i = j
		case c == '/' && i+1 < len(s) && s[i+1] == '/':
			return b.String()
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return b.String()
			}
			b.WriteByte(' ')
			i += 2 + end + 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// hasWord reports whether s contains w as a whole identifier.
func hasWord(s, w string) bool {
	for off := 0; ; {
		i := strings.Index(s[off:], w)
		if i < 0 {
			return false
		}
		i += off
		end := i + len(w)
		if (i == 0 || !isIdent(s[i-1])) && (end == len(s) || !isIdent(s[end])) {
			return true
		}
		off = i + 1
	}
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}
