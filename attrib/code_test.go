package attrib

import "testing"

// running returns the procedure running on thread tid.
func running(c *Code, tid uint32) int32 { return c.Contexts()[c.Current(tid)].Proc }

func TestCodeStack(t *testing.T) {
	c := NewCode()
	if running(c, 1) != UnknownProc || c.Current(1) != RootContext {
		t.Fatal("a thread starts in the unknown procedure")
	}
	const top = 0x7fff0000
	c.Call(1, 0x1000, top-8) // main
	mainP := running(c, 1)
	c.Call(1, 0x2000, top-64) // f
	f := running(c, 1)
	if mainP == f || c.Proc(f).Entry != 0x2000 {
		t.Fatalf("procs %d %d", mainP, f)
	}
	// Another thread has its own stack.
	c.Call(2, 0x3000, 0x5000)
	if running(c, 2) == f || running(c, 1) != f {
		t.Fatal("threads share a stack")
	}
	// Stack frames: f's locals below its entry SP, main's between.
	if p, _, ok := c.FrameOf(1, top-100, 1<<20); !ok || p != f {
		t.Errorf("FrameOf(locals of f) = %d %v", p, ok)
	}
	if p, _, ok := c.FrameOf(1, top-32, 1<<20); !ok || p != mainP {
		t.Errorf("FrameOf(locals of main) = %d %v", p, ok)
	}
	if _, _, ok := c.FrameOf(1, top+64, 1<<20); ok {
		t.Errorf("an address above every frame is in one")
	}
	// Direct recursion: one frame, with a depth.
	c.Call(1, 0x2000, top-128)
	c.Call(1, 0x2000, top-192)
	if running(c, 1) != f || len(c.threads[1].frames) != 2 || c.threads[1].frames[1].depth != 3 {
		t.Fatalf("recursion: %+v", c.threads[1].frames)
	}
	// Each level of the recursion is an activation with its own frame.
	for _, tc := range []struct {
		a, sp uint64
		proc  int32
	}{{top - 200, top - 192, f}, {top - 150, top - 128, f}, {top - 100, top - 64, f}, {top - 32, top - 8, mainP}} {
		if p, sp, ok := c.FrameOf(1, tc.a, 1<<20); !ok || p != tc.proc || sp != tc.sp {
			t.Errorf("FrameOf(%#x) = %d %#x %v, want %d %#x", tc.a, p, sp, ok, tc.proc, tc.sp)
		}
	}
	c.Return(1, top-184)
	c.Return(1, top-120)
	if running(c, 1) != f {
		t.Fatal("left the recursion too early")
	}
	c.Return(1, top-56)
	if running(c, 1) != mainP {
		t.Fatalf("after f returns: %d", running(c, 1))
	}
	// longjmp: a call at a stack pointer above deeper frames drops them.
	c.Call(1, 0x2000, top-64)
	c.Call(1, 0x4000, top-128)
	c.Call(1, 0x5000, top-64) // after a longjmp back into main
	if len(c.threads[1].frames) != 2 || running(c, 1) != c.ProcAt(0x5000) {
		t.Fatalf("after longjmp: %+v", c.threads[1].frames)
	}
	// A return past the first frame leaves the unknown procedure.
	c.Return(1, top+8)
	if running(c, 1) != UnknownProc {
		t.Fatal("returned past main: not unknown")
	}
	c.Return(1, top+100) // nothing to pop
}

func TestCodeContexts(t *testing.T) {
	c := NewCode()
	const top = 0x7fff0000
	c.Call(1, 0x1000, top-8)  // main
	c.Call(1, 0x2000, top-64) // f from main
	fromMain := c.Current(1)
	c.Return(1, top-56)
	c.Call(1, 0x3000, top-64)  // g
	c.Call(1, 0x2000, top-128) // f from g
	fromG := c.Current(1)
	if fromMain == fromG {
		t.Fatal("f from main and from g share a context")
	}
	ctx := c.Contexts()
	if ctx[fromMain].Proc != ctx[fromG].Proc || ctx[ctx[fromG].Parent].Proc != c.ProcAt(0x3000) {
		t.Fatalf("contexts %+v", ctx)
	}
	c.Return(1, top-120)
	c.Return(1, top-56)
	c.Call(1, 0x2000, top-64)
	if c.Current(1) != fromMain {
		t.Fatal("the same path made a second context")
	}
	for id, x := range ctx {
		if id > 0 && (x.Parent < 0 || int(x.Parent) >= id) {
			t.Fatalf("context %d has parent %d", id, x.Parent)
		}
	}
}

func TestCodeRegions(t *testing.T) {
	c := NewCode()
	const top = 0x7fff0000
	c.Call(1, 0x1000, top-8) // main
	mainP := running(c, 1)
	c.RegionBegin(1, "solve")
	solve := running(c, 1)
	if !c.Proc(solve).Region || c.Proc(solve).Name != "solve" {
		t.Fatalf("region proc %+v", c.Proc(solve))
	}
	// main still owns the stack frame.
	if p, _, ok := c.FrameOf(1, top-100, 1<<20); !ok || p != mainP {
		t.Errorf("FrameOf in a region = %d %v", p, ok)
	}
	c.Call(1, 0x2000, top-64) // f inside the region
	if p, _, ok := c.FrameOf(1, top-32, 1<<20); !ok || p != mainP {
		t.Errorf("FrameOf(main's locals, under f in a region) = %d %v", p, ok)
	}
	c.Return(1, top-56)
	if running(c, 1) != solve {
		t.Fatal("a return inside the region left it")
	}
	c.RegionEnd(1, "other") // not on the stack
	c.RegionEnd(1, "solve")
	if running(c, 1) != mainP {
		t.Fatal("region end did not return to main")
	}
	// A region left open ends when its procedure returns.
	c.Call(1, 0x2000, top-64)
	c.RegionBegin(1, "solve")
	c.RegionBegin(1, "solve") // nested: one frame, depth 2
	c.Return(1, top-56)
	if running(c, 1) != mainP {
		t.Fatalf("f returned inside its region: running %d", running(c, 1))
	}
	// A region ended with calls still open drops them.
	c.RegionBegin(1, "solve")
	c.Call(1, 0x2000, top-64)
	c.RegionEnd(1, "solve")
	if running(c, 1) != mainP {
		t.Fatal("region end left f on the stack")
	}
}
