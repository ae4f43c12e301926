//go:build !linux

package main

// refuseManagement: other systems have no raw-socket engine to flood anything with.
func refuseManagement(string, bool) error { return nil }
