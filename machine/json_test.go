package machine

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestJSON checks that a machine of one processor is written as before
// machines had several, one of several gives its processors and mapping,
// and both read back to the same machine once normalized.
func TestJSON(t *testing.T) {
	pinned, err := Parse([]byte("mapping: pinned\npin: [0, 0]\ncaches:\n  - {name: L1, size: 1k, assoc: 1, shared: true}\n"), "pinned.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		m       string
		has     []string
		hasNot  []string
		machine *Machine
	}{
		{m: "x86-modern", hasNot: []string{`"processors"`, `"mapping"`, `"pin"`, `"shared"`}},
		{m: "memspy-par", has: []string{`"processors":16`, `"mapping":"round-robin"`}, hasNot: []string{`"pin"`, `"shared"`}},
		{m: "x86-multicore", has: []string{`"processors":8`, `"mapping":"round-robin"`, `"latency":50,"shared":true}`}},
		{m: "pinned", machine: pinned, has: []string{`"mapping":"pinned","pin":[0,0]`, `"shared":true`}, hasNot: []string{`"processors"`}},
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
