package profile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
)

// lists are the keys of the profile's lists of entries, decoded apart.
var lists = map[string]func(p *Profile, raw []byte) error{
	"functions": func(p *Profile, raw []byte) error {
		return decodeEntries(raw, &p.Functions, (*entryDecoder).function)
	},
	"objects": func(p *Profile, raw []byte) error {
		return decodeEntries(raw, &p.Objects, (*entryDecoder).object)
	},
	"pairs": func(p *Profile, raw []byte) error {
		return decodeEntries(raw, &p.Pairs, (*entryDecoder).pair)
	},
	"lines": func(p *Profile, raw []byte) error {
		return decodeEntries(raw, &p.Lines, (*entryDecoder).line)
	},
	"references": func(p *Profile, raw []byte) error {
		return decodeEntries(raw, &p.References, (*entryDecoder).reference)
	},
}

// decodeFields decodes the JSON profile data as encoding/json would, but
// its lists of where-and-why entries (most of a large profile) apart, on
// every CPU, a few entries at a time, and the other fields together. ok
// is false when data is not a profile this way reads (not valid JSON, not
// an object, a field whose value does not decode, anything after it):
// the caller then reads it again and says what is wrong. The text is
// checked as it is split (scanner): the entries' by the scanner, the
// other fields' by encoding/json.
func decodeFields(data []byte) (*Profile, bool) {
	fields, ok := objectFields(data)
	if !ok {
		return nil, false
	}
	var head bytes.Buffer
	head.WriteByte('{')
	p := &Profile{}
	for _, f := range fields {
		var key string
		if json.Unmarshal(f[0], &key) != nil {
			return nil, false
		}
		if decode, ok := lists[key]; ok {
			if decode(p, f[1]) != nil {
				return nil, false
			}
			continue
		}
		for name := range lists {
			if bytes.EqualFold([]byte(key), []byte(name)) {
				return nil, false // (encoding/json matches keys regardless of case: let it)
			}
		}
		if head.Len() > 1 {
			head.WriteByte(',')
		}
		head.Write(f[0])
		head.WriteByte(':')
		head.Write(f[1])
	}
	head.WriteByte('}')
	type plain Profile // the lists stay as decoded
	if json.Unmarshal(head.Bytes(), (*plain)(p)) != nil {
		return nil, false
	}
	return p, true
}

// decodeEntries decodes the JSON list raw into *es, its entries decoded a
// part at a time on every CPU, each with parse unless it fails
// (decodeEntry; null leaves *es nil).
func decodeEntries[T any](raw []byte, es *[]T, parse entryParser[T]) error {
	if string(raw) == "null" {
		*es = nil
		return nil
	}
	items, ok := listItems(raw)
	if !ok {
		return fmt.Errorf("not a list")
	}
	out := make([]T, len(items))
	errs := make([]error, (len(items)+entriesPerPart-1)/entriesPerPart)
	var wg sync.WaitGroup
	work := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			var d entryDecoder
			for part := range work {
				for i := part * entriesPerPart; i < min(len(items), (part+1)*entriesPerPart); i++ {
					if err := decodeEntry(&d, items[i], &out[i], parse); err != nil {
						errs[part] = err
						break
					}
				}
			}
		})
	}
	for part := range errs {
		work <- part
	}
	close(work)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	*es = out
	return nil
}

// scanner walks JSON text, checking it as encoding/json does: the text
// of a value it returns is valid JSON.
type scanner struct {
	b []byte
	i int
}

// space skips white space.
func (s *scanner) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

// value skips the value at the scanner's place and returns its text; ok
// is false when there is none, or it is not valid JSON.
func (s *scanner) value() (v []byte, ok bool) {
	s.space()
	start := s.i
	if !s.valid(0) {
		return nil, false
	}
	return s.b[start:s.i], true
}

// maxNesting is how deep encoding/json lets arrays and objects nest.
const maxNesting = 10000

// valid skips the value at the scanner's place (no white space before
// it), nested depth deep, and reports whether it is valid JSON.
func (s *scanner) valid(depth int) bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; c {
	case '"':
		return s.str()
	case '{', '[':
		if depth >= maxNesting {
			return false
		}
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		s.i++
		if s.next(end) {
			return true
		}
		for {
			s.space()
			if c == '{' && (s.i >= len(s.b) || s.b[s.i] != '"' || !s.str() || !s.next(':')) {
				return false
			}
			s.space()
			if !s.valid(depth + 1) {
				return false
			}
			if !s.next(',') {
				return s.next(end)
			}
		}
	case 't':
		return s.word("true")
	case 'f':
		return s.word("false")
	case 'n':
		return s.word("null")
	}
	return s.number()
}

// str skips the string at the scanner's place and reports whether it is
// valid: closed, with no control character and only JSON's escapes.
func (s *scanner) str() bool {
	for s.i++; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			s.i++
			if s.i >= len(s.b) {
				return false
			}
			switch s.b[s.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				for range 4 {
					if s.i++; s.i >= len(s.b) || !isHex(s.b[s.i]) {
						return false
					}
				}
			default:
				return false
			}
		}
	}
	return false
}

// isHex reports whether c is a hexadecimal digit.
func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// word skips w, which must come next.
func (s *scanner) word(w string) bool {
	if !bytes.HasPrefix(s.b[s.i:], []byte(w)) {
		return false
	}
	s.i += len(w)
	return true
}

// number skips a JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() bool {
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case !s.digits():
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if !s.digits() {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

// digits skips one or more decimal digits, reporting whether there was one.
func (s *scanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

// next skips white space and reports whether c comes next, skipping it.
func (s *scanner) next(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// objectFields returns the keys and values of the object that data holds
// (with nothing after it but white space), as their texts; ok is false
// when data holds no such object.
func objectFields(data []byte) (fields [][2][]byte, ok bool) {
	s := &scanner{b: data}
	if !s.next('{') {
		return nil, false
	}
	if !s.next('}') {
		for {
			k, ok := s.value()
			if !ok || !s.next(':') {
				return nil, false
			}
			v, ok := s.value()
			if !ok {
				return nil, false
			}
			fields = append(fields, [2][]byte{k, v})
			if s.next(',') {
				continue
			}
			if !s.next('}') {
				return nil, false
			}
			break
		}
	}
	s.space()
	return fields, s.i == len(data)
}

// listItems returns the elements of the list that raw holds, as their
// texts; ok is false when raw holds no list.
func listItems(raw []byte) (items [][]byte, ok bool) {
	s := &scanner{b: raw}
	if !s.next('[') {
		return nil, false
	}
	if s.next(']') {
		return nil, true
	}
	for {
		v, ok := s.value()
		if !ok {
			return nil, false
		}
		items = append(items, v)
		if s.next(',') {
			continue
		}
		return items, s.next(']')
	}
}
