package profile

import (
	"strconv"
	"strings"
	"unicode"
)

// Printable returns s as it is if every character of it prints and it
// holds no quote or backslash, else s quoted with Go escapes: names that
// come from a profile or a trace (functions, objects, caches) can then go
// into messages without sending control bytes to a terminal.
func Printable(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) || r == '"' || r == '\\' }) < 0 {
		return s
	}
	return strconv.Quote(s)
}

// printableAll applies Printable to each name and joins them with sep.
func printableAll(names []string, sep string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = Printable(n)
	}
	return strings.Join(q, sep)
}
