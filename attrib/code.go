package attrib

import "fmt"

// Proc ids of the procedures every Code has.
const (
	// UnknownProc stands for code outside every traced call: before the
	// first call a thread makes, or after it returns past its first frame.
	UnknownProc int32 = 0
)

// Proc is one procedure (a code bin): the code entered at Entry, or a
// region the program named with memspy.h (Region set, Entry 0). The
// procedure of a PLT entry (Stub code) stands for the function that its
// calls reach, Reaches (UnknownProc until a call got through): its frames
// become that function's at the entry's jump, and the entry's own
// instructions, run before, count as that function's too.
type Proc struct {
	Entry   uint64
	Name    string
	Region  bool
	Reaches int32
}

// Via says how code passes on the calls that reach it (see Linkage).
type Via uint8

const (
	// Direct code is an ordinary function's: a call to it makes a frame
	// of its own.
	Direct Via = iota
	// Stub code passes a call on by a jump (a tail call) and is no
	// function of its own: a procedure linkage table (PLT) entry, and the
	// PLT's lazy-binding entries and header. The call's frame belongs to
	// the function it reaches (see Proc.Reaches).
	Stub
	// Resolver code works in the frame of the call that reached it, then
	// jumps to another function, which takes the frame over (a tail
	// call): the dynamic linker's lazy-binding resolver, which a PLT
	// reaches on a function's first call and which jumps to the function
	// once bound.
	Resolver
)

// Linkage tells a Code how code passes calls on, so that a call through a
// PLT is a frame of the function it reaches rather than of the PLT entry
// called.
type Linkage interface {
	// Via returns how the code at pc passes calls on, and the range
	// [lo, hi) around pc of code that does so alike: the PLT section, the
	// resolver function, or the function holding pc (lo = hi = 0 when
	// unknown).
	Via(pc uint64) (v Via, lo, hi uint64)
}

// route is a Linkage's answer for an address.
type route struct {
	via    Via
	lo, hi uint64
}

