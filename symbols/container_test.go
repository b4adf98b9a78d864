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

// DeclaredType finds a container's template type in its declaration
// above its use, as written, and nothing for another class, a member or
// a comparison.
func TestDeclaredType(t *testing.T) {
	lines := []string{
		`std::map<std::string,   int> counts; // the map`,
		`std::vector<std::uint64_t> values;`,
		`std::vector<std::vector<double>> grid(8, std::vector<double>(4));`,
		`if (n > counts.size()) return;`,
		`counts["k"]++;`,
		`values.push_back(x);`,
		`grid[0].push_back(1.0);`,
		`p->items.reserve(n);`,
		`std::set<int> other;`,
		`auto a = values;`,
		`other.insert(1);`,
	}
	file := filepath.Join(t.TempDir(), "d.cc")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		line        int
		name, class string
		want        string
	}{
		{5, "counts", "map", "std::map<std::string, int>"},
		{6, "values", "vector", "std::vector<std::uint64_t>"},
		{7, "grid", "vector", "std::vector<std::vector<double>>"},
		{2, "values", "vector", "std::vector<std::uint64_t>"}, // the declaration's own line
		{8, "items", "vector", ""},                            // a member, declared elsewhere
		{5, "counts", "set", ""},                              // declared as another class
		{11, "other", "set", "std::set<int>"},
		{10, "a", "vector", ""},   // auto
		{40, "counts", "map", ""}, // past the end
	} {
		got, ok := DeclaredType(file, tc.line, tc.name, tc.class)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("line %d, %s (%s): %q, %v; want %q", tc.line, tc.name, tc.class, got, ok, tc.want)
		}
	}
}
