package attrib

import "fmt"

// Proc ids of the procedures every Code has.
const (
	// UnknownProc stands for code outside every traced call: before the
	// first call a thread makes, or after it returns past its first frame.
	UnknownProc int32 = 0
)

// Proc is one procedure (a code bin): the code entered at Entry, or a
// region the program named with memspy.h (Region set, Entry 0).
type Proc struct {
	Entry  uint64
	Name   string
	Region bool
}

// Context is a calling context: procedure Proc called from context Parent
// (-1 for the root context, whose procedure is UnknownProc). References
// are counted per context so that a procedure's inclusive counters add up
// every context with it on the path.
type Context struct {
	Proc, Parent int32
}

// RootContext is the context of code outside every traced call.
const RootContext int32 = 0

// frame is one activation on a thread's stack: its code bin, the
// procedure owning its stack frame (the enclosing function's, for a
// region), its calling context, and the stack pointer just after the call
// (pointing at the return address) of its innermost level. Directly
// recursive calls share one frame, counted in depth, as in MemSpy.
type frame struct {
	code, owner int32
	ctx         int32
	sp          uint64
	depth       int
}

// thread is the call stack of one thread, outermost first, with the stack
// pointers of the outer levels of directly recursive frames (depth-1 per
// frame, in frame order).
type thread struct {
	frames []frame
	outer  []uint64
}

// maxStackFrames bounds the frames kept per thread: deeper calls (runaway
// recursion through several procedures) are not kept, and their references
// count in the deepest procedure kept.
const maxStackFrames = 1 << 16

// Code follows the call stack of every thread from Call and Return events
// (and the regions of memspy.h) and says which procedure is running and
// in which calling context: MemSpy's current procedure.
type Code struct {
	procs    []Proc
	byEntry  map[uint64]int32
	byRegion map[string]int32
	ctxs     []Context
	children map[Context]int32 // context by procedure and parent
	threads  map[uint32]*thread
	tid      uint32
	cur      *thread
}

// NewCode returns a Code with only the unknown procedure.
func NewCode() *Code {
	c := &Code{byEntry: map[uint64]int32{}, byRegion: map[string]int32{}, children: map[Context]int32{},
		threads: map[uint32]*thread{}}
	c.procs = append(c.procs, Proc{Name: "<unknown>"})
	c.ctxs = append(c.ctxs, Context{Proc: UnknownProc, Parent: -1})
	c.cur = c.thread(0)
	return c
}

// Procs returns the procedures, indexed by id. The slice is the Code's own.
func (c *Code) Procs() []Proc { return c.procs }

// Proc returns procedure id.
func (c *Code) Proc(id int32) *Proc { return &c.procs[id] }

// Contexts returns the calling contexts, indexed by id; a context's parent
// comes before it. The slice is the Code's own.
func (c *Code) Contexts() []Context { return c.ctxs }

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

// region returns the procedure of the region called name, making it on
// first use.
func (c *Code) region(name string) int32 {
	if id, ok := c.byRegion[name]; ok {
		return id
	}
	c.procs = append(c.procs, Proc{Name: name, Region: true})
	id := int32(len(c.procs) - 1)
	c.byRegion[name] = id
	return id
}

