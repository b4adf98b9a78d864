package profile_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/profile"
	"github.com/memspy/memspy/sample"
	"github.com/memspy/memspy/sim"
	"github.com/memspy/memspy/trace"
)

// The JSON schema of profiles (docs/profile.schema.json) is generated from
// the model: the exported types of package profile (and machine's), their
// JSON names and their doc comments. TestSchema checks that the file is
// what the model gives (go test ./profile -run TestSchema -update rewrites
// it); TestProfilesFollowSchema that profiles the engine writes follow it.

var update = flag.Bool("update", false, "rewrite docs/profile.schema.json from the model")

const schemaFile = "../docs/profile.schema.json"

func TestSchema(t *testing.T) {
	got := generateSchema(t)
	if *update {
		if err := os.WriteFile(schemaFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatalf("%v (go test ./profile -run TestSchema -update makes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not what the model gives: go test ./profile -run TestSchema -update rewrites it", schemaFile)
	}
}

// schemaGen makes the schema of a type and of the struct types it holds
// ($defs), with the doc comments of their source.
type schemaGen struct {
	docs map[string]string // "Type" and "Type.Field" by package path's last element: "profile.Stats.Misses"
	defs map[string]any
}

// generateSchema returns the indented JSON schema of profile.Profile.
func generateSchema(t *testing.T) []byte {
	g := &schemaGen{docs: map[string]string{}, defs: map[string]any{}}
	for _, dir := range []string{".", "../machine"} {
		g.readDocs(t, dir)
	}
	root := g.ref(reflect.TypeFor[profile.Profile]())
	s := map[string]any{
		"$schema":     "https://json-schema.org/draft/2020-12/schema",
		"$id":         "https://github.com/memspy/memspy/docs/profile.schema.json",
		"title":       fmt.Sprintf("memspy profile, version %d", profile.Version),
		"description": g.docs["profile.Profile"] + " Generated from package profile (go test ./profile -run TestSchema -update); docs/profile.md explains the fields.",
		"$ref":        root["$ref"],
		"$defs":       g.defs,
	}
	out, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}

// readDocs collects the doc comments of the struct types declared in the
// non-test Go files of dir, and of their fields.
func (g *schemaGen) readDocs(t *testing.T, dir string) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		pkg := f.Name.Name
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, sp := range gd.Specs {
				ts := sp.(*ast.TypeSpec)
				doc := ts.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc
				}
				g.docs[pkg+"."+ts.Name.Name] = flatten(doc.Text())
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				// A doc comment over several fields, with no blank line
				// between them, is the one of each that it names.
				var group *ast.CommentGroup
				prevEnd := 0
				for _, fl := range st.Fields.List {
					line := fset.Position(fl.Pos()).Line
					switch {
					case fl.Doc != nil:
						group = fl.Doc
					case line != prevEnd+1:
						group = nil
					}
					prevEnd = fset.Position(fl.End()).Line
					for _, n := range fl.Names {
						text := fl.Comment.Text()
						if group != nil && (fl.Doc != nil || text == "" && strings.Contains(group.Text(), n.Name)) {
							text = group.Text()
						}
						g.docs[pkg+"."+ts.Name.Name+"."+n.Name] = flatten(text)
					}
				}
			}
		}
	}
}

// flatten makes a comment one line.
func flatten(s string) string { return strings.Join(strings.Fields(s), " ") }

