package symbols

import (
	"strings"
	"testing"
)

func TestReturns(t *testing.T) {
	tests := []struct {
		src   string // the line asked about is marked with @
		goSrc bool
		want  bool
	}{
		{"@\treturn malloc(n);", false, true},
		{"@\treturn (double *)malloc(n * sizeof(double));", false, true},
		{"@\t} else return p ? p : malloc(n);", false, true},
		{"@\tif (n > 0) return calloc(n, 1);", false, true},
		{"\treturn (double *)\n@\t\tmalloc(n);", false, true},
		{"\treturn\n\n@\t\tmalloc(n);", false, true},
		{"\treturn f(a,\n\t\tb,\n@\t\tmalloc(n));", false, true},
		{"@\tuse(malloc(16));", false, false},
		{"\tif (x)\n@\t\tuse(malloc(4));", false, false},
		{"\tx = 1;\n\treturn 0;\n}\nvoid f(void) {\n@\tuse(malloc(4));", false, false},
		{"\treturn 0;\n@\tuse(malloc(4));", false, false},
		{"@\tuse(malloc(4)); /* return */", false, false},
		{"@\tuse(malloc(4)); // return it", false, false},
		{"@\tlog(\"return\", malloc(4));", false, false},
		{"@\treturned = malloc(4);", false, false},
		{"@\tnoreturn(malloc(4));", false, false},
		{"@\treturn make([]int, n)", true, true},
		{"@\treturn &T{}", true, true},
		{"\treturn append(x,\n@\t\tmake([]int, n)...)", true, true},
		{"\treturn\n@\tuse(make([]int, n))", true, false},
		{"@\tuse(make([]int, n)) // return", true, false},
		{"@\tuse(`return`, make([]int, n))", true, false},
	}
	for _, tc := range tests {
		lines := strings.Split(tc.src, "\n")
		line := 0
		for i, l := range lines {
			if strings.HasPrefix(l, "@") {
				line = i + 1
				lines[i] = l[1:]
			}
		}
		if got := returnsAt(lines, line, tc.goSrc); got != tc.want {
			t.Errorf("returnsAt(%q, line %d) = %v, want %v", tc.src, line, got, tc.want)
		}
	}
}
