package netboot

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

// testDHCP is a server for 198.18.77.1/24 with a pool of .100-.102 and a clock the
// test moves.
func testDHCP(t *testing.T, cfg DHCPConfig) (*DHCP, *[]Lease, *time.Time) {
	t.Helper()
	if cfg.Pool == "" {
		cfg.Pool = "198.18.77.100-198.18.77.102"
	}
	cfg.Iface = "veth-st"
	var events []Lease
	cfg.OnLease = func(l Lease) { events = append(events, l) }
	_, subnet, _ := net.ParseCIDR("198.18.77.0/24")
	d, err := newDHCP(cfg, net.IPv4(198, 18, 77, 1), subnet)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1764000000, 0)
	d.now = func() time.Time { return now }
	return d, &events, &now
}

func discover(t *testing.T, mac string, mods ...dhcpv4.Modifier) *dhcpv4.DHCPv4 {
	t.Helper()
	hw, _ := net.ParseMAC(mac)
	m, err := dhcpv4.NewDiscovery(hw, mods...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func requestFor(t *testing.T, offer *dhcpv4.DHCPv4, mac string) *dhcpv4.DHCPv4 {
	t.Helper()
	m, err := dhcpv4.NewRequestFromOffer(offer)
	if err != nil {
		t.Fatal(err)
	}
	m.ClientHWAddr, _ = net.ParseMAC(mac)
	return m
}

// TestDHCPLease: a board's discover, offer, request and ack, with what U-Boot's dhcp
// takes (siaddr as serverip, the boot file in the header and option 67); the next board
// the next address; the pool full refuses with the reason; a board that comes back gets
// its address again.
func TestDHCPLease(t *testing.T) {
	d, events, _ := testDHCP(t, DHCPConfig{})
	offer := d.Handle(discover(t, "00:0a:35:00:00:01", dhcpv4.WithOption(dhcpv4.OptClassIdentifier("U-Boot.armv7"))))
	if offer == nil || offer.MessageType() != dhcpv4.MessageTypeOffer || !offer.YourIPAddr.Equal(net.IPv4(198, 18, 77, 100)) {
		t.Fatalf("offer: %v", offer)
	}
	if !offer.ServerIPAddr.Equal(net.IPv4(198, 18, 77, 1)) || offer.BootFileName != BootFile ||
		offer.GetOneOption(dhcpv4.OptionBootfileName) == nil || string(offer.GetOneOption(dhcpv4.OptionTFTPServerName)) != "198.18.77.1" ||
		!offer.ServerIdentifier().Equal(net.IPv4(198, 18, 77, 1)) || offer.SubnetMask().String() != "ffffff00" ||
		offer.IPAddressLeaseTime(0) != time.Hour {
		t.Errorf("offer lacks what U-Boot takes:\n%s", offer.Summary())
	}
	ack := d.Handle(requestFor(t, offer, "00:0a:35:00:00:01"))
	if ack == nil || ack.MessageType() != dhcpv4.MessageTypeAck || !ack.YourIPAddr.Equal(net.IPv4(198, 18, 77, 100)) || ack.BootFileName != BootFile {
		t.Fatalf("ack: %v", ack)
	}
	if len(*events) != 2 || (*events)[0].State != "offered" || (*events)[1].State != "bound" || (*events)[1].Vendor != "" || (*events)[0].Vendor != "U-Boot.armv7" {
		t.Errorf("events: %+v", *events)
	}
	o2 := d.Handle(discover(t, "00:0a:35:00:00:02"))
	o3 := d.Handle(discover(t, "00:0a:35:00:00:03"))
	if !o2.YourIPAddr.Equal(net.IPv4(198, 18, 77, 101)) || !o3.YourIPAddr.Equal(net.IPv4(198, 18, 77, 102)) {
		t.Errorf("next offers: %s %s", o2.YourIPAddr, o3.YourIPAddr)
	}
	if o4 := d.Handle(discover(t, "00:0a:35:00:00:04")); o4 != nil {
		t.Errorf("a full pool offered %s", o4.YourIPAddr)
	}
	if last := (*events)[len(*events)-1]; last.State != "refused" || !strings.Contains(last.Why, "pool 198.18.77.100-198.18.77.102 is full") {
		t.Errorf("last event %+v", last)
	}
	again := d.Handle(discover(t, "00:0a:35:00:00:01"))
	if !again.YourIPAddr.Equal(net.IPv4(198, 18, 77, 100)) {
		t.Errorf("the first board again got %s", again.YourIPAddr)
	}
	if got := d.Leases(); len(got) != 3 || !got["00:0a:35:00:00:02"].Equal(net.IPv4(198, 18, 77, 101)) {
		t.Errorf("leases %v", got)
	}
}

// TestDHCPHolds: an offer not taken in offerHold goes back to the pool; a board that
// took another server's offer frees ours; a declined address stays out for
// declineHold; a released one comes back at once; a request for an address that is not
// the station's to give is refused (NAK).
func TestDHCPHolds(t *testing.T) {
	d, events, now := testDHCP(t, DHCPConfig{Pool: "198.18.77.100-198.18.77.100"})
	d.Handle(discover(t, "00:0a:35:00:00:01"))
	if d.Handle(discover(t, "00:0a:35:00:00:02")) != nil {
		t.Fatal("a one-address pool offered twice")
	}
	*now = now.Add(offerHold + time.Second)
	o := d.Handle(discover(t, "00:0a:35:00:00:02"))
	if o == nil {
		t.Fatal("an offer past its hold was not taken back")
	}
	other := requestFor(t, o, "00:0a:35:00:00:02")
	other.UpdateOption(dhcpv4.OptServerIdentifier(net.IPv4(198, 18, 77, 9)))
	if r := d.Handle(other); r != nil {
		t.Errorf("a request to another server got %v", r)
	}
	if len(d.Leases()) != 0 {
		t.Errorf("the offer stayed after the board took another's: %v", d.Leases())
	}
	o = d.Handle(discover(t, "00:0a:35:00:00:03"))
	d.Handle(requestFor(t, o, "00:0a:35:00:00:03"))
	decline, _ := dhcpv4.New(dhcpv4.WithMessageType(dhcpv4.MessageTypeDecline), dhcpv4.WithHwAddr(mustMAC("00:0a:35:00:00:03")),
		dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(net.IPv4(198, 18, 77, 100))))
	d.Handle(decline)
	if d.Handle(discover(t, "00:0a:35:00:00:04")) != nil {
		t.Error("a declined address was offered at once")
	}
	*now = now.Add(declineHold + time.Second)
	o = d.Handle(discover(t, "00:0a:35:00:00:04"))
	if o == nil {
		t.Fatal("a declined address never came back")
	}
	d.Handle(requestFor(t, o, "00:0a:35:00:00:04"))
	release, _ := dhcpv4.New(dhcpv4.WithMessageType(dhcpv4.MessageTypeRelease), dhcpv4.WithHwAddr(mustMAC("00:0a:35:00:00:04")),
		dhcpv4.WithClientIP(net.IPv4(198, 18, 77, 100)))
	d.Handle(release)
	if d.Handle(discover(t, "00:0a:35:00:00:05")) == nil {
		t.Error("a released address was not offered")
	}
	reboot, _ := dhcpv4.New(dhcpv4.WithMessageType(dhcpv4.MessageTypeRequest), dhcpv4.WithHwAddr(mustMAC("00:0a:35:00:00:06")),
		dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(net.IPv4(10, 0, 0, 5))))
	if r := d.Handle(reboot); r == nil || r.MessageType() != dhcpv4.MessageTypeNak {
		t.Errorf("a request for 10.0.0.5: got %v, want a NAK", r)
	}
	states := []string{}
	for _, e := range *events {
		states = append(states, e.State)
	}
	want := "offered refused offered offered bound declined refused offered bound released offered refused"
	if strings.Join(states, " ") != want {
		t.Errorf("events:\n got %s\nwant %s", strings.Join(states, " "), want)
	}
}

