package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
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

// sweepPair: a0 (198.18.7.1) in a, b0 (198.18.7.2) in b with a stock iperf3 server and
// linerate's reflector on it, both stopped by PID when the test ends.
func sweepPair(t *testing.T) (a, b *nstest.NS, mac string) {
	t.Helper()
	nstest.Require(t)
	nstest.NeedTool(t, "iperf3")
	a, b = nstest.New(t), nstest.New(t)
	noIPv6(t, a, b)
	a.Veth(t, "a0", "b0", b, 1)
	a.Exec(t, "ip", "addr", "add", "198.18.7.1/24", "dev", "a0")
	b.Exec(t, "ip", "addr", "add", "198.18.7.2/24", "dev", "b0")
	srv := exec.Command("ip", "netns", "exec", b.Name, "iperf3", "-s")
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	refl, _, _ := linerateIn(t, b, "reflect", "b0", "--duration", "300s")
	t.Cleanup(func() {
		srv.Process.Kill()
		srv.Wait()
		refl.Process.Kill()
		refl.Wait()
	})
	waitListen(b, "5201")
	return a, b, macOf(t, b, "b0")
}

func rmemOf(t *testing.T, ns *nstest.NS) string {
	t.Helper()
	return strings.Join(strings.Fields(ns.Exec(t, "cat", "/proc/sys/net/ipv4/tcp_rmem")), " ")
}

type sweepJSON struct {
	Knob   string
	Points []struct {
		Value, Applied, Error, Stopped string
		Runs                           []map[string]float64
		Median                         map[string]float64
	}
	Restored    bool
	Interrupted bool
}

// TestSweepInNamespaces sweeps the receive buffer TCP may grow to (tcp_rmem, per
// namespace) on a0 with TCP coming in from a stock iperf3 server (-R) and frames of two
// sizes through a reflector: every point is applied, read back and measured; the
// kernel's real effect shows (a 4 KB receive window holds TCP far below the default's
// throughput); the table, CSV and chart are written; tcp_rmem is as it was after.
func TestSweepInNamespaces(t *testing.T) {
	a, _, mac := sweepPair(t)
	before := rmemOf(t, a)
	dir := t.TempDir()
	state, csv, svg := filepath.Join(dir, "state"), filepath.Join(dir, "s.csv"), filepath.Join(dir, "s.svg")
	tiny, dflt := "4096 4096 4096", "4096 131072 6291456"
	cmd, out, errOut := linerateIn(t, a, "sweep", "a0", "--knob", "sysctl.net.ipv4.tcp_rmem", "--values", tiny+";"+dflt,
		"--iperf3", "198.18.7.2", "--direction", "down", "--reflector", mac, "--size", "64,1518", "--rate", "2000pps",
		"--duration", "1s", "--repeat", "2", "--csv", csv, "--svg", svg, "--json", "--state-dir", state)
	if !waitOrKill(cmd, 120*time.Second) || cmd.ProcessState.ExitCode() != 0 {
		t.Fatalf("sweep: exit %d\n%s\n%s", cmd.ProcessState.ExitCode(), out, errOut)
	}
	var r sweepJSON
	if err := json.Unmarshal(out.Bytes(), &r); err != nil || len(r.Points) != 2 || !r.Restored {
		t.Fatalf("sweep result (%v): %s\n%s", err, out, errOut)
	}
	t.Logf("progress:\n%s", errOut)
	for i, want := range []string{tiny, dflt} {
		p := r.Points[i]
		if p.Error != "" || p.Value != want || p.Applied != want || len(p.Runs) != 2 {
			t.Errorf("point %d: %+v", i, p)
		}
		for _, k := range []string{"tcp_mbps", "tcp_retransmits", "loss_pct_64", "p50_us_64", "p99_us_64", "p999_us_64", "loss_pct_1518", "p99_us_1518"} {
			if _, ok := p.Median[k]; !ok {
				t.Errorf("point %d has no %s: %v", i, k, p.Median)
			}
		}
		if p.Median["loss_pct_64"] > 1 || p.Median["p99_us_64"] <= 0 {
			t.Errorf("point %d: frames through the reflector: %v", i, p.Median)
		}
	}
	if lo, hi := r.Points[0].Median["tcp_mbps"], r.Points[1].Median["tcp_mbps"]; !(lo > 0 && lo < hi/2) {
		t.Errorf("a 4 KB receive buffer gave %.0f Mbit/s, the default %.0f: the knob's effect is not in the figures", lo, hi)
	}
	if got := rmemOf(t, a); got != before {
		t.Errorf("tcp_rmem after the sweep %q, before %q", got, before)
	}
	if _, err := os.Stat(filepath.Join(state, "sweep", journalIn(t, a, "a0"))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the sweep's journal is left behind: %v", err)
	}
	// Without --json: the table, a row per value under a header of the figures.
	cmd, out, errOut = linerateIn(t, a, "sweep", "a0", "--knob", "sysctl.net.ipv4.tcp_rmem", "--values", tiny+";"+dflt,
		"--reflector", mac, "--size", "64", "--rate", "1000pps", "--duration", "1s", "--state-dir", filepath.Join(dir, "state2"))
	if !waitOrKill(cmd, 60*time.Second) || cmd.ProcessState.ExitCode() != 0 {
		t.Fatalf("sweep: exit %d\n%s\n%s", cmd.ProcessState.ExitCode(), out, errOut)
	}
	table := regexp.MustCompile(`(?m)^  sysctl\.net\.ipv4\.tcp_rmem +reads back +loss_pct_64 +p50_us_64 +p99_us_64 +p999_us_64 +error\n` +
		`  4096 4096 4096 +\= +[\d.]+ +[\d.]+ +[\d.]+ +[\d.]+\n  4096 131072 6291456 +\= +[\d.]+ +[\d.]+ +[\d.]+ +[\d.]+\n`)
	if !table.MatchString(out.String()) || !strings.HasSuffix(out.String(), "sysctl.net.ipv4.tcp_rmem given back its value from before the sweep\n") {
		t.Errorf("sweep's table:\n%s", out)
	}
	c, _ := os.ReadFile(csv)
	lines := strings.Split(strings.TrimSpace(string(c)), "\r\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "sysctl.net.ipv4.tcp_rmem,applied,repeats,tcp_mbps,") || !strings.HasPrefix(lines[1], tiny+","+tiny+",2,") {
		t.Errorf("CSV:\n%s", c)
	}
	s, _ := os.ReadFile(svg)
	d := xml.NewDecoder(bytes.NewReader(s))
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the chart is not well-formed XML: %v", err)
		}
	}
	os.MkdirAll(filepath.Join("..", "..", "out"), 0o755) // the chart the README shows
	os.WriteFile(filepath.Join("..", "..", "out", "sweep-veth.svg"), s, 0o644)
}