// leave is where calls passing through a procedure's Stub or Resolver
// code left it last: at pc, for procedure proc, whose code has route r.
type leave struct {
	pc   uint64
	proc int32
	r    route
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
// recursive calls share one frame, counted in depth, as in MemSpy. A
// frame passing its call on (in Stub or Resolver code) keeps that code in
// [lo, hi) (hi is 0 for other frames): its first instruction outside,
// while the frame is innermost, is where the call went; stub is the
// procedure of the PLT entry called, if any, whose Reaches that tells.
type frame struct {
	code, owner int32
	ctx         int32
	stub        int32
	sp          uint64
	depth       int
	lo, hi      uint64
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
//
// With a Linkage, a call to code that passes it on by a jump (a PLT entry,
// the dynamic linker's resolver) is followed as a tail call: the frame is
// that code's until the first instruction outside it, which At must see,
// and from then on the frame of the function reached, called from the
// same parent. A PLT entry's procedure stands for the function reached
// (Proc.Reaches), so the call is that function's in every view, the
// entry's jump included, as if called directly; a resolver's procedure is
// its own, with the work of binding. Once a call through a PLT entry has
// reached a function, later calls of the entry are taken to reach the
// same one, as calls of it directly, without following them: the entry's
// GOT slot, once bound, keeps the function (it does not when the program
// rewrites its GOT, and under LD_BIND_NOT or an LD_AUDIT library that
// watches PLT calls, where every call goes through the resolver and its
// work counts in the function reached). Code asks the Linkage once per
// procedure and once per address where a call leaves such code, never per
// reference.
type Code struct {
	procs    []Proc
	routes   []route // by procedure: how its entry passes calls on
	leaves   []leave // by procedure: where calls passing through it went last
	byEntry  map[uint64]int32
	byRegion map[string]int32
	ctxs     []Context
	calls    []uint64          // by context: the calls that entered it
	children map[Context]int32 // context by procedure and parent
	threads  map[uint32]*thread
	tid      uint32
	cur      *thread
	link     Linkage          // nil: every call is direct
	exits    map[uint64]route // the Linkage's answers where calls left Stub or Resolver code
}

// NewCode returns a Code with only the unknown procedure, following calls
// through the Stub and Resolver code that link tells of (none when nil).
func NewCode(link Linkage) *Code {
	c := &Code{byEntry: map[uint64]int32{}, byRegion: map[string]int32{}, children: map[Context]int32{},
		threads: map[uint32]*thread{}, link: link, exits: map[uint64]route{}}
	c.procs = append(c.procs, Proc{Name: "<unknown>"})
	c.routes = append(c.routes, route{})
	c.leaves = append(c.leaves, leave{})
	c.ctxs = append(c.ctxs, Context{Proc: UnknownProc, Parent: -1})
	c.calls = append(c.calls, 0)
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

// Calls returns, by calling context, how many calls entered it (a direct
// recursion's calls included, a call passed on through a PLT entry or the
// resolver counted in the context it reached). The slice is the Code's
// own.
func (c *Code) Calls() []uint64 { return c.calls }

// ProcAt returns the procedure entered at entry, making it on first use.
func (c *Code) ProcAt(entry uint64) int32 {
	if id, ok := c.byEntry[entry]; ok {
		return id
	}
	c.procs = append(c.procs, Proc{Entry: entry, Name: fmt.Sprintf("%#x", entry)})
	var r route
	if c.link != nil {
		r.via, r.lo, r.hi = c.link.Via(entry)
	}
	c.routes = append(c.routes, r)
	c.leaves = append(c.leaves, leave{})
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
	c.routes = append(c.routes, route{})
	c.leaves = append(c.leaves, leave{})
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
	c.calls = append(c.calls, 0)
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
// when -1), at stack pointer sp, and returns the frame entered (nil when
// too deep). A direct recursion deepens the top frame.
func (c *Code) push(t *thread, p, owner int32, sp uint64) *frame {
	if n := len(t.frames); n > 0 && t.frames[n-1].code == p {
		t.outer = append(t.outer, t.frames[n-1].sp)
		t.frames[n-1].depth++
		t.frames[n-1].sp = sp
		c.calls[t.frames[n-1].ctx]++
		return &t.frames[n-1]
	}
	if len(t.frames) == maxStackFrames {
		return nil
	}
	parent := RootContext
	if n := len(t.frames); n > 0 {
		parent = t.frames[n-1].ctx
	}
	if owner < 0 {
		owner = p
	}
	ctx := c.context(p, parent)
	c.calls[ctx]++
	t.frames = append(t.frames, frame{code: p, owner: owner, ctx: ctx, sp: sp, depth: 1})
	return &t.frames[len(t.frames)-1]
}

// Call records that thread tid called the procedure at entry from the
// call instruction at pc (0 when unknown), the stack pointer being sp
// after the call. Frames at or below sp were left without a return
// (longjmp, exceptions, tail calls) and go first. When the thread is
// passing a call on (see At), pc first shows where that call went.
func (c *Code) Call(tid uint32, pc, entry, sp uint64) {
	t := c.thread(tid)
	t.unwind(sp + 1)
	if pc != 0 && t.passing() {
		c.follow(t, pc)
	}
	p := c.ProcAt(entry)
	r := c.routes[p]
	if reached := c.procs[p].Reaches; r.via == Stub && reached != UnknownProc {
		p, r = reached, route{} // a bound PLT entry: as a call of the function it reached
	}
	f := c.push(t, p, -1, sp)
	if r.via != Direct && f != nil {
		f.lo, f.hi = r.lo, r.hi
		if r.via == Stub {
			f.stub = p
		}
	}
}

// passing reports whether thread t is passing a call on: whether its
// innermost frame is in Stub or Resolver code.
func (t *thread) passing() bool {
	n := len(t.frames)
	return n > 0 && t.frames[n-1].hi != 0
}

// follow moves the call that thread t's innermost frame is passing on to
// the instruction at pc. Outside the code the frame is in, pc is in more
// Stub code (a lazy-binding entry, the PLT header, an executable's PLT
// entry that a library's GOT points to), in a resolver, which takes the
// frame over and passes the call on in turn, or in the function reached
// (its entry, or the first of its instructions seen), which takes the
// frame over.
func (c *Code) follow(t *thread, pc uint64) {
	f := &t.frames[len(t.frames)-1]
	if f.lo <= pc && pc < f.hi {
		return
	}
	l := &c.leaves[f.code]
	if l.pc != pc {
		r, ok := c.exits[pc]
		if !ok {
			r.via, r.lo, r.hi = c.link.Via(pc)
			c.exits[pc] = r
		}
		entry := pc // the first instruction seen of a function nothing names
		if r.lo < r.hi {
			entry = r.lo
		}
		p := UnknownProc
		if r.via != Stub {
			p = c.ProcAt(entry) // (which may grow c.leaves)
		}
		l = &c.leaves[f.code]
		*l = leave{pc: pc, proc: p, r: r}
	}
	if l.r.via == Stub {
		f.lo, f.hi = l.r.lo, l.r.hi
		return
	}
	stub, p, r := f.stub, l.proc, l.r
	if f = c.jump(t, p); f == nil {
		return // too deep
	}
	f.lo, f.hi, f.stub = 0, 0, UnknownProc
	switch {
	case r.via == Resolver:
		f.lo, f.hi, f.stub = r.lo, r.hi, stub
	case stub != UnknownProc:
		c.procs[stub].Reaches = p
	}
}

// jump makes the innermost activation of t's top frame one of procedure
// p, as a tail call does: p called from the frame's parent, with the
// frame's stack pointer. It returns the frame entered (nil when too
// deep).
func (c *Code) jump(t *thread, p int32) *frame {
	n := len(t.frames)
	c.calls[t.frames[n-1].ctx]-- // (the call counts where it goes)
	if top := &t.frames[n-1]; top.depth == 1 && (n == 1 || t.frames[n-2].code != p) {
		top.code, top.owner, top.ctx = p, p, c.context(p, c.ctxs[top.ctx].Parent)
		c.calls[top.ctx]++
		return top
	}
	f := t.frames[n-1]
	if f.depth > 1 {
		t.frames[n-1].depth--
		t.frames[n-1].sp = t.outer[len(t.outer)-1]
		t.outer = t.outer[:len(t.outer)-1]
	} else {
		t.frames = t.frames[:n-1]
	}
	return c.push(t, p, -1, f.sp)
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

// At returns the calling context in which thread tid runs the instruction
// at pc (0 when unknown), and whether the thread is passing a call on
// through Stub or Resolver code: then its context changes at the first
// instruction outside that code, so At must see every instruction the
// thread runs (or the next Call) until passing is false.
func (c *Code) At(tid uint32, pc uint64) (ctx int32, passing bool) {
	t := c.thread(tid)
	n := len(t.frames)
	if n == 0 {
		return RootContext, false
	}
	if t.frames[n-1].hi != 0 && pc != 0 {
		c.follow(t, pc)
		n = len(t.frames)
	}
	f := &t.frames[n-1]
	return f.ctx, f.hi != 0
}

// FrameOf returns the procedure whose stack frame on thread tid holds
// address a, and the stack pointer at that activation's entry (pointing at
// its return address): an activation's frame lies between its entry stack
// pointer and that of the call it made (each level of a direct recursion
// being an activation); the running one's reaches down to limit bytes
// below its entry stack pointer. A frame still in a PLT entry has no
// stack of its own: what the entry pushes (a lazy binding's arguments)
// is in its caller's. ok is false when a is in no frame.
func (c *Code) FrameOf(tid uint32, a, limit uint64) (proc int32, sp uint64, ok bool) {
	t := c.thread(tid)
	n, o := len(t.frames), len(t.outer)
	if n > 0 && t.frames[n-1].hi != 0 && c.routes[t.frames[n-1].code].via == Stub {
		n, o = n-1, o-(t.frames[n-1].depth-1)
	}
	if n == 0 {
		return UnknownProc, 0, false
	}
	top := &t.frames[n-1]
	if a <= top.sp && top.sp-a <= limit {
		return top.owner, top.sp, true
	}
	// Above the innermost activation: walk outwards, level by level (a
	// frame's outer levels are its last depth-1 entries of outer).
	below := top.sp
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
