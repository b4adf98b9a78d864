package report

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memspy/memspy/profile"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

// renderAll renders the summary of p and every view but numa and calls
// (which came after the golden files) in every format, each led by a "==
// view format ==" line (errors as "error: …").
func renderAll(p *profile.Profile) string {
	var b strings.Builder
	b.WriteString("== summary ==\n")
	if err := Text(&b, p); err != nil {
		b.WriteString("error: " + err.Error() + "\n")
	}
	for _, v := range Views() {
		if v == "numa" || v == "calls" {
			continue
		}
		for _, f := range Formats() {
			b.WriteString("\n== " + v + " " + f + " ==\n")
			opt := ViewOptions{Function: "matmul", Object: "B", Evictors: true, Format: f}
			if v == "data" || v == "lines" {
				opt.Object = ""
			}
			if err := View(&b, p, v, opt); err != nil {
				b.WriteString("error: " + err.Error() + "\n")
			}
		}
	}
	return b.String()
}

// TestNoNumaUnchanged checks that profiles without NUMA statistics (of
// one processor, of several, with threads, without where-and-why data)
// render their summary and every view exactly as before the NUMA
// statistics: testdata/nonuma-*.txt were written before them (go test
// -update rewrites them).
func TestNoNumaUnchanged(t *testing.T) {
	bare := func(p *profile.Profile) *profile.Profile {
		p.Functions, p.Objects, p.Pairs, p.Lines, p.References = nil, nil, nil, nil, nil
		p.Options.Where = false
		return p
	}
	for _, c := range []struct {
		name string
		p    *profile.Profile
	}{
		{"one", testProfile()},
		{"multi", testMultiProfile()},
		{"threads", testThreadProfile()},
		{"threads-bare", bare(testThreadProfile())},
	} {
		got := renderAll(c.p)
		path := filepath.Join("testdata", "nonuma-"+c.name+".txt")
		if *update {
			if err := os.MkdirAll("testdata", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
			for i := range max(len(gl), len(wl)) {
				var g, w string
				if i < len(gl) {
					g = gl[i]
				}
				if i < len(wl) {
					w = wl[i]
				}
				if g != w {
					t.Errorf("%s: line %d differs:\ngot  %q\nwant %q", path, i+1, g, w)
					break
				}
			}
		}
	}
}
