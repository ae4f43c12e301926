package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zynqnet/linerate/internal/nstest"
)

// The board's own faults on veths: identity, the link's stability (the peer's port goes
// down and up mid-step), watch, and the PHY commands on a port without a PHY.

// runIn runs linerate ARGS in ns as a process, bounded by d, and gives its output
// (stdout then stderr) and exit code.
func runIn(t *testing.T, ns *nstest.NS, d time.Duration, args ...string) (string, int) {
	t.Helper()
	cmd, out, errOut := linerateIn(t, ns, args...)
	if !waitOrKill(cmd, d) {
		t.Fatalf("linerate %v did not end within %v:\n%s%s", args, d, out, errOut)
	}
	return out.String() + errOut.String(), cmd.ProcessState.ExitCode()
}

// boardPair is a board namespace with eth0 and a station namespace with st0, joined by
// a veth, addressed 198.18.61.2 and .1.
func boardPair(t *testing.T) (b, st *nstest.NS) {
	nstest.Require(t)
	b, st = nstest.New(t), nstest.New(t)
	noIPv6(t, b, st)
	b.Veth(t, "eth0", "st0", st, 1)
	b.Exec(t, "ip", "addr", "add", "198.18.61.2/24", "dev", "eth0")
	st.Exec(t, "ip", "addr", "add", "198.18.61.1/24", "dev", "st0")
	return b, st
}

func writePlan(t *testing.T, body string) string {
	p := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestIdentityStepInNamespace(t *testing.T) {
	b, _ := boardPair(t)
	plan := func(opts string) string {
		return writePlan(t, "board: zc702\ninterface: eth0\nsteps:\n  - id: identity\n    type: identity\n"+opts)
	}
	plain, local, oui := plan(""), plan("    allow_local_mac: true\n"), plan("    expect_oui: [00:0a:35, 'a0:36:9f']\n")
	reports := t.TempDir()
	for _, c := range []struct {
		name, mac, plan string
		pass            bool
		reason          string
	}{
		{"good", "00:0a:35:12:34:56", oui, true, "MAC 00:0a:35:12:34:56 from the kernel, serial NS-7 from the operator"},
		{"xilinx placeholder", "00:0a:35:00:01:22", plain, false, "MAC 00:0a:35:00:01:22 is a placeholder (U-Boot's hard-coded ethaddr)"},
		{"locally administered", "02:1a:2b:3c:4d:5e", plain, false, "is locally administered"},
		{"local allowed", "02:1a:2b:3c:4d:5e", local, true, ""},
		{"outside the OUIs", "00:1b:21:12:34:56", oui, false, "outside the expected OUIs (00:0a:35, a0:36:9f)"},
	} {
		b.Exec(t, "ip", "link", "set", "eth0", "address", c.mac)
		out, code := runIn(t, b, time.Minute, "validate", c.plan, "--serial", "NS-7", "--report-dir", reports)
		verdict := regexp.MustCompile(`(?m)^LINERATE (PASS|FAIL) board=zc702 serial=NS-7 mac=` + c.mac + ` `).FindStringSubmatch(out)
		if verdict == nil || (verdict[1] == "PASS") != c.pass || (code == 0) != c.pass || !strings.Contains(out, c.reason) {
			t.Errorf("%s (%s): exit %d, want pass %v saying %q:\n%s", c.name, c.mac, code, c.pass, c.reason, out)
		}
	}
	// A multicast MAC cannot be given to a Linux Ethernet port at all (the kernel answers
	// EADDRNOTAVAIL; macb takes a random one instead): the judge's case is a unit test.
	if _, err := b.Try("ip", "link", "set", "eth0", "address", "01:00:5e:00:00:01"); err == nil {
		t.Error("the kernel took a multicast MAC: test the identity step with it here")
	}
}

// flap takes the station's end of the link down and up again after `after`.
func flap(t *testing.T, st *nstest.NS, after, down time.Duration) *sync.WaitGroup {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		time.Sleep(after)
		st.Exec(t, "ip", "link", "set", "st0", "down")
		time.Sleep(down)
		st.Exec(t, "ip", "link", "set", "st0", "up")
	}()
	return &wg
}

