package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memspy/memspy/profile"
)

// testPage is the page of the test profile.
func testPage(t *testing.T) (*Page, *Model) {
	m, err := NewModel(testProfile(t), "mm.memspy", DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	return NewPage(nil, m), m
}

// pageData returns the data embedded in the HTML page doc.
func pageData(t *testing.T, doc string) *Page {
	t.Helper()
	re := regexp.MustCompile(`(?s)<script type="application/json" id="memspy-data">(.*?)</script>`)
	sm := re.FindStringSubmatch(doc)
	if sm == nil {
		t.Fatal("the page has no data")
	}
	var pg Page
	if err := json.Unmarshal([]byte(sm[1]), &pg); err != nil {
		t.Fatal(err)
	}
	return &pg
}

// TestPageSelfContained checks that the page carries its script, style,
// chart library and data, loads nothing from anywhere, and that its data
// is the model's.
func TestPageSelfContained(t *testing.T) {
	pg, m := testPage(t)
	var b bytes.Buffer
	if err := pg.Write(&b); err != nil {
		t.Fatal(err)
	}
	doc := b.String()
	// Nothing is loaded: outside the scripts' text, no element with a
	// src, no stylesheet link, no import, no url() of a style.
	markup := regexp.MustCompile(`(?s)(<script[^>]*>).*?</script>`).ReplaceAllString(doc, "$1</script>")
	for _, re := range []string{`(?i)<(script|img|iframe|link|embed|object|source|audio|video|frame)\b[^>]*\b(src|href|data)\s*=`,
		`(?i)@import`, `(?i)url\(`, `(?i)<base\b`} {
		if loc := regexp.MustCompile(re).FindStringIndex(markup); loc != nil {
			t.Errorf("the page loads something (%s): %.80q", re, markup[loc[0]:])
		}
	}
	// The addresses anywhere in the page are those of ECharts' licence
	// and XML namespaces, which name and load nothing.
	names := map[string]bool{"http://www.apache.org/licenses/LICENSE-2.0": true, "http://www.w3.org/1999/xlink": true,
		"http://www.w3.org/2000/svg": true, "http://www.w3.org/2000/xmlns/": true, "http://www.w3.org/XML/1998/namespace": true,
		"https://github.com/ecomfe/zrender/blob/master/LICENSE": true}
	for _, u := range regexp.MustCompile(`(?i)https?://[^\s"'()<>\\]+`).FindAllString(doc, -1) {
		if !names[u] {
			t.Errorf("the page names %s", u)
		}
	}
	if !strings.Contains(doc, `content="default-src 'none'; script-src 'unsafe-inline'`) {
		t.Error("the page has no content security policy")
	}
	if n := strings.Count(doc, "</script>"); n != 3 {
		t.Errorf("%d ends of scripts, want 3 (data, ECharts, the page's own)", n)
	}
	js, err := assets.ReadFile("assets/echarts/echarts.min.js")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(doc, string(js)) {
		t.Error("ECharts is not embedded whole")
	}
	got := pageData(t, doc)
	if diff := cmp.Diff(pg, got); diff != "" {
		t.Errorf("the page's data is not the model (-model +page):\n%s", diff)
	}
	if got.Profiles[0].Caches[0].Misses != m.Caches[0].Misses || got.ECharts != EChartsVersion {
		t.Error("the page's data lost numbers")
	}
	// A name with markup stays text.
	m.Name = "</script><script>alert(1)</script>.memspy"
	b.Reset()
	if err := NewPage(nil, m).Write(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "<script>alert") {
		t.Error("a profile's name is written as markup")
	}
}

// TestPageSize checks that the page of a profile far larger than what it
// shows stays within its bounds.
func TestPageSize(t *testing.T) {
	p := testProfile(t)
	big := *p
	for i := range 5000 { // many more pairs and references, each with a long name
		r := p.References[0]
		r.PC = 0x500000 + uint64(i)
		r.Object = strings.Repeat("x", 200) + string(rune('a'+i%26)) + strings.Repeat("y", i%100)
		big.References = append(big.References, r)
		big.Pairs = append(big.Pairs, profile.Pair{Function: "matmul", Object: r.Object, Stats: r.Stats, Levels: r.Levels})
	}
	m, err := NewModel(&big, "big.memspy", DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := NewPage(nil, m).Write(&b); err != nil {
		t.Fatal(err)
	}
	js, _ := assets.ReadFile("assets/echarts/echarts.min.js")
	if data := b.Len() - len(js); data > 1<<20 {
		t.Errorf("the page holds %d bytes besides ECharts", data)
	}
	if len(m.Pairs) > DefaultLimits.Pairs || len(m.References) > DefaultLimits.References {
		t.Errorf("%d pairs, %d references", len(m.Pairs), len(m.References))
	}
}

// TestEChartsVendored checks that the embedded ECharts is the file that
// scripts/fetch-echarts.sh fetches, of EChartsVersion, with its licence.
func TestEChartsVendored(t *testing.T) {
	script, err := os.ReadFile(filepath.Join("..", "scripts", "fetch-echarts.sh"))
	if err != nil {
		t.Fatal(err)
	}
	version := regexp.MustCompile(`(?m)^VERSION=(\S+)$`).FindSubmatch(script)
	sum := regexp.MustCompile(`(?m)^JS_SHA256=([0-9a-f]{64})$`).FindSubmatch(script)
	if version == nil || sum == nil {
		t.Fatal("scripts/fetch-echarts.sh names no VERSION or JS_SHA256")
	}
	if string(version[1]) != EChartsVersion {
		t.Errorf("the script fetches ECharts %s, EChartsVersion is %s", version[1], EChartsVersion)
	}
	js, err := assets.ReadFile("assets/echarts/echarts.min.js")
	if err != nil {
		t.Fatal(err)
	}
	if h := sha256.Sum256(js); hex.EncodeToString(h[:]) != string(sum[1]) {
		t.Errorf("echarts.min.js: sha256 %x, the script says %s", h, sum[1])
	}
	for _, f := range []string{"LICENSE", "NOTICE", "LICENSE-d3"} {
		if _, err := os.Stat(filepath.Join("assets", "echarts", f)); err != nil {
			t.Error(err)
		}
	}
	// The page's own script and style cannot end their element early.
	for _, f := range []string{"page.js", "page.css", "echarts/echarts.min.js"} {
		b, _ := assets.ReadFile("assets/" + f)
		if bytes.Contains(bytes.ToLower(b), []byte("</script")) || bytes.Contains(b, []byte("<!--")) || bytes.Contains(bytes.ToLower(b), []byte("</style")) {
			t.Errorf("%s holds </script, </style or <!--", f)
		}
	}
}

// TestWriteFile checks that the page is written atomically: all of it,
// or nothing.
func TestWriteFile(t *testing.T) {
	pg, _ := testPage(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "mm.html")
	if err := pg.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := pg.Write(&b); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, b.Bytes()) {
		t.Errorf("the file is not the page (%v)", err)
	}
	if err := pg.WriteFile(dir); err == nil {
		t.Error("writing over a directory did not fail")
	}
	if err := pg.WriteFile(filepath.Join(dir, "no", "such", "dir.html")); err == nil {
		t.Error("writing into a missing directory did not fail")
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Errorf("the directory holds %d files, want the page alone", len(es))
	}
}

// TestDiff checks that the comparison is memspy diff's: its tables, with
// each side's numbers.
func TestDiff(t *testing.T) {
	a, b := testProfile(t), testProfile(t)
	for i := range b.Functions { // B: matmul stalls half as much at L1D
		if b.Functions[i].Name == "matmul" {
			l := b.Functions[i].Levels["L1D"]
			l.StallCycles /= 2
		}
	}
	if err := b.SetFocus("L1D"); err != nil {
		t.Fatal(err)
	}
	wantA, wantB := stallOf(a, "matmul"), stallOf(b, "matmul")
	d, err := NewDiff(a, b, "a.memspy", "b.memspy")
	if err != nil {
		t.Fatal(err)
	}
	var views []string
	for _, tb := range d.Tables {
		views = append(views, tb.View)
	}
	if diff := cmp.Diff([]string{"summary", "functions", "objects", "pairs", "calls"}, views); diff != "" {
		t.Errorf("views (-want +got):\n%s", diff)
	}
	fn := d.Tables[1]
	if fn.Columns[0] != "function" || fn.Columns[len(fn.Columns)-4] != "a" {
		t.Fatalf("functions: columns %v", fn.Columns)
	}
	found := false
	for _, r := range fn.Rows {
		if string(r[0]) == `"matmul"` && string(r[2]) == `"stall cycles"` {
			found = true
			if string(r[3]) != jsonNumber(wantA) || string(r[4]) != jsonNumber(wantB) {
				t.Errorf("matmul's stall cycles: A %s, B %s; want %d, %d", r[3], r[4], wantA, wantB)
			}
		}
	}
	if !found {
		t.Error("the functions table has no row of matmul's stall cycles")
	}
	// Profiles without where-and-why data compare by their summaries.
	a.Functions, a.Objects, b.Functions, b.Objects = nil, nil, nil, nil
	if d, err := NewDiff(a, b, "a", "b"); err != nil || len(d.Tables) != 1 {
		t.Errorf("without where-and-why: %v", err)
	}
}

// stallOf returns the stall cycles of function name in p.
func stallOf(p *profile.Profile, name string) uint64 {
	for _, f := range p.Functions {
		if f.Name == name {
			return f.StallCycles
		}
	}
	return 0
}

func jsonNumber(n uint64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
