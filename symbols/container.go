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

// maxDeclarationDistance bounds how many lines above its use
// DeclaredType looks for a variable's declaration.
const maxDeclarationDistance = 400

// DeclaredType returns the template type, as the source writes it, with
// which variable name is declared on line or the nearest line above it
// (at most maxDeclarationDistance) of file, when that type is a template
// of class (the class name without its namespaces or arguments, such as
// "map"): `std::map<std::string, int> counts;` → "std::map<std::string,
// int>". ok is false when no such declaration is found (the variable is
// a member, a parameter declared far above, auto, a typedef's).
func DeclaredType(file string, line int, name, class string) (string, bool) {
	lines := sourceLines(file)
	if line < 1 || line > len(lines) || name == "" {
		return "", false
	}
	word := regexp.MustCompile(`>\s*[&*]*\s*\b` + regexp.QuoteMeta(name) + `\s*[;({=,\[]`)
	for l := line; l >= 1 && l > line-maxDeclarationDistance; l-- {
		s := stripComments(lines[l-1], false, true)
		m := word.FindStringIndex(s)
		if m == nil {
			continue
		}
		t, ok := templateBefore(s[:m[0]+1])
		if !ok {
			continue // `a > name[i]`, `p->name(`: no declaration
		}
		base := t[:strings.IndexByte(t, '<')]
		if base[strings.LastIndex(base, ":")+1:] != class {
			return "", false
		}
		return t, true
	}
	return "", false
}

// templateBefore returns the template-id that s ends with (its closing
// '>' last): the name before the matching '<' and the arguments,
// with white space runs made single spaces.
func templateBefore(s string) (string, bool) {
	depth := 0
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case '>':
			depth++
		case '<':
			depth--
			if depth == 0 {
				j := i
				for j > 0 && (isIdent(s[j-1]) || s[j-1] == ':') {
					j--
				}
				if j == i {
					return "", false
				}
				return strings.Join(strings.Fields(s[j:]), " "), true
			}
		}
	}
	return "", false
}
