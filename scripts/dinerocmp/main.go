// Command dinerocmp compares `memspy sim` with Dinero IV (d4-7, built for
// 64-bit addresses) on generated traces × many hierarchies: 1 to 3 levels,
// split and unified first levels, LRU and FIFO, write-back and
// write-through, allocate and no-allocate, equal, growing and shrinking
// line sizes, with and without 3C classification. For every pair it
// compares each cache's demand fetches and misses by kind (instruction,
// read, write and misc), its 3C split,
// and its bytes from and to the level below, and prints the pairs that
// differ and the number that agree. scripts/dinero-compare.sh builds both
// simulators and runs it; the tests never need Dinero.
//
// Usage:
//
//	go run ./scripts/dinerocmp -dinero DINERO -memspy MEMSPY [-extra din-trace]...
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// cacheSpec is one cache of a generated hierarchy.
type cacheSpec struct {
	level      int
	kind       byte // 'i', 'd' or 'u', as Dinero names it
	size, line int
	assoc      int
	fifo       bool
	through    bool // write-through (else write-back)
	noAlloc    bool // no write-allocate
}

// hierarchy is one generated machine.
type hierarchy struct {
	name   string
	caches []cacheSpec
	ccc    bool
}

// counts are the numbers compared for one cache.
type counts struct {
	Fetch, IFetch, Read, Write, Misc uint64
	Miss, IMiss, RMiss, WMiss, MMiss uint64
	Compulsory, Capacity, Conflict   uint64
	BytesFromBelow, BytesToBelow     uint64
}

// trace is one generated (or given) trace file.
type trace struct {
	path, format string
}

func main() {
	dinero := flag.String("dinero", "", "the dineroIV binary (d4-7 built with -DD4ADDR='unsigned long')")
	memspy := flag.String("memspy", "bin/memspy", "the memspy binary")
	dir := flag.String("dir", os.TempDir(), "directory for the generated traces")
	refs := flag.Int("refs", 20000, "references per generated trace")
	seed := flag.Uint64("seed", 1, "seed of the traces and hierarchies")
	var extra multiFlag
	flag.Var(&extra, "extra", "a further din trace to compare on (repeatable), e.g. Dinero's testing/mm.32")
	verbose := flag.Bool("v", false, "print every pair, not only those that differ")
	flag.Parse()
	if *dinero == "" {
		fmt.Fprintln(os.Stderr, "dinerocmp: -dinero is required")
		os.Exit(2)
	}
	traces, err := genTraces(*dir, *refs, *seed)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dinerocmp:", err)
		os.Exit(1)
	}
	for _, p := range extra {
		traces = append(traces, trace{path: p, format: "din"})
	}
	hs := genHierarchies(*seed)
	agree, total := 0, 0
	for _, t := range traces {
		for _, h := range hs {
			total++
			d, err := runDinero(*dinero, h, t)
			if err != nil {
				fmt.Fprintf(os.Stderr, "dinerocmp: %s on %s: dinero: %v\n", h.name, t.path, err)
				os.Exit(1)
			}
			m, err := runMemspy(*memspy, h, t)
			if err != nil {
				fmt.Fprintf(os.Stderr, "dinerocmp: %s on %s: memspy: %v\n", h.name, t.path, err)
				os.Exit(1)
			}
			diff := compare(h, d, m)
			if diff == "" {
				agree++
				if *verbose {
					fmt.Printf("same    %s  %s\n", filepath.Base(t.path), h.name)
				}
				continue
			}
			fmt.Printf("differ  %s  %s\n%s", filepath.Base(t.path), h.name, diff)
		}
	}
	fmt.Printf("identical in %d of %d cases (%d traces × %d hierarchies)\n", agree, total, len(traces), len(hs))
	if agree != total {
		os.Exit(1)
	}
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

