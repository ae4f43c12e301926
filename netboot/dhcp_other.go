//go:build !linux

package netboot

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"time"
)

var errOS = fmt.Errorf("netboot: a station netboots boards from Linux, not %s/%s", runtime.GOOS, runtime.GOARCH)

// StationAddr is Linux's.
func StationAddr(iface string) (net.IP, *net.IPNet, error) { return nil, nil, errOS }

// NewDHCP is Linux's.
func NewDHCP(cfg DHCPConfig) (*DHCP, error) { return nil, errOS }

// Server is Linux's.
func (d *DHCP) Server() net.IP { return d.server }

// Probe is Linux's.
func (d *DHCP) Probe(ctx context.Context, wait time.Duration) error { return errOS }

// Listen is Linux's.
func (d *DHCP) Listen() error { return errOS }

// Serve is Linux's.
func (d *DHCP) Serve() error { return errOS }

// Close is Linux's.
func (d *DHCP) Close() error { return nil }
