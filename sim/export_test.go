package sim

import "github.com/memspy/memspy/trace"

// SetSampledShortcuts turns sampledShortcuts on or off and returns the old
// setting. A hierarchy reads it when made (isPlain) and on every Process:
// set it before making one and keep it while that one runs.
func SetSampledShortcuts(on bool) bool {
	old := sampledShortcuts
	sampledShortcuts = on
	return old
}

// OnceReader returns a reader of b's events, once (batchReader).
func OnceReader(b *trace.Batch) trace.Reader { return &batchReader{b: b} }
