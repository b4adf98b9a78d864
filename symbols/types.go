package symbols

import (
	"debug/dwarf"
	"strconv"
	"strings"
)

// typeNamer writes C-like names of DWARF types ("double[512]",
// "struct node *", "double (*)[512]") and computes their sizes. Named types
// (base types, typedefs, and every Go type) keep the name DWARF gives them;
// structs, unions and enums of C units get their "struct"/"union"/"enum"
// keyword.
type typeNamer struct {
	r     *dwarf.Reader
	dies  map[dwarf.Offset]*typeDIE
	names map[typeKey]string
}

type typeKey struct {
	off   dwarf.Offset
	cLike bool
}

// typeDIE is the part of a type entry the namer needs.
type typeDIE struct {
	tag        dwarf.Tag
	name       string
	size       int64 // DW_AT_byte_size, -1 when absent
	elem       dwarf.Offset
	hasElem    bool
	dims       []int64 // array dimensions, -1 when unknown
	params     []typeRef
	variadic   bool
	prototyped bool
}

type typeRef struct {
	off dwarf.Offset
	ok  bool
}

const maxTypeDepth = 32

func newTypeNamer(d *dwarf.Data) *typeNamer {
	return &typeNamer{r: d.Reader(), dies: map[dwarf.Offset]*typeDIE{}, names: map[typeKey]string{}}
}

// cLike reports whether a DW_AT_language value is C (or unknown), whose
// aggregate type names carry their keyword.
func cLike(lang int64) bool {
	switch lang {
	case 0, 0x1, 0x2, 0xc, 0x1d, 0x2c: // unknown, C89, C, C99, C11, C17
		return true
	}
	return false
}

// describe returns the name and size (-1 when unknown) of the type at off.
func (t *typeNamer) describe(off dwarf.Offset, cLike bool, addrSize int64) (string, int64) {
	k := typeKey{off, cLike}
	name, ok := t.names[k]
	if !ok {
		name = t.decl(typeRef{off, true}, "", cLike, 0)
		t.names[k] = name
	}
	return name, t.size(typeRef{off, true}, addrSize, 0)
}

func (t *typeNamer) die(off dwarf.Offset) *typeDIE {
	if d, ok := t.dies[off]; ok {
		return d
	}
	t.dies[off] = nil
	t.r.Seek(off)
	e, err := t.r.Next()
	if err != nil || e == nil || e.Tag == 0 {
		return nil
	}
	d := &typeDIE{tag: e.Tag, size: -1}
	d.name, _ = e.Val(dwarf.AttrName).(string)
	if s, ok := e.Val(dwarf.AttrByteSize).(int64); ok {
		d.size = s
	}
	d.elem, d.hasElem = e.Val(dwarf.AttrType).(dwarf.Offset)
	d.prototyped, _ = e.Val(dwarf.AttrPrototyped).(bool)
	if e.Children && (e.Tag == dwarf.TagArrayType || e.Tag == dwarf.TagSubroutineType) {
		for {
			c, err := t.r.Next()
			if err != nil || c == nil || c.Tag == 0 {
				break
			}
			switch c.Tag {
			case dwarf.TagSubrangeType, dwarf.TagEnumerationType:
				d.dims = append(d.dims, subrangeCount(c))
			case dwarf.TagFormalParameter:
				o, ok := c.Val(dwarf.AttrType).(dwarf.Offset)
				d.params = append(d.params, typeRef{o, ok})
			case dwarf.TagUnspecifiedParameters:
				d.variadic = true
			}
			if c.Children {
				t.r.SkipChildren()
			}
		}
	}
	t.dies[off] = d
	return d
}

// subrangeCount returns the element count of an array dimension, or -1.
func subrangeCount(c *dwarf.Entry) int64 {
	if n, ok := c.Val(dwarf.AttrCount).(int64); ok {
		return n
	}
	var hi int64
	switch v := c.Val(dwarf.AttrUpperBound).(type) {
	case int64:
		hi = v
	case uint64:
		hi = int64(v)
	default:
		return -1
	}
	lo, _ := c.Val(dwarf.AttrLowerBound).(int64)
	if hi < lo-1 {
		return -1
	}
	return hi - lo + 1
}

// join writes a base type name before a declarator.
func join(base, inner string) string {
	switch {
	case inner == "":
		return base
	case inner[0] == '[':
		return base + inner
	}
	return base + " " + inner
}

