package nic

import (
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/zynqnet/linerate/internal/nstest"
)

// TestLinkOfOneLink: the live kernel's answer for one link (one RTM_GETLINK by name) is
// its entry in the dump of every link, for a veth, a bridge, a tap and lo
// (kinds, MACs, MTUs and their bounds, flags, queues, statistics after traffic); a
// name that is not there is a NotFoundError naming those that are; a captured kernel,
// which answers only Links, gives the same through LinkOf.
func TestLinkOfOneLink(t *testing.T) {
	nstest.Require(t)
	ns, peer := nstest.New(t), nstest.New(t)
	ns.Veth(t, "v0", "p0", peer, 2)
	ns.Exec(t, "ip", "link", "add", "br0", "type", "bridge")
	ns.Exec(t, "ip", "tuntap", "add", "tap0", "mode", "tap")
	ns.Exec(t, "ip", "link", "set", "lo", "up")
	ns.Exec(t, "ip", "addr", "add", "198.18.9.1/24", "dev", "v0")
	peer.Exec(t, "ip", "addr", "add", "198.18.9.2/24", "dev", "p0")
	// Traffic first, then both reads: the counters the two compare have moved and stay.
	ns.Try("ping", "-c", "3", "-i", "0.2", "198.18.9.2")
	ns.Exec(t, "ip", "link", "set", "v0", "down")
	ns.Do(t, func() error {
		k, err := OpenKernel(APIAuto)
		if err != nil {
			return err
		}
		defer k.Close()
		all, err := k.Links()
		if err != nil {
			return err
		}
		var names []string
		for _, want := range all {
			names = append(names, want.Name)
			got, err := LinkOf(k, want.Name)
			if err != nil {
				t.Errorf("%s: %v", want.Name, err)
				continue
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s alone:\n%+v\nin the dump:\n%+v", want.Name, got, want)
			}
		}
		for _, n := range []string{"v0", "br0", "tap0", "lo"} {
			if !slices.Contains(names, n) {
				t.Errorf("the dump has %v, not %s", names, n)
			}
		}
		v0, _ := LinkOf(k, "v0")
		if v0.Kind != "veth" || v0.Stats.TXPackets == 0 || v0.NumTxQueues != 2 {
			t.Errorf("v0: kind %q, %d packets sent, %d TX queues; want veth, the pings, 2", v0.Kind, v0.Stats.TXPackets, v0.NumTxQueues)
		}
		_, err = LinkOf(k, "nothere0")
		var nf *NotFoundError
		if !errors.As(err, &nf) || nf.Name != "nothere0" || !slices.Contains(nf.Have, "v0") {
			t.Errorf("a name not there: %v, want a NotFoundError naming v0 among those there", err)
		}
		c := NewCapturedKernel(&Captured{Links: all})
		if got, err := LinkOf(c, "br0"); err != nil || got.Name != "br0" || got.Kind != "bridge" {
			t.Errorf("through a captured kernel: %+v, %v", got, err)
		}
		return nil
	})
}
