package symbols

import (
	"debug/elf"
	"encoding/binary"
	"go/version"
	"strings"
	"unicode"
	"unicode/utf8"
)

// goTypes holds the type descriptors of a Go executable: the bytes of
// [runtime.types, runtime.etypes), where the linker puts every
// runtime._type (internal/abi.Type) and the names they refer to.
type goTypes struct {
	start uint64 // link-time address of runtime.types
	data  []byte
}

// The Go versions whose type descriptors goTypes decodes. The layout of
// internal/abi.Type (runtime._type before Go 1.21) read here, and names
// with a varint length, are those of Go 1.17 to 1.26 (checked against
// 1.26's internal/abi/type.go and runtime/type.go); a binary of another
// version gives no types rather than wrong ones.
const (
	goTypesFirst = "go1.17"
	goTypesLast  = "go1.26"
)

// Offsets and sizes in an internal/abi.Type on a 64-bit target.
const (
	goTypeSize   = 48 // the descriptor's fixed part
	goTypeTFlag  = 20 // TFlag uint8
	goTypeKind   = 23 // Kind_ uint8 (Go before 1.26 keeps flags in bits 5..7)
	goTypeStr    = 40 // Str NameOff (int32): the name, from runtime.types
	goKindMask   = 0x1f
	goKindLast   = 26     // abi.UnsafePointer, the last kind
	goExtraStar  = 1 << 1 // TFlagExtraStar: the name has a '*' too many
	goMaxNameLen = 1 << 16
)

// readGoTypes returns the type descriptors of ef, a Go executable whose
// symbol table syms names runtime.types, runtime.etypes and
// runtime.buildVersion; nil when it is not one, or is one of a Go version
// outside [goTypesFirst, goTypesLast], or the section is unreadable.
func readGoTypes(ef *elf.File, syms []elf.Symbol) *goTypes {
	if ef.Class != elf.ELFCLASS64 || ef.Data != elf.ELFDATA2LSB {
		return nil
	}
	var start, end, buildVersion uint64
	var found int
	for _, s := range syms {
		switch s.Name {
		case "runtime.types":
			start, found = s.Value, found|1
		case "runtime.etypes":
			end, found = s.Value, found|2
		case "runtime.buildVersion":
			buildVersion, found = s.Value, found|4
		}
	}
	if found != 7 || end <= start || !knownGoVersion(goVersion(ef, buildVersion)) {
		return nil
	}
	data, ok := readAt(ef, start, end-start)
	if !ok {
		return nil
	}
	return &goTypes{start: start, data: data}
}

// goVersion reads the Go string variable runtime.buildVersion at link-time
// address a ("go1.26.8", "go1.26.8 X:boringcrypto"); "" when unreadable.
func goVersion(ef *elf.File, a uint64) string {
	hdr, ok := readAt(ef, a, 16)
	if !ok {
		return ""
	}
	p, n := binary.LittleEndian.Uint64(hdr), binary.LittleEndian.Uint64(hdr[8:])
	if n > 256 {
		return ""
	}
	s, ok := readAt(ef, p, n)
	if !ok {
		return ""
	}
	return string(s)
}

// knownGoVersion reports whether v, a Go toolchain's version string, is
// one whose type descriptors goTypes decodes.
func knownGoVersion(v string) bool {
	v, _, _ = strings.Cut(v, " ") // experiments follow a blank
	lang := version.Lang(v)
	return lang != "" && version.Compare(lang, goTypesFirst) >= 0 && version.Compare(lang, goTypesLast) <= 0
}

// readAt returns the n bytes at link-time address a from the one allocated
// section holding them all (not from a section without file contents).
func readAt(ef *elf.File, a, n uint64) ([]byte, bool) {
	for _, s := range ef.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 || s.Type == elf.SHT_NOBITS || a < s.Addr || a-s.Addr > s.Size || n > s.Size-(a-s.Addr) {
			continue
		}
		b := make([]byte, n)
		if _, err := s.ReadAt(b, int64(a-s.Addr)); err != nil {
			return nil, false
		}
		return b, true
	}
	return nil, false
}

// name returns the name of the type whose descriptor is at link-time
// address a, as Go writes it ("[]int", "*main.node", "map[string]int");
// ok is false when a is not where a descriptor can be or what is there
// does not read as one.
func (t *goTypes) name(a uint64) (string, bool) {
	if t == nil || a < t.start || a%8 != 0 || a-t.start > uint64(len(t.data)) || uint64(len(t.data))-(a-t.start) < goTypeSize {
		return "", false
	}
	d := t.data[a-t.start:]
	if k := d[goTypeKind] & goKindMask; k == 0 || k > goKindLast {
		return "", false
	}
	off := int64(int32(binary.LittleEndian.Uint32(d[goTypeStr:])))
	if off <= 0 || off >= int64(len(t.data)) {
		return "", false
	}
	nm := t.data[off+1:] // after the name's flags byte
	n, w := binary.Uvarint(nm)
	if w <= 0 || n == 0 || n > goMaxNameLen || n > uint64(len(nm)-w) {
		return "", false
	}
	s := string(nm[w : w+int(n)])
	if !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return "", false
	}
	if d[goTypeTFlag]&goExtraStar != 0 {
		if len(s) < 2 || s[0] != '*' {
			return "", false
		}
		s = s[1:]
	}
	return s, true
}

// GoType returns the name of the Go type whose runtime descriptor (a
// runtime._type, internal/abi.Type) is at link-time address a in a Go
// executable ("[]int", "main.node", "map.group[string]int"); ok is false
// when b is no Go executable of a version whose descriptors are known
// (Go 1.17 to 1.26, with runtime.types in its symbol table) or no
// descriptor is at a.
func (b *Binary) GoType(a uint64) (name string, ok bool) { return b.goTypes.name(a) }

// GoType returns the name of the Go type whose descriptor is at run-time
// address a (see Binary.GoType).
func (s *Space) GoType(a uint64) (name string, ok bool) {
	b, bias, ok := s.Binary(a)
	if !ok {
		return "", false
	}
	return b.GoType(a - bias)
}
