package valgrind

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// maxInterpreters bounds the chain of #! interpreters followed (Linux
// follows four).
const maxInterpreters = 4

// checkArch refuses a program that memspy's Valgrind tool, built for
// Valgrind's amd64-linux platform only, cannot run: an ELF file of another
// class or machine (a 32-bit x86 program makes Valgrind look for an
// x86-linux tool, which does not exist). A #! script is judged by its
// interpreter (through /usr/bin/env, the command it names, found in PATH).
// path is where prog was found; a file that cannot be read, or is neither
// ELF nor a script, is left to Valgrind.
func checkArch(prog, path string) error {
	via := ""
	for range maxInterpreters + 1 {
		head, err := readHead(path)
		if err != nil {
			return nil
		}
		if bytes.HasPrefix(head, []byte(elf.ELFMAG)) {
			what := elfArch(head)
			if what == "" {
				return nil
			}
			if via != "" {
				return fmt.Errorf("memspy traces 64-bit x86 programs; %s runs under %s (%s), which is %s", prog, path, via, what)
			}
			return fmt.Errorf("memspy traces 64-bit x86 programs; %s is %s", prog, what)
		}
		line, ok := bytes.CutPrefix(head, []byte("#!"))
		if !ok {
			return nil
		}
		line, _, _ = bytes.Cut(line, []byte("\n"))
		interp := interpreter(string(line))
		if interp == "" {
			return nil
		}
		via, path = "#!"+strings.TrimSpace(string(line)), interp
	}
	return nil
}

// readHead returns the first bytes of the file at path: enough for an ELF
// header's identification and machine, and for a #! line (Linux reads 256
// bytes).
func readHead(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, 256)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF {
		return nil, err
	}
	return head[:n], nil
}

// elfArch describes what an ELF file whose first bytes are head is built
// for, when that is not 64-bit x86 ("32-bit", "for AARCH64"); it returns ""
// for a 64-bit x86 file or a header too short to tell.
func elfArch(head []byte) string {
	if len(head) < 20 {
		return ""
	}
	var order binary.ByteOrder = binary.LittleEndian
	if elf.Data(head[elf.EI_DATA]) == elf.ELFDATA2MSB {
		order = binary.BigEndian
	}
	class, mach := elf.Class(head[elf.EI_CLASS]), elf.Machine(order.Uint16(head[18:]))
	name := strings.TrimPrefix(mach.String(), "EM_")
	switch {
	case class == elf.ELFCLASS64 && mach == elf.EM_X86_64:
		return ""
	case class == elf.ELFCLASS32 && mach == elf.EM_386:
		return "32-bit"
	case class == elf.ELFCLASS32 && mach == elf.EM_X86_64:
		return "32-bit (the x32 ABI)"
	case class == elf.ELFCLASS32:
		return "32-bit, for " + name
	}
	return "for " + name
}

// interpreter returns the program a #! line (without "#!") runs: its
// interpreter, or for /usr/bin/env the command env runs, found in PATH
// ("" when there is none or it is not found).
func interpreter(line string) string {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return ""
	}
	interp := fields[0]
	if filepath.Base(interp) != "env" {
		return interp
	}
	// env [-S] [-i] [-u NAME] [-C DIR] [NAME=VALUE]... COMMAND [ARG]...
	// (the kernel passes the rest of the line as one argument, which -S
	// splits: split it either way).
	args := fields[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-u" || a == "--unset" || a == "-C" || a == "--chdir":
			i++
		case strings.HasPrefix(a, "-") || strings.Contains(a, "="):
		default:
			p, err := exec.LookPath(a)
			if err != nil {
				return ""
			}
			return p
		}
	}
	return ""
}
