package attrib

import "fmt"

// Proc ids of the procedures every Code has.
const (
	// UnknownProc stands for code outside every traced call: before the
	// first call a thread makes, or after it returns past its first frame.
	UnknownProc int32 = 0
)

// Proc is one procedure (a code bin): the code entered at Entry.
type Proc struct {
	Entry uint64
	Name  string
}

// frame is one activation on a thread's stack: its procedure and the
// stack pointer just after the call (pointing at the return address).
// Directly recursive calls share one frame, counted in depth, as in MemSpy.
type frame struct {
	proc  int32
	sp    uint64
	depth int
}

// thread is the call stack of one thread, outermost first.
type thread struct {
	frames []frame
}

// maxStackFrames bounds the frames kept per thread: deeper calls (runaway
// recursion through several procedures) are not kept, and their references
// count in the deepest procedure kept.
const maxStackFrames = 1 << 16

// Code follows the call stack of every thread from Call and Return events
// and says which procedure is running: MemSpy's current procedure.
type Code struct {
	procs   []Proc
	byEntry map[uint64]int32
	threads map[uint32]*thread
	tid     uint32
	cur     *thread
}

// NewCode returns a Code with only the unknown procedure.
func NewCode() *Code {
	c := &Code{byEntry: map[uint64]int32{}, threads: map[uint32]*thread{}}
	c.procs = append(c.procs, Proc{Name: "<unknown>"})
	c.cur = c.thread(0)
	return c
}

// Procs returns the procedures, indexed by id. The slice is the Code's own.
func (c *Code) Procs() []Proc { return c.procs }

// Proc returns procedure id.
func (c *Code) Proc(id int32) *Proc { return &c.procs[id] }

// ProcAt returns the procedure entered at entry, making it on first use.
func (c *Code) ProcAt(entry uint64) int32 {
	if id, ok := c.byEntry[entry]; ok {
		return id
	}
	c.procs = append(c.procs, Proc{Entry: entry, Name: fmt.Sprintf("%#x", entry)})
	id := int32(len(c.procs) - 1)
	c.byEntry[entry] = id
	return id
}

func (c *Code) thread(tid uint32) *thread {
	if c.cur != nil && c.tid == tid {
		return c.cur
	}
	t := c.threads[tid]
	if t == nil {
		t = &thread{}
		c.threads[tid] = t
	}
	c.tid, c.cur = tid, t
	return t
}

// Call records that thread tid called the procedure at entry, the stack
// pointer being sp after the call. Frames at or below sp were left without
// a return (longjmp, exceptions, tail calls) and go first.
func (c *Code) Call(tid uint32, entry, sp uint64) {
	t := c.thread(tid)
	t.unwind(sp + 1)
	p := c.ProcAt(entry)
	if n := len(t.frames); n > 0 && t.frames[n-1].proc == p {
		t.frames[n-1].depth++
		t.frames[n-1].sp = sp
		return
	}
	if len(t.frames) == maxStackFrames {
		return
	}
	t.frames = append(t.frames, frame{proc: p, sp: sp, depth: 1})
}

// Return records that thread tid returned, the stack pointer being sp
// after the return: every frame whose return address lies below sp is
// left.
func (c *Code) Return(tid uint32, sp uint64) {
	t := c.thread(tid)
	n := len(t.frames)
	if n == 0 {
		return
	}
	top := &t.frames[n-1]
	if top.sp < sp && top.depth > 1 {
		// Leaving one level of a direct recursion: the frame stays, its
		// stack pointer unknown (the caller's level is higher up).
		top.depth--
		return
	}
	t.unwind(sp)
}

// unwind pops every frame whose stack pointer is below sp.
func (t *thread) unwind(sp uint64) {
	n := len(t.frames)
	for n > 0 && t.frames[n-1].sp < sp {
		n--
	}
	t.frames = t.frames[:n]
}

// Current returns the procedure running on thread tid.
func (c *Code) Current(tid uint32) int32 {
	t := c.thread(tid)
	if n := len(t.frames); n > 0 {
		return t.frames[n-1].proc
	}
	return UnknownProc
}

// FrameOf returns the procedure whose stack frame on thread tid holds
// address a: the frame of procedure i lies between the stack pointer at its
// entry and that of the call it made; the running procedure's frame reaches
// down to limit bytes below its entry stack pointer. ok is false when a is
// in no frame.
func (c *Code) FrameOf(tid uint32, a, limit uint64) (proc int32, ok bool) {
	t := c.thread(tid)
	n := len(t.frames)
	if n == 0 {
		return UnknownProc, false
	}
	top := t.frames[n-1]
	if a > top.sp || top.sp-a > limit {
		// Above the innermost frame: find the frame whose range holds it.
		for i := n - 1; i > 0; i-- {
			if a > t.frames[i].sp && a <= t.frames[i-1].sp {
				return t.frames[i-1].proc, true
			}
		}
		return UnknownProc, false
	}
	return top.proc, true
}
