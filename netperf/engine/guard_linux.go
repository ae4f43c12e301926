package engine

import (
	"fmt"
	"net"
	"sort"

	"github.com/vishvananda/netlink"
	"github.com/zynqnet/linerate/internal/badinput"
	"golang.org/x/sys/unix"
)

// RefuseManagement refuses a port that carries a default route unless force is set:
// flooding the management port cuts the operator off. A default route counts whatever
// routing table holds it (policy routing), through every next hop of a multipath route,
// and through any device the port's traffic rides on: the bridge or bond it is enslaved
// to (and their masters), and the VLAN and macvlan devices on top of it.
func RefuseManagement(name string, force bool) error {
	if force {
		return nil
	}
	link, err := netlink.LinkByName(name)
	if err != nil {
		return nil // the lookup before this names a missing port
	}
	links, err := netlink.LinkList()
	if err != nil {
		return nil
	}
	related := relatedLinks(link, links)
	routes, err := netlink.RouteListFiltered(netlink.FAMILY_ALL, &netlink.Route{Table: unix.RT_TABLE_UNSPEC}, netlink.RT_FILTER_TABLE)
	if err != nil {
		return nil
	}
	for _, r := range routes {
		if r.Dst != nil && !(r.Dst.IP.IsUnspecified() && isZeroMask(r.Dst.Mask)) {
			continue
		}
		for _, idx := range routeLinks(r) {
			if via, ok := related[idx]; ok {
				return badinput.Errorf("%s carries the default route%s%s (the management port?): linerate will not flood it; use a test port, or --force", name, via, tableText(r.Table))
			}
		}
	}
	return nil
}

// relatedLinks maps the index of every device whose default route would ride on port
// to how it relates to it ("" for the port itself, " through its bridge br0", ...).
func relatedLinks(port netlink.Link, links []netlink.Link) map[int]string {
	byIndex := map[int]netlink.Link{}
	for _, l := range links {
		byIndex[l.Attrs().Index] = l
	}
	related := map[int]string{port.Attrs().Index: ""}
	queue := []int{port.Attrs().Index}
	for len(queue) > 0 {
		idx := queue[0]
		queue = queue[1:]
		add := func(l netlink.Link, how string) {
			if _, seen := related[l.Attrs().Index]; !seen {
				related[l.Attrs().Index] = fmt.Sprintf(" through its %s %s", how, l.Attrs().Name)
				queue = append(queue, l.Attrs().Index)
			}
		}
		if m, ok := byIndex[byIndex[idx].Attrs().MasterIndex]; ok && byIndex[idx].Attrs().MasterIndex != 0 {
			add(m, m.Type()) // bridge, bond, team, vrf
		}
		for _, l := range links {
			if l.Attrs().ParentIndex == idx && l.Attrs().Index != idx {
				add(l, l.Type()) // vlan, macvlan, ipvlan
			}
		}
	}
	return related
}

// routeLinks lists the devices a route sends through: its own, or each next hop's.
func routeLinks(r netlink.Route) []int {
	out := []int{r.LinkIndex}
	for _, nh := range r.MultiPath {
		out = append(out, nh.LinkIndex)
	}
	sort.Ints(out)
	return out
}

func tableText(t int) string {
	switch t {
	case unix.RT_TABLE_MAIN, unix.RT_TABLE_UNSPEC:
		return ""
	case unix.RT_TABLE_LOCAL:
		return " in table local"
	}
	return fmt.Sprintf(" in routing table %d", t)
}

func isZeroMask(m net.IPMask) bool {
	ones, _ := m.Size()
	return ones == 0
}
