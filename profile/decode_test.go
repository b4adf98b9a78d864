package profile

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// checkParse parses the JSON entry b as a T with parse and, if parse
// succeeds, checks that json.Unmarshal decodes the same; it reports
// whether parse succeeded. It checks too that decodeEntry, falling back
// on json.Unmarshal, always decodes what json.Unmarshal decodes.
func checkParse[T any](t *testing.T, d *entryDecoder, b []byte, parse entryParser[T]) bool {
	t.Helper()
	var got, want, decoded T
	parsed := parseEntry(d, b, &got, parse)
	wantErr := json.Unmarshal(b, &want)
	if parsed {
		if wantErr != nil {
			t.Fatalf("%T: parsed what json.Unmarshal refuses (%v):\n%q", got, wantErr, b)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%T: parsed\n%#v\njson.Unmarshal\n%#v\nfrom %q", got, got, want, b)
		}
	}
	err := decodeEntry(d, b, &decoded, parse)
	if (err != nil) != (wantErr != nil) || err == nil && !reflect.DeepEqual(decoded, want) {
		t.Fatalf("%T: decodeEntry gives\n%#v (error %v)\njson.Unmarshal\n%#v (error %v)\nfrom %q", got, decoded, err, want, wantErr, b)
	}
	return parsed
}

// testParser checks that parse decodes each entry of es as json.Unmarshal
// does, and without falling back, in every encoding memspy writes or
// reads: the entry encoders' (with and without the focus copy),
// json.MarshalIndent's (the --json form), and json.Encoder's without HTML
// escapes.
func testParser[T any](t *testing.T, es []T, appendEntry entryAppender[T], parse entryParser[T]) {
	t.Helper()
	var d entryDecoder // (one for all, as in Read)
	fallbacks := 0
	for i := range es {
		var encodings [][]byte
		for _, focusCopy := range []bool{true, false} {
			b, err := appendEntry(nil, &es[i], focusCopy)
			if err != nil {
				t.Fatalf("%T %d: %v", es[i], i, err)
			}
			encodings = append(encodings, b)
		}
		indented, err := json.MarshalIndent(&es[i], "    ", "  ")
		if err != nil {
			t.Fatal(err)
		}
		oddlyIndented, _ := json.MarshalIndent(&es[i], "\r", "\t \n")
		var raw bytes.Buffer
		enc := json.NewEncoder(&raw)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(&es[i]); err != nil {
			t.Fatal(err)
		}
		for _, b := range append(encodings, indented, oddlyIndented, raw.Bytes()) {
			if !checkParse(t, &d, b, parse) {
				if fallbacks == 0 {
					t.Errorf("%T %d: not parsed:\n%s", es[i], i, b)
				}
				fallbacks++
			}
		}
	}
	if fallbacks > 0 {
		t.Errorf("%T: %d entries fell back on json.Unmarshal", es[0], fallbacks)
	}
}

// The entry parsers decode every entry, random contents in every field
// (filler: hard strings and floats, nil and empty lists and maps), as
// json.Unmarshal does, in every form memspy writes, without falling back.
func TestParsersAsUnmarshal(t *testing.T) {
	s := randomEntrySets(t, 11) // (every field tried)
	testParser(t, s.fns, appendFunction, (*entryDecoder).function)
	testParser(t, s.objs, appendObject, (*entryDecoder).object)
	testParser(t, s.pairs, appendPair, (*entryDecoder).pair)
	testParser(t, s.lines, appendLine, (*entryDecoder).line)
	testParser(t, s.refs, appendReference, (*entryDecoder).reference)
	testParser(t, randomEntries[CallNode](&filler{rng: rand.New(rand.NewPCG(15, 16))}, 200), appendCallNode, (*entryDecoder).callNode)
}

