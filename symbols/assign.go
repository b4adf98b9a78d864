package symbols

import (
	"os"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// sources caches the lines of the source files AssignedVariable read; an
// unreadable file is cached as nil.
var sources struct {
	sync.Mutex
	files map[string][]string
}

func sourceLines(file string) []string {
	sources.Lock()
	defer sources.Unlock()
	if lines, ok := sources.files[file]; ok {
		return lines
	}
	if sources.files == nil {
		sources.files = map[string][]string{}
	}
	var lines []string
	if data, err := os.ReadFile(file); err == nil {
		lines = strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	}
	sources.files[file] = lines
	return lines
}

// AssignedVariable returns the variable that receives the value on a source
// line such as `Y = malloc(n);`, `double *Y = AllocMatrix(n);` (→ "Y"),
// `p->next = calloc(1, sizeof *p);` (→ "p->next"), `nodes[i] = new_node();`
// (→ "nodes[i]"), `if ((p = malloc(n)) == NULL)` (→ "p"), or in Go
// `x := make([]int, n)` and `x = &T{}` (→ "x"). When a line holds several
// assignments, the first whose right-hand side calls a function or builds a
// composite literal wins. A line that only holds the right-hand side of an
// assignment begun on the line before (`double *Y =` / `malloc(n);`) is
// attributed to that assignment. Expressions are returned without blanks.
//
// It reads the file (caching the files it read) and returns ok=false when the
// line does not assign (e.g. `return malloc(n);`) or the file is unreadable.
// Files ending in ".go" are read as Go, others as C or C++.
func AssignedVariable(file string, line int) (name string, ok bool) {
	lines := sourceLines(file)
	if line < 1 || line > len(lines) {
		return "", false
	}
	goSrc := strings.HasSuffix(file, ".go")
	if name, ok := assigned(stripComments(lines[line-1], goSrc, false), goSrc); ok {
		return name, true
	}
	// The line may continue an assignment begun on an earlier line.
	for i := line - 2; i >= 0 && i >= line-4; i-- {
		prev := strings.TrimSpace(stripComments(lines[i], goSrc, false))
		if prev == "" {
			continue
		}
		if strings.HasSuffix(prev, "=") {
			return assigned(prev+" x", goSrc)
		}
		break
	}
	return "", false
}

// stripComments removes // and /* */ comments (within the line) outside
// string and character literals; blank replaces each literal by one space.
func stripComments(s string, goSrc, blank bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\'' || (c == '`' && goSrc):
			j := skipLiteral(s, i)
			if blank {
				b.WriteByte(' ')
			} else {
				b.WriteString(s[i:j])
			}
			i = j - 1
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

// skipLiteral returns the index just past the string or character literal
// starting at s[i].
func skipLiteral(s string, i int) int {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			if q != '`' {
				j++
			}
		case q:
			return j + 1
		}
	}
	return len(s)
}

type assignment struct {
	lhs  string // from the last separator (",", ";", bracket) to the operator
	stmt string // from the statement start (not stopping at ",") to the operator
	rhs  string
}

// assigned finds the assignments of a line and returns the receiving
// variable of the most plausible one.
func assigned(s string, goSrc bool) (string, bool) {
	var as []assignment
	type frame struct{ sep, stmt int } // positions of the last separator and statement start
	stack := []frame{{-1, -1}}
	for i := 0; i < len(s); i++ {
		c := s[i]
		top := &stack[len(stack)-1]
		switch c {
		case '"', '\'', '`':
			if c == '`' && !goSrc {
				continue
			}
			i = skipLiteral(s, i) - 1
		case '(', '[', '{':
			stack = append(stack, frame{i, i})
		case ')', ']', '}':
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			} else {
				top.sep, top.stmt = i, i
			}
		case ';':
			top.sep, top.stmt = i, i
		case ',':
			if !goSrc {
				top.sep = i
			}
		case '=':
			if i+1 < len(s) && s[i+1] == '=' {
				i++
				continue
			}
			lhsEnd := i
			if i > 0 {
				switch s[i-1] {
				case ':':
					if !goSrc {
						continue
					}
					lhsEnd = i - 1
				case '=', '!', '<', '>', '+', '-', '*', '/', '%', '&', '|', '^':
					continue // comparison or compound assignment
				}
			}
			if lhsEnd <= top.sep+1 {
				continue
			}
			as = append(as, assignment{s[top.sep+1 : lhsEnd], s[top.stmt+1 : lhsEnd], rhsOf(s[i+1:], goSrc)})
		}
	}
	best := -1
	for i, a := range as {
		if makesValue(a.rhs) {
			best = i
			break
		}
	}
	if best < 0 && len(as) > 0 {
		best = 0
	}
	if best < 0 {
		return "", false
	}
	if goSrc {
		return goLHS(as[best].lhs)
	}
	return cLHS(as[best].lhs, as[best].stmt)
}

