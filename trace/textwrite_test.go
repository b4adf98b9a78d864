package trace

import (
	"bytes"
	"testing"
)

// Text formats keep memory references only: extended events are skipped;
// a misc reference stays misc.
func TestTextWriterSkipsExtended(t *testing.T) {
	b := NewBatch(0)
	b.AppendExt(Map, 0x401000, 0, 0, Ext{Size: 0x2000, Name: "/usr/bin/prog"})
	b.AppendExt(Call, 0x401000, 0x400ffc, 0, Ext{SP: 0x7ffc0000})
	b.Append(IFetch, 0x401000, 4, 0x401000, 0)
	b.AppendExt(Alloc, 0x4052a0, 0x401004, 0, Ext{Size: 64, Stack: []uint64{0x401004}, Name: "malloc"})
	b.Append(Modify, 0x4052a0, 8, 0x401004, 0)
	b.Append(Misc, 0x4052a8, 4, 0x401006, 0)
	b.AppendExt(Marker, 0, 0x401008, 0, Ext{Mark: MarkDump, Name: "init"})
	b.Append(Invalidate, 0, 0, 0, 0)
	b.AppendExt(Free, 0x4052a0, 0x40100c, 0, Ext{Name: "free"})
	b.AppendExt(Return, 0x400ffc+5, 0x401010, 0, Ext{SP: 0x7ffc0008})
	for _, tc := range []struct{ format, want string }{
		{"din", "2 401000\n0 4052a0\n1 4052a0\n3 4052a8\n5 0\n"},
		{"xdin", "i 401000 4\nr 4052a0 8\nw 4052a0 8\nm 4052a8 4\nv 0 0\n"},
	} {
		var buf bytes.Buffer
		w, err := NewTextWriter(&buf, tc.format)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if buf.String() != tc.want {
			t.Errorf("%s: wrote\n%s\nwant\n%s", tc.format, buf.String(), tc.want)
		}
		if w.Events() != 4 {
			t.Errorf("%s: Events() = %d, want the 4 references", tc.format, w.Events())
		}
		// What was written reads back as the references alone.
		r, err := OpenReader(&buf, "t", tc.format, Options{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := readAllMST(r, 10)
		if err != nil {
			t.Fatal(err)
		}
		if got.Len() != 5 || len(got.Ext) != 0 || got.Kind[3] != Misc {
			t.Errorf("%s: read back %d events, %d Exts", tc.format, got.Len(), len(got.Ext))
		}
	}
}
