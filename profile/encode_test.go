package profile

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// filler gives values of any type random contents by reflection, field by
// field, so that a field added to a type gets random values too.
type filler struct {
	rng *rand.Rand
	// cacheNames, when set, are the keys of counters by cache, as in a
	// profile (else they are random strings, like every other key).
	cacheNames []string
}

// fillerStrings are the pieces of the strings filler makes: what JSON
// escapes, in every way, and what it does not.
var fillerStrings = []string{
	"main", "L1D", "heap@PyDict_SetDefault", "<unknown>", "a&b", "<>", `"quoted"`, `back\slash`, "/",
	"\x00", "\x01\x1f", "\b\f\n\r\t", "\x7f", "\xff", "\xe2\x80", "\xed\xa0\x80", "Zürich", "日本",
	"\u2028", "\u2029", "\u2027\u202a", "\U0001F600", "\ufffd",
}

// fillerFloats are the floats filler picks from besides random ones: the
// bounds of encoding/json's formats and a few others.
var fillerFloats = []float64{
	0, math.Copysign(0, -1), 0.5, 1, -1, 1.0 / 3, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 9.999999999999999e20,
	123456789.125, 1e-300, 5e-324, math.MaxFloat64, -2.5e30, 100,
}

// fill gives v random contents; v is left zero one time in eight (nil,
// empty, omitted), and so is each thing inside it.
func (f *filler) fill(v reflect.Value) {
	if f.rng.IntN(8) == 0 {
		return
	}
	switch v.Kind() {
	case reflect.String:
		var s strings.Builder
		for range 1 + f.rng.IntN(3) {
			s.WriteString(fillerStrings[f.rng.IntN(len(fillerStrings))])
		}
		v.SetString(s.String())
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int32, reflect.Int64:
		x := f.rng.Int64() >> f.rng.IntN(64)
		if f.rng.IntN(2) == 0 {
			x = -x - 1
		}
		v.SetInt(x >> (64 - v.Type().Bits())) // (within the type)
	case reflect.Uint64:
		v.SetUint(f.rng.Uint64() >> f.rng.IntN(64))
	case reflect.Float64:
		if f.rng.IntN(2) == 0 {
			v.SetFloat(fillerFloats[f.rng.IntN(len(fillerFloats))])
		} else {
			v.SetFloat(math.Ldexp(f.rng.NormFloat64(), f.rng.IntN(160)-80))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f.fill(v.Field(i))
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		f.fill(v.Elem())
	case reflect.Slice:
		n := f.rng.IntN(4)
		v.Set(reflect.MakeSlice(v.Type(), n, n))
		for i := range n {
			f.fill(v.Index(i))
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		for range f.rng.IntN(4) {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			f.fill(k)
			if f.cacheNames != nil && v.Type() == reflect.TypeFor[map[string]*Stats]() {
				k.SetString(f.cacheNames[f.rng.IntN(len(f.cacheNames))])
			}
			f.fill(e)
			v.SetMapIndex(k, e)
		}
	default:
		panic("filler: no random values of kind " + v.Kind().String() + " (" + v.Type().String() + ")")
	}
}

// randomEntries returns n entries of type T with random contents.
func randomEntries[T any](f *filler, n int) []T {
	es := make([]T, n)
	for i := range es {
		f.fill(reflect.ValueOf(&es[i]).Elem())
	}
	return es
}

// leafPaths adds the path of every field of type t that holds a value
// (not a struct, pointer, slice or map) to paths: field names, with []
// for the elements of a slice and {} for the keys and values of a map.
func leafPaths(t reflect.Type, path string, paths map[string]bool) {
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			leafPaths(t.Field(i).Type, path+"."+t.Field(i).Name, paths)
		}
	case reflect.Pointer:
		leafPaths(t.Elem(), path, paths)
	case reflect.Slice:
		leafPaths(t.Elem(), path+"[]", paths)
	case reflect.Map:
		leafPaths(t.Key(), path+"{key}", paths)
		leafPaths(t.Elem(), path+"{}", paths)
	default:
		paths[path] = true
	}
}

