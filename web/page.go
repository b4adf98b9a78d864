// Package web renders profiles as one self-contained HTML page, MemSpy's
// hierarchy of detail: an overview of the run (cycles by procedure, the
// caches, a treemap of the data structures and a graph of who evicts
// whom), a procedure's data structures, a pair's detail by cache level,
// and its references with their source lines, under focus controls
// (cache, process, processor, threshold). The page carries the profile's
// numbers as JSON, its own script and style, and Apache ECharts, vendored
// from npm (scripts/fetch-echarts.sh): it loads nothing at view time.
package web

import (
	"embed"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/memspy/memspy/atomicfile"
)

//go:embed assets/page.html assets/page.css assets/page.js assets/echarts/echarts.min.js
var assets embed.FS

// EChartsVersion is the version of Apache ECharts in
// assets/echarts/echarts.min.js.
const EChartsVersion = "6.1.0"

// Page is what one page shows: one profile, or two and their comparison.
type Page struct {
	Profiles []*Model `json:"profiles"`
	Diff     *Diff    `json:"diff,omitempty"`
	ECharts  string   `json:"echarts"`
}

// NewPage returns the page of the models ms (one or two) and, for two,
// their comparison d.
func NewPage(d *Diff, ms ...*Model) *Page {
	return &Page{Profiles: ms, Diff: d, ECharts: EChartsVersion}
}

// Write writes the page as one HTML document to w.
func (pg *Page) Write(w io.Writer) error {
	data, err := json.Marshal(pg) // (escapes <, > and &: no "</script>" in it)
	if err != nil {
		return err
	}
	var names []string
	for _, m := range pg.Profiles {
		names = append(names, m.Name)
	}
	parts := map[string]string{"TITLE": html.EscapeString("memspy: " + strings.Join(names, " vs "))}
	for key, file := range map[string]string{"CSS": "page.css", "APP": "page.js", "ECHARTS": "echarts/echarts.min.js"} {
		b, err := assets.ReadFile("assets/" + file)
		if err != nil {
			return err
		}
		parts[key] = string(b)
	}
	parts["DATA"] = string(data)
	tmpl, err := assets.ReadFile("assets/page.html")
	if err != nil {
		return err
	}
	// The template's markers, <!--KEY-->, in order; the parts themselves
	// are not searched for markers.
	rest := string(tmpl)
	for rest != "" {
		before, after, found := strings.Cut(rest, "<!--")
		if _, err := io.WriteString(w, before); err != nil || !found {
			return err
		}
		key, tail, ok := strings.Cut(after, "-->")
		part, known := parts[key]
		if !ok || !known {
			return fmt.Errorf("web: page template: unknown marker <!--%.20s", after)
		}
		if _, err := io.WriteString(w, part); err != nil {
			return err
		}
		rest = tail
	}
	return nil
}

// WriteFile writes the page to path atomically (package atomicfile).
func (pg *Page) WriteFile(path string) error {
	f, err := atomicfile.Create(path)
	if err != nil {
		return err
	}
	if err := pg.Write(f); err != nil {
		f.Abort()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Commit()
}
