//go:build !linux

package engine

// RefuseManagement: other systems have no raw-socket engine to flood anything with.
func RefuseManagement(string, bool) error { return nil }
