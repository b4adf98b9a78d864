package machine

import (
	"fmt"
	"strings"
)

// PresetInfo names and describes a preset machine.
type PresetInfo struct {
	Name        string
	Description string
}

// preset is a named machine constructor; build returns a fresh,
// unnormalized machine each time so callers may change it.
type preset struct {
	PresetInfo
	build func() (*Machine, error)
}

// presets in the order Presets lists them.
var presets = []preset{
	{PresetInfo{"memspy-seq", "MemSpy's uniprocessor: 128 KiB direct-mapped data cache, 32-byte lines, 1-cycle hit, 50-cycle memory"},
		func() (*Machine, error) { return memspy("memspy-seq", 128*KiB), nil }},
	{PresetInfo{"memspy-par", "MemSpy's multiprocessor: 16 processors, each with a private 64 KiB direct-mapped data cache, 32-byte lines, 1-cycle hit, 50-cycle memory"},
		memspyPar},
	{PresetInfo{"r12000", "MIPS R12000 L1 data cache: 32 KiB 2-way LRU, 32-byte lines, 2-cycle hit, ~100-cycle memory (approximate)"},
		r12000},
	{PresetInfo{"x86-modern", "Generic recent x86-64 core: 32 KiB 8-way L1I and L1D, 1 MiB 16-way L2, 32 MiB 16-way L3, 64-byte lines (approximate latencies)"},
		x86Modern},
	{PresetInfo{"x86-multicore", "Generic recent x86-64 multicore: 8 cores with private 32 KiB 8-way L1I, 48 KiB 12-way L1D and 1.25 MiB 10-way L2, a shared 30 MiB 12-way L3, 64-byte lines (approximate latencies)"},
		x86Multicore},
	{PresetInfo{"flashpoint", "NUMA multiprocessor modelled on Stanford FLASH, which FlashPoint ran on: 16 processors in 8 nodes of 2, each with a private 32 KiB 2-way L1D and 1 MiB 4-way L2D, 64-byte lines; memory 100 cycles local, 250 remote, 400 remote dirty; first-touch 4 KiB pages (latencies illustrative)"},
		flashpoint},
	{PresetInfo{"host", "This machine's caches, detected from /sys/devices/system/cpu/cpu0/cache (Linux; approximate latencies)"},
		Host},
}

// Presets lists the preset machines in a stable order.
func Presets() []PresetInfo {
	out := make([]PresetInfo, len(presets))
	for i, p := range presets {
		out[i] = p.PresetInfo
	}
	return out
}

// Preset returns a new, normalized copy of the named preset machine (the
// --machine flag); names are not case sensitive. "host" detects this
// machine's caches (see Host).
func Preset(name string) (*Machine, error) {
	for _, p := range presets {
		if strings.EqualFold(p.Name, name) {
			m, err := p.build()
			if err != nil {
				return nil, err
			}
			if m.Description == "" {
				m.Description = p.Description
			}
			if err := m.Normalize(); err != nil {
				return nil, fmt.Errorf("preset %s: %w", p.Name, err)
			}
			return m, nil
		}
	}
	names := make([]string, len(presets))
	for i, p := range presets {
		names[i] = p.Name
	}
	return nil, fmt.Errorf("unknown machine %q (known: %s)", name, strings.Join(names, ", "))
}

// memspy is the machine of the MemSpy paper (Martonosi, Gupta, Anderson,
// SIGMETRICS 1992): one direct-mapped data cache with 32-byte lines, a
// 1-cycle hit and a 50-cycle miss. MemSpy simulated data references only.
func memspy(name string, size int64) *Machine {
	return &Machine{
		Name: name,
		Caches: []Cache{{
			Name: "L1D", Level: 1, Size: size, Assoc: 1, Line: 32,
			Replacement: LRU, WriteBack: true, WriteAllocate: true,
			Holds: Data, Inclusion: NonInclusive, Latency: 1,
		}},
		MemoryLatency: 50,
	}
}

// memspyPar is the multiprocessor of the MemSpy paper: 16 processors, each
// with its own 64 KiB cache of the memspy kind, kept coherent.
func memspyPar() (*Machine, error) {
	m := memspy("memspy-par", 64*KiB)
	m.Processors = 16
	return m, nil
}

