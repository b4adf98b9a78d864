package machine

import (
	"fmt"
	"math/big"
	"strings"
)

// Binary size units; k, m, g and t always mean powers of 1024.
const (
	KiB int64 = 1 << 10
	MiB int64 = 1 << 20
	GiB int64 = 1 << 30
	TiB int64 = 1 << 40
)

// ParseSize parses a byte count: a number, optionally with a decimal
// fraction, followed by an optional binary unit k, m, g or t in any case,
// itself optionally followed by B or iB. All units are binary (k = 1024),
// so 32k, 32K, 32KB and 32KiB all mean 32768 bytes. Plain numbers are bytes
// (4096, 4096B). A fraction must give a whole number of bytes: 1.25m is
// 1310720. Space between the number and the unit is allowed. The error
// names the text.
func ParseSize(s string) (int64, error) {
	n, reason := parseSize(s)
	if reason != "" {
		return 0, fmt.Errorf("%q is not a size: %s", s, reason)
	}
	return n, nil
}

// parseSize is ParseSize returning the bare reason for a failure.
func parseSize(s string) (int64, string) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, "empty"
	}
	if t[0] == '-' {
		return 0, "negative"
	}
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	if num == "" {
		return 0, "no number"
	}
	if strings.Count(num, ".") > 1 || num[0] == '.' || num[len(num)-1] == '.' {
		return 0, fmt.Sprintf("malformed number %q", num)
	}
	mult, ok := units[unit]
	if !ok {
		return 0, fmt.Sprintf("unknown unit %q (want k, m, g or t, optionally followed by B or iB)", strings.TrimSpace(t[i:]))
	}
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		return 0, fmt.Sprintf("malformed number %q", num)
	}
	r.Mul(r, new(big.Rat).SetInt64(mult))
	if !r.IsInt() {
		return 0, "not a whole number of bytes"
	}
	v := r.Num()
	if !v.IsInt64() || v.Int64() > maxSize {
		return 0, "too large"
	}
	return v.Int64(), ""
}

// units maps the lower-case unit spellings ParseSize accepts to their size.
var units = map[string]int64{
	"": 1, "b": 1,
	"k": KiB, "kb": KiB, "kib": KiB,
	"m": MiB, "mb": MiB, "mib": MiB,
	"g": GiB, "gb": GiB, "gib": GiB,
	"t": TiB, "tb": TiB, "tib": TiB,
}

// maxSize bounds sizes so that geometry arithmetic cannot overflow.
const maxSize = 1 << 60

// FormatSize formats a byte count exactly, with the largest binary unit
// that divides it: 32768 is "32KiB", 1310720 is "1280KiB", 100 is "100B".
// ParseSize reads the result back.
func FormatSize(n int64) string {
	if n != 0 {
		for _, u := range []struct {
			size int64
			name string
		}{{TiB, "TiB"}, {GiB, "GiB"}, {MiB, "MiB"}, {KiB, "KiB"}} {
			if n%u.size == 0 {
				return fmt.Sprintf("%d%s", n/u.size, u.name)
			}
		}
	}
	return fmt.Sprintf("%dB", n)
}