// context returns the context of proc called from parent, making it on
// first use.
func (c *Code) context(proc, parent int32) int32 {
	k := Context{proc, parent}
	if id, ok := c.children[k]; ok {
		return id
	}
	c.ctxs = append(c.ctxs, k)
	id := int32(len(c.ctxs) - 1)
	c.children[k] = id
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

// push enters code bin p on t, owning the stack frame of owner (p itself
// when -1), at stack pointer sp. A direct recursion deepens the top frame.
func (c *Code) push(t *thread, p, owner int32, sp uint64) {
	if n := len(t.frames); n > 0 && t.frames[n-1].code == p {
		t.outer = append(t.outer, t.frames[n-1].sp)
		t.frames[n-1].depth++
		t.frames[n-1].sp = sp
		return
	}
	if len(t.frames) == maxStackFrames {
		return
	}
	parent := RootContext
	if n := len(t.frames); n > 0 {
		parent = t.frames[n-1].ctx
	}
	if owner < 0 {
		owner = p
	}
	t.frames = append(t.frames, frame{code: p, owner: owner, ctx: c.context(p, parent), sp: sp, depth: 1})
}

// Call records that thread tid called the procedure at entry, the stack
// pointer being sp after the call. Frames at or below sp were left without
// a return (longjmp, exceptions, tail calls) and go first.
func (c *Code) Call(tid uint32, entry, sp uint64) {
	t := c.thread(tid)
	t.unwind(sp + 1)
	c.push(t, c.ProcAt(entry), -1, sp)
}

// RegionBegin records that thread tid entered the region called name: a
// code bin nested in the running procedure, which keeps owning the stack
// frame. The region ends at RegionEnd or when that procedure returns.
func (c *Code) RegionBegin(tid uint32, name string) {
	t := c.thread(tid)
	sp, owner := ^uint64(0), UnknownProc
	if n := len(t.frames); n > 0 {
		sp, owner = t.frames[n-1].sp, t.frames[n-1].owner
	}
	c.push(t, c.region(name), owner, sp)
}

// RegionEnd records that thread tid left the region called name, and the
// calls it made that did not return. A region not on the stack is ignored.
func (c *Code) RegionEnd(tid uint32, name string) {
	t := c.thread(tid)
	p, ok := c.byRegion[name]
	if !ok {
		return
	}
	for i := len(t.frames) - 1; i >= 0; i-- {
		if t.frames[i].code == p {
			t.truncate(i + 1)
			if f := &t.frames[i]; f.depth > 1 {
				f.depth--
				f.sp = t.outer[len(t.outer)-1]
				t.outer = t.outer[:len(t.outer)-1]
			} else {
				t.truncate(i)
			}
			return
		}
	}
}

// truncate leaves the first n frames.
func (t *thread) truncate(n int) {
	for _, f := range t.frames[n:] {
		t.outer = t.outer[:len(t.outer)-(f.depth-1)]
	}
	t.frames = t.frames[:n]
}

// Return records that thread tid returned, the stack pointer being sp
// after the return: every level of a frame whose return address lies below
// sp is left (regions end with the procedure they are in).
func (c *Code) Return(tid uint32, sp uint64) {
	c.thread(tid).unwind(sp)
}

// unwind leaves every level of a frame whose stack pointer is below sp.
func (t *thread) unwind(sp uint64) {
	for n := len(t.frames); n > 0; n-- {
		f := &t.frames[n-1]
		for f.sp < sp && f.depth > 1 {
			f.depth--
			f.sp = t.outer[len(t.outer)-1]
			t.outer = t.outer[:len(t.outer)-1]
		}
		if f.sp >= sp {
			t.frames = t.frames[:n]
			return
		}
	}
	t.frames = t.frames[:0]
}

// Current returns the calling context running on thread tid.
func (c *Code) Current(tid uint32) int32 {
	t := c.thread(tid)
	if n := len(t.frames); n > 0 {
		return t.frames[n-1].ctx
	}
	return RootContext
}

// FrameOf returns the procedure whose stack frame on thread tid holds
// address a, and the stack pointer at that activation's entry (pointing at
// its return address): an activation's frame lies between its entry stack
// pointer and that of the call it made (each level of a direct recursion
// being an activation); the running one's reaches down to limit bytes
// below its entry stack pointer. ok is false when a is in no frame.
func (c *Code) FrameOf(tid uint32, a, limit uint64) (proc int32, sp uint64, ok bool) {
	t := c.thread(tid)
	n := len(t.frames)
	if n == 0 {
		return UnknownProc, 0, false
	}
	top := &t.frames[n-1]
	if a <= top.sp && top.sp-a <= limit {
		return top.owner, top.sp, true
	}
	// Above the innermost activation: walk outwards, level by level (a
	// frame's outer levels are its last depth-1 entries of outer).
	below, o := top.sp, len(t.outer)
	for i := n - 1; i >= 0; i-- {
		f := &t.frames[i]
		for k := range f.depth {
			lvl := f.sp
			if k > 0 {
				o--
				lvl = t.outer[o]
			}
			if a > below && a <= lvl {
				return f.owner, lvl, true
			}
			below = max(below, lvl)
		}
	}
	return UnknownProc, 0, false
}
