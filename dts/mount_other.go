//go:build !linux

package dts

import (
	"fmt"
	"runtime"
)

// MountConfigfs mounts configfs at target; only Linux has it.
func MountConfigfs(target string) error {
	return fmt.Errorf("configfs on %s/%s: linerate mounts it only on Linux", runtime.GOOS, runtime.GOARCH)
}
