package nic

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/genetlink/genltest"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

func reply(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/netlink/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The veth-*.bin replies were captured from kernel 6.18 (TestCaptureNetlinkReplies); the
// expected values are what ethtool -l/-k and ethtool IFACE print for the same veth.
func TestParseCapturedVethReplies(t *testing.T) {
	ch, err := parseChannels(reply(t, "veth-channels.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Channels{RX: 2, TX: 2, RXMax: 2, TXMax: 2}); *ch != want {
		t.Errorf("channels = %+v, want %+v", *ch, want)
	}
	lm, err := parseLinkModes(reply(t, "veth-linkmodes.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if lm.SpeedMbps != 10000 || lm.Duplex != "full" || lm.Autoneg || len(lm.Supported) != 0 {
		t.Errorf("link modes = %+v, want 10000 full, autoneg off, none supported", lm)
	}
	if p := parseLinkInfoPort(reply(t, "veth-linkinfo.bin")); p != "Twisted Pair" {
		t.Errorf("port = %q, ethtool says Twisted Pair", p)
	}
	names, err := parseStrset(reply(t, "veth-strset-features.bin"), ethSSFeatures)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) < 60 || names[0] != "tx-scatter-gather" || names[2] != "" {
		t.Errorf("feature names = %d, first %q, third %q", len(names), names[0], names[2])
	}
	raw, err := parseFeatures(reply(t, "veth-features.bin"), names)
	if err != nil {
		t.Fatal(err)
	}
	fs := EthtoolFeatures(raw)
	for name, want := range map[string]Feature{
		"rx-checksumming":         {On: true},
		"tx-checksum-ipv4":        {On: false, Fixed: true, Group: "tx-checksumming"},
		"tx-checksum-ip-generic":  {On: true, Group: "tx-checksumming"},
		"generic-receive-offload": {On: false},
		"large-receive-offload":   {On: false, Fixed: true},
		"highdma":                 {On: true},
	} {
		got, ok := fs.Get(name)
		got.Name = ""
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %+v (found %v), want %+v", name, got, ok, want)
		}
	}
}

// macb's answers, encoded as its driver fills them (drivers/net/ethernet/cadence/macb_main.c
// macb_get_ringparam: max 8192/4096, default 512/512; EMULATION.md reads the same from
// macb under QEMU). Coalesce and pause replies are shaped as the kernel's coalesce.c and
// pause.c put them for a driver that has the operations (igb's rx/tx-usecs).
func TestParseRingsCoalescePause(t *testing.T) {
	enc := func(fn func(ae *netlink.AttributeEncoder)) []byte {
		ae := netlink.NewAttributeEncoder()
		ae.Nested(unix.ETHTOOL_A_RINGS_HEADER, func(nae *netlink.AttributeEncoder) error {
			nae.Uint32(unix.ETHTOOL_A_HEADER_DEV_INDEX, 2)
			nae.String(unix.ETHTOOL_A_HEADER_DEV_NAME, "eth0")
			return nil
		})
		fn(ae)
		b, err := ae.Encode()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	r, err := parseRings(enc(func(ae *netlink.AttributeEncoder) {
		ae.Uint32(unix.ETHTOOL_A_RINGS_RX_MAX, 8192)
		ae.Uint32(unix.ETHTOOL_A_RINGS_TX_MAX, 4096)
		ae.Uint32(unix.ETHTOOL_A_RINGS_RX, 512)
		ae.Uint32(unix.ETHTOOL_A_RINGS_TX, 512)
	}))
	if err != nil || *r != (Rings{RX: 512, TX: 512, RXMax: 8192, TXMax: 4096}) {
		t.Errorf("rings = %+v, %v", r, err)
	}
	c, err := parseCoalesce(enc(func(ae *netlink.AttributeEncoder) {
		ae.Uint32(unix.ETHTOOL_A_COALESCE_RX_USECS, 3)
		ae.Uint32(unix.ETHTOOL_A_COALESCE_TX_USECS, 3)
		ae.Uint8(unix.ETHTOOL_A_COALESCE_USE_ADAPTIVE_RX, 1)
	}))
	if err != nil || !reflect.DeepEqual(c, Coalesce{"rx-usecs": 3, "tx-usecs": 3, "adaptive-rx": 1}) {
		t.Errorf("coalesce = %v, %v", c, err)
	}
	p, err := parsePause(enc(func(ae *netlink.AttributeEncoder) {
		ae.Uint8(unix.ETHTOOL_A_PAUSE_AUTONEG, 1)
		ae.Uint8(unix.ETHTOOL_A_PAUSE_RX, 1)
		ae.Uint8(unix.ETHTOOL_A_PAUSE_TX, 0)
	}))
	if err != nil || *p != (Pause{Autoneg: true, RX: true}) {
		t.Errorf("pause = %+v, %v", p, err)
	}
}

// TestEthnlRequest checks the request on the wire: command, family version, the request
// header with the device name, and how a driver's EOPNOTSUPP comes back.
func TestEthnlRequest(t *testing.T) {
	fam := genetlink.Family{ID: 0x1c, Version: 1, Name: unix.ETHTOOL_GENL_NAME}
	rings := reply(t, "veth-channels.bin") // any valid attribute set will do as a reply body
	c := genltest.Dial(genltest.ServeFamily(fam, func(greq genetlink.Message, _ netlink.Message) ([]genetlink.Message, error) {
		if greq.Header.Version != 1 {
			t.Errorf("request version %d", greq.Header.Version)
		}
		ad, err := netlink.NewAttributeDecoder(greq.Data)
		if err != nil {
			t.Fatal(err)
		}
		var dev string
		for ad.Next() {
			if ad.Type() == 1 {
				ad.Nested(func(nad *netlink.AttributeDecoder) error {
					for nad.Next() {
						if nad.Type() == unix.ETHTOOL_A_HEADER_DEV_NAME {
							dev = nad.String()
						}
					}
					return nil
				})
			}
		}
		if dev != "eth0" {
			t.Errorf("request names device %q", dev)
		}
		switch greq.Header.Command {
		case unix.ETHTOOL_MSG_CHANNELS_GET:
			return []genetlink.Message{{Header: genetlink.Header{Command: unix.ETHTOOL_MSG_CHANNELS_GET_REPLY, Version: 1}, Data: rings}}, nil
		case unix.ETHTOOL_MSG_RINGS_GET:
			return nil, genltest.Error(int(unix.EOPNOTSUPP))
		}
		t.Errorf("unexpected command %d", greq.Header.Command)
		return nil, genltest.Error(int(unix.EINVAL))
	}))
	defer c.Close()
	e := &ethnl{c: c, family: fam}
	ch, err := e.channels("eth0")
	if err != nil || ch.RXMax != 2 {
		t.Errorf("channels = %+v, %v", ch, err)
	}
	if _, err := e.rings("eth0"); !notSupported(err) {
		t.Errorf("rings on a driver without them: %v, want EOPNOTSUPP", err)
	} else if reason(err, "macb") != "not supported by macb" {
		t.Errorf("reason = %q", reason(err, "macb"))
	}
	if notSupported(errors.New("other")) {
		t.Error("notSupported(other error) = true")
	}
}

// FuzzParseNetlink feeds arbitrary attribute bytes to every ethtool netlink reply parser:
// they may fail, never panic.
func FuzzParseNetlink(f *testing.F) {
	for _, n := range []string{"veth-channels.bin", "veth-linkmodes.bin", "veth-linkinfo.bin", "veth-features.bin", "veth-strset-features.bin"} {
		b, err := os.ReadFile("testdata/netlink/" + n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		parseRings(b)
		parseChannels(b)
		parseCoalesce(b)
		parsePause(b)
		parseLinkModes(b)
		parseLinkInfoPort(b)
		names, _ := parseStrset(b, ethSSFeatures)
		parseFeatures(b, names)
		parseFeatures(b, []string{"a", "b"})
	})
}

// TestSetAdvertisedRequest: the speed matrix's write and its restore on the wire, as the
// kernel's linkmodes.c reads them: autoneg on, and a verbose NOMASK bitset naming exactly
// the modes (others cleared).
func TestSetAdvertisedRequest(t *testing.T) {
	fam := genetlink.Family{ID: 0x1c, Version: 1, Name: unix.ETHTOOL_GENL_NAME}
	var got [][]string
	c := genltest.Dial(genltest.ServeFamily(fam, func(greq genetlink.Message, nreq netlink.Message) ([]genetlink.Message, error) {
		if len(nreq.Data) == 0 {
			return nil, nil // nltest asking for more after the acknowledgement: nothing
		}
		if greq.Header.Command != unix.ETHTOOL_MSG_LINKMODES_SET {
			t.Errorf("command %d, want LINKMODES_SET", greq.Header.Command)
		}
		if nreq.Header.Flags&netlink.Acknowledge == 0 {
			t.Error("a set without an acknowledgement: its error would be lost")
		}
		ad, err := netlink.NewAttributeDecoder(greq.Data)
		if err != nil {
			t.Fatal(err)
		}
		var modes []string
		autoneg, nomask := false, false
		for ad.Next() {
			switch ad.Type() {
			case unix.ETHTOOL_A_LINKMODES_AUTONEG:
				autoneg = ad.Uint8() == 1
			case unix.ETHTOOL_A_LINKMODES_OURS:
				ad.Nested(func(b *netlink.AttributeDecoder) error {
					for b.Next() {
						switch b.Type() {
						case unix.ETHTOOL_A_BITSET_NOMASK:
							nomask = true
						case unix.ETHTOOL_A_BITSET_BITS:
							b.Nested(func(bits *netlink.AttributeDecoder) error {
								for bits.Next() {
									bits.Nested(func(bit *netlink.AttributeDecoder) error {
										for bit.Next() {
											if bit.Type() == unix.ETHTOOL_A_BITSET_BIT_NAME {
												modes = append(modes, bit.String())
											}
										}
										return nil
									})
								}
								return nil
							})
						}
					}
					return nil
				})
			}
		}
		if !autoneg || !nomask {
			t.Errorf("autoneg %v nomask %v: want both", autoneg, nomask)
		}
		got = append(got, modes)
		if len(modes) == 1 && modes[0] == "10baseT/Half" {
			return nil, genltest.Error(int(unix.EINVAL))
		}
		return nil, genltest.Error(0) // the kernel's acknowledgement
	}))
	defer c.Close()
	e := &ethnl{c: c, family: fam}
	orig := []string{"10baseT/Half", "10baseT/Full", "100baseT/Half", "100baseT/Full", "1000baseT/Full"}
	if err := e.setAdvertised("eth0", []string{"100baseT/Full"}); err != nil {
		t.Fatal(err)
	}
	if err := e.setAdvertised("eth0", orig); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !reflect.DeepEqual(got[0], []string{"100baseT/Full"}) || !reflect.DeepEqual(got[1], orig) {
		t.Errorf("requests %v", got)
	}
	if err := e.setAdvertised("eth0", []string{"10baseT/Half"}); err == nil || !strings.Contains(err.Error(), "advertise [10baseT/Half]") {
		t.Errorf("a refused set: %v", err)
	}
}

// setForced asks for autonegotiation off with the speed and duplex, and nothing else
// (no link-mode bitset: the kernel keeps the advertisement for when autonegotiation
// comes back); setAutoneg for autonegotiation on alone.
func TestSetForcedRequest(t *testing.T) {
	fam := genetlink.Family{ID: 0x1c, Version: 1, Name: unix.ETHTOOL_GENL_NAME}
	type req struct {
		dev           string
		autoneg, dplx int
		speed         uint32
		hasOurs       bool
	}
	var got []req
	c := genltest.Dial(genltest.ServeFamily(fam, func(greq genetlink.Message, nreq netlink.Message) ([]genetlink.Message, error) {
		if len(nreq.Data) == 0 {
			return nil, nil
		}
		if greq.Header.Command != unix.ETHTOOL_MSG_LINKMODES_SET || nreq.Header.Flags&netlink.Acknowledge == 0 {
			t.Errorf("command %d flags %v: want an acknowledged LINKMODES_SET", greq.Header.Command, nreq.Header.Flags)
		}
		ad, err := netlink.NewAttributeDecoder(greq.Data)
		if err != nil {
			t.Fatal(err)
		}
		r := req{autoneg: -1, dplx: -1}
		for ad.Next() {
			switch ad.Type() {
			case unix.ETHTOOL_A_LINKMODES_HEADER:
				ad.Nested(func(h *netlink.AttributeDecoder) error {
					for h.Next() {
						if h.Type() == unix.ETHTOOL_A_HEADER_DEV_NAME {
							r.dev = h.String()
						}
					}
					return nil
				})
			case unix.ETHTOOL_A_LINKMODES_AUTONEG:
				r.autoneg = int(ad.Uint8())
			case unix.ETHTOOL_A_LINKMODES_SPEED:
				r.speed = ad.Uint32()
			case unix.ETHTOOL_A_LINKMODES_DUPLEX:
				r.dplx = int(ad.Uint8())
			case unix.ETHTOOL_A_LINKMODES_OURS:
				r.hasOurs = true
			}
		}
		got = append(got, r)
		if r.speed == 10 {
			return nil, genltest.Error(int(unix.EOPNOTSUPP))
		}
		return nil, genltest.Error(0)
	}))
	defer c.Close()
	e := &ethnl{c: c, family: fam}
	if err := e.setForced("eth0", 1000, true); err != nil {
		t.Fatal(err)
	}
	if err := e.setForced("eth0", 100, false); err != nil {
		t.Fatal(err)
	}
	if err := e.setAutoneg("eth0"); err != nil {
		t.Fatal(err)
	}
	want := []req{{"eth0", 0, 1, 1000, false}, {"eth0", 0, 0, 100, false}, {"eth0", 1, -1, 0, false}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("requests %+v, want %+v", got, want)
	}
	if err := e.setForced("eth0", 10, false); err == nil || !strings.Contains(err.Error(), "eth0: autoneg off, speed 10, duplex half") {
		t.Errorf("a refused set: %v", err)
	}
}
