//go:build !linux && !darwin

package file

// mountType is unknown on this platform.
func mountType(string) string { return "" }
