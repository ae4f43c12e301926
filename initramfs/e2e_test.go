package initramfs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"image/png"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zynqnet/linerate/internal/consolecap"
	"github.com/zynqnet/linerate/snapshot"
)

// The end-to-end tests boot the tester image on the emulated ZC702 and ZCU102 with the
// e2e job, through the same scripts a user runs (build-image, board-up), and read the
// verdict from the serial log. They need root (namespaces, tap), QEMU and the kernels;
// make test installs and builds all of it. -short skips them.

func repoRoot(t *testing.T) string {
	t.Helper()
	wd, _ := os.Getwd()
	return filepath.Dir(wd)
}

func need(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: no emulated boards")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root for namespaces and tap devices (CI runs as root)")
	}
	for _, c := range []string{"qemu-system-arm", "qemu-system-aarch64", "mkimage", "iperf3"} {
		if _, err := exec.LookPath(c); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed: make test installs it", c)
			}
			t.Skipf("%s is not installed (scripts/install-deps image installs it)", c)
		}
	}
}

func script(t *testing.T, timeout time.Duration, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(repoRoot(t), "scripts", name), args...)
	stopGently(cmd)
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), "BOARD_UP_STDIN=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// stopGently makes a command's context end it with SIGTERM, SIGKILL only 20 s later:
// board-up's trap (QEMU, the peer, the namespace it made) runs on TERM, never on KILL,
// and a test that times out must not leave a namespace behind.
func stopGently(cmd *exec.Cmd) {
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 20 * time.Second
}

// section returns what the uinit printed between the markers of one step.
func section(t *testing.T, log, name string) (string, int) {
	t.Helper()
	re := regexp.MustCompile(`(?s)==== LINERATE BEGIN ` + regexp.QuoteMeta(name) + `:[^\n]*\n(.*?)==== LINERATE END ` + regexp.QuoteMeta(name) + ` rc=(\d+) ====`)
	// The last run of a step counts: the e2e job runs a step again, after a note, when
	// the emulated GEM stalled under it.
	all := re.FindAllStringSubmatch(log, -1)
	if all == nil {
		t.Fatalf("no step %s in the serial log", name)
	}
	m := all[len(all)-1]
	var rc int
	fmt.Sscan(m[2], &rc)
	// The kernel may print between lines; keep what looks like the command's output.
	var keep []string
	for _, l := range strings.Split(m[1], "\n") {
		if !regexp.MustCompile(`^\[\s*\d+\.\d+\]`).MatchString(l) {
			keep = append(keep, strings.TrimRight(l, "\r"))
		}
	}
	return strings.Join(keep, "\n"), rc
}

type shown struct {
	Name   string `json:"name"`
	Driver struct {
		Name string `json:"name"`
	} `json:"driver"`
	Link struct {
		Carrier   bool    `json:"carrier"`
		SpeedMbps *int    `json:"speed_mbps"`
		Duplex    *string `json:"duplex"`
	} `json:"link"`
	Rings *struct {
		RX, TX, RXMax, TXMax uint32
	} `json:"rings"`
}

