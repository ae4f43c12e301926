package validate

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/zynqnet/linerate/internal/readall"
)

// reflectorMAC is the plan's reflector MAC, or the station's from the neighbour table
// (a datagram to its discard port makes the kernel ARP for it).
func (e Env) reflectorMAC(ctx context.Context) (net.HardwareAddr, error) {
	st := e.Station
	if st.MAC != nil {
		return st.MAC, nil
	}
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if c, err := net.Dial("udp4", net.JoinHostPort(st.Address, "9")); err == nil {
			c.Write([]byte{0})
			c.Close()
		}
		if m := arpLookup(e.Root, st.Address, e.Iface); m != nil {
			return m, nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return nil, fmt.Errorf("the station %s does not answer ARP on %s: no reflector to send frames to", st.Address, e.Iface)
}

// arpLookup finds ip's MAC on iface in root's /proc/net/arp.
func arpLookup(root, ip, iface string) net.HardwareAddr {
	b, _ := readall.File(filepath.Join(root, "proc/net/arp"), readall.MaxSys)
	for _, l := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(l)
		if len(f) >= 6 && f[0] == ip && f[5] == iface && f[3] != "00:00:00:00:00:00" {
			if m, err := net.ParseMAC(f[3]); err == nil {
				return m
			}
		}
	}
	return nil
}
