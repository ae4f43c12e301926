package nic

import (
	"errors"
	"os"
	"testing"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/genetlink/genltest"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/zynqnet/linerate/internal/nstest"
)

// TestFamilyAskedOnce: the ethtool family is asked of the kernel once and remembered; a
// kernel without it is remembered too; any other failure is asked again.
func TestFamilyAskedOnce(t *testing.T) {
	var asked int
	answer := func() ([]genetlink.Message, error) {
		return []genetlink.Message{{Data: familyReply(t, 27, 1)}}, nil
	}
	c := genltest.Dial(func(genetlink.Message, netlink.Message) ([]genetlink.Message, error) {
		asked++
		return answer()
	})
	defer c.Close()
	var fc familyCache
	for range 3 {
		f, err := fc.get(c)
		if err != nil || f.ID != 27 || f.Version != 1 {
			t.Fatalf("family = %+v, %v; want id 27 version 1", f, err)
		}
	}
	if asked != 1 {
		t.Errorf("asked %d times, want once", asked)
	}

	asked, fc = 0, familyCache{}
	answer = func() ([]genetlink.Message, error) { return nil, genltest.Error(int(unix.EBUSY)) }
	for range 2 {
		if _, err := fc.get(c); err == nil {
			t.Fatal("a failed question gave no error")
		}
	}
	if asked != 2 {
		t.Errorf("a failure other than no family: asked %d times, want 2 (not remembered)", asked)
	}

	asked, fc = 0, familyCache{}
	answer = func() ([]genetlink.Message, error) { return nil, genltest.Error(int(unix.ENOENT)) }
	for range 2 {
		if _, err := fc.get(c); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("no family: %v, want os.ErrNotExist", err)
		}
	}
	if asked != 1 {
		t.Errorf("no family: asked %d times, want once", asked)
	}
}

// familyReply is the controller's answer for a family: its name, id and version.
func familyReply(t *testing.T, id uint16, version uint32) []byte {
	t.Helper()
	ae := netlink.NewAttributeEncoder()
	ae.String(unix.CTRL_ATTR_FAMILY_NAME, unix.ETHTOOL_GENL_NAME)
	ae.Uint16(unix.CTRL_ATTR_FAMILY_ID, id)
	ae.Uint32(unix.CTRL_ATTR_VERSION, version)
	b, err := ae.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFamilyAcrossNamespaces: what remembering rests on. The family's id and version
// asked in a fresh network namespace are the ones a socket of another namespace was
// given, and ethtool netlink answers through them in both.
func TestFamilyAcrossNamespaces(t *testing.T) {
	nstest.Require(t)
	a, b := nstest.New(t), nstest.New(t)
	a.Veth(t, "va", "vb", b, 1)
	var fa, fb genetlink.Family
	for _, side := range []struct {
		ns    *nstest.NS
		iface string
		f     *genetlink.Family
	}{{a, "va", &fa}, {b, "vb", &fb}} {
		err := side.ns.Run(func() error {
			c, err := genetlink.Dial(nil)
			if err != nil {
				return err
			}
			defer c.Close()
			if *side.f, err = c.GetFamily(unix.ETHTOOL_GENL_NAME); err != nil {
				return err
			}
			e, err := dialEthnl()
			if err != nil {
				return err
			}
			defer e.Close()
			if e.family.ID != side.f.ID || e.family.Version != side.f.Version {
				return errors.New("the remembered family is not the namespace's")
			}
			_, err = e.linkModes(side.iface)
			return err
		})
		if err != nil {
			t.Fatalf("%s: %v", side.iface, err)
		}
	}
	if fa.ID != fb.ID || fa.Version != fb.Version {
		t.Errorf("family in one namespace %d v%d, in another %d v%d", fa.ID, fa.Version, fb.ID, fb.Version)
	}
}
