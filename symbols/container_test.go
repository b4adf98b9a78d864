package symbols

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ContainerVariable finds the container a line uses through a method.
func TestContainerVariable(t *testing.T) {
	lines := []string{
		`counts["k" + std::to_string(x)]++; // a map`,
		`	values.push_back(x >> 11);`,
		`p->items.reserve(n);`,
		`std::vector<double> w(5000);`,
		`std::map<int, int> *m = new std::map<int, int>();`,
		`if (v.empty()) return;`,
		`x = compute("a.push_back(b)");`,
		`for (auto &e : table[i]) sum += e;`,
	}
	file := filepath.Join(t.TempDir(), "c.cc")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		line          int
		class, method string
		want          string
	}{
		{1, "std::map", "operator[]", "counts"},
		{2, "std::vector", "push_back", "values"},
		{3, "std::vector", "reserve", "items"},
		{4, "std::vector", "vector", "w"},
		{5, "std::map", "map", ""},          // no variable declared with arguments
		{6, "std::vector", "push_back", ""}, // another method
		{7, "std::vector", "push_back", ""}, // inside a string literal
		{8, "std::vector", "operator[]", "table"},
		{9, "std::vector", "push_back", ""}, // past the end
	} {
		got, ok := ContainerVariable(file, tc.line, tc.class, tc.method)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("line %d, %s::%s: %q, %v; want %q", tc.line, tc.class, tc.method, got, ok, tc.want)
		}
	}
}
