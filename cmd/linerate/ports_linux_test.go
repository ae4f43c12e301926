package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zynqnet/linerate/internal/nstest"
)

// TestPortsInNamespaces: a two-port board against a station with a server and a
// reflector per port: every step on both ports at once, both PASS; then one port shaped
// to 1 Mbit/s: that port FAILs alone, named in the verdict line.
func TestPortsInNamespaces(t *testing.T) {
	nstest.Require(t)
	b, st := nstest.New(t), nstest.New(t)
	noIPv6(t, b, st)
	for _, n := range []string{"0", "1"} {
		b.Veth(t, "eth"+n, "st"+n, st, 1)
		b.Exec(t, "ip", "addr", "add", "198.18.7"+n+".2/24", "dev", "eth"+n)
		st.Exec(t, "ip", "addr", "add", "198.18.7"+n+".1/24", "dev", "st"+n)
	}
	srv, _, errOut := linerateIn(t, st, "station", "--listen", "198.18.70.1:8080", "--data", t.TempDir(), "--iperf3", "198.18.70.1:5201,198.18.71.1:5201",
		"--reflect", "st0,st1", "--duration", "120s")
	defer func() {
		srv.Process.Signal(os.Interrupt)
		waitOrKill(srv, 20*time.Second)
		if t.Failed() {
			t.Logf("station:\n%s", errOut)
		}
	}()
	waitListen(st, "8080")
	waitListen(st, "5201")
	plan := writePlan(t, `name: two
board: zc702
budget: 2m
station:
  report_url: http://198.18.70.1:8080/api/reports
ports:
  - {interface: eth0, station: {address: 198.18.70.1}}
  - {interface: eth1, station: {address: 198.18.71.1}}
steps:
  - {id: link, type: link, carrier_within: 5s}
  - {id: tcp-up, type: iperf3, duration: 2s, min_mbps: 50}
  - {id: frames, type: frames, size: 512, rate: 2000pps, duration: 2s, max_loss_pct: 1}
  - {id: counters, type: counters}
`)
	validate := func(serial string) (string, int) {
		return runIn(t, b, 2*time.Minute, "validate", plan, "--serial", serial, "--report-dir", t.TempDir())
	}
	out, code := validate("P2")
	if code != 0 || !regexp.MustCompile(`(?m)^LINERATE PASS board=zc702 serial=P2 mac=\S+ eth0=PASS eth1=PASS .*failed=- `).MatchString(out) {
		t.Fatalf("both ports: exit %d\n%s", code, out)
	}
	for _, want := range []string{"2 ports: eth0, eth1", "tcp-up.eth0 iperf3   PASS", "tcp-up.eth1 iperf3   PASS", "frames.eth1 frames   PASS"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q:\n%s", want, out)
		}
	}
	// eth1's traffic leaves through a 1 Mbit/s bottleneck (the kernel's: the test frames
	// go past qdiscs, TCP does not).
	b.Exec(t, "tc", "qdisc", "add", "dev", "eth1", "root", "tbf", "rate", "1mbit", "burst", "4kb", "latency", "50ms")
	out, code = validate("P3")
	if code != 1 || !regexp.MustCompile(`(?m)^LINERATE FAIL board=zc702 serial=P3 mac=\S+ eth0=PASS eth1=FAIL\(tcp-up\) .*failed=tcp-up.eth1 `).MatchString(out) {
		t.Errorf("eth1 shaped: exit %d\n%s", code, out)
	}
}

// TestTuneAcrossPorts: a tune step of a two-port plan is one transaction: when the
// second port cannot take the profile, the first is given back what it had.
func TestTuneAcrossPorts(t *testing.T) {
	nstest.Require(t)
	nstest.NeedTool(t, "ethtool")
	b, peer := nstest.New(t), nstest.New(t)
	b.Veth(t, "eth0", "p0", peer, 2)
	b.Exec(t, "ip", "tuntap", "add", "dev", "eth1", "mode", "tap") // a port without channels
	b.Exec(t, "ip", "link", "set", "eth1", "up")
	dir := t.TempDir()
	profile := filepath.Join(dir, "p.yaml")
	os.WriteFile(profile, []byte("name: ports\nknobs:\n  mtu: 4000\n  channels.rx: 1\n  channels.tx: 1\nrequired: [channels.rx]\n"), 0o644)
	plan := writePlan(t, "name: tune2\nboard: zc702\nbudget: 1m\nports: [eth0, eth1]\nsteps:\n  - {id: tune, type: tune, profile: "+profile+"}\n")
	before := b.Exec(t, "ip", "-o", "link", "show", "eth0") + b.Exec(t, "ethtool", "-l", "eth0")
	out, code := runIn(t, b, time.Minute, "validate", plan, "--serial", "T1", "--report-dir", dir)
	if code != 1 || !strings.Contains(out, "tune") || !strings.Contains(out, "eth1: ") || !strings.Contains(out, "eth0 rolled back") ||
		!regexp.MustCompile(`(?m)^LINERATE FAIL .* eth0=FAIL\(tune\) eth1=FAIL\(tune\) `).MatchString(out) {
		t.Errorf("a tune the second port refuses: exit %d\n%s", code, out)
	}
	if after := b.Exec(t, "ip", "-o", "link", "show", "eth0") + b.Exec(t, "ethtool", "-l", "eth0"); after != before {
		t.Errorf("eth0 not given back:\nbefore %s\nafter  %s", before, after)
	}
}
