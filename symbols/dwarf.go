package symbols

import (
	"cmp"
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"path"
	"slices"
)

// builder collects the tables of a Binary while reading its DWARF and
// symbol tables.
type builder struct {
	b           *Binary
	exec, alloc rangeSet

	fileIdx   map[string]uint32
	funcs     []funcRange
	inlRanges []inlRange
	vars      []Global
	seqs      []seq
	frames    []*frame

	// Per DWARF data.
	d         *dwarf.Data
	res       *resolver
	types     *typeNamer
	order     binary.ByteOrder
	debugAddr []byte
	stmtFiles map[int64][]uint32

	// Per compilation unit.
	cuFiles  []uint32 // line-table file index -> Binary.files index
	cuLang   int64
	addrBase uint64
	addrSize int
}

type inlRange struct {
	lo, hi uint64
	node   int32
	depth  int32
}

// seq is one line-table sequence: rows [start, end) of Binary.lines.
type seq struct{ start, end int }

func newBuilder(b *Binary, exec, alloc rangeSet) *builder {
	return &builder{b: b, exec: exec, alloc: alloc, fileIdx: map[string]uint32{"": 0}}
}

// file interns a file name.
func (bl *builder) file(name string) uint32 {
	if i, ok := bl.fileIdx[name]; ok {
		return i
	}
	i := uint32(len(bl.b.files))
	bl.b.files = append(bl.b.files, name)
	bl.fileIdx[name] = i
	return i
}

// cuFile maps a DW_AT_decl_file / DW_AT_call_file value of the current unit.
func (bl *builder) cuFile(v any) uint32 {
	i, ok := v.(int64)
	if !ok || i < 0 || i >= int64(len(bl.cuFiles)) {
		return 0
	}
	return bl.cuFiles[i]
}

// readDWARF walks all debugging information entries of ef once.
func (bl *builder) readDWARF(ef *elf.File) error {
	d, err := ef.DWARF()
	if err != nil {
		return err
	}
	bl.d = d
	bl.order = ef.ByteOrder
	bl.res = newResolver(d)
	bl.types = newTypeNamer(d)
	bl.stmtFiles = map[int64][]uint32{}
	if s := ef.Section(".debug_addr"); s != nil && s.Type != elf.SHT_NOBITS {
		if data, err := s.Data(); err == nil {
			bl.debugAddr = data
		}
	}
	if err := bl.walk(); err != nil {
		return err
	}
	bl.sortLines()
	return nil
}

// maxPadding bounds the null entries accepted between units.
const maxPadding = 1 << 16

type walkCtx struct {
	fn    string // innermost enclosing (possibly inlined) function
	inl   int32  // innermost enclosing inline node, -1 if none
	depth int32  // inline nesting depth
	frame *frame // the enclosing subprogram's stack variables, nil if not collected
}

