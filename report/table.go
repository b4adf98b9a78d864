package report

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A Table is what every view builds: a title, named columns and rows of
// cells. One renderer writes any table as aligned text, CSV or JSON, so
// the views hold no formatting code of their own.
//
// In CSV and JSON, numbers are raw: counts are integers, and rates, shares
// and spatial use are fractions (0.25, not 25%). An unknown value ("-" in
// text) is an empty CSV field and a JSON null. Some text is shorter in
// text than in CSV and JSON (a file's base name, its path).
type Table struct {
	Title string
	// Notes explain the table; text writes them under the title, JSON as
	// "notes", CSV not at all.
	Notes   []string
	Columns []Column
	Rows    []Row
	// Total is an optional last row of sums: text writes it under the
	// rows, JSON as "total", CSV not at all (it is the sum of the rows).
	Total []Cell
	// SubTitle, SubColumns and SubKey describe the rows' sub-rows (a
	// reference's evictors): text writes each under its row, marked "←";
	// CSV and JSON write them as a table of their own titled SubTitle,
	// each sub-row led by the cells of its row's SubKey columns.
	SubTitle   string
	SubColumns []Column
	SubKey     []int
}

// Column is a column of a Table.
type Column struct {
	// Name heads the column in text; its Key heads it in CSV and JSON.
	Name string
	// TextOnly columns (bars) appear in text only.
	TextOnly bool
	// Below columns (long messages) are written in text on lines of their
	// own under their row, as "name: value".
	Below bool
}

// Key is the column's name in CSV and JSON: lower case, runs of other
// characters than letters and digits replaced by '_' ("file:line" →
// "file_line").
func (c Column) Key() string {
	var b strings.Builder
	sep := false
	for _, r := range strings.ToLower(c.Name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if sep && b.Len() > 0 {
				b.WriteByte('_')
			}
			sep = false
			b.WriteRune(r)
		} else {
			sep = true
		}
	}
	return b.String()
}

// Row is a row of a Table.
type Row struct {
	Cells []Cell
	Sub   [][]Cell // under Table.SubColumns
}

type cellKind uint8

const (
	kindText    cellKind = iota
	kindUint             // a count
	kindFloat            // a fraction
	kindUnknown          // "-": not known
)

// Cell is one value of a Table: its text form and, when it is a number,
// its raw value.
type Cell struct {
	Text string // as text shows it
	kind cellKind
	u    uint64
	f    float64
	full string // a text cell's value in CSV and JSON when longer than Text ("" when the same)
}

// Value returns the cell's raw value: a uint64, a float64, a string, or
// nil when the value is not known.
func (c Cell) Value() any {
	switch c.kind {
	case kindUint:
		return c.u
	case kindFloat:
		return c.f
	case kindUnknown:
		return nil
	}
	return cmp.Or(c.full, c.Text)
}

// raw is the cell in CSV.
func (c Cell) raw() string {
	switch c.kind {
	case kindUint:
		return strconv.FormatUint(c.u, 10)
	case kindFloat:
		return strconv.FormatFloat(c.f, 'f', -1, 64)
	case kindUnknown:
		return ""
	}
	return cmp.Or(c.full, c.Text)
}

// MarshalJSON writes numbers as numbers and unknown values as null.
func (c Cell) MarshalJSON() ([]byte, error) { return marshal(c.Value()) }

// marshal is json.Marshal without HTML escapes ("<unknown>" stays so).
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func textCell(s string) Cell  { return Cell{Text: s} }
func unknownCell() Cell       { return Cell{Text: "-", kind: kindUnknown} }
func countCell(n uint64) Cell { return Cell{Text: Count(n), kind: kindUint, u: n} }
func bytesCell(n uint64) Cell { return Cell{Text: Bytes(n), kind: kindUint, u: n} }
func hexCell(pc uint64) Cell  { return Cell{Text: fmt.Sprintf("%#x", pc)} }
func fracCell(f float64) Cell { return Cell{Text: fmt.Sprintf("%.1f%%", 100*f), kind: kindFloat, f: f} }
func orUnknown(s string) Cell { return cond(s != "", textCell(s)) }
func knownCount(n uint64, known bool) Cell {
	return cond(known, countCell(n))
}

