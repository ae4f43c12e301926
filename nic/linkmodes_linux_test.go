package nic

import (
	"reflect"
	"strings"
	"testing"

	"github.com/zynqnet/linerate/internal/nstest"
)

// TestLinkModesAlone: the live kernel's link modes read alone (ReadLinkModes, one
// request) are what Ethtool's whole answer holds, through netlink and the ioctl, and
// what ethtool says of the port's speed; a port that is not there is an error naming it.
func TestLinkModesAlone(t *testing.T) {
	nstest.Require(t)
	nstest.NeedTool(t, "ethtool")
	ns, peer := nstest.New(t), nstest.New(t)
	ns.Veth(t, "v0", "p0", peer, 1)
	for _, api := range []string{APINetlink, APIIoctl} {
		var alone, whole *LinkModes
		var missing error
		ns.Do(t, func() error {
			k, err := OpenKernel(api)
			if err != nil {
				return err
			}
			defer k.Close()
			if _, ok := k.(LinkModesReader); !ok {
				t.Errorf("%s: the live kernel reads no link modes alone", api)
			}
			if alone, err = ReadLinkModes(k, "v0"); err != nil {
				return err
			}
			et, err := k.Ethtool("v0")
			if err != nil {
				return err
			}
			whole = et.LinkModes
			_, missing = ReadLinkModes(k, "nosuch0")
			return nil
		})
		if alone == nil || !reflect.DeepEqual(alone, whole) {
			t.Errorf("%s: alone %+v, in the whole answer %+v", api, alone, whole)
		}
		if out := ns.Exec(t, "ethtool", "v0"); alone != nil && !strings.Contains(out, "Speed: 10000Mb/s") || alone != nil && alone.SpeedMbps != 10000 {
			t.Errorf("%s: speed %d Mb/s; ethtool says\n%s", api, alone.SpeedMbps, out)
		}
		if missing == nil || !strings.Contains(missing.Error(), "nosuch0") {
			t.Errorf("%s: a missing port: %v", api, missing)
		}
	}
}

// TestDriverStatsAlone: the live kernel's driver counters read alone (DriverStats) are
// the counters Ethtool's whole answer holds, and ethtool -S's names.
func TestDriverStatsAlone(t *testing.T) {
	nstest.Require(t)
	nstest.NeedTool(t, "ethtool")
	ns, peer := nstest.New(t), nstest.New(t)
	ns.Veth(t, "v0", "p0", peer, 1)
	var alone, whole Counters
	ns.Do(t, func() error {
		k, err := OpenKernel(APIAuto)
		if err != nil {
			return err
		}
		defer k.Close()
		r, ok := k.(DriverStatsReader)
		if !ok {
			t.Errorf("the live kernel reads no driver counters alone")
			return nil
		}
		if alone, err = r.DriverStats("v0"); err != nil {
			return err
		}
		et, err := k.Ethtool("v0")
		if err != nil {
			return err
		}
		whole = et.DriverStats
		return nil
	})
	names := func(c Counters) []string {
		var out []string
		for _, x := range c {
			out = append(out, x.Name)
		}
		return out
	}
	if len(alone) == 0 || !reflect.DeepEqual(names(alone), names(whole)) {
		t.Errorf("alone %v, in the whole answer %v", names(alone), names(whole))
	}
	out := ns.Exec(t, "ethtool", "-S", "v0")
	for _, n := range names(alone) {
		if !strings.Contains(out, n+":") {
			t.Errorf("%s is not in ethtool -S:\n%s", n, out)
		}
	}
}
