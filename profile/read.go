package profile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
)

// decodeParallel decodes the JSON profile data as encoding/json would,
// but its where-and-why entries (most of a large profile) on every CPU, a
// few at a time, while another goroutine checks that data is valid JSON.
// ok is false when data is not a profile this way reads (not valid JSON,
// not an object, a field whose value does not decode, anything after
// it): decode then reads it again and says what is wrong.
func decodeParallel(data []byte) (p *Profile, ok bool) {
	valid := make(chan bool, 1)
	go func() { valid <- json.Valid(data) }()
	p, ok = decodeFields(data)
	return p, <-valid && ok
}

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

// decodeFields decodes the top-level object data (valid JSON, or ok is
// false in the end): the lists of entries apart, the other fields
// together.
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

// scanner walks JSON text, not checking it: the structure it finds is
// right when the text is valid JSON (decodeParallel checks that apart).
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
// is false when there is none.
func (s *scanner) value() (v []byte, ok bool) {
	s.space()
	start := s.i
	if s.i >= len(s.b) {
		return nil, false
	}
	switch s.b[s.i] {
	case '"':
		s.str()
	case '[', '{':
		for depth := 0; s.i < len(s.b); {
			switch s.b[s.i] {
			case '"':
				s.str()
				continue
			case '[', '{':
				depth++
			case ']', '}':
				depth--
			}
			s.i++
			if depth == 0 {
				break
			}
		}
	default: // a number, true, false or null
		for s.i < len(s.b) && !bytes.ContainsRune([]byte(" \t\n\r,:]}"), rune(s.b[s.i])) {
			s.i++
		}
	}
	return s.b[start:s.i], s.i > start
}

// str skips the string at the scanner's place (to the end of the data
// if it does not end).
func (s *scanner) str() {
	for s.i++; s.i < len(s.b); s.i++ {
		switch s.b[s.i] {
		case '\\':
			s.i++
		case '"':
			s.i++
			return
		}
	}
	s.i = len(s.b) // (not beyond, after a backslash at the end)
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
