package web

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/memspy/memspy/profile"
	"github.com/memspy/memspy/report"
)

// Diff is the comparison of two profiles, A and B, as memspy diff makes
// it (report.Diff): one table per view.
type Diff struct {
	A      string      `json:"a"`
	B      string      `json:"b"`
	Tables []DiffTable `json:"tables"`
}

// DiffTable is one view of memspy diff as its JSON form has it: a row per
// counter of each entry, with its value in A and in B, the change and the
// relative change (numbers as report.Diff writes them; null when
// unknown).
type DiffTable struct {
	View    string              `json:"view"`
	Title   string              `json:"title"`
	Notes   []string            `json:"notes,omitempty"`
	Columns []string            `json:"columns"`
	Rows    [][]json.RawMessage `json:"rows"`
}

// diffTop is the entries each view of a diff compares: the largest
// changes of stall cycles.
const diffTop = 30

// NewDiff compares profile a, read from file nameA, with b, from nameB:
// the summary and, when both have where-and-why data, the functions,
// objects and pairs with the largest changes, and the call paths when
// both have a call tree. It sets the focus of both (report.Diff), so make
// their models first.
func NewDiff(a, b *profile.Profile, nameA, nameB string) (*Diff, error) {
	d := &Diff{A: nameA, B: nameB}
	views := []string{"summary"}
	if report.HasWhere(a) && report.HasWhere(b) {
		views = append(views, "functions", "objects", "pairs")
		if a.CallTree != nil && b.CallTree != nil {
			views = append(views, "calls")
		}
	}
	for _, v := range views {
		var buf bytes.Buffer
		opt := report.DiffOptions{NameA: nameA, NameB: nameB, Top: diffTop, Format: "json"}
		if err := report.Diff(&buf, a, b, v, opt); err != nil {
			return nil, fmt.Errorf("diff %s: %w", v, err)
		}
		var ts []DiffTable
		if err := json.Unmarshal(buf.Bytes(), &ts); err != nil || len(ts) != 1 {
			return nil, fmt.Errorf("diff %s: unexpected output (%v)", v, err)
		}
		ts[0].View = v
		d.Tables = append(d.Tables, ts[0])
	}
	return d, nil
}
