package symbols

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestShortName(t *testing.T) {
	for _, c := range []struct{ name, short, full string }{
		{"_ZSt29_Rb_tree_insert_and_rebalancebPSt18_Rb_tree_node_baseS0_RS_", "std::_Rb_tree_insert_and_rebalance",
			"std::_Rb_tree_insert_and_rebalance(bool, std::_Rb_tree_node_base*, std::_Rb_tree_node_base*, std::_Rb_tree_node_base&)"},
		{"_ZSt29_Rb_tree_insert_and_rebalancebPSt18_Rb_tree_node_baseS0_RS_@plt", "std::_Rb_tree_insert_and_rebalance@plt",
			"std::_Rb_tree_insert_and_rebalance(bool, std::_Rb_tree_node_base*, std::_Rb_tree_node_base*, std::_Rb_tree_node_base&)@plt"},
		{"_ZNSt6vectorIiSaIiEE9push_backERKi", "std::vector::push_back", "std::vector<int, std::allocator<int> >::push_back(int const&)"},
		{"_Z5twicei", "twice", "twice(int)"},
		{"_Z5twiced", "twice", "twice(double)"},
		{"_ZN3Foo3runEv.cold", "Foo::run", "Foo::run() [clone .cold]"},
		{"_ZNSo3putEc@@GLIBCXX_3.4", "std::ostream::put@@GLIBCXX_3.4", "std::ostream::put(char)@@GLIBCXX_3.4"},
		{"_ZN3geo5tableE", "geo::table", "geo::table"},
		{"_ZTV3Foo", "vtable for Foo", "vtable for Foo"},
		{"_ZN4core3fmt9Formatter3pad17h0123456789abcdefE", "core::fmt::Formatter::pad", "core::fmt::Formatter::pad"},
		// Valgrind's replacements and wrappers: the function they stand for.
		{"_vgr10030ZU_VgSoSynsomalloc__Znwm", "operator new", "operator new(unsigned long)"},
		{"_vgr10010ZU_libcZdsoZa_malloc", "malloc", ""},
		{"_vgw00000ZZ_libcZdsoZa_pthreadZumutexZulock", "pthread_mutex_lock", ""},
		// Everything else stays as it is.
		{"main", "main", ""},
		{"puts@plt", "puts@plt", ""},
		{"pthread_mutex_lock@@GLIBC_2.2.5", "pthread_mutex_lock@@GLIBC_2.2.5", ""},
		{"main.main", "main.main", ""},
		{"_Zfoo", "_Zfoo", ""},
		{"_Rx", "_Rx", ""},
		{"_vgr10030ZU_nounderscore", "_vgr10030ZU_nounderscore", ""},
		{"_vgw00000ZZ_libc_badZ", "_vgw00000ZZ_libc_badZ", ""},
		{"_vgrABCDEZU_libc_malloc", "_vgrABCDEZU_libc_malloc", ""},
	} {
		if got := shortName(c.name); got != c.short {
			t.Errorf("shortName(%q) = %q, want %q", c.name, got, c.short)
		}
		if got := fullName(c.name); got != c.full {
			t.Errorf("fullName(%q) = %q, want %q", c.name, got, c.full)
		}
	}
}

// cxxProg has a class member, overloads, two instantiations of a template,
// a variable in a namespace and calls into libstdc++ through the PLT.
const cxxProg = `#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

namespace geo {
int table[64];
struct Grid {
	double cells[16];
	__attribute__((noinline)) double sum() const;
};
double Grid::sum() const { double s = 0; for (double c : cells) s += c; return s; }
}

__attribute__((noinline)) int twice(int x) { return 2 * x; }
__attribute__((noinline)) double twice(double x) { return 2 * x; }

template <typename T> __attribute__((noinline)) T biggest(const std::vector<T> &v)
{
	return *std::max_element(v.begin(), v.end());
}

int main(int argc, char **argv)
{
	std::map<int, int> m;
	for (int i = 0; i < argc + 10; i++)
		m[i * 7 % 11] = i;
	std::vector<int> vi(m.size(), argc);
	std::vector<double> vd(3, 1.5);
	geo::Grid g{};
	geo::table[argc] = argc;
	std::printf("%d %f %d %f %f\n", twice(argc), twice(1.5 * argc), biggest(vi), biggest(vd), g.sum());
	return 0;
}
`

