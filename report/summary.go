package report

import (
	"fmt"
	"strings"

	"github.com/memspy/memspy/profile"
)

// The bounds of the where-and-why summary; the views show more.
const (
	summaryPairs    = 8 // function × object pairs
	summaryEvictors = 5 // objects whose evictors are shown
	summaryEvictBy  = 3 // evictors shown per object
)

// causesLine is "misses by cause: cold N (s), replacement …", the
// invalidations split into true and false sharing when there are any
// ("invalidation 11 (0.3%; true sharing 6, false sharing 5)").
func causesLine(c *profile.CacheStats) string {
	k := c.Causes
	all := k.Cold + k.Replacement + k.Invalidation
	inval := share(k.Invalidation, all)
	if k.TrueSharing+k.FalseSharing > 0 {
		inval += fmt.Sprintf("; true sharing %s, false sharing %s", Count(k.TrueSharing), Count(k.FalseSharing))
	}
	return fmt.Sprintf("misses by cause: cold %s (%s), replacement %s (%s), invalidation %s (%s)", Count(k.Cold), share(k.Cold, all),
		Count(k.Replacement), share(k.Replacement, all), Count(k.Invalidation), inval)
}

// whereSummary writes the short where-and-why summary of p to b (Text ends
// with it): the function × object pairs with the most stall cycles, who
// evicted the lines of the objects with the most stall cycles, and the
// advice, one line each. The causes of misses are in the caches' tables.
func whereSummary(b *strings.Builder, p *profile.Profile) {
	v := newViewer(p, ViewOptions{Top: summaryPairs})
	v.more = "memspy report PROFILE stalls: all"
	fmt.Fprintf(b, "where and why (misses at %s, stall cycles over every cache: %s):\n", v.focus, Count(v.stall))
	// The tables' rows go under their titles, indented by writeText.
	var pairs []item
	for i := range p.Pairs {
		pr := &p.Pairs[i]
		pairs = append(pairs, item{[]Cell{textCell(pr.Function), textCell(pr.Object)}, &pr.Stats, pr.Function + "\x00" + pr.Object})
	}
	stats := concat([]stat{statStall, shareOf("share", v.stall), statMisses}, v.causes())
	writeText(b, v.statTable("function × object, most stall cycles first:", []string{"function", "object"}, stats, rank(pairs)), "  ")

	t := &Table{
		Title:   fmt.Sprintf("evictions at %s (lines of ← evicted by fills of):", v.focus),
		Columns: []Column{{Name: "object"}, {Name: "lines"}, {Name: "evicted by"}},
	}
	for _, o := range rankObjects(p)[:min(summaryEvictors, len(p.Objects))] {
		es := rankEvictedBy(o.EvictedBy)
		if len(es) == 0 {
			continue
		}
		all := o.Evictions()
		var by []string
		for _, e := range es[:min(summaryEvictBy, len(es))] {
			s := e.name + " " + share(e.n, all)
			if e.name == o.Name {
				s += " (self)"
			}
			by = append(by, s)
		}
		t.Rows = append(t.Rows, Row{Cells: []Cell{textCell(o.Name), countCell(all), textCell("← " + strings.Join(by, ", "))}})
	}
	if len(t.Rows) > 0 {
		writeText(b, t, "  ")
	}
	if as := Advise(p); len(as) > 0 {
		writeAdvice(b, as, "  ")
	}
}

// writeAdvice writes the messages of as to b, one line each, led by
// indent.
func writeAdvice(b *strings.Builder, as []Advice, indent string) {
	b.WriteString(indent + "advice (memspy report PROFILE advice: the evidence):\n")
	for _, a := range as {
		b.WriteString(indent + "  - " + a.Message + "\n")
	}
}