func (bl *builder) walk() error {
	r := bl.d.Reader()
	var stack []walkCtx
	nulls := 0
	for {
		e, err := r.Next()
		if err != nil {
			return err
		}
		if e == nil {
			return nil
		}
		if e.Tag == 0 {
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
				continue
			}
			// Outside any unit, null entries are padding. debug/dwarf
			// returns null entries forever, without advancing, on an
			// unterminated LEB128 abbreviation code: give up.
			if nulls++; nulls > maxPadding {
				return errors.New("malformed debugging information entries")
			}
			continue
		}
		nulls = 0
		cur := walkCtx{inl: -1}
		if len(stack) > 0 {
			cur = stack[len(stack)-1]
		}
		push, descend := cur, false
		switch e.Tag {
		case dwarf.TagCompileUnit, dwarf.TagPartialUnit:
			stack = stack[:0]
			push, descend = walkCtx{inl: -1}, true
			bl.addrSize = r.AddressSize()
			if err := bl.startUnit(e); err != nil {
				return err
			}
		case dwarf.TagSubprogram:
			name, link := bl.res.name(e)
			rs, err := bl.d.Ranges(e)
			if err != nil {
				return err
			}
			for _, rg := range rs {
				if rg[1] > rg[0] && bl.exec.contains(rg[0]) {
					bl.funcs = append(bl.funcs, funcRange{rg[0], rg[1], name, link})
				}
			}
			push, descend = walkCtx{fn: name, inl: -1, frame: bl.newFrame(e, rs)}, true
		case dwarf.TagInlinedSubroutine:
			name, _ := bl.res.name(e)
			rs, err := bl.d.Ranges(e)
			if err != nil {
				return err
			}
			if len(bl.b.inlNodes) >= math.MaxInt32 {
				return errors.New("too many inlined subroutines")
			}
			node := int32(len(bl.b.inlNodes))
			line, _ := e.Val(dwarf.AttrCallLine).(int64)
			bl.b.inlNodes = append(bl.b.inlNodes, inlNode{
				name:     name,
				callFile: bl.cuFile(e.Val(dwarf.AttrCallFile)),
				callLine: clampLine(line),
				parent:   cur.inl,
			})
			for _, rg := range rs {
				if rg[1] > rg[0] && bl.exec.contains(rg[0]) {
					bl.inlRanges = append(bl.inlRanges, inlRange{rg[0], rg[1], node, cur.depth + 1})
				}
			}
			push, descend = walkCtx{fn: name, inl: node, depth: cur.depth + 1, frame: cur.frame}, true
		case dwarf.TagLexDwarfBlock, dwarf.TagNamespace, dwarf.TagModule:
			descend = true
		case dwarf.TagVariable:
			bl.variable(e, cur.fn)
			if cur.frame != nil {
				bl.local(e, cur.frame)
			}
		case dwarf.TagFormalParameter:
			if cur.frame != nil {
				bl.local(e, cur.frame)
			}
		}
		if e.Children {
			if descend {
				stack = append(stack, push)
			} else {
				r.SkipChildren()
			}
		}
	}
}

func clampLine(l int64) int32 {
	if l < 0 || l > math.MaxInt32 {
		return 0
	}
	return int32(l)
}

// startUnit records a compilation unit's language and address base and
// reads its line table (once per distinct table).
func (bl *builder) startUnit(cu *dwarf.Entry) error {
	bl.cuLang, _ = cu.Val(dwarf.AttrLanguage).(int64)
	bl.addrBase = 0
	if v, ok := cu.Val(dwarf.AttrAddrBase).(int64); ok && v >= 0 {
		bl.addrBase = uint64(v)
	}
	bl.cuFiles = nil
	// Go's line reader joins a file's directory with the compilation
	// directory only for older DWARF versions: a DWARF 5 directory given
	// relative (gcc compiling "src/x.c") stays relative. Join it here, so
	// that the source can be read from anywhere.
	compDir, _ := cu.Val(dwarf.AttrCompDir).(string)
	abs := func(name string) string {
		if compDir != "" && name != "" && !path.IsAbs(name) {
			return path.Join(compDir, name)
		}
		return name
	}
	off, ok := cu.Val(dwarf.AttrStmtList).(int64)
	if !ok {
		return nil
	}
	if f, ok := bl.stmtFiles[off]; ok {
		bl.cuFiles = f
		return nil
	}
	lr, err := bl.d.LineReader(cu)
	if err != nil {
		return err
	}
	if lr == nil {
		return nil
	}
	lines := bl.b.lines
	start := len(lines)
	local := map[*dwarf.LineFile]uint32{}
	var le dwarf.LineEntry
	for {
		err := lr.Next(&le)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if le.EndSequence {
			if start < len(lines) && bl.exec.contains(lines[start].addr) && le.Address >= lines[start].addr {
				lines = append(lines, lineRow{addr: le.Address, line: -1})
				bl.seqs = append(bl.seqs, seq{start, len(lines)})
			} else {
				lines = lines[:start]
			}
			start = len(lines)
			continue
		}
		var fi uint32
		if le.File != nil {
			var ok bool
			if fi, ok = local[le.File]; !ok {
				fi = bl.file(abs(le.File.Name))
				local[le.File] = fi
			}
		}
		row := lineRow{addr: le.Address, file: fi, line: clampLine(int64(le.Line))}
		if le.Column > 0 && le.Column <= math.MaxUint16 {
			row.col = uint16(le.Column)
		}
		if n := len(lines); n > start && lines[n-1].file == row.file && lines[n-1].line == row.line && lines[n-1].col == row.col {
			continue
		}
		lines = append(lines, row)
	}
	bl.b.lines = lines[:start] // drop an unterminated sequence
	files := lr.Files()
	m := make([]uint32, len(files))
	for i, f := range files {
		if f != nil {
			m[i] = bl.file(abs(f.Name))
		}
	}
	bl.stmtFiles[off] = m
	bl.cuFiles = m
	return nil
}