// TestSweepEarlyStopInNamespaces: with --early-stop, a value that has lost (a 4 KB
// receive buffer after the default's three runs) stops after two of its three runs:
// its median cannot reach the default's even were its third run the best possible.
func TestSweepEarlyStopInNamespaces(t *testing.T) {
	a, _, _ := sweepPair(t)
	tiny, dflt := "4096 4096 4096", "4096 131072 6291456"
	cmd, out, errOut := linerateIn(t, a, "sweep", "a0", "--knob", "sysctl.net.ipv4.tcp_rmem", "--values", dflt+";"+tiny,
		"--iperf3", "198.18.7.2", "--direction", "down", "--duration", "1s", "--repeat", "3", "--early-stop", "--json", "--state-dir", t.TempDir())
	if !waitOrKill(cmd, 60*time.Second) || cmd.ProcessState.ExitCode() != 0 {
		t.Fatalf("sweep: exit %d\n%s\n%s", cmd.ProcessState.ExitCode(), out, errOut)
	}
	var r sweepJSON
	if err := json.Unmarshal(out.Bytes(), &r); err != nil || len(r.Points) != 2 || !r.Restored {
		t.Fatalf("sweep result (%v): %s\n%s", err, out, errOut)
	}
	if p := r.Points[0]; len(p.Runs) != 3 || p.Stopped != "" {
		t.Errorf("the default, best so far, measured in full: %+v", p)
	}
	if p := r.Points[1]; len(p.Runs) != 2 || p.Stopped != "stopped after 2 of 3 runs: it cannot beat sysctl.net.ipv4.tcp_rmem="+dflt+" any more" ||
		!strings.Contains(errOut.String(), "(stopped after 2 of 3 runs") {
		t.Errorf("the 4 KB buffer: %+v\n%s", p, errOut)
	}
}

