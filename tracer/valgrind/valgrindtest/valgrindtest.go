// Package valgrindtest helps test code that reads memspy's Valgrind tool
// stream: Stream builds streams word by word (see docs/valgrind-stream.md),
// and FakeValgrind is a stand-in for valgrind that runs a program and
// writes a known stream, so that the machinery around the tool can be
// tested without Valgrind.
package valgrindtest

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// Version is the stream version the builders write unless told otherwise:
// the one memspy reads (valgrind.StreamVersion, which this package cannot
// import).
const Version = 13

// Flags of the stream header.
const (
	FlagIFetch = 1 // instruction fetches are described
	FlagCalls  = 2 // calls and returns are reported
)

// Entry kinds of a DESCRIBE record.
const (
	Read   = 0
	Write  = 1
	IFetch = 2
	Modify = 3
	Exit   = 4
	Call   = 5 // the superblock ends in a call: the last entry
	Return = 6 // the superblock ends in a return: the last entry
	Atomic = 7 // an atomic read-modify-write: a sync event, then a modify
)

// Record types: the top 4 bits of a record's first word.
const (
	RecExec     = 1
	RecDescribe = 2
	RecThread   = 3
	RecAlloc    = 4
	RecFree     = 5
	RecMark     = 6
	RecString   = 7
	RecMap      = 8
	RecSync     = 9
	RecSkip     = 10
	RecEnd      = 15
)

// Entry is one entry of a superblock description. A derived data entry
// has no address word in EXEC records: its address is that of data entry
// number Base (counting the superblock's data entries from 0) plus Off.
type Entry struct {
	Kind    int
	Size    uint32
	PC      uint64
	Derived bool
	Base    uint64
	Off     uint64
}

// Word returns the entry's first word.
func (e Entry) Word() uint64 {
	w := uint64(e.Kind) | uint64(e.Size)<<8
	if e.Derived {
		w |= 1<<32 | e.Base<<40
	}
	return w
}

// Stream builds a stream. The zero value is an empty stream.
type Stream struct {
	B []byte
}

// Word appends one word.
func (s *Stream) Word(w uint64) *Stream {
	s.B = binary.LittleEndian.AppendUint64(s.B, w)
	return s
}

// Header appends the 4-word header of a stream of the current Version.
func (s *Stream) Header(flags uint64, pid int) *Stream {
	return s.HeaderVersion(Version, flags, pid)
}

// HeaderVersion appends the 4-word header of a stream of the given version.
func (s *Stream) HeaderVersion(version, flags uint64, pid int) *Stream {
	s.B = append(s.B, "memspyVG"...)
	return s.Word(version).Word(flags).Word(uint64(pid))
}

// Describe appends a DESCRIBE record of superblock id: its entries, then
// the offsets of the derived ones.
func (s *Stream) Describe(id uint64, entries ...Entry) *Stream {
	var offs []uint64
	for _, e := range entries {
		if e.Derived {
			offs = append(offs, e.Off)
		}
	}
	s.Word(RecDescribe<<60 | id<<16).Word(uint64(len(entries)) | uint64(len(offs))<<32)
	for _, e := range entries {
		s.Word(e.Word()).Word(e.PC)
	}
	for _, o := range offs {
		s.Word(o)
	}
	return s
}

// Exec appends an EXEC record of superblock id leaving through exit e,
// with the given data addresses.
func (s *Stream) Exec(id uint64, e int, addrs ...uint64) *Stream {
	s.Word(RecExec<<60 | id<<16 | uint64(e))
	for _, a := range addrs {
		s.Word(a)
	}
	return s
}

// ExecFinal appends an EXEC record of superblock id, which ends in a call
// or a return, running to its end (e is the number of its exit entries):
// the data addresses, then the call's or return's target and the stack
// pointer after it.
func (s *Stream) ExecFinal(id uint64, e int, target, sp uint64, addrs ...uint64) *Stream {
	return s.Exec(id, e, addrs...).Word(target).Word(sp)
}

// Thread appends a THREAD record.
func (s *Stream) Thread(tid uint32) *Stream { return s.Word(RecThread<<60 | uint64(tid)) }

// Alloc appends an ALLOC record: a block of size bytes at addr allocated
// by the routine named by STRING name (0: none), with the call stack
// stack (innermost first) and no type.
func (s *Stream) Alloc(name, addr, size uint64, stack ...uint64) *Stream {
	return s.AllocType(name, addr, size, 0, stack...)
}

