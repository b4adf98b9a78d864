package symbolize

import (
	"cmp"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// prefetchers is how many object files Prefetch reads at a time.
const prefetchers = 2

// prefetch is the queue of files Prefetch was asked to read and not yet
// taken, and how many goroutines take them.
var prefetch struct {
	sync.Mutex
	asked   map[string]bool
	queue   []string
	workers int
}

// Prefetch starts reading the symbols of the object files at paths in
// the background, prefetchers at a time in the order asked (of one call's
// paths, the largest files first: they take longest), so that the Map of
// one finds them read, or waits for the rest of a read already under
// way, instead of reading them on the engine's goroutine. A path asked
// for before is not read again. What is read is what Map would read: the
// process keeps it (see binaries).
func Prefetch(paths ...string) {
	size := map[string]int64{}
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil {
			size[p] = fi.Size()
		}
	}
	paths = slices.Clone(paths)
	slices.SortStableFunc(paths, func(a, b string) int { return cmp.Compare(size[b], size[a]) })
	q := &prefetch
	q.Lock()
	defer q.Unlock()
	if q.asked == nil {
		q.asked = map[string]bool{}
	}
	for _, p := range paths {
		if !q.asked[p] {
			q.asked[p] = true
			q.queue = append(q.queue, p)
		}
	}
	for ; q.workers < prefetchers && q.workers < len(q.queue); q.workers++ {
		go prefetchWorker()
	}
}

// prefetchWorker reads the files of the prefetch queue until it is empty.
func prefetchWorker() {
	q := &prefetch
	for {
		q.Lock()
		if len(q.queue) == 0 {
			q.workers--
			q.Unlock()
			return
		}
		p := q.queue[0]
		q.queue = q.queue[1:]
		q.Unlock()
		opened.open(p) // an error is Map's to report
	}
}

// Prefetch is the package's Prefetch, for the engine, which sees the
// object files a program maps ahead of simulating their mapping.
func (s *Symbolizer) Prefetch(path string) { Prefetch(path) }

// ProgramFiles guesses the object files that the dynamic loader maps
// first for the program that path (or, without a slash, the PATH) names:
// the program, its interpreter (the dynamic loader) and the libraries it
// names (DT_NEEDED), found in its run paths and the system's library
// directories — their real paths, as Valgrind reports mappings. It is a
// guess to read ahead of time (Prefetch), never what is mapped: nil for
// a file that is not an ELF program (a script, say).
func ProgramFiles(path string) []string {
	if !strings.Contains(path, "/") {
		p, err := exec.LookPath(path)
		if err != nil {
			return nil
		}
		path = p
	}
	exe, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil
	}
	f, err := elf.Open(exe)
	if err != nil {
		return nil
	}
	defer f.Close()
	files := []string{exe}
	var dirs []string
	for _, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		b := make([]byte, p.Filesz)
		if _, err := p.ReadAt(b, 0); err != nil {
			continue
		}
		if interp, err := filepath.EvalSymlinks(strings.TrimRight(string(b), "\x00")); err == nil {
			files = append(files, interp)
			dirs = append(dirs, filepath.Dir(interp))
		}
	}
	for _, tag := range []elf.DynTag{elf.DT_RUNPATH, elf.DT_RPATH} {
		paths, _ := f.DynString(tag)
		for _, p := range paths {
			for _, d := range filepath.SplitList(p) {
				dirs = append(dirs, strings.ReplaceAll(d, "$ORIGIN", filepath.Dir(exe)))
			}
		}
	}
	dirs = append(dirs, filepath.SplitList(os.Getenv("LD_LIBRARY_PATH"))...)
	dirs = append(dirs, "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib")
	libs, _ := f.ImportedLibraries()
	for _, lib := range libs {
		for _, d := range dirs {
			if d == "" {
				continue
			}
			if p, err := filepath.EvalSymlinks(filepath.Join(d, lib)); err == nil {
				files = append(files, p)
				break
			}
		}
	}
	return files
}
