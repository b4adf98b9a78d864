package symbolize

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/memspy/memspy/sim"
	"github.com/memspy/memspy/symbols"
)

// HeapName names the heap blocks allocated through site, a call path of
// return addresses, innermost first, whose first entry returns into the
// function that called the allocation routine, as the type whose
// descriptor is at run-time address typ (Go's; 0: unknown). Each return
// address is looked up at the address before it, inside the call
// instruction, and expands into the source frames there (inlined calls
// included).
//
// The short name is the variable that receives the pointer: the left-hand
// side on the allocation line (`Y = malloc(n)` → "Y", see
// [symbols.AssignedVariable]). When that line returns the pointer instead
// (`return malloc(n);` in a wrapper such as AllocMatrix), the name is
// looked for on the caller's line, and so on outwards, so that
// `double *Y = AllocMatrix(n);` names the blocks "Y". Frames without a
// line or with unreadable source (libraries without debugging information,
// such as strdup in libc) are passed through the same way. When no
// variable is found, the name is "heap@file:line" of the innermost frame
// with a line (file as a base name), else "heap@func".
//
// A variable assigned the pointer and then returned by its function (the
// wrapper `m = malloc(n); if (!m) abort(); return m;`) counts as a return:
// the name is looked for in the caller.
//
// A Go allocation (site begins in the Go runtime, with the function that
// called runtime.mallocgc; or typ is known) is named from the frames after
// the runtime's, walking out of the standard library as out of C's system
// headers, with its type when typ names one (see [symbols.Space.GoType]):
// "values ([]uint64)" for a variable, else "main.go:42 []int" (an array
// when the runtime function that called mallocgc allocates one:
// makeslice, growslice, newarray; "string" or "[]uint8" for the runtime's
// functions that allocate those without a type), and without a type as
// C's blocks are named.
//
// A mapping the Go runtime made (site begins in its functions that map
// memory from the system: see goMapping) is named after what it is for:
// "<Go heap arena>", "<Go persistentalloc>"... Its name, and that of a Go
// allocation with no frame in the program's own code (the runtime's and
// the standard library's own: "mp (runtime.mPadded)"), stands for the
// blocks of every call path given it (h.ByName): which of the runtime's
// paths led there tells the program nothing.
//
// The path is the whole call path, outermost first, one "func.line" per
// source frame (joined with the name: "main.42.AllocMatrix.17.Y", main's
// line 42 called AllocMatrix, whose line 17 called the allocator). A frame
// without a line is just "func"; one in no known function is its module
// and offset ("libfoo.so+0x11a3", or the address in hex outside every
// module). The site (At) is the innermost line of the program's own,
// after the Go runtime's frames and out of the system's headers (and of
// Go's standard library), else the innermost line. ok is false when no
// frame of site is known at all.
func (s *Symbolizer) HeapName(site []uint64, typ uint64) (h sim.HeapSite, ok bool) {
	var frames []siteFrame // innermost first
	for _, ra := range site {
		fs := s.space.Frames(ra - 1)
		if fs == nil {
			frames = append(frames, siteFrame{ra: ra})
			continue
		}
		ok = true
		for _, f := range fs {
			frames = append(frames, siteFrame{ra: ra, Frame: f})
		}
	}
	if !ok {
		return sim.HeapSite{}, false
	}
	if name, at, ok := goMapping(frames); ok {
		h.Name, h.At, h.ByName = name, at, true
	} else if g, ok := goAllocation(frames); ok || typ != 0 {
		h.Name, h.At, h.ByName = s.goName(frames, g, typ)
	} else {
		h.Name, h.At = s.shortName(frames), siteLine(frames, nil)
	}
	for i := len(frames) - 1; i >= 0; i-- {
		f := &frames[i]
		elem := s.place(f.ra)
		if f.Func != "" {
			elem = f.Func
		}
		if f.Line > 0 {
			elem += "." + strconv.Itoa(f.Line)
		}
		h.Path = append(h.Path, elem)
	}
	return h, true
}

// siteFrame is one source frame of an allocation site.
type siteFrame struct {
	ra uint64 // the return address it came from
	symbols.Frame
}