// genTraces writes the generated traces: din and xdin, with references
// spanning lines, whole-line writes, misc records, and copy-backs and
// invalidations of one block and of everything. Addresses stay far from
// the top 8 MiB of the address space, where Dinero's 3C bookkeeping
// breaks.
func genTraces(dir string, n int, seed uint64) ([]trace, error) {
	type style struct {
		name   string
		xdin   bool
		region uint64 // bytes of the working set
		maint  int    // one copy-back or invalidation per maint references (0: none)
	}
	styles := []style{
		{"din-small", false, 2048, 0},
		{"din-maint", false, 8192, 500},
		{"xdin-small", true, 4096, 0},
		{"xdin-maint", true, 16384, 400},
		{"xdin-large", true, 1 << 20, 1500},
		{"xdin-hot", true, 512, 300},
	}
	var out []trace
	for i, st := range styles {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		var b bytes.Buffer
		bases := []uint64{0, 0x10000, 0x7fff0000, 0x12340000}
		var stream uint64
		for range n {
			a := bases[rng.IntN(len(bases))] + rng.Uint64N(st.region)
			if rng.IntN(4) == 0 { // a stream
				stream = (stream + 4) % st.region
				a = stream
			}
			if st.maint > 0 && rng.IntN(st.maint) == 0 {
				kind := "c"
				if rng.IntN(2) == 0 {
					kind = "v"
				}
				size := []uint64{0, 1, 8, 64}[rng.IntN(4)]
				if st.xdin {
					fmt.Fprintf(&b, "%s %x %x\n", kind, a, size)
				} else {
					fmt.Fprintf(&b, "%d %x\n", map[string]int{"c": 4, "v": 5}[kind], a)
				}
				continue
			}
			k := rng.IntN(10)
			if !st.xdin {
				label := []int{0, 0, 0, 1, 1, 2, 2, 2, 3, 1}[k]
				fmt.Fprintf(&b, "%d %x\n", label, a)
				continue
			}
			letter := []string{"r", "r", "r", "w", "w", "i", "i", "i", "m", "w"}[k]
			size := []uint64{1, 2, 4, 4, 8, 8, 16, 32, 64, 3}[rng.IntN(10)]
			if letter == "w" && rng.IntN(4) == 0 { // a whole-line write of some cache
				size = []uint64{16, 32, 64}[rng.IntN(3)]
				a &^= size - 1
			}
			fmt.Fprintf(&b, "%s %x %x\n", letter, a, size)
		}
		ext := ".din"
		format := "din"
		if st.xdin {
			ext, format = ".xdin", "xdin"
		}
		p := filepath.Join(dir, "dinerocmp-"+st.name+ext)
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			return nil, err
		}
		out = append(out, trace{path: p, format: format})
	}
	return out, nil
}

// genHierarchies returns the hierarchies compared: for 1, 2 and 3 levels,
// a unified or split first level, each of the write and replacement
// variants, with line sizes equal, growing or shrinking down the levels
// (the sizes drawn from seed).
func genHierarchies(seed uint64) []hierarchy {
	type variant struct {
		name                   string
		fifo, through, noAlloc bool
		ccc                    bool
	}
	variants := []variant{
		{name: "lru-wb-wa"},
		{name: "fifo-wb-wa", fifo: true},
		{name: "lru-wt-wa", through: true},
		{name: "lru-wt-nwa", through: true, noAlloc: true},
		{name: "lru-wb-nwa", noAlloc: true},
		{name: "lru-wb-wa-3c", ccc: true},
		{name: "fifo-wt-nwa-3c", fifo: true, through: true, noAlloc: true, ccc: true},
	}
	rng := rand.New(rand.NewPCG(seed, 99))
	var out []hierarchy
	for levels := 1; levels <= 3; levels++ {
		for _, split := range []bool{false, true} {
			for vi, v := range variants {
				lines := []string{"equal", "growing", "shrinking"}[(vi+levels)%3]
				h := hierarchy{ccc: v.ccc}
				line := []int{8, 16, 32}[rng.IntN(3)]
				size := []int{64, 128, 256}[rng.IntN(3)]
				for l := 1; l <= levels; l++ {
					assoc := []int{1, 2, 4}[rng.IntN(3)]
					for size < line*assoc {
						size *= 2
					}
					c := cacheSpec{level: l, size: size, line: line, assoc: assoc, fifo: v.fifo, through: v.through, noAlloc: v.noAlloc}
					if l > 1 && rng.IntN(3) == 0 { // mix the write policies down the levels
						c.through, c.noAlloc = !c.through, rng.IntN(2) == 0
					}
					if split && l == 1 {
						ci, cd := c, c
						ci.kind, cd.kind = 'i', 'd'
						ci.through, ci.noAlloc = false, false // Dinero takes no write policy for instruction caches
						h.caches = append(h.caches, ci, cd)
					} else {
						c.kind = 'u'
						h.caches = append(h.caches, c)
					}
					size *= 4
					switch lines {
					case "growing":
						line *= 2
					case "shrinking":
						line = max(4, line/2)
					}
				}
				h.name = fmt.Sprintf("L%d-%s-%s-%s-lines", levels, map[bool]string{false: "unified", true: "split"}[split], v.name, lines)
				out = append(out, h)
			}
		}
	}
	return out
}

// runDinero runs Dinero IV on t and returns its counts by cache name
// ("l1-dcache").
func runDinero(bin string, h hierarchy, t trace) (map[string]counts, error) {
	args := []string{"-informat", map[string]string{"din": "d", "xdin": "D"}[t.format]}
	for _, c := range h.caches {
		p := fmt.Sprintf("-l%d-%c", c.level, c.kind)
		args = append(args, p+"size", strconv.Itoa(c.size), p+"bsize", strconv.Itoa(c.line), p+"assoc", strconv.Itoa(c.assoc))
		if c.fifo {
			args = append(args, p+"repl", "f")
		}
		if c.through {
			args = append(args, p+"wback", "n")
		}
		if c.noAlloc {
			args = append(args, p+"walloc", "n")
		}
		if h.ccc {
			args = append(args, p+"ccc")
		}
	}
	in, err := os.Open(t.path)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdin = in
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%v: %s", err, out)
	}
	return parseDinero(out)
}

