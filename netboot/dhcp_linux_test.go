package netboot

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/zynqnet/linerate/internal/nstest"
)

// testNet is a station's namespace and a board's (or a plant's) joined by a veth pair,
// the station's end addressed 198.18.77.1/24.
func testNet(t *testing.T, stationAddr string) (st, other *nstest.NS) {
	t.Helper()
	st, other = nstest.New(t), nstest.New(t)
	st.Veth(t, "veth-st", "veth-brd", other, 0)
	if stationAddr != "" {
		st.Exec(t, "ip", "addr", "add", stationAddr, "dev", "veth-st")
	}
	return st, other
}

// serveDHCP starts a station's DHCP server in ns and stops it at cleanup; events are
// the leases it reported.
func serveDHCP(t *testing.T, ns *nstest.NS, cfg DHCPConfig) (*DHCP, func() []Lease) {
	t.Helper()
	var mu sync.Mutex
	var events []Lease
	cfg.OnLease = func(l Lease) { mu.Lock(); events = append(events, l); mu.Unlock() }
	var d *DHCP
	ns.Do(t, func() (err error) { d, err = NewDHCP(cfg); return err })
	served := make(chan error, 1)
	go func() { served <- ns.Run(d.Serve) }()
	t.Cleanup(func() {
		d.Close()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	time.Sleep(100 * time.Millisecond) // the socket bound before a client asks
	return d, func() []Lease { mu.Lock(); defer mu.Unlock(); return append([]Lease(nil), events...) }
}

// TestDHCPWithUdhcpc: busybox's udhcpc, a stock client, takes a lease on the test
// network's veth and learns the station as next-server and the boot file; the station
// hears the board's MAC and vendor class.
func TestDHCPWithUdhcpc(t *testing.T) {
	nstest.NeedTool(t, "busybox")
	st, brd := testNet(t, "198.18.77.1/24")
	_, events := serveDHCP(t, st, DHCPConfig{Iface: "veth-st", Pool: "198.18.77.100-198.18.77.110", MACs: []string{"00:0a:35"}})
	brd.Exec(t, "ip", "link", "set", "veth-brd", "address", "00:0a:35:00:01:22")
	dir := t.TempDir()
	script := filepath.Join(dir, "script")
	os.WriteFile(script, []byte("#!/bin/sh\n[ \"$1\" = bound ] && env > "+dir+"/env\nexit 0\n"), 0o755)
	out, err := brd.Try("busybox", "udhcpc", "-i", "veth-brd", "-f", "-q", "-n", "-t", "3", "-T", "1", "-V", "U-Boot.armv7", "-s", script)
	if err != nil {
		t.Fatalf("udhcpc: %v\n%s", err, out)
	}
	env, _ := os.ReadFile(filepath.Join(dir, "env"))
	for _, want := range []string{"ip=198.18.77.100", "siaddr=198.18.77.1", "boot_file=" + BootFile, "serverid=198.18.77.1", "subnet=255.255.255.0", "tftp=198.18.77.1", "bootfile=" + BootFile} {
		if !strings.Contains(string(env), want+"\n") {
			t.Errorf("udhcpc's lease lacks %s:\n%s", want, env)
		}
	}
	ev := events()
	if len(ev) != 2 || ev[1].State != "bound" || ev[1].MAC != "00:0a:35:00:01:22" || ev[1].Vendor != "U-Boot.armv7" || !ev[1].IP.Equal(net.IPv4(198, 18, 77, 100)) {
		t.Errorf("events %+v", ev)
	}
	// A MAC outside --netboot-macs gets nothing.
	brd.Exec(t, "ip", "link", "set", "veth-brd", "address", "02:00:00:00:00:01")
	if out, err := brd.Try("busybox", "udhcpc", "-i", "veth-brd", "-f", "-q", "-n", "-t", "2", "-T", "1", "-s", script); err == nil {
		t.Errorf("a MAC outside the list took a lease:\n%s", out)
	}
}

// TestDHCPRefusesBesideAnother: the probe finds another DHCP server on the network
// (busybox's udhcpd, as a plant's would be; and a second linerate station) and says
// which; on a quiet network it finds none.
func TestDHCPRefusesBesideAnother(t *testing.T) {
	nstest.NeedTool(t, "busybox")
	st, plant := testNet(t, "198.18.77.1/24")
	plant.Exec(t, "ip", "addr", "add", "198.18.77.2/24", "dev", "veth-brd")
	probe := func() error {
		return st.Run(func() error {
			d, err := NewDHCP(DHCPConfig{Iface: "veth-st", Pool: "198.18.77.100-198.18.77.110"})
			if err != nil {
				return err
			}
			return d.Probe(context.Background(), ProbeWait)
		})
	}
	start := time.Now()
	if err := probe(); err != nil {
		t.Fatalf("a quiet network: %v", err)
	}
	t.Logf("the probe of a quiet network took %v", time.Since(start).Round(time.Millisecond))

	dir := t.TempDir()
	conf := filepath.Join(dir, "udhcpd.conf")
	os.WriteFile(conf, []byte(fmt.Sprintf("interface veth-brd\nstart 198.18.77.50\nend 198.18.77.60\nlease_file %s/leases\npidfile %s/pid\n", dir, dir)), 0o644)
	os.WriteFile(filepath.Join(dir, "leases"), nil, 0o644)
	cmd := exec.Command("ip", "netns", "exec", plant.Name, "busybox", "udhcpd", "-f", conf)
	var udlog strings.Builder
	cmd.Stdout, cmd.Stderr = &udlog, &udlog
	defer func() { t.Logf("udhcpd:\n%s", udlog.String()) }()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	time.Sleep(300 * time.Millisecond)
	err := probe()
	// udhcpd offers an address of its pool, 198.18.77.50-60, picked by a hash of the
	// client's MAC (a random one each run).
	if !errors.Is(err, ErrOtherServer) || !regexp.MustCompile(`198\.18\.77\.2 offered 198\.18\.77\.(5\d|60)\b`).MatchString(err.Error()) || !strings.Contains(err.Error(), "--netboot veth-st") {
		t.Errorf("beside udhcpd: got %v", err)
	}
	cmd.Process.Kill()
	cmd.Wait()

	// A second station: the first serves from the plant's namespace.
	serveDHCP(t, plant, DHCPConfig{Iface: "veth-brd", Pool: "198.18.77.200-198.18.77.210"})
	if err := probe(); !errors.Is(err, ErrOtherServer) || !strings.Contains(err.Error(), "198.18.77.2 offered 198.18.77.200") {
		t.Errorf("beside another station: got %v", err)
	}
}

// TestDHCPNoAddress: an interface without an IPv4 address, or none at all, is an error
// saying what to do.
func TestDHCPNoAddress(t *testing.T) {
	st, _ := testNet(t, "")
	st.Do(t, func() error {
		_, err := NewDHCP(DHCPConfig{Iface: "veth-st", Pool: "198.18.77.100-198.18.77.110"})
		if err == nil || !strings.Contains(err.Error(), "no IPv4 address") || !strings.Contains(err.Error(), "ip addr add") {
			return fmt.Errorf("no address: got %v", err)
		}
		_, err = NewDHCP(DHCPConfig{Iface: "nosuch0", Pool: "198.18.77.100-198.18.77.110"})
		if err == nil || !strings.Contains(err.Error(), "--netboot nosuch0") {
			return fmt.Errorf("no interface: got %v", err)
		}
		l, _ := netlink.LinkByName("veth-st")
		addr, _ := netlink.ParseAddr("198.18.77.1/24")
		netlink.AddrAdd(l, addr)
		_, err = NewDHCP(DHCPConfig{Iface: "veth-st", Pool: "198.18.78.100-198.18.78.110"})
		if err == nil || !strings.Contains(err.Error(), "subnet") {
			return fmt.Errorf("pool outside: got %v", err)
		}
		return nil
	})
}
