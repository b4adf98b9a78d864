package symbols

import (
	"bufio"
	"bytes"
	"debug/dwarf"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/memspy/memspy/attrib"
)

// localsProg prints where its stack variables are relative to the CFA
// (__builtin_dwarf_cfa), which the tests compare with what DWARF says.
// Markers in comments name lines.
const localsProg = `#include <stdio.h>

static inline __attribute__((always_inline)) int helper(int n)
{
	int buf[8];
	for (int k = 0; k < 8; k++)
		buf[k] = k + n;
	printf("buf %ld\n", (long)((char *)buf - (char *)__builtin_dwarf_cfa()));
	return buf[n & 7];
}

__attribute__((noinline)) double work(int n, double *out)
{
	int a[16];
	double d;
	struct { char c[24]; } s;
	for (int i = 0; i < 16; i++)
		a[i] = i * n;
	for (int i = 0; i < 24; i++)
		s.c[i] = (char)i;
	d = a[n & 15];
	{
		long inner[4];
		for (int j = 0; j < 4; j++)
			inner[j] = a[j] + s.c[j];
		d += inner[n & 3];
		printf("inner %ld\n", (long)((char *)inner - (char *)__builtin_dwarf_cfa()));
	}
	{
		int t[2]; /* T1 */
		t[n & 1] = n;
		d += t[n & 1];
		printf("t %ld\n", (long)((char *)t - (char *)__builtin_dwarf_cfa()));
	}
	{
		int t[3]; /* T2 */
		t[n % 3] = n;
		d += t[n % 3];
		printf("t %ld\n", (long)((char *)t - (char *)__builtin_dwarf_cfa()));
	}
	d += helper(n);
	printf("a %ld\n", (long)((char *)a - (char *)__builtin_dwarf_cfa()));
	printf("d %ld\n", (long)((char *)&d - (char *)__builtin_dwarf_cfa()));
	printf("s %ld\n", (long)((char *)&s - (char *)__builtin_dwarf_cfa()));
	*out = d + s.c[n % 24];
	return d;
}

void vec(double *restrict c, const double *a, const double *b, int n)
{
	for (int i = 0; i < n; i++)
		c[i] = a[i] + b[i]; /* VEC */
}

int main(int argc, char **argv)
{
	double out, x[4] = {1, 2, 3, 4}, y[4] = {0};
	vec(y, x, x, 4);
	printf("%f\n", work(argc, &out) + out + y[1]);
	return 0;
}
`

// printedVar is a variable whose CFA offset the program printed.
type printedVar struct {
	name string
	off  int64
	size uint64
}

// runLocals runs the program and returns the offsets it printed.
func runLocals(t *testing.T, path string) []printedVar {
	t.Helper()
	out, err := exec.Command(path).Output()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	sizes := map[string]uint64{"buf": 32, "inner": 32, "a": 64, "d": 8, "s": 24}
	var vs []printedVar
	tSizes := []uint64{8, 12}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			continue
		}
		off, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		v := printedVar{name: f[0], off: off, size: sizes[f[0]]}
		if v.name == "t" {
			v.size, tSizes = tSizes[0], tSizes[1:]
		}
		vs = append(vs, v)
	}
	if len(vs) != 7 {
		t.Fatalf("program printed %d offsets, want 7:\n%s", len(vs), out)
	}
	return vs
}

// checkLocals checks that ls are sorted, of non-zero size and not
// overlapping, and lie below the CFA.
func checkLocals(t *testing.T, ls []attrib.Local) {
	t.Helper()
	for i, l := range ls {
		if l.Size == 0 || l.Offset+int64(l.Size) > 0 || l.Name == "" {
			t.Errorf("bad local %+v", l)
		}
		if i > 0 && ls[i-1].Offset+int64(ls[i-1].Size) > l.Offset {
			t.Errorf("locals %+v and %+v overlap or are out of order", ls[i-1], l)
		}
	}
}

// covering returns the local whose range holds [off, off+size).
func covering(ls []attrib.Local, off int64, size uint64) (attrib.Local, bool) {
	for _, l := range ls {
		if l.Offset <= off && off+int64(size) <= l.Offset+int64(l.Size) {
			return l, true
		}
	}
	return attrib.Local{}, false
}

// nameParts returns the plain names a (possibly merged) local stands for.
func nameParts(name string) []string {
	var out []string
	for _, p := range strings.Split(name, "|") {
		out = append(out, strings.SplitN(p, "@", 2)[0])
	}
	return out
}

