package sim

// SetSampledBypass turns sampledHit on or off and returns the old setting.
func SetSampledBypass(on bool) bool {
	old := sampledBypass
	sampledBypass = on
	return old
}
