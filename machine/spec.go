package machine

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/memspy/memspy/cache"
)

// Keys lists the cache keys of the inline spec, in the order the
// documentation gives them (for messages and completion; do not modify).
// YAML cache entries take these and "name".
var Keys = []string{
	"size", "sets", "assoc", "line", "replacement", "seed",
	"write", "allocate", "holds", "level", "inclusion", "latency", "shared",
}

// ParseCacheSpec parses an inline cache description, the argument of the
// --cache flag:
//
//	NAME:key=value,key=value,...
//
// with the keys of Keys (see docs/machine.md). Keys and values are not case
// sensitive; empty items (a trailing comma) are ignored. The result is not
// normalized: geometry the spec leaves out is derived by Machine.Normalize.
// Write-back and write-allocate default to true here.
func ParseCacheSpec(spec string) (Cache, error) {
	name, rest, ok := strings.Cut(spec, ":")
	if !ok {
		return Cache{}, &ConfigError{Msg: fmt.Sprintf("cache spec %q has no NAME: prefix (write NAME:key=value,..., e.g. L1D:size=32k,assoc=8)", spec)}
	}
	name = strings.TrimSpace(name)
	if name == "" {
		return Cache{}, &ConfigError{Msg: fmt.Sprintf("cache spec %q has an empty name before the colon", spec)}
	}
	c := newCache(name)
	seen := map[string]bool{}
	for _, item := range strings.Split(rest, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		k, v, ok := strings.Cut(item, "=")
		if !ok {
			return Cache{}, &ConfigError{Cache: name, Msg: fmt.Sprintf("%q is not key=value", item)}
		}
		k = strings.ToLower(strings.TrimSpace(k))
		if k == "name" {
			return Cache{}, &ConfigError{Cache: name, Key: k, Msg: "give the name as the NAME: prefix of the spec"}
		}
		if seen[k] {
			return Cache{}, &ConfigError{Cache: name, Key: k, Msg: "given twice"}
		}
		seen[k] = true
		if err := setKey(&c, k, v); err != nil {
			return Cache{}, err
		}
	}
	return c, nil
}

// FromSpecs builds a machine from inline cache specs listed from the CPU
// outward (see ParseCacheSpec) and a memory latency in cycles (0 for the
// default), and normalizes it. The machine is named "custom".
func FromSpecs(specs []string, memoryLatency int) (*Machine, error) {
	m := &Machine{Name: "custom", MemoryLatency: memoryLatency}
	for _, s := range specs {
		c, err := ParseCacheSpec(s)
		if err != nil {
			return nil, err
		}
		m.Caches = append(m.Caches, c)
	}
	if err := m.Normalize(); err != nil {
		return nil, err
	}
	return m, nil
}

// newCache returns a cache with the defaults the parsers apply before
// reading keys (the ones Normalize cannot apply).
func newCache(name string) Cache {
	return Cache{Name: name, WriteBack: true, WriteAllocate: true}
}

// setKey sets one key of c from its text, shared by the inline spec and
// YAML parsers. key must be lower case.
func setKey(c *Cache, key, val string) *ConfigError {
	val = strings.TrimSpace(val)
	fail := func(format string, args ...any) *ConfigError {
		return &ConfigError{Cache: c.Name, Key: key, Msg: fmt.Sprintf(format, args...)}
	}
	if val == "" && key != "name" {
		return fail("missing value")
	}
	lower := strings.ToLower(val)
	var msg string
	switch key {
	case "name":
		c.Name = val
	case "size":
		n, reason := parseSize(val)
		if reason != "" {
			return fail("%q is not a size: %s", val, reason)
		}
		if n == 0 {
			return fail("must be positive, not %s", val)
		}
		c.Size = n
	case "sets":
		c.Sets, msg = positive(val)
	case "assoc":
		if lower == "full" {
			c.Assoc = AssocFull
			break
		}
		if _, err := strconv.Atoi(val); err != nil {
			return fail("%q is not a positive integer or \"full\"", val)
		}
		c.Assoc, msg = positive(val)
	case "line":
		c.Line, msg = positive(val)
	case "level":
		c.Level, msg = positive(val)
	case "latency":
		c.Latency, msg = positive(val)
	case "seed":
		n, err := strconv.ParseUint(val, 10, 64)
		if err != nil {
			return fail("%q is not an unsigned integer", val)
		}
		c.Seed = n
	case "replacement":
		r := Replacement(lower)
		if m := checkReplacement(r); m != "" {
			return fail("%s", m)
		}
		c.Replacement = r
	case "holds":
		h, ok := holdsNames[lower]
		if !ok {
			return fail("%s", unknownHolds(val))
		}
		c.Holds = h
	case "inclusion":
		in := Inclusion(lower)
		if m := checkInclusion(in); m != "" {
			return fail("%s", m)
		}
		c.Inclusion = in
	case "write":
		switch lower {
		case "back", "wb":
			c.WriteBack = true
		case "through", "wt":
			c.WriteBack = false
		default:
			return fail("unknown policy %q (want back or through)", val)
		}
	case "allocate", "shared":
		b, ok := parseBool(lower)
		if !ok {
			return fail("%q is not true or false", val)
		}
		if key == "shared" {
			c.Shared = b
		} else {
			c.WriteAllocate = b
		}
	default:
		return fail("unknown key (want %s)", strings.Join(Keys, ", "))
	}
	if msg != "" {
		return fail("%s", msg)
	}
	return nil
}