// TestSweepInterrupted: SIGINT (Ctrl-C) or SIGTERM in the middle of a sweep gives
// tcp_rmem back, removes the sweep's journal, keeps the points measured so far and
// exits 1.
func TestSweepInterrupted(t *testing.T) {
	a, _, _ := sweepPair(t)
	before := rmemOf(t, a)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		state := filepath.Join(t.TempDir(), "state")
		args, _ := json.Marshal([]string{"sweep", "a0", "--knob", "sysctl.net.ipv4.tcp_rmem",
			"--values", "4096 4096 4096;4096 65536 65536;4096 87380 4194304", "--iperf3", "198.18.7.2", "--direction", "down",
			"--duration", "2s", "--state-dir", state})
		// Read while the sweep runs: its output goes through a buffer that locks.
		var out, errOut lockedBuf
		cmd := exec.Command("ip", "netns", "exec", a.Name, os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "LINERATE_RUN_ARGS="+string(args), "GORACE=atexit_sleep_ms=0")
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(60 * time.Second)
		for !strings.Contains(out.String(), "tcp_mbps") && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if mid := rmemOf(t, a); mid == before {
			t.Errorf("%v: mid-sweep tcp_rmem is still %q", sig, mid)
		}
		cmd.Process.Signal(sig) // ip netns exec has exec'd the sweep: this PID is it
		if !waitOrKill(cmd, 30*time.Second) {
			t.Fatalf("the sweep did not end on %v", sig)
		}
		if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(out.String(), "interrupted; sysctl.net.ipv4.tcp_rmem given back") {
			t.Errorf("%v: exit %d:\n%s\n%s", sig, code, out.String(), errOut.String())
		}
		if got := rmemOf(t, a); got != before {
			t.Errorf("tcp_rmem after %v %q, before %q", sig, got, before)
		}
		if _, err := os.Stat(filepath.Join(state, "sweep", journalIn(t, a, "a0"))); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%v: the sweep's journal is left behind: %v", sig, err)
		}
	}
}

// lockedBuf is a buffer a process writes while the test reads it.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestAutotuneAndCompare: autotune picks the default receive buffer over a 4 KB one for
// throughput and writes a profile that tune accepts; compare measures a profile that
// turns a0's segmentation offloads off (TCP going out, the kernel cutting every segment
// itself) between two baselines and calls it worse; both leave a0 as it was.
func TestAutotuneAndCompare(t *testing.T) {
	a, _, _ := sweepPair(t)
	before, feats := rmemOf(t, a), a.Exec(t, "ethtool", "-k", "a0")
	dir := t.TempDir()
	state, prof := filepath.Join(dir, "state"), filepath.Join(dir, "best.yaml")
	cmd, out, errOut := linerateIn(t, a, "autotune", "a0", "--knob", "sysctl.net.ipv4.tcp_rmem", "--values", "4096 4096 4096;4096 131072 6291456",
		"--iperf3", "198.18.7.2", "--direction", "down", "--duration", "1s", "--objective", "throughput", "--min-mbps", "1",
		"--write-profile", prof, "--state-dir", state)
	if !waitOrKill(cmd, 60*time.Second) || cmd.ProcessState.ExitCode() != 0 {
		t.Fatalf("autotune: exit %d\n%s\n%s", cmd.ProcessState.ExitCode(), out, errOut)
	}
	y, _ := os.ReadFile(prof)
	if !strings.Contains(out.String(), "best for throughput: sysctl.net.ipv4.tcp_rmem=4096 131072 6291456") || !strings.Contains(string(y), `sysctl.net.ipv4.tcp_rmem: "4096 131072 6291456"`) {
		t.Errorf("autotune:\n%s\nprofile:\n%s", out, y)
	}
	if o, e, code := inNS(t, a, "tune", "a0", "--profile", prof, "--dry-run", "--state-dir", state); code != 0 {
		t.Errorf("tune --dry-run refuses autotune's profile: exit %d\n%s%s", code, o, e)
	}
	noSeg := filepath.Join(dir, "noseg.yaml")
	os.WriteFile(noSeg, []byte("name: no-segmentation-offload\nknobs:\n  features.tso: off\n  features.gso: off\n  features.sg: off\n"), 0o644)
	cmd, out, errOut = linerateIn(t, a, "compare", "a0", "--profile", noSeg, "--iperf3", "198.18.7.2", "--duration", "2s", "--state-dir", state)
	if !waitOrKill(cmd, 60*time.Second) || cmd.ProcessState.ExitCode() != 0 {
		t.Fatalf("compare: exit %d\n%s\n%s", cmd.ProcessState.ExitCode(), out, errOut)
	}
	t.Logf("compare:\n%s", out)
	var row string
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "tcp_mbps") {
			row = l
		}
	}
	if !strings.Contains(out.String(), "feature.") || !strings.HasSuffix(strings.TrimSpace(row), "worse") || !strings.Contains(out.String(), "a0 given back what it had") {
		t.Errorf("compare:\n%s", out)
	}
	if got := rmemOf(t, a); got != before {
		t.Errorf("tcp_rmem after autotune and compare %q, before %q", got, before)
	}
	if got := a.Exec(t, "ethtool", "-k", "a0"); got != feats {
		t.Errorf("a0's features after compare:\n%s\nbefore:\n%s", got, feats)
	}
}