// shortCell is text that shows short and is full in CSV and JSON.
func shortCell(short, full string) Cell { return Cell{Text: short, full: full} }

// cond returns c when known, else an unknown cell.
func cond(known bool, c Cell) Cell {
	if !known {
		return unknownCell()
	}
	return c
}

// rateCell is a/b as a miss rate (4 decimals, as the cache tables).
func rateCell(a, b uint64) Cell {
	if b == 0 {
		return unknownCell()
	}
	return Cell{Text: Rate(a, b), kind: kindFloat, f: float64(a) / float64(b)}
}

// shareCell is a/b as a share (1 decimal).
func shareCell(a, b uint64) Cell {
	if b == 0 {
		return unknownCell()
	}
	return Cell{Text: share(a, b), kind: kindFloat, f: float64(a) / float64(b)}
}

// Formats lists the output formats of the views.
func Formats() []string { return []string{"text", "csv", "json"} }

// render writes tables in format ("" is text).
func render(w io.Writer, tables []*Table, format string) error {
	switch format {
	case "", "text":
		var b strings.Builder
		for i, t := range tables {
			if i > 0 {
				b.WriteString("\n")
			}
			writeText(&b, t, "")
		}
		_, err := io.WriteString(w, b.String())
		return err
	case "csv":
		return writeCSV(w, tables)
	case "json":
		return writeJSON(w, tables)
	}
	return fmt.Errorf("unknown format %q (formats: %s)", format, strings.Join(Formats(), ", "))
}

// writeText writes t as aligned text, each line led by indent: the title,
// then indented under it its notes, the header, the rows (numbers
// right-aligned) and the total.
func writeText(b *strings.Builder, t *Table, indent string) {
	if t.Title != "" {
		b.WriteString(indent + t.Title + "\n")
		indent += "  "
	}
	for _, n := range t.Notes {
		b.WriteString(indent + n + "\n")
	}
	if len(t.Rows) == 0 {
		b.WriteString(indent + "(none)\n")
		return
	}
	var inline, below []int
	for i, c := range t.Columns {
		if c.Below {
			below = append(below, i)
		} else {
			inline = append(inline, i)
		}
	}
	header := make([]Cell, len(t.Columns))
	for i, c := range t.Columns {
		header[i] = textCell(c.Name)
	}
	rows := make([][]Cell, 0, len(t.Rows)+1)
	for _, r := range t.Rows {
		rows = append(rows, r.Cells)
	}
	if t.Total != nil {
		rows = append(rows, t.Total)
	}
	widths, right := layout(inline, rows, header)
	writeLine(b, indent, inline, header, widths, right)
	var sub [][]Cell
	for _, r := range t.Rows {
		sub = append(sub, r.Sub...)
	}
	subCols := make([]int, len(t.SubColumns))
	for i := range subCols {
		subCols[i] = i
	}
	subWidths, subRight := layout(subCols, sub, nil)
	for _, r := range t.Rows {
		writeLine(b, indent, inline, r.Cells, widths, right)
		for _, i := range below {
			if i < len(r.Cells) && r.Cells[i].Text != "" {
				b.WriteString(indent + "    " + t.Columns[i].Name + ": " + r.Cells[i].Text + "\n")
			}
		}
		for _, s := range r.Sub {
			writeLine(b, indent+"    ← ", subCols, s, subWidths, subRight)
		}
	}
	if t.Total != nil {
		writeLine(b, indent, inline, t.Total, widths, right)
	}
}

// layout returns the width of each of the columns cols over rows and the
// header, and whether each holds numbers (right-aligned).
func layout(cols []int, rows [][]Cell, header []Cell) (widths []int, right []bool) {
	widths = make([]int, len(cols))
	right = make([]bool, len(cols))
	for j, i := range cols {
		if i < len(header) {
			widths[j] = utf8.RuneCountInString(header[i].Text)
		}
		for _, r := range rows {
			if i >= len(r) {
				continue
			}
			widths[j] = max(widths[j], utf8.RuneCountInString(r[i].Text))
			if k := r[i].kind; k == kindUint || k == kindFloat {
				right[j] = true
			}
		}
	}
	return widths, right
}

