package report

import (
	"strings"
	"testing"

	"github.com/memspy/memspy/profile"
)

func TestCount(t *testing.T) {
	for n, want := range map[uint64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", 100000: "100,000"} {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestBytes(t *testing.T) {
	for n, want := range map[uint64]string{0: "0 B", 1023: "1023 B", 1024: "1 KiB", 1536: "1.5 KiB", 32 << 20: "32 MiB", 3 << 30: "3 GiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestRate(t *testing.T) {
	if got := Rate(1, 3); got != "33.3333%" {
		t.Errorf("Rate(1, 3) = %q", got)
	}
	if got := Rate(1, 0); got != "-" {
		t.Errorf("Rate(1, 0) = %q", got)
	}
}

func TestTextDumps(t *testing.T) {
	p := &profile.Profile{
		Source:   profile.Source{Name: "t", Format: "mst"},
		Complete: true,
		Events:   10,
		Caches:   []profile.CacheStats{{Name: "L1I", Level: 1}, {Name: "L1D", Level: 1, Accesses: 10, Misses: 1}, {Name: "L2", Level: 2}},
	}
	var plain strings.Builder
	if err := Text(&plain, p); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "dump") {
		t.Errorf("output without dumps mentions dumps:\n%s", plain.String())
	}
	p.Dumps = []profile.Dump{
		{Name: "init", Events: 1234, Caches: []profile.CacheStats{{Name: "L1I", Level: 1, Accesses: 4, Misses: 1},
			{Name: "L1D", Level: 1}, {Name: "L2", Level: 2, Accesses: 1, Misses: 1}}},
		{Name: "step\n2", Events: 5},
	}
	var out strings.Builder
	if err := Text(&out, p); err != nil {
		t.Fatal(err)
	}
	want := plain.String() + "\ndumps (counted since the start or the last reset):\n" +
		"  \"init\": 1,234 events, L1I miss rate 25.0000%, L1D miss rate -\n" +
		"  \"step\\n2\": 5 events\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
	p.Resets = 2
	out.Reset()
	if err := Text(&out, p); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "\ncounted since the program's last reset marker (2 resets)\n") {
		t.Errorf("no word of the resets:\n%s", out.String())
	}
}
