package main

import (
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// memoryLimit is the least Go memory at which memspy collects garbage
// however little the heap grew since the last collection.
const memoryLimit = 768 << 20

// limitMemory keeps the Go runtime's soft memory limit at memoryLimit, or
// a quarter above the heap live after the last collection when more than
// that is live. Collecting garbage as memory nears the limit, rather than
// only when the heap doubles, keeps a --where run's several hundred MiB
// of live state from taking twice that; a limit that follows a larger
// live heap keeps the collector from running without pause, as it does
// (up to half the CPU) while the live heap exceeds the limit. A run
// whose live state outgrows memoryLimit so takes a quarter more memory
// than that state, instead of a third more time.
func limitMemory() {
	debug.SetMemoryLimit(memoryLimit)
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	go func() {
		for range time.Tick(100 * time.Millisecond) {
			metrics.Read(live)
			if live[0].Value.Kind() == metrics.KindUint64 {
				n := live[0].Value.Uint64()
				debug.SetMemoryLimit(max(memoryLimit, int64(n+n/4)))
			}
		}
	}()
}