// sortLines orders the line-table sequences by address.
func (bl *builder) sortLines() {
	lines := bl.b.lines
	sorted := func(rows []lineRow) bool {
		for i := 1; i < len(rows); i++ {
			if rows[i].addr < rows[i-1].addr {
				return false
			}
		}
		return true
	}
	if sorted(lines) {
		return
	}
	slices.SortStableFunc(bl.seqs, func(a, b seq) int { return cmp.Compare(lines[a.start].addr, lines[b.start].addr) })
	out := make([]lineRow, 0, len(lines))
	for _, s := range bl.seqs {
		out = append(out, lines[s.start:s.end]...)
	}
	if !sorted(out) {
		// Overlapping sequences: order rows by address, an end of sequence
		// before a row starting at the same address.
		slices.SortStableFunc(out, func(a, b lineRow) int {
			if c := cmp.Compare(a.addr, b.addr); c != 0 {
				return c
			}
			return cmp.Compare(min(a.line, 0), min(b.line, 0))
		})
	}
	bl.b.lines = out
}

// variable records a DW_TAG_variable with a fixed address.
func (bl *builder) variable(e *dwarf.Entry, fn string) {
	loc, ok := e.Val(dwarf.AttrLocation).([]byte)
	if !ok {
		return
	}
	addr, ok := bl.exprAddr(loc)
	if !ok || addr == 0 || !bl.alloc.contains(addr) {
		return
	}
	v := bl.res.variable(e)
	if v.name == "" {
		return
	}
	g := Global{Name: v.name, Addr: addr, Line: int(clampLine(v.line))}
	switch {
	case fn != "":
		g.Name = fn + "." + v.name
	case mangled(v.link): // a C++ variable in a namespace or class: its qualified name
		g.Name = shortName(v.link)
	}
	if v.hasType {
		var size int64
		g.Type, size = bl.types.describe(v.typ, cLike(bl.cuLang), int64(bl.addrSize))
		if size > 0 {
			g.Size = uint64(size)
		}
	}
	g.File = bl.b.files[bl.cuFile(v.file)]
	bl.vars = append(bl.vars, g)
}

// exprAddr returns the address of a location expression that is just
// DW_OP_addr or DW_OP_addrx.
func (bl *builder) exprAddr(loc []byte) (uint64, bool) {
	if len(loc) == 0 {
		return 0, false
	}
	switch loc[0] {
	case 0x03: // DW_OP_addr
		switch {
		case bl.addrSize == 8 && len(loc) == 9:
			return bl.order.Uint64(loc[1:]), true
		case bl.addrSize == 4 && len(loc) == 5:
			return uint64(bl.order.Uint32(loc[1:])), true
		}
	case 0xa1, 0xfb: // DW_OP_addrx, DW_OP_GNU_addr_index
		idx, n := binary.Uvarint(loc[1:])
		if n <= 0 || 1+n != len(loc) || bl.addrSize <= 0 {
			return 0, false
		}
		off := bl.addrBase + idx*uint64(bl.addrSize)
		if idx > uint64(len(bl.debugAddr)) || off < bl.addrBase || off+uint64(bl.addrSize) > uint64(len(bl.debugAddr)) {
			return 0, false
		}
		switch bl.addrSize {
		case 8:
			return bl.order.Uint64(bl.debugAddr[off:]), true
		case 4:
			return uint64(bl.order.Uint32(bl.debugAddr[off:])), true
		}
	}
	return 0, false
}

