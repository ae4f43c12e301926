package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// newMessage is dhcpv4.New with a transaction ID that does not wait for the kernel's
// random pool: dhcpv4.New reads crypto/rand, whose getrandom() blocks until the CRNG is
// ready, and on an idle board with no hardware RNG (the emulated ZC702 and ZCU102) that
// is never, before any traffic. The ID only has to tell exchanges apart.
func newMessage(mods ...dhcpv4.Modifier) *dhcpv4.DHCPv4 {
	var xid dhcpv4.TransactionID
	binary.BigEndian.PutUint32(xid[:], rand.Uint32())
	d := &dhcpv4.DHCPv4{
		OpCode: dhcpv4.OpcodeBootRequest, HWType: iana.HWTypeEthernet, ClientHWAddr: make(net.HardwareAddr, 6),
		TransactionID: xid, ClientIPAddr: net.IPv4zero, YourIPAddr: net.IPv4zero,
		ServerIPAddr: net.IPv4zero, GatewayIPAddr: net.IPv4zero, Options: make(dhcpv4.Options),
	}
	for _, m := range mods {
		m(d)
	}
	return d
}

// dhcp4 leases an IPv4 address for iface and configures it, with the default route the
// server names. The exchange runs over a UDP socket on port 68 bound to the device, with
// the broadcast flag set so the server answers by broadcast: that works before the
// interface has any address. Messages are insomniacslk/dhcp's, built by newMessage.
// (u-root's dhclient hangs at boot on the same random-pool wait.)
func dhcp4(l netlink.Link, timeout time.Duration) (*net.IPNet, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.IPPROTO_UDP)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	for _, o := range []int{unix.SO_REUSEADDR, unix.SO_BROADCAST} {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, o, 1); err != nil {
			return nil, err
		}
	}
	if err := unix.BindToDevice(fd, l.Attrs().Name); err != nil {
		return nil, fmt.Errorf("bind to %s: %w", l.Attrs().Name, err)
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: dhcpv4.ClientPort}); err != nil {
		return nil, fmt.Errorf("bind port 68: %w", err)
	}
	tv := unix.NsecToTimeval(int64(2 * time.Second))
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	bcast := &unix.SockaddrInet4{Port: dhcpv4.ServerPort, Addr: [4]byte{255, 255, 255, 255}}
	exchange := func(m *dhcpv4.DHCPv4, want dhcpv4.MessageType) (*dhcpv4.DHCPv4, error) {
		buf := make([]byte, 1500)
		for try := 0; try < 3; try++ {
			if err := unix.Sendto(fd, m.ToBytes(), 0, bcast); err != nil {
				return nil, fmt.Errorf("send %s: %w", m.MessageType(), err)
			}
			deadline := time.Now().Add(timeout / 3)
			for time.Now().Before(deadline) {
				n, _, err := unix.Recvfrom(fd, buf, 0)
				if err != nil {
					continue // timeout of this read: keep waiting until the deadline
				}
				r, err := dhcpv4.FromBytes(buf[:n])
				if err != nil || r.TransactionID != m.TransactionID || r.MessageType() != want {
					continue
				}
				return r, nil
			}
		}
		return nil, fmt.Errorf("no %s from a DHCP server", want)
	}
	wanted := dhcpv4.WithRequestedOptions(dhcpv4.OptionSubnetMask, dhcpv4.OptionRouter, dhcpv4.OptionDomainName, dhcpv4.OptionDomainNameServer)
	disc := newMessage(dhcpv4.WithHwAddr(l.Attrs().HardwareAddr), wanted,
		dhcpv4.WithMessageType(dhcpv4.MessageTypeDiscover), dhcpv4.WithBroadcast(true))
	offer, err := exchange(disc, dhcpv4.MessageTypeOffer)
	if err != nil {
		return nil, err
	}
	req := newMessage(dhcpv4.WithReply(offer), dhcpv4.WithMessageType(dhcpv4.MessageTypeRequest),
		dhcpv4.WithClientIP(offer.ClientIPAddr), dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(offer.YourIPAddr)),
		dhcpv4.WithOptionCopied(offer, dhcpv4.OptionServerIdentifier), wanted, dhcpv4.WithBroadcast(true))
	ack, err := exchange(req, dhcpv4.MessageTypeAck)
	if err != nil {
		return nil, err
	}
	mask := ack.SubnetMask()
	if mask == nil {
		mask = ack.YourIPAddr.DefaultMask()
	}
	ipn := &net.IPNet{IP: ack.YourIPAddr, Mask: mask}
	if err := netlink.AddrReplace(l, &netlink.Addr{IPNet: ipn}); err != nil {
		return nil, fmt.Errorf("address %s: %w", ipn, err)
	}
	if routers := ack.Router(); len(routers) > 0 {
		r := &netlink.Route{LinkIndex: l.Attrs().Index, Gw: routers[0]}
		if err := netlink.RouteReplace(r); err != nil {
			say("default route via %s: %v", routers[0], err)
		}
	}
	if ipn.IP == nil {
		return nil, errors.New("the server offered no address")
	}
	return ipn, nil
}
