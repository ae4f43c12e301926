package netboot

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"
)

// DHCP answers the boards of one test network: addresses from a pool, and what U-Boot
// needs to fetch its boot script (next-server, bootfile). The sockets are
// insomniacslk/dhcp's server4; the decisions (Handle) are here, without a socket, so
// they are tested as plain data.

// BootFile is the boot script's name, the one U-Boot's distro boot asks for over DHCP
// (boot_script_dhcp in include/config_distro_bootcmd.h).
const BootFile = "boot.scr.uimg"

const (
	// offerHold is how long an offered address waits for the board's request.
	offerHold = time.Minute
	// declineHold is how long an address a board declined (another host has it) stays
	// out of the pool.
	declineHold = 10 * time.Minute
	// maxPool bounds the pool's size.
	maxPool = 1 << 16
)

// DHCPConfig is a netboot DHCP server's setting.
type DHCPConfig struct {
	// Iface is the test network's interface; the station's address on it is the
	// server's, U-Boot's serverip, and the boards' peer.
	Iface string
	// Pool is FIRST-LAST, addresses of Iface's subnet.
	Pool string
	// MACs are the MAC prefixes answered (a vendor's OUI, the line's range); none: all.
	MACs []string
	// Lease is a lease's time (default an hour).
	Lease time.Duration
	// OnLease (nil: none) is told of every lease event.
	OnLease func(Lease)
}

// Lease is one event of a board's lease: offered, bound, released, declined, or
// refused (the pool is full, or the board asked for an address the station cannot
// give).
type Lease struct {
	MAC    string // lower case, colons
	IP     net.IP
	State  string
	Vendor string // the client's class (option 60: U-Boot says "U-Boot.armv7")
	Arch   string // the client's architecture (option 93), when it says
	Host   string // option 12
	At     time.Time
	Why    string // for refused
}

// lease is an address held for a board.
type lease struct {
	ip      uint32
	bound   bool
	expires time.Time
}

// DHCP is the server's state: the network, the pool and the leases.
type DHCP struct {
	cfg         DHCPConfig
	server      net.IP
	mask        net.IPMask
	first, last uint32
	prefixes    [][]byte

	mu       sync.Mutex
	leases   map[string]*lease // by MAC
	owner    map[uint32]string // address -> MAC
	declined map[uint32]time.Time
	now      func() time.Time
	srv      interface{ Close() error } // the socket's server, while Serve runs
	closed   bool
}

// newDHCP checks cfg against the station's address on the interface (server, its
// subnet net) and builds the server's state.
func newDHCP(cfg DHCPConfig, server net.IP, subnet *net.IPNet) (*DHCP, error) {
	if cfg.Lease <= 0 {
		cfg.Lease = time.Hour
	}
	if cfg.OnLease == nil {
		cfg.OnLease = func(Lease) {}
	}
	first, last, err := parsePool(cfg.Pool, cfg.Iface, server, subnet)
	if err != nil {
		return nil, err
	}
	d := &DHCP{cfg: cfg, server: server.To4(), mask: subnet.Mask, first: first, last: last,
		leases: map[string]*lease{}, owner: map[uint32]string{}, declined: map[uint32]time.Time{}, now: time.Now}
	for _, p := range cfg.MACs {
		b, err := parseMACPrefix(p)
		if err != nil {
			return nil, err
		}
		d.prefixes = append(d.prefixes, b)
	}
	return d, nil
}

func ip4(ip net.IP) uint32 { return binary.BigEndian.Uint32(ip.To4()) }

func ipOf(n uint32) net.IP {
	ip := make(net.IP, 4)
	binary.BigEndian.PutUint32(ip, n)
	return ip
}

// parsePool reads FIRST-LAST: two addresses of the interface's subnet, neither its
// network nor broadcast address, the station's own not among them.
func parsePool(pool, iface string, server net.IP, subnet *net.IPNet) (uint32, uint32, error) {
	bad := func(why string) error {
		return fmt.Errorf("--netboot-pool %q: %s (%s is %s on %s)", pool, why, iface, (&net.IPNet{IP: server, Mask: subnet.Mask}).String(), subnet)
	}
	a, b, ok := strings.Cut(pool, "-")
	fa, fb := net.ParseIP(strings.TrimSpace(a)).To4(), net.ParseIP(strings.TrimSpace(b)).To4()
	if !ok || fa == nil || fb == nil {
		return 0, 0, bad("want FIRST-LAST, two IPv4 addresses")
	}
	if !subnet.Contains(fa) || !subnet.Contains(fb) {
		return 0, 0, bad("want addresses of the interface's subnet")
	}
	first, last := ip4(fa), ip4(fb)
	netw := ip4(subnet.IP.Mask(subnet.Mask))
	ones, bits := subnet.Mask.Size()
	bcast := netw | (1<<(bits-ones) - 1)
	switch {
	case first > last:
		return 0, 0, bad("want FIRST before LAST")
	case ones < 31 && (first == netw || last == bcast):
		return 0, 0, bad("want neither the network's nor its broadcast address")
	case last-first >= maxPool:
		return 0, 0, bad(fmt.Sprintf("want at most %d addresses", maxPool))
	case first == ip4(server) && last == first:
		return 0, 0, bad("want addresses besides the station's own")
	}
	return first, last, nil
}

