package atomicfile

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// entries returns the names in dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// A file appears complete at Commit, keeps the mode of the file it
// replaces (issue 29, item 12) and leaves nothing else behind.
func TestCommitKeepsMode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	if err := WriteFile(path, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("new file: %v, %v", fi.Mode(), err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("newer")
	if got, _ := os.ReadFile(path); string(got) != "new" {
		t.Errorf("before Commit the path holds %q", got)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	fi, _ := os.Stat(path)
	if string(got) != "newer" || err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("replaced file: %q, %v, mode %v (want 0600)", got, err, fi.Mode())
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Errorf("directory holds %v", names)
	}
}

// Abort leaves the path as it was, and nothing else.
func TestAbort(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x")
	os.WriteFile(path, []byte("old"), 0o644)
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("new")
	f.Abort()
	f.Abort()
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Errorf("path holds %q", got)
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Errorf("directory holds %v", names)
	}
	if err := f.Commit(); err == nil {
		t.Error("Commit after Abort succeeded")
	}
}

// Create fails at once for a path that cannot be written (item 8).
func TestCreateFailsEarly(t *testing.T) {
	dir := t.TempDir()
	for _, path := range []string{filepath.Join(dir, "no", "x.json"), dir} {
		if f, err := Create(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("Create(%s): %v", path, err)
			if f != nil {
				f.Abort()
			}
		}
	}
}

// CommitAll puts every file in place.
func TestCommitAll(t *testing.T) {
	dir := t.TempDir()
	a, _ := Create(filepath.Join(dir, "a"))
	b, _ := Create(filepath.Join(dir, "b"))
	a.WriteString("A")
	b.WriteString("B")
	if err := CommitAll(a, b); err != nil {
		t.Fatal(err)
	}
	ga, _ := os.ReadFile(filepath.Join(dir, "a"))
	gb, _ := os.ReadFile(filepath.Join(dir, "b"))
	if string(ga) != "A" || string(gb) != "B" || len(entries(t, dir)) != 2 {
		t.Errorf("a %q, b %q, %v", ga, gb, entries(t, dir))
	}
}

// A process killed while writing leaves nothing behind where the file
// system has O_TMPFILE (item 9): the test runs itself as a writer and
// kills it.
func TestKilledWriterLeavesNothing(t *testing.T) {
	if path := os.Getenv("ATOMICFILE_WRITER"); path != "" {
		f, err := Create(path)
		if err != nil {
			os.Exit(2)
		}
		f.WriteString("partial")
		os.Stdout.WriteString("ready\n")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	dir := t.TempDir()
	probe, err := openUnnamed(dir, 0o644)
	if err != nil {
		t.Skipf("no O_TMPFILE here: %v", err)
	}
	probe.Close()
	path := filepath.Join(dir, "out.mst")
	os.WriteFile(path, []byte("old"), 0o644)
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledWriterLeavesNothing$")
	cmd.Env = append(os.Environ(), "ATOMICFILE_WRITER="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	if _, err := out.Read(buf); err != nil || string(buf) != "ready\n" {
		t.Fatalf("writer: %q, %v", buf, err)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if names := entries(t, dir); len(names) != 1 || names[0] != "out.mst" {
		t.Errorf("after kill -9 the directory holds %v", names)
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Errorf("path holds %q", got)
	}
}

// A symbolic link to a regular file stays a link, and the file it leads
// to takes the new contents (atomically, beside it).
func TestSymlinkStaysLink(t *testing.T) {
	dir := t.TempDir()
	real, link := filepath.Join(dir, "real.json"), filepath.Join(dir, "link.json")
	if err := os.WriteFile(real, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real.json", link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a link (%v)", link, err)
	}
	if b, _ := os.ReadFile(real); string(b) != "new" {
		t.Errorf("%s holds %q, want the new contents", real, b)
	}
	if fi, _ := os.Stat(real); fi.Mode().Perm() != 0o600 {
		t.Errorf("%s's mode %v, want 0600 kept", real, fi.Mode().Perm())
	}
	if names := entries(t, dir); len(names) != 2 {
		t.Errorf("left behind: %v", names)
	}
}

// What is not a regular file is written in place and stays what it is:
// a pipe gets the contents, a device stays a device (writing /dev/null
// as root once replaced it with a regular file).
func TestDirectFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	if err := Check(fifo); err != nil {
		t.Fatalf("Check(a pipe): %v", err) // (must not wait for a reader)
	}
	got := make(chan string, 1)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- string(b)
	}()
	if err := WriteFile(fifo, []byte("through the pipe")); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		if s != "through the pipe" {
			t.Errorf("the pipe's reader got %q", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the pipe's reader got nothing in 10 s")
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("%s is no longer a pipe (%v)", fifo, err)
	}
	for _, dev := range []string{"/dev/null", "/dev/stdout"} {
		before, err := os.Lstat(dev)
		if err != nil {
			continue
		}
		if err := Check(dev); err != nil {
			t.Errorf("Check(%s): %v", dev, err)
		}
		if dev == "/dev/null" {
			if err := WriteFile(dev, []byte("x")); err != nil {
				t.Errorf("WriteFile(%s): %v", dev, err)
			}
		}
		if after, err := os.Lstat(dev); err != nil || after.Mode() != before.Mode() {
			t.Errorf("%s changed: %v → %v (%v)", dev, before.Mode(), after.Mode(), err)
		}
	}
}
