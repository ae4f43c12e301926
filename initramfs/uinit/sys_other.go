//go:build !linux

package main

import (
	"fmt"
	"runtime"
)

// The uinit runs on Linux only; elsewhere it builds, so go vet covers it.
func insmod(path string) error {
	return fmt.Errorf("loading modules needs Linux, not %s", runtime.GOOS)
}

func configure(cfg Config, iface string) error {
	return fmt.Errorf("configuring %s needs Linux, not %s", iface, runtime.GOOS)
}

func after(what string) { shellForever() }

func bounce(iface string) error {
	return fmt.Errorf("bouncing %s needs Linux, not %s", iface, runtime.GOOS)
}