// parseMACPrefix reads a MAC prefix: octets separated by ':' or '-' (00:0a:35), or hex
// digits without separators (000a35).
func parseMACPrefix(s string) ([]byte, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	var hexs string
	if strings.ContainsAny(t, ":-") {
		for _, o := range strings.FieldsFunc(t, func(r rune) bool { return r == ':' || r == '-' }) {
			if len(o) == 1 {
				o = "0" + o
			}
			hexs += o
		}
	} else {
		hexs = t
	}
	b, err := hex.DecodeString(hexs)
	if err != nil || len(b) == 0 || len(b) > 6 {
		return nil, fmt.Errorf("--netboot-macs %q: want a MAC prefix of 1 to 6 octets (00:0a:35)", s)
	}
	return b, nil
}

// allowed says whether a MAC is one the station answers.
func (d *DHCP) allowed(mac net.HardwareAddr) bool {
	if len(d.prefixes) == 0 {
		return true
	}
	for _, p := range d.prefixes {
		if len(mac) >= len(p) && string(mac[:len(p)]) == string(p) {
			return true
		}
	}
	return false
}

// Handle decides the answer to one message (nil: none) and tells OnLease what
// happened. Messages from a relay, of another hardware type, from a MAC not listed,
// or a reply are not answered.
func (d *DHCP) Handle(m *dhcpv4.DHCPv4) *dhcpv4.DHCPv4 {
	if m.OpCode != dhcpv4.OpcodeBootRequest || m.HWType != iana.HWTypeEthernet || len(m.ClientHWAddr) != 6 ||
		!m.GatewayIPAddr.IsUnspecified() && m.GatewayIPAddr != nil || !d.allowed(m.ClientHWAddr) {
		return nil
	}
	mac := m.ClientHWAddr.String()
	ev := Lease{MAC: mac, Vendor: m.ClassIdentifier(), Host: m.HostName(), At: d.now()}
	if a := m.ClientArch(); len(a) > 0 {
		ev.Arch = a[0].String()
	}
	d.mu.Lock()
	reply := d.decide(m, mac, &ev)
	d.mu.Unlock()
	if ev.State != "" {
		d.cfg.OnLease(ev)
	}
	return reply
}

// decide is Handle's decision under the lock; it fills ev.
func (d *DHCP) decide(m *dhcpv4.DHCPv4, mac string, ev *Lease) *dhcpv4.DHCPv4 {
	now := d.now()
	switch m.MessageType() {
	case dhcpv4.MessageTypeDiscover:
		ip, why := d.pick(mac, m.RequestedIPAddress(), now)
		if ip == 0 {
			ev.State, ev.Why = "refused", why
			return nil
		}
		d.hold(mac, ip, false, now.Add(offerHold))
		ev.State, ev.IP = "offered", ipOf(ip)
		return d.reply(m, dhcpv4.MessageTypeOffer, ip)
	case dhcpv4.MessageTypeRequest:
		return d.request(m, mac, ev, now)
	case dhcpv4.MessageTypeRelease:
		if l := d.leases[mac]; l != nil && l.ip == ip4orZero(m.ClientIPAddr) {
			d.free(mac)
			ev.State, ev.IP = "released", ipOf(l.ip)
		}
	case dhcpv4.MessageTypeDecline:
		if ip := ip4orZero(m.RequestedIPAddress()); ip != 0 && d.owner[ip] == mac {
			d.free(mac)
			d.declined[ip] = now.Add(declineHold)
			ev.State, ev.IP, ev.Why = "declined", ipOf(ip), "the board found the address in use"
		}
	case dhcpv4.MessageTypeInform:
		r := d.reply(m, dhcpv4.MessageTypeAck, 0)
		if r != nil {
			r.YourIPAddr = net.IPv4zero
		}
		return r
	}
	return nil
}

// request answers a DHCPREQUEST: a board taking the station's offer (server
// identifier ours), renewing, or rebooting with the address it had (no identifier).
func (d *DHCP) request(m *dhcpv4.DHCPv4, mac string, ev *Lease, now time.Time) *dhcpv4.DHCPv4 {
	if sid := m.ServerIdentifier(); sid != nil && !sid.Equal(d.server) {
		if l := d.leases[mac]; l != nil && !l.bound {
			d.free(mac) // the board took another server's offer
		}
		return nil
	}
	want := ip4orZero(m.RequestedIPAddress())
	if want == 0 {
		want = ip4orZero(m.ClientIPAddr)
	}
	ip, why := d.pick(mac, ipOf(want), now)
	if want == 0 || ip != want {
		if why == "" {
			why = fmt.Sprintf("%s is not the station's to give", ipOf(want))
		}
		ev.State, ev.IP, ev.Why = "refused", ipOf(want), why
		return d.nak(m)
	}
	d.hold(mac, ip, true, now.Add(d.cfg.Lease))
	ev.State, ev.IP = "bound", ipOf(ip)
	return d.reply(m, dhcpv4.MessageTypeAck, ip)
}