// place names the return address ra of a frame no function covers: by
// its module and offset ("libfoo.so+0x1a2b", see Place), or in hex when no
// module holds it.
func (s *Symbolizer) place(ra uint64) string {
	if name, ok := s.Place(ra); ok {
		return name
	}
	return fmt.Sprintf("%#x", ra)
}

// libraryHeaders are the directories of the system's headers: a frame
// there is a library's template or inline code compiled into the program
// (the C++ standard library's containers), not the program's own.
var libraryHeaders = []string{"/usr/include/", "/usr/lib/gcc/", "/usr/local/include/"}

func inLibraryHeader(file string) bool {
	for _, dir := range libraryHeaders {
		if strings.HasPrefix(file, dir) {
			return true
		}
	}
	return false
}

// goAlloc is what the frames of a Go allocation's call path tell.
type goAlloc struct {
	runtime int    // how many frames, innermost first, are the Go runtime's
	root    string // the Go installation's source directory ("/usr/local/go/src/"), "" when unknown
}

// goAllocation reports whether frames, a call path innermost first, is a
// Go allocation's: its first frame is the Go runtime's (mallocgc's
// callers newobject, makeslice, growslice, the maps, ...; see inRuntime).
func goAllocation(frames []siteFrame) (goAlloc, bool) {
	var g goAlloc
	for _, f := range frames {
		for _, dir := range []string{"/src/runtime/", "/src/internal/runtime/"} {
			if i := strings.LastIndex(f.File, dir); i >= 0 && strings.HasSuffix(f.File, ".go") {
				g.root = f.File[:i+len("/src/")]
				break
			}
		}
		if g.root != "" || !g.inRuntime(f) {
			break
		}
	}
	for g.runtime < len(frames) && g.inRuntime(frames[g.runtime]) {
		g.runtime++
	}
	return g, g.runtime > 0
}

// inRuntime reports whether f is a frame of the Go runtime: a function of
// package runtime or internal/runtime/..., or one whose source is there
// (the runtime's functions linked into other packages: reflect.unsafe_New).
func (g goAlloc) inRuntime(f siteFrame) bool {
	if strings.HasPrefix(f.Func, "runtime.") || strings.HasPrefix(f.Func, "internal/runtime/") {
		return true
	}
	rel, ok := strings.CutPrefix(f.File, g.root)
	return ok && strings.HasSuffix(rel, ".go") && (strings.HasPrefix(rel, "runtime/") || strings.HasPrefix(rel, "internal/runtime/"))
}

// goSystemMemory reports whether fn is one of the Go runtime's functions
// that map memory from the system for the rest of it: its mmap and the
// layer above it, named "sys" and a capital (sysMmap, sysAlloc,
// sysAllocOS, sysReserve, sysReserveAligned, sysMap, sysMapOS... across
// Go's versions; not sysmon).
func goSystemMemory(fn string) bool {
	rest, ok := strings.CutPrefix(fn, "runtime.")
	if !ok {
		return false
	}
	if rest == "mmap" {
		return true
	}
	rest, ok = strings.CutPrefix(rest, "sys")
	return ok && rest != "" && rest[0] >= 'A' && rest[0] <= 'Z'
}

// goMappers name the mappings of the Go runtime's functions that ask for
// memory from the system (see goMapping).
var goMappers = map[string]string{
	// Chunks of the runtime's metadata that is never freed (spans,
	// mcaches, itabs, special records...): Go's own allocator of it.
	"runtime.persistentalloc1": "<Go persistentalloc>",
	// The heap: reserved an arena (64 MiB) at a time, made usable as it
	// grows; its spans hold the heap's blocks, their mark bits and the
	// goroutines' stacks.
	"runtime.(*mheap).sysAlloc": "<Go heap arena>",
	"runtime.(*mheap).grow":     "<Go heap arena>",
	// The page allocator's summaries and bitmaps, and its scavenger's
	// index.
	"runtime.(*pageAlloc).sysInit":     "<Go page allocator>",
	"runtime.(*pageAlloc).sysGrow":     "<Go page allocator>",
	"runtime.(*pageAlloc).grow":        "<Go page allocator>",
	"runtime.(*scavengeIndex).sysInit": "<Go page allocator>",
	"runtime.(*scavengeIndex).sysGrow": "<Go page allocator>",
	// The spans' mark and allocation bits.
	"runtime.newArenaMayUnlock": "<Go GC bits>",
	// The table of every span.
	"runtime.recordspan": "<Go allspans>",
	// The memory profile's buckets.
	"runtime.stkbucket": "<Go memory profile>",
}