// finish merges the DWARF tables with the symbol tables and builds the
// sorted lookup tables of the Binary.
func (bl *builder) finish(syms []elf.Symbol) {
	b := bl.b
	funcSyms := map[uint64]elf.Symbol{}
	objSyms := map[uint64]elf.Symbol{}
	for _, s := range syms {
		if s.Value == 0 || s.Name == "" || s.Section == elf.SHN_UNDEF || s.Section >= elf.SHN_LORESERVE {
			continue
		}
		var m map[uint64]elf.Symbol
		switch elf.ST_TYPE(s.Info) {
		case elf.STT_FUNC, elf.STT_GNU_IFUNC:
			if !bl.exec.contains(s.Value) {
				continue
			}
			m = funcSyms
		case elf.STT_OBJECT:
			if s.Size == 0 || !bl.alloc.contains(s.Value) {
				continue
			}
			m = objSyms
		default:
			continue
		}
		if old, ok := m[s.Value]; !ok || symRank(s, old) {
			m[s.Value] = s
		}
	}

	// Functions: DWARF ranges, then symbols DWARF does not cover.
	fs := bl.funcs
	for i := range fs {
		if fs[i].name == "" {
			n := funcSyms[fs[i].lo].Name
			fs[i].name, fs[i].link = shortName(n), linkOf(n)
		}
	}
	slices.SortStableFunc(fs, func(a, b funcRange) int { return cmp.Compare(a.lo, b.lo) })
	dw := makeIvals(len(fs), func(i int) (uint64, uint64) { return fs[i].lo, fs[i].hi })
	for addr, s := range funcSyms {
		if dw.find(addr) >= 0 {
			continue
		}
		hi := addr + s.Size
		if hi < addr {
			hi = addr
		}
		fs = append(fs, funcRange{addr, hi, shortName(s.Name), linkOf(s.Name)})
	}
	slices.SortStableFunc(fs, func(a, b funcRange) int {
		if c := cmp.Compare(a.lo, b.lo); c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	})
	for i := range fs {
		if fs[i].hi > fs[i].lo {
			continue
		}
		// A symbol without size ends at the next function or its section.
		end := bl.exec.end(fs[i].lo)
		for j := i + 1; j < len(fs); j++ {
			if fs[j].lo > fs[i].lo {
				if end == 0 || fs[j].lo < end {
					end = fs[j].lo
				}
				break
			}
		}
		if end <= fs[i].lo {
			end = fs[i].lo + 1
		}
		fs[i].hi = end
	}
	b.funcs = makeIvals(len(fs), func(i int) (uint64, uint64) { return fs[i].lo, fs[i].hi })
	b.funcName = make([]string, len(fs))
	b.funcLink = make([]string, len(fs))
	for i, f := range fs {
		b.funcName[i], b.funcLink[i] = f.name, f.link
	}

	// Variables: DWARF ones, then object symbols DWARF does not describe.
	gs := bl.vars
	for i := range gs {
		if gs[i].Size == 0 {
			gs[i].Size = objSyms[gs[i].Addr].Size
		}
	}
	sortGlobals(gs)
	dv := globalIvals(gs)
	for addr, s := range objSyms {
		if dv.find(addr) >= 0 {
			continue
		}
		gs = append(gs, Global{Name: shortName(s.Name), Addr: addr, Size: s.Size})
	}
	sortGlobals(gs)
	gs = slices.CompactFunc(gs, func(a, b Global) bool { return a.Addr == b.Addr && a.Name == b.Name })
	b.globals = slices.Clip(gs)
	b.gvals = globalIvals(b.globals)

	bl.buildInline()
	bl.buildLocals()
}