// nonzeroPaths adds the path of every value in v that is not zero to
// paths, named as leafPaths names them.
func nonzeroPaths(v reflect.Value, path string, paths map[string]bool) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			nonzeroPaths(v.Field(i), path+"."+v.Type().Field(i).Name, paths)
		}
	case reflect.Pointer:
		if !v.IsNil() {
			nonzeroPaths(v.Elem(), path, paths)
		}
	case reflect.Slice:
		for i := range v.Len() {
			nonzeroPaths(v.Index(i), path+"[]", paths)
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			nonzeroPaths(it.Key(), path+"{key}", paths)
			nonzeroPaths(it.Value(), path+"{}", paths)
		}
	default:
		if !v.IsZero() {
			paths[path] = true
		}
	}
}

// testEncoder checks that appendEntry writes each entry of es as
// json.Marshal does, with its focus copy, and without it as json.Marshal
// does the entry without its top-level counters (as encoding/json decodes
// both).
func testEncoder[T any](t *testing.T, es []T, appendEntry entryAppender[T]) {
	t.Helper()
	for i := range es {
		want, wantErr := json.Marshal(&es[i])
		got, err := appendEntry([]byte("prefix"), &es[i], true)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%T %d: error %v, json.Marshal's %v", es[i], i, err, wantErr)
		}
		if err != nil {
			continue
		}
		if !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Fatalf("%T %d: encoded\n%s\njson.Marshal\n%s", es[i], i, got, want)
		}
		got, err = appendEntry(nil, &es[i], false)
		if err != nil {
			t.Fatalf("%T %d: without the focus copy: %v", es[i], i, err)
		}
		var fromGot, fromWant T
		if err := json.Unmarshal(got, &fromGot); err != nil {
			t.Fatalf("%T %d: without the focus copy: %v in\n%s", es[i], i, err, got)
		}
		bare := es[i]
		if e, ok := any(&bare).(levelled); ok {
			top, _ := e.parts()
			*top = Stats{}
		}
		if f, ok := any(&bare).(*Function); ok && f.Inclusive != nil {
			in := *f.Inclusive
			in.Stats = Stats{}
			f.Inclusive = &in
		}
		b, err := json.Marshal(&bare)
		if err == nil {
			err = json.Unmarshal(b, &fromWant)
		}
		if err != nil {
			t.Fatalf("%T %d: %v", es[i], i, err)
		}
		if !reflect.DeepEqual(fromGot, fromWant) {
			t.Fatalf("%T %d: without the focus copy, encoded\n%s\njson.Marshal, top-level counters zero\n%s", es[i], i, got, b)
		}
	}
}

// testFilled checks that es set every field of T that holds a value
// somewhere, so that testEncoder tried them all.
func testFilled[T any](t *testing.T, es []T) {
	t.Helper()
	all, set := map[string]bool{}, map[string]bool{}
	leafPaths(reflect.TypeFor[T](), "", all)
	nonzeroPaths(reflect.ValueOf(es), "", set)
	for path := range all {
		if !set["[]"+path] {
			t.Errorf("%T: no random entry set %s", es[0], path)
		}
	}
}

// The entry encoders write every entry, random contents in every field,
// as json.Marshal does; for the compressed form, the entry without its
// top-level counters.
func TestEncodersAsMarshal(t *testing.T) {
	s := randomEntrySets(t, 7)
	testEncoder(t, s.fns, appendFunction)
	testEncoder(t, s.objs, appendObject)
	testEncoder(t, s.pairs, appendPair)
	testEncoder(t, s.lines, appendLine)
	testEncoder(t, s.refs, appendReference)
}

// entrySets are random entries of each kind.
type entrySets struct {
	fns   []Function
	objs  []Object
	pairs []Pair
	lines []Line
	refs  []Reference
}

// randomEntrySets returns 300 random entries of each kind (filler, seeded
// with seed), and checks that every field of each kind is set in some of
// them (testFilled).
func randomEntrySets(t *testing.T, seed uint64) entrySets {
	f := &filler{rng: rand.New(rand.NewPCG(seed, seed+1))}
	const n = 300
	s := entrySets{randomEntries[Function](f, n), randomEntries[Object](f, n), randomEntries[Pair](f, n),
		randomEntries[Line](f, n), randomEntries[Reference](f, n)}
	testFilled(t, s.fns)
	testFilled(t, s.objs)
	testFilled(t, s.pairs)
	testFilled(t, s.lines)
	testFilled(t, s.refs)
	return s
}