func TestStabilityStepInNamespace(t *testing.T) {
	b, st := boardPair(t)
	reflector, _, _ := linerateIn(t, st, "reflect", "st0", "--duration", "60s")
	defer waitOrKill(reflector, 0)
	waitPacketSocket(t, st)
	plan := writePlan(t, `board: zc702
interface: eth0
station:
  address: 198.18.61.1
  reflector_mac: `+macOf(t, st, "st0")+`
steps:
  - id: stable
    type: stability
    duration: 5s
    rate: 500pps
`)
	reports := t.TempDir()
	out, code := runIn(t, b, time.Minute, "validate", plan, "--serial", "NS-8", "--report-dir", reports)
	m := regexp.MustCompile(`stable\s+stability\s+PASS\s+5s watched with (\d+) of (\d+) frames back through the reflector: 0 link event\(s\), 0 carrier loss\(es\)`).FindStringSubmatch(out)
	if code != 0 || m == nil || m[1] != m[2] || len(m[1]) != 4 {
		t.Fatalf("no flap: exit %d, want a PASS with 2500 frames back:\n%s", code, out)
	}

	wg := flap(t, st, 2*time.Second, time.Second)
	out, code = runIn(t, b, time.Minute, "validate", plan, "--serial", "NS-8", "--report-dir", reports)
	wg.Wait()
	if code != 1 || !regexp.MustCompile(`stable\s+stability\s+FAIL .*the link was not stable: \d\d:\d\d:\d\d\.\d{3} eth0 carrier down; \d\d:\d\d:\d\d\.\d{3} eth0 carrier up after 1\.\d\ds`).MatchString(out) ||
		!strings.Contains(out, "LINERATE FAIL board=zc702 serial=NS-8") || !strings.Contains(out, "failed=stable") {
		t.Errorf("a flap mid-step: exit %d, want FAIL with the times:\n%s", code, out)
	}
}

// TestStabilityTCPStall: a station whose iperf3 server stops answering mid-step (held
// with SIGSTOP: no frame of the test moves any more, the link stays up) fails the step
// soon after its duration plus the grace, saying the station stopped answering, not at
// the step's timeout with a deadline.
func TestStabilityTCPStall(t *testing.T) {
	nstest.NeedTool(t, "iperf3")
	b, st := boardPair(t)
	srv := exec.Command("ip", "netns", "exec", st.Name, "iperf3", "-s", "-1")
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		srv.Process.Signal(syscall.SIGCONT)
		srv.Process.Kill()
		srv.Wait()
	}()
	waitListen(st, "5201")
	plan := writePlan(t, "board: zc702\ninterface: eth0\nstation:\n  address: 198.18.61.1\nsteps:\n  - {id: stable, type: stability, duration: 3s, traffic: tcp}\n")
	go func() {
		time.Sleep(time.Second)
		srv.Process.Signal(syscall.SIGSTOP)
	}()
	start := time.Now()
	out, code := runIn(t, b, time.Minute, "validate", plan, "--serial", "NS-9", "--report-dir", t.TempDir())
	took := time.Since(start)
	if code != 1 || !regexp.MustCompile(`stable\s+stability\s+FAIL\s+iperf3 to the station: no results 23s after the 3s test began: the station stopped answering`).MatchString(out) {
		t.Errorf("a station that stops answering: exit %d\n%s", code, out)
	}
	if took > 30*time.Second { // the step's timeout is 33 s
		t.Errorf("the step took %v; want it over soon after 23 s", took)
	}
}

// waitPacketSocket waits (at most 10 s) until a packet socket in the namespace is bound
// to a port (/proc/net/packet's Iface column): the reflector's ring, which holds the
// frames that come before it reads. Started
// without the wait, a reflector slow to start (under -race, on a loaded machine) missed
// the step's first frames (2461 of 2500 back in one CI run).
func waitPacketSocket(t *testing.T, ns *nstest.NS) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		out, err := ns.Try("cat", "/proc/net/packet")
		for _, line := range strings.Split(out, "\n")[1:] {
			if f := strings.Fields(line); err == nil && len(f) > 4 && f[4] != "0" {
				return
			}
		}
	}
	t.Fatalf("no packet socket in %s after 10 s: the reflector did not start", ns.Name)
}

