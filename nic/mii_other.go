//go:build !linux

package nic

import (
	"errors"
	"runtime"
)

// MII is Linux's MII ioctl; elsewhere there is none.
type MII struct{ Iface string }

// ErrNoMII is an interface without MII access.
var ErrNoMII = errors.New("no MII access to a PHY")

// OpenMII says MII is Linux's.
func OpenMII(iface string) (*MII, error) {
	return nil, errors.New("MII access is Linux's, not " + runtime.GOOS + "/" + runtime.GOARCH)
}

// OpenPHY says MII is Linux's.
func OpenPHY(iface string) (*MII, int, error) {
	_, err := OpenMII(iface)
	return nil, 0, err
}

func (m *MII) Close() error                        { return nil }
func (m *MII) Address() (int, error)               { return 0, ErrNoMII }
func (m *MII) Read(addr, reg int) (uint16, error)  { return 0, ErrNoMII }
func (m *MII) Write(addr, reg int, v uint16) error { return ErrNoMII }
func (m *MII) Registers() (Registers, error)       { return Registers{}, ErrNoMII }
