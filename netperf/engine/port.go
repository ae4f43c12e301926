// Package engine puts the raw-socket rings (netperf/rawsock) to work on a port: the port
// looked up and checked before anything is sent (Ethernet address, up, link speed, MTU,
// not the management port), the reflector, and RFC 2544 trials. The commands gen, sink,
// reflect and rfc2544, the station and validate's frames step share it.
package engine

import (
	"fmt"
	"net"
	"strconv"

	"github.com/zynqnet/linerate/internal/badinput"
	"github.com/zynqnet/linerate/netperf/frames"
	"github.com/zynqnet/linerate/nic"
)

// Port is what the engine needs to know of an interface, checked before sending.
type Port struct {
	Name     string
	MAC      net.HardwareAddr
	MTU      int
	LinkMbps int
}

// LookupPort finds the interface, checks it can carry test frames, and takes its link
// speed from root's sysfs (root "/" live) unless linkMbps gives it. An unknown interface
// is nic's *NotFoundError naming the ones there are.
func LookupPort(root, name string, linkMbps int) (*Port, error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		var have []string
		if all, err := net.Interfaces(); err == nil {
			for _, i := range all {
				have = append(have, i.Name)
			}
		}
		return nil, &nic.NotFoundError{Name: name, Have: have}
	}
	p := &Port{Name: name, MAC: ifi.HardwareAddr, MTU: ifi.MTU, LinkMbps: linkMbps}
	if len(p.MAC) != 6 {
		return nil, badinput.Errorf("interface %s has no Ethernet address: the engine sends Ethernet frames", name)
	}
	if ifi.Flags&net.FlagUp == 0 {
		return nil, fmt.Errorf("interface %s is down: ip link set %s up", name, name)
	}
	if p.LinkMbps == 0 {
		s, _ := nic.ReadFile(root, "sys/class/net/"+name+"/speed")
		if v, err := strconv.Atoi(s); err == nil && v > 0 {
			p.LinkMbps = v
		}
	}
	if p.LinkMbps <= 0 {
		return nil, fmt.Errorf("interface %s reports no link speed (no carrier?): give --link-mbps", name)
	}
	return p, nil
}

// CheckSizes refuses frame sizes (with FCS) whose IP packet is above the port's MTU.
func (p *Port) CheckSizes(sizes []int, vlan bool) error {
	for _, s := range sizes {
		l3 := s - 14 - frames.FCS
		if vlan {
			l3 -= 4
		}
		if l3 > p.MTU {
			return badinput.Errorf("frame size %d carries %d bytes of IP, above %s's MTU %d: lower --size or raise the MTU (ip link set %s mtu %d)", s, l3, p.Name, p.MTU, p.Name, l3)
		}
	}
	return nil
}
