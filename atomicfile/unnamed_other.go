//go:build !(linux && (amd64 || arm64 || 386 || arm || riscv64 || loong64 || ppc64 || ppc64le || s390x))

package atomicfile

import (
	"errors"
	"io/fs"
	"os"
)

// openUnnamed fails: unnamed files are a Linux feature.
func openUnnamed(dir string, mode fs.FileMode) (*os.File, error) {
	return nil, errors.ErrUnsupported
}

// linkUnnamed is never called without openUnnamed.
func linkUnnamed(f *os.File, path string) (string, error) {
	return "", errors.ErrUnsupported
}
