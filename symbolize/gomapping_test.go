package symbolize

import (
	"testing"

	"github.com/memspy/memspy/symbols"
)

// The Go runtime's mappings are named after the function that asked for
// the memory, the first frame after those that get it from the system
// (not sysmon, whose name only looks like theirs); other call paths are
// no Go mapping's.
func TestGoMapping(t *testing.T) {
	frames := func(fns ...string) []siteFrame {
		var fs []siteFrame
		for i, fn := range fns {
			fs = append(fs, siteFrame{ra: uint64(0x401000 + i), Frame: symbols.Frame{Func: fn, File: "/usr/local/go/src/runtime/" + fn + ".go", Line: 10 + i}})
		}
		return fs
	}
	for _, c := range []struct {
		frames   []siteFrame
		name, at string
		ok       bool
	}{
		{frames("runtime.sysMmap.abi0", "runtime.sysAllocOS", "runtime.sysAlloc", "runtime.persistentalloc1", "runtime.persistentalloc"),
			"<Go persistentalloc>", "runtime.persistentalloc1.go:13", true},
		{frames("runtime.sysMmap", "runtime.sysReserveOS", "runtime.sysReserve", "runtime.(*mheap).sysAlloc", "runtime.(*mheap).grow"),
			"<Go heap arena>", "runtime.(*mheap).sysAlloc.go:13", true},
		{frames("runtime.mmap", "runtime.sysMapOS", "runtime.sysMap", "runtime.(*mheap).grow"), "<Go heap arena>", "runtime.(*mheap).grow.go:13", true},
		{frames("runtime.sysMmap", "runtime.sysAllocOS", "runtime.sysAlloc", "runtime.sysmon"), "<Go runtime.sysmon>", "runtime.sysmon.go:13", true},
		{frames("runtime.sysMmap", "runtime.sysAllocOS"), "<Go mmap>", "runtime.sysMmap.go:10", true},
		{frames("runtime.newobject", "main.main"), "", "", false},
		{frames("runtime.sysmon", "runtime.mstart1"), "", "", false},
		{nil, "", "", false},
	} {
		name, at, ok := goMapping(c.frames)
		if name != c.name || at != c.at || ok != c.ok {
			t.Errorf("goMapping(%v) = %q, %q, %v; want %q, %q, %v", c.frames, name, at, ok, c.name, c.at, c.ok)
		}
	}
}