func TestWatchInNamespace(t *testing.T) {
	b, st := boardPair(t)
	out, code := runIn(t, b, 30*time.Second, "watch", "eth0", "--duration", "2s")
	if code != 0 || !strings.Contains(out, "eth0: carrier up, 10000 Mb/s full; watching for 2s") || !strings.Contains(out, "0 link event(s) of the port, 0 carrier loss(es)") {
		t.Errorf("a quiet link: exit %d\n%s", code, out)
	}
	wg := flap(t, st, time.Second, 1500*time.Millisecond)
	out, code = runIn(t, b, 30*time.Second, "watch", "eth0", "--duration", "4s")
	wg.Wait()
	lines := regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d\.\d{3} eth0 (carrier down|carrier up after (1\.[4-9]\d)s)$`).FindAllStringSubmatch(out, -1)
	if code != 1 || len(lines) != 2 || lines[0][1] != "carrier down" || !strings.Contains(out, "2 link event(s) of the port, 1 carrier loss(es), 1.") {
		t.Errorf("a flap: exit %d, want exit 1, a down and an up line and the summary:\n%s", code, out)
	}
}

// A link event while another linerate holds the port (a tune that bounces the link) is
// shown and not held against the port.
func TestWatchExcusesLinerate(t *testing.T) {
	nstest.Require(t)
	nstest.NeedTool(t, "ethtool")
	ns, peer := nstest.New(t), nstest.New(t)
	ns.Veth(t, "lr0", "lr1", peer, 2)
	dir := t.TempDir()
	profile, state := filepath.Join(dir, "p.yaml"), filepath.Join(dir, "state")
	os.WriteFile(profile, []byte(nsProfile), 0o644)
	holder, ok := pausedTune(t, ns, profile, state, 1)
	if !ok {
		t.Fatal("the tune ended before its first write")
	}
	defer func() {
		holder.Process.Kill()
		holder.Wait()
		inNS(t, ns, "revert", "lr0", "--state-dir", state, "--wait", "2s")
	}()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		time.Sleep(time.Second)
		peer.Exec(t, "ip", "link", "set", "lr1", "down")
		time.Sleep(500 * time.Millisecond)
		peer.Exec(t, "ip", "link", "set", "lr1", "up")
	}()
	out, code := runIn(t, ns, 30*time.Second, "watch", "lr0", "--duration", "3s")
	wg.Wait()
	excused := regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d\.\d{3} lr0 carrier down \(linerate was changing the port: pid \d+: .*: not counted\)$`)
	if code != 0 || !excused.MatchString(out) || !strings.Contains(out, "0 link event(s) of the port, 0 carrier loss(es)") {
		t.Errorf("a flap under another linerate's lock: exit %d, want 0 with the flap excused:\n%s", code, out)
	}
}

func TestPHYCommandsWithoutPHY(t *testing.T) {
	b, _ := boardPair(t)
	for _, args := range [][]string{{"phy", "eth0"}, {"phy", "eth0", "--loopback"}, {"phy", "eth0", "--loopback", "--json"}} {
		out, code := runIn(t, b, 30*time.Second, args...)
		if code != 1 || !strings.Contains(out, "linerate phy: eth0: no MII access to a PHY (its driver has no SIOCGMIIREG") || strings.Count(strings.TrimSpace(out), "\n") != 0 {
			t.Errorf("%v on a veth: exit %d, want 1 and one line saying why:\n%s", args, code, out)
		}
	}
	if out, code := runIn(t, b, 30*time.Second, "phy", "eth0", "--loopback", "--frames", "0"); code != 2 || !strings.Contains(out, "--frames 0: want 1..10000000") {
		t.Errorf("--frames 0: exit %d\n%s", code, out)
	}
	// A phy step skips on such a port, and fails where the plan requires a PHY.
	for _, c := range []struct {
		required bool
		want     string
		code     int
	}{{false, "SKIP", 0}, {true, "FAIL", 1}} {
		plan := writePlan(t, "board: zc702\ninterface: eth0\nsteps:\n  - {id: phy, type: phy, loopback: true, required: "+map[bool]string{true: "true", false: "false"}[c.required]+"}\n")
		out, code := runIn(t, b, time.Minute, "validate", plan, "--serial", "NS-9", "--report-dir", t.TempDir())
		if code != c.code || !regexp.MustCompile(`phy\s+phy\s+`+c.want+`\s+no PHY to test on eth0: eth0: no MII access`).MatchString(out) {
			t.Errorf("required %v: exit %d, want %s:\n%s", c.required, code, c.want, out)
		}
	}
}

// TestValidateMissingInterface: a plan naming a port the machine lacks is refused before
// any step, at once, exit 2, naming it (and what the machine has); no report is made.
func TestValidateMissingInterface(t *testing.T) {
	b, _ := boardPair(t)
	plan := writePlan(t, "name: two-ports\nboard: zc702\nports: [eth0, eth1]\nsteps:\n  - {id: link, type: link}\n")
	reports := t.TempDir()
	start := time.Now()
	out, code := runIn(t, b, time.Minute, "validate", plan, "--serial", "NS-10", "--report-dir", reports)
	took := time.Since(start)
	if code != 2 || !strings.Contains(out, "plan two-ports: no interface eth1 on this machine (it has eth0)") {
		t.Errorf("a plan with a missing port: exit %d\n%s", code, out)
	}
	if took > time.Second {
		t.Errorf("refused after %v; want under a second", took)
	}
	if ents, _ := os.ReadDir(reports); len(ents) != 0 {
		t.Errorf("a refused plan left %d files in the report directory", len(ents))
	}
}