// AllocType appends an ALLOC record as Alloc, of the type whose descriptor
// is at typ.
func (s *Stream) AllocType(name, addr, size, typ uint64, stack ...uint64) *Stream {
	s.Word(RecAlloc<<60 | name<<16 | uint64(len(stack))).Word(addr).Word(size).Word(typ)
	return s.words(stack)
}

// Free appends a FREE record, as Alloc (a FREE has no type).
func (s *Stream) Free(name, addr, size uint64, stack ...uint64) *Stream {
	s.Word(RecFree<<60 | name<<16 | uint64(len(stack))).Word(addr).Word(size)
	return s.words(stack)
}

func (s *Stream) words(stack []uint64) *Stream {
	for _, a := range stack {
		s.Word(a)
	}
	return s
}

// Mark appends a MARK record of the given kind (a trace.MarkKind), named
// by STRING name (0: none), with its address and size arguments.
func (s *Stream) Mark(kind int, name, addr, size uint64) *Stream {
	return s.Word(RecMark<<60 | name<<16 | uint64(kind)&0xffff).Word(addr).Word(size)
}

// String appends a STRING record defining id as str.
func (s *Stream) String(id uint64, str string) *Stream {
	s.Word(RecString<<60 | id<<32 | uint64(len(str)))
	s.B = append(s.B, str...)
	for len(s.B)%8 != 0 {
		s.B = append(s.B, 0)
	}
	return s
}

// Map appends a MAP record: an object file, whose path is STRING name,
// with its .text of size bytes at addr.
func (s *Stream) Map(name, addr, size uint64) *Stream {
	return s.Word(RecMap<<60 | name<<16).Word(addr).Word(size)
}

// Sync appends a SYNC record: a synchronization operation of the given
// kind (a trace.SyncKind) on the object at addr, with its second argument
// (Ext.Size) and its PC.
func (s *Stream) Sync(kind int, addr, arg, pc uint64) *Stream {
	return s.Word(RecSync<<60 | uint64(kind)&0xff).Word(addr).Word(arg).Word(pc)
}

// Skip appends a SKIP record: n memory references left out.
func (s *Stream) Skip(n uint64) *Stream { return s.Word(RecSkip<<60 | n) }

// End appends an END record.
func (s *Stream) End(code int) *Stream { return s.Word(RecEnd<<60 | uint64(code&0xff)) }

// Bytes returns the stream built so far.
func (s *Stream) Bytes() []byte { return s.B }

// FakeEvents is the number of events FakeValgrind writes per EXEC record
// with instruction fetches (FakeDataEvents without).
const (
	FakeEvents     = 8
	FakeDataEvents = 4
)