func mustMAC(s string) net.HardwareAddr {
	hw, err := net.ParseMAC(s)
	if err != nil {
		panic(err)
	}
	return hw
}

// TestDHCPIgnores: a MAC outside --netboot-macs, a relayed request and a reply get no
// answer and no event.
func TestDHCPIgnores(t *testing.T) {
	d, events, _ := testDHCP(t, DHCPConfig{MACs: []string{"00-0A-35", "52:54:00:12"}})
	if d.Handle(discover(t, "00:0a:35:00:00:01")) == nil || d.Handle(discover(t, "52:54:00:12:34:56")) == nil {
		t.Error("a listed prefix got no offer")
	}
	relayed := discover(t, "00:0a:35:00:00:02")
	relayed.GatewayIPAddr = net.IPv4(10, 1, 1, 1)
	reply := discover(t, "00:0a:35:00:00:03")
	reply.OpCode = dhcpv4.OpcodeBootReply
	for _, m := range []*dhcpv4.DHCPv4{discover(t, "52:54:00:13:00:00"), discover(t, "00:0b:35:00:00:01"), relayed, reply} {
		if r := d.Handle(m); r != nil {
			t.Errorf("%s answered", m.ClientHWAddr)
		}
	}
	if len(*events) != 2 {
		t.Errorf("events %+v", *events)
	}
}