// TestValidateRevertsDeadRunsTune kills a validate (SIGKILL) while it measures on its
// tune: the next run gives the port back what it had before its first step, saying so,
// rather than measuring on the dead run's profile while its report says "reverted at
// the end".
func TestValidateRevertsDeadRunsTune(t *testing.T) {
	b, _ := boardPair(t)
	mtu := func() string {
		out := b.Exec(t, "cat", "/sys/class/net/eth0/mtu")
		return strings.TrimSpace(out)
	}
	profile := filepath.Join(t.TempDir(), "jumbo.yaml")
	os.WriteFile(profile, []byte("name: jumbo\nknobs:\n  mtu: 9000\n"), 0o644)
	reports := t.TempDir()
	long := writePlan(t, "name: dies\nboard: zc702\ninterface: eth0\nsteps:\n  - {id: tune, type: tune, profile: "+profile+"}\n  - {id: idle, type: stability, traffic: none, duration: 60s}\n")
	cmd, _, _ := linerateIn(t, b, "validate", long, "--serial", "NS-11", "--report-dir", reports)
	deadline := time.Now().Add(30 * time.Second)
	for mtu() != "9000" && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // into the idle step
	cmd.Process.Kill()
	cmd.Wait()
	if mtu() != "9000" {
		t.Fatalf("the killed run had not tuned: MTU %s", mtu())
	}
	short := writePlan(t, "name: next\nboard: zc702\ninterface: eth0\nsteps:\n  - {id: idle, type: stability, traffic: none, duration: 1s}\n")
	out, _ := runIn(t, b, time.Minute, "validate", short, "--serial", "NS-11", "--report-dir", reports)
	if !strings.Contains(out, "eth0 held the tune (jumbo) of a run that did not end: reverted before this run") {
		t.Errorf("the next run does not say it reverted the dead run's tune:\n%s", out)
	}
	if mtu() != "1500" {
		t.Errorf("MTU %s after the next run: the dead run's tune is still there", mtu())
	}
}

// TestValidateVerdictBeforeRevert: a run gives back its tune once the verdict line is
// out (nothing measures the port after the last step), so the verdict does not wait on
// it: the console says the port was given back after the verdict, the report shows the
// port as the steps measured it, and the port ends with what it had.
func TestValidateVerdictBeforeRevert(t *testing.T) {
	b, _ := boardPair(t)
	profile := filepath.Join(t.TempDir(), "jumbo.yaml")
	os.WriteFile(profile, []byte("name: jumbo\nknobs:\n  mtu: 9000\n"), 0o644)
	reports := t.TempDir()
	p := writePlan(t, "name: tuned\nboard: zc702\ninterface: eth0\nsteps:\n  - {id: tune, type: tune, profile: "+profile+"}\n  - {id: idle, type: stability, traffic: none, duration: 1s}\n")
	cmd, out, errOut := linerateIn(t, b, "validate", p, "--serial", "NS-12", "--report-dir", reports)
	if !waitOrKill(cmd, time.Minute) {
		t.Fatalf("validate did not end:\n%s%s", out, errOut)
	}
	console := out.String()
	verdict := strings.Index(console, "LINERATE PASS board=zc702 serial=NS-12 ")
	back := strings.Index(console, "linerate validate: eth0 given back what it had before the tune\n")
	if verdict < 0 || back < verdict {
		t.Fatalf("want the verdict line (at %d), then the port given back (at %d):\n%s%s", verdict, back, console, errOut)
	}
	if mtu := strings.TrimSpace(b.Exec(t, "cat", "/sys/class/net/eth0/mtu")); mtu != "1500" {
		t.Errorf("MTU %s after the run: the tune was not given back", mtu)
	}
	files, _ := filepath.Glob(filepath.Join(reports, "*.json"))
	if len(files) != 1 {
		t.Fatalf("reports %v", files)
	}
	body, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Show []struct {
			MTU int `json:"mtu"`
		} `json:"show"`
	}
	if err := json.Unmarshal(body, &rep); err != nil || len(rep.Show) != 1 || rep.Show[0].MTU != 9000 {
		t.Errorf("the report's show: %v %+v, want the tuned port (MTU 9000)", err, rep.Show)
	}
}