func sortGlobals(gs []Global) {
	slices.SortStableFunc(gs, func(a, b Global) int {
		if c := cmp.Compare(a.Addr, b.Addr); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
}

// globalIvals indexes sorted globals; a zero-size variable covers its own
// address.
func globalIvals(gs []Global) ivals {
	return makeIvals(len(gs), func(i int) (uint64, uint64) {
		lo := gs[i].Addr
		hi := lo + max(gs[i].Size, 1)
		if hi < lo {
			hi = math.MaxUint64
		}
		return lo, hi
	})
}

// makeIvals indexes n intervals already sorted by start.
func makeIvals(n int, at func(i int) (uint64, uint64)) ivals {
	var t ivals
	t.lo = make([]uint64, n)
	t.hi = make([]uint64, n)
	for i := range n {
		t.lo[i], t.hi[i] = at(i)
	}
	t.build()
	return t
}

// buildInline turns the (nested) inlined-subroutine ranges into disjoint
// segments, each naming the innermost inline node covering it.
func (bl *builder) buildInline() {
	type event struct {
		addr  uint64
		r     int32 // index into inlRanges
		start bool
	}
	evs := make([]event, 0, 2*len(bl.inlRanges))
	for i, r := range bl.inlRanges {
		evs = append(evs, event{r.lo, int32(i), true}, event{r.hi, int32(i), false})
	}
	slices.SortFunc(evs, func(a, b event) int { return cmp.Compare(a.addr, b.addr) })
	b := bl.b
	var active []int32 // indexes into inlRanges
	var segLo, segHi []uint64
	var segNode []int32
	for i := 0; i < len(evs); {
		a := evs[i].addr
		for ; i < len(evs) && evs[i].addr == a; i++ {
			if evs[i].start {
				active = append(active, evs[i].r)
			} else if k := slices.Index(active, evs[i].r); k >= 0 {
				active = slices.Delete(active, k, k+1)
			}
		}
		if len(active) == 0 || i == len(evs) {
			continue
		}
		best := active[0]
		for _, r := range active[1:] {
			if bl.inlRanges[r].depth >= bl.inlRanges[best].depth {
				best = r
			}
		}
		node := bl.inlRanges[best].node
		next := evs[i].addr
		if n := len(segLo); n > 0 && segHi[n-1] == a && segNode[n-1] == node {
			segHi[n-1] = next
			continue
		}
		segLo, segHi, segNode = append(segLo, a), append(segHi, next), append(segNode, node)
	}
	b.inlSegs = ivals{lo: segLo, hi: segHi}
	b.inlSegs.build()
	bl.inlRanges = nil
	b.inlSegNd = segNode
}

// resolver finds names, types and declarations through
// DW_AT_abstract_origin and DW_AT_specification references.
type resolver struct {
	r     *dwarf.Reader
	names map[dwarf.Offset]funcNames
	vars  map[dwarf.Offset]varInfo
	short map[string]string // short names by linkage name: inlined copies share one
}

// funcNames are the names of a subprogram: DW_AT_name, which for C++ is
// unqualified ("insert"), and the linkage (symbol) name.
type funcNames struct {
	name, link string
}

type varInfo struct {
	name    string
	link    string // the linkage name, for a C++ variable in a namespace or class
	typ     dwarf.Offset
	hasType bool
	file    any // DW_AT_decl_file value
	line    int64
}

func newResolver(d *dwarf.Data) *resolver {
	return &resolver{r: d.Reader(), names: map[dwarf.Offset]funcNames{}, vars: map[dwarf.Offset]varInfo{},
		short: map[string]string{}}
}

// attrMIPSLinkageName is DW_AT_MIPS_linkage_name, the linkage name
// attribute of compilers before DWARF 4, which debug/dwarf does not name.
const attrMIPSLinkageName dwarf.Attr = 0x2007

// linkageName returns the linkage name of a DWARF entry.
func linkageName(e *dwarf.Entry) string {
	if n, ok := e.Val(dwarf.AttrLinkageName).(string); ok && n != "" {
		return n
	}
	n, _ := e.Val(attrMIPSLinkageName).(string)
	return n
}

const maxRefDepth = 16

func refOf(e *dwarf.Entry) (dwarf.Offset, bool) {
	if o, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset); ok {
		return o, true
	}
	o, ok := e.Val(dwarf.AttrSpecification).(dwarf.Offset)
	return o, ok
}

func (rs *resolver) entry(off dwarf.Offset) *dwarf.Entry {
	rs.r.Seek(off)
	e, err := rs.r.Next()
	if err != nil || e == nil || e.Tag == 0 {
		return nil
	}
	return e
}

// name returns the name memspy shows for a subprogram or inlined
// subroutine: its mangled linkage name in the short demangled form
// (qualified, "std::vector::push_back"), else its DWARF name (C, Go), else
// its linkage name; and the mangled linkage name, if any, for Signature.
func (rs *resolver) name(e *dwarf.Entry) (name, link string) {
	n := rs.namesOf(e, 0)
	switch {
	case mangled(n.link):
		s, ok := rs.short[n.link]
		if !ok {
			s = shortName(n.link)
			rs.short[n.link] = s
		}
		return s, n.link
	case n.name != "":
		return n.name, ""
	}
	return n.link, ""
}

// namesOf returns the names of e, taking those it lacks from the entries
// it refers to.
func (rs *resolver) namesOf(e *dwarf.Entry, depth int) funcNames {
	var n funcNames
	n.name, _ = e.Val(dwarf.AttrName).(string)
	n.link = linkageName(e)
	if n.name != "" && n.link != "" || depth >= maxRefDepth {
		return n
	}
	off, ok := refOf(e)
	if !ok {
		return n
	}
	o, ok := rs.names[off]
	if !ok {
		rs.names[off] = funcNames{} // breaks reference cycles
		if t := rs.entry(off); t != nil {
			o = rs.namesOf(t, depth+1)
		}
		rs.names[off] = o
	}
	if n.name == "" {
		n.name = o.name
	}
	if n.link == "" {
		n.link = o.link
	}
	return n
}

// variable returns a variable's name, type and declaration, following
// references for what the entry itself lacks.
func (rs *resolver) variable(e *dwarf.Entry) varInfo { return rs.varOf(e, 0) }

func (rs *resolver) varOf(e *dwarf.Entry, depth int) varInfo {
	var v varInfo
	v.name, _ = e.Val(dwarf.AttrName).(string)
	v.link = linkageName(e)
	v.typ, v.hasType = e.Val(dwarf.AttrType).(dwarf.Offset)
	v.file = e.Val(dwarf.AttrDeclFile)
	v.line, _ = e.Val(dwarf.AttrDeclLine).(int64)
	if v.name != "" && v.link != "" && v.hasType && v.file != nil && v.line != 0 {
		return v
	}
	off, ok := refOf(e)
	if !ok || depth >= maxRefDepth {
		return v
	}
	o, ok := rs.vars[off]
	if !ok {
		rs.vars[off] = varInfo{} // breaks reference cycles
		if t := rs.entry(off); t != nil {
			o = rs.varOf(t, depth+1)
		}
		rs.vars[off] = o
	}
	if v.name == "" {
		v.name = o.name
	}
	if v.link == "" {
		v.link = o.link
	}
	if !v.hasType {
		v.typ, v.hasType = o.typ, o.hasType
	}
	if v.file == nil {
		v.file = o.file
	}
	if v.line == 0 {
		v.line = o.line
	}
	return v
}