func ip4orZero(ip net.IP) uint32 {
	if ip.To4() == nil {
		return 0
	}
	return ip4(ip)
}

// pick is the address for a MAC: the one it holds, else the one it asks for when it is
// free in the pool, else the pool's first free one. 0 and why when there is none.
func (d *DHCP) pick(mac string, asked net.IP, now time.Time) (uint32, string) {
	if l := d.leases[mac]; l != nil {
		if a := ip4orZero(asked); a == 0 || a == l.ip {
			return l.ip, ""
		}
	}
	if a := ip4orZero(asked); a != 0 && d.free4(a, mac, now) {
		return a, ""
	}
	for a := d.first; ; a++ {
		if d.free4(a, mac, now) {
			return a, ""
		}
		if a == d.last {
			return 0, fmt.Sprintf("the pool %s-%s is full", ipOf(d.first), ipOf(d.last))
		}
	}
}

// free4 says whether an address of the pool can go to mac: not the station's, not
// declined lately, and held by no other board (or its hold ran out, then it is taken
// back).
func (d *DHCP) free4(a uint32, mac string, now time.Time) bool {
	if a < d.first || a > d.last || a == ip4(d.server) {
		return false
	}
	if until, ok := d.declined[a]; ok {
		if now.Before(until) {
			return false
		}
		delete(d.declined, a)
	}
	other, ok := d.owner[a]
	if !ok || other == mac {
		return true
	}
	if now.Before(d.leases[other].expires) {
		return false
	}
	d.free(other)
	return true
}

func (d *DHCP) hold(mac string, ip uint32, bound bool, until time.Time) {
	if l := d.leases[mac]; l != nil && l.ip != ip {
		delete(d.owner, l.ip)
	}
	d.leases[mac] = &lease{ip: ip, bound: bound, expires: until}
	d.owner[ip] = mac
}

func (d *DHCP) free(mac string) {
	if l := d.leases[mac]; l != nil {
		delete(d.owner, l.ip)
		delete(d.leases, mac)
	}
}

// reply is an OFFER or ACK with the options U-Boot's dhcp takes: the address, mask,
// lease time, server identifier, next-server (siaddr: U-Boot's serverip) and the boot
// file, both in the header and as options 66 and 67.
func (d *DHCP) reply(m *dhcpv4.DHCPv4, t dhcpv4.MessageType, ip uint32) *dhcpv4.DHCPv4 {
	r, err := dhcpv4.NewReplyFromRequest(m,
		dhcpv4.WithMessageType(t),
		dhcpv4.WithYourIP(ipOf(ip)),
		dhcpv4.WithServerIP(d.server),
		dhcpv4.WithOption(dhcpv4.OptServerIdentifier(d.server)),
		dhcpv4.WithOption(dhcpv4.OptSubnetMask(d.mask)),
		dhcpv4.WithOption(dhcpv4.OptIPAddressLeaseTime(d.cfg.Lease)),
		dhcpv4.WithOption(dhcpv4.OptTFTPServerName(d.server.String())),
		dhcpv4.WithOption(dhcpv4.OptBootFileName(BootFile)),
	)
	if err != nil {
		return nil
	}
	r.BootFileName = BootFile
	return r
}

func (d *DHCP) nak(m *dhcpv4.DHCPv4) *dhcpv4.DHCPv4 {
	r, err := dhcpv4.NewReplyFromRequest(m, dhcpv4.WithMessageType(dhcpv4.MessageTypeNak),
		dhcpv4.WithOption(dhcpv4.OptServerIdentifier(d.server)))
	if err != nil {
		return nil
	}
	return r
}

// Leases are the boards holding or offered an address now, by MAC.
func (d *DHCP) Leases() map[string]net.IP {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := map[string]net.IP{}
	now := d.now()
	for mac, l := range d.leases {
		if now.Before(l.expires) {
			out[mac] = ipOf(l.ip)
		}
	}
	return out
}

// ProbeWait is how long a probe listens: servers check an address is free before they
// offer it (busybox udhcpd and ISC dhcpd ping or ARP for it, a second or more).
const ProbeWait = 6 * time.Second

// ProbeVendor is a station's probe's class identifier (option 60): a station that
// answers a probe knows it for no board.
const ProbeVendor = "linerate-probe"

// ErrOtherServer is the probe's finding: another DHCP server answers on the network.
var ErrOtherServer = errors.New("another DHCP server answers")