// rhsOf returns the right-hand side starting s: up to a separator or
// closing bracket at its own level.
func rhsOf(s string, goSrc bool) string {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"', '\'', '`':
			if s[i] == '`' && !goSrc {
				continue
			}
			i = skipLiteral(s, i) - 1
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth == 0 {
				return s[:i]
			}
			depth--
		case ';':
			if depth == 0 {
				return s[:i]
			}
		case ',':
			if depth == 0 && !goSrc {
				return s[:i]
			}
		}
	}
	return s
}

// makesValue reports whether a right-hand side calls a function or builds a
// composite literal (rather than copying a value).
func makesValue(rhs string) bool {
	if strings.Contains(rhs, "{") {
		return true
	}
	fields := strings.Fields(rhs)
	if len(fields) > 0 && fields[0] == "new" {
		return true
	}
	for i := 1; i < len(rhs); i++ {
		if rhs[i] == '(' {
			j := i - 1
			for j >= 0 && rhs[j] == ' ' {
				j--
			}
			if j >= 0 && isIdent(rhs[j]) && !keywordBefore(rhs[:j+1]) {
				return true
			}
		}
	}
	return false
}

// keywordBefore reports whether s ends with a keyword that takes a
// parenthesized operand without calling anything.
func keywordBefore(s string) bool {
	for _, k := range []string{"sizeof", "alignof", "_Alignof", "typeof"} {
		if strings.HasSuffix(s, k) && (len(s) == len(k) || !isIdent(s[len(s)-len(k)-1])) {
			return true
		}
	}
	return false
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= utf8.RuneSelf
}

// stripStatementPrefix removes leading keywords and control-statement heads
// ("} else", "if (cond)", "for (...)", Go "for", "var") before an
// assignment's left-hand side.
func stripStatementPrefix(s string, goSrc bool) string {
	for {
		s = strings.TrimSpace(s)
		if strings.HasPrefix(s, "}") || strings.HasPrefix(s, "{") {
			s = s[1:]
			continue
		}
		w := 0
		for w < len(s) && isIdent(s[w]) {
			w++
		}
		switch s[:w] {
		case "if", "while", "for", "switch":
			rest := strings.TrimSpace(s[w:])
			if !goSrc && strings.HasPrefix(rest, "(") {
				end := matchParen(rest)
				if end < 0 {
					return ""
				}
				s = rest[end+1:]
			} else {
				s = rest
			}
		case "else", "do", "return", "var", "go", "defer":
			s = s[w:]
		default:
			return s
		}
	}
}

