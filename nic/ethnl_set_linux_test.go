package nic

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/genetlink/genltest"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/zynqnet/linerate/internal/nstest"
)

// TestSetRequests: rings, channels and coalescing on the wire as the kernel's rings.c,
// channels.c and coalesce.c read them: an acknowledged SET naming the device and only
// the attributes that change (a channel kind the driver lacks is not named, a boolean
// parameter is a u8); the kernel's refusal comes back naming what was asked.
func TestSetRequests(t *testing.T) {
	fam := genetlink.Family{ID: 0x1c, Version: 1, Name: unix.ETHTOOL_GENL_NAME}
	var got []string
	c := genltest.Dial(genltest.ServeFamily(fam, func(greq genetlink.Message, nreq netlink.Message) ([]genetlink.Message, error) {
		if len(nreq.Data) == 0 {
			return nil, nil
		}
		if nreq.Header.Flags&netlink.Acknowledge == 0 {
			t.Error("a set without an acknowledgement: its error would be lost")
		}
		ad, err := netlink.NewAttributeDecoder(greq.Data)
		if err != nil {
			t.Fatal(err)
		}
		line := strconv.Itoa(int(greq.Header.Command))
		for ad.Next() {
			switch {
			case ad.Type() == 1: // the header
				ad.Nested(func(h *netlink.AttributeDecoder) error {
					for h.Next() {
						if h.Type() == unix.ETHTOOL_A_HEADER_DEV_NAME {
							line += " dev=" + h.String()
						}
					}
					return nil
				})
			case greq.Header.Command == unix.ETHTOOL_MSG_COALESCE_SET && ad.Type() == unix.ETHTOOL_A_COALESCE_USE_ADAPTIVE_RX:
				line += " " + strconv.Itoa(int(ad.Type())) + "=u8:" + strconv.Itoa(int(ad.Uint8()))
			default:
				line += " " + strconv.Itoa(int(ad.Type())) + "=" + strconv.Itoa(int(ad.Uint32()))
			}
		}
		got = append(got, line)
		if strings.Contains(line, "=8193") {
			return nil, genltest.Error(int(unix.EINVAL))
		}
		return nil, genltest.Error(0)
	}))
	defer c.Close()
	e := &ethnl{c: c, family: fam}
	if err := e.setRings("eth0", 4096, 1024); err != nil {
		t.Fatal(err)
	}
	if err := e.setChannels("eth1", Channels{RX: 2, TX: 1, RXMax: 2, TXMax: 2}); err != nil {
		t.Fatal(err)
	}
	if err := e.setCoalesce("eth2", Coalesce{"rx-usecs": 50, "adaptive-rx": 1}); err != nil {
		t.Fatal(err)
	}
	if err := e.setCoalesce("eth2", Coalesce{"rx-nonsense": 1}); err == nil || !strings.Contains(err.Error(), `"rx-nonsense" cannot be set`) {
		t.Errorf("an unknown parameter: %v", err)
	}
	if err := e.setRings("eth0", 8193, 512); err == nil || !strings.Contains(err.Error(), "eth0: rings rx 8193 tx 512") {
		t.Errorf("a refused set: %v", err)
	}
	n := func(v int) string { return strconv.Itoa(v) }
	want := []string{
		n(unix.ETHTOOL_MSG_RINGS_SET) + " dev=eth0 " + n(unix.ETHTOOL_A_RINGS_RX) + "=4096 " + n(unix.ETHTOOL_A_RINGS_TX) + "=1024",
		n(unix.ETHTOOL_MSG_CHANNELS_SET) + " dev=eth1 " + n(unix.ETHTOOL_A_CHANNELS_RX_COUNT) + "=2 " + n(unix.ETHTOOL_A_CHANNELS_TX_COUNT) + "=1",
		n(unix.ETHTOOL_MSG_COALESCE_SET) + " dev=eth2 " + n(unix.ETHTOOL_A_COALESCE_USE_ADAPTIVE_RX) + "=u8:1 " + n(unix.ETHTOOL_A_COALESCE_RX_USECS) + "=50",
		n(unix.ETHTOOL_MSG_RINGS_SET) + " dev=eth0 " + n(unix.ETHTOOL_A_RINGS_RX) + "=8193 " + n(unix.ETHTOOL_A_RINGS_TX) + "=512",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("requests\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestSetBothPaths: the host kernel's own drivers take channels (veth) and coalescing
// (tun's rx-frames) through ethtool netlink and through the ioctl; each write reads back
// the same through both APIs and through ethtool -l and -c.
func TestSetBothPaths(t *testing.T) {
	nstest.Require(t)
	nstest.NeedTool(t, "ethtool")
	ns, peer := nstest.New(t), nstest.New(t)
	ns.Veth(t, "v0", "p0", peer, 2)
	ns.Exec(t, "ip", "tuntap", "add", "dev", "t0", "mode", "tap")
	for i, api := range []string{APINetlink, APIIoctl} {
		var chans *Channels
		var co Coalesce
		ns.Do(t, func() error {
			k, err := OpenKernel(api)
			if err != nil {
				return err
			}
			defer k.Close()
			s := k.(Setter)
			et, err := k.Ethtool("v0")
			if err != nil {
				return err
			}
			c := *et.Channels
			c.RX, c.TX = uint32(2-i), uint32(1+i)
			if err := s.SetChannels("v0", c); err != nil {
				return err
			}
			if err := s.SetCoalesce("t0", Coalesce{"rx-frames": uint32(8 + i)}); err != nil {
				return err
			}
			// Read back through the other API.
			other, err := OpenKernel(map[string]string{APINetlink: APIIoctl, APIIoctl: APINetlink}[api])
			if err != nil {
				return err
			}
			defer other.Close()
			if et, err = other.Ethtool("v0"); err != nil {
				return err
			}
			chans = et.Channels
			tap, err := other.Ethtool("t0")
			if err != nil {
				return err
			}
			co = tap.Coalesce
			return nil
		})
		if chans == nil || chans.RX != uint32(2-i) || chans.TX != uint32(1+i) {
			t.Errorf("%s: channels read back %+v", api, chans)
		}
		if co["rx-frames"] != uint32(8+i) {
			t.Errorf("%s: coalescing read back %v", api, co)
		}
		l := ns.Exec(t, "ethtool", "-l", "v0")
		cur := l[strings.Index(l, "Current hardware settings:"):]
		if !strings.Contains(cur, "RX:\t\t"+strconv.Itoa(2-i)) || !strings.Contains(cur, "TX:\t\t"+strconv.Itoa(1+i)) {
			t.Errorf("%s: ethtool -l says\n%s", api, cur)
		}
		if c := ns.Exec(t, "ethtool", "-c", "t0"); !strings.Contains(c, "rx-frames: "+strconv.Itoa(8+i)+"\n") {
			t.Errorf("%s: ethtool -c says\n%s", api, c)
		}
	}
}
