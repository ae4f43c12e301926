//go:build !linux

package nic

// resolveLive: only Linux's /proc says where an open path really is; elsewhere the
// caller walks the path.
func resolveLive(string) (string, bool, error) { return "", false, nil }