func TestLocals(t *testing.T) {
	needGCC(t)
	for _, opt := range []string{"-O0", "-O2"} {
		t.Run(opt, func(t *testing.T) {
			dir := t.TempDir()
			path := compile(t, dir, "prog", localsProg, "-g", opt, "-fpie", "-pie")
			b, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			work, _ := elfSym(t, path, "work")
			ls := b.Locals(work)
			t.Logf("Locals(work) = %+v", ls)
			checkLocals(t, ls)
			printed := runLocals(t, path)

			// Whatever covers a printed variable is at the right place
			// and names it.
			for _, v := range printed {
				l, ok := covering(ls, v.off, v.size)
				if !ok {
					if opt == "-O0" {
						t.Errorf("no local covers %s at CFA%+d size %d", v.name, v.off, v.size)
					}
					continue
				}
				if !slices.Contains(nameParts(l.Name), v.name) {
					t.Errorf("%s at CFA%+d is in local %+v", v.name, v.off, l)
				}
			}
			if opt != "-O0" {
				return
			}
			// Unoptimized: every variable and parameter has its own slot,
			// except where GCC reuses the slot of an ended block.
			want := map[string]uint64{"a": 64, "d": 8, "s": 24, "out": 8}
			t1, t2 := lineOf(t, localsProg, "T1"), lineOf(t, localsProg, "T2")
			want["t@"+strconv.Itoa(t1)] = 8
			want["t@"+strconv.Itoa(t2)] = 12
			got := map[string]attrib.Local{}
			for _, l := range ls {
				got[l.Name] = l
			}
			for name, size := range want {
				if l, ok := got[name]; !ok || l.Size != size {
					t.Errorf("local %s = %+v, %v; want size %d", name, l, ok, size)
				}
			}
			var ns int
			for _, l := range ls {
				for _, p := range nameParts(l.Name) {
					if p == "n" {
						ns++ // work's and the inlined helper's
					}
				}
			}
			if ns != 2 {
				t.Errorf("%d locals named n, want 2 (work's and helper's)", ns)
			}

			// Run-time addresses.
			var sp Space
			sp.Add(b, pieBias)
			if got := sp.Locals(pieBias + work); !reflect.DeepEqual(got, ls) {
				t.Errorf("Space.Locals(work) = %+v, want %+v", got, ls)
			}
			if got := sp.Locals(0x10); got != nil {
				t.Errorf("Space.Locals(0x10) = %+v, want nil", got)
			}
			if got := b.Locals(work + 1); got != nil {
				t.Errorf("Locals(work+1) = %+v, want nil", got)
			}
		})
	}
}

// TestLocalsFrameBase: with strict DWARF 2, GCC cannot use
// DW_OP_call_frame_cfa and gives each function's frame base as a location
// list; its fbreg offsets are then not CFA offsets.
func TestLocalsFrameBase(t *testing.T) {
	needGCC(t)
	path := compile(t, t.TempDir(), "prog", localsProg, "-g", "-O0", "-gdwarf-2", "-gstrict-dwarf")
	work, _ := elfSym(t, path, "work")
	if fb := frameBase(t, path, work); reflect.DeepEqual(fb, []byte{opCallFrameCFA}) {
		t.Fatalf("frame base of work is %v, want something else", fb)
	}
	b, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if ls := b.Locals(work); ls != nil {
		t.Errorf("Locals(work) = %+v, want nil", ls)
	}
}

// frameBase returns the DW_AT_frame_base of the subprogram at entry.
func frameBase(t *testing.T, path string, entry uint64) any {
	t.Helper()
	d := testDWARF(t, path)
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			t.Fatalf("no subprogram at %#x (%v)", entry, err)
		}
		if e.Tag == dwarf.TagSubprogram && e.Val(dwarf.AttrLowpc) == entry {
			return e.Val(dwarf.AttrFrameBase)
		}
	}
}

func TestLocalsLibc(t *testing.T) {
	if _, err := os.Stat(libcPath); err != nil {
		t.Skip("no system libc at " + libcPath)
	}
	b := timedOpen(t, libcPath)
	if b.debugPath == "" {
		t.Skip("no debugging information for libc")
	}
	n := 0
	for entry, ls := range b.locals {
		if len(ls) == 0 {
			t.Errorf("Locals(%#x) is empty, want nil", entry)
		}
		for i, l := range ls {
			if l.Size == 0 || l.Name == "" || (i > 0 && ls[i-1].Offset+int64(ls[i-1].Size) > l.Offset) {
				t.Errorf("Locals(%#x) = %+v: bad local %d", entry, ls, i)
				break
			}
		}
		n += len(ls)
	}
	t.Logf("libc: %d functions with %d stack locals", len(b.locals), n)
}