var (
	dineroCache = regexp.MustCompile(`^l(\d)-([iud])cache$`)
	dineroRow   = regexp.MustCompile(`^\s*(Demand Fetches|Demand Misses|Compulsory misses|Capacity misses|Conflict misses|Bytes From Memory|Bytes To Memory)\s+(.*)$`)
)

// parseDinero reads the counts of every cache from Dinero's report.
func parseDinero(out []byte) (map[string]counts, error) {
	res := map[string]counts{}
	var name string
	var c counts
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if m := dineroCache.FindStringSubmatch(line); m != nil {
			if name != "" {
				res[name] = c
			}
			name, c = line, counts{}
			continue
		}
		m := dineroRow.FindStringSubmatch(line)
		if m == nil || name == "" {
			continue
		}
		var v []uint64
		for _, f := range strings.Fields(m[2]) {
			n, err := strconv.ParseFloat(f, 64)
			if err != nil {
				return nil, fmt.Errorf("bad number %q in %q", f, line)
			}
			v = append(v, uint64(n))
		}
		// Columns: total, instrn, data, read, write, misc.
		switch m[1] {
		case "Demand Fetches":
			c.Fetch, c.IFetch, c.Read, c.Write, c.Misc = v[0], v[1], v[3], v[4], v[5]
		case "Demand Misses":
			c.Miss, c.IMiss, c.RMiss, c.WMiss, c.MMiss = v[0], v[1], v[3], v[4], v[5]
		case "Compulsory misses":
			c.Compulsory = v[0]
		case "Capacity misses":
			c.Capacity = v[0]
		case "Conflict misses":
			c.Conflict = v[0]
		case "Bytes From Memory":
			c.BytesFromBelow = v[0]
		case "Bytes To Memory":
			c.BytesToBelow = v[0]
		}
	}
	if name != "" {
		res[name] = c
	}
	return res, sc.Err()
}

// runMemspy runs `memspy sim` on t and returns its counts by Dinero's
// cache names.
func runMemspy(bin string, h hierarchy, t trace) (map[string]counts, error) {
	args := []string{"sim", t.path, "--format", t.format, "--json", "-"}
	if h.ccc {
		args = append(args, "--classify", "3c")
	}
	for _, c := range h.caches {
		holds := map[byte]string{'i': "instructions", 'd': "data", 'u': "unified"}[c.kind]
		spec := fmt.Sprintf("l%d-%ccache:size=%d,assoc=%d,line=%d,level=%d,holds=%s,replacement=%s,write=%s,allocate=%t",
			c.level, c.kind, c.size, c.assoc, c.line, c.level, holds,
			map[bool]string{false: "lru", true: "fifo"}[c.fifo],
			map[bool]string{false: "back", true: "through"}[c.through], !c.noAlloc)
		args = append(args, "--cache", spec)
	}
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%v: %s", err, stderr.Bytes())
	}
	var p struct {
		Caches []struct {
			Name                                            string
			Accesses, Misses, IFetches, Reads, Writes, Misc uint64
			IFetchMisses                                    uint64 `json:"ifetch_misses"`
			ReadMisses                                      uint64 `json:"read_misses"`
			WriteMisses                                     uint64 `json:"write_misses"`
			MiscMisses                                      uint64 `json:"misc_misses"`
			Compulsory, Capacity, Conflict                  uint64
			BytesFromBelow                                  uint64 `json:"bytes_from_below"`
			BytesToBelow                                    uint64 `json:"bytes_to_below"`
		}
	}
	if err := json.Unmarshal(out, &p); err != nil {
		return nil, err
	}
	res := map[string]counts{}
	for _, c := range p.Caches {
		res[c.Name] = counts{
			Fetch: c.Accesses, IFetch: c.IFetches, Read: c.Reads, Write: c.Writes, Misc: c.Misc,
			Miss: c.Misses, IMiss: c.IFetchMisses, RMiss: c.ReadMisses, WMiss: c.WriteMisses, MMiss: c.MiscMisses,
			Compulsory: c.Compulsory, Capacity: c.Capacity, Conflict: c.Conflict,
			BytesFromBelow: c.BytesFromBelow, BytesToBelow: c.BytesToBelow,
		}
	}
	return res, nil
}

// compare returns the differences between Dinero's counts d and memspy's
// m, cache by cache ("" if none).
func compare(h hierarchy, d, m map[string]counts) string {
	var b strings.Builder
	for _, c := range h.caches {
		name := fmt.Sprintf("l%d-%ccache", c.level, c.kind)
		dc, mc := d[name], m[name]
		if dc != mc {
			fmt.Fprintf(&b, "  %s\n    dinero %+v\n    memspy %+v\n", name, dc, mc)
		}
	}
	return b.String()
}
