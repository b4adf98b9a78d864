package valgrind

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A child that announced itself just before memspy stopped following
// children waits in its open of its FIFO for a reader that will never
// come (and its parent waits for it): releaseFIFOs lets the open through,
// the child's writes then fail (it runs on untraced), and the FIFO is
// gone, so that an open coming later fails at once.
func TestReleaseFIFOs(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "123")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0) // waits for a reader, as the tool's open does
		if err != nil {
			done <- nil // (it came after the FIFO was gone: it fails at once, as it should)
			return
		}
		defer f.Close()
		// A write may go through while releaseFIFOs still holds the FIFO
		// open (into the pipe's buffer, which it never reads); once it
		// closed it, writes fail.
		for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
			if _, err := f.Write([]byte("x")); err != nil {
				done <- nil
				return
			}
		}
		done <- errors.New("writes with no reader went through for 5 s")
	}()
	time.Sleep(100 * time.Millisecond) // (the open waiting for its reader)
	releaseFIFOs(dir)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the open of the FIFO still waits after releaseFIFOs")
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the FIFO is still there: %v", err)
	}
}
