package nic

import (
	"fmt"

	"github.com/vishvananda/netlink"
)

// Rings, channels and coalescing are written as they are read: through ethtool netlink
// where the kernel has it (5.6 and later; a SET names only what changes), and through
// the SIOCETHTOOL ioctl (safchain/ethtool) on the ioctl path, for kernels before it
// (PetaLinux 2020's 5.4). The ioctl's read-modify-write starts from the driver's current
// values, so parameters the profile does not name stay as they are. Kernel features go
// through the ioctl on both paths: safchain/ethtool resolves feature names to the
// kernel's bits as ethtool -K does.

// SetRings implements Setter (ethtool -G).
func (k *liveKernel) SetRings(iface string, rx, tx uint32) error {
	if k.nl != nil {
		return k.nl.setRings(iface, rx, tx)
	}
	r, err := k.io.sc.GetRing(iface)
	if err != nil {
		return err
	}
	r.RxPending, r.TxPending = rx, tx
	_, err = k.io.sc.SetRing(iface, r)
	return err
}

// SetChannels implements Setter (ethtool -L); c's maximums say which kinds of channel
// the driver has.
func (k *liveKernel) SetChannels(iface string, c Channels) error {
	if k.nl != nil {
		return k.nl.setChannels(iface, c)
	}
	cur, err := k.io.sc.GetChannels(iface)
	if err != nil {
		return err
	}
	cur.RxCount, cur.TxCount, cur.OtherCount, cur.CombinedCount = c.RX, c.TX, c.Other, c.Combined
	_, err = k.io.sc.SetChannels(iface, cur)
	return err
}

// SetCoalesce implements Setter (ethtool -C) for the named parameters.
func (k *liveKernel) SetCoalesce(iface string, c Coalesce) error {
	if k.nl != nil {
		return k.nl.setCoalesce(iface, c)
	}
	cur, err := k.io.sc.GetCoalesce(iface)
	if err != nil {
		return err
	}
	fields := map[string]*uint32{
		"rx-usecs": &cur.RxCoalesceUsecs, "rx-frames": &cur.RxMaxCoalescedFrames,
		"rx-usecs-irq": &cur.RxCoalesceUsecsIrq, "rx-frames-irq": &cur.RxMaxCoalescedFramesIrq,
		"tx-usecs": &cur.TxCoalesceUsecs, "tx-frames": &cur.TxMaxCoalescedFrames,
		"tx-usecs-irq": &cur.TxCoalesceUsecsIrq, "tx-frames-irq": &cur.TxMaxCoalescedFramesIrq,
		"adaptive-rx": &cur.UseAdaptiveRxCoalesce, "adaptive-tx": &cur.UseAdaptiveTxCoalesce,
	}
	for name, v := range c {
		f, ok := fields[name]
		if !ok {
			return fmt.Errorf("coalesce parameter %q cannot be set", name)
		}
		*f = v
	}
	_, err = k.io.sc.SetCoalesce(iface, cur)
	return err
}

// SetFeatures implements Setter (ethtool -K with kernel feature names).
func (k *liveKernel) SetFeatures(iface string, want map[string]bool) error {
	return k.io.sc.Change(iface, want)
}

// SetMTU implements Setter (ip link set mtu).
func (k *liveKernel) SetMTU(iface string, mtu int) error {
	l, err := netlink.LinkByName(iface)
	if err != nil {
		return err
	}
	return netlink.LinkSetMTU(l, mtu)
}

// SetPromisc implements Setter (ip link set promisc).
func (k *liveKernel) SetPromisc(iface string, on bool) error {
	l, err := netlink.LinkByName(iface)
	if err != nil {
		return err
	}
	if on {
		return netlink.SetPromiscOn(l)
	}
	return netlink.SetPromiscOff(l)
}

// SetAdvertised implements Setter (ethtool -s IFACE advertise ... autoneg on), over
// ethtool netlink only: the ioctl's link settings are a fixed bitmap of the old modes.
func (k *liveKernel) SetAdvertised(iface string, modes []string) error {
	if k.nl == nil {
		return fmt.Errorf("%s: setting the advertised link modes needs ethtool netlink (Linux 5.6 and later)", iface)
	}
	return k.nl.setAdvertised(iface, modes)
}

// SetForced implements Setter (ethtool -s IFACE autoneg off speed S duplex D), over
// ethtool netlink only, as SetAdvertised.
func (k *liveKernel) SetForced(iface string, speedMbps int, full bool) error {
	if k.nl == nil {
		return fmt.Errorf("%s: forcing the link needs ethtool netlink (Linux 5.6 and later)", iface)
	}
	return k.nl.setForced(iface, speedMbps, full)
}

// SetAutoneg implements Setter (ethtool -s IFACE autoneg on), over ethtool netlink only.
func (k *liveKernel) SetAutoneg(iface string) error {
	if k.nl == nil {
		return fmt.Errorf("%s: turning autonegotiation on needs ethtool netlink (Linux 5.6 and later)", iface)
	}
	return k.nl.setAutoneg(iface)
}