func showJSON(t *testing.T, log, step string) shown {
	t.Helper()
	body, rc := section(t, log, step)
	if rc != 0 {
		t.Fatalf("%s: rc %d\n%s", step, rc, body)
	}
	var v []struct {
		shown
		Rings *struct {
			RX    uint32 `json:"rx"`
			TX    uint32 `json:"tx"`
			RXMax uint32 `json:"rx_max"`
			TXMax uint32 `json:"tx_max"`
		} `json:"rings"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil || len(v) != 1 {
		t.Fatalf("%s: not the JSON of one interface: %v\n%s", step, err, body)
	}
	s := v[0].shown
	if r := v[0].Rings; r != nil {
		s.Rings = &struct{ RX, TX, RXMax, TXMax uint32 }{r.RX, r.TX, r.RXMax, r.TXMax}
	}
	return s
}

func iperfMbps(t *testing.T, log, step string) float64 {
	t.Helper()
	body, rc := section(t, log, step)
	var v struct {
		End struct {
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
				Bytes         uint64  `json:"bytes"`
			} `json:"sum_received"`
		} `json:"end"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil || rc != 0 || v.Error != "" || v.End.SumReceived.Bytes == 0 {
		t.Fatalf("%s: rc %d, error %q, %v\n%s", step, rc, v.Error, err, body)
	}
	return v.End.SumReceived.BitsPerSecond / 1e6
}

func TestBoards(t *testing.T) {
	need(t)
	for _, board := range []string{"zc702", "zcu102"} {
		t.Run(board, func(t *testing.T) {
			out := script(t, 30*time.Minute, "build-image", board)
			t.Log(strings.TrimSpace(out[strings.LastIndex(out, "build-image:"):]))
			img, err := os.Stat(filepath.Join(repoRoot(t), "out", "linerate-"+board+".cpio.gz"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(repoRoot(t), "out", "linerate-"+board+".uInitrd")); err != nil {
				t.Fatal(err)
			}
			if img.Size() > 6_500_000 {
				t.Errorf("image %d bytes gzipped, goal 6.5 MB (make size)", img.Size())
			}
			// Kept after the test (out/ is not in git): what to read when it fails.
			logFile := filepath.Join(repoRoot(t), "out", "serial-e2e-"+board+".log")
			start := time.Now()
			monitorSock := filepath.Join(t.TempDir(), "qemu.monitor")
			flaps := []flapAt{{"watch-flap", 4 * time.Second, 2 * time.Second}, {"stability-flap", 7 * time.Second, 2 * time.Second}}
			if board == "zc702" {
				// The job's TCP step with a flap runs on the ZC702 only (see e2e.go).
				flaps = append(flaps, flapAt{"tcp-flap", 7 * time.Second, 2 * time.Second})
			}
			bootFlapping(t, 40*time.Minute, logFile, monitorSock, flaps,
				board, "--job", "e2e", "--timeout", "400", "--mac", macs[board])
			wall := time.Since(start)
			b, err := os.ReadFile(logFile)
			if err != nil {
				t.Fatal(err)
			}
			log := string(b)
			for _, m := range regexp.MustCompile(`LINERATE NOTE rx-stall: ([^=]*)`).FindAllStringSubmatch(log, -1) {
				t.Logf("the emulated GEM stopped receiving (a QEMU model limit, see the uinit's rxStall): %s", m[1])
			}
			checkPHY(t, log)
			checkFlaps(t, log, board == "zc702")
			checkSpeeds(t, log)
			if !strings.Contains(log, "LINERATE E2E DONE rc=0") {
				t.Errorf("no passing e2e verdict in the serial log (%s)", logFile)
			}
			// QEMU's PHY answers the Marvell driver's PHY-specific status register with
			// 100 Mb/s full (README, Emulated boards): the link the kernel reports.
			if !regexp.MustCompile(`eth0: link up 100 Mb/s full`).MatchString(log) {
				t.Error("eth0 did not come up at 100/Full")
			}
			s := showJSON(t, log, "show-json")
			if s.Driver.Name != "macb" || !s.Link.Carrier || s.Link.SpeedMbps == nil || *s.Link.SpeedMbps != 100 || s.Link.Duplex == nil || *s.Link.Duplex != "full" {
				t.Errorf("show: %+v", s)
			}
			if r := s.Rings; r == nil || r.RX != 512 || r.RXMax != 8192 || r.TX != 512 || r.TXMax != 4096 {
				t.Errorf("rings %+v, want rx 512/8192 tx 512/4096", s.Rings)
			}
			if r := showJSON(t, log, "show-json-tuned").Rings; r == nil || r.RX != 1024 || r.TX != 1024 {
				t.Errorf("after tune, rings %+v, want 1024/1024 on the real macb", r)
			}
			if r := showJSON(t, log, "show-json-reverted").Rings; r == nil || r.RX != 512 || r.TX != 512 {
				t.Errorf("after revert, rings %+v, want 512/512", r)
			}
			// The same tune and revert through the ioctl (the path before ethtool netlink).
			if r := showJSON(t, log, "show-json-tuned-ioctl").Rings; r == nil || r.RX != 1024 || r.TX != 1024 {
				t.Errorf("after tune through the ioctl, rings %+v, want 1024/1024", r)
			}
			if r := showJSON(t, log, "show-json-reverted-ioctl").Rings; r == nil || r.RX != 512 || r.TX != 512 {
				t.Errorf("after revert through the ioctl, rings %+v, want 512/512", r)
			}
			// The capture job's snapshot comes back whole over the console and opens as
			// a snapshot (scripts/capture-board makes testdata/captures this way).
			if archive, err := consolecap.Read(bytes.NewReader(b), snapshot.MaxFileBytes); err != nil {
				t.Errorf("capture on the console: %v", err)
			} else if m, err := snapshot.Check(archive); err != nil || len(m.Interfaces) != 1 || m.Interfaces[0] != "eth0" {
				t.Errorf("capture: %v %+v", err, m)
			} else {
				t.Logf("%s: captured %d bytes over the console", board, len(archive))
			}
			up, down := iperfMbps(t, log, "iperf3-upload"), iperfMbps(t, log, "iperf3-download")
			// Boot to result: from QEMU's start to the uinit's job line, by the guest clock.
			var result float64
			if m := regexp.MustCompile(`job e2e finished \(rc \d+\) ([\d.]+)s after uinit started`).FindStringSubmatch(log); m != nil {
				fmt.Sscan(m[1], &result)
			}
			t.Logf("%s: image %d bytes gzipped; boot+job %.1fs wall; iperf3 to the station %.1f Mbit/s, from it %.1f Mbit/s (emulation speed, not a board figure)",
				board, img.Size(), wall.Seconds(), up, down)
		})
	}
}

// macs are the emulated boards' MACs (board-up --mac): Xilinx's OUI, a different one per
// board, as a line's boards have.
var macs = map[string]string{"zc702": "00:0a:35:02:07:02", "zcu102": "00:0a:35:10:21:02"}

// phyJSON is what 'linerate phy --json' prints, as far as the tests read it.
type phyJSON struct {
	Sysfs *struct {
		ID, Driver string
	} `json:"sysfs"`
	Registers *struct {
		BMCR uint16 `json:"bmcr"`
		ID1  uint16 `json:"phyid1"`
		ID2  uint16 `json:"phyid2"`
	} `json:"registers"`
}

func phyOf(t *testing.T, log, step string) phyJSON {
	t.Helper()
	body, rc := section(t, log, step)
	var p phyJSON
	if err := json.Unmarshal([]byte(body), &p); err != nil || rc != 0 || p.Registers == nil || p.Sysfs == nil {
		t.Fatalf("%s: rc %d, %v\n%s", step, rc, err, body)
	}
	return p
}

// checkPHY: QEMU's PHY (id 0x01410cc2, which phylib's Marvell driver takes for an
// 88E1111) with that vendor driver bound, the loopback
// self-test with every frame back and the control register given back, a test
// killed in loopback given back by revert, and one whose PHY was reset in loopback
// looped again.
func checkPHY(t *testing.T, log string) {
	t.Helper()
	before := phyOf(t, log, "phy")
	if r := before.Registers; r.ID1 != 0x0141 || r.ID2 != 0x0cc2 || before.Sysfs.ID != "0x01410cc2" || before.Sysfs.Driver != "Marvell 88E1111" {
		t.Errorf("PHY id %04x/%04x, sysfs %+v: want QEMU's Marvell PHY (id 0x01410cc2) with its vendor driver", r.ID1, r.ID2, *before.Sysfs)
	}
	if before.Registers.BMCR&0x4000 != 0 {
		t.Fatalf("BMCR 0x%04x in loopback before the test", before.Registers.BMCR)
	}
	body, rc := section(t, log, "phy-loopback")
	var lb struct {
		Sent, Received, Corrupted uint64
		Loop                      string `json:"bmcr_loopback"`
		Restored                  bool
	}
	if err := json.Unmarshal([]byte(body), &lb); err != nil || rc != 0 || lb.Sent != 1000 || lb.Received != 1000 || lb.Corrupted != 0 || !lb.Restored {
		t.Errorf("phy --loopback: rc %d %v %+v\n%s", rc, err, lb, body)
	}
	if after := phyOf(t, log, "phy-after"); after.Registers.BMCR != before.Registers.BMCR {
		t.Errorf("BMCR 0x%04x after the loopback test, was 0x%04x", after.Registers.BMCR, before.Registers.BMCR)
	}
	if _, rc := section(t, log, "phy-kill"); rc != 0 {
		t.Errorf("the long loopback test never put the PHY in loopback before it was killed")
	}
	if killed := phyOf(t, log, "phy-killed"); killed.Registers.BMCR&0x4000 == 0 {
		t.Errorf("BMCR 0x%04x after kill -9: the test was not in loopback", killed.Registers.BMCR)
	}
	if body, rc := section(t, log, "revert-phy"); rc != 0 || !strings.Contains(body, "phy.bmcr") {
		t.Errorf("revert after the killed test: rc %d\n%s", rc, body)
	}
	if back := phyOf(t, log, "phy-reverted"); back.Registers.BMCR != before.Registers.BMCR {
		t.Errorf("BMCR 0x%04x after revert, was 0x%04x", back.Registers.BMCR, before.Registers.BMCR)
	}
	// The PHY reset once in loopback (a driver's late config_aneg): looped again, the
	// frames sent again, all back, the register given back.
	body, rc = section(t, log, "phy-reset")
	var reset struct {
		Sent, Received, Corrupted uint64
		Relooped, Restored        bool
	}
	if err := json.Unmarshal([]byte(body), &reset); err != nil || rc != 0 || !reset.Relooped || reset.Sent != 6000 || reset.Received != 6000 || reset.Corrupted != 0 || !reset.Restored {
		t.Errorf("phy --loopback with the PHY reset in loopback: rc %d %v %+v\n%s", rc, err, reset, body)
	}
}

// checkFlaps: watch, the stability step and the run's link watch during a TCP step saw
// the host's flap (and said when); the stability step without one passed.
func checkFlaps(t *testing.T, log string, tcpFlap bool) {
	t.Helper()
	body, rc := section(t, log, "watch-flap")
	if rc != 1 || !regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d\.\d{3} eth0 carrier down\r?$`).MatchString(body) ||
		!regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d\.\d{3} eth0 carrier up after \d+\.\d\ds\r?$`).MatchString(body) {
		t.Errorf("watch while the host flapped the link: rc %d\n%s", rc, body)
	}
	// watch and the stability step read the PHY too (QEMU's GEM PHY through MII): its
	// link bit goes down and up with the carrier, before or after it as the reads fall.
	at := `\d\d:\d\d:\d\d\.\d{3}`
	if !regexp.MustCompile(`(?m)^`+at+` eth0 PHY link down \(BMSR 0x7949: link down\)\r?$`).MatchString(body) ||
		!regexp.MustCompile(`(?m)^`+at+` eth0 PHY link up \(BMSR 0x796d: link up, autoneg complete\)\r?$`).MatchString(body) {
		t.Errorf("watch did not see the PHY's link go down and up:\n%s", body)
	}
	body, rc = section(t, log, "stability-flap")
	if rc != 1 || !regexp.MustCompile(`stable\s+stability\s+FAIL .*the link was not stable: `+at+` eth0 (carrier down|PHY link down)`).MatchString(body) ||
		!strings.Contains(body, "eth0 PHY link down (BMSR 0x7949: link down)") {
		t.Errorf("a stability step with a flap: rc %d\n%s", rc, body)
	}
	// The run's link watch: a flap during a TCP step fails it as a stability fault,
	// with the time, and the verdict line names the step and the time.
	if tcpFlap {
		checkTCPFlap(t, log)
	}
	body, rc = section(t, log, "stability")
	// Watched for its 15 s: the summary says the time it watched, 15 or 16 s as the
	// emulated board's clock and its TCP's end fall.
	m := regexp.MustCompile(`stable\s+stability\s+PASS\s+(\d+)s watched with TCP up [\d.]+ Mbit/s: 0 link event\(s\)`).FindStringSubmatch(body)
	if w := 0; m != nil {
		fmt.Sscan(m[1], &w)
		if w < 15 || w > 17 {
			m = nil
		}
	}
	if rc != 0 || m == nil {
		t.Errorf("a stability step without a flap: rc %d\n%s", rc, body)
	}
}

// checkTCPFlap: the run's link watch failed a TCP step with a flap as a stability fault,
// with the time, and the verdict line names the step and the time.
func checkTCPFlap(t *testing.T, log string) {
	t.Helper()
	body, rc := section(t, log, "tcp-flap")
	at := `\d\d:\d\d:\d\d\.\d{3}`
	// The PHY's registers (QEMU's GEM PHY through MII) show the loss too, read by the
	// watch once a second: before the carrier's event or after, as the reads fall.
	if rc != 1 || !regexp.MustCompile(`tcp\s+iperf3\s+FAIL .*stability fault: the link flapped during this step: `+at+` eth0 (carrier down|PHY link down \(BMSR 0x7949: link down\))`).MatchString(body) ||
		!regexp.MustCompile(`tcp\s+iperf3\s+FAIL .*`+at+` eth0 PHY link down \(BMSR 0x7949: link down\).*`+at+` eth0 PHY link up`).MatchString(body) ||
		!regexp.MustCompile(`(?m)^LINERATE FAIL .* flaps=tcp@`+at+` failed=tcp elapsed=`).MatchString(body) {
		t.Errorf("a TCP step with a flap: rc %d\n%s", rc, body)
	}
}

// checkSpeeds: the speed matrix on QEMU's PHY, which reports 100 Mb/s whatever is
// advertised: 100 passes, 1000 fails saying the PHY ignored the advertisement, never a
// pass on the wrong speed; and the advertisement is what it was before.
func checkSpeeds(t *testing.T, log string) {
	t.Helper()
	body, rc := section(t, log, "speeds")
	if rc != 1 || !strings.Contains(body, "speeds 100->100 1000->100") || !strings.Contains(body, "1000 Mbit/s: the link came up at 100 Mbit/s, not 1000 Mbit/s: the PHY ignores the advertisement") ||
		strings.Contains(body, "was not given back") {
		t.Errorf("the speed matrix: rc %d\n%s", rc, body)
	}
	type adv struct {
		Link struct {
			Advertised []string `json:"advertised_modes"`
			Autoneg    *bool    `json:"autoneg"`
		} `json:"link"`
	}
	var before, after []adv
	b1, _ := section(t, log, "show-json")
	b2, _ := section(t, log, "show-json-after-speeds")
	if json.Unmarshal([]byte(b1), &before) != nil || json.Unmarshal([]byte(b2), &after) != nil || len(before) != 1 || len(after) != 1 ||
		strings.Join(before[0].Link.Advertised, " ") != strings.Join(after[0].Link.Advertised, " ") || len(before[0].Link.Advertised) == 0 {
		t.Errorf("advertised before the matrix %+v, after %+v", before, after)
	}
}

func TestBadBoard(t *testing.T) {
	cmd := exec.Command(filepath.Join(repoRoot(t), "scripts", "build-image"), "zc999")
	cmd.Dir = repoRoot(t)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "known: zc702 zc706") {
		t.Errorf("unknown board: %v %s", err, out)
	}
}

