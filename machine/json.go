package machine

import "encoding/json"

// MarshalJSON implements json.Marshaler. A machine of one processor is
// written as before machines had several: without processors, and without
// mapping when it is round-robin (the defaults Normalize restores when
// such a machine is read back). A machine of several processors gives
// both.
func (m Machine) MarshalJSON() ([]byte, error) {
	type plain Machine // without the method
	p := plain(m)
	if p.Processors <= 1 {
		p.Processors = 0
		if p.Mapping == RoundRobin {
			p.Mapping = ""
		}
	}
	return json.Marshal(p)
}
