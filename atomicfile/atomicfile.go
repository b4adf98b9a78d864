// Package atomicfile writes output files so that a reader, or a crash,
// never sees one half written: a file is written unnamed and appears at
// its path, complete, only when committed. On Linux it is created with
// O_TMPFILE, so that nothing is left behind if the process is killed while
// writing, and linked into place with linkat; where the file system does
// not allow that, it is a hidden temporary file in the same directory,
// renamed into place. A file that replaces another keeps the other's
// permission bits. A symbolic link to a regular file stays a link: the
// file it leads to is replaced. What is not a regular file (a device such
// as /dev/null, a pipe, /dev/stdout) is written in place, as it comes: it
// cannot be replaced, and must not be.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// File is an output file being written. Nothing appears at its path until
// Commit; Abort (or a crash) leaves the path as it was — but for a file
// written in place (direct), which Commit and Abort only close.
type File struct {
	*os.File
	path   string
	mode   fs.FileMode
	tmp    string // the temporary file's name; "" for an unnamed (O_TMPFILE) file
	direct bool   // written in place: path is no regular file
	done   bool
}

// newFileMode is the mode of a file that replaces none.
const newFileMode fs.FileMode = 0o644

// Create starts writing the file at path. It fails at once if path is a
// directory or its directory cannot be written, so that callers can check
// their outputs before long work.
func Create(path string) (*File, error) {
	path, direct := target(path)
	if direct {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			return nil, err
		}
		return &File{File: f, path: path, direct: true}, nil
	}
	mode := newFileMode
	if fi, err := os.Stat(path); err == nil {
		if fi.IsDir() {
			return nil, &fs.PathError{Op: "create", Path: path, Err: errors.New("is a directory")}
		}
		mode = fi.Mode().Perm()
	}
	dir := filepath.Dir(path)
	if f, err := openUnnamed(dir, mode); err == nil {
		return &File{File: f, path: path, mode: mode}, nil
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, bareError(err))
	}
	return &File{File: f, path: path, mode: mode, tmp: f.Name()}, nil
}

// target returns where the file for path is written: path itself, or
// the regular file that the symbolic link path leads to; direct when it
// is to be written in place (anything but a regular file, a directory
// or nothing; a link into /proc or /dev, such as /dev/stdout, whatever it
// leads to: replacing the file behind a process's descriptor would hide
// what the process writes there).
func target(path string) (string, bool) {
	fi, err := os.Lstat(path)
	switch {
	case err != nil || fi.Mode().IsRegular() || fi.IsDir():
		return path, false
	case fi.Mode()&fs.ModeSymlink == 0:
		return path, true
	}
	if to, err := os.Readlink(path); err != nil || strings.HasPrefix(to, "/proc/") || strings.HasPrefix(to, "/dev/") {
		return path, true
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return path, true // a dangling link: the file it names is made there
	}
	if fi, err := os.Stat(real); err != nil || !fi.Mode().IsRegular() {
		return path, true
	}
	return real, false
}

// Check reports whether a file can be created at path, creating nothing:
// callers check their outputs with it before long work.
func Check(path string) error {
	if path, direct := target(path); direct {
		// Opening a pipe would wait for its reader: ask whether it could be
		// written.
		if err := syscall.Access(path, 2 /* W_OK */); err != nil {
			return &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return nil
	}
	f, err := Create(path)
	if err != nil {
		return err
	}
	f.Abort()
	return nil
}

// bareError drops the file names from an error of os.CreateTemp,
// os.Rename and the like: a temporary file's name would only confuse.
func bareError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// Path returns the path the file appears at when committed.
func (f *File) Path() string { return f.path }

// Commit finishes the file and puts it at its path, replacing what was
// there. On failure the path is left as it was.
func (f *File) Commit() error {
	return CommitAll(f)
}

// CommitAll finishes several files and puts each at its path: every file
// is first complete under a temporary name, then all are renamed into
// place, so that an error leaves every path as it was. On failure every
// file is aborted.
func CommitAll(files ...*File) error {
	var err error
	for _, f := range files {
		if err == nil {
			err = f.finish()
		}
	}
	for _, f := range files {
		if err == nil && !f.direct {
			if e := os.Rename(f.tmp, f.path); e != nil {
				err = fmt.Errorf("writing %s: %w", f.path, bareError(e))
			}
		}
		if err != nil {
			f.Abort()
		}
		f.done = true
	}
	return err
}

// finish sets the file's mode, gives an unnamed file a temporary name and
// closes it.
func (f *File) finish() error {
	if f.done {
		return fmt.Errorf("writing %s: already committed or aborted", f.path)
	}
	if f.direct {
		if err := f.Close(); err != nil {
			return fmt.Errorf("writing %s: %w", f.path, bareError(err))
		}
		return nil
	}
	err := f.Chmod(f.mode)
	if err == nil && f.tmp == "" {
		f.tmp, err = linkUnnamed(f.File, f.path)
	}
	if e := f.Close(); err == nil {
		err = e
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", f.path, bareError(err))
	}
	return nil
}

// Abort discards the file; the path is left as it was. It does nothing
// after Commit.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.Close()
	if f.tmp != "" {
		os.Remove(f.tmp)
	}
}

// WriteFile writes data to path atomically.
func WriteFile(path string, data []byte) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return fmt.Errorf("writing %s: %w", path, bareError(err))
	}
	return f.Commit()
}
