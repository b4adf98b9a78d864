package symbols

import (
	"regexp"
	"strings"
)

// ContainerVariable returns the variable that a C++ source line uses
// through method of a library class (a standard container's, as the
// innermost frames of an allocation show them): with "operator[]", the
// expression indexed (`counts["k"]++` → "counts"); with another method,
// the object it is called on (`v.push_back(x)`, `p->items.reserve(n)` →
// "v", "items"); with the class's own name, a constructor, the variable
// declared (`std::vector<double> v(n);` → "v"). ok is false when the line
// holds no such use, or cannot be read.
func ContainerVariable(file string, line int, class, method string) (name string, ok bool) {
	lines := sourceLines(file)
	if line < 1 || line > len(lines) || method == "" {
		return "", false
	}
	s := stripComments(lines[line-1], false, true) // literals blanked
	var re *regexp.Regexp
	switch short := class[strings.LastIndex(class, ":")+1:]; method {
	case "operator[]":
		re = indexRE
	case short:
		re = declaredRE
	default:
		re = regexp.MustCompile(`([A-Za-z_]\w*)\s*(?:\.|->)\s*(?:template\s+)?` + regexp.QuoteMeta(method) + `\s*[(<]`)
	}
	for _, m := range re.FindAllStringSubmatch(s, -1) {
		if v := m[1]; !cKeywords[v] && !cTypeWords[v] {
			return v, true
		}
	}
	return "", false
}

var (
	// indexRE finds an identifier indexed: `name[`.
	indexRE = regexp.MustCompile(`([A-Za-z_]\w*)\s*\[`)
	// declaredRE finds a variable declared with arguments after a type
	// (one ending in a name or a template's '>'): `> v(`, `Foo v{`.
	declaredRE = regexp.MustCompile(`(?:>|\w)\s*[&*]*\s+([A-Za-z_]\w*)\s*[({]`)
)

// cKeywords are statement keywords a pattern above might take for a
// variable.
var cKeywords = map[string]bool{
	"if": true, "for": true, "while": true, "switch": true, "return": true, "sizeof": true,
	"new": true, "delete": true, "do": true, "else": true, "case": true,
}
