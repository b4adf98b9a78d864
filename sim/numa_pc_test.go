package sim

import (
	"reflect"
	"testing"

	"github.com/memspy/memspy/attrib"
	"github.com/memspy/memspy/machine"
	"github.com/memspy/memspy/profile"
	"github.com/memspy/memspy/trace"
)

// rangeSymbolizer knows the functions f at [0x401000, 0x402000) and g at
// [0x402000, 0x403000), and nothing else.
type rangeSymbolizer struct{}

func (rangeSymbolizer) Map(string, uint64) []attrib.Var { return nil }
func (rangeSymbolizer) Code(pc uint64) Source {
	switch {
	case pc >= 0x401000 && pc < 0x402000:
		return Source{Func: "f", Entry: 0x401000}
	case pc >= 0x402000 && pc < 0x403000:
		return Source{Func: "g", Entry: 0x402000}
	}
	return Source{}
}
func (rangeSymbolizer) HeapName([]uint64, uint64) (HeapSite, bool) { return HeapSite{}, false }
func (rangeSymbolizer) Locals(uint64) []attrib.Local               { return nil }
func (rangeSymbolizer) Place(uint64) (string, bool)                { return "", false }
func (rangeSymbolizer) Via(uint64) (attrib.Via, uint64, uint64)    { return attrib.Direct, 0, 0 }

// TestNumaProtocolProcedureFromPC: protocol monitoring charges a miss to
// the function holding its PC, as FlashPoint did, where full monitoring
// takes the procedure of the calling context (and the PC's only outside
// every traced call); both find the stack frame a miss falls in from the
// calls (the bin locals@f), and the same misses per object.
func TestNumaProtocolProcedureFromPC(t *testing.T) {
	b := trace.NewBatch(0)
	b.AppendExt(trace.Marker, 0x10000, 0, 1, trace.Ext{Mark: trace.MarkRange, Size: 256, Name: "data"})
	b.Append(trace.Read, 0x10000, 8, 0x401010, 1) // before any call: f by its PC in both
	b.AppendExt(trace.Call, 0x401000, 0x400500, 1, trace.Ext{SP: 0x7ff000})
	b.Append(trace.Read, 0x10040, 8, 0x402010, 1)  // in g (reached without a call, e.g. a tail call) while f is on the stack
	b.Append(trace.Read, 0x7fefe0, 8, 0x401020, 1) // f's own frame
	b.Append(trace.Read, 0x20000, 8, 0x402020, 2)  // another thread, outside every call: g by its PC in both
	b.AppendExt(trace.Return, 0x400505, 0x401ff0, 1, trace.Ext{SP: 0x7ff008})
	m := numaMachine(t, 2, 2, machine.FirstTouch)
	pairs := func(opt Options) (map[[2]string]uint64, []profile.NumaEntry) {
		t.Helper()
		opt.Attribute, opt.Symbols = true, rangeSymbolizer{}
		n := numaProfile(t, m, opt, b).Numa
		out := map[[2]string]uint64{}
		for _, e := range n.Pairs {
			out[[2]string{e.Function, e.Name}] += e.Misses()
		}
		return out, n.Objects
	}
	full, fullObjs := pairs(Options{})
	proto, protoObjs := pairs(Options{Monitor: MonitorProtocol})
	wantFull := map[[2]string]uint64{{"f", "data"}: 2, {"f", "locals@f"}: 1, {"g", "<other>"}: 1}
	wantProto := map[[2]string]uint64{{"f", "data"}: 1, {"g", "data"}: 1, {"f", "locals@f"}: 1, {"g", "<other>"}: 1}
	if !reflect.DeepEqual(full, wantFull) {
		t.Errorf("full monitoring: function × object misses %v, want %v", full, wantFull)
	}
	if !reflect.DeepEqual(proto, wantProto) {
		t.Errorf("protocol monitoring: function × object misses %v, want %v", proto, wantProto)
	}
	if !reflect.DeepEqual(fullObjs, protoObjs) {
		t.Errorf("objects differ:\nfull     %+v\nprotocol %+v", fullObjs, protoObjs)
	}
}
