//go:build linux && (amd64 || arm64 || 386 || arm || riscv64 || loong64 || ppc64 || ppc64le || s390x)

package atomicfile

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"unsafe"
)

// Linux's O_TMPFILE (with O_DIRECTORY) and linkat's AT_SYMLINK_FOLLOW on
// the architectures listed in the build constraint.
const (
	oTmpfile        = 0x400000 | syscall.O_DIRECTORY
	atFDCWD         = -100
	atSymlinkFollow = 0x400
)

// openUnnamed opens an unnamed file in dir (O_TMPFILE). It fails where the
// kernel or file system does not support that, or /proc is missing (the
// link to the file goes through /proc/self/fd).
func openUnnamed(dir string, mode fs.FileMode) (*os.File, error) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		return nil, err
	}
	fd, err := syscall.Open(dir, oTmpfile|syscall.O_WRONLY|syscall.O_CLOEXEC, uint32(mode))
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), filepath.Join(dir, "(unnamed)")), nil
}

// linkUnnamed gives the unnamed file f a temporary name beside path and
// returns it.
func linkUnnamed(f *os.File, path string) (string, error) {
	src := fmt.Sprintf("/proc/self/fd/%d", f.Fd())
	for range 100 {
		tmp := filepath.Join(filepath.Dir(path), fmt.Sprintf(".%s.tmp%d", filepath.Base(path), rand.Uint32()))
		err := linkat(src, tmp)
		if err == syscall.EEXIST {
			continue
		}
		return tmp, err
	}
	return "", fmt.Errorf("no free temporary name for %s", path)
}

// linkat is linkat(AT_FDCWD, src, AT_FDCWD, dst, AT_SYMLINK_FOLLOW).
func linkat(src, dst string) error {
	s, err := syscall.BytePtrFromString(src)
	if err != nil {
		return err
	}
	d, err := syscall.BytePtrFromString(dst)
	if err != nil {
		return err
	}
	cwd := atFDCWD
	_, _, errno := syscall.Syscall6(syscall.SYS_LINKAT, uintptr(cwd), uintptr(unsafe.Pointer(s)),
		uintptr(cwd), uintptr(unsafe.Pointer(d)), atSymlinkFollow, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