// TestDeviceTreeTuning boots the emulated ZC702 with a device tree that linerate made:
// `linerate dts overlay --base` writes an overlay with linerate,rx-ring-size and
// linerate,tx-ring-size for the board's GEM (target-path, as the kernel-built DTB has no
// __symbols__), `linerate dts merge` merges it into the boot DTB, and on the board the
// uinit applies the properties before the job: dts show --live reports them, and show
// reports the rings.
func TestDeviceTreeTuning(t *testing.T) {
	need(t)
	script(t, 30*time.Minute, "build-image", "zc702")
	kdir := strings.TrimSpace(script(t, 30*time.Minute, "build-kernel-zc702"))
	dir := t.TempDir()
	lr := filepath.Join(dir, "linerate")
	build := exec.Command("go", "build", "-o", lr, "./cmd/linerate")
	build.Dir = repoRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	base := filepath.Join(kdir, "zynq-zc702.dtb")
	ovl, dtb := filepath.Join(dir, "rings.dtbo"), filepath.Join(dir, "zc702-linerate.dtb")
	for _, args := range [][]string{
		{"dts", "overlay", "--base", base, "--rx-ring", "2048", "--tx-ring", "1024", "-o", ovl},
		{"dts", "merge", base, ovl, "-o", dtb},
	} {
		if out, err := exec.Command(lr, args...).CombinedOutput(); err != nil {
			t.Fatalf("linerate %v: %v\n%s", args, err, out)
		}
	}
	logFile := filepath.Join(dir, "serial.log")
	script(t, 20*time.Minute, "board-up", "zc702", "--job", "show", "--peer", "none", "--dtb", dtb, "--timeout", "300", "--log", logFile)
	b, _ := os.ReadFile(logFile)
	log := string(b)
	live, rc := section(t, log, "dts-live")
	if rc != 0 || !regexp.MustCompile(`/axi/ethernet@e000b000  gem0  ethernet0  okay`).MatchString(live) ||
		!regexp.MustCompile(`linerate,rx-ring-size\s+<2048>`).MatchString(live) || !regexp.MustCompile(`linerate,tx-ring-size\s+<1024>`).MatchString(live) {
		t.Errorf("dts show --live on the board: rc %d\n%s", rc, live)
	}
	body, rc := section(t, log, "dt-tune")
	if rc != 0 || !strings.Contains(body, "rings.rx") || !strings.Contains(body, "2048") {
		t.Errorf("dt-tune: rc %d\n%s", rc, body)
	}
	show, _ := section(t, log, "show")
	if !regexp.MustCompile(`rings\s+rx 2048/8192\s+tx 1024/4096`).MatchString(show) {
		t.Errorf("show after boot does not have the device tree's rings:\n%s", show)
	}
}

