package symbolize_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// callPathName finds a name made of a call path ("runtime.newm.2870.mp").
var callPathName = regexp.MustCompile(`\.[0-9]+\.`)

// goHeapMain allocates through the Go runtime's allocation paths: new
// (runtime.newobject), make of a slice (makeslice), append (growslice,
// whose elements without pointers come without a type), a map's slot
// groups (newarray under the map's code) and strings (slicebytetostring,
// without a type), on a goroutine's stack.
const goHeapMain = `package main

import "fmt"

type node struct {
	next *node
	val  [5]int64
}

func main() {
	var head *node
	for i := range 3000 {
		head = &node{next: head, val: [5]int64{int64(i)}}
	}
	nums := make([]int, 40000)
	for i := range nums {
		nums[i] = i * 7
	}
	var grown []uint32
	for i := range 20000 {
		grown = append(grown, uint32(i))
	}
	counts := map[int]int{}
	for i := range 20000 {
		counts[i*31%4096]++ // COUNTS
	}
	raw := make([]byte, 200)
	for i := range raw {
		raw[i] = byte('a' + i%26)
	}
	var texts []string
	for i := range 2000 {
		text := string(raw[i%100 : i%100+100])
		texts = append(texts, text)
	}
	sum := 0
	for n := head; n != nil; n = n.next {
		sum += int(n.val[0])
	}
	for _, v := range nums {
		sum += v
	}
	for _, v := range grown {
		sum += int(v)
	}
	for _, s := range texts {
		sum += int(s[7])
	}
	fmt.Println(sum, len(counts))
}
`

// Go's heap blocks are named by their first frame outside the runtime
// and their type from runtime.mallocgc's type argument: the variable that
// receives them ("head (main.node)", "nums ([]int)"), else the line
// ("main.go:N []map.group[int]int"); growslice of elements without
// pointers passes no type: the variable alone; a string's bytes are a
// string. None is "heap@?". The runtime's own blocks are named by the
// runtime's variable and type, whatever the call path ("mp
// (runtime.mPadded)": no "runtime.startm.3096.runtime.newm.2870..."),
// and its mappings by what they are for ("<Go heap arena>"); the
// goroutines' stacks (runtime.stackalloc) are "<Go stacks>", of kind stack.
func TestRunGoHeap(t *testing.T) {
	lib := toolLib(t)
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no Go toolchain:", err)
	}
	dir := t.TempDir()
	for name, text := range map[string]string{"go.mod": "module goheap\n\ngo 1.22\n", "main.go": goHeapMain} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exe := filepath.Join(dir, "goheap")
	build := exec.Command(gobin, "build", "-o", exe, ".")
	build.Dir, build.Env = dir, append(os.Environ(), "GOTOOLCHAIN=local", "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	lineOf := func(mark string) int {
		for i, l := range strings.Split(goHeapMain, "\n") {
			if strings.HasSuffix(l, "// "+mark) {
				return i + 1
			}
		}
		t.Fatalf("no line %s", mark)
		return 0
	}
	p, _ := runWhere(t, lib, exe)
	objects := map[string]uint64{} // accesses by name
	for _, o := range p.Objects {
		if o.Name == "<Go stacks>" && o.Kind == "stack" {
			objects[o.Name] += o.Accesses
		}
		if o.Kind == "heap" {
			objects[o.Name] += o.Accesses
			if strings.Contains(o.Name, "heap@?") || strings.Contains(o.FullName, "heap@?") || callPathName.MatchString(o.Name) {
				t.Errorf("object %q (%q)", o.Name, o.FullName)
			}
		}
	}
	for _, want := range []string{"head (main.node)", "nums ([]int)", "grown", "text (string)",
		fmt.Sprintf("main.go:%d []map.group[int]int", lineOf("COUNTS")), "<Go heap arena>", "<Go persistentalloc>", "<Go stacks>"} {
		if objects[want] == 0 {
			t.Errorf("no accesses to an object %q; heap objects: %v", want, objects)
		}
	}
}
