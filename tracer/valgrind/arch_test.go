package valgrind

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// writeELF writes an executable file holding an ELF header of the given
// class and machine (the rest of the file is not needed to judge it).
func writeELF(t *testing.T, path string, class elf.Class, data elf.Data, mach elf.Machine) string {
	t.Helper()
	h := make([]byte, 64)
	copy(h, elf.ELFMAG)
	h[elf.EI_CLASS], h[elf.EI_DATA], h[elf.EI_VERSION] = byte(class), byte(data), byte(elf.EV_CURRENT)
	var order binary.ByteOrder = binary.LittleEndian
	if data == elf.ELFDATA2MSB {
		order = binary.BigEndian
	}
	order.PutUint16(h[16:], uint16(elf.ET_EXEC))
	order.PutUint16(h[18:], uint16(mach))
	writeExec(t, path, string(h))
	return path
}

func writeExec(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestCheckArch(t *testing.T) {
	dir := t.TempDir()
	x86 := writeELF(t, filepath.Join(dir, "x86"), elf.ELFCLASS32, elf.ELFDATA2LSB, elf.EM_386)
	x32 := writeELF(t, filepath.Join(dir, "x32"), elf.ELFCLASS32, elf.ELFDATA2LSB, elf.EM_X86_64)
	arm := writeELF(t, filepath.Join(dir, "arm"), elf.ELFCLASS32, elf.ELFDATA2LSB, elf.EM_ARM)
	a64 := writeELF(t, filepath.Join(dir, "a64"), elf.ELFCLASS64, elf.ELFDATA2LSB, elf.EM_AARCH64)
	s390 := writeELF(t, filepath.Join(dir, "s390"), elf.ELFCLASS64, elf.ELFDATA2MSB, elf.EM_S390)
	amd64 := writeELF(t, filepath.Join(dir, "amd64"), elf.ELFCLASS64, elf.ELFDATA2LSB, elf.EM_X86_64)
	// Commands found in PATH by /usr/bin/env.
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o755)
	writeELF(t, filepath.Join(bin, "py32"), elf.ELFCLASS32, elf.ELFDATA2LSB, elf.EM_386)
	writeELF(t, filepath.Join(bin, "py64"), elf.ELFCLASS64, elf.ELFDATA2LSB, elf.EM_X86_64)
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	script := func(name, content string) string {
		p := filepath.Join(dir, name)
		writeExec(t, p, content)
		return p
	}
	direct := script("direct", "#!"+x86+" -x\necho\n")
	nested := script("nested", "#! "+direct+"\n")
	env := script("env", "#!/usr/bin/env py32\n")
	envS := script("envS", "#!/usr/bin/env -S -u HOME A=1 py32 -x\n")
	const refuse = "memspy traces 64-bit x86 programs; "
	for _, tc := range []struct{ prog, want string }{
		{x86, refuse + x86 + " is 32-bit"},
		{x32, refuse + x32 + " is 32-bit (the x32 ABI)"},
		{arm, refuse + arm + " is 32-bit, for ARM"},
		{a64, refuse + a64 + " is for AARCH64"},
		{s390, refuse + s390 + " is for S390"},
		{"py32", refuse + "py32 is 32-bit"},
		{direct, refuse + direct + " runs under " + x86 + " (#!" + x86 + " -x), which is 32-bit"},
		{nested, refuse + nested + " runs under " + x86 + " (#!" + x86 + " -x), which is 32-bit"},
		{env, refuse + env + " runs under " + bin + "/py32 (#!/usr/bin/env py32), which is 32-bit"},
		{envS, refuse + envS + " runs under " + bin + "/py32 (#!/usr/bin/env -S -u HOME A=1 py32 -x), which is 32-bit"},
		// What memspy's tool runs, and what it leaves to Valgrind.
		{amd64, ""},
		{"py64", ""},
		{script("sh", "#!/bin/sh\necho\n"), ""},
		{script("env64", "#!/usr/bin/env py64\n"), ""},
		{script("nointerp", "#!/nosuch/interpreter\n"), ""},
		{script("nocommand", "#!/usr/bin/env nosuch-memspy-command\n"), ""},
		{script("text", "echo no #! line\n"), ""},
		{script("short", "\x7fELF\x01"), ""},
		{script("loop", "#!"+filepath.Join(dir, "loop")+"\n"), ""},
	} {
		err := checkProgram(tc.prog)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || err.Error() != tc.want) {
			t.Errorf("%s: got %v\nwant %q", tc.prog, err, tc.want)
		}
	}
}

// A 32-bit x86 program built by gcc -m32 (without the C library, which the
// multilib packages provide): refused before Valgrind starts, which would
// look for an x86-linux tool.
func TestStart32Bit(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "exit7.S")
	writeExec(t, src, ".globl _start\n_start:\n\tmovl $1, %eax\n\tmovl $7, %ebx\n\tint $0x80\n")
	exe := filepath.Join(dir, "exit7")
	if out, err := exec.Command("gcc", "-m32", "-nostdlib", "-static", "-o", exe, src).CombinedOutput(); err != nil {
		t.Skipf("gcc -m32 cannot build here: %v\n%s", err, out)
	}
	_, err := Start(exe, nil, fake(t, "", 10))
	if want := "memspy traces 64-bit x86 programs; " + exe + " is 32-bit"; err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}
