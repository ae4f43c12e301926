package initramfs_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// bootTimes are when a boot's serial log showed what: the first byte (power-on), the
// kernel starting, the verdict line.
type bootTimes struct {
	kernel, verdict time.Duration
}

// timedBoardUp runs board-up and reads its serial log as it grows, noting when the
// kernel starts and the verdict comes, from the log's first byte (QEMU's first output).
func timedBoardUp(t *testing.T, logFile string, args ...string) bootTimes {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(repoRoot(t), "scripts", "board-up"), append(args, "--log", logFile)...)
	stopGently(cmd)
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), "BOARD_UP_STDIN=/dev/null")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	os.Remove(logFile)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var bt bootTimes
	var on time.Time
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("board-up %s: %v\n%s", strings.Join(args, " "), err, out.String())
			}
			if bt.verdict == 0 {
				t.Fatalf("board-up %s: no verdict\n%s", strings.Join(args, " "), out.String())
			}
			return bt
		case now := <-tick.C:
			b, _ := os.ReadFile(logFile)
			switch {
			case len(b) == 0:
			case on.IsZero():
				on = now
			case bt.kernel == 0 && (strings.Contains(string(b), "Starting kernel") || strings.Contains(string(b), "Booting Linux")):
				bt.kernel = now.Sub(on)
			case bt.verdict == 0 && regexp.MustCompile(`(?m)^LINERATE (PASS|FAIL) `).Match(b):
				bt.verdict = now.Sub(on)
			}
		}
	}
}

// netbooted is what a netboot run left: its serial log, the station's data directory,
// the FIT's size and how long its TFTP transfer took, when kernel and verdict came.
type netbooted struct {
	log, data  string
	size, secs float64
	times      bootTimes
	uboot      string
}

// netbootBoard builds BOARD's tester image and U-Boot and boots it as a line does: QEMU
// gets only U-Boot (built from Debian's source), with mac in its device tree as an
// EEPROM gives it; U-Boot takes a lease from the station, fetches the boot script and
// the FIT over TFTP, boots the configuration with the plan's GEM overlay (the image's
// dt-tune applies its profile), and the run must end in a passing verdict, reported with
// U-Boot's version and the board's MAC.
func netbootBoard(t *testing.T, board, mac string) netbooted {
	script(t, 30*time.Minute, "build-image", board)
	lines := strings.Split(strings.TrimSpace(script(t, 40*time.Minute, "build-uboot", board)), "\n")
	uboot := lines[len(lines)-1]
	version, err := os.ReadFile(filepath.Join(uboot, "version"))
	if err != nil || len(strings.TrimSpace(string(version))) == 0 {
		t.Fatalf("U-Boot's version file: %v", err)
	}
	nb := netbooted{uboot: strings.TrimSpace(string(version))}
	dir := t.TempDir()
	nb.data = filepath.Join(dir, "station")
	logFile := filepath.Join(dir, "serial.log")
	nb.times = timedBoardUp(t, logFile, board, "--netboot", "--job", "validate", "--plan", "qemu-"+board, "--peer", "station",
		"--station-data", nb.data, "--mac", mac, "--timeout", "400")
	b, _ := os.ReadFile(logFile)
	nb.log = string(b)
	serial := "mac-" + strings.ReplaceAll(mac, ":", "")
	conf := "conf-" + board + "-" + board
	for _, want := range []string{"U-Boot " + nb.uboot, "DHCP client bound to address 198.18.5.2",
		"linerate: linerate-" + board + ".itb, configuration " + conf, "Using '" + conf + "' configuration",
		"==== LINERATE END dt-tune rc=0 ====", "LINERATE PASS board=" + board + " serial=" + serial + " mac=" + mac + " "} {
		if !strings.Contains(nb.log, want) {
			t.Errorf("the serial log lacks %q; its verdict: %q", want, regexp.MustCompile(`(?m)^LINERATE (PASS|FAIL) .*$`).FindString(nb.log))
		}
	}
	// dt-tune applied the profile the FIT's overlay named: the GEM overlay reached the
	// kernel's device tree through U-Boot.
	if sec, _ := section(t, nb.log, "dt-tune"); !strings.Contains(sec, "profile device-tree ("+board+")") {
		t.Errorf("dt-tune did not apply the overlay's profile:\n%s", sec)
	}
	if r := checkTrace(t, nb.data, board, "", nb.uboot); r.MAC != mac {
		t.Errorf("the report's MAC %q, want the board's %s (not U-Boot's random one)", r.MAC, mac)
	}
	st, _ := os.ReadFile(logFile + ".station")
	fetch := regexp.MustCompile(`netboot: ` + mac + ` \(198\.18\.5\.2\) fetched linerate-` + board + `\.itb: (\d+) of \d+ bytes in ([0-9.]+)s`).FindStringSubmatch(string(st))
	if fetch == nil || !strings.Contains(string(st), "netboot: "+mac+" bound 198.18.5.2") {
		t.Fatalf("the station did not record the boot:\n%s", st)
	}
	nb.size, _ = strconv.ParseFloat(fetch[1], 64)
	nb.secs, _ = strconv.ParseFloat(fetch[2], 64)
	return nb
}

