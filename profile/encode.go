package profile

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// The where-and-why entries are most of a profile: write encodes them with
// the functions below, which append what json.Marshal writes for them
// (encode_test.go compares the two byte for byte) without its reflection.
// Each entry appender writes the entry's top-level counters, the copy of
// its focus cache's (focusOn), only when focusCopy is set.

// appendFunction appends f as JSON.
func appendFunction(b []byte, f *Function, focusCopy bool) ([]byte, error) {
	b = appendStringField(b, `{"name":`, f.Name)
	b = appendStringOmitEmpty(b, `,"file":`, f.File)
	b = appendIntOmitEmpty(b, `,"line":`, int64(f.Line))
	b = appendStringOmitEmpty(b, `,"module":`, f.Module)
	b = appendUintField(b, `,"entry":`, f.Entry)
	b = appendUintField(b, `,"instructions":`, f.Instructions)
	b = appendUintField(b, `,"compute_cycles":`, f.ComputeCycles)
	b = appendUintOmitEmpty(b, `,"sync_cycles":`, f.SyncCycles)
	if f.Region {
		b = append(b, `,"region":true`...)
	}
	b, err := appendLevelled(b, &f.Stats, f.Levels, focusCopy)
	if err != nil || f.Inclusive == nil {
		return append(b, '}'), err
	}
	in := f.Inclusive
	b = appendUintField(b, `,"inclusive":{"instructions":`, in.Instructions)
	b = appendUintField(b, `,"compute_cycles":`, in.ComputeCycles)
	b = appendUintOmitEmpty(b, `,"sync_cycles":`, in.SyncCycles)
	if b, err = appendLevelled(b, &in.Stats, in.Levels, focusCopy); err != nil {
		return b, fmt.Errorf("inclusive: %w", err)
	}
	return append(b, "}}"...), nil
}