// TestFlapDuringTCPStep: the run's link watch names a flap during a TCP step in that
// step's result and fails the board for it as a stability fault, with the time; the
// stability step without a window of its own judges the link as the run's watch saw it.
// Each step's report says its measurement window and its overhead, and the verdict line
// the run's.
func TestFlapDuringTCPStep(t *testing.T) {
	nstest.NeedTool(t, "iperf3")
	b, st := boardPair(t)
	srv := exec.Command("ip", "netns", "exec", st.Name, "iperf3", "-s")
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		srv.Process.Kill()
		srv.Wait()
	}()
	waitListen(st, "5201")
	plan := writePlan(t, `board: zc702
interface: eth0
station:
  address: 198.18.61.1
steps:
  - {id: link, type: link}
  - {id: tcp-up, type: iperf3, protocol: tcp, direction: up, duration: 4s, min_mbps: 1}
  - {id: stable, type: stability, window: 0s}
`)
	reports := t.TempDir()
	type step struct {
		ID         string   `json:"id"`
		Pass       bool     `json:"pass"`
		Reason     string   `json:"reason"`
		WindowS    float64  `json:"window_s"`
		SetupS     float64  `json:"setup_s"`
		Seconds    float64  `json:"seconds"`
		Flap       string   `json:"flap"`
		LinkEvents []string `json:"link_events"`
	}
	report := func(out string) (rep struct {
		Seconds float64 `json:"seconds"`
		WindowS float64 `json:"window_s"`
		Steps   []step  `json:"steps"`
	}) {
		t.Helper()
		m := regexp.MustCompile(`(?m)^linerate validate: reports (\S+)\.json and \S+ in (\S+)$`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no report named:\n%s", out)
		}
		body, err := os.ReadFile(filepath.Join(m[2], m[1]+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(body, &rep); err != nil || len(rep.Steps) != 3 {
			t.Fatalf("report steps %+v", rep.Steps)
		}
		return rep
	}
	out, code := runIn(t, b, time.Minute, "validate", plan, "--serial", "NS-10", "--report-dir", reports)
	verdict := regexp.MustCompile(`(?m)^LINERATE PASS board=zc702 serial=NS-10 .* failed=- elapsed=([\d.]+)s windows=([\d.]+)s overhead=([\d.]+)s$`).FindStringSubmatch(out)
	if code != 0 || verdict == nil || !regexp.MustCompile(`stable\s+stability\s+PASS\s+\d+s watched with the run's steps: 0 link event\(s\), 0 carrier loss\(es\)`).MatchString(out) {
		t.Fatalf("no flap: exit %d\n%s", code, out)
	}
	rep := report(out)
	if tcp := rep.Steps[1]; tcp.WindowS < 3.9 || tcp.WindowS > 4.01 || tcp.SetupS <= 0 || tcp.SetupS > 3 || tcp.Flap != "" || len(tcp.LinkEvents) != 0 {
		t.Errorf("the TCP step's window and overhead: %+v", tcp)
	}
	if rep.WindowS != rep.Steps[1].WindowS || verdict[2] != fmt.Sprintf("%.1f", rep.WindowS) {
		t.Errorf("the run's windows %v (verdict line %s), want the TCP step's %v", rep.WindowS, verdict[2], rep.Steps[1].WindowS)
	}
	t.Logf("no flap: elapsed %ss = windows %ss + overhead %ss", verdict[1], verdict[2], verdict[3])

	wg := flap(t, st, 1500*time.Millisecond, time.Second)
	out, code = runIn(t, b, time.Minute, "validate", plan, "--serial", "NS-10", "--report-dir", reports)
	wg.Wait()
	at := `\d\d:\d\d:\d\d\.\d{3}`
	if code != 1 || !regexp.MustCompile(`tcp-up\s+iperf3\s+FAIL .*: stability fault: the link flapped during this step: `+at+` eth0 carrier down; `+at+` eth0 carrier up after 1\.\d\ds`).MatchString(out) ||
		!regexp.MustCompile(`stable\s+stability\s+FAIL .*the link was not stable: `+at+` eth0 carrier down`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^LINERATE FAIL board=zc702 serial=NS-10 .* flaps=tcp-up@`+at+` failed=tcp-up,stable elapsed=`).MatchString(out) {
		t.Fatalf("a flap during the TCP step: exit %d\n%s", code, out)
	}
	rep = report(out)
	if tcp := rep.Steps[1]; tcp.Pass || !regexp.MustCompile(`^`+at+` eth0 carrier down$`).MatchString(tcp.Flap) || len(tcp.LinkEvents) < 2 || !strings.HasPrefix(tcp.Reason, "stability fault") {
		t.Errorf("the TCP step's result: %+v", tcp)
	}
	if l := rep.Steps[0]; len(l.LinkEvents) != 0 || !l.Pass {
		t.Errorf("the link step saw the flap: %+v", l)
	}
}
