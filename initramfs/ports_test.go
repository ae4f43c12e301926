package initramfs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// TestMultiPort boots the emulated boards with every GEM on a tap of its own and
// validates them with their multi-port plans: the ZCU102's four ports at once, all
// PASS, then again with one port's tap shaped to 1 Mbit/s, which FAILs that port alone
// (its TCP down and its frames); the ZC702's two ports.
func TestMultiPort(t *testing.T) {
	need(t)
	verdict := func(board string, args ...string) string {
		t.Helper()
		dir := t.TempDir()
		logFile := filepath.Join(dir, "serial.log")
		script(t, 20*time.Minute, "board-up", append([]string{board, "--job", "validate", "--peer", "station", "--station-data", filepath.Join(dir, "station"),
			"--timeout", "500", "--log", logFile}, args...)...)
		b, _ := os.ReadFile(logFile)
		m := regexp.MustCompile(`(?m)^LINERATE (PASS|FAIL) board=\S+ serial=\S+ mac=\S+ ((?:eth\d=\S+ )+).*failed=(\S+) elapsed=\S+ windows=\S+ overhead=\S+\r?$`).FindStringSubmatch(string(b))
		if m == nil {
			t.Fatalf("%s %v: no verdict line with ports:\n%s", board, args, b[max(0, len(b)-6000):])
		}
		t.Logf("%s %v: %s", board, args, m[0])
		return m[1] + " " + m[2] + "failed=" + m[3]
	}
	script(t, 30*time.Minute, "build-image", "zcu102")
	if got := verdict("zcu102", "--ports", "4", "--plan", "qemu-zcu102-4port"); got != "PASS eth0=PASS eth1=PASS eth2=PASS eth3=PASS failed=-" {
		t.Errorf("four ports: %s", got)
	}
	// The tbf slows what the station sends that port: TCP down, and the reflector's
	// answers to the frames step (2 Mbit/s of them), which the kernel sends through the
	// port's qdisc as it sends the rest.
	if got := verdict("zcu102", "--ports", "4", "--plan", "qemu-zcu102-4port", "--shape", "tap2=1mbit"); got != "FAIL eth0=PASS eth1=PASS eth2=FAIL(tcp-down,frames) eth3=PASS failed=tcp-down.eth2,frames.eth2" {
		t.Errorf("eth2 shaped: %s", got)
	}
	script(t, 30*time.Minute, "build-image", "zc702")
	if got := verdict("zc702", "--ports", "2", "--plan", "qemu-zc702-2port"); got != "PASS eth0=PASS eth1=PASS failed=-" {
		t.Errorf("two ports: %s", got)
	}
}