// appendObject appends o as JSON.
func appendObject(b []byte, o *Object, focusCopy bool) ([]byte, error) {
	b = appendStringField(b, `{"name":`, o.Name)
	b = appendStringField(b, `,"full_name":`, o.FullName)
	b = appendStringField(b, `,"kind":`, o.Kind)
	b = appendStringOmitEmpty(b, `,"alloc_site":`, o.AllocSite)
	if len(o.CallPath) > 0 {
		b = append(b, `,"call_path":`...)
		for i, frame := range o.CallPath {
			b = appendElementStart(b, i, '[')
			b = appendString(b, frame)
		}
		b = append(b, ']')
	}
	b = appendStringOmitEmpty(b, `,"pool":`, o.Pool)
	b = appendUintField(b, `,"size":`, o.Size)
	b = appendUintOmitEmpty(b, `,"blocks":`, o.Blocks)
	if len(o.SharingWrites) > 0 {
		b = append(b, `,"sharing_writes":`...)
		for i := range o.SharingWrites {
			w := &o.SharingWrites[i]
			b = appendElementStart(b, i, '[')
			b = appendIntField(b, `{"processor":`, int64(w.Processor))
			b = appendUintField(b, `,"offset":`, w.Offset)
			b = appendUintField(b, `,"size":`, w.Size)
			b = appendUintField(b, `,"copies":`, w.Copies)
			b = appendUintField(b, `,"false_sharing":`, w.FalseSharing)
			b = appendUintOmitEmpty(b, `,"neighbour":`, w.Neighbour)
			if w.OwnBlock {
				b = append(b, `,"own_block":true`...)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if len(o.LineUse) > 0 {
		b = append(b, `,"line_use":`...)
		var caches [16]string
		for i, name := range sortedKeys(caches[:0], o.LineUse) {
			b = appendElementStart(b, i, '{')
			b = appendString(b, name)
			b = append(b, ':')
			if o.LineUse[name] == nil {
				b = append(b, "null"...)
				continue
			}
			b = append(b, '[')
			for j, n := range o.LineUse[name] {
				if j > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendUint(b, n, 10)
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	return appendLevelledEnd(b, &o.Stats, o.Levels, focusCopy)
}

// appendPair appends p as JSON.
func appendPair(b []byte, p *Pair, focusCopy bool) ([]byte, error) {
	b = appendStringField(b, `{"function":`, p.Function)
	b = appendStringField(b, `,"object":`, p.Object)
	b = appendStrides(b, p.Strides)
	return appendLevelledEnd(b, &p.Stats, p.Levels, focusCopy)
}

// appendLine appends l as JSON.
func appendLine(b []byte, l *Line, focusCopy bool) ([]byte, error) {
	b = appendStringField(b, `{"file":`, l.File)
	b = appendIntField(b, `,"line":`, int64(l.Line))
	b = appendStringField(b, `,"function":`, l.Function)
	return appendLevelledEnd(b, &l.Stats, l.Levels, focusCopy)
}

// appendReference appends r as JSON.
func appendReference(b []byte, r *Reference, focusCopy bool) ([]byte, error) {
	b = appendUintField(b, `{"pc":`, r.PC)
	b = appendStringOmitEmpty(b, `,"file":`, r.File)
	b = appendIntOmitEmpty(b, `,"line":`, int64(r.Line))
	b = appendIntOmitEmpty(b, `,"column":`, int64(r.Column))
	b = appendIntField(b, `,"position":`, int64(r.Position))
	b = appendStringField(b, `,"function":`, r.Function)
	b = appendStringField(b, `,"object":`, r.Object)
	b = appendStringField(b, `,"kind":`, r.Kind)
	b = appendStrides(b, r.Strides)
	return appendLevelledEnd(b, &r.Stats, r.Levels, focusCopy)
}

// appendCallNode appends n as JSON (a node has no focus copy).
func appendCallNode(b []byte, n *CallNode, _ bool) ([]byte, error) {
	b = appendStringField(b, `{"function":`, n.Function)
	b = appendIntField(b, `,"caller":`, int64(n.Caller))
	b = appendUintOmitEmpty(b, `,"calls":`, n.Calls)
	b = appendUintOmitEmpty(b, `,"instructions":`, n.Instructions)
	b = appendUintOmitEmpty(b, `,"sync_cycles":`, n.SyncCycles)
	if len(n.Levels) == 0 {
		return append(b, '}'), nil
	}
	return appendLevelledEnd(b, nil, n.Levels, false)
}

// appendStrides appends the field strides, unless s is nil.
func appendStrides(b []byte, s *Strides) []byte {
	if s == nil {
		return b
	}
	b = appendUintField(b, `,"strides":{"samples":`, s.Samples)
	b = append(b, `,"top":`...)
	if s.Top == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, st := range s.Top {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendIntField(b, `{"stride":`, st.Bytes)
			b = appendUintField(b, `,"count":`, st.Count)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendLevelledEnd appends the fields of a levelled entry and closes it.
func appendLevelledEnd(b []byte, top *Stats, levels map[string]*Stats, focusCopy bool) ([]byte, error) {
	b, err := appendLevelled(b, top, levels, focusCopy)
	return append(b, '}'), err
}

// appendLevelled appends the fields of a levelled entry, each after a
// comma: its top-level counters when focusCopy is set, and levels.
func appendLevelled(b []byte, top *Stats, levels map[string]*Stats, focusCopy bool) ([]byte, error) {
	var err error
	if focusCopy {
		if b, err = appendStatsFields(append(b, ','), top); err != nil {
			return b, err
		}
	}
	b = append(b, `,"levels":`...)
	if levels == nil {
		return append(b, "null"...), nil
	}
	var names [8]string // (most profiles have fewer caches)
	for i, name := range sortedKeys(names[:0], levels) {
		b = appendElementStart(b, i, '{')
		b = appendString(b, name)
		b = append(b, ':')
		s := levels[name]
		if s == nil {
			b = append(b, "null"...)
			continue
		}
		if b, err = appendStatsFields(append(b, '{'), s); err != nil {
			return b, fmt.Errorf("levels[%s]: %w", strconv.Quote(name), err)
		}
		b = append(b, '}')
	}
	if len(levels) == 0 {
		b = append(b, '{')
	}
	return append(b, '}'), nil
}

// sortedKeys appends the keys of m to keys, sorted.
func sortedKeys[V any](keys []string, m map[string]V) []string {
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// appendStatsFields appends the fields of s, without braces.
func appendStatsFields(b []byte, s *Stats) ([]byte, error) {
	b = appendUintField(b, `"accesses":`, s.Accesses)
	b = appendUintField(b, `,"hits":`, s.Hits)
	b = appendUintField(b, `,"misses":`, s.Misses)
	b = appendUintOmitEmpty(b, `,"ifetches":`, s.IFetches)
	b = appendUintOmitEmpty(b, `,"reads":`, s.Reads)
	b = appendUintOmitEmpty(b, `,"writes":`, s.Writes)
	b = appendUintOmitEmpty(b, `,"ifetch_misses":`, s.IFetchMisses)
	b = appendUintOmitEmpty(b, `,"read_misses":`, s.ReadMisses)
	b = appendUintOmitEmpty(b, `,"write_misses":`, s.WriteMisses)
	b = appendUintField(b, `,"stall_cycles":`, s.StallCycles)
	c := &s.Causes
	b = appendUintField(b, `,"causes":{"cold":`, c.Cold)
	b = appendUintField(b, `,"replacement":`, c.Replacement)
	b = appendUintField(b, `,"invalidation":`, c.Invalidation)
	b = appendUintOmitEmpty(b, `,"true_sharing":`, c.TrueSharing)
	b = appendUintOmitEmpty(b, `,"false_sharing":`, c.FalseSharing)
	b = appendUintOmitEmpty(b, `,"unknown":`, c.Unknown)
	b = append(b, '}')
	b = appendUintOmitEmpty(b, `,"temporal_hits":`, s.TemporalHits)
	b = appendUintOmitEmpty(b, `,"spatial_hits":`, s.SpatialHits)
	b = appendUintOmitEmpty(b, `,"unknown_hits":`, s.UnknownHits)
	if len(s.EvictedBy) > 0 {
		b = append(b, `,"evicted_by":`...)
		var objects [16]string
		for i, object := range sortedKeys(objects[:0], s.EvictedBy) {
			b = appendElementStart(b, i, '{')
			b = appendString(b, object)
			b = appendUintField(b, ":", s.EvictedBy[object])
		}
		b = append(b, '}')
	}
	b = appendUintOmitEmpty(b, `,"evicted_by_others":`, s.EvictedByOthers)
	b = appendSharing(b, `,"invalidated_by":`, s.InvalidatedBy)
	b = appendSharing(b, `,"invalidated":`, s.Invalidated)
	b = appendUintOmitEmpty(b, `,"used_bytes":`, s.UsedBytes)
	b = appendUintOmitEmpty(b, `,"fetched_bytes":`, s.FetchedBytes)
	b = append(b, `,"spatial_use":`...)
	b, err := appendFloat(b, s.SpatialUse)
	if err != nil {
		return b, fmt.Errorf("spatial_use: %w", err)
	}
	if len(s.Evictors) > 0 {
		b = append(b, `,"evictors":`...)
		for i := range s.Evictors {
			e := &s.Evictors[i]
			b = appendElementStart(b, i, '[')
			b = appendStringField(b, `{"reference":`, e.Reference)
			b = appendStringField(b, `,"object":`, e.Object)
			b = appendUintField(b, `,"count":`, e.Count)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return b, nil
}

// appendSharing appends the field key (with its comma) holding ss,
// unless ss is empty.
func appendSharing(b []byte, key string, ss []Sharing) []byte {
	if len(ss) == 0 {
		return b
	}
	b = append(b, key...)
	for i := range ss {
		s := &ss[i]
		b = appendElementStart(b, i, '[')
		b = appendStringField(b, `{"object":`, s.Object)
		b = appendIntField(b, `,"processor":`, int64(s.Processor))
		b = appendUintField(b, `,"lines":`, s.Lines)
		b = appendUintField(b, `,"false_sharing":`, s.FalseSharing)
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendElementStart appends what comes before element i of a list or
// object: open before the first, else a comma.
func appendElementStart(b []byte, i int, open byte) []byte {
	if i == 0 {
		return append(b, open)
	}
	return append(b, ',')
}

// appendUintField appends key (the JSON before the value: comma, name and
// colon) and v.
func appendUintField(b []byte, key string, v uint64) []byte {
	return strconv.AppendUint(append(b, key...), v, 10)
}

// appendUintOmitEmpty appends key and v unless v is 0 (omitempty).
func appendUintOmitEmpty(b []byte, key string, v uint64) []byte {
	if v == 0 {
		return b
	}
	return appendUintField(b, key, v)
}

// appendIntField appends key and v.
func appendIntField(b []byte, key string, v int64) []byte {
	return strconv.AppendInt(append(b, key...), v, 10)
}

// appendIntOmitEmpty appends key and v unless v is 0 (omitempty).
func appendIntOmitEmpty(b []byte, key string, v int64) []byte {
	if v == 0 {
		return b
	}
	return appendIntField(b, key, v)
}

// appendStringField appends key and s.
func appendStringField(b []byte, key, s string) []byte {
	return appendString(append(b, key...), s)
}

// appendStringOmitEmpty appends key and s unless s is empty (omitempty).
func appendStringOmitEmpty(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	return appendStringField(b, key, s)
}

// jsonSafe tells the bytes a JSON string holds as they are, as
// encoding/json writes strings: printable ASCII but the quote, the
// backslash and, for HTML's sake, <, > and &. Control bytes and bytes of
// multi-byte UTF-8 are not.
var jsonSafe = func() (safe [256]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		safe[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return safe
}()

// hexDigits are the digits of \u escapes.
const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string, escaped as encoding/json
// escapes it by default: quote and backslash escaped by a backslash,
// \b \f \n \r \t by their letters, other control bytes and <, > and & as
// \u00xx, invalid UTF-8 bytes as \ufffd, U+2028 and U+2029 as \u2028 and
// \u2029 (JavaScript reads them as line ends).
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0 // of the bytes not appended yet
	for i := 0; i < len(s); {
		c := s[i]
		if jsonSafe[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(append(b, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(append(b, s[start:i]...), '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(append(b, s[start:]...), '"')
}

// appendFloat appends f as encoding/json writes a float64: as
// JavaScript's shortest form, in decimal unless its magnitude is below
// 1e-6 or from 1e21 on, then with an exponent without leading zeros. NaN
// and infinities are an error: JSON has no such numbers.
func appendFloat(b []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, fmt.Errorf("%v is not a number JSON can hold", f)
	}
	abs := math.Abs(f)
	if abs == 0 || abs >= 1e-6 && abs < 1e21 {
		return strconv.AppendFloat(b, f, 'f', -1, 64), nil
	}
	b = strconv.AppendFloat(b, f, 'e', -1, 64)
	if n := len(b); b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' { // e-07 → e-7
		b[n-2] = b[n-1]
		b = b[:n-1]
	}
	return b, nil
}