// goMapping names a mapping the Go runtime made: frames, innermost first,
// begin in its functions that get memory from the system
// (goSystemMemory); the first frame after them is the function that
// asked for it, which tells what it is for (goMappers: "<Go heap
// arena>"), else is named itself ("<Go runtime.f>"). at is that frame's
// line. ok is false for frames of anything else.
func goMapping(frames []siteFrame) (name, at string, ok bool) {
	if len(frames) == 0 || !goSystemMemory(frames[0].Func) {
		return "", "", false
	}
	i := 1
	for i < len(frames) && goSystemMemory(frames[i].Func) {
		i++
	}
	if i == len(frames) || frames[i].Func == "" {
		return "<Go mmap>", siteLine(frames, nil), true
	}
	name, ok = goMappers[frames[i].Func]
	if !ok {
		name = "<Go " + frames[i].Func + ">"
	}
	return name, siteLine(frames[i:], nil), true
}

// goArrays are the Go runtime's functions whose call of mallocgc
// allocates an array of the type it passes.
var goArrays = map[string]bool{
	"runtime.makeslice": true, "runtime.makeslicecopy": true, "runtime.growslice": true, "runtime.newarray": true,
}

// goUntyped are the types of what the Go runtime's functions that call
// mallocgc without a type allocate: the bytes of strings and byte slices
// (growslice's elements without pointers come without a type, whatever
// they are).
var goUntyped = map[string]string{
	"runtime.rawstring": "string", "runtime.slicebytetostring": "string",
	"runtime.rawbyteslice": "[]uint8", "runtime.gobytes": "[]uint8", "internal/bytealg.MakeNoZero": "[]uint8",
	"runtime.rawruneslice": "[]int32",
}

// goName names a Go allocation (see HeapName): from the frames after the
// runtime's, with the standard library's frames passed through, and the
// type at typ. The runtime's own allocations (no frame after the
// runtime's has a source file) are named from the frames after the one
// that called mallocgc, the runtime's code taken as the program's.
// byName is set when no frame is the program's (sim.HeapSite.ByName): the
// name then stands for the blocks of every call path given it.
func (s *Symbolizer) goName(frames []siteFrame, g goAlloc, typ uint64) (name, at string, byName bool) {
	name, typed := goUntyped[frames[0].Func]
	if typ != 0 {
		name, typed = s.space.GoType(typ)
		if typed && goArrays[frames[0].Func] {
			name = "[]" + name
		}
	}
	own := frames[g.runtime:]
	std := func(f siteFrame) bool { return g.root != "" && strings.HasPrefix(f.File, g.root) }
	byName = !slices.ContainsFunc(own, func(f siteFrame) bool { return f.File != "" && !std(f) })
	if !slices.ContainsFunc(own, func(f siteFrame) bool { return f.File != "" }) {
		own, std = frames[min(1, len(frames)-1):], nil
	}
	v, at := s.variable(own, std), siteLine(own, std)
	switch {
	case v != "" && typed:
		return v + " (" + name + ")", at, byName
	case v != "":
		return v, at, byName
	case typed:
		return s.site(own, std) + " " + name, at, byName
	}
	return "heap@" + s.site(own, std), at, byName
}

// shortName finds the variable receiving the pointer (see variable),
// else names the blocks "heap@" and their site (see site).
func (s *Symbolizer) shortName(frames []siteFrame) string {
	if v := s.variable(frames, nil); v != "" {
		return v
	}
	return "heap@" + s.site(frames, nil)
}