// TestSweepBadInput: what is wrong is named, exit 2, nothing changed.
func TestSweepBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep", "a0", "--knob", "rings.rx", "--values", "64"}, "give --iperf3 HOST[:PORT], --reflector MAC, or both"},
		{[]string{"sweep", "a0", "--knob", "ring.rx", "--values", "64", "--iperf3", "h"}, `unknown knob "ring.rx"`},
		{[]string{"sweep", "a0", "--knob", "rings.rx", "--values", "64,big", "--iperf3", "h"}, `want a positive number or max, have "big"`},
		{[]string{"sweep", "a0", "--knob", "rings.rx", "--values", "512..64", "--iperf3", "h"}, "0 < A <= B"},
		{[]string{"sweep", "a0", "--knob", "rings.rx", "--iperf3", "h"}, "give --knob KNOB and --values"},
		{[]string{"sweep", "a0", "--knob", "mtu", "--values", "1500", "--iperf3", "h:0"}, "the port is 1..65535"},
		{[]string{"sweep", "a0", "--knob", "mtu", "--values", "1500", "--reflector", "xx"}, "--reflector"},
		{[]string{"sweep", "a0", "--knob", "mtu", "--values", "1500", "--reflector", "02:00:00:00:00:01", "--size", "32"}, "--size"},
		{[]string{"sweep", "a0", "--knob", "mtu", "--values", "1500", "--iperf3", "h", "--duration", "0s"}, "--duration 0s"},
		{[]string{"sweep", "a0", "--knob", "mtu", "--values", "1500", "--iperf3", "h", "--repeat", "0"}, "--repeat 0"},
		{[]string{"sweep", "a0", "--knob", "mtu", "--values", "1500", "--iperf3", "h", "--direction", "sideways"}, "--direction"},
		{[]string{"autotune", "a0", "--knob", "mtu", "--values", "1500", "--iperf3", "h", "--objective", "latency"}, "needs frames through a reflector"},
		{[]string{"autotune", "a0", "--knob", "mtu", "--values", "1500", "--iperf3", "h", "--write-overlay", "x.dtbo"}, "ring depths only"},
		{[]string{"autotune", "a0", "--knob", "rings.rx", "--values", "512", "--iperf3", "h", "--max-p99-us", "-1", "--reflector", "02:00:00:00:00:01"}, `--max-p99-us "-1"`},
		// Outputs that cannot be written are refused before the first point, not after
		// the whole sweep.
		{[]string{"autotune", "a0", "--knob", "mtu", "--values", "1500", "--iperf3", "h", "--write-profile", "/no-such-dir/p.yaml"}, "the directory /no-such-dir does not exist"},
		{[]string{"autotune", "a0", "--knob", "mtu", "--values", "1500", "--iperf3", "h", "--write-profile", "/"}, "is a directory"},
		{[]string{"sweep", "a0", "--knob", "mtu", "--values", "1500", "--iperf3", "h", "--csv", "/no-such-dir/s.csv"}, "the directory /no-such-dir does not exist"},
		{[]string{"sweep", "a0", "--knob", "mtu", "--values", "1500", "--iperf3", "h", "--svg", "/no-such-dir/s.svg"}, "the directory /no-such-dir does not exist"},
		{[]string{"compare", "a0", "--iperf3", "h"}, "give --profile"},
		{[]string{"compare", "a0", "--iperf3", "h", "--profile", "no-such"}, "profile"},
	} {
		_, errOut, code := runCLI(t, c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, want 2 naming %q:\n%s", c.args, code, c.want, errOut)
		}
	}
}

