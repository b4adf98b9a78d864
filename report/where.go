package report

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"memspy/profile"
)

// topPairs and topEvictors bound the rows of the where/why tables of the
// summary; the profile has them all.
const (
	topPairs    = 8
	topEvictors = 5
)

// where writes the attribution of cache i: the causes of its misses, the
// procedure × data pairs with the most misses and the bins whose lines
// were evicted most, by which bins.
func where(b *strings.Builder, a *profile.Attribution, i int) {
	if a == nil || i >= len(a.Caches) {
		return
	}
	ca := &a.Caches[i]
	misses := ca.Cold + ca.Replacement + ca.Invalidation
	if misses == 0 {
		return
	}
	fmt.Fprintf(b, "  misses by cause: cold %s (%s), replacement %s (%s), invalidation %s (%s)\n",
		Count(ca.Cold), share(ca.Cold, misses), Count(ca.Replacement), share(ca.Replacement, misses),
		Count(ca.Invalidation), share(ca.Invalidation, misses))
	b.WriteString("  where (procedure × data, most misses first):\n")
	tw := tabwriter.NewWriter(b, 2, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "    procedure\tdata\taccesses\tmisses\tshare\tmiss rate\tcold\treplacement\tinvalidation\t")
	for j, ps := range ca.Pairs {
		if j == topPairs || ps.Misses() == 0 {
			break
		}
		fmt.Fprintf(tw, "    %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", procName(a, ps.Proc), binName(a, ps.Bin),
			Count(ps.Accesses()), Count(ps.Misses()), share(ps.Misses(), misses), Rate(ps.Misses(), ps.Accesses()),
			Count(ps.Cold), Count(ps.Replacement), Count(ps.Invalidation))
	}
	tw.Flush()
	if len(ca.Evictors) == 0 {
		return
	}
	var evictions uint64
	for _, e := range ca.Evictors {
		evictions += e.Evictions
	}
	b.WriteString("  evictions (lines of ← evicted by fills of):\n")
	tw = tabwriter.NewWriter(b, 2, 0, 2, ' ', 0)
	for j, e := range ca.Evictors {
		if j == topEvictors {
			break
		}
		kind := "cross"
		if e.Victim == e.By {
			kind = "self"
		}
		fmt.Fprintf(tw, "    %s\t← %s\t%s\t%s\t%s\t\n", binName(a, e.Victim), binName(a, e.By), Count(e.Evictions),
			share(e.Evictions, evictions), kind)
	}
	tw.Flush()
}

func procName(a *profile.Attribution, id int32) string {
	if id >= 0 && int(id) < len(a.Procs) {
		return a.Procs[id].Name
	}
	return fmt.Sprintf("proc %d", id)
}

func binName(a *profile.Attribution, id int32) string {
	if id < 0 || int(id) >= len(a.Bins) {
		return fmt.Sprintf("bin %d", id)
	}
	bin := &a.Bins[id]
	switch bin.Kind {
	case "heap", "global", "manual":
		return bin.Name + " (" + bin.Kind + ")"
	}
	return bin.Name
}