// ref returns the schema of type t: a reference to its definition for a
// struct type, which it makes once.
func (g *schemaGen) ref(t reflect.Type) map[string]any {
	switch t.Kind() {
	case reflect.Pointer:
		return g.ref(t.Elem())
	case reflect.Struct:
		name := t.Name()
		if _, ok := g.defs[name]; !ok {
			g.defs[name] = nil // (recursion)
			g.defs[name] = g.object(t)
		}
		return map[string]any{"$ref": "#/$defs/" + name}
	case reflect.Slice, reflect.Array:
		return map[string]any{"type": "array", "items": g.ref(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": g.ref(t.Elem())}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return map[string]any{"type": "integer"}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer", "minimum": 0}
	}
	panic("schema: no JSON form for " + t.String())
}

// object returns the definition of struct type t: its JSON fields (those
// of embedded structs among them), each with its description; the fields
// without omitempty are required, but those of an embedded struct (an
// entry's counters at its focus cache, which the compressed form leaves
// out).
func (g *schemaGen) object(t reflect.Type) map[string]any {
	props, required := map[string]any{}, []string{}
	var walk func(t reflect.Type, embedded bool)
	walk = func(t reflect.Type, embedded bool) {
		pkg := t.PkgPath()[strings.LastIndex(t.PkgPath(), "/")+1:]
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if f.Anonymous && name == "" {
				walk(f.Type, true)
				continue
			}
			if name == "" {
				name = f.Name
			}
			p := g.ref(f.Type)
			if f.Type.Kind() == reflect.Pointer || f.Type.Kind() == reflect.Slice || f.Type.Kind() == reflect.Map {
				p = nullable(p) // (nil without omitempty: null)
			}
			if d := g.docs[pkg+"."+t.Name()+"."+f.Name]; d != "" {
				p = withDescription(p, d)
			}
			props[name] = p
			if !strings.Contains(opts, "omitempty") && !embedded {
				required = append(required, name)
			}
		}
	}
	walk(t, false)
	slices.Sort(required)
	pkg := t.PkgPath()[strings.LastIndex(t.PkgPath(), "/")+1:]
	o := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if d := g.docs[pkg+"."+t.Name()]; d != "" {
		o["description"] = d
	}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

// nullable returns schema s allowing null too.
func nullable(s map[string]any) map[string]any {
	return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
}

// withDescription returns schema s with a description.
func withDescription(s map[string]any, d string) map[string]any {
	out := map[string]any{"description": d}
	for k, v := range s {
		out[k] = v
	}
	return out
}

// TestProfilesFollowSchema checks profiles of the engine, written as
// memspy writes them, against docs/profile.schema.json: with and without
// where-and-why, on several processors, with 3C, NUMA and sampling.
func TestProfilesFollowSchema(t *testing.T) {
	data, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	preset := func(name string) *machine.Machine {
		m, err := machine.Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, c := range []struct {
		name, machine string
		opt           sim.Options
		has           []string // parts the profile must have
	}{
		{"plain", "x86-modern", sim.Options{}, []string{"dumps"}},
		{"where", "x86-modern", sim.Options{Attribute: true}, []string{"functions", "references", "call_tree", "timeline"}},
		{"where-3c", "x86-modern", sim.Options{Attribute: true, Classify: true}, []string{"pairs"}},
		{"miss-only", "x86-modern", sim.Options{Attribute: true, MissOnly: true}, []string{"objects"}},
		{"procs", "x86-multicore", sim.Options{Attribute: true}, []string{"processors"}},
		{"numa", "flashpoint", sim.Options{Attribute: true}, []string{"numa"}},
		{"sampled", "x86-modern", sim.Options{Attribute: true, Sample: sampleSpec(t, "ratio=0.5,length=500")}, []string{"sampling"}},
		{"tree", "x86-modern", sim.Options{Attribute: true}, []string{"processes"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, err := sim.New(preset(c.machine), c.opt)
			if err != nil {
				t.Fatal(err)
			}
			h.Process(schemaEvents())
			h.Finish()
			p := h.Profile()
			if c.name == "tree" {
				summary, err := p.Summary()
				if err != nil {
					t.Fatal(err)
				}
				p.Processes = []profile.Process{{Pid: 10, Command: "sh -c ./a", Exec: "./a", Exit: "exec", Profile: summary},
					{Pid: 10, Parent: 1, Command: "./a", Exit: "exit code 0", Profile: summary}}
			}
			for _, compressed := range []profile.Compression{profile.Uncompressed, profile.Zstd, profile.Gzip} {
				var buf bytes.Buffer
				if err := p.WriteCompressed(&buf, compressed); err != nil {
					t.Fatal(err)
				}
				out, err := decompressed(buf.Bytes())
				if err != nil {
					t.Fatal(err)
				}
				d := json.NewDecoder(bytes.NewReader(out))
				d.UseNumber()
				var v any
				if err := d.Decode(&v); err != nil {
					t.Fatal(err)
				}
				if err := validate(schema, schema, v, "profile"); err != nil {
					t.Fatalf("compressed %v: %v", compressed, err)
				}
				for _, k := range c.has {
					if _, ok := v.(map[string]any)[k]; !ok {
						t.Errorf("the profile has no %s", k)
					}
				}
			}
		})
	}
}

// sampleSpec returns the sampling of text.
func sampleSpec(t *testing.T, text string) sample.Spec {
	s, err := sample.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// decompressed returns the data of zstd or gzip stream b (of one or more
// frames or members), b itself when it is neither.
func decompressed(b []byte) ([]byte, error) {
	switch {
	case bytes.HasPrefix(b, []byte{0x1f, 0x8b}):
		z, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		return io.ReadAll(z)
	case bytes.HasPrefix(b, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		z, err := zstd.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		defer z.Close()
		return io.ReadAll(z)
	}
	return b, nil
}

// schemaEvents returns a batch of two threads calling, allocating,
// reading, writing and fetching, enough for every part of a profile.
func schemaEvents() *trace.Batch {
	b := trace.NewBatch(1024)
	for tid := uint32(1); tid <= 2; tid++ {
		b.AppendExt(trace.Alloc, 0x100000*uint64(tid), 0x400100, tid, trace.Ext{Size: 1 << 16, Stack: []uint64{0x400100}, Name: "malloc"})
		b.AppendExt(trace.Call, 0x401000, 0x400200, tid, trace.Ext{SP: 0x7fff0000})
	}
	for i := range uint64(4000) {
		if i == 2000 {
			b.AppendExt(trace.Marker, 0, 0, 1, trace.Ext{Mark: trace.MarkDump, Name: "half"})
		}
		tid := uint32(1 + i%2)
		b.Append(trace.IFetch, 0x401000+i%64*4, 4, 0x401000+i%64*4, tid)
		b.Append(trace.Read, 0x100000*uint64(tid)+i*72%(1<<16), 8, 0x401000+i%64*4, tid)
		b.Append(trace.Write, 0x100000+i*8%4096, 8, 0x401004, tid)
	}
	for tid := uint32(1); tid <= 2; tid++ {
		b.AppendExt(trace.Return, 0x400205, 0x401100, tid, trace.Ext{SP: 0x7fff0008})
	}
	return b
}

// validate checks v against schema s (root holds $defs) for the parts of
// JSON Schema the generated one uses.
func validate(root, s map[string]any, v any, at string) error {
	if r, ok := s["$ref"].(string); ok {
		def := root["$defs"].(map[string]any)[strings.TrimPrefix(r, "#/$defs/")]
		return validate(root, def.(map[string]any), v, at)
	}
	if alts, ok := s["anyOf"].([]any); ok {
		var errs []string
		for _, alt := range alts {
			err := validate(root, alt.(map[string]any), v, at)
			if err == nil {
				return nil
			}
			errs = append(errs, err.Error())
		}
		return fmt.Errorf("%s: none of: %s", at, strings.Join(errs, "; "))
	}
	switch s["type"] {
	case "null":
		if v != nil {
			return fmt.Errorf("%s: %v is not null", at, v)
		}
	case "string":
		if _, ok := v.(string); !ok {
			return fmt.Errorf("%s: %v is not a string", at, v)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("%s: %v is not a boolean", at, v)
		}
	case "number", "integer":
		n, ok := v.(json.Number)
		if !ok {
			return fmt.Errorf("%s: %v is not a number", at, v)
		}
		if s["type"] == "integer" && strings.ContainsAny(string(n), ".eE") {
			return fmt.Errorf("%s: %v is not an integer", at, n)
		}
		if _, ok := s["minimum"]; ok && strings.HasPrefix(string(n), "-") {
			return fmt.Errorf("%s: %v is negative", at, n)
		}
	case "array":
		a, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: %v is not an array", at, v)
		}
		for i, e := range a {
			if err := validate(root, s["items"].(map[string]any), e, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	case "object":
		o, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: %v is not an object", at, v)
		}
		props, _ := s["properties"].(map[string]any)
		required, _ := s["required"].([]any)
		for _, r := range required {
			if _, ok := o[r.(string)]; !ok {
				return fmt.Errorf("%s: %q is missing", at, r)
			}
		}
		for k, e := range o {
			ps, ok := props[k].(map[string]any)
			if !ok {
				ps, ok = s["additionalProperties"].(map[string]any)
			}
			if !ok {
				return fmt.Errorf("%s: %q is not in the schema", at, k)
			}
			if err := validate(root, ps, e, at+"."+k); err != nil {
				return err
			}
		}
	}
	return nil
}
