package symbols

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAssignedVariable(t *testing.T) {
	type tc struct {
		line string
		want string // "" when the line assigns nothing
	}
	cCases := []tc{
		{"\tY = malloc(n);", "Y"},
		{"\tdouble *Y = AllocMatrix(n);", "Y"},
		{"\tp->next = calloc(1, sizeof *p);", "p->next"},
		{"\tnodes[i] = new_node();", "nodes[i]"},
		{"\tstruct node *n = malloc(sizeof *n); /* x = y */", "n"},
		{"\tdouble (*A)[N] = malloc(sizeof *A);", "A"},
		{"\tstatic double *buf = NULL;", "buf"},
		{"\tnode_t *head = NULL, *tail = make_node();", "tail"},
		{"\tMatrix m = alloc_matrix(3, 4);", "m"},
		{"\tif ((p = malloc(n)) == NULL)", "p"},
		{"\tif (p == NULL) p = xmalloc(8);", "p"},
		{"\t} else q = malloc(4);", "q"},
		{"\tfor (i = 0; i < n; i++) rows[i] = malloc(n * sizeof *rows[i]);", "rows[i]"},
		{"\t* pp = malloc(4);", "*pp"},
		{"\ts.buf = (char *)malloc(64);", "s.buf"},
		{"\tg->v [ k ] = calloc(k, 8); // grow", "g->v[k]"},
		{"\tstd::vector<int> v = make(3);", "v"},
		{"\treturn malloc(n);", ""},
		{"\tfree(p);", ""},
		{"\tif (a == b) foo(malloc(1));", ""},
		{"\ttotal += compute(x);", ""},
		{"\tprintf(\"a = %d\\n\", f(x));", ""},
		{"\t/* p = malloc(n); */", ""},
		{"", ""},
		{"}", ""},
	}
	goCases := []tc{
		{"\tx := make([]int, n)", "x"},
		{"\tx = &T{}", "x"},
		{"\tn.next = &node{next: head}", "n.next"},
		{"\t\thead = &node{next: head, val: [5]int64{int64(i)}}", "head"},
		{"\tbuf, err := alloc(n)", "buf"},
		{"\tvar m = new(T)", "m"},
		{"\tvar s []int = make([]int, 4)", "s"},
		{"\tm[k] = new(T)", "m[k]"},
		{"\tif p, ok := cache[k]; !ok {", "p"},
		{"\treturn &T{}", ""},
		{"\tfmt.Println(x)", ""},
		{"\tif x == nil {", ""},
		{"\t// y := make([]byte, 8)", ""},
	}
	dir := t.TempDir()
	run := func(name string, cases []tc) {
		var lines []string
		for _, c := range cases {
			lines = append(lines, c.line)
		}
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for i, c := range cases {
			got, ok := AssignedVariable(file, i+1)
			if got != c.want || ok != (c.want != "") {
				t.Errorf("%s: AssignedVariable(%q) = %q, %v; want %q", name, c.line, got, ok, c.want)
			}
		}
	}
	run("prog.c", cCases)
	run("prog.go", goCases)

	// An assignment continued on the next line.
	cont := filepath.Join(dir, "cont.c")
	if err := os.WriteFile(cont, []byte("void f(int n) {\n\tdouble *Z =\n\t\tmalloc(n * sizeof *Z);\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, ok := AssignedVariable(cont, 3); !ok || got != "Z" {
		t.Errorf("continued assignment = %q, %v; want Z", got, ok)
	}
	if got, ok := AssignedVariable(cont, 1); ok {
		t.Errorf("line 1 = %q, want none", got)
	}
	for _, line := range []int{0, -1, 100} {
		if got, ok := AssignedVariable(cont, line); ok {
			t.Errorf("line %d = %q, want none", line, got)
		}
	}
	if got, ok := AssignedVariable(filepath.Join(dir, "missing.c"), 1); ok {
		t.Errorf("missing file = %q, want none", got)
	}
}
