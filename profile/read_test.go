package profile

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// encode returns sample(10) as JSON, compressed with c.
func encode(t testing.TB, c Compression) []byte {
	var b bytes.Buffer
	if err := sample(10).WriteCompressed(&b, c); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Read refuses what is not exactly one profile (issue 29, items 2 and 7):
// JSON that is no profile, a profile followed by anything, and a cut
// profile, saying where.
func TestReadRejectsNonProfiles(t *testing.T) {
	good := encode(t, Uncompressed)
	corrupt := encode(t, Zstd)
	corrupt[len(corrupt)/2] ^= 0xff
	n := len(good)
	for _, c := range []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "profile: empty input"},
		{"other object", []byte(`{"hello": 1}`), `profile: not a memspy profile (tool "", version 0)`},
		{"empty object", []byte(`{}`), `not a memspy profile`},
		{"null", []byte(`null`), `not a memspy profile`},
		{"other tool", []byte(`{"version": 1, "tool": "cachegrind"}`), `not a memspy profile (tool "cachegrind", version 1)`},
		{"array", []byte(`[1, 2]`), `profile: at byte 1: "" is a JSON array, not a profile.Profile`},
		{"garbage after", append(append([]byte{}, good...), "xyz"...), "profile: more data after the profile, at byte " + itoa(n-1)},
		{"two profiles", append(append([]byte{}, good...), good...), "profile: more data after the profile, at byte " + itoa(n-1)},
		{"truncated", good[:n/2], "profile: truncated profile at byte " + itoa(n/2)},
		{"truncated gzip", encode(t, Gzip)[:100], "profile: truncated profile at byte "},
		{"truncated zstd", encode(t, Zstd)[:100], "profile: truncated profile at byte "},
		{"corrupt zstd", corrupt, "profile: corrupt zstd data after "},
		{"bad JSON", []byte(`{"version": 1,, }`), "profile: invalid JSON at byte 15: invalid character ',' looking for beginning of object key string"},
		{"control bytes", []byte(`{"version": 1, "tool": "\u001b[31m"}`), `(tool "\x1b[31m", version 1)`},
		{"bad entry", []byte(`{"version": 1, "references": [{"pc": 1}, {"pc": "x"}]}`), `profile: at byte 51: "references.pc" is a JSON string, not a uint64`},
		{"list not a list", []byte(`{"version": 1, "pairs": {}}`), `profile: at byte 25: "pairs" is a JSON object, not a []profile.Pair`},
		{"newer version", []byte(`{"version": ` + itoa(Version+1) + `}`), "profile: version " + itoa(Version+1) + " is newer than this memspy understands (" + itoa(Version) + ")"},
		{"focus on no cache", []byte(`{"version": 2, "options": {"where": true}, "focus": "L9", "caches": [{"name": "L1"}]}`),
			`profile: focus: no cache "L9" to focus on (caches: [L1])`},
	} {
		_, err := Read(bytes.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	for _, in := range [][]byte{good, append(good, " \n\t"...), encode(t, Gzip), encode(t, Zstd)} {
		if _, err := Read(bytes.NewReader(in)); err != nil {
			t.Errorf("valid profile: %v", err)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// FuzzRead: whatever the input, Read returns a profile or an error, never
// panics, and a profile it returns writes and reads back.
func FuzzRead(f *testing.F) {
	f.Add(encode(f, Uncompressed))
	f.Add(encode(f, Gzip))
	f.Add(encode(f, Zstd))
	f.Add([]byte(`{"version": 1}`))
	f.Add([]byte(`{"version": 1} {}`))
	f.Add([]byte(`{"version": 2, "options": {"where": true}, "focus": "L1", "caches": [{"name": "L1"}], "pairs": [{"levels": {"L1": null}}]}`))
	f.Add([]byte(`{"version": 2, "options": {"where": true}, "call_tree": {"nodes": [{"function": "f", "caller": -1}, {"function": "g", "caller": 0, "levels": {"L1": {"accesses": 3}}}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Read(bytes.NewReader(data))
		if err != nil {
			if p != nil {
				t.Fatalf("profile and error %v", err)
			}
			return
		}
		if !bytes.HasPrefix(data, gzipMagic) && !bytes.HasPrefix(data, zstdMagic) && !json.Valid(data) {
			t.Fatalf("read a profile from text that is not JSON: %q", data)
		}
		var b bytes.Buffer
		if err := p.Write(&b); err != nil {
			t.Fatalf("writing a profile read: %v", err)
		}
		if _, err := Read(&b); err != nil {
			t.Fatalf("reading back a profile read: %v", err)
		}
	})
}

// Names from a profile reach messages without control bytes (issue 29,
// item 6).
func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"matmul": "matmul", "f.buf": "f.buf", "locals@f": "locals@f", "Zürich": "Zürich",
		"\x1b[31mred": `"\x1b[31mred"`, `a"b`: `"a\"b"`, "tab\there": `"tab\there"`,
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %s, want %s", in, got, want)
		}
	}
	p := sample(1)
	p.Caches[1].Name = "\x1b]0;owned\x07"
	err := p.SetFocus("L3")
	if want := `no cache "L3" to focus on (caches: [L1 "\x1b]0;owned\a"])`; err == nil || err.Error() != want {
		t.Errorf("SetFocus: %v, want %s", err, want)
	}
}

// Read decodes the entries on every CPU into what encoding/json decodes
// alone, from the indented and the compressed (compact) encodings, with
// lists written in any layout (splitList).
func TestReadDecodesAsEncodingJSON(t *testing.T) {
	type plain Profile // decoded by encoding/json alone
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 3, 10, 700} {
		p := sample(10)
		if n > 0 {
			p = randomWhere(rng)
			for len(p.References) < n { // parts of several entries
				r := p.References[rng.IntN(len(p.References))]
				r.PC = uint64(len(p.References)) << 4
				p.References = append(p.References, r)
			}
		}
		var indented, zstd, gzip bytes.Buffer
		if err := p.Write(&indented); err != nil {
			t.Fatal(err)
		}
		if err := p.WriteCompressed(&zstd, Zstd); err != nil {
			t.Fatal(err)
		}
		if err := p.WriteCompressed(&gzip, Gzip); err != nil {
			t.Fatal(err)
		}
		var want plain
		if err := json.Unmarshal(indented.Bytes(), &want); err != nil {
			t.Fatal(err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, indented.Bytes()); err != nil {
			t.Fatal(err)
		}
		for name, in := range map[string][]byte{"indented": indented.Bytes(), "zstd": zstd.Bytes(), "gzip": gzip.Bytes(), "one line": compact.Bytes()} {
			got, err := Read(bytes.NewReader(in))
			if err != nil {
				t.Fatalf("%d entries, %s: %v", n, name, err)
			}
			if !reflect.DeepEqual((*plain)(got), &want) {
				t.Errorf("%d entries, %s: Read differs from encoding/json", n, name)
			}
		}
	}
}

// listItems finds the elements of lists of every kind of JSON value,
// strings holding brackets, commas and escaped quotes included.
func TestListItems(t *testing.T) {
	for in, want := range map[string][]string{
		`[]`:    nil,
		` [ ] `: nil,
		`[1]`:   {`1`},
		`[1, "a,]\"}", {"x": [1, {}]}, [], null , -2.5e3,true]`: {`1`, `"a,]\"}"`, `{"x": [1, {}]}`, `[]`, `null`, `-2.5e3`, `true`},
		"[\n  {\"a\": \"\\\\\"}\n]":                             {"{\"a\": \"\\\\\"}"},
	} {
		got, ok := listItems([]byte(in))
		if !ok || !slices.EqualFunc(got, bytesOf(want), bytes.Equal) {
			t.Errorf("listItems(%s) = %q, %v, want %q", in, got, ok, want)
		}
	}
}

// bytesOf returns the strings as byte slices.
func bytesOf(ss []string) [][]byte {
	var out [][]byte
	for _, s := range ss {
		out = append(out, []byte(s))
	}
	return out
}

// Read decodes entries its parsers leave to encoding/json (keys in
// another case, repeated, unknown; numbers that are no integers) as
// encoding/json does, each apart from the others.
func TestReadFallsBackPerEntry(t *testing.T) {
	in := []byte(`{"version": 2, "tool": "memspy", "references": [
		{"pc": 1, "levels": {"L1": {"misses": 2}}},
		{"PC": 3, "Function": "f", "levels": {"L1": {"Misses": 4}}},
		{"pc": 5, "pc": 6, "unknown": [1, {"x": null}]},
		{"pc": 7, "levels": {"L1": {"spatial_use": 1e3, "evicted_by": {"a": 1, "a": 2}}}},
		null,
		{"pc": 8, "strides": {"samples": 1, "top": [{"stride": -1, "count": 2}]}, "strides": {"samples": 9}}
	]}`)
	type plain Profile
	var want plain
	if err := json.Unmarshal(in, &want); err != nil {
		t.Fatal(err)
	}
	got, err := Read(bytes.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual((*plain)(got), &want) {
		t.Errorf("Read\n%+v\nencoding/json\n%+v", got.References, want.References)
	}
}

// The scanner stops at the end of data that ends in a string's backslash.
func TestScannerStopsAtTheEnd(t *testing.T) {
	for _, in := range []string{`{"a":"\`, `{"a\`, `["\`, `["x\\\`} {
		b := []byte(in)[:len(in):len(in)]
		if _, ok := objectFields(b); ok {
			t.Errorf("objectFields(%s) ok", in)
		}
		if _, ok := listItems(b); ok {
			t.Errorf("listItems(%s) ok", in)
		}
	}
}

// readAll reads everything, whether its size hint is short, exact or
// long, and however the reader hands the data out.
func TestReadAll(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		data := make([]byte, rng.IntN(5000))
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		hint := int64(rng.IntN(2 * (len(data) + 1)))
		var r io.Reader = bytes.NewReader(data)
		if rng.IntN(2) == 0 {
			r = iotest.HalfReader(r)
		}
		got, err := readAll(r, hint)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("readAll of %d bytes with hint %d: %d bytes, %v", len(data), hint, len(got), err)
		}
	}
	if _, err := readAll(iotest.ErrReader(io.ErrClosedPipe), 10); err != io.ErrClosedPipe {
		t.Errorf("readAll of a failing reader: %v", err)
	}
}

// The scanner that splits a profile checks its text as encoding/json
// does: what it takes for a value is valid JSON, and what is valid JSON
// it takes.
func FuzzScanner(f *testing.F) {
	for _, seed := range []string{
		`{"a": [1, -2.5e+3, 0.1, true, false, null, "x\u00e9\n"], "b": {}}`,
		`[]`, `[1,]`, `{"a" 1}`, `01`, `-`, `1.`, `1e`, `.5`, `"\x"`, "\"a\tb\"", "\"\x01\"",
		`"\ud800"`, `tru`, `nul`, `[1 2]`, `{"a":1,}`, `{1:2}`, ` [ ] `, `"\u12"`, "\"\xff\"",
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := &scanner{b: data}
		_, ok := s.value(0)
		s.space()
		if got, want := ok && s.i == len(data), json.Valid(data); got != want {
			t.Fatalf("scanner says %v, encoding/json %v, of %q", got, want, data)
		}
	})
}

// listItems returns the elements of the list that raw holds, as their
// texts (as objectFields finds a list's); ok is false when raw holds no
// list, or anything after it.
func listItems(raw []byte) (items [][]byte, ok bool) {
	s := &scanner{b: raw}
	s.space()
	if s.i >= len(s.b) || s.b[s.i] != '[' {
		return nil, false
	}
	if items, ok = s.list(0); !ok {
		return nil, false
	}
	s.space()
	return items, s.i == len(raw)
}