// TestDHCPBadConfig: pools and MAC prefixes the station cannot serve are errors naming
// the flag, the input and the interface's subnet.
func TestDHCPBadConfig(t *testing.T) {
	_, subnet, _ := net.ParseCIDR("198.18.77.0/24")
	server := net.IPv4(198, 18, 77, 1)
	for _, c := range []struct{ pool, mac, want string }{
		{"198.18.78.10-198.18.78.20", "", "want addresses of the interface's subnet"},
		{"198.18.77.10", "", "want FIRST-LAST"},
		{"198.18.77.20-198.18.77.10", "", "FIRST before LAST"},
		{"198.18.77.0-198.18.77.10", "", "broadcast"},
		{"198.18.77.200-198.18.77.255", "", "broadcast"},
		{"198.18.77.1-198.18.77.1", "", "besides the station's own"},
		{"fe80::1-fe80::2", "", "two IPv4 addresses"},
		{"198.18.77.10-198.18.77.20", "00:0a:zz", "--netboot-macs \"00:0a:zz\""},
		{"198.18.77.10-198.18.77.20", "00:11:22:33:44:55:66", "1 to 6 octets"},
	} {
		cfg := DHCPConfig{Iface: "veth-st", Pool: c.pool}
		if c.mac != "" {
			cfg.MACs = []string{c.mac}
		}
		_, err := newDHCP(cfg, server, subnet)
		if err == nil || !strings.Contains(err.Error(), c.want) || c.mac == "" && !strings.Contains(err.Error(), "198.18.77.1/24 on 198.18.77.0/24") {
			t.Errorf("%s %s: got %v, want %q", c.pool, c.mac, err, c.want)
		}
	}
}

// FuzzDHCP: any message the socket could bring is answered or not without panic, and
// an address offered is the pool's.
func FuzzDHCP(f *testing.F) {
	m, _ := dhcpv4.NewDiscovery(mustMAC("00:0a:35:00:00:01"))
	f.Add(m.ToBytes())
	f.Add(make([]byte, 300))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := dhcpv4.FromBytes(b)
		if err != nil {
			return
		}
		_, subnet, _ := net.ParseCIDR("198.18.77.0/24")
		d, _ := newDHCP(DHCPConfig{Iface: "x", Pool: "198.18.77.100-198.18.77.102"}, net.IPv4(198, 18, 77, 1), subnet)
		if r := d.Handle(m); r != nil && r.MessageType() == dhcpv4.MessageTypeOffer {
			if a := ip4(r.YourIPAddr); a < d.first || a > d.last {
				t.Fatalf("offered %s", r.YourIPAddr)
			}
		}
	})
}
