package profile

import (
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// The where-and-why entries are most of a profile: Read decodes each with
// the functions below, which parse its JSON straight into the entry,
// without encoding/json's reflection. They decode what encoding/json
// decodes, exactly (decode_test.go compares the two), but only what they
// understand as it does: JSON as memspy writes it (encode.go), keys in any
// order, white space anywhere, null anywhere. Anything else (an unknown
// key, a field repeated, a number that is no integer for an integer
// field, JSON that is not valid) fails, and decodeEntry decodes that entry
// with encoding/json instead.

// entryParser parses the JSON of an entry into e, which is zero, and
// reports whether it decoded it as encoding/json would (function and the
// others, below).
type entryParser[T any] func(d *entryDecoder, e *T) bool

// decodeEntry decodes the JSON entry b into *e, which is zero, as
// encoding/json does: with parse, or when parse fails with json.Unmarshal,
// which says what is wrong.
func decodeEntry[T any](d *entryDecoder, b []byte, e *T, parse entryParser[T]) error {
	if parseEntry(d, b, e, parse) {
		return nil
	}
	var zero T
	*e = zero // (what parse left)
	return json.Unmarshal(b, e)
}

// parseEntry parses the JSON entry b (and nothing after it but white
// space) into *e with parse.
func parseEntry[T any](d *entryDecoder, b []byte, e *T, parse entryParser[T]) bool {
	d.b, d.i = b, 0
	if !parse(d, e) {
		return false
	}
	d.space()
	return d.i == len(d.b)
}

// entryDecoder parses the JSON of entries, one at a time. Each of its
// parsing methods parses the value at the decoder's place (after white
// space) into a zero target and reports whether it did as encoding/json
// would; null leaves the target zero (for a struct, encoding/json leaves
// it as it is, and sets a pointer, map or slice nil).
type entryDecoder struct {
	scanner                   // the JSON of the entry, and the place in it
	unquote []byte            // the text of the last string with escapes or invalid UTF-8
	slab    []Stats           // counters not handed out yet, for levels
	strings map[string]string // the strings intern made, by their bytes
}

// failed is what a field decoder returns for a key it does not know or a
// value that does not decode.
const failed = -1

// field returns the number n of a field that was decoded, or failed when
// ok is false.
func field(n int, ok bool) int {
	if !ok {
		return failed
	}
	return n
}

// ownField is the number of the first field of an entry beyond its
// counters (the fields of Stats, numbered from 0).
const ownField = 32

// function parses a Function.
func (d *entryDecoder) function(f *Function) bool {
	return d.fields(func(key []byte) int {
		switch string(key) {
		case "name":
			return field(ownField, d.string(&f.Name))
		case "file":
			return field(ownField+1, d.string(&f.File))
		case "line":
			return field(ownField+2, d.int(&f.Line))
		case "module":
			return field(ownField+3, d.string(&f.Module))
		case "entry":
			return field(ownField+4, d.uint(&f.Entry))
		case "instructions":
			return field(ownField+5, d.uint(&f.Instructions))
		case "compute_cycles":
			return field(ownField+6, d.uint(&f.ComputeCycles))
		case "sync_cycles":
			return field(ownField+7, d.uint(&f.SyncCycles))
		case "region":
			return field(ownField+8, d.bool(&f.Region))
		case "levels":
			return field(ownField+9, d.levels(&f.Levels))
		case "inclusive":
			return field(ownField+10, d.inclusive(&f.Inclusive))
		}
		return d.statsField(&f.Stats, key)
	})
}

// inclusive parses a function's Inclusive counters, made unless null.
func (d *entryDecoder) inclusive(p **Inclusive) bool {
	if d.null() {
		return true
	}
	in := &Inclusive{}
	*p = in
	return d.fields(func(key []byte) int {
		switch string(key) {
		case "instructions":
			return field(ownField, d.uint(&in.Instructions))
		case "compute_cycles":
			return field(ownField+1, d.uint(&in.ComputeCycles))
		case "sync_cycles":
			return field(ownField+2, d.uint(&in.SyncCycles))
		case "levels":
			return field(ownField+3, d.levels(&in.Levels))
		}
		return d.statsField(&in.Stats, key)
	})
}

// object parses an Object.
func (d *entryDecoder) object(o *Object) bool {
	return d.fields(func(key []byte) int {
		switch string(key) {
		case "name":
			return field(ownField, d.string(&o.Name))
		case "full_name":
			return field(ownField+1, d.string(&o.FullName))
		case "kind":
			return field(ownField+2, d.string(&o.Kind))
		case "alloc_site":
			return field(ownField+3, d.string(&o.AllocSite))
		case "call_path":
			return field(ownField+4, list(d, &o.CallPath, d.string))
		case "pool":
			return field(ownField+5, d.string(&o.Pool))
		case "size":
			return field(ownField+6, d.uint(&o.Size))
		case "blocks":
			return field(ownField+7, d.uint(&o.Blocks))
		case "sharing_writes":
			return field(ownField+8, list(d, &o.SharingWrites, d.sharingWrite))
		case "levels":
			return field(ownField+9, d.levels(&o.Levels))
		case "line_use":
			return field(ownField+10, mapOf(d, &o.LineUse, func() (v []uint64, ok bool) {
				return v, list(d, &v, d.uint)
			}))
		}
		return d.statsField(&o.Stats, key)
	})
}

// sharingWrite parses a SharingWrite.
func (d *entryDecoder) sharingWrite(w *SharingWrite) bool {
	return d.fields(func(key []byte) int {
		switch string(key) {
		case "processor":
			return field(0, d.int(&w.Processor))
		case "offset":
			return field(1, d.uint(&w.Offset))
		case "size":
			return field(2, d.uint(&w.Size))
		case "copies":
			return field(3, d.uint(&w.Copies))
		case "false_sharing":
			return field(4, d.uint(&w.FalseSharing))
		case "neighbour":
			return field(5, d.uint(&w.Neighbour))
		case "own_block":
			return field(6, d.bool(&w.OwnBlock))
		}
		return failed
	})
}

// pair parses a Pair.
func (d *entryDecoder) pair(p *Pair) bool {
	return d.fields(func(key []byte) int {
		switch string(key) {
		case "function":
			return field(ownField, d.string(&p.Function))
		case "object":
			return field(ownField+1, d.string(&p.Object))
		case "strides":
			return field(ownField+2, d.strides(&p.Strides))
		case "levels":
			return field(ownField+3, d.levels(&p.Levels))
		}
		return d.statsField(&p.Stats, key)
	})
}

// line parses a Line.
func (d *entryDecoder) line(l *Line) bool {
	return d.fields(func(key []byte) int {
		switch string(key) {
		case "file":
			return field(ownField, d.string(&l.File))
		case "line":
			return field(ownField+1, d.int(&l.Line))
		case "function":
			return field(ownField+2, d.string(&l.Function))
		case "levels":
			return field(ownField+3, d.levels(&l.Levels))
		}
		return d.statsField(&l.Stats, key)
	})
}

// reference parses a Reference.
func (d *entryDecoder) reference(r *Reference) bool {
	return d.fields(func(key []byte) int {
		switch string(key) {
		case "pc":
			return field(ownField, d.uint(&r.PC))
		case "file":
			return field(ownField+1, d.string(&r.File))
		case "line":
			return field(ownField+2, d.int(&r.Line))
		case "column":
			return field(ownField+3, d.int(&r.Column))
		case "position":
			return field(ownField+4, d.int(&r.Position))
		case "function":
			return field(ownField+5, d.string(&r.Function))
		case "object":
			return field(ownField+6, d.string(&r.Object))
		case "kind":
			return field(ownField+7, d.string(&r.Kind))
		case "strides":
			return field(ownField+8, d.strides(&r.Strides))
		case "levels":
			return field(ownField+9, d.levels(&r.Levels))
		}
		return d.statsField(&r.Stats, key)
	})
}

// strides parses Strides, made unless null.
func (d *entryDecoder) strides(p **Strides) bool {
	if d.null() {
		return true
	}
	s := &Strides{}
	*p = s
	return d.fields(func(key []byte) int {
		switch string(key) {
		case "samples":
			return field(0, d.uint(&s.Samples))
		case "top":
			return field(1, list(d, &s.Top, d.stride))
		}
		return failed
	})
}

// stride parses a Stride.
func (d *entryDecoder) stride(s *Stride) bool {
	return d.fields(func(key []byte) int {
		switch string(key) {
		case "stride":
			return field(0, d.int64(&s.Bytes))
		case "count":
			return field(1, d.uint(&s.Count))
		}
		return failed
	})
}

// callNode parses a CallNode.
func (d *entryDecoder) callNode(n *CallNode) bool {
	return d.fields(func(key []byte) int {
		switch string(key) {
		case "function":
			return field(0, d.string(&n.Function))
		case "caller":
			if d.null() {
				return 1
			}
			c, ok := d.integer(32)
			n.Caller = int32(c)
			return field(1, ok)
		case "calls":
			return field(2, d.uint(&n.Calls))
		case "instructions":
			return field(3, d.uint(&n.Instructions))
		case "sync_cycles":
			return field(4, d.uint(&n.SyncCycles))
		case "levels":
			return field(5, d.levels(&n.Levels))
		}
		return failed
	})
}

// levels parses counters by cache, each made unless null.
func (d *entryDecoder) levels(p *map[string]*Stats) bool {
	return mapOf(d, p, func() (*Stats, bool) {
		if d.null() {
			return nil, true
		}
		if len(d.slab) == 0 {
			d.slab = make([]Stats, 256)
		}
		s := &d.slab[0]
		d.slab = d.slab[1:]
		return s, d.stats(s)
	})
}

// stats parses Stats.
func (d *entryDecoder) stats(s *Stats) bool {
	return d.fields(func(key []byte) int { return d.statsField(s, key) })
}

// statsField parses the value of the field key of s, one of the fields of
// an entry's counters, and returns the field's number (below ownField).
func (d *entryDecoder) statsField(s *Stats, key []byte) int {
	switch string(key) {
	case "accesses":
		return field(0, d.uint(&s.Accesses))
	case "hits":
		return field(1, d.uint(&s.Hits))
	case "misses":
		return field(2, d.uint(&s.Misses))
	case "ifetches":
		return field(3, d.uint(&s.IFetches))
	case "reads":
		return field(4, d.uint(&s.Reads))
	case "writes":
		return field(5, d.uint(&s.Writes))
	case "ifetch_misses":
		return field(6, d.uint(&s.IFetchMisses))
	case "read_misses":
		return field(7, d.uint(&s.ReadMisses))
	case "write_misses":
		return field(8, d.uint(&s.WriteMisses))
	case "stall_cycles":
		return field(9, d.uint(&s.StallCycles))
	case "causes":
		return field(10, d.causes(&s.Causes))
	case "temporal_hits":
		return field(11, d.uint(&s.TemporalHits))
	case "spatial_hits":
		return field(12, d.uint(&s.SpatialHits))
	case "unknown_hits":
		return field(13, d.uint(&s.UnknownHits))
	case "evicted_by":
		return field(14, mapOf(d, &s.EvictedBy, func() (n uint64, ok bool) {
			ok = d.uint(&n)
			return n, ok
		}))
	case "invalidated_by":
		return field(15, list(d, &s.InvalidatedBy, d.sharing))
	case "invalidated":
		return field(16, list(d, &s.Invalidated, d.sharing))
	case "used_bytes":
		return field(17, d.uint(&s.UsedBytes))
	case "fetched_bytes":
		return field(18, d.uint(&s.FetchedBytes))
	case "spatial_use":
		return field(19, d.float(&s.SpatialUse))
	case "evictors":
		return field(20, list(d, &s.Evictors, d.evictor))
	case "evicted_by_others":
		return field(21, d.uint(&s.EvictedByOthers))
	}
	return failed
}

// causes parses Causes.
func (d *entryDecoder) causes(c *Causes) bool {
	return d.fields(func(key []byte) int {
		switch string(key) {
		case "cold":
			return field(0, d.uint(&c.Cold))
		case "replacement":
			return field(1, d.uint(&c.Replacement))
		case "invalidation":
			return field(2, d.uint(&c.Invalidation))
		case "true_sharing":
			return field(3, d.uint(&c.TrueSharing))
		case "false_sharing":
			return field(4, d.uint(&c.FalseSharing))
		case "unknown":
			return field(5, d.uint(&c.Unknown))
		}
		return failed
	})
}

// sharing parses a Sharing.
func (d *entryDecoder) sharing(s *Sharing) bool {
	return d.fields(func(key []byte) int {
		switch string(key) {
		case "object":
			return field(0, d.string(&s.Object))
		case "processor":
			return field(1, d.int(&s.Processor))
		case "lines":
			return field(2, d.uint(&s.Lines))
		case "false_sharing":
			return field(3, d.uint(&s.FalseSharing))
		}
		return failed
	})
}

// evictor parses a RefEvictor.
func (d *entryDecoder) evictor(e *RefEvictor) bool {
	return d.fields(func(key []byte) int {
		switch string(key) {
		case "reference":
			return field(0, d.string(&e.Reference))
		case "object":
			return field(1, d.string(&e.Object))
		case "count":
			return field(2, d.uint(&e.Count))
		}
		return failed
	})
}

// fields parses a JSON object into a struct, each key's value by
// decodeField, which returns the number of the key's field (below 64) or
// failed. A key repeated fails (encoding/json would decode the second
// value into the first).
func (d *entryDecoder) fields(decodeField func(key []byte) int) bool {
	if d.null() {
		return true
	}
	if !d.next('{') {
		return false
	}
	if d.next('}') {
		return true
	}
	var seen uint64
	for {
		key, ok := d.text()
		if !ok || !d.next(':') {
			return false
		}
		n := decodeField(key)
		if n == failed || seen&(1<<n) != 0 {
			return false
		}
		seen |= 1 << n
		if !d.next(',') {
			return d.next('}')
		}
	}
}

// mapOf parses a JSON object into a map, each value by value. A key
// repeated counts with its last value, as in encoding/json.
func mapOf[V any](d *entryDecoder, p *map[string]V, value func() (V, bool)) bool {
	if d.null() {
		return true
	}
	if !d.next('{') {
		return false
	}
	m := map[string]V{}
	*p = m
	if d.next('}') {
		return true
	}
	for {
		key, ok := d.text()
		if !ok || !d.next(':') {
			return false
		}
		k := d.intern(key) // (before value overwrites it)
		v, ok := value()
		if !ok {
			return false
		}
		m[k] = v
		if !d.next(',') {
			return d.next('}')
		}
	}
}

// list parses a JSON list into a slice, each element by elem; an empty
// list makes an empty slice, not nil, as in encoding/json.
func list[T any](d *entryDecoder, p *[]T, elem func(e *T) bool) bool {
	if d.null() {
		return true
	}
	if !d.next('[') {
		return false
	}
	s := []T{}
	if !d.next(']') {
		s = make([]T, 0, 4) // (room for most lists: strides, evictors)
		for {
			var zero T
			s = append(s, zero)
			if !elem(&s[len(s)-1]) {
				return false
			}
			if !d.next(',') {
				if !d.next(']') {
					return false
				}
				break
			}
		}
	}
	*p = s
	return true
}

// string parses a string.
func (d *entryDecoder) string(p *string) bool {
	if d.null() {
		return true
	}
	s, ok := d.text()
	*p = d.intern(s)
	return ok
}

// intern returns b as a string, the same string for the same bytes: the
// names in entries repeat (functions, objects, files, caches), and every
// copy would be an allocation and memory to collect.
func (d *entryDecoder) intern(b []byte) string {
	if s, ok := d.strings[string(b)]; ok {
		return s
	}
	if d.strings == nil {
		d.strings = map[string]string{}
	}
	s := string(b)
	d.strings[s] = s
	return s
}

// bool parses true or false.
func (d *entryDecoder) bool(p *bool) bool {
	d.space()
	switch {
	case d.word("true"):
		*p = true
	case d.word("false"), d.word("null"):
	default:
		return false
	}
	return true
}

// uint parses an unsigned integer.
func (d *entryDecoder) uint(p *uint64) bool {
	if d.null() {
		return true
	}
	n, ok := d.digits()
	*p = n
	return ok
}

// int parses an integer that fits an int.
func (d *entryDecoder) int(p *int) bool {
	if d.null() {
		return true
	}
	n, ok := d.integer(strconv.IntSize)
	*p = int(n)
	return ok
}

// int64 parses an integer.
func (d *entryDecoder) int64(p *int64) bool {
	if d.null() {
		return true
	}
	n, ok := d.integer(64)
	*p = n
	return ok
}

// integer reads an integer that fits in bits bits, as strconv.ParseInt.
func (d *entryDecoder) integer(bits uint) (int64, bool) {
	negative := d.i < len(d.b) && d.b[d.i] == '-'
	if negative {
		d.i++
	}
	n, ok := d.digits()
	if negative {
		return -int64(n), ok && n <= 1<<(bits-1)
	}
	return int64(n), ok && n < 1<<(bits-1)
}

// digits reads the digits of a number: an unsigned integer, which the
// JSON of a number may not begin with 0 unless it is 0. What follows it
// is left for the caller to refuse if it is no delimiter (a fraction, an
// exponent: encoding/json decodes no such number into an integer).
func (d *entryDecoder) digits() (uint64, bool) {
	const most = math.MaxUint64
	start := d.i
	var n uint64
	for ; d.i < len(d.b); d.i++ {
		digit := uint64(d.b[d.i] - '0')
		if digit > 9 {
			break
		}
		if n > most/10 || n == most/10 && digit > most%10 {
			return 0, false
		}
		n = n*10 + digit
	}
	return n, d.i > start && (d.b[start] != '0' || d.i == start+1)
}

// float parses a number as strconv.ParseFloat does (and encoding/json).
func (d *entryDecoder) float(p *float64) bool {
	if d.null() {
		return true
	}
	start := d.i
	if d.i < len(d.b) && d.b[d.i] == '-' {
		d.i++
	}
	if n := d.skipDigits(); n == 0 || n > 1 && d.b[d.i-n] == '0' {
		return false
	}
	if d.i < len(d.b) && d.b[d.i] == '.' {
		d.i++
		if d.skipDigits() == 0 {
			return false
		}
	}
	if d.i < len(d.b) && (d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		d.i++
		if d.i < len(d.b) && (d.b[d.i] == '+' || d.b[d.i] == '-') {
			d.i++
		}
		if d.skipDigits() == 0 {
			return false
		}
	}
	x, err := strconv.ParseFloat(string(d.b[start:d.i]), 64)
	*p = x
	return err == nil
}

// skipDigits skips decimal digits and returns how many.
func (d *entryDecoder) skipDigits() int {
	start := d.i
	for d.i < len(d.b) && '0' <= d.b[d.i] && d.b[d.i] <= '9' {
		d.i++
	}
	return d.i - start
}

// plainText tells the bytes that stand for themselves in a JSON string:
// ASCII but control bytes, the quote and the backslash.
var plainText = func() (plain [256]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		plain[c] = c != '"' && c != '\\'
	}
	return plain
}()

