package symbols

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io"

	"github.com/ulikunitz/xz"
)

// maxMiniDebugInfo bounds the decompressed size of a .gnu_debugdata
// section: real ones hold a symbol table of a few MiB at most.
const maxMiniDebugInfo = 256 << 20

// miniDebugSymbols returns the symbols of ef's MiniDebugInfo: the
// .gnu_debugdata section, an xz-compressed ELF file whose .symtab holds
// the functions that .dynsym leaves out (Fedora ships it in every binary;
// GDB and perf read it too). It returns no symbols and no error when ef has
// no such section, and an error that says what is wrong when it cannot be
// read.
func miniDebugSymbols(ef *elf.File) ([]elf.Symbol, error) {
	s := ef.Section(".gnu_debugdata")
	if s == nil || s.Type == elf.SHT_NOBITS || s.Size == 0 {
		return nil, nil
	}
	z, err := xz.NewReader(s.Open())
	if err != nil {
		return nil, fmt.Errorf(".gnu_debugdata: not xz data: %w", err)
	}
	data, err := io.ReadAll(io.LimitReader(z, maxMiniDebugInfo+1))
	if err != nil {
		return nil, fmt.Errorf(".gnu_debugdata: %w", err)
	}
	if len(data) > maxMiniDebugInfo {
		return nil, fmt.Errorf(".gnu_debugdata: more than %d MiB decompressed", maxMiniDebugInfo>>20)
	}
	mini, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf(".gnu_debugdata: the decompressed data is not an ELF file: %w", err)
	}
	if mini.Class != ef.Class || mini.Machine != ef.Machine {
		return nil, fmt.Errorf(".gnu_debugdata: an ELF file for %v %v inside one for %v %v", mini.Class, mini.Machine, ef.Class, ef.Machine)
	}
	syms, err := mini.Symbols()
	if err != nil && err != elf.ErrNoSymbols {
		return nil, fmt.Errorf(".gnu_debugdata: bad symbol table: %w", err)
	}
	return syms, nil
}
