package dts

import "golang.org/x/sys/unix"

// MountConfigfs mounts configfs at target (where an init system has not).
func MountConfigfs(target string) error {
	return unix.Mount("configfs", target, "configfs", 0, "")
}
