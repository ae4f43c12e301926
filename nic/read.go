// Package nic reads (and, for tune, writes) one network interface: ethtool over generic
// netlink (Documentation/networking/ethtool-netlink.rst) with the SIOCETHTOOL ioctl as the
// fallback for kernels before 5.6, rtnetlink (Documentation/networking/rtnetlink... and
// include/uapi/linux/if_link.h), and sysfs/procfs under an injectable root
// (Documentation/ABI/testing/sysfs-class-net*, Documentation/networking/scaling.rst for
// RPS/XPS, Documentation/networking/napi.rst for the NAPI knobs).
//
// Reading produces plain data (Interface); callers decide and print.
package nic

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Interface flags from include/uapi/linux/if.h (portable copies, so this file builds on any
// OS).
const (
	iffUp       = 0x1
	iffLoopback = 0x8
	iffPromisc  = 0x100
	iffAllmulti = 0x200
	iffLowerUp  = 0x10000
)

// Reader reads interfaces: files under Root ("/" live), kernel answers from Kernel.
type Reader struct {
	Root   string
	Kernel Kernel
	// Recorder, when set, records every file read (linerate snapshot).
	Recorder *Recorder
}

func (r *Reader) fs() fsRoot { return fsRoot{root: r.Root, rec: r.Recorder} }

// NotFoundError is returned for an interface that does not exist.
type NotFoundError struct {
	Name string
	Have []string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("interface %q not found (have: %s)", e.Name, strings.Join(e.Have, ", "))
}

// ErrNotFound matches every NotFoundError with errors.Is.
var ErrNotFound = errors.New("interface not found")

// Is makes errors.Is(err, ErrNotFound) true.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// BadInput marks it as the user's input to fix (internal/badinput).
func (e *NotFoundError) BadInput() bool { return true }

// Names lists the interfaces Read reads when given none: all but loopback, by index.
func (r *Reader) Names() ([]string, error) {
	links, err := r.links()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range links {
		if l.RawFlags&iffLoopback == 0 {
			out = append(out, l.Name)
		}
	}
	return out, nil
}

func (r *Reader) links() ([]LinkAnswer, error) {
	links, err := r.Kernel.Links()
	if err != nil {
		return nil, fmt.Errorf("list interfaces: %w", err)
	}
	sort.SliceStable(links, func(i, j int) bool { return links[i].Index < links[j].Index })
	return links, nil
}

// named is the kernel's answer for each of the named interfaces, and their names: every
// non-loopback interface's when names is empty; a NotFoundError naming those there are
// where one is not there.
func (r *Reader) named(names []string) (map[string]LinkAnswer, []string, error) {
	links, err := r.links()
	if err != nil {
		return nil, nil, err
	}
	byName := make(map[string]LinkAnswer, len(links))
	var have []string
	for _, l := range links {
		byName[l.Name] = l
		have = append(have, l.Name)
	}
	if len(names) == 0 {
		for _, l := range links {
			if l.RawFlags&iffLoopback == 0 {
				names = append(names, l.Name)
			}
		}
	}
	for _, n := range names {
		if _, ok := byName[n]; !ok {
			return nil, nil, &NotFoundError{Name: n, Have: have}
		}
	}
	return byName, names, nil
}

// Read reads the named interfaces, or every non-loopback one when names is empty.
func (r *Reader) Read(names ...string) ([]*Interface, error) {
	byName, names, err := r.named(names)
	if err != nil {
		return nil, err
	}
	root := r.fs()
	plat, err := root.readPlatform()
	if err != nil {
		return nil, err
	}
	sysctl := root.readSysctls()
	out := make([]*Interface, 0, len(names))
	for _, n := range names {
		ifc, err := r.readOne(root, byName[n], plat, sysctl)
		if err != nil {
			return nil, err
		}
		out = append(out, ifc)
	}
	return out, nil
}

func (r *Reader) readOne(root fsRoot, l LinkAnswer, plat Platform, sysctl map[string]*string) (*Interface, error) {
	et, err := r.Kernel.Ethtool(l.Name)
	if err != nil {
		return nil, fmt.Errorf("interface %q: ethtool: %w", l.Name, err)
	}
	ifc := &Interface{
		Name:        l.Name,
		Index:       l.Index,
		Kind:        l.Kind,
		MAC:         l.MAC,
		Driver:      et.Driver,
		MTU:         l.MTU,
		MinMTU:      l.MinMTU,
		MaxMTU:      l.MaxMTU,
		NumRxQueues: l.NumRxQueues,
		NumTxQueues: l.NumTxQueues,
		Flags: Flags{
			Up:          l.RawFlags&iffUp != 0,
			LowerUp:     l.RawFlags&iffLowerUp != 0,
			Promisc:     l.RawFlags&iffPromisc != 0,
			Allmulti:    l.RawFlags&iffAllmulti != 0,
			Promiscuity: l.Promiscuity,
		},
		Channels:    et.Channels,
		Rings:       et.Rings,
		Coalesce:    et.Coalesce,
		Pause:       et.Pause,
		Features:    EthtoolFeatures(et.Features),
		Stats:       Stats{Link: l.Stats, Driver: et.DriverStats},
		NAPI:        root.readNAPI(l.Name),
		Sysctl:      sysctl,
		Platform:    plat,
		Unsupported: map[string]string{},
		EthtoolAPI:  r.Kernel.API(),
	}
	for k, v := range et.Unsupported {
		ifc.Unsupported[k] = v
	}
	switch {
	case l.PermMAC != "":
		ifc.PermMAC = &l.PermMAC
	case et.PermMAC != "":
		pm := et.PermMAC
		ifc.PermMAC = &pm
	}
	ifc.Link = Link{Carrier: ifc.Flags.LowerUp, Operstate: l.Operstate}
	if lm := et.LinkModes; lm != nil {
		if lm.SpeedMbps > 0 {
			s := lm.SpeedMbps
			ifc.Link.SpeedMbps = &s
		}
		if lm.Duplex != "" {
			d := lm.Duplex
			ifc.Link.Duplex = &d
		}
		a := lm.Autoneg
		ifc.Link.Autoneg = &a
		if lm.Port != "" {
			p := lm.Port
			ifc.Link.Port = &p
		}
		ifc.Link.Supported, ifc.Link.Advertised, ifc.Link.Partner = lm.Supported, lm.Advertised, lm.Partner
	}
	if ifc.Queues, err = root.readQueues(l.Name); err != nil {
		return nil, fmt.Errorf("interface %q: %w", l.Name, err)
	}
	if ifc.IRQs, err = root.readIRQs(l.Name); err != nil {
		return nil, fmt.Errorf("interface %q: %w", l.Name, err)
	}
	ifc.Platform.PCIe = root.readPCIe(l.Name)
	ifc.PHY = root.readPHY(l.Name)
	return ifc, nil
}
