package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zynqnet/linerate/internal/nstest"
	"github.com/zynqnet/linerate/plan"
	"github.com/zynqnet/linerate/validate"
)

// TestPortsInNamespaces: a two-port board against a station with a server and a
// reflector per port: every step on both ports at once, both PASS; then one port shaped
// to 1 Mbit/s: that port FAILs alone, named in the verdict line.
func TestPortsInNamespaces(t *testing.T) {
	b, st := portsStation(t, 2, 70, 120*time.Second)
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
	// The station records the port of its own each board port came through.
	id := regexp.MustCompile(`report (\S+) delivered`).FindStringSubmatch(out)[1]
	resp, err := nsClient(st).Get("http://198.18.70.1:8080/api/reports/" + id)
	if err != nil {
		t.Fatal(err)
	}
	var served struct {
		StationPorts []struct{ Name, Port string } `json:"station_ports"`
	}
	json.NewDecoder(resp.Body).Decode(&served)
	resp.Body.Close()
	if len(served.StationPorts) != 2 || served.StationPorts[0].Name != "st0" || served.StationPorts[0].Port != "eth0" || served.StationPorts[1].Name != "st1" || served.StationPorts[1].Port != "eth1" {
		t.Errorf("station ports %+v", served.StationPorts)
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

// portsStation is a board namespace with ports eth0..eth(n-1), each joined by a veth to
// port stK of a station namespace, the K-th on 198.18.(net+K).0/24 (board .2, station
// .1), where linerate station runs for d: its page at the first port's address, an
// iperf3 server and a frame reflector on every port. The station is stopped at the
// test's end, its log shown when the test failed.
func portsStation(t *testing.T, n, net int, d time.Duration) (b, st *nstest.NS) {
	t.Helper()
	nstest.Require(t)
	b, st = nstest.New(t), nstest.New(t)
	noIPv6(t, b, st)
	var servers, reflect []string
	for i := 0; i < n; i++ {
		sub := fmt.Sprintf("198.18.%d", net+i)
		b.Veth(t, fmt.Sprintf("eth%d", i), fmt.Sprintf("st%d", i), st, 1)
		b.Exec(t, "ip", "addr", "add", sub+".2/24", "dev", fmt.Sprintf("eth%d", i))
		st.Exec(t, "ip", "addr", "add", sub+".1/24", "dev", fmt.Sprintf("st%d", i))
		servers, reflect = append(servers, sub+".1:5201"), append(reflect, fmt.Sprintf("st%d", i))
	}
	srv, _, errOut := linerateIn(t, st, "station", "--listen", fmt.Sprintf("198.18.%d.1:8080", net), "--data", t.TempDir(),
		"--iperf3", strings.Join(servers, ","), "--reflect", strings.Join(reflect, ","), "--duration", d.String())
	t.Cleanup(func() {
		srv.Process.Signal(os.Interrupt)
		waitOrKill(srv, 20*time.Second)
		if t.Failed() {
			t.Logf("station:\n%s", errOut)
		}
	})
	waitListen(st, "8080")
	waitListen(st, "5201")
	return b, st
}

// TestBuiltinPortPlans runs the built-in two- and four-port plans with the real step
// kinds, every port at once, on veth against a station with a server and reflector per
// port, in a race build of linerate: no data race, and the report holds each port's own
// MAC (as its identity step found it) and doctor findings. The plans are the emulated
// boards'; where veth is not a GEM, two settings change: the link step's speed (veth
// says 10000 Mb/s where QEMU's PHY says 100) and the tune step's profile, the board's
// own without requiring rings (veth has none).
func TestBuiltinPortPlans(t *testing.T) {
	for _, c := range []struct {
		plan, profile, family string
		ports                 int
	}{{"qemu-zc702-2port", "zc702", "zynq7000", 2}, {"qemu-zcu102-4port", "zcu102", "zynqmp", 4}} {
		t.Run(c.plan, func(t *testing.T) { builtinPortPlan(t, c.plan, c.profile, c.family, c.ports) })
	}
}

func builtinPortPlan(t *testing.T, name, profile, family string, n int) {
	b, _ := portsStation(t, n, 5, 300*time.Second)
	text, err := validate.BuiltinText(name)
	if err != nil {
		t.Fatal(err)
	}
	prof, err := os.ReadFile(filepath.Join("..", "..", "tune", "profiles", family+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	pfile := filepath.Join(t.TempDir(), profile+".yaml")
	os.WriteFile(pfile, []byte(strings.Replace(strings.Replace(string(prof), "BOARD_NAME", profile, 1), "required: [rings.rx]", "", 1)), 0o644)
	body := strings.Replace(string(text), "speed_mbps: 100\n", "speed_mbps: 10000\n", 1)
	body = strings.Replace(body, "profile: "+profile+"\n", "profile: "+pfile+"\n", 1)
	dir := t.TempDir()
	out, code := runIn(t, b, 5*time.Minute, "validate", writePlan(t, body), "--serial", "PORTS"+fmt.Sprint(n), "--report-dir", dir)
	if strings.Contains(out, "DATA RACE") || code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("reports %v", files)
	}
	raw, _ := os.ReadFile(files[0])
	var rep plan.Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Ports) != n {
		t.Fatalf("%d ports in the report, want %d", len(rep.Ports), n)
	}
	seen := map[string]bool{}
	for i, p := range rep.Ports {
		iface := fmt.Sprintf("eth%d", i)
		mac := strings.TrimSpace(b.Exec(t, "cat", "/sys/class/net/"+iface+"/address"))
		if p.Interface != iface || p.MAC != mac || p.MACSource != "kernel" || seen[p.MAC] {
			t.Errorf("port %d: %s mac %s from %q, want %s's own %s", i, p.Interface, p.MAC, p.MACSource, iface, mac)
		}
		seen[p.MAC] = true
		var doc struct {
			Interfaces []struct{ Name string } `json:"interfaces"`
		}
		if err := json.Unmarshal(p.Doctor, &doc); err != nil || len(doc.Interfaces) != 1 || doc.Interfaces[0].Name != iface {
			t.Errorf("port %s: its doctor block is %s (%v)", iface, p.Doctor, err)
		}
		if _, ok := p.Figures["tcp-up."+iface+"_mbps"]; !ok {
			t.Errorf("port %s: figures %v", iface, p.Figures)
		}
	}
}

// TestPortsOneMAC: a board whose two ports carry one MAC fails identity on both, each
// naming the other.
func TestPortsOneMAC(t *testing.T) {
	b, _ := portsStation(t, 2, 90, 60*time.Second)
	mac := strings.TrimSpace(b.Exec(t, "cat", "/sys/class/net/eth0/address"))
	b.Exec(t, "ip", "link", "set", "eth1", "address", mac)
	plan := writePlan(t, "name: one-mac\nboard: zc702\nbudget: 1m\nstation: {address: 198.18.90.1}\nports: [eth0, {interface: eth1, station: {address: 198.18.91.1}}]\nsteps:\n  - {id: identity, type: identity, allow_local_mac: true, eeprom: false}\n")
	out, code := runIn(t, b, time.Minute, "validate", plan, "--serial", "M1", "--report-dir", t.TempDir())
	if code != 1 || !regexp.MustCompile(`(?m)^LINERATE FAIL board=zc702 serial=M1 \S+ eth0=FAIL\(identity\) eth1=FAIL\(identity\) `).MatchString(out) ||
		!strings.Contains(out, "MAC "+mac+" is also eth1's") || !strings.Contains(out, "MAC "+mac+" is also eth0's") {
		t.Errorf("exit %d\n%s", code, out)
	}
}