// r12000 is the primary data cache of the MIPS R12000, which keeps the
// R10000's: 32 KiB, 2-way set associative, LRU, 32-byte lines, write-back
// (MIPS R10000 Microprocessor User's Manual, version 2.0, 1996, chapter 1).
// The 2-cycle load-use latency is the R10000's; the memory latency of about
// 100 cycles is an approximation for an Origin-class system.
func r12000() (*Machine, error) {
	return &Machine{
		Name: "r12000",
		Caches: []Cache{{
			Name: "L1D", Level: 1, Size: 32 * KiB, Assoc: 2, Line: 32,
			Replacement: LRU, WriteBack: true, WriteAllocate: true,
			Holds: Data, Inclusion: NonInclusive, Latency: 2,
		}},
		MemoryLatency: 100,
	}, nil
}

// x86Modern is a generic recent x86-64 core. Geometries are typical of
// 2018–2022 desktop parts; latencies (load-to-use cycles) are
// approximations, not any one part's.
func x86Modern() (*Machine, error) {
	c := func(name string, level int, holds Holds, size int64, assoc, latency int) Cache {
		return Cache{
			Name: name, Level: level, Size: size, Assoc: assoc, Line: 64,
			Replacement: LRU, WriteBack: true, WriteAllocate: true,
			Holds: holds, Inclusion: NonInclusive, Latency: latency,
		}
	}
	return &Machine{
		Name: "x86-modern",
		Caches: []Cache{
			c("L1I", 1, Instructions, 32*KiB, 8, 4),
			c("L1D", 1, Data, 32*KiB, 8, 4),
			c("L2", 2, Unified, 1*MiB, 16, 14),
			c("L3", 3, Unified, 32*MiB, 16, 50),
		},
		MemoryLatency: 200,
	}, nil
}

// x86Multicore is a generic recent x86-64 multicore: 8 cores, each with
// private L1I, L1D and L2, sharing one L3. The geometry resembles the
// performance cores of a 2021 desktop part (Intel Alder Lake: 8 P-cores,
// 30 MB L3), leaving out its efficiency cores; the latencies (load-to-use
// cycles) and the memory latency are approximations, not any one part's.
func x86Multicore() (*Machine, error) {
	c := func(name string, level int, holds Holds, size int64, assoc, latency int, shared bool) Cache {
		return Cache{
			Name: name, Level: level, Size: size, Assoc: assoc, Line: 64,
			Replacement: LRU, WriteBack: true, WriteAllocate: true,
			Holds: holds, Inclusion: NonInclusive, Latency: latency, Shared: shared,
		}
	}
	return &Machine{
		Name: "x86-multicore",
		Caches: []Cache{
			c("L1I", 1, Instructions, 32*KiB, 8, 5, false),
			c("L1D", 1, Data, 48*KiB, 12, 5, false),
			c("L2", 2, Unified, 1280*KiB, 10, 15, false),
			c("L3", 3, Unified, 30*MiB, 12, 50, true),
		},
		MemoryLatency: 250,
		Processors:    8,
	}, nil
}

// flashpoint is a NUMA multiprocessor modelled on the Stanford FLASH
// machine (Kuskin et al., ISCA 1994), on which FlashPoint (Martonosi,
// Ofelt, Heinrich, SIGMETRICS 1996) gathered MemSpy-style statistics in
// the node controller. It is not FLASH: a FLASH node has one processor,
// these have two, so that the model shows processors sharing a node's
// memory as well as remote ones; the caches resemble an R10000's 32 KiB
// 2-way primary data cache and a 1 MiB secondary cache, simplified to one
// 64-byte line and to data references only (like memspy-par); the
// latencies (1 and 10 cycles for the caches, 100 for the local memory,
// 250 for a remote one, 400 for a line dirty in another node, three hops)
// are illustrative, not measured. Pages of 4 KiB are homed first-touch.
func flashpoint() (*Machine, error) {
	c := func(name string, level int, size int64, assoc, latency int) Cache {
		return Cache{
			Name: name, Level: level, Size: size, Assoc: assoc, Line: 64,
			Replacement: LRU, WriteBack: true, WriteAllocate: true,
			Holds: Data, Inclusion: NonInclusive, Latency: latency,
		}
	}
	return &Machine{
		Name: "flashpoint",
		Caches: []Cache{
			c("L1D", 1, 32*KiB, 2, 1),
			c("L2D", 2, 1*MiB, 4, 10),
		},
		MemoryLatency:      100,
		Processors:         16,
		Nodes:              8,
		Placement:          FirstTouch,
		PageSize:           4096,
		RemoteLatency:      250,
		RemoteDirtyLatency: 400,
	}, nil
}