// TestTuneDuringSweep: the interface's lock is the interface's, whatever the state
// directory: a tune in the middle of a sweep (journalling elsewhere) is refused, naming
// the holder, rather than journalling the sweep's temporary value as the original;
// after the sweep is killed outright (SIGKILL: nothing given back), a tune is refused
// until the revert the refusal names has given tcp_rmem back.
func TestTuneDuringSweep(t *testing.T) {
	a, _, _ := sweepPair(t)
	before := rmemOf(t, a)
	state := filepath.Join(t.TempDir(), "state")
	args, _ := json.Marshal([]string{"sweep", "a0", "--knob", "sysctl.net.ipv4.tcp_rmem",
		"--values", "4096 4096 4096;4096 65536 65536", "--iperf3", "198.18.7.2", "--direction", "down",
		"--duration", "5s", "--state-dir", state})
	var out, errOut lockedBuf
	cmd := exec.Command("ip", "netns", "exec", a.Name, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "LINERATE_RUN_ARGS="+string(args), "GORACE=atexit_sleep_ms=0")
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for rmemOf(t, a) == before && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	profile := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(profile, []byte("name: rmem\nknobs:\n  sysctl.net.ipv4.tcp_rmem: \"4096 131072 6291456\"\n"), 0o644)
	other := filepath.Join(t.TempDir(), "other")
	o := cliIn(a, "tune", "a0", "--profile", profile, "--state-dir", other, "--wait", "300ms")
	if o.code == 0 || !strings.Contains(o.stderr, "another linerate is changing this interface") || !strings.Contains(o.stderr, "pid ") {
		t.Errorf("a tune during the sweep: %d %s %s", o.code, o.stdout, o.stderr)
	}
	if _, err := os.Stat(filepath.Join(other, journalIn(t, a, "a0"))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused tune journalled: %v", err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if mid := rmemOf(t, a); mid == before {
		t.Fatalf("the killed sweep gave tcp_rmem back (%q): nothing to test", mid)
	}
	o = cliIn(a, "tune", "a0", "--profile", profile, "--state-dir", other, "--wait", "300ms")
	want := "run 'linerate revert a0 --state-dir " + filepath.Join(state, "sweep") + "' first"
	if o.code == 0 || !strings.Contains(o.stderr, want) {
		t.Fatalf("a tune after a killed sweep: %d %s, want %q", o.code, o.stderr, want)
	}
	if o = cliIn(a, "revert", "a0", "--state-dir", filepath.Join(state, "sweep")); o.code != 0 {
		t.Fatalf("the revert the refusal names: %d %s", o.code, o.stderr)
	}
	if got := rmemOf(t, a); got != before {
		t.Errorf("tcp_rmem after the revert %q, before the sweep %q", got, before)
	}
	if o = cliIn(a, "tune", "a0", "--profile", profile, "--state-dir", other); o.code != 0 {
		t.Errorf("a tune after the revert: %d %s", o.code, o.stderr)
	}
	cliIn(a, "revert", "a0", "--state-dir", other)
	if got := rmemOf(t, a); got != before {
		t.Errorf("tcp_rmem at the end %q, before %q", got, before)
	}
}

// TestSweepNoPointMeasured: a sweep where every point fails (no iperf3 server at the
// address) exits 1 naming why, not 0, and gives the knob back.
func TestSweepNoPointMeasured(t *testing.T) {
	a, _, _ := sweepPair(t)
	before := rmemOf(t, a)
	state := filepath.Join(t.TempDir(), "state")
	for _, cmd := range []string{"sweep", "autotune"} {
		o := cliIn(a, cmd, "a0", "--knob", "sysctl.net.ipv4.tcp_rmem", "--values", "4096 4096 4096;4096 65536 65536",
			"--iperf3", "198.18.7.2:5299", "--duration", "1s", "--state-dir", state)
		if o.code != 1 || !strings.Contains(o.stderr, "no value of sysctl.net.ipv4.tcp_rmem") || !strings.Contains(o.stderr, "unable to connect to server: Connection refused") {
			t.Errorf("%s with no server: exit %d, want 1 saying no value was measured:\n%s%s", cmd, o.code, o.stdout, o.stderr)
		}
		if got := rmemOf(t, a); got != before {
			t.Errorf("%s: tcp_rmem %q after, %q before", cmd, got, before)
		}
	}
}
