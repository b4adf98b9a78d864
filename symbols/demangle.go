package symbols

import (
	"strings"

	"github.com/ianlancetaylor/demangle"
)

// Names of functions and variables. A C++ (Itanium ABI) or Rust name in
// a symbol table or a DWARF linkage name is mangled ("_Z…", "_R…"); memspy
// shows it demangled in a short form, as pprof does by default: without
// parameter lists, template arguments or clone suffixes
// ("std::_Rb_tree_insert_and_rebalance", "std::vector::_M_realloc_insert",
// "Foo::run" for "_ZN3Foo3runEv.cold"). The short form reads like the
// source, fits a table and keeps the hot and cold parts of a function
// together; functions that only their parameters or template arguments
// tell apart (overloads, instantiations of a template) share it, and
// Signature gives the full form that tells them apart where it matters
// (two procedures of one profile with the same short name). A mangled
// name that does not demangle stays as it is, and so does every other
// name (C, Go).
//
// Valgrind's replacement and wrapper functions, which memspy run preloads
// (its allocator, its synchronization wrappers) and to which Valgrind
// redirects the program's calls, have Z-encoded names naming the function
// they stand for: "_vgr10030ZU_VgSoSynsomalloc__Znwm" replaces
// "_Znwm" (operator new) of the malloc library. They are named after that
// function ("operator new"), in the module of memspy's preload, which
// tells them apart from the function itself where both run.

// shortName returns the name memspy shows for the symbol or linkage name
// name: demangled in the short form when mangled, with a version or PLT
// suffix ("@@GLIBCXX_3.4", "@plt") kept.
func shortName(name string) string {
	base, suffix := splitSuffix(name)
	if fn, ok := valgrindFunc(base); ok {
		base = fn
	}
	if !mangled(base) {
		return base + suffix
	}
	return demangle.Filter(base, demangle.NoParams, demangle.NoTemplateParams, demangle.NoEnclosingParams) + suffix
}

// fullName returns the mangled name name demangled in full, with
// parameter types, template arguments and clone suffixes, or "" when name
// is not mangled or does not demangle.
func fullName(name string) string {
	base, suffix := splitSuffix(name)
	if fn, ok := valgrindFunc(base); ok {
		base = fn
	}
	if !mangled(base) {
		return ""
	}
	s, err := demangle.ToString(base)
	if err != nil {
		return ""
	}
	return s + suffix
}

// linkOf returns name when shortName leaves out part of it (a mangled or
// Valgrind-encoded name), for Signature; else "".
func linkOf(name string) string {
	base, _ := splitSuffix(name)
	if _, ok := valgrindFunc(base); ok || mangled(base) {
		return name
	}
	return ""
}

// valgrindFunc returns the function that a Valgrind replacement or
// wrapper function stands for, from its name: "_vgr" or "_vgw", five
// digits, "ZU" (the function's name as it is) or "ZZ" (Z-encoded), "_",
// the Z-encoded soname pattern, "_", the function's name.
func valgrindFunc(name string) (string, bool) {
	const prefix = len("_vgr00000ZU_")
	if len(name) <= prefix || name[0] != '_' || name[1:3] != "vg" || name[3] != 'r' && name[3] != 'w' ||
		name[9] != 'Z' || name[10] != 'U' && name[10] != 'Z' || name[11] != '_' {
		return "", false
	}
	for _, c := range name[4:9] {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	i := strings.IndexByte(name[prefix:], '_')
	if i < 0 || prefix+i+1 == len(name) {
		return "", false
	}
	fn := name[prefix+i+1:]
	if name[10] == 'U' {
		return fn, true
	}
	return zDecode(fn)
}

// zDecodes are the characters of Valgrind's Z-encoding, by the letter
// after a 'Z'.
var zDecodes = map[byte]byte{'a': '*', 'p': '+', 'c': ':', 'd': '.', 'u': '_', 'h': '-', 's': ' ',
	'A': '@', 'Z': 'Z', 'L': '(', 'R': ')', 'S': '/'}

// zDecode decodes a Z-encoded name; ok is false when it is not one.
func zDecode(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != 'Z' {
			b.WriteByte(s[i])
			continue
		}
		if i++; i == len(s) {
			return "", false
		}
		c, ok := zDecodes[s[i]]
		if !ok {
			return "", false
		}
		b.WriteByte(c)
	}
	return b.String(), true
}

// mangled reports whether name looks like a C++ or Rust mangled name.
func mangled(name string) bool {
	return strings.HasPrefix(name, "_Z") || strings.HasPrefix(name, "_R")
}

// splitSuffix splits a symbol name from its "@…" suffix, which no mangled
// or Z-encoded name contains: a symbol version or the "@plt" of a PLT
// entry.
func splitSuffix(name string) (base, suffix string) {
	if i := strings.IndexByte(name, '@'); i > 0 {
		return name[:i], name[i:]
	}
	return name, ""
}
