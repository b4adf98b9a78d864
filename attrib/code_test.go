package attrib

import "testing"

// running returns the procedure running on thread tid.
func running(c *Code, tid uint32) int32 { return c.Contexts()[c.Current(tid)].Proc }

func TestCodeStack(t *testing.T) {
	c := NewCode(nil)
	if running(c, 1) != UnknownProc || c.Current(1) != RootContext {
		t.Fatal("a thread starts in the unknown procedure")
	}
	const top = 0x7fff0000
	c.Call(1, 0, 0x1000, top-8) // main
	mainP := running(c, 1)
	c.Call(1, 0, 0x2000, top-64) // f
	f := running(c, 1)
	if mainP == f || c.Proc(f).Entry != 0x2000 {
		t.Fatalf("procs %d %d", mainP, f)
	}
	// Another thread has its own stack.
	c.Call(2, 0, 0x3000, 0x5000)
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
	c.Call(1, 0, 0x2000, top-128)
	c.Call(1, 0, 0x2000, top-192)
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
	c.Call(1, 0, 0x2000, top-64)
	c.Call(1, 0, 0x4000, top-128)
	c.Call(1, 0, 0x5000, top-64) // after a longjmp back into main
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
	c := NewCode(nil)
	const top = 0x7fff0000
	c.Call(1, 0, 0x1000, top-8)  // main
	c.Call(1, 0, 0x2000, top-64) // f from main
	fromMain := c.Current(1)
	c.Return(1, top-56)
	c.Call(1, 0, 0x3000, top-64)  // g
	c.Call(1, 0, 0x2000, top-128) // f from g
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
	c.Call(1, 0, 0x2000, top-64)
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
	c := NewCode(nil)
	const top = 0x7fff0000
	c.Call(1, 0, 0x1000, top-8) // main
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
	c.Call(1, 0, 0x2000, top-64) // f inside the region
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
	c.Call(1, 0, 0x2000, top-64)
	c.RegionBegin(1, "solve")
	c.RegionBegin(1, "solve") // nested: one frame, depth 2
	c.Return(1, top-56)
	if running(c, 1) != mainP {
		t.Fatalf("f returned inside its region: running %d", running(c, 1))
	}
	// A region ended with calls still open drops them.
	c.RegionBegin(1, "solve")
	c.Call(1, 0, 0x2000, top-64)
	c.RegionEnd(1, "solve")
	if running(c, 1) != mainP {
		t.Fatal("region end left f on the stack")
	}
}

// pltLinkage is a synthetic program for calls through a PLT: main, f and
// g, a PLT whose entries jump to them (g's through the lazy entry and the
// header to the resolver, which calls fixup), a second module's PLT, and
// unknown code above 0x9000.
type pltLinkage struct{}

const (
	lkMain, lkF, lkG       = 0x1000, 0x3000, 0x4000
	lkPLT, lkFPLT, lkGPLT  = 0x2000, 0x2010, 0x2020 // header, f's entry, g's entry
	lkHPLT, lkKPLT, lkRPLT = 0x2030, 0x2040, 0x2050 // entries of h and r (which are f) and k (unknown code)
	lkPLT2                 = 0x7000
	lkResolver, lkFixup    = 0x5000, 0x6000
)

func (pltLinkage) Via(pc uint64) (Via, uint64, uint64) {
	lo := pc &^ 0xfff
	switch lo {
	case lkPLT, lkPLT2:
		return Stub, lo, lo + 0x100
	case lkResolver:
		return Resolver, lo, lo + 0x100
	case lkMain, lkF, lkG, lkFixup:
		return Direct, lo, lo + 0x100
	}
	return Direct, 0, 0
}