// writeLine writes the cells cols of r padded to widths, two spaces apart.
func writeLine(b *strings.Builder, indent string, cols []int, r []Cell, widths []int, right []bool) {
	var line strings.Builder
	line.WriteString(indent)
	for j, i := range cols {
		if j > 0 {
			line.WriteString("  ")
		}
		s := ""
		if i < len(r) {
			s = r[i].Text
		}
		pad := strings.Repeat(" ", max(0, widths[j]-utf8.RuneCountInString(s)))
		if right[j] {
			line.WriteString(pad + s)
		} else {
			line.WriteString(s + pad)
		}
	}
	b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
}

// flat is a table as CSV and JSON see it: no text-only columns, the
// sub-rows in a table of their own.
type flat struct {
	Title   string   `json:"title"`
	Notes   []string `json:"notes,omitempty"`
	Columns []string `json:"columns"`
	Rows    [][]Cell `json:"rows"`
	Total   []Cell   `json:"total,omitempty"`
}

func flatten(tables []*Table) []flat {
	var out []flat
	for _, t := range tables {
		var keep []int
		f := flat{Title: t.Title, Notes: t.Notes, Columns: []string{}, Rows: [][]Cell{}}
		for i, c := range t.Columns {
			if !c.TextOnly {
				keep = append(keep, i)
				f.Columns = append(f.Columns, c.Key())
			}
		}
		pick := func(r []Cell, cols []int) []Cell {
			out := make([]Cell, len(cols))
			for j, i := range cols {
				if i < len(r) {
					out[j] = r[i]
				}
			}
			return out
		}
		for _, r := range t.Rows {
			f.Rows = append(f.Rows, pick(r.Cells, keep))
		}
		if t.Total != nil {
			f.Total = pick(t.Total, keep)
		}
		out = append(out, f)
		if len(t.SubColumns) == 0 {
			continue
		}
		s := flat{Title: t.SubTitle, Columns: []string{}, Rows: [][]Cell{}}
		for _, i := range t.SubKey {
			s.Columns = append(s.Columns, t.Columns[i].Key())
		}
		for _, c := range t.SubColumns {
			s.Columns = append(s.Columns, c.Key())
		}
		for _, r := range t.Rows {
			key := pick(r.Cells, t.SubKey)
			for _, sub := range r.Sub {
				s.Rows = append(s.Rows, append(append([]Cell{}, key...), sub...))
			}
		}
		out = append(out, s)
	}
	return out
}

// writeCSV writes one header row and the rows of each table; several
// tables are separated by a blank line and each led by a "# title" line
// (encoding/csv reads them back with Comment '#' and FieldsPerRecord -1).
func writeCSV(w io.Writer, tables []*Table) error {
	fs := flatten(tables)
	for i, f := range fs {
		if len(fs) > 1 {
			sep := ""
			if i > 0 {
				sep = "\n"
			}
			if _, err := io.WriteString(w, sep+"# "+strings.ReplaceAll(f.Title, "\n", " ")+"\n"); err != nil {
				return err
			}
		}
		cw := csv.NewWriter(w)
		cw.Write(f.Columns)
		for _, r := range f.Rows {
			rec := make([]string, len(r))
			for j, c := range r {
				rec[j] = c.raw()
			}
			cw.Write(rec)
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
	}
	return nil
}

// writeJSON writes an array of {title, notes, columns, rows, total}, one
// row per line.
func writeJSON(w io.Writer, tables []*Table) error {
	var b strings.Builder
	b.WriteString("[")
	for i, f := range flatten(tables) {
		if i > 0 {
			b.WriteString(",")
		}
		rows := f.Rows
		f.Rows = nil
		head, err := marshal(f)
		if err != nil {
			return err
		}
		// head ends with "rows":null, or "rows":null,"total":[…]}.
		s := string(head)
		at := strings.Index(s, `"rows":null`)
		b.WriteString("\n  " + s[:at] + `"rows": [`)
		for j, r := range rows {
			if j > 0 {
				b.WriteString(",")
			}
			row, err := marshal(r)
			if err != nil {
				return err
			}
			b.WriteString("\n    ")
			b.Write(row)
		}
		if len(rows) > 0 {
			b.WriteString("\n  ")
		}
		b.WriteString("]" + s[at+len(`"rows":null`):])
	}
	b.WriteString("\n]\n")
	_, err := io.WriteString(w, b.String())
	return err
}
