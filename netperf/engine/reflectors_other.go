//go:build !linux

package engine

import (
	"context"
	"fmt"
	"runtime"
	"time"
)

// RunReflectors runs reflectors (Linux only).
func RunReflectors(ctx context.Context, ifaces []string, _ time.Duration, _ func(string, ...any)) error {
	if len(ifaces) == 0 {
		return nil
	}
	return fmt.Errorf("reflectors: raw sockets exist only on Linux, not %s/%s", runtime.GOOS, runtime.GOARCH)
}

// CheckReflectors says reflectors are Linux's.
func CheckReflectors(string, []string) error {
	return fmt.Errorf("reflectors: raw sockets exist only on Linux, not %s/%s", runtime.GOOS, runtime.GOARCH)
}
