package sim

// SetSampledShortcuts turns sampledShortcuts on or off, for the
// hierarchies made from then on, and returns the old setting.
func SetSampledShortcuts(on bool) bool {
	old := sampledShortcuts
	sampledShortcuts = on
	return old
}