// parseCases are entries (of a Reference unless they begin with a type's
// name and a space) that the parsers decode as json.Unmarshal does (true)
// or leave to it (false): JSON memspy does not write, and JSON that is
// not valid.
var parseCases = map[string]bool{
	// Keys in any order, white space anywhere, nulls anywhere.
	`{"levels":{"L1":{"misses":1,"accesses":2}},"kind":"read","pc":3}`:                               true,
	" \t\r\n{ \"pc\" : 1 , \"levels\" :\n{ \"L1\" : { \"causes\" : { \"cold\" : 1 } } } }\n ":        true,
	`{"pc":null,"file":null,"line":null,"strides":null,"levels":null,"causes":null,"evictors":null}`: true,
	`{"spatial_use":null,"evicted_by":null,"invalidated":null,"levels":{"L1":null,"L2":{}}}`:         true,
	`{"evicted_by":{"a":null,"b":1},"invalidated_by":[null,{"object":null}],"evictors":[null]}`:      true,
	`{"strides":{"samples":null,"top":[null,{"stride":null,"count":null}]}}`:                         true,
	`{"strides":{"top":null}}`:                                                      true,
	`{"causes":{"cold":null,"unknown":7}}`:                                          true,
	`Function {"inclusive":null,"region":null}`:                                     true,
	`Function {"inclusive":{},"region":false,"levels":{}}`:                          true,
	`Object {"call_path":[null,"a",""],"sharing_writes":[null,{"own_block":null}]}`: true,
	`null`: true,
	`{}`:   true,
	// Empty lists and maps: empty, not nil.
	`{"evictors":[],"invalidated_by":[],"evicted_by":{},"levels":{},"strides":{"top":[]}}`: true,
	`Object {"call_path":[],"sharing_writes":[]}`:                                          true,
	// A map's key repeated: its last value counts.
	`{"levels":{"L1":{"hits":1},"L1":{"misses":2}},"evicted_by":{"x":1,"x":2}}`: true,
	// Numbers: integers in range, floats in every JSON form.
	`{"pc":18446744073709551615,"line":-9223372036854775808,"column":9223372036854775807,"position":-0}`: true,
	`{"pc":0,"spatial_use":1e3}`:                           true,
	`{"spatial_use":-0}`:                                   true,
	`{"spatial_use":-1.5E-3}`:                              true,
	`{"spatial_use":1.0e+2}`:                               true,
	`{"spatial_use":1e400}`:                                false, // (out of range)
	`{"spatial_use":100000000000000000000000000000000000}`: true,
	`{"spatial_use":4.9406564584124654e-324}`:              true,
	`{"spatial_use":2e-400}`:                               true, // (0, no error)
	`{"pc":1e3}`:                                           false,
	`{"pc":-1}`:                                            false,
	`{"pc":-0}`:                                            false,
	`{"pc":1.0}`:                                           false,
	`{"pc":18446744073709551616}`:                          false,
	`{"pc":99999999999999999999}`:                          false,
	`{"line":9223372036854775808}`:                         false,
	`{"line":-9223372036854775809}`:                        false,
	`{"line":1E3}`:                                         false,
	`{"pc":"1"}`:                                           false,
	`{"pc":true}`:                                          false,
	`{"pc":01}`:                                            false,
	`{"spatial_use":01}`:                                   false,
	`{"spatial_use":.5}`:                                   false,
	`{"spatial_use":1.}`:                                   false,
	`{"spatial_use":1e}`:                                   false,
	`{"spatial_use":+1}`:                                   false,
	`{"spatial_use":-}`:                                    false,
	`{"spatial_use":NaN}`:                                  false,
	`Function {"region":1}`:                                false,
	`Function {"region":"true"}`:                           false,
	`Function {"region":truex}`:                            false,
	// Strings: every escape, surrogate pairs and halves of them, invalid
	// UTF-8.
	`{"file":"caf\u00e9 \ud83d\ude00 \/ \" \\ \b\f\n\r\t \u0000 \u001F \uABCD \uabcd"}`:         true,
	`{"file":"\ud83d","function":"\ude00","object":"\ud83d\u0041","kind":"\ude00\ud83d\ude00"}`: true,
	`{"file":"\ud83d\ud83d\ude00","function":"\ud83d\"","object":"\ud83d\\u0041"}`:              true,
	`{"file":"\ufffd\uFFFD"}`: true,
	"{\"file\":\"\xff\xe2\x80\xed\xa0\x80 \xf0\x9f\x98\x80 \u2028 \x7f\"}": true,
	"{\"file\":\"\xe2\x80\",\"function\":\"\\n\xe2\"}":                     true,
	`{"file":"\'"}`:         false,
	`{"file":"\x41"}`:       false,
	`{"file":"\u12"}`:       false,
	`{"file":"\u12G4"}`:     false,
	`{"file":"\ud83d\u12"}`: false,
	"{\"file\":\"a\tb\"}":   false, // (a control byte)
	"{\"file\":\"a\x00\"}":  false,
	`{"file":"abc}`:         false,
	`{"file":"abc\"}`:       false,
	// Keys.
	`{"levels":{"a\"b\u00e9":{}},"evicted_by":{"\ud800":1}}`:                 true,
	"{\"levels\":{\"\xff\xe2\x80\":{}},\"evicted_by\":{\"\xed\xa0\x80\":1}}": true,
	`{"p\u0063":1}`:                     true, // (the key unquoted is pc)
	`{"pc":1,"p\u0063":1}`:              false,
	`{"PC":1}`:                          false,
	`{"Pc":1,"pc":2}`:                   false,
	`{"levels":{"L1":{"Misses":1}}}`:    false,
	`{"pc":1,"pc":2}`:                   false,
	`{"hits":1,"hits":1}`:               false,
	`{"causes":{"cold":1,"cold":1}}`:    false,
	`{"levels":{},"levels":{}}`:         false,
	`{"strides":{},"strides":{}}`:       false,
	`{"unknown_field":1}`:               false,
	`{"strides":{"samples":1,"x":1}}`:   false,
	`{"evictors":[{"count":1,"y":2}]}`:  false,
	`{"pc":1,"levels":{"L1":{"x":1}}}`:  false,
	`{"name":"x"}`:                      false,
	`Line {"pc":1}`:                     false,
	`Pair {"pc":1}`:                     false,
	`Object {"call_path":[1]}`:          false,
	`Function {"inclusive":{"name":1}}`: false,
	`{"\u00e9":1}`:                      false,
	// Values of the wrong type, JSON that is not valid.
	`{"levels":[]}`:              false,
	`{"levels":{"L1":[]}}`:       false,
	`{"causes":[]}`:              false,
	`{"causes":0}`:               false,
	`{"evictors":{}}`:            false,
	`{"strides":[]}`:             false,
	`[]`:                         false,
	`1`:                          false,
	`"x"`:                        false,
	``:                           false,
	` `:                          false,
	`nul`:                        false,
	`{`:                          false,
	`{"pc":1,}`:                  false,
	`{"pc":1}}`:                  false,
	`{"pc":1} {}`:                false,
	`{"pc":1}x`:                  false,
	`{"pc" 1}`:                   false,
	`{"pc":1 "line":2}`:          false,
	`{,"pc":1}`:                  false,
	`{"evictors":[{},]}`:         false,
	`{"evictors":[,]}`:           false,
	`{"evicted_by":{"a":1,}}`:    false,
	`{pc:1}`:                     false,
	"{\"pc\":1}\x00":             false,
	"{\"pc\":1\v}":               false,
	"\ufeff{\"pc\":1}":           false,
	`{"pc":1}` + "\u00a0":        false,
	`{"file":null1}`:             false,
	`{"evicted_by":{"a":null1}}`: false,
}

