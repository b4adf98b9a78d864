package sim_test

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/sim"
	"github.com/memspy/memspy/symbolize"
	"github.com/memspy/memspy/trace"
)

// BenchmarkNumaMonitor times the engine alone on the flashpoint machine
// over a recorded trace (scripts/bench-numa.sh records one; give its path
// in MEMSPY_NUMA_TRACE): without per-bin statistics, with full monitoring
// counting misses only, and with protocol monitoring. The trace is read
// from memory and the symbol tables are loaded before the timing, so that
// only the simulation and its monitoring are measured.
func BenchmarkNumaMonitor(b *testing.B) {
	path := os.Getenv("MEMSPY_NUMA_TRACE")
	if path == "" {
		b.Skip("MEMSPY_NUMA_TRACE names no recorded trace")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	sym := symbolize.New()
	for _, mode := range []struct {
		name string
		opt  sim.Options
	}{
		{"plain", sim.Options{}},
		{"where-miss-only", sim.Options{Attribute: true, MissOnly: true, Symbols: sym}},
		{"protocol", sim.Options{Attribute: true, Monitor: sim.MonitorProtocol, Symbols: sym}},
	} {
		b.Run(mode.name, func(b *testing.B) {
			run := func() {
				m, err := machine.Preset("flashpoint")
				if err != nil {
					b.Fatal(err)
				}
				h, err := sim.New(m, mode.opt)
				if err != nil {
					b.Fatal(err)
				}
				r := trace.NewMSTReader(bytes.NewReader(data), trace.Options{Name: path})
				if err := sim.Run(context.Background(), h, r, nil); err != nil {
					b.Fatal(err)
				}
				h.Finish()
				h.Profile()
			}
			run() // opens the object files the trace maps
			b.ResetTimer()
			for range b.N {
				run()
			}
		})
	}
}
