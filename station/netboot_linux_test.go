package station

import (
	"context"
	"encoding/json"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zynqnet/linerate/internal/nstest"
	"github.com/zynqnet/linerate/internal/testfit"
	"github.com/zynqnet/linerate/netboot"
	"github.com/zynqnet/linerate/plan"
)

// netbootNet is a station's namespace (veth-st, 198.18.77.1/24) and a board's
// (veth-brd), and a boot directory with a ZC702 image.
func netbootNet(t *testing.T) (st, brd *nstest.NS, bootDir string) {
	t.Helper()
	nstest.NeedTool(t, "busybox")
	nstest.NeedTool(t, "atftp")
	nstest.NeedTool(t, "curl")
	st, brd = nstest.New(t), nstest.New(t)
	st.Veth(t, "veth-st", "veth-brd", brd, 0)
	st.Exec(t, "ip", "addr", "add", "198.18.77.1/24", "dev", "veth-st")
	bootDir = t.TempDir()
	testfit.Make(t, bootDir, "linerate-zc702.itb", "zc702", "arm", "")
	return st, brd, bootDir
}

func netbootConfig(iface, bootDir string) Config {
	return Config{Listen: "198.18.77.1:18080", Log: log.New(os.Stderr, "station: ", 0),
		Netboot: NetbootConfig{Iface: iface, BootDir: bootDir, Pool: "198.18.77.100-198.18.77.110", Plan: "qemu-zc702",
			Args: "linerate.token=abc linerate.insecure_token=1",
			LoadPlan: func(name string) (*plan.Plan, error) {
				if name != "qemu-zc702" {
					return nil, os.ErrNotExist
				}
				return &plan.Plan{Name: name, Board: "auto"}, nil
			}}}
}

// TestNetbootStation: a station netboots a board on the test network: a stock DHCP
// client (busybox udhcpc) takes a lease, a stock TFTP client (atftp) fetches the boot
// script and the image; the station shows the board booting on /api/live from its DHCP
// request on, records each boot event on /api/boots, and when the board's tester image
// reports its first live event, the boot's entry gives way to it.
func TestNetbootStation(t *testing.T) {
	st, brd, bootDir := netbootNet(t)
	c := netbootConfig("veth-st", bootDir)
	c.Data = t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- st.Run(func() error { return Run(ctx, c) }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-ran; err != nil {
			t.Errorf("station: %v", err)
		}
	})
	get := func(path string) string {
		return st.Exec(t, "curl", "-sS", "--max-time", "5", "http://198.18.77.1:18080"+path)
	}
	// Netboot serves once the probe (netboot.ProbeWait) found no other server.
	deadline := time.Now().Add(netboot.ProbeWait + 10*time.Second)
	for {
		if _, err := st.Try("curl", "-sf", "--max-time", "2", "http://198.18.77.1:18080/api/boots"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the station never served")
		}
		time.Sleep(200 * time.Millisecond)
	}
	brd.Exec(t, "ip", "link", "set", "veth-brd", "address", "00:0a:35:12:34:56")
	if out, err := brd.Try("busybox", "udhcpc", "-i", "veth-brd", "-f", "-q", "-n", "-t", "3", "-T", "1", "-V", "U-Boot.armv7"); err != nil {
		t.Fatalf("udhcpc: %v\n%s", err, out)
	}
	brd.Exec(t, "ip", "addr", "add", "198.18.77.100/24", "dev", "veth-brd")
	var live []Live
	json.Unmarshal([]byte(get("/api/live")), &live)
	if len(live) != 1 || live[0].State != "booting" || live[0].MAC != "00:0a:35:12:34:56" || live[0].Fixture != "veth-st" || live[0].Booted == nil {
		t.Fatalf("/api/live after the lease: %+v", live)
	}
	dir := t.TempDir()
	for _, f := range []string{"boot.scr.uimg", "linerate-zc702.itb"} {
		brd.Exec(t, "atftp", "-g", "-r", f, "-l", filepath.Join(dir, f), "--option", "blksize 1468", "--option", "tsize 0", "198.18.77.1")
	}
	want, _ := os.ReadFile(filepath.Join(bootDir, "linerate-zc702.itb"))
	if got, _ := os.ReadFile(filepath.Join(dir, "linerate-zc702.itb")); string(got) != string(want) {
		t.Errorf("the image fetched is %d bytes, not the boot directory's %d", len(got), len(want))
	}
	scr, _ := os.ReadFile(filepath.Join(dir, "boot.scr.uimg"))
	// The test image has conf-zc702-throughput but no conf-zc702-zc702: the plan's
	// profile (auto: the board's own) falls back to conf-zc702.
	for _, w := range []string{`"xlnx,zynq-zc702"; then setenv linerate_board zc702; setenv linerate_conf conf-zc702;`,
		"linerate.station=http://198.18.77.1:18080/api/reports linerate.plan=qemu-zc702 linerate.fixture=veth-st linerate.token=abc linerate.insecure_token=1"} {
		if !strings.Contains(string(scr), w) {
			t.Errorf("the boot script lacks %q:\n%s", w, scr)
		}
	}
	var boots []Boot
	json.Unmarshal([]byte(get("/api/boots?mac=00-0A-35-12-34-56")), &boots)
	events := []string{}
	for _, b := range boots {
		events = append(events, b.Event+" "+b.File)
	}
	if len(boots) != 4 || boots[0].File != "linerate-zc702.itb" || boots[0].Bytes != int64(len(want)) || boots[0].IP != "198.18.77.100" || boots[3].Event != "offered" || boots[3].Vendor != "U-Boot.armv7" {
		t.Errorf("/api/boots: %q %+v", events, boots)
	}
	json.Unmarshal([]byte(get("/api/live")), &live)
	if len(live) != 1 || live[0].State != "booting" || !strings.Contains(live[0].Step, "TFTP linerate-zc702.itb") {
		t.Errorf("/api/live after the fetch: %+v", live)
	}
	// The tester image's first live event: the board is testing, booted when it asked.
	ev := `{"id":"r-1","board":"zc702","serial":"S1","mac":"00:0A:35:12:34:56","plan":"qemu-zc702","budget_s":60,"event":"start","steps":3}`
	brd.Exec(t, "curl", "-sf", "-X", "POST", "-H", "Content-Type: application/json", "--data", ev, "http://198.18.77.1:18080/api/live")
	json.Unmarshal([]byte(get("/api/live")), &live)
	if len(live) != 1 || live[0].ID != "r-1" || live[0].State != "testing" || live[0].Booted == nil {
		t.Errorf("/api/live after the board's start: %+v", live)
	}
}