// matchParen returns the index of the parenthesis closing s[0], or -1.
func matchParen(s string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// goLHS returns the first variable of a Go assignment's left-hand side.
func goLHS(lhs string) (string, bool) {
	isVar := strings.HasPrefix(strings.TrimSpace(lhs), "var ")
	lhs = stripStatementPrefix(lhs, true)
	if isVar {
		// var x T = ...: the first name.
		w := 0
		for w < len(lhs) && isIdent(lhs[w]) {
			w++
		}
		lhs = lhs[:w]
	}
	// "a, b" -> "a"; "x T" (var x T = ...) -> "x".
	depth := 0
	for i := 0; i < len(lhs); i++ {
		switch lhs[i] {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case ',':
			if depth == 0 {
				lhs = lhs[:i]
			}
		case ' ', '\t':
			if depth == 0 && i+1 < len(lhs) && lhs[i+1] != '.' && lhs[i+1] != '[' && lhs[i+1] != ',' {
				if j := strings.TrimSpace(lhs[i:]); j != "" && j[0] != ',' {
					lhs = lhs[:i]
				}
			}
		}
	}
	return cleanExpr(lhs)
}

// cLHS returns the variable of a C or C++ assignment's left-hand side:
// the declared name of a declaration, or the lvalue expression. stmt is
// the whole statement up to the operator, which tells whether a later
// declarator ("int *a = f(), *b = g()") belongs to a declaration.
func cLHS(lhs, stmt string) (string, bool) {
	lhs = stripStatementPrefix(lhs, false)
	stmt = stripStatementPrefix(stmt, false)
	if isDeclaration(lhs) || stmt != lhs && isDeclaration(stmt) {
		name := declaredName(lhs)
		return name, name != ""
	}
	return cleanExpr(lhs)
}

var cTypeWords = map[string]bool{
	"auto": true, "bool": true, "_Bool": true, "char": true, "const": true, "double": true, "enum": true,
	"extern": true, "float": true, "int": true, "long": true, "register": true, "restrict": true,
	"short": true, "signed": true, "static": true, "struct": true, "union": true, "unsigned": true,
	"void": true, "volatile": true, "class": true, "typename": true, "constexpr": true,
	"thread_local": true, "_Thread_local": true, "__thread": true,
}

// isDeclaration reports whether a C left-hand side declares a variable:
// it starts with a type word, or two names stand side by side outside
// brackets ("node_t *n", "Matrix m", "std::vector<int> v"), which no lvalue
// expression does.
func isDeclaration(lhs string) bool {
	w := 0
	for w < len(lhs) && isIdent(lhs[w]) {
		w++
	}
	if cTypeWords[lhs[:w]] {
		return true
	}
	depth := 0
	for i := 1; i < len(lhs); i++ {
		switch lhs[i] {
		case '(', '[':
			depth++
			continue
		case ')', ']':
			depth--
			continue
		case ' ', '\t':
		default:
			continue
		}
		j := i
		for j < len(lhs) && (lhs[j] == ' ' || lhs[j] == '\t') {
			j++
		}
		if depth != 0 || j == len(lhs) {
			i = j - 1
			continue
		}
		prev, next := lhs[i-1], lhs[j]
		if prev == '*' || prev == '&' {
			if strings.Trim(lhs[:i], "*& \t") == "" {
				i = j - 1
				continue // unary operator: "* p"
			}
		}
		if (isIdent(prev) || prev == '*' || prev == '&' || prev == '>' && (i < 2 || lhs[i-2] != '-')) &&
			(isIdent(next) || next == '*' || next == '(' || next == '&') {
			return true
		}
		i = j - 1
	}
	return false
}

// declaredName returns the name a declaration declares: the last name
// outside array bounds and parameter lists.
func declaredName(decl string) string {
	name := ""
	var stack []bool // for each open group: does it hold a declarator?
	skip := func() bool {
		for _, decl := range stack {
			if !decl {
				return true
			}
		}
		return false
	}
	for i := 0; i < len(decl); {
		c := decl[i]
		switch {
		case c == '[' || c == '<':
			stack = append(stack, false)
			i++
		case c == '(':
			rest := strings.TrimLeft(decl[i+1:], " \t")
			stack = append(stack, strings.HasPrefix(rest, "*") || strings.HasPrefix(rest, "&") || strings.HasPrefix(rest, "^"))
			i++
		case c == ']' || c == ')' || c == '>':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			i++
		case isIdent(c):
			j := i
			for j < len(decl) && isIdent(decl[j]) {
				j++
			}
			w := decl[i:j]
			if !skip() && !cTypeWords[w] && !unicode.IsDigit(rune(w[0])) {
				name = w
			}
			i = j
		default:
			i++
		}
	}
	return name
}

// cleanExpr removes blanks from an lvalue expression and checks that it
// looks like one.
func cleanExpr(s string) (string, bool) {
	s = strings.Join(strings.Fields(s), "")
	if s == "" {
		return "", false
	}
	hasIdent := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isIdent(c):
			if !(c >= '0' && c <= '9') {
				hasIdent = true
			}
		case c == '>':
			if i == 0 || s[i-1] != '-' {
				return "", false
			}
		case strings.IndexByte(".-[]*()&+:", c) >= 0:
		default:
			return "", false
		}
	}
	if !hasIdent || !(isIdent(s[0]) || s[0] == '*' || s[0] == '(') || s[0] >= '0' && s[0] <= '9' {
		return "", false
	}
	return s, true
}
