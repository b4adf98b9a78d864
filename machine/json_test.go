package machine

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestJSON checks that a machine of one processor is written as before
// machines had several, one of several gives its processors and mapping,
// and both read back to the same machine once normalized; likewise for a
// machine of one NUMA node and one of several.
func TestJSON(t *testing.T) {
	pinned, err := Parse([]byte("mapping: pinned\npin: [0, 0]\ncaches:\n  - {name: L1, size: 1k, assoc: 1, shared: true}\n"), "pinned.yaml")
	if err != nil {
		t.Fatal(err)
	}
	numa, err := Parse([]byte("processors: 6\nnodes: 3\nplacement: interleave\npage_size: 64k\nremote_latency: 300\ncaches:\n  - {name: L1, size: 1k, assoc: 1}\n"), "numa.yaml")
	if err != nil {
		t.Fatal(err)
	}
	oneNode, err := Parse([]byte("processors: 2\nnodes: 1\ncaches:\n  - {name: L1, size: 1k, assoc: 1}\n"), "one-node.yaml")
	if err != nil {
		t.Fatal(err)
	}
	numaKeys := []string{`"nodes"`, `"placement"`, `"page_size"`, `"remote_latency"`, `"remote_dirty_latency"`}
	tests := []struct {
		m       string
		has     []string
		hasNot  []string
		machine *Machine
	}{
		{m: "x86-modern", hasNot: append([]string{`"processors"`, `"mapping"`, `"pin"`, `"shared"`}, numaKeys...)},
		{m: "memspy-par", has: []string{`"processors":16`, `"mapping":"round-robin"`}, hasNot: []string{`"pin"`, `"shared"`}},
		{m: "x86-multicore", has: []string{`"processors":8`, `"mapping":"round-robin"`, `"latency":50,"shared":true}`}},
		{m: "pinned", machine: pinned, has: []string{`"mapping":"pinned","pin":[0,0]`, `"shared":true`}, hasNot: []string{`"processors"`}},
		{m: "flashpoint", has: []string{`"processors":16,"mapping":"round-robin","nodes":8,"placement":"first-touch","page_size":4096,"remote_latency":250,"remote_dirty_latency":400}`}},
		{m: "numa", machine: numa, has: []string{`"nodes":3,"placement":"interleave","page_size":65536,"remote_latency":300,"remote_dirty_latency":300}`}},
		{m: "one node", machine: oneNode, has: []string{`"processors":2`}, hasNot: numaKeys},
	}
	for _, tt := range tests {
		m := tt.machine
		if m == nil {
			if m, err = Preset(tt.m); err != nil {
				t.Fatal(err)
			}
		}
		data, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if byValue, err := json.Marshal(*m); err != nil || string(byValue) != string(data) {
			t.Errorf("%s: by value %s, %v\nby pointer %s", tt.m, byValue, err, data)
		}
		for _, s := range tt.has {
			if !strings.Contains(string(data), s) {
				t.Errorf("%s: JSON lacks %s:\n%s", tt.m, s, data)
			}
		}
		for _, s := range tt.hasNot {
			if strings.Contains(string(data), s) {
				t.Errorf("%s: JSON has %s:\n%s", tt.m, s, data)
			}
		}
		var back Machine
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatal(err)
		}
		if err := back.Normalize(); err != nil || !reflect.DeepEqual(&back, m) {
			t.Errorf("%s: read back %v\n got %+v\nwant %+v", tt.m, err, &back, m)
		}
	}
}

// TestJSONOneNode checks that a machine of one node is written exactly as
// before machines had nodes, even with NUMA fields it keeps unused.
func TestJSONOneNode(t *testing.T) {
	m, err := Preset("memspy-par")
	if err != nil {
		t.Fatal(err)
	}
	before, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	m.Placement, m.PageSize, m.RemoteLatency, m.RemoteDirtyLatency = Interleave, 8192, 70, 80
	if err := m.Normalize(); err != nil {
		t.Fatal(err)
	}
	after, err := json.Marshal(m)
	if err != nil || string(after) != string(before) {
		t.Errorf("with unused NUMA fields: %v\n%s\nwant\n%s", err, after, before)
	}
}
