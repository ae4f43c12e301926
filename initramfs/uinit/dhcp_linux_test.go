package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/zynqnet/linerate/internal/nstest"
)

// TestDHCP4 leases an address from busybox udhcpd across a veth between two namespaces.
func TestDHCP4(t *testing.T) {
	nstest.NeedTool(t, "busybox")
	board, station := nstest.New(t), nstest.New(t)
	board.Veth(t, "eth0", "st0", station, 0)
	station.Exec(t, "ip", "addr", "add", "198.18.6.1/24", "dev", "st0")
	conf := filepath.Join(t.TempDir(), "udhcpd.conf")
	os.WriteFile(conf, []byte(fmt.Sprintf("interface st0\nstart 198.18.6.7\nend 198.18.6.7\nmax_leases 1\nlease_file %s.leases\noption subnet 255.255.255.0\noption router 198.18.6.1\noption lease 600\n", conf)), 0o644)
	srv := exec.Command("ip", "netns", "exec", station.Name, "busybox", "udhcpd", "-f", conf)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	time.Sleep(300 * time.Millisecond)
	board.Do(t, func() error {
		l, err := netlink.LinkByName("eth0")
		if err != nil {
			return err
		}
		ipn, err := dhcp4(l, 9*time.Second)
		if err != nil {
			return err
		}
		if ipn.String() != "198.18.6.7/24" {
			return fmt.Errorf("leased %s, want 198.18.6.7/24", ipn)
		}
		return nil
	})
	if out := board.Exec(t, "ip", "-4", "addr", "show", "dev", "eth0"); !contains(out, "198.18.6.7/24") {
		t.Errorf("eth0 not configured: %s", out)
	}
	if out := board.Exec(t, "ip", "route"); !contains(out, "default via 198.18.6.1") {
		t.Errorf("no default route: %s", out)
	}
}

func contains(s, sub string) bool {
	return len(s) >= len(sub) && (s == sub || len(sub) == 0 || indexOf(s, sub) >= 0)
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}
