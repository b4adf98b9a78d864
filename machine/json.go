package machine

import "encoding/json"

// MarshalJSON implements json.Marshaler. A machine of one processor is
// written as before machines had several: without processors, and without
// mapping when it is round-robin (the defaults Normalize restores when
// such a machine is read back). A machine of several processors gives
// both. Likewise a machine of one NUMA node is written as before machines
// had several: without nodes, placement, page_size, remote_latency and
// remote_dirty_latency (which change nothing on one node); a machine of
// several nodes gives them all.
func (m Machine) MarshalJSON() ([]byte, error) {
	type plain Machine // without the method
	p := plain(m)
	if p.Processors <= 1 {
		p.Processors = 0
		if p.Mapping == RoundRobin {
			p.Mapping = ""
		}
	}
	if p.Nodes <= 1 {
		p.Nodes, p.Placement, p.PageSize, p.RemoteLatency, p.RemoteDirtyLatency = 0, "", 0, 0, 0
	}
	return json.Marshal(p)
}
