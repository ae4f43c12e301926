package engine

import (
	"net"

	"github.com/vishvananda/netlink"
	"github.com/zynqnet/linerate/internal/badinput"
)

// RefuseManagement refuses a port that carries the default route unless force is set:
// flooding the management port cuts the operator off.
func RefuseManagement(name string, force bool) error {
	if force {
		return nil
	}
	link, err := netlink.LinkByName(name)
	if err != nil {
		return nil
	}
	routes, err := netlink.RouteList(link, netlink.FAMILY_ALL)
	if err != nil {
		return nil
	}
	for _, r := range routes {
		if r.Dst == nil || r.Dst.IP.IsUnspecified() && isZeroMask(r.Dst.Mask) {
			return badinput.Errorf("%s carries the default route (the management port?): linerate will not flood it; use a test port, or --force", name)
		}
	}
	return nil
}

func isZeroMask(m net.IPMask) bool {
	ones, _ := m.Size()
	return ones == 0
}
