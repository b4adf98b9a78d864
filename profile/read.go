package profile

import (
	"bytes"
	"encoding/json"
	"runtime"
	"sync"
)

// listDecoders decode, by key, the profile's lists of entries, apart
// from the other fields, from their elements' texts.
var listDecoders = map[string]func(p *Profile, items [][]byte) error{
	"functions": func(p *Profile, items [][]byte) error {
		return decodeEntries(items, &p.Functions, (*entryDecoder).function)
	},
	"objects": func(p *Profile, items [][]byte) error {
		return decodeEntries(items, &p.Objects, (*entryDecoder).object)
	},
	"pairs": func(p *Profile, items [][]byte) error {
		return decodeEntries(items, &p.Pairs, (*entryDecoder).pair)
	},
	"lines": func(p *Profile, items [][]byte) error {
		return decodeEntries(items, &p.Lines, (*entryDecoder).line)
	},
	"references": func(p *Profile, items [][]byte) error {
		return decodeEntries(items, &p.References, (*entryDecoder).reference)
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
	var lists []topField
	for _, f := range fields {
		var key string
		if json.Unmarshal(f.key, &key) != nil {
			return nil, false
		}
		if _, ok := listDecoders[key]; ok || key == "call_tree" {
			if string(f.value) != "null" { // (the list stays nil)
				f.key = []byte(key)
				lists = append(lists, f)
			}
			continue
		}
		for name := range listDecoders {
			if bytes.EqualFold([]byte(key), []byte(name)) || bytes.EqualFold([]byte(key), []byte("call_tree")) {
				return nil, false // (encoding/json matches keys regardless of case: let it)
			}
		}
		if head.Len() > 1 {
			head.WriteByte(',')
		}
		head.Write(f.key)
		head.WriteByte(':')
		head.Write(f.value)
	}
	head.WriteByte('}')
	// The other fields (a call tree among them) are decoded while the
	// lists are.
	type plain Profile // the lists stay as decoded
	var p, entries Profile
	var headErr error
	var wg sync.WaitGroup
	wg.Go(func() { headErr = json.Unmarshal(head.Bytes(), (*plain)(&p)) })
	for _, f := range lists {
		if string(f.key) == "call_tree" {
			if entries.CallTree, ok = decodeCallTree(f.value); !ok {
				wg.Wait()
				return nil, false
			}
			continue
		}
		if !f.list || listDecoders[string(f.key)](&entries, f.items) != nil {
			wg.Wait()
			return nil, false
		}
	}
	wg.Wait()
	if headErr != nil {
		return nil, false
	}
	p.Functions, p.Objects, p.Pairs, p.Lines, p.References = entries.Functions, entries.Objects, entries.Pairs, entries.Lines, entries.References
	p.CallTree = entries.CallTree
	return &p, true
}

// decodeCallTree decodes the JSON object data as a CallTree, its nodes as
// a list of entries; ok is false when it holds anything else.
func decodeCallTree(data []byte) (t *CallTree, ok bool) {
	fields, ok := objectFields(data)
	if !ok {
		return nil, false
	}
	t = &CallTree{}
	for _, f := range fields {
		switch string(f.key) {
		case `"nodes"`:
			if string(f.value) == "null" {
				t.Nodes = nil
			} else if !f.list || decodeEntries(f.items, &t.Nodes, (*entryDecoder).callNode) != nil {
				return nil, false
			}
		case `"elided"`:
			if json.Unmarshal(f.value, &t.Elided) != nil {
				return nil, false
			}
		default:
			return nil, false // (encoding/json says what it is)
		}
	}
	return t, true
}

// decodeEntries decodes the elements of a JSON list, their texts items,
// into *es, a part at a time on every CPU, each with parse unless it fails
// (decodeEntry).
func decodeEntries[T any](items [][]byte, es *[]T, parse entryParser[T]) error {
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

// value skips the value at the scanner's place, nested depth deep (0 at
// the top), and returns its text; ok is false when there is none, or it
// is not valid JSON.
func (s *scanner) value(depth int) (v []byte, ok bool) {
	s.space()
	start := s.i
	if !s.valid(depth) {
		return nil, false
	}
	return s.b[start:s.i], true
}

// list skips the list at the scanner's place (its '['), nested depth deep,
// and returns its elements' texts; ok is false when it is not valid JSON.
func (s *scanner) list(depth int) (items [][]byte, ok bool) {
	if !s.container(depth, &items) {
		return nil, false
	}
	return items, true
}

// maxNesting is how deep encoding/json lets arrays and objects nest.
const maxNesting = 10000

// valid skips the value at the scanner's place (no white space before
// it), nested depth deep, and reports whether it is valid JSON.
func (s *scanner) valid(depth int) bool {
	if s.i >= len(s.b) {
		return false
	}
	switch s.b[s.i] {
	case '"':
		return s.str()
	case '{', '[':
		return s.container(depth, nil)
	case 't':
		return s.word("true")
	case 'f':
		return s.word("false")
	case 'n':
		return s.word("null")
	}
	return s.number()
}

// container skips the object or list at the scanner's place, nested
// depth deep, and reports whether it is valid JSON; a list's elements'
// texts are added to items, when not nil.
func (s *scanner) container(depth int, items *[][]byte) bool {
	if depth >= maxNesting {
		return false
	}
	c, end := s.b[s.i], byte('}')
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
		start := s.i
		if !s.valid(depth + 1) {
			return false
		}
		if items != nil {
			*items = append(*items, s.b[start:s.i])
		}
		if !s.next(',') {
			return s.next(end)
		}
	}
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

// topField is a key of the top-level object of a profile and its value,
// as their texts, with the value's elements when it is a list.
type topField struct {
	key, value []byte
	items      [][]byte
	list       bool
}

// objectFields returns the fields of the object that data holds (with
// nothing after it but white space); ok is false when data holds no such
// object. Each byte is scanned once: a list's elements are found as it is
// checked.
func objectFields(data []byte) (fields []topField, ok bool) {
	s := &scanner{b: data}
	if !s.next('{') {
		return nil, false
	}
	if !s.next('}') {
		for {
			var f topField
			if f.key, ok = s.value(1); !ok || !s.next(':') {
				return nil, false
			}
			s.space()
			start := s.i
			if s.i < len(s.b) && s.b[s.i] == '[' {
				f.items, ok = s.list(1)
				f.list = true
			} else {
				_, ok = s.value(1)
			}
			if !ok {
				return nil, false
			}
			f.value = s.b[start:s.i]
			fields = append(fields, f)
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