// TestNetboot: the emulated ZC702 netboots to a passing verdict (netbootBoard) with the
// same MAC as a -kernel boot of the same board. Power-on to verdict is measured against
// the -kernel boot, and the FIT's TFTP transfer.
func TestNetboot(t *testing.T) {
	need(t)
	// A Xilinx MAC, not 00:0a:35:00:01:22 (U-Boot's placeholder, which identity fails).
	const mac = "00:0a:35:12:34:56"
	nb := netbootBoard(t, "zc702", mac)
	log, dir := nb.log, t.TempDir()
	// The same board with QEMU loading kernel and image (-kernel), for the figures.
	kdata := filepath.Join(dir, "station-kernel")
	kb := timedBoardUp(t, filepath.Join(dir, "serial-kernel.log"), "zc702", "--job", "validate", "--plan", "qemu-zc702", "--peer", "station",
		"--station-data", kdata, "--mac", mac, "--timeout", "400")
	kl, _ := os.ReadFile(filepath.Join(dir, "serial-kernel.log"))
	if !strings.Contains(string(kl), "LINERATE PASS board=zc702 serial=mac-000a35123456 mac="+mac+" ") {
		t.Errorf("the -kernel boot's verdict: %q", regexp.MustCompile(`(?m)^LINERATE (PASS|FAIL) .*$`).FindString(string(kl)))
	}
	if kr := checkTrace(t, kdata, "zc702", "", ""); kr.MAC != mac {
		t.Errorf("the -kernel boot reported MAC %q, the netboot %q", kr.MAC, mac)
	}
	job := regexp.MustCompile(`job validate finished \(rc \d+\) ([0-9.]+)s after uinit started`)
	nj, kj := job.FindStringSubmatch(log), job.FindStringSubmatch(string(kl))
	if nj == nil || kj == nil {
		t.Fatalf("no job time in the logs: %q %q", nj, kj)
	}
	t.Logf("netboot: power-on to kernel %.1fs, to verdict %.1fs (the job %ss of it, dt-tune included); FIT %.1f MB over TFTP in %.2fs (%.1f MB/s)",
		nb.times.kernel.Seconds(), nb.times.verdict.Seconds(), nj[1], nb.size/1e6, nb.secs, nb.size/1e6/nb.secs)
	t.Logf("-kernel: power-on to kernel %.1fs, to verdict %.1fs (the job %ss of it); netboot adds %.1fs", kb.kernel.Seconds(), kb.verdict.Seconds(), kj[1], (nb.times.verdict - kb.verdict).Seconds())
}

// TestNetbootZCU102: the emulated ZCU102 netboots its arm64 tester image the same way,
// with U-Boot built with the project's patches for a board that has no PMU firmware and
// no ATF (U-Boot runs at EL1). Its clock must be the kernel's: U-Boot left the counter's
// frequency as the board reset it, so every CPU agrees and the rates the plan measures
// are real (a U-Boot that set the real board's 100 MHz made the emulated board's clock
// run at 0.625 of real time and a UDP test paced at 2 Mbit/s send 1.25).
func TestNetbootZCU102(t *testing.T) {
	need(t)
	nb := netbootBoard(t, "zcu102", "00:0a:35:12:34:57")
	if m := regexp.MustCompile(`arch_timer: cp15 timer\(s\) running at ([0-9.]+)MHz`).FindStringSubmatch(nb.log); m == nil || m[1] != "62.50" {
		t.Errorf("the kernel's timer: %q, want QEMU's 62.50 MHz counter", m)
	}
	if strings.Contains(nb.log, "Unexpected variation in SYS_CNTFRQ_EL0") {
		t.Error("the CPUs disagree on the counter's frequency (U-Boot programmed CNTFRQ on one of them)")
	}
	t.Logf("zcu102 netboot: power-on to kernel %.1fs, to verdict %.1fs; FIT %.1f MB over TFTP in %.2fs (%.1f MB/s)",
		nb.times.kernel.Seconds(), nb.times.verdict.Seconds(), nb.size/1e6, nb.secs, nb.size/1e6/nb.secs)
}
