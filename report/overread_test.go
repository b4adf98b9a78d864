package report

import (
	"strings"
	"testing"
)

// TestAdviseOverRead: freed memory read only by the C library's vectorized
// string functions is an over-read, listed last; one reference of the
// program's own keeps it a use after free.
func TestAdviseOverRead(t *testing.T) {
	p := testProfile()
	for i := range p.References {
		if r := &p.References[i]; r.Object == "buf" {
			r.Function = []string{"__strlen_avx2", "__memchr_evex"}[i%2]
		}
	}
	as := Advise(p)
	last := as[len(as)-1]
	if last.Kind != AdviceOverRead || last.Object != "buf" ||
		!strings.HasPrefix(last.Message, "12 accesses to freed memory (buf), all by the C library's vectorized string and memory functions (") ||
		!strings.Contains(last.Message, "__strlen_avx2") || !strings.Contains(last.Message, "__memchr_evex") {
		t.Errorf("last advice %+v", last)
	}
	for _, a := range as {
		if a.Kind == AdviceUseAfterFree {
			t.Errorf("use after free from over-reads: %q", a.Message)
		}
	}

	p = testProfile()
	n := 0
	for i := range p.References {
		if r := &p.References[i]; r.Object == "buf" && n == 0 {
			r.Function, n = "__strcmp_sse2_unaligned", 1
		}
	}
	if as := Advise(p); as[0].Kind != AdviceUseAfterFree {
		t.Errorf("a use after free with a reference of the program's own: %+v", as[0])
	}
	for fn, want := range map[string]bool{"__strlen_avx2": true, "__memmove_avx_unaligned_erms": true, "__wcslen_sse4_1": true,
		"__rawmemchr_evex": true, "__stpcpy_ssse3": true, "strlen": false, "__libc_malloc": false,
		"main": false, "__sse_work": false} {
		if overReader(fn) != want {
			t.Errorf("overReader(%q) = %v", fn, !want)
		}
	}
}
