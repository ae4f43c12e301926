//go:build !linux

package iperf3

import (
	"fmt"
	"runtime"
)

// SetAffinity pins the process to a CPU: Linux only.
func SetAffinity(cpu int) error {
	return fmt.Errorf("CPU affinity needs Linux, not %s/%s", runtime.GOOS, runtime.GOARCH)
}
