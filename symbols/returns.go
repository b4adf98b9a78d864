package symbols

import "strings"

// ReturnsValue reports whether the statement holding a source line returns
// the value computed there: the line holds the keyword "return", or
// continues (over at most three lines) a statement begun on a line that
// does, as in `return (double *)` / `malloc(n);`. readable is false when
// the file cannot be read or has no such line. Files are read and cached
// as by AssignedVariable.
func ReturnsValue(file string, line int) (returns, readable bool) {
	src := sourceLines(file)
	if line < 1 || line > len(src) {
		return false, false
	}
	return returnsAt(src, line, strings.HasSuffix(file, ".go")), true
}

// maxFuncLines bounds how far ReturnsVariable looks for the end of a
// function.
const maxFuncLines = 200

// ReturnsVariable reports whether the function holding a source line
// returns variable v: a later line, before the function's closing brace (a
// line starting with "}"), is `return v;` (or `return v` in Go). This is
// the wrapper that assigns an allocation to a local and hands it back.
func ReturnsVariable(file string, line int, v string) bool {
	src := sourceLines(file)
	goSrc := strings.HasSuffix(file, ".go")
	for i := max(line, 0); i < len(src) && i < line+maxFuncLines; i++ {
		if strings.HasPrefix(src[i], "}") {
			return false
		}
		code := strings.TrimSpace(stripComments(src[i], goSrc, true))
		if rest, ok := strings.CutPrefix(code, "return"); ok {
			rest = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), ";"))
			if rest == v {
				return true
			}
		}
	}
	return false
}

// returnsAt is ReturnsValue on the lines of a file (line is 1-based).
func returnsAt(src []string, line int, goSrc bool) bool {
	code := func(i int) string { return stripComments(src[i], goSrc, true) }
	for i := line - 1; i >= 0 && i >= line-4; i-- {
		if hasWord(code(i), "return") {
			return true
		}
		// Does line i continue a statement begun on an earlier line?
		j := i - 1
		for j >= 0 && strings.TrimSpace(code(j)) == "" {
			j--
		}
		if j < 0 {
			return false
		}
		prev := strings.TrimSpace(code(j))
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
