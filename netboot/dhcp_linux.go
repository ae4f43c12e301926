package netboot

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/nclient4"
	"github.com/insomniacslk/dhcp/dhcpv4/server4"
)

// StationAddr is the station's IPv4 address on an interface and its subnet; an error
// that says what to do when there is none.
func StationAddr(iface string) (net.IP, *net.IPNet, error) {
	ifi, err := net.InterfaceByName(iface)
	if err != nil {
		return nil, nil, fmt.Errorf("--netboot %s: %w", iface, err)
	}
	addrs, err := ifi.Addrs()
	if err != nil {
		return nil, nil, fmt.Errorf("--netboot %s: %w", iface, err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil {
			return n.IP.To4(), &net.IPNet{IP: n.IP.Mask(n.Mask), Mask: n.Mask}, nil
		}
	}
	return nil, nil, fmt.Errorf("--netboot %s: the interface has no IPv4 address: give it the station's address on the test network (ip addr add 198.18.5.1/24 dev %s)", iface, iface)
}

// NewDHCP is a DHCP server for cfg.Iface, checked against the station's address on it;
// nothing is served until Serve.
func NewDHCP(cfg DHCPConfig) (*DHCP, error) {
	server, subnet, err := StationAddr(cfg.Iface)
	if err != nil {
		return nil, err
	}
	return newDHCP(cfg, server, subnet)
}

// Server is the station's address on the test network.
func (d *DHCP) Server() net.IP { return d.server }

// Probe asks the network for an address as a board would (from a random, locally
// administered MAC, twice within wait) and fails when any server answers: a station
// never fights a plant's DHCP server, or another station's.
func (d *DHCP) Probe(ctx context.Context, wait time.Duration) error {
	mac := make(net.HardwareAddr, 6)
	rand.Read(mac)
	mac[0] = mac[0]&^1 | 2 // unicast, locally administered
	c, err := nclient4.New(d.cfg.Iface, nclient4.WithHWAddr(mac), nclient4.WithTimeout(wait/2), nclient4.WithRetry(2))
	if err != nil {
		return fmt.Errorf("--netboot %s: probing for another DHCP server: %w", d.cfg.Iface, err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	// The broadcast flag (RFC 2131 4.1): the probe's MAC is no interface's, so an answer
	// sent to it alone would never be seen.
	offer, err := c.DiscoverOffer(ctx, dhcpv4.WithBroadcast(true), dhcpv4.WithOption(dhcpv4.OptClassIdentifier(ProbeVendor)))
	if err != nil {
		if errors.Is(err, nclient4.ErrNoResponse) || errors.Is(err, context.DeadlineExceeded) {
			return nil
		}
		return fmt.Errorf("--netboot %s: probing for another DHCP server: %w", d.cfg.Iface, err)
	}
	who := offer.ServerIdentifier()
	if who == nil {
		who = offer.ServerIPAddr
	}
	return fmt.Errorf("--netboot %s: %w (%s offered %s): a test network has one; stop that server or take another interface",
		d.cfg.Iface, ErrOtherServer, who, offer.YourIPAddr)
}

// Listen opens port 67 on the interface alone (SO_BINDTODEVICE), in the network
// namespace of the calling thread; Serve answers there.
func (d *DHCP) Listen() error {
	srv, err := server4.NewServer(d.cfg.Iface, &net.UDPAddr{Port: dhcpv4.ServerPort}, func(conn net.PacketConn, peer net.Addr, m *dhcpv4.DHCPv4) {
		if r := d.Handle(m); r != nil {
			conn.WriteTo(r.ToBytes(), peer)
		}
	})
	if err != nil {
		return fmt.Errorf("--netboot %s: DHCP: %w", d.cfg.Iface, err)
	}
	d.mu.Lock()
	d.srv = srv
	d.mu.Unlock()
	return nil
}

// Serve answers until Close (Listen first, or Serve does).
func (d *DHCP) Serve() error {
	d.mu.Lock()
	srv, closed := d.srv, d.closed
	d.mu.Unlock()
	if closed {
		return nil
	}
	if srv == nil {
		if err := d.Listen(); err != nil {
			return err
		}
		d.mu.Lock()
		srv = d.srv
		d.mu.Unlock()
	}
	err := srv.(*server4.Server).Serve()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	return err
}

// Close stops Serve.
func (d *DHCP) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	if d.srv != nil {
		return d.srv.Close()
	}
	return nil
}
