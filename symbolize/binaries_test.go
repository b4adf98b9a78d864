package symbolize

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The Symbolizers of a process tree share the files they open: a file is
// read once while it stays the same, and again once it changed.
func TestSharedBinaries(t *testing.T) {
	path := copyOfTrue(t)
	a, b := New(), New()
	a.Map(path, 0)
	b.Map(path, 0)
	if a.modules[path].b == nil || a.modules[path].b != b.modules[path].b {
		t.Fatalf("two Symbolizers opened %s twice: %v", path, a.modules[path].err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	c := New()
	c.Map(path, 0)
	if c.modules[path].b == nil || c.modules[path].b == a.modules[path].b {
		t.Errorf("a changed file was not opened again (%v)", c.modules[path].err)
	}
}

// copyOfTrue copies /usr/bin/true into a directory of the test's and
// returns the copy's path: a binary no other test opens.
func copyOfTrue(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("/usr/bin/true")
	if err != nil {
		t.Skip(err)
	}
	path := filepath.Join(t.TempDir(), "true")
	if err := os.WriteFile(path, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}
