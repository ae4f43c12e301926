//go:build !linux

package nic

import (
	"fmt"
	"runtime"
)

// API choices for OpenKernel.
const (
	APIAuto    = "auto"
	APINetlink = "netlink"
	APIIoctl   = "ioctl"
)

// OpenKernel needs Linux: rtnetlink and ethtool exist nowhere else. Captured trees
// (OpenCaptured) still work on any OS.
func OpenKernel(api string) (Kernel, error) {
	return nil, fmt.Errorf("reading live interfaces needs Linux, this is %s/%s: use --root with a captured tree", runtime.GOOS, runtime.GOARCH)
}
