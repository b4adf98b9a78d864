package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/memspy/memspy/profile"
)

// span formats an interval of rates.
func span(lo, hi float64) string { return fmt.Sprintf("[%.4f%%, %.4f%%]", 100*lo, 100*hi) }

// maxRanked is the number of objects SampleEval ranks side by side.
const maxRanked = 12

// SampleEval writes an evaluation of a sampling request (memspy
// sample-eval) as text.
func SampleEval(w io.Writer, ev *profile.Evaluation) error {
	var b strings.Builder
	fmt.Fprintf(&b, "sample evaluation of --sample %s on %s (%.2f%% of the references counted)\n\n", ev.Spec, ev.Focus, 100*ev.Ratio)
	yes := map[bool]string{true: "yes", false: "NO"}
	fmt.Fprintf(&b, "  true miss rate            %.4f%%\n", 100*ev.TrueMissRate)
	fmt.Fprintf(&b, "  true, within the samples  %.4f%%\n", 100*ev.TrueMissRateInSamples)
	fmt.Fprintf(&b, "  %-24s  %.4f%%  bounds %.4f%% to %.4f%%\n", fmt.Sprintf("estimated (μ=%.3g)", ev.Mu), 100*ev.EstimatedMissRate, 100*ev.Lower, 100*ev.Upper)
	fmt.Fprintf(&b, "  error                     %.4f points, %.2f%% relative\n", 100*ev.AbsoluteError, 100*ev.RelativeError)
	fmt.Fprintf(&b, "  bounds hold               %s overall, %s within the samples\n", yes[ev.BoundsHold], yes[ev.BoundsHoldInSamples])
	if ev.StdError > 0 {
		fmt.Fprintf(&b, "  95%% interval (sampling)   %.4f%% to %.4f%%, holds: %s\n", 100*ev.CILower, 100*ev.CIUpper, yes[ev.CIHolds])
		fmt.Fprintf(&b, "  bounds with sampling      %.4f%% to %.4f%%, hold: %s\n", 100*ev.WideLower, 100*ev.WideUpper, yes[ev.WideHolds])
	}
	if len(ev.RankingFull) > 0 {
		fmt.Fprintf(&b, "  memory time pattern       r = %.4f over objects, %.4f over functions\n", ev.PearsonObjects, ev.PearsonFunctions)
	}
	if len(ev.Caches) > 1 {
		b.WriteString("\nmiss rate by cache (true | within the samples | estimated [bounds])\n")
		tw := tabwriter.NewWriter(&b, 2, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "  cache\tsize\ttrue\tin samples\tμ\testimated\trel. error\tbounds\thold\t95% interval\tholds\twith sampling\thold\t")
		for _, c := range ev.Caches {
			fmt.Fprintf(tw, "  %s\t%s\t%.4f%%\t%.4f%%\t%.3g\t%.4f%%\t%.2f%%\t%s\t%s\t%s\t%s\t%s\t%s\t\n", c.Cache, Bytes(uint64(c.Size)),
				100*c.TrueMissRate, 100*c.TrueMissRateInSamples, c.Mu, 100*c.EstimatedMissRate, 100*c.RelativeError,
				span(c.Lower, c.Upper), yes[c.BoundsHold], span(c.CILower, c.CIUpper), yes[c.CIHolds], span(c.WideLower, c.WideUpper), yes[c.WideHolds])
		}
		tw.Flush()
	}
	if len(ev.RankingFull) > 0 {
		b.WriteString("\nbottlenecks by stall time (full | sampled)\n")
		tw := tabwriter.NewWriter(&b, 2, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  rank\tfull\tshare\tsampled\tshare\t")
		for i := range min(maxRanked, max(len(ev.RankingFull), len(ev.RankingSampled))) {
			cell := func(r []profile.Ranked) (string, string) {
				if i < len(r) {
					return r[i].Name, fmt.Sprintf("%.1f%%", 100*r[i].Share)
				}
				return "", ""
			}
			fn, fs := cell(ev.RankingFull)
			sn, ss := cell(ev.RankingSampled)
			fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t\n", i+1, fn, fs, sn, ss)
		}
		tw.Flush()
		if len(ev.Reorderings) == 0 {
			b.WriteString("no reordering among the objects above 2% of the stall time\n")
		}
		for _, r := range ev.Reorderings {
			tie := ""
			if r.Tie {
				tie = " (a near tie: within 5% of each other in the full run)"
			}
			fmt.Fprintf(&b, "REORDERED: %s (%.1f%%) now below %s (%.1f%%)%s\n", r.Above, 100*r.AboveShare, r.Below, 100*r.BelowShare, tie)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