// variable finds the variable receiving the pointer, walking outwards
// while lines return it (or tell nothing) and through the library code
// inlined from system headers (and the frames library tells, if not
// nil): the first line of the program's own that assigns it names it;
// one that uses a container's method through which the allocation came
// names the container ("counts (std::map<std::string, int> node)"). It
// returns "" when no line names it.
func (s *Symbolizer) variable(frames []siteFrame, library func(siteFrame) bool) string {
	local := ""           // a variable the function returns, if no caller names it
	var method *siteFrame // the outermost library frame within the frame at hand
	for i, f := range frames {
		if f.File == "" || f.Line <= 0 {
			continue
		}
		if inLibraryHeader(f.File) || library != nil && library(f) {
			method = &frames[i]
			continue
		}
		li := s.lineInfo(f.File, f.Line)
		if li.name != "" {
			if !symbols.ReturnsVariable(f.File, f.Line, li.name) {
				return li.name
			}
			if local == "" {
				local = li.name
			}
			method = nil
			continue
		}
		if method != nil {
			if name, ok := containerName(f, method.Func); ok {
				return name
			}
		}
		method = nil
		if !li.readable || li.returns {
			continue
		}
		break
	}
	return local
}

// site names where blocks were allocated: "file:line" (file as a base
// name) of the innermost line of the program's own, outside the system
// headers and the frames library tells (of any line when there is none),
// else the innermost function, else the module and offset
// ("libfoo.so+0x1a3").
func (s *Symbolizer) site(frames []siteFrame, library func(siteFrame) bool) string {
	if at := siteLine(frames, library); at != "" {
		return at
	}
	for _, f := range frames {
		if f.Func != "" {
			return f.Func
		}
	}
	return s.place(frames[0].ra)
}

// siteLine returns "file:line" of the first frame with a line that is the
// program's own (outside the system's library headers, and the frames
// library tells, if not nil), else of the first frame with a line; "" when
// none has one.
func siteLine(frames []siteFrame, library func(siteFrame) bool) string {
	for _, own := range []bool{true, false} {
		for _, f := range frames {
			if f.File != "" && f.Line > 0 && (!own || !inLibraryHeader(f.File) && (library == nil || !library(f))) {
				return fmt.Sprintf("%s:%d", filepath.Base(f.File), f.Line)
			}
		}
	}
	return ""
}

// nodeContainers allocate a node per element; the other containers of the
// C++ standard library allocate a buffer.
var nodeContainers = map[string]bool{
	"map": true, "multimap": true, "set": true, "multiset": true, "list": true, "forward_list": true,
	"unordered_map": true, "unordered_multimap": true, "unordered_set": true, "unordered_multiset": true,
}

// containerName names the blocks a C++ library class's method (fn, such
// as "std::map::operator[]") allocated on f's line after the variable it
// is used through, with the class (as the variable's declaration writes
// it, when found above) and what the blocks are to it: "counts
// (std::map<std::string, int> node)", "v (std::vector<double> buffer)".
func containerName(f siteFrame, fn string) (string, bool) {
	cut := strings.LastIndex(fn, "::")
	if cut < 0 {
		return "", false
	}
	class, method := fn[:cut], fn[cut+2:]
	v, ok := symbols.ContainerVariable(f.File, f.Line, class, method)
	if !ok {
		return "", false
	}
	what := "buffer"
	if nodeContainers[strings.TrimPrefix(class, "std::")] {
		what = "node"
	}
	// The container's type as its declaration writes it, template
	// arguments and all, when found.
	typ := class
	if t, ok := symbols.DeclaredType(f.File, f.Line, v, class[strings.LastIndex(class, ":")+1:]); ok {
		typ = t
	}
	if !strings.HasPrefix(class, "std::") {
		return fmt.Sprintf("%s (%s)", v, typ), true
	}
	return fmt.Sprintf("%s (%s %s)", v, typ, what), true
}

type fileLine struct {
	file string
	line int
}

// lineInfo is what a source line does with the value of a call on it.
type lineInfo struct {
	name     string // the variable it assigns, if any
	returns  bool   // it returns the value
	readable bool   // the line could be read
}

// lineInfo reads and classifies a source line, once per file and line.
func (s *Symbolizer) lineInfo(file string, line int) lineInfo {
	k := fileLine{file, line}
	if li, ok := s.lines[k]; ok {
		return li
	}
	var li lineInfo
	if li.returns, li.readable = symbols.ReturnsValue(file, line); li.readable {
		li.name, _ = symbols.AssignedVariable(file, line)
	}
	s.lines[k] = li
	return li
}