// TestNetbootRefuses: what a station cannot netboot with is an error naming it before
// anything is served: an interface without an address, a pool outside its subnet, a
// boot directory without images, an unknown plan, and a second station on a network
// where one already answers.
func TestNetbootRefuses(t *testing.T) {
	st, brd, bootDir := netbootNet(t)
	run := func(ns *nstest.NS, c Config) error {
		c.Data = t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return ns.Run(func() error { return Run(ctx, c) })
	}
	empty := t.TempDir()
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"no address", func(c *Config) { c.Netboot.Iface = "veth-brd" }, "no IPv4 address"},
		{"pool", func(c *Config) { c.Netboot.Pool = "10.0.0.1-10.0.0.9" }, "--netboot-pool \"10.0.0.1-10.0.0.9\": want addresses of the interface's subnet"},
		{"boot dir", func(c *Config) { c.Netboot.BootDir = empty }, "holds no tester image (linerate-BOARD.itb)"},
		{"no boot dir", func(c *Config) { c.Netboot.BootDir = "/nonexistent" }, "--boot-dir /nonexistent: not a directory"},
		{"plan", func(c *Config) { c.Netboot.Plan = "nosuch" }, "--netboot-plan"},
	} {
		c := netbootConfig("veth-st", bootDir)
		tc.edit(&c)
		ns := st
		if c.Netboot.Iface == "veth-brd" {
			ns = brd
			c.Listen = "127.0.0.1:18080"
		}
		if err := run(ns, c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
	os.WriteFile(filepath.Join(empty, "linerate-zc706.itb"), []byte("not a FIT"), 0o644)
	if err := run(st, netbootConfig("veth-st", empty)); err == nil || !strings.Contains(err.Error(), "linerate-zc706.itb: ") || !strings.Contains(err.Error(), "want a FIT image") {
		t.Errorf("an image that is no FIT: %v", err)
	}

	// A second station: the first serves on the board's side of the network.
	brd.Exec(t, "ip", "addr", "add", "198.18.77.2/24", "dev", "veth-brd")
	first := netbootConfig("veth-brd", bootDir)
	first.Listen, first.Netboot.Pool = "198.18.77.2:18080", "198.18.77.200-198.18.77.210"
	first.Data = t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- brd.Run(func() error { return Run(ctx, first) }) }()
	defer func() { cancel(); <-ran }()
	time.Sleep(netboot.ProbeWait + 2*time.Second)
	err := run(st, netbootConfig("veth-st", bootDir))
	if err == nil || !strings.Contains(err.Error(), "another DHCP server answers (198.18.77.2 offered 198.18.77.200)") {
		t.Errorf("a second station: %v", err)
	}
	// The first station saw a probe, not a board: nothing on its /api/live.
	if out := brd.Exec(t, "curl", "-sS", "http://198.18.77.2:18080/api/live"); strings.TrimSpace(out) != "[]" {
		t.Errorf("the first station's /api/live after the probe: %s", out)
	}
	if out, _ := exec.Command("ip", "netns", "exec", st.Name, "ss", "-lun").Output(); strings.Contains(string(out), ":69 ") || strings.Contains(string(out), ":67 ") {
		t.Errorf("the refused station left a socket:\n%s", out)
	}
}