// FakeValgrind behaves like `valgrind --tool=memspy -q --out-fd=3 [OPTIONS]
// -- PROG ARGS` for tests: it checks its arguments and that $VALGRIND_LIB
// holds memspy-amd64-linux (failing like valgrind otherwise), writes a
// stream header, a THREAD record and a superblock description (with
// instruction fetches under --ifetch=yes) to file descriptor 3, then
// $MEMSPY_FAKE_EXECS (default 100) EXEC records of FakeEvents (or
// FakeDataEvents) events each, runs the program with its standard streams,
// forwarding SIGINT and SIGTERM to it, and when it ends writes END and
// exits like it (killing itself with the same signal if a signal killed
// the program). $MEMSPY_FAKE_MODE changes the stream: "noend" leaves out
// END, "corrupt" writes an unknown record (type 14) after the EXECs (and
// keeps the program running), "version" writes the next version
// (Version+1). $MEMSPY_FAKE_ARGS, if set, names a file that receives the
// arguments, one per line. It returns the exit code for os.Exit.
func FakeValgrind() int {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	args := os.Args[1:]
	if f := os.Getenv("MEMSPY_FAKE_ARGS"); f != "" {
		os.WriteFile(f, []byte(strings.Join(args, "\n")+"\n"), 0o644)
	}
	var tool, outFD string
	ifetch := false
	i := 0
	for ; i < len(args) && args[i] != "--"; i++ {
		switch a := args[i]; {
		case strings.HasPrefix(a, "--tool="):
			tool = strings.TrimPrefix(a, "--tool=")
		case strings.HasPrefix(a, "--out-fd="):
			outFD = strings.TrimPrefix(a, "--out-fd=")
		case a == "--ifetch=yes":
			ifetch = true
		}
	}
	if i+1 >= len(args) {
		fmt.Fprintln(os.Stderr, "valgrind: no program specified")
		return 1
	}
	prog := args[i+1:]
	if tool != "memspy" || outFD != "3" {
		fmt.Fprintf(os.Stderr, "fakevalgrind: want --tool=memspy --out-fd=3, got %q\n", args)
		return 1
	}
	if _, err := os.Stat(os.Getenv("VALGRIND_LIB") + "/memspy-amd64-linux"); err != nil {
		fmt.Fprintf(os.Stderr, "valgrind: failed to start tool 'memspy' for platform 'amd64-linux': No such file or directory\n")
		return 1
	}
	out := os.NewFile(3, "stream")
	mode := os.Getenv("MEMSPY_FAKE_MODE")
	execs := 100
	if n, err := strconv.Atoi(os.Getenv("MEMSPY_FAKE_EXECS")); err == nil {
		execs = n
	}

	var s Stream
	version := uint64(Version)
	if mode == "version" {
		version = Version + 1
	}
	flags := uint64(0)
	if ifetch {
		flags = FlagIFetch
	}
	s.HeaderVersion(version, flags, os.Getpid()).Thread(uint32(os.Getpid()))
	var ents []Entry
	add := func(e Entry) {
		if e.Kind != IFetch || ifetch {
			ents = append(ents, e)
		}
	}
	add(Entry{Kind: IFetch, Size: 4, PC: 0x401000})
	add(Entry{Kind: Read, Size: 8, PC: 0x401000})
	add(Entry{Kind: IFetch, Size: 3, PC: 0x401004})
	add(Entry{Kind: Write, Size: 4, PC: 0x401004})
	add(Entry{Kind: Exit, Size: 0, PC: 0x401004})
	add(Entry{Kind: IFetch, Size: 5, PC: 0x401007})
	add(Entry{Kind: Modify, Size: 4, PC: 0x401007})
	add(Entry{Kind: IFetch, Size: 2, PC: 0x40100c})
	add(Entry{Kind: Read, Size: 1, PC: 0x40100c})
	s.Describe(1, ents...)
	for k := range execs {
		a := uint64(0x10000 + 64*k)
		s.Exec(1, 1, a, a+8, a+16, a+24)
	}
	if mode == "corrupt" {
		s.Word(14 << 60)
	}
	out.Write(s.Bytes())

	cmd := exec.Command(prog[0], prog[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// The program dies with the fake, as it does with valgrind (which is
	// the program). Pdeathsig follows the thread that started it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	runtime.LockOSThread()
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "valgrind: %v\n", err)
		return 127
	}
	go func() {
		for sig := range sigs {
			cmd.Process.Signal(sig)
		}
	}()
	cmd.Wait()
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	code := ws.ExitStatus()
	if mode != "noend" {
		var e Stream
		out.Write(e.End(code).Bytes())
	}
	out.Close()
	if ws.Signaled() {
		// Die of the same signal. The Go runtime handles some signals
		// (SIGSEGV) itself whatever their disposition: let a shell do it.
		sh := fmt.Sprintf("kill -%d $$", int(ws.Signal()))
		err := syscall.Exec("/bin/sh", []string{"sh", "-c", sh}, os.Environ())
		fmt.Fprintf(os.Stderr, "fakevalgrind: %v\n", err)
		return 128 + int(ws.Signal())
	}
	return code
}

// Launcher returns the program that starts Valgrind's core for vg, the
// path of valgrind: vg itself, or valgrind.bin beside it when vg is a
// shell script (Debian's, which exports variables and execs valgrind.bin;
// the shell reorders the environment on the way, so a test that needs the
// environment memspy's program gets must start valgrind.bin itself).
func Launcher(vg string) (string, error) {
	head, err := os.ReadFile(vg)
	if err != nil || !strings.HasPrefix(string(head), "#!") {
		return vg, nil
	}
	if _, err := os.Stat(vg + ".bin"); err != nil {
		return "", fmt.Errorf("%s is a script, and no %s.bin beside it: another Valgrind tool cannot get the environment memspy's program gets", vg, vg)
	}
	return vg + ".bin", nil
}
