package attrib

import "testing"

func TestCodeStack(t *testing.T) {
	c := NewCode()
	if c.Current(1) != UnknownProc {
		t.Fatal("a thread starts in the unknown procedure")
	}
	const top = 0x7fff0000
	c.Call(1, 0x1000, top-8) // main
	mainP := c.Current(1)
	c.Call(1, 0x2000, top-64) // f
	f := c.Current(1)
	if mainP == f || c.Proc(f).Entry != 0x2000 {
		t.Fatalf("procs %d %d", mainP, f)
	}
	// Another thread has its own stack.
	c.Call(2, 0x3000, 0x5000)
	if c.Current(2) == f || c.Current(1) != f {
		t.Fatal("threads share a stack")
	}
	// Stack frames: f's locals below its entry SP, main's between.
	if p, ok := c.FrameOf(1, top-100, 1<<20); !ok || p != f {
		t.Errorf("FrameOf(locals of f) = %d %v", p, ok)
	}
	if p, ok := c.FrameOf(1, top-32, 1<<20); !ok || p != mainP {
		t.Errorf("FrameOf(locals of main) = %d %v", p, ok)
	}
	if _, ok := c.FrameOf(1, top+64, 1<<20); ok {
		t.Errorf("an address above every frame is in one")
	}
	// Direct recursion: one frame, with a depth.
	c.Call(1, 0x2000, top-128)
	c.Call(1, 0x2000, top-192)
	if c.Current(1) != f || len(c.threads[1].frames) != 2 || c.threads[1].frames[1].depth != 3 {
		t.Fatalf("recursion: %+v", c.threads[1].frames)
	}
	c.Return(1, top-184)
	c.Return(1, top-120)
	if c.Current(1) != f {
		t.Fatal("left the recursion too early")
	}
	c.Return(1, top-56)
	if c.Current(1) != mainP {
		t.Fatalf("after f returns: %d", c.Current(1))
	}
	// longjmp: a call at a stack pointer above deeper frames drops them.
	c.Call(1, 0x2000, top-64)
	c.Call(1, 0x4000, top-128)
	c.Call(1, 0x5000, top-64) // after a longjmp back into main
	if len(c.threads[1].frames) != 2 || c.Current(1) != c.ProcAt(0x5000) {
		t.Fatalf("after longjmp: %+v", c.threads[1].frames)
	}
	// A return past the first frame leaves the unknown procedure.
	c.Return(1, top+8)
	if c.Current(1) != UnknownProc {
		t.Fatal("returned past main: not unknown")
	}
	c.Return(1, top+100) // nothing to pop
}
