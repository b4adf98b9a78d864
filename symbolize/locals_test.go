package symbolize_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/memspy/memspy/symbolize"
	"github.com/memspy/memspy/symbols"
)

func TestLocals(t *testing.T) {
	p := build(t)
	s, _ := p.mapped(t)
	mainLink := linkAddr(t, p.path, "main")
	b, err := symbols.Open(p.path)
	if err != nil {
		t.Fatal(err)
	}
	want := b.Locals(mainLink)
	got := s.Locals(mainLink + p.bias)
	if !reflect.DeepEqual(got, want) || got == nil {
		t.Errorf("Locals(main) = %+v, want %+v (not nil)", got, want)
	}
	var head bool
	for _, l := range got {
		head = head || (l.Name == "head" && l.Size == 16 && l.Offset < 0)
	}
	if !head {
		t.Errorf("Locals(main) = %+v, want head of size 16", got)
	}
	for _, pc := range []uint64{0, 0x10, mainLink + p.bias + 1} {
		if got := s.Locals(pc); got != nil {
			t.Errorf("Locals(%#x) = %+v, want nil", pc, got)
		}
	}
	if got := symbolize.New().Locals(mainLink + p.bias); got != nil {
		t.Errorf("nothing mapped: Locals(main) = %+v, want nil", got)
	}
}

// column returns the 1-based column of token in the line of testProg
// holding marker.
func column(t *testing.T, marker, token string) int {
	t.Helper()
	l := strings.Split(testProg, "\n")[line(t, marker)-1]
	i := strings.Index(l, token)
	if i < 0 {
		t.Fatalf("no %q in line %q", token, l)
	}
	return i + 1
}