// TestCPlusPlus checks that C++ functions, PLT entries and variables get
// demangled short names, from DWARF linkage names and from the symbol
// table alike, and that Signature tells overloads and instantiations
// apart.
func TestCPlusPlus(t *testing.T) {
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ not installed")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "prog.cc")
	if err := os.WriteFile(src, []byte(cxxProg), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, debug := range []string{"-g", "-g0"} {
		t.Run(debug, func(t *testing.T) {
			path := filepath.Join(dir, "prog"+debug)
			if msg, err := exec.Command("g++", "-O2", debug, "-o", path, src).CombinedOutput(); err != nil {
				t.Fatalf("g++: %v\n%s", err, msg)
			}
			b := timedOpen(t, path)
			for _, c := range []struct{ sym, name, sig string }{
				{"_ZNK3geo4Grid3sumEv", "geo::Grid::sum", "geo::Grid::sum() const"},
				{"_Z5twicei", "twice", "twice(int)"},
				{"_Z5twiced", "twice", "twice(double)"},
				{"_Z7biggestIiET_RKSt6vectorIS0_SaIS0_EE", "biggest", "int biggest<int>(std::vector<int, std::allocator<int> > const&)"},
				{"_Z7biggestIdET_RKSt6vectorIS0_SaIS0_EE", "biggest", "double biggest<double>(std::vector<double, std::allocator<double> > const&)"},
				{"main", "main", ""},
			} {
				addr, _ := elfSym(t, path, c.sym)
				if name, entry, _, ok := b.Func(addr + 1); !ok || name != c.name || entry != addr {
					t.Errorf("Func(%s+1) = %q %#x %v, want %q %#x", c.sym, name, entry, ok, c.name, addr)
				}
				if got := b.Signature(addr + 1); got != c.sig {
					t.Errorf("Signature(%s+1) = %q, want %q", c.sym, got, c.sig)
				}
			}
			if _, ok := findGlobal(b.Globals(), "geo::table"); !ok {
				t.Error("no global geo::table")
			}
			plt := false
			for i, name := range b.funcName {
				if strings.Contains(name, "_Z") {
					t.Errorf("function %q at %#x is not demangled", name, b.funcs.lo[i])
				}
				plt = plt || name == "std::_Rb_tree_insert_and_rebalance@plt"
				for _, f := range b.Frames(b.funcs.lo[i]) {
					if strings.Contains(f.Func, "_Z") {
						t.Errorf("frame %q at %#x is not demangled", f.Func, b.funcs.lo[i])
					}
				}
			}
			if !plt {
				t.Error("no PLT entry std::_Rb_tree_insert_and_rebalance@plt")
			}
			for _, g := range b.Globals() {
				if strings.HasPrefix(g.Name, "_Z") {
					t.Errorf("global %q is not demangled", g.Name)
				}
			}
		})
	}
}

// FuzzShortName checks that any name demangles without a panic, and that
// names neither mangled nor Valgrind's stay as they are.
func FuzzShortName(f *testing.F) {
	for _, s := range []string{"_ZNSt6vectorIiSaIiEE9push_backERKi", "_Z5twicei@plt", "_vgw00000ZZ_libcZdsoZa_pthreadZumutexZulock", "main", "_RNvCs15kBYyAo9fc_7mycrate7example"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		short, full := shortName(name), fullName(name)
		base, _ := splitSuffix(name)
		if _, ok := valgrindFunc(base); !ok && !mangled(base) && (short != name || full != "") {
			t.Errorf("shortName(%q) = %q, fullName = %q: want it unchanged", name, short, full)
		}
	})
}