// TestDHCPAndBadCmdline boots the emulated ZC702 twice: once asking DHCP for its address
// (a udhcpd in the board's namespace leases 198.18.5.2), once with a job the uinit does
// not know, which must be reported on the console with the shell offered, never a panic.
func TestDHCPAndBadCmdline(t *testing.T) {
	need(t)
	if _, err := exec.LookPath("busybox"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("busybox (udhcpd) is not installed: make test installs it")
		}
		t.Skip("busybox (udhcpd) is not installed")
	}
	script(t, 30*time.Minute, "build-image", "zc702")
	logFile := filepath.Join(t.TempDir(), "dhcp.log")
	script(t, 20*time.Minute, "board-up", "zc702", "--job", "show", "--peer", "none", "--dhcp", "--timeout", "300", "--log", logFile)
	b, _ := os.ReadFile(logFile)
	log := string(b)
	if !strings.Contains(log, "LINERATE-UINIT: eth0: DHCP") || !strings.Contains(log, "198.18.5.2") {
		t.Errorf("no DHCP lease of 198.18.5.2 in the serial log %s", logFile)
	}
	if _, rc := section(t, log, "show"); rc != 0 {
		t.Errorf("show after DHCP: rc %d", rc)
	}

	logFile = filepath.Join(t.TempDir(), "bad.log")
	// The shell keeps the board up: the timeout ends this boot (rc 124).
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(repoRoot(t), "scripts", "board-up"), "zc702", "--job", "show", "--peer", "none",
		"--append", "linerate.run=fly linerate.after=explode", "--timeout", "25", "--log", logFile)
	stopGently(cmd)
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), "BOARD_UP_STDIN=/dev/null")
	out, _ := cmd.CombinedOutput()
	b, _ = os.ReadFile(logFile)
	log = string(b)
	for _, want := range []string{`linerate.run: unknown job "fly"`, `linerate.after: "explode": want shell, poweroff or reboot`, "the job is not run", "shell on the console"} {
		if !strings.Contains(log, want) {
			t.Errorf("serial log lacks %q\n%s", want, out)
		}
	}
	if strings.Contains(log, "Kernel panic") || strings.Contains(log, "panic:") {
		t.Errorf("panic on a bad command line:\n%s", log)
	}
}