// The entry encoders write the entries encoding/json writes in every
// special way as it does: zero everything, empty and nil lists and maps,
// strings to escape, floats at the bounds of its formats, large numbers.
func TestEncodersEdgeCases(t *testing.T) {
	var strs []string
	for _, s := range fillerStrings {
		strs = append(strs, s, "x"+s+"y")
	}
	strs = append(strs, "", strings.Repeat("ab<", 100), "\xf0\x9f\x98", "a\xc0\x80b")
	for c := range 256 {
		strs = append(strs, string(rune(c)), string([]byte{byte(c)}))
	}
	floats := append(slices.Clone(fillerFloats), 1e-5, 1.5e-7, -1e21, 1e22, 1.7976931348623157e308, 0.1, 2.5e-10)
	var stats []Stats
	for _, x := range floats {
		stats = append(stats, Stats{SpatialUse: x})
	}
	for _, s := range strs {
		stats = append(stats, Stats{EvictedBy: map[string]uint64{s: 1, "b" + s: 0}, Evictors: []RefEvictor{{Reference: s, Object: s}},
			InvalidatedBy: []Sharing{{Object: s, Processor: -1}}, Invalidated: []Sharing{}})
	}
	stats = append(stats, Stats{Accesses: math.MaxUint64, Hits: 1 << 63, Causes: Causes{Unknown: math.MaxUint64}, EvictedBy: map[string]uint64{},
		Evictors: []RefEvictor{}, Invalidated: []Sharing{{}}})
	for _, levels := range []map[string]*Stats{nil, {}, {"L1": nil}, {"L2": {}, "L1": nil, "": {Misses: 1}}} {
		fns := []Function{{Levels: levels}, {Levels: levels, Inclusive: &Inclusive{Levels: levels}}, {Region: true, Line: -1, SyncCycles: 1}}
		testEncoder(t, fns, appendFunction)
		testEncoder(t, []Object{{Levels: levels, CallPath: []string{}, SharingWrites: []SharingWrite{}}, {CallPath: []string{""}, SharingWrites: []SharingWrite{{Processor: -1, OwnBlock: true}}}}, appendObject)
		testEncoder(t, []Pair{{Levels: levels}, {Strides: &Strides{}}, {Strides: &Strides{Top: []Stride{}}}, {Strides: &Strides{Top: []Stride{{Bytes: math.MinInt64}, {Bytes: math.MaxInt64}}}}}, appendPair)
		testEncoder(t, []Line{{Levels: levels}, {Line: math.MinInt}}, appendLine)
		testEncoder(t, []Reference{{Levels: levels}, {PC: math.MaxUint64, Column: 3, Position: -2}}, appendReference)
	}
	for i, s := range stats {
		st := s
		for _, r := range []Reference{{Stats: st}, {Levels: map[string]*Stats{"L1": &st}}} {
			testEncoder(t, []Reference{r}, appendReference)
		}
		testEncoder(t, []Line{{File: strs[i%len(strs)], Function: strs[(i+1)%len(strs)]}}, appendLine)
	}
}

// appendString and appendFloat write what encoding/json writes for every
// string and float, and refuse what it refuses.
func TestAppendStringAndFloat(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	check := func(v any, got []byte, err error) {
		t.Helper()
		want, wantErr := json.Marshal(v)
		if (err != nil) != (wantErr != nil) || err == nil && !bytes.Equal(got, want) {
			t.Errorf("%#v: encoded %s (error %v), json.Marshal %s (error %v)", v, got, err, want, wantErr)
		}
	}
	for range 20000 {
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = byte(rng.IntN(256))
			if rng.IntN(2) == 0 {
				const special = "a<\"\\\x00\xe2\x80\xa8\xa9"
				b[i] = special[rng.IntN(len(special))]
			}
		}
		check(string(b), appendString(nil, string(b)), nil)
		x := math.Float64frombits(rng.Uint64())
		got, err := appendFloat(nil, x)
		check(x, got, err)
	}
	for _, x := range append(slices.Clone(fillerFloats), math.NaN(), math.Inf(1), math.Inf(-1)) {
		got, err := appendFloat(nil, x)
		check(x, got, err)
	}
	_, err := appendReference(nil, &Reference{Levels: map[string]*Stats{"L2": {SpatialUse: math.NaN()}}}, false)
	if want := `levels["L2"]: spatial_use: NaN is not a number JSON can hold`; err == nil || err.Error() != want {
		t.Errorf("NaN: error %v, want %s", err, want)
	}
}
