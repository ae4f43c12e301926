package nic

import (
	"fmt"
	"maps"
	"slices"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// The ethtool netlink SET requests for what tune writes (Documentation/networking/
// ethtool-netlink.rst: RINGS_SET, CHANNELS_SET, COALESCE_SET). A SET carries only the
// attributes it changes: the kernel keeps every parameter not named, so no
// read-modify-write races another writer, and it answers with an acknowledgement or an
// extended error that names the attribute it refused.

// set sends one acknowledged SET request for iface: the common header (attribute 1 of
// every ethtool message), then what attrs encodes.
func (e *ethnl) set(cmd uint8, iface, what string, attrs func(*netlink.AttributeEncoder)) error {
	ae := netlink.NewAttributeEncoder()
	ae.Nested(unix.ETHTOOL_A_HEADER_UNSPEC+1, func(nae *netlink.AttributeEncoder) error {
		nae.String(unix.ETHTOOL_A_HEADER_DEV_NAME, iface)
		return nil
	})
	attrs(ae)
	b, err := ae.Encode()
	if err != nil {
		return err
	}
	_, err = e.c.Execute(genetlink.Message{Header: genetlink.Header{Command: cmd, Version: e.family.Version}, Data: b},
		e.family.ID, netlink.Request|netlink.Acknowledge)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", iface, what, err)
	}
	return nil
}

// setRings is ethtool -G IFACE rx RX tx TX.
func (e *ethnl) setRings(iface string, rx, tx uint32) error {
	return e.set(unix.ETHTOOL_MSG_RINGS_SET, iface, fmt.Sprintf("rings rx %d tx %d", rx, tx), func(ae *netlink.AttributeEncoder) {
		ae.Uint32(unix.ETHTOOL_A_RINGS_RX, rx)
		ae.Uint32(unix.ETHTOOL_A_RINGS_TX, tx)
	})
}

// setChannels is ethtool -L with the counts the driver has (a maximum of zero: a kind
// of channel it lacks, whose count the kernel refuses to be given).
func (e *ethnl) setChannels(iface string, c Channels) error {
	return e.set(unix.ETHTOOL_MSG_CHANNELS_SET, iface, fmt.Sprintf("channels rx %d tx %d other %d combined %d", c.RX, c.TX, c.Other, c.Combined), func(ae *netlink.AttributeEncoder) {
		for _, f := range []struct {
			attr     uint16
			v, limit uint32
		}{{unix.ETHTOOL_A_CHANNELS_RX_COUNT, c.RX, c.RXMax}, {unix.ETHTOOL_A_CHANNELS_TX_COUNT, c.TX, c.TXMax},
			{unix.ETHTOOL_A_CHANNELS_OTHER_COUNT, c.Other, c.OtherMax}, {unix.ETHTOOL_A_CHANNELS_COMBINED_COUNT, c.Combined, c.CombinedMax}} {
			if f.limit > 0 {
				ae.Uint32(f.attr, f.v)
			}
		}
	})
}

// setCoalesce is ethtool -C with the named parameters (ethtool -c's names).
func (e *ethnl) setCoalesce(iface string, c Coalesce) error {
	type attr struct {
		id uint16
		u8 bool
	}
	byName := map[string]attr{}
	for id, a := range coalesceAttrs {
		byName[a.name] = attr{id, a.u8}
	}
	for name := range c {
		if _, ok := byName[name]; !ok {
			return fmt.Errorf("%s: coalesce parameter %q cannot be set", iface, name)
		}
	}
	return e.set(unix.ETHTOOL_MSG_COALESCE_SET, iface, fmt.Sprintf("coalesce %v", map[string]uint32(c)), func(ae *netlink.AttributeEncoder) {
		for _, name := range slices.Sorted(maps.Keys(c)) {
			if a := byName[name]; a.u8 {
				ae.Uint8(a.id, uint8(min(c[name], 1)))
			} else {
				ae.Uint32(a.id, c[name])
			}
		}
	})
}