// TestValidate is make demo checked: the emulated ZC702 boots with the validate job and
// the qemu-zc702 plan against the line station in the host-side namespace (reports,
// iperf3 server, reflector on tap0). The serial log must end the job with a PASS
// verdict line; then a station on the same store serves the report as JSON and JUnit
// and the page lists the board, which headless Chromium renders.
func TestValidate(t *testing.T) {
	need(t)
	for _, c := range []string{"chromium"} {
		if _, err := exec.LookPath(c); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed: make test installs it", c)
			}
			t.Skipf("%s is not installed", c)
		}
	}
	script(t, 30*time.Minute, "build-image", "zc702")
	dir := t.TempDir()
	data, logFile := filepath.Join(dir, "station"), filepath.Join(dir, "serial.log")
	script(t, 20*time.Minute, "board-up", "zc702", "--job", "validate", "--plan", "qemu-zc702", "--peer", "station",
		"--station-data", data, "--timeout", "400", "--log", logFile)
	b, _ := os.ReadFile(logFile)
	log := string(b)
	verdict := regexp.MustCompile(`(?m)^LINERATE (PASS|FAIL) board=(\S+) serial=(\S+) mac=(\S+) .*failed=(\S+) elapsed=([\d.]+)s windows=([\d.]+)s overhead=\S+\r?$`).FindStringSubmatch(log)
	if verdict == nil || verdict[1] != "PASS" || verdict[2] != "zc702" || verdict[5] != "-" {
		t.Fatalf("verdict line: %q\n%s", verdict, log[max(0, len(log)-6000):])
	}
	var elapsed, windows float64
	fmt.Sscan(verdict[6], &elapsed)
	fmt.Sscan(verdict[7], &windows)
	if windows <= 0 || windows > elapsed {
		t.Errorf("windows %vs of an elapsed %vs", windows, elapsed)
	} else {
		t.Logf("the qemu-zc702 plan: verdict %.1fs after its start, its measurement windows %.1fs: %.2fx", elapsed, windows, elapsed/windows)
	}
	steps := []string{"link", "identity", "phy", "doctor", "tune", "tcp-up", "tcp-down", "udp-up", "frames", "stability", "counters"}
	for _, step := range steps {
		if !regexp.MustCompile(fmt.Sprintf(`step \d+/%d %s\s+\S+\s+PASS`, len(steps), step)).MatchString(log) {
			t.Errorf("no PASS line for step %s", step)
		}
	}
	if !strings.Contains(log, "delivered to http://198.18.5.1:8080/api/reports") {
		t.Errorf("the report was not delivered to the station")
	}

	// The station again, on the same store, on loopback.
	base, addr := stationOn(t, data)
	var list []struct {
		ID, Board, Serial, Verdict string
		Figures                    map[string]float64
		PostedBy                   string `json:"posted_by"`
	}
	for i := 0; ; i++ {
		resp, err := http.Get(base + "/api/reports")
		if err == nil {
			json.NewDecoder(resp.Body).Decode(&list)
			resp.Body.Close()
			break
		}
		if i > 100 {
			t.Fatalf("station on %s: %v", addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// board-up's station takes reports with its token only: the board posted with it.
	if len(list) != 1 || list[0].Board != "zc702" || list[0].Verdict != "PASS" || list[0].Serial != verdict[3] || list[0].Figures["tcp-up_mbps"] <= 0 || list[0].PostedBy != "board-up" {
		t.Fatalf("station's reports: %+v", list)
	}
	get := func(path string) string {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %s", path, resp.Status)
		}
		return string(b)
	}
	var full struct {
		Schema int `json:"schema_version"`
		Steps  []struct{ ID string }
		Show   json.RawMessage
		Doctor json.RawMessage
	}
	if err := json.Unmarshal([]byte(get("/api/reports/"+list[0].ID)), &full); err != nil || full.Schema != 1 || len(full.Steps) != len(steps) || len(full.Show) < 100 || len(full.Doctor) < 50 {
		t.Errorf("the JSON report: %v schema %d, %d steps, show %d bytes, doctor %d bytes", err, full.Schema, len(full.Steps), len(full.Show), len(full.Doctor))
	}
	var junit struct {
		Suites []struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
			Cases    []struct {
				Name string `xml:"name,attr"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(get("/api/reports/"+list[0].ID+"/junit.xml")), &junit); err != nil || junit.Suites[0].Tests != len(steps) || junit.Suites[0].Failures != 0 || junit.Suites[0].Cases[8].Name != "frames ["+verdict[3]+"]" {
		t.Errorf("the JUnit report: %v %+v", err, junit)
	}
	page := get("/")
	for _, want := range []string{"zc702", verdict[3], `<span class="PASS">PASS</span>`, "<svg"} {
		if !strings.Contains(page, want) {
			t.Errorf("the station page lacks %q", want)
		}
	}
	// One screenshot: the page as a browser renders it.
	shot := filepath.Join(dir, "station.png")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--hide-scrollbars", "--window-size=1280,1800", "--screenshot="+shot, base+"/").CombinedOutput()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	// The PASS badge is green (#2e7d32): the rendered page must show it.
	green := 0
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 2 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 2 {
			r, g, b, _ := img.At(x, y).RGBA()
			if r>>8 < 0x40 && g>>8 > 0x70 && g>>8 < 0x90 && b>>8 < 0x40 {
				green++
			}
		}
	}
	if bounds.Dx() != 1280 || green < 20 {
		t.Errorf("screenshot %v with %d PASS-green pixels (sampled): the page did not render the board", bounds, green)
	}
	t.Logf("verdict: %s", verdict[0])
}

// stationOn runs linerate's station on the store in data, on loopback, until the test
// ends (stopped by its PID), and returns its base URL and address.
func stationOn(t *testing.T, data string) (base, addr string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = ln.Addr().String()
	ln.Close()
	st := exec.Command(filepath.Join(repoRoot(t), "bin", "linerate"), "station", "--data", data, "--listen", addr, "--iperf3", "off", "--duration", "120s")
	if err := st.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Process.Signal(os.Interrupt); st.Wait() })
	return "http://" + addr, addr
}

// TestSweepOnBoard: the emulated ZC702 boots with the validate job and the
// qemu-zc702-sweep plan: its real macb driver takes each RX ring depth from 64 to 8192
// (read back as ethtool -g reads it), TCP from the station and frames through its
// reflector are measured at each, and the depth is given back; the station serves the
// report and draws the curve (out/sweep-zc702.svg, the README's chart).
func TestSweepOnBoard(t *testing.T) {
	need(t)
	script(t, 30*time.Minute, "build-image", "zc702")
	dir := t.TempDir()
	data, logFile := filepath.Join(dir, "station"), filepath.Join(dir, "serial.log")
	script(t, 20*time.Minute, "board-up", "zc702", "--job", "validate", "--plan", "qemu-zc702-sweep", "--peer", "station",
		"--station-data", data, "--timeout", "500", "--log", logFile)
	b, _ := os.ReadFile(logFile)
	log := string(b)
	if !regexp.MustCompile(`(?m)^LINERATE PASS board=zc702 .*failed=- elapsed=\S+ windows=\S+ overhead=\S+\r?$`).MatchString(log) {
		t.Fatalf("no PASS verdict:\n%s", log[max(0, len(log)-6000):])
	}
	base, addr := stationOn(t, data)
	get := func(path string) []byte {
		for i := 0; ; i++ {
			resp, err := http.Get(base + path)
			if err == nil {
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != 200 {
					t.Fatalf("GET %s: %s %s", path, resp.Status, b)
				}
				return b
			}
			if i > 100 {
				t.Fatalf("station on %s: %v", addr, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	var list []struct{ ID string }
	json.Unmarshal(get("/api/reports"), &list)
	if len(list) != 1 {
		t.Fatalf("station's reports: %+v", list)
	}
	var rep struct {
		Steps []struct {
			ID     string
			Pass   bool
			Detail struct {
				Restored bool
				Points   []struct {
					Value, Applied, Error string
					Median                map[string]float64
				}
			}
		}
	}
	if err := json.Unmarshal(get("/api/reports/"+list[0].ID), &rep); err != nil || len(rep.Steps) != 2 {
		t.Fatalf("report: %v %+v", err, rep)
	}
	sw := rep.Steps[1]
	want := []string{"64", "128", "256", "512", "1024", "2048", "4096", "8192"}
	if sw.ID != "rx-rings" || !sw.Pass || !sw.Detail.Restored || len(sw.Detail.Points) != len(want) {
		t.Fatalf("the sweep step: %+v", sw)
	}
	for i, p := range sw.Detail.Points {
		if p.Value != want[i] || p.Applied != want[i] || p.Error != "" || p.Median["tcp_mbps"] <= 0 || p.Median["p99_us_512"] <= 0 {
			t.Errorf("point %d: %+v", i, p)
		}
		t.Logf("rings.rx %5s: tcp %.1f Mbit/s, frames loss %.2f%%, p99 %.0f us", p.Value, p.Median["tcp_mbps"], p.Median["loss_pct_512"], p.Median["p99_us_512"])
	}
	svg := get("/api/reports/" + list[0].ID + "/sweep/rx-rings.svg")
	if !strings.Contains(string(svg), "sweep of rings.rx on eth0") {
		t.Errorf("the chart: %s", svg)
	}
	os.WriteFile(filepath.Join(repoRoot(t), "out", "sweep-zc702.svg"), svg, 0o644)
	if !regexp.MustCompile(`step 2/2 rx-rings\s+\S+\s+PASS`).MatchString(log) {
		t.Errorf("no PASS line for the sweep step on the console")
	}
}