// text reads a JSON string and returns what it holds: its bytes in the
// JSON when it has no escapes and is valid UTF-8, else unquoted as
// encoding/json unquotes strings, into d.unquote (until the next string).
func (d *entryDecoder) text() ([]byte, bool) {
	if !d.next('"') {
		return nil, false
	}
	start := d.i
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case plainText[c]:
			d.i++
		case c == '"':
			d.i++
			return d.b[start : d.i-1], true
		case c < utf8.RuneSelf: // a backslash or a control byte
			return d.unquoteText(start)
		default:
			r, size := utf8.DecodeRune(d.b[d.i:])
			if r == utf8.RuneError && size == 1 {
				return d.unquoteText(start)
			}
			d.i += size
		}
	}
	return nil, false
}

// unquoteText reads on the string that began at start, of which the
// bytes before d.i stand for themselves, into d.unquote: escapes
// unescaped, a \u escape of half a UTF-16 surrogate pair not followed by
// the other half and every byte of invalid UTF-8 replaced by U+FFFD, as
// in encoding/json. JSON allows no control bytes and no escapes but \",
// \\, \/, \b, \f, \n, \r, \t and \u with four hexadecimal digits.
func (d *entryDecoder) unquoteText(start int) ([]byte, bool) {
	out := append(d.unquote[:0], d.b[start:d.i]...)
	defer func() { d.unquote = out }()
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			return out, true
		case c == '\\':
			if d.i+1 == len(d.b) {
				return nil, false
			}
			d.i += 2
			switch e := d.b[d.i-1]; e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r := hex4(d.b[d.i:])
				if r < 0 {
					return nil, false
				}
				d.i += 4
				if utf16.IsSurrogate(r) {
					low := rune(-1)
					if d.i+1 < len(d.b) && d.b[d.i] == '\\' && d.b[d.i+1] == 'u' {
						low = hex4(d.b[d.i+2:])
					}
					if r = utf16.DecodeRune(r, low); r != utf8.RuneError {
						d.i += 6
					}
				}
				out = utf8.AppendRune(out, r)
			default:
				return nil, false
			}
		case c < ' ':
			return nil, false
		case c < utf8.RuneSelf:
			out = append(out, c)
			d.i++
		default:
			r, size := utf8.DecodeRune(d.b[d.i:])
			out = utf8.AppendRune(out, r)
			d.i += size
		}
	}
	return nil, false
}

// hex4 returns the number that the four hexadecimal digits b begins with
// make, or -1 when it does not begin with four.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// null skips white space and then null, if it comes next, reporting
// whether it did.
func (d *entryDecoder) null() bool {
	d.space()
	return d.word("null")
}

// word skips w if it comes next, reporting whether it did.
func (d *entryDecoder) word(w string) bool {
	if len(d.b)-d.i >= len(w) && string(d.b[d.i:d.i+len(w)]) == w {
		d.i += len(w)
		return true
	}
	return false
}
