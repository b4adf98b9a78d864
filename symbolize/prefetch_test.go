package symbolize

import (
	"debug/elf"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// ProgramFiles finds a dynamically linked program's own file, its
// dynamic loader and the C library it names, at their real paths; a
// script gives nothing.
func TestProgramFiles(t *testing.T) {
	sh, err := filepath.EvalSymlinks("/bin/sh")
	if err != nil {
		t.Skip(err)
	}
	f, err := elf.Open(sh)
	if err != nil {
		t.Skip(err)
	}
	libs, _ := f.ImportedLibraries()
	f.Close()
	if !slices.Contains(libs, "libc.so.6") {
		t.Skipf("%s does not name libc.so.6: %v", sh, libs)
	}
	files := ProgramFiles("sh") // found in the PATH
	if len(files) < 3 || files[0] != sh {
		t.Fatalf("ProgramFiles(sh) = %v: want %s, its loader and libc", files, sh)
	}
	var loader, libc bool
	for _, p := range files {
		if real, err := filepath.EvalSymlinks(p); err != nil || real != p {
			t.Errorf("%s is not a real path (%v)", p, err)
		}
		loader = loader || strings.HasPrefix(filepath.Base(p), "ld-linux")
		libc = libc || filepath.Base(p) == "libc.so.6"
	}
	if !loader || !libc {
		t.Errorf("ProgramFiles(sh) = %v: no loader (%v) or no libc (%v)", files, loader, libc)
	}
	script := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ntrue\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := ProgramFiles(script); got != nil {
		t.Errorf("ProgramFiles(a script) = %v, want nil", got)
	}
	if got := ProgramFiles("no-such-program-anywhere"); got != nil {
		t.Errorf("ProgramFiles(a missing program) = %v, want nil", got)
	}
}

// A file Prefetch read is the one Map then uses: read once.
func TestPrefetchShared(t *testing.T) {
	path := copyOfTrue(t)
	Prefetch(path, path)
	var read bool
	for deadline := time.Now().Add(10 * time.Second); !read && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		opened.mu.Lock()
		for id, f := range opened.files {
			if id.path == path {
				select {
				case <-f.done:
					read = true
				default:
				}
			}
		}
		opened.mu.Unlock()
	}
	if !read {
		t.Fatal("Prefetch did not read the file within 10 s")
	}
	s := New()
	s.Map(path, 0)
	if s.modules[path].b == nil {
		t.Fatalf("Map after Prefetch: %v", s.modules[path].err)
	}
	n := 0
	opened.mu.Lock()
	for id, f := range opened.files {
		if id.path == path {
			n++
			if f.b != s.modules[path].b {
				t.Error("Map read the file again after Prefetch read it")
			}
		}
	}
	opened.mu.Unlock()
	if n != 1 {
		t.Errorf("%d entries for %s, want 1", n, path)
	}
}