// parseCase returns the kind of entry of a parse case and its JSON.
func parseCase(in string) (kind, entry string) {
	kind, entry, _ = strings.Cut(in, " ")
	switch kind {
	case "Function", "Object", "Pair", "Line":
		return kind, entry
	}
	return "Reference", in
}

// The parsers decode what json.Unmarshal decodes, and leave to it what
// they do not decode as it does.
func TestParseCases(t *testing.T) {
	var d entryDecoder
	for in, want := range parseCases {
		var parsed bool
		switch kind, entry := parseCase(in); kind {
		case "Function":
			parsed = checkParse(t, &d, []byte(entry), (*entryDecoder).function)
		case "Object":
			parsed = checkParse(t, &d, []byte(entry), (*entryDecoder).object)
		case "Pair":
			parsed = checkParse(t, &d, []byte(entry), (*entryDecoder).pair)
		case "Line":
			parsed = checkParse(t, &d, []byte(entry), (*entryDecoder).line)
		default:
			parsed = checkParse(t, &d, []byte(entry), (*entryDecoder).reference)
		}
		if parsed != want {
			t.Errorf("%s: parsed %v, want %v", in, parsed, want)
		}
	}
}

// FuzzDecodeEntry: whatever the input, an entry parser either fails or
// decodes what json.Unmarshal decodes; each input is tried as every kind
// of entry.
func FuzzDecodeEntry(f *testing.F) {
	for in := range parseCases {
		_, entry := parseCase(in)
		f.Add([]byte(entry))
	}
	fill := &filler{rng: rand.New(rand.NewPCG(13, 14))}
	addEncoded(f, fill, appendFunction)
	addEncoded(f, fill, appendObject)
	addEncoded(f, fill, appendPair)
	addEncoded(f, fill, appendLine)
	addEncoded(f, fill, appendReference)
	addEncoded(f, fill, appendCallNode)
	f.Fuzz(func(t *testing.T, data []byte) {
		var d entryDecoder
		checkParse(t, &d, data, (*entryDecoder).function)
		checkParse(t, &d, data, (*entryDecoder).object)
		checkParse(t, &d, data, (*entryDecoder).pair)
		checkParse(t, &d, data, (*entryDecoder).line)
		checkParse(t, &d, data, (*entryDecoder).reference)
		checkParse(t, &d, data, (*entryDecoder).callNode)
	})
}

// addEncoded adds to f's corpus three random entries of type T, encoded
// by app with and without their focus copy.
func addEncoded[T any](f *testing.F, fill *filler, app func([]byte, *T, bool) ([]byte, error)) {
	for _, focusCopy := range []bool{true, false} {
		for _, e := range randomEntries[T](fill, 3) {
			b, _ := app(nil, &e, focusCopy)
			f.Add(b)
		}
	}
}
