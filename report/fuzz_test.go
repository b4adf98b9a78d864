package report

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"memspy/profile"
)

// FuzzReport: whatever bytes memspy report is given as a profile, it
// reads them and renders the summary and every view in every format as
// the command does, or says what is wrong: it never panics.
func FuzzReport(f *testing.F) {
	sampled := testProfile()
	sampled.Sampling = &profile.Sampling{Spec: "ratio=0.1", Methods: []string{"time"}, Samples: 3, Counted: 300, Seen: 3000, Mu: 0.5}
	for i := range sampled.Caches {
		sampled.Caches[i].Sampled = &profile.SampledCounts{KnownHits: 200, KnownMisses: 60, UnknownHits: 10, UnknownMisses: 30,
			LiveTime: 50, DeadTime: 150, Spread: &profile.Spread{Samples: 3, NN: 30000, KK: 1300, UU: 600, KN: 6000, UN: 4000, KU: 800}}
	}
	for _, p := range []*profile.Profile{testProfile(), testMultiProfile(), testThreadProfile(), testNumaProfile(), sampled} {
		data, err := json.Marshal(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := profile.Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		if p.Options.Where {
			if err := p.SetFocus(""); err != nil {
				return
			}
		}
		_ = Text(io.Discard, p)
		for _, name := range Views() {
			for _, format := range Formats() {
				for _, opt := range []ViewOptions{
					{Format: format},
					{Format: format, Top: -1, Object: "B", Function: "matmul", Evictors: true, Inclusive: true},
				} {
					_ = View(io.Discard, p, name, opt)
				}
			}
		}
	})
}