// TestCodePLT follows calls through PLT entries as tail calls: the
// frame is the entry's until its jump (the entry's procedure standing
// for the function reached), then the reached function's, called from
// the caller; on a first, lazily bound call the resolver has the frame
// (with its calls) until it jumps to the function, which then takes the
// frame over. Later calls of an entry are calls of the function it
// reached.
func TestCodePLT(t *testing.T) {
	c := NewCode(pltLinkage{})
	const top = 0x7fff0000
	c.Call(1, 0, lkMain, top-8)
	mainCtx := c.Current(1)
	// at checks the context that thread 1 runs pc in and whether it is
	// still passing a call on.
	at := func(pc uint64, wantProc uint64, wantParent int32, wantPassing bool) {
		t.Helper()
		ctx, passing := c.At(1, pc)
		x := c.Contexts()[ctx]
		if c.Proc(x.Proc).Entry != wantProc || x.Parent != wantParent || passing != wantPassing {
			t.Fatalf("At(%#x): proc at %#x, parent %d, passing %v; want %#x, %d, %v",
				pc, c.Proc(x.Proc).Entry, x.Parent, passing, wantProc, wantParent, wantPassing)
		}
	}
	frameOf := func(a uint64, wantProc, wantSP uint64) {
		t.Helper()
		if p, sp, ok := c.FrameOf(1, a, 1<<20); !ok || c.Proc(p).Entry != wantProc || sp != wantSP {
			t.Errorf("FrameOf(%#x) = proc at %#x, sp %#x, %v; want %#x, %#x", a, c.Proc(p).Entry, sp, ok, wantProc, wantSP)
		}
	}
	fPLT, f := c.ProcAt(lkFPLT), c.ProcAt(lkF)

	// A bound call: the entry's GOT read, then f in the same frame,
	// called from main; the entry stands for f.
	c.Call(1, lkMain+0x10, lkFPLT, top-64)
	at(lkFPLT, lkFPLT, mainCtx, true)
	frameOf(top-72, lkMain, top-8) // the entry's stack is main's
	at(lkF, lkF, mainCtx, false)
	at(lkF+0x20, lkF, mainCtx, false)
	frameOf(top-80, lkF, top-64)
	if got := c.Proc(fPLT).Reaches; got != f {
		t.Errorf("f's PLT entry reaches %d, want f (%d)", got, f)
	}
	c.Return(1, top-56)
	at(lkMain+0x14, lkMain, RootContext, false)

	// A lazily bound call: the entry, the lazy entry and the header, then
	// the resolver in the call's frame, calling fixup; the resolver jumps
	// to g, which takes the frame over, called from main.
	c.Call(1, lkMain+0x20, lkGPLT, top-64)
	at(lkGPLT+6, lkGPLT, mainCtx, true)
	at(lkPLT, lkGPLT, mainCtx, true)
	at(lkResolver, lkResolver, mainCtx, true)
	frameOf(top-100, lkResolver, top-64)
	resolverCtx := c.Current(1)
	c.Call(1, lkResolver+0x40, lkFixup, top-200)
	at(lkFixup+8, lkFixup, resolverCtx, false)
	c.Return(1, top-192)
	at(lkResolver+0x48, lkResolver, mainCtx, true)
	at(lkG, lkG, mainCtx, false)
	gCtx := c.Current(1)
	if got := c.Proc(c.ProcAt(lkGPLT)).Reaches; got != c.ProcAt(lkG) {
		t.Errorf("g's PLT entry reaches %d, want g (%d)", got, c.ProcAt(lkG))
	}
	c.Return(1, top-56)
	at(lkMain+0x24, lkMain, RootContext, false)

	// Once bound, an entry's calls are calls of the function it reached,
	// from the entry's jump on.
	c.Call(1, lkMain+0x20, lkGPLT, top-64)
	at(lkGPLT, lkG, mainCtx, false)
	if c.Current(1) != gCtx {
		t.Error("the bound call of g made another context")
	}
	c.Return(1, top-56)
	c.Call(1, lkMain+0x10, lkFPLT, top-64)
	at(lkFPLT, lkF, mainCtx, false)
	c.Return(1, top-56)

	// A call from the reached function, before any of its references,
	// shows where the call went: f, then g called from f.
	c.Call(1, lkMain+0x10, lkHPLT, top-64)
	c.Call(1, lkF+0x30, lkG, top-128)
	fCtx := c.Contexts()[c.Current(1)].Parent
	if x := c.Contexts()[fCtx]; x.Proc != f || x.Parent != mainCtx {
		t.Fatalf("the caller of g is %+v", x)
	}
	if got := c.Proc(c.ProcAt(lkHPLT)).Reaches; got != f {
		t.Errorf("h's PLT entry reaches %d, want f (%d)", got, f)
	}
	c.Return(1, top-120)
	c.Return(1, top-56)

	// A recursive call through the PLT deepens f's frame, on an entry's
	// first call and later.
	c.Call(1, lkMain+0x10, lkFPLT, top-64)
	fCtx = c.Current(1)
	c.Call(1, lkF+0x40, lkRPLT, top-128)
	at(lkRPLT, lkRPLT, fCtx, true)
	at(lkF, lkF, mainCtx, false)
	if n := len(c.threads[1].frames); n != 2 || c.threads[1].frames[1].depth != 2 {
		t.Fatalf("recursion through the PLT: %+v", c.threads[1].frames)
	}
	c.Return(1, top-120)
	c.Call(1, lkF+0x40, lkRPLT, top-128)
	at(lkF, lkF, mainCtx, false)
	if n := len(c.threads[1].frames); n != 2 || c.threads[1].frames[1].depth != 2 {
		t.Fatalf("recursion through the PLT: %+v", c.threads[1].frames)
	}
	frameOf(top-100, lkF, top-64)
	c.Return(1, top-120)
	c.Return(1, top-56)

	// Through two PLTs (an executable's canonical entry) to code nothing
	// names: a procedure at the first instruction seen.
	c.Call(1, lkMain+0x10, lkKPLT, top-64)
	at(lkPLT2+0x10, lkKPLT, mainCtx, true)
	at(0x9040, 0x9040, mainCtx, false)
	c.Return(1, top-56)
	at(lkMain+0x14, lkMain, RootContext, false)
}