// positive parses a positive decimal integer, returning a message on failure.
func positive(s string) (int, string) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Sprintf("%q is not a positive integer", s)
	}
	if n <= 0 {
		return 0, fmt.Sprintf("must be positive, not %d", n)
	}
	return n, ""
}

// parseBool accepts true/false, yes/no, on/off and 1/0 in lower case.
func parseBool(s string) (bool, bool) {
	switch s {
	case "true", "yes", "on", "1":
		return true, true
	case "false", "no", "off", "0":
		return false, true
	}
	return false, false
}

// holdsNames maps the accepted spellings of the holds key.
var holdsNames = map[string]Holds{
	"instructions": Instructions, "instruction": Instructions, "instr": Instructions, "inst": Instructions, "i": Instructions,
	"data": Data, "d": Data,
	"unified": Unified, "u": Unified,
}

func unknownHolds(v string) string {
	return fmt.Sprintf("unknown kind %q (want instructions, data or unified; or i, d, u)", v)
}

// checkReplacement returns why r is not a replacement policy of package
// cache (the one list of them), or "".
func checkReplacement(r Replacement) string {
	if cache.IsPolicy(string(r)) {
		return ""
	}
	return fmt.Sprintf("unknown policy %q (want %s)", string(r), strings.Join(cache.Policies(), ", "))
}

func checkInclusion(in Inclusion) string {
	switch in {
	case NonInclusive, Inclusive, Exclusive:
		return ""
	}
	return fmt.Sprintf("unknown policy %q (want none, inclusive or exclusive)", string(in))
}

// Spec returns c as an inline cache spec that ParseCacheSpec reads back,
// giving every key (shared only when true). It is meant for normalized
// caches.
func (c *Cache) Spec() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:size=%s,assoc=%d,line=%d,sets=%d,level=%d,holds=%s,replacement=%s",
		c.Name, FormatSize(c.Size), c.Assoc, c.Line, c.Sets, c.Level, c.Holds, c.Replacement)
	if c.Seed != 0 {
		fmt.Fprintf(&b, ",seed=%d", c.Seed)
	}
	fmt.Fprintf(&b, ",write=%s,allocate=%t,inclusion=%s,latency=%d",
		writeName(c.WriteBack), c.WriteAllocate, c.Inclusion, c.Latency)
	if c.Shared {
		b.WriteString(",shared=true")
	}
	return b.String()
}

func writeName(back bool) string {
	if back {
		return "back"
	}
	return "through"
}

// ParseMapping parses the name of a thread mapping: round-robin (or rr)
// or pinned, in any case. Errors are *ConfigError values for the key
// mapping.
func ParseMapping(s string) (Mapping, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "round-robin", "rr":
		return RoundRobin, nil
	case "pinned":
		return Pinned, nil
	case "":
		return "", &ConfigError{Key: "mapping", Msg: "missing value"}
	}
	return "", &ConfigError{Key: "mapping", Msg: unknownMapping(s)}
}

func unknownMapping(s string) string {
	return fmt.Sprintf("unknown mapping %q (want round-robin, rr or pinned)", s)
}

// ParsePin parses a comma-separated list of processor numbers, the pin of
// a pinned mapping: "0,1,1,0" puts the first thread to appear on processor
// 0, the second on 1, and so on. Spaces around numbers are ignored; every
// item must be an integer. Whether the processors exist is checked by
// Machine.Normalize. Errors are *ConfigError values for the key pin.
func ParsePin(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, &ConfigError{Key: "pin", Msg: "missing value"}
	}
	var pin []int
	for i, item := range strings.Split(s, ",") {
		p, err := pinEntry(i, item)
		if err != nil {
			return nil, err
		}
		pin = append(pin, p)
	}
	return pin, nil
}

// pinEntry parses entry i (from 0) of a pin.
func pinEntry(i int, s string) (int, *ConfigError) {
	s = strings.TrimSpace(s)
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, &ConfigError{Key: "pin", Msg: fmt.Sprintf("entry %d: %q is not a processor number", i+1, s)}
	}
	return n, nil
}

// ParsePlacement parses the name of a page placement: first-touch (or
// ft), round-robin (or rr) or interleave, in any case. Errors are
// *ConfigError values for the key placement.
func ParsePlacement(s string) (Placement, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "first-touch", "ft":
		return FirstTouch, nil
	case "round-robin", "rr":
		return PlaceRoundRobin, nil
	case "interleave":
		return Interleave, nil
	case "":
		return "", &ConfigError{Key: "placement", Msg: "missing value"}
	}
	return "", &ConfigError{Key: "placement", Msg: unknownPlacement(s)}
}

func unknownPlacement(s string) string {
	return fmt.Sprintf("unknown placement %q (want first-touch (ft), round-robin (rr) or interleave)", s)
}

// ParsePageSize parses a page size, a positive size as ParseSize reads it:
// 4096, 4k, 2MiB. Whether it is a power of two is checked by
// Machine.Normalize. Errors are *ConfigError values for the key page_size.
func ParsePageSize(s string) (int, error) {
	fail := func(format string, args ...any) (int, error) {
		return 0, &ConfigError{Key: "page_size", Msg: fmt.Sprintf(format, args...)}
	}
	if strings.TrimSpace(s) == "" {
		return fail("missing value")
	}
	n, reason := parseSize(s)
	switch {
	case reason != "":
		return fail("%q is not a size: %s", strings.TrimSpace(s), reason)
	case n == 0:
		return fail("must be positive, not %s", strings.TrimSpace(s))
	case n > math.MaxInt32:
		return fail("%s is too large", strings.TrimSpace(s))
	}
	return int(n), nil
}
