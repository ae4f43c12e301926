//go:build !linux

package iperf3

import (
	"fmt"
	"runtime"
)

// SetAffinity pins the process to a CPU: Linux only.
func SetAffinity(cpu int) (restore func() error, err error) {
	return nil, fmt.Errorf("CPU affinity needs Linux, not %s/%s", runtime.GOOS, runtime.GOARCH)
}