func TestFrameLocalsNames(t *testing.T) {
	got := frameLocals([]frameVar{
		{"x", 5, -16, 8},
		{"x", 9, -16, 4}, // same name and slot: kept once, larger
		{"buf", 3, -64, 16},
		{"buf", 3, -48, 16}, // a second inlined copy
		{"buf", 7, -128, 32},
		{"i", 2, -20, 4},
		{"j", 4, -20, 4}, // shares i's slot
		{"k", 6, -22, 4}, // overlaps i and j
	})
	want := []attrib.Local{
		{Name: "buf@7", Offset: -128, Size: 32},
		{Name: "buf@3#1", Offset: -64, Size: 16},
		{Name: "buf@3#2", Offset: -48, Size: 16},
		{Name: "k|i|j", Offset: -22, Size: 6},
		{Name: "x", Offset: -16, Size: 8},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("frameLocals = %+v\nwant %+v", got, want)
	}
}

func TestSleb128(t *testing.T) {
	for _, tc := range []struct {
		in   []byte
		v    int64
		n    int
		name string
	}{
		{[]byte{0x02}, 2, 1, "2"},
		{[]byte{0x7e}, -2, 1, "-2"},
		{[]byte{0xff, 0x00}, 127, 2, "127"},
		{[]byte{0x80, 0x7f}, -128, 2, "-128"},
		{[]byte{0x90, 0x7f}, -112, 2, "-112"},
		{[]byte{0x80, 0x80}, 0, 0, "unterminated"},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, 0, 0, "too long"},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f}, -1 << 63, 10, "min int64"},
	} {
		if v, n := sleb128(tc.in); v != tc.v || n != tc.n {
			t.Errorf("sleb128(%s) = %d, %d; want %d, %d", tc.name, v, n, tc.v, tc.n)
		}
	}
}

// TestColumns compares LineCol with an independent read of the line
// table, and checks that GCC gives one statement several columns.
func TestColumns(t *testing.T) {
	needGCC(t)
	for _, opt := range []string{"-O0", "-O2"} {
		t.Run(opt, func(t *testing.T) {
			path := compile(t, t.TempDir(), "prog", localsProg, "-g", opt)
			b, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			vec := lineOf(t, localsProg, "VEC")
			cols := map[int]bool{}
			rows := lineRows(t, path)
			for i, le := range rows {
				if le.EndSequence || (i+1 < len(rows) && rows[i+1].Address == le.Address) {
					continue
				}
				file, line, col, ok := b.LineCol(le.Address)
				if !ok || file != le.File.Name || line != le.Line || col != le.Column {
					t.Errorf("LineCol(%#x) = %s:%d:%d %v, want %s:%d:%d", le.Address, file, line, col, ok, le.File.Name, le.Line, le.Column)
				}
				if filepath.Base(file) == "prog.c" && line == vec {
					cols[col] = true
				}
			}
			t.Logf("columns of line %d: %v", vec, cols)
			if len(cols) < 2 || cols[0] {
				t.Errorf("columns of line %d: %v, want several, none 0", vec, cols)
			}
		})
	}
}

// lineRows returns all rows of the line tables of path, in order.
func lineRows(t testing.TB, path string) []dwarf.LineEntry {
	t.Helper()
	d := testDWARF(t, path)
	var rows []dwarf.LineEntry
	r := d.Reader()
	for {
		cu, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if cu == nil {
			return rows
		}
		r.SkipChildren()
		lr, err := d.LineReader(cu)
		if err != nil || lr == nil {
			continue
		}
		for {
			var le dwarf.LineEntry
			if err := lr.Next(&le); err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatal(err)
				}
				break
			}
			rows = append(rows, le)
		}
	}
}

func BenchmarkOpenLibc(b *testing.B) {
	if _, err := os.Stat(libcPath); err != nil {
		b.Skip("no system libc at " + libcPath)
	}
	for b.Loop() {
		if _, err := Open(libcPath); err != nil {
			b.Fatal(err)
		}
	}
}
