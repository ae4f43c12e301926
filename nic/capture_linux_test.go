package nic

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mdlayher/netlink"
	"github.com/zynqnet/linerate/internal/nstest"
	"golang.org/x/sys/unix"
)

// TestCaptureNetlinkReplies rewrites testdata/netlink/veth-*.bin: the attribute bytes of
// real ethtool netlink replies for a veth with 2 queues, which the parser tests replay.
// It runs only when asked: LINERATE_CAPTURE_NL=1 go test -run CaptureNetlink ./nic/
func TestCaptureNetlinkReplies(t *testing.T) {
	if os.Getenv("LINERATE_CAPTURE_NL") == "" {
		t.Skip("set LINERATE_CAPTURE_NL=1 to re-capture netlink replies")
	}
	ns := nstest.New(t)
	ns.Veth(t, "cap0", "cap1", nil, 2)
	ns.Do(t, func() error {
		e, err := dialEthnl()
		if err != nil {
			return err
		}
		defer e.Close()
		save := func(name string, cmd uint8, flags uint32, extra func(*netlink.AttributeEncoder)) error {
			b, err := e.get(cmd, "cap0", flags, extra)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join("testdata/netlink", "veth-"+name+".bin"), b, 0o644)
		}
		for _, c := range []struct {
			name  string
			cmd   uint8
			flags uint32
		}{
			{"channels", unix.ETHTOOL_MSG_CHANNELS_GET, 0},
			{"linkmodes", unix.ETHTOOL_MSG_LINKMODES_GET, 0},
			{"linkinfo", unix.ETHTOOL_MSG_LINKINFO_GET, 0},
			{"features", unix.ETHTOOL_MSG_FEATURES_GET, unix.ETHTOOL_FLAG_COMPACT_BITSETS},
		} {
			if err := save(c.name, c.cmd, c.flags, nil); err != nil {
				return err
			}
		}
		return save("strset-features", unix.ETHTOOL_MSG_STRSET_GET, 0, func(ae *netlink.AttributeEncoder) {
			ae.Nested(unix.ETHTOOL_A_STRSET_STRINGSETS, func(nae *netlink.AttributeEncoder) error {
				nae.Nested(unix.ETHTOOL_A_STRINGSETS_STRINGSET, func(sae *netlink.AttributeEncoder) error {
					sae.Uint32(unix.ETHTOOL_A_STRINGSET_ID, ethSSFeatures)
					return nil
				})
				return nil
			})
		})
	})
}