// decl returns the C declaration of an abstract declarator inner of type r.
func (t *typeNamer) decl(r typeRef, inner string, cLike bool, depth int) string {
	if !r.ok {
		return join("void", inner)
	}
	d := t.die(r.off)
	if d == nil || depth > maxTypeDepth {
		return join("?", inner)
	}
	elem := typeRef{d.elem, d.hasElem}
	switch d.tag {
	case dwarf.TagStructType, dwarf.TagUnionType, dwarf.TagEnumerationType, dwarf.TagClassType:
		if !cLike && d.name != "" {
			return join(d.name, inner)
		}
		kw := map[dwarf.Tag]string{dwarf.TagStructType: "struct", dwarf.TagUnionType: "union",
			dwarf.TagEnumerationType: "enum", dwarf.TagClassType: "class"}[d.tag]
		if d.name == "" {
			return join(kw+" {...}", inner)
		}
		return join(kw+" "+d.name, inner)
	}
	if d.name != "" {
		// Base types, typedefs, and every named type (Go names pointers,
		// slices, maps and arrays too).
		return join(d.name, inner)
	}
	switch d.tag {
	case dwarf.TagPointerType, dwarf.TagPtrToMemberType:
		return t.decl(elem, "*"+inner, cLike, depth+1)
	case dwarf.TagReferenceType:
		return t.decl(elem, "&"+inner, cLike, depth+1)
	case dwarf.TagRvalueReferenceType:
		return t.decl(elem, "&&"+inner, cLike, depth+1)
	case dwarf.TagConstType, dwarf.TagVolatileType:
		q := "const"
		if d.tag == dwarf.TagVolatileType {
			q = "volatile"
		}
		if e := t.die(d.elem); d.hasElem && e != nil && e.name == "" && (e.tag == dwarf.TagPointerType || e.tag == dwarf.TagConstType || e.tag == dwarf.TagVolatileType) {
			// char *const: the qualifier binds to the declarator.
			return t.decl(elem, join(q, inner), cLike, depth+1)
		}
		s := t.decl(elem, inner, cLike, depth+1)
		if strings.HasPrefix(s, q+" ") {
			// const arrays: the element type already says so.
			return s
		}
		return q + " " + s
	case dwarf.TagRestrictType, dwarf.TagAtomicType:
		return t.decl(elem, inner, cLike, depth+1)
	case dwarf.TagArrayType:
		s := inner
		if strings.HasPrefix(s, "*") || strings.HasPrefix(s, "&") {
			s = "(" + s + ")"
		}
		if len(d.dims) == 0 {
			s += "[]"
		}
		for _, n := range d.dims {
			if n < 0 {
				s += "[]"
			} else {
				s += "[" + strconv.FormatInt(n, 10) + "]"
			}
		}
		return t.decl(elem, s, cLike, depth+1)
	case dwarf.TagSubroutineType:
		s := inner
		if strings.HasPrefix(s, "*") || strings.HasPrefix(s, "&") {
			s = "(" + s + ")"
		}
		var ps []string
		for _, p := range d.params {
			ps = append(ps, t.decl(p, "", cLike, depth+1))
		}
		if d.variadic {
			ps = append(ps, "...")
		}
		if len(ps) == 0 && d.prototyped {
			ps = append(ps, "void")
		}
		return t.decl(elem, s+"("+strings.Join(ps, ", ")+")", cLike, depth+1)
	case dwarf.TagUnspecifiedType:
		return join("void", inner)
	}
	return join("?", inner)
}

// size returns the byte size of type r, or -1 when unknown.
func (t *typeNamer) size(r typeRef, addrSize int64, depth int) int64 {
	if !r.ok || depth > maxTypeDepth {
		return -1
	}
	d := t.die(r.off)
	if d == nil {
		return -1
	}
	if d.size >= 0 {
		return d.size
	}
	elem := typeRef{d.elem, d.hasElem}
	switch d.tag {
	case dwarf.TagTypedef, dwarf.TagConstType, dwarf.TagVolatileType, dwarf.TagRestrictType, dwarf.TagAtomicType:
		return t.size(elem, addrSize, depth+1)
	case dwarf.TagPointerType, dwarf.TagReferenceType, dwarf.TagRvalueReferenceType:
		return addrSize
	case dwarf.TagArrayType:
		n := t.size(elem, addrSize, depth+1)
		if n < 0 || len(d.dims) == 0 {
			return -1
		}
		for _, c := range d.dims {
			if c < 0 || (c > 0 && n > (1<<62)/c) {
				return -1
			}
			n *= c
		}
		return n
	}
	return -1
}
