package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zynqnet/linerate/internal/nstest"
	"github.com/zynqnet/linerate/tune"
)

// TestMain doubles as the crash-test helper: with LINERATE_TUNE_HELPER set, the test
// binary runs one tune that stops dead before a given write, to be killed with SIGKILL.
func TestMain(m *testing.M) {
	if os.Getenv("LINERATE_TUNE_HELPER") != "" {
		tuneHelper()
		return
	}
	// LINERATE_RUN_ARGS runs the CLI itself (a JSON list of arguments), so a test can
	// start linerate inside a namespace with ip netns exec, every thread in it.
	// So does a station's reflector (engine.RunReflectors starts this binary's reflect
	// command; a test binary's own arguments never start with it).
	if a := os.Getenv("LINERATE_RUN_ARGS"); a != "" || len(os.Args) > 1 && os.Args[1] == "reflect" {
		args := os.Args[1:]
		if len(args) == 0 || args[0] != "reflect" {
			json.Unmarshal([]byte(a), &args)
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := run(ctx, args, os.Stdin, os.Stdout, os.Stderr)
		stop()
		os.Exit(exitCode(err))
	}
	os.Exit(m.Run())
}

func tuneHelper() {
	n, _ := strconv.Atoi(os.Getenv("LINERATE_PAUSE_AT"))
	c := tuneConfig{
		iface: os.Getenv("LINERATE_IFACE"), profile: os.Getenv("LINERATE_PROFILE"),
		stateDir: os.Getenv("LINERATE_STATE"), api: "auto", carrierTimeout: 5 * time.Second,
		beforeWrite: func(k tune.Knob, i int) error {
			if i == n {
				fmt.Printf("PAUSED before %s\n", k.Name)
				os.Stdout.Sync()
				time.Sleep(time.Hour) // until the test kills us
			}
			return nil
		},
	}
	if err := c.run(context.Background(), os.Stdout); err != nil {
		fmt.Println("helper:", err)
		os.Exit(1)
	}
}

// The namespace profile touches every knob a veth in a namespace has for real (threaded
// NAPI needs GRO on: veth has NAPI instances only then, and features go first).
const nsProfile = `name: nstest
knobs:
  channels.rx: 2
  channels.tx: 2
  features.gro: on
  features.tso: off
  mtu: 9000
  promisc: off
  rps.cpus: all
  rps.flow_cnt: 2048
  xps.cpus: spread
  napi.defer_hard_irqs: 3
  napi.gro_flush_timeout: 30000
  napi.threaded: on
  sysctl.net.ipv4.tcp_rmem: 4096 131072 67108864
  sysctl.net.ipv4.tcp_wmem: 4096 16384 67108864
  sysctl.net.ipv4.tcp_congestion_control: reno
  sysctl.net.ipv4.tcp_slow_start_after_idle: 0
  sysctl.net.ipv4.tcp_notsent_lowat: 131072
`

// observe reads, with the stock tools inside the namespace, everything nsProfile touches.
func observe(t *testing.T, ns *nstest.NS) map[string]string {
	t.Helper()
	o := map[string]string{}
	ch := ethtoolChannels(t, ns.Exec(t, "ethtool", "-l", "lr0"))
	o["channels"] = fmt.Sprintf("rx %d tx %d", ch.RX, ch.TX)
	for _, l := range ethtoolFeatures(ns.Exec(t, "ethtool", "-k", "lr0")) {
		for _, f := range []string{"generic-receive-offload:", "tcp-segmentation-offload:"} {
			if strings.HasPrefix(l, f) {
				o[f] = l
			}
		}
	}
	var links []ipLink
	json.Unmarshal([]byte(ns.Exec(t, "ip", "-j", "link", "show", "dev", "lr0")), &links)
	o["mtu"] = strconv.Itoa(links[0].MTU)
	o["promisc"] = strconv.FormatBool(has(links[0].Flags, "PROMISC"))
	for _, f := range []string{"queues/rx-0/rps_cpus", "queues/rx-1/rps_cpus", "queues/rx-0/rps_flow_cnt", "queues/tx-0/xps_cpus", "queues/tx-1/xps_cpus", "napi_defer_hard_irqs", "gro_flush_timeout", "threaded"} {
		o[f] = strings.TrimSpace(ns.Exec(t, "cat", "/sys/class/net/lr0/"+f))
	}
	for _, s := range []string{"net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.ipv4.tcp_congestion_control", "net.ipv4.tcp_slow_start_after_idle", "net.ipv4.tcp_notsent_lowat"} {
		o[s] = strings.Join(strings.Fields(ns.Exec(t, "cat", "/proc/sys/"+strings.ReplaceAll(s, ".", "/"))), " ")
	}
	return o
}

// tuneNS makes a namespace with a 2-queue veth, promisc on (so the profile has it to
// turn off), and writes the profile file.
func tuneNS(t *testing.T) (ns *nstest.NS, profile, state string) {
	nstest.NeedTool(t, "ethtool")
	ns, peer := nstest.New(t), nstest.New(t)
	ns.Veth(t, "lr0", "lr1", peer, 2)
	ns.Exec(t, "ip", "link", "set", "lr0", "promisc", "on")
	dir := t.TempDir()
	profile = filepath.Join(dir, "nstest.yaml")
	if err := os.WriteFile(profile, []byte(nsProfile), 0o644); err != nil {
		t.Fatal(err)
	}
	return ns, profile, filepath.Join(dir, "state")
}

func inNS(t *testing.T, ns *nstest.NS, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut string
	var code int
	ns.Do(t, func() error {
		out, errOut, code = runCLI(t, args...)
		return nil
	})
	return out, errOut, code
}

func TestTuneAndRevertInNamespace(t *testing.T) {
	ns, profile, state := tuneNS(t)
	before := observe(t, ns)

	out, errOut, code := inNS(t, ns, "tune", "lr0", "--profile", profile, "--state-dir", state, "--dry-run", "--json")
	var plan tune.Plan
	if code != 0 || json.Unmarshal([]byte(out), &plan) != nil || len(plan.Changes) < 12 {
		t.Fatalf("dry run: exit %d, %s %s", code, out, errOut)
	}
	if !reflect.DeepEqual(observe(t, ns), before) {
		t.Fatal("--dry-run changed something")
	}

	out, errOut, code = inNS(t, ns, "tune", "lr0", "--profile", profile, "--state-dir", state)
	if code != 0 {
		t.Fatalf("tune: exit %d: %s%s", code, out, errOut)
	}
	got := observe(t, ns)
	want := map[string]string{
		"channels": "rx 2 tx 2", "generic-receive-offload:": "generic-receive-offload: on",
		"tcp-segmentation-offload:": "tcp-segmentation-offload: off", "mtu": "9000", "promisc": "false",
		"queues/rx-0/rps_cpus": "3", "queues/rx-1/rps_cpus": "3", "queues/rx-0/rps_flow_cnt": "2048",
		"queues/tx-0/xps_cpus": "1", "queues/tx-1/xps_cpus": "2",
		"napi_defer_hard_irqs": "3", "gro_flush_timeout": "30000", "threaded": "1",
		"net.ipv4.tcp_rmem": "4096 131072 67108864", "net.ipv4.tcp_wmem": "4096 16384 67108864",
		"net.ipv4.tcp_congestion_control": "reno", "net.ipv4.tcp_slow_start_after_idle": "0",
		"net.ipv4.tcp_notsent_lowat": "131072",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("after tune, %s = %q (ethtool/ip/sysfs/sysctl), want %q", k, got[k], v)
		}
	}

	// The same profile again plans nothing.
	out, _, _ = inNS(t, ns, "tune", "lr0", "--profile", profile, "--state-dir", state, "--json")
	var again tune.Plan
	if json.Unmarshal([]byte(out), &again); len(again.Changes) != 0 {
		t.Errorf("second tune planned %v", again.Changes)
	}

	out, errOut, code = inNS(t, ns, "revert", "lr0", "--state-dir", state)
	if code != 0 {
		t.Fatalf("revert: exit %d: %s%s", code, out, errOut)
	}
	if after := observe(t, ns); !reflect.DeepEqual(after, before) {
		t.Errorf("revert did not restore everything:\nbefore %v\nafter  %v", before, after)
	}
	if _, err := os.Stat(filepath.Join(state, journalIn(t, ns, "lr0"))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("journal still there after revert: %v", err)
	}
	_, errOut, code = inNS(t, ns, "revert", "lr0", "--state-dir", state)
	if code != 1 || !strings.Contains(errOut, "nothing to revert") {
		t.Errorf("second revert: exit %d, %q", code, errOut)
	}
}

// TestTuneFaultInjection makes each write in turn fail and proves that every knob
// changed before it is restored and no journal is left behind.
func TestTuneFaultInjection(t *testing.T) {
	ns, profile, state := tuneNS(t)
	before := observe(t, ns)
	out, _, _ := inNS(t, ns, "tune", "lr0", "--profile", profile, "--state-dir", state, "--dry-run", "--json")
	var plan tune.Plan
	json.Unmarshal([]byte(out), &plan)
	if len(plan.Changes) < 12 {
		t.Fatalf("plan too small: %v", plan.Changes)
	}
	for i := range plan.Changes {
		c := tuneConfig{iface: "lr0", profile: profile, stateDir: state, api: "auto", carrierTimeout: 5 * time.Second,
			beforeWrite: func(k tune.Knob, n int) error {
				if n == i {
					return errors.New("injected failure")
				}
				return nil
			}}
		var err error
		ns.Do(t, func() error {
			err = c.run(context.Background(), &strings.Builder{})
			return nil
		})
		var ae *tune.ApplyError
		if !errors.As(err, &ae) || ae.Knob != plan.Changes[i].Knob || ae.RollbackErr != nil || exitCode(err) != 1 {
			t.Errorf("failure at write %d (%s): err %v", i, plan.Changes[i].Knob, err)
		}
		if got := observe(t, ns); !reflect.DeepEqual(got, before) {
			t.Fatalf("failure at write %d (%s) left changes:\nbefore %v\nafter  %v", i, plan.Changes[i].Knob, before, got)
		}
		if _, err := os.Stat(filepath.Join(state, journalIn(t, ns, "lr0"))); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("failure at write %d left a journal", i)
		}
	}
}

// TestTuneKilledThenRevert kills a tune with SIGKILL between two writes and proves that
// revert restores everything from the journal written before the first change.
func TestTuneKilledThenRevert(t *testing.T) {
	ns, profile, state := tuneNS(t)
	before := observe(t, ns)
	// Every write of the profile (17 knobs, features in one request) is a place a
	// crash can leave the interface; revert must restore from each of them.
	points := 0
	defer func() { t.Logf("killed at each of %d writes and reverted", points) }()
	for at := 1; at <= 17; at++ {
		cmd, ok := pausedTune(t, ns, profile, state, at)
		if !ok {
			break // the tune had fewer writes
		}
		points = at
		cmd.Process.Kill() // SIGKILL, by PID
		cmd.Wait()
		if reflect.DeepEqual(observe(t, ns), before) && at > 0 {
			t.Fatalf("killed after %d writes, but nothing had changed", at)
		}
		var j tune.Journal
		b, err := os.ReadFile(filepath.Join(state, journalIn(t, ns, "lr0")))
		if err != nil || json.Unmarshal(b, &j) != nil || j.Complete {
			t.Fatalf("journal after kill: %v %+v", err, j)
		}
		out, errOut, code := inNS(t, ns, "revert", "lr0", "--state-dir", state)
		if code != 0 {
			t.Fatalf("revert after kill: exit %d: %s%s", code, out, errOut)
		}
		if got := observe(t, ns); !reflect.DeepEqual(got, before) {
			t.Errorf("revert after a kill at write %d did not restore:\nbefore %v\nafter  %v", at, before, got)
		}
	}
}

// pausedTune starts a tune of lr0 in a process that stops dead before write number at,
// holding the interface's lock; ok is false when the tune ended with fewer writes.
func pausedTune(t *testing.T, ns *nstest.NS, profile, state string, at int) (*exec.Cmd, bool) {
	t.Helper()
	cmd := exec.Command("ip", "netns", "exec", ns.Name, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "LINERATE_TUNE_HELPER=1", "LINERATE_PAUSE_AT="+strconv.Itoa(at),
		"LINERATE_IFACE=lr0", "LINERATE_PROFILE="+profile, "LINERATE_STATE="+state)
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	paused := make(chan string, 1)
	go func() {
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "PAUSED") || strings.HasPrefix(sc.Text(), "helper:") {
				paused <- sc.Text()
				return
			}
		}
		paused <- "helper ended"
	}()
	select {
	case line := <-paused:
		if line == "helper ended" {
			cmd.Wait()
			inNS(t, ns, "revert", "lr0", "--state-dir", state)
			return nil, false
		}
		if !strings.HasPrefix(line, "PAUSED") {
			t.Fatalf("helper: %s", line)
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("helper never reached the write")
	}
	return cmd, true
}

// TestTuneConcurrent: while one tune holds the interface (paused in the middle of its
// writes), a second tune and a revert wait, then refuse naming the holder, and change
// nothing; once the holder is gone (kill -9), revert restores everything.
func TestTuneConcurrent(t *testing.T) {
	ns, profile, state := tuneNS(t)
	before := observe(t, ns)
	cmd, ok := pausedTune(t, ns, profile, state, 3)
	if !ok {
		t.Fatal("the tune ended before its third write")
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	mid := observe(t, ns)
	journal, _ := os.ReadFile(filepath.Join(state, journalIn(t, ns, "lr0")))
	holder := "pid " + strconv.Itoa(cmd.Process.Pid)
	for _, args := range [][]string{
		{"tune", "lr0", "--profile", "latency", "--state-dir", state, "--wait", "300ms"},
		{"revert", "lr0", "--state-dir", state, "--wait", "300ms"},
	} {
		start := time.Now()
		_, errOut, code := inNS(t, ns, args...)
		if code != 1 || !strings.Contains(errOut, "another linerate is changing this interface ("+holder) || time.Since(start) > 5*time.Second {
			t.Errorf("%v while another tune runs: exit %d after %v: %s", args, code, time.Since(start), errOut)
		}
	}
	if got := observe(t, ns); !reflect.DeepEqual(got, mid) {
		t.Errorf("a refused run changed knobs:\nbefore %v\nafter  %v", mid, got)
	}
	if now, _ := os.ReadFile(filepath.Join(state, journalIn(t, ns, "lr0"))); string(now) != string(journal) {
		t.Error("a refused run rewrote the journal")
	}
	cmd.Process.Kill()
	cmd.Wait()
	if out, errOut, code := inNS(t, ns, "revert", "lr0", "--state-dir", state, "--wait", "2s"); code != 0 {
		t.Fatalf("revert once the holder died: exit %d: %s%s", code, out, errOut)
	}
	if got := observe(t, ns); !reflect.DeepEqual(got, before) {
		t.Errorf("not restored:\nbefore %v\nafter  %v", before, got)
	}
}

// TestTuneChannelsKeepQueueSettings: lowering the channel count removes the queues
// above it, and with them their RPS/XPS settings; revert raises the count again and must
// give those queues back what they had, not the kernel's defaults.
func TestTuneChannelsKeepQueueSettings(t *testing.T) {
	nstest.NeedTool(t, "ethtool")
	ns, peer := nstest.New(t), nstest.New(t)
	ns.Veth(t, "lr0", "lr1", peer, 4)
	ns.Exec(t, "ethtool", "-L", "lr0", "rx", "4", "tx", "4")
	q := func(f string) string { return strings.TrimSpace(ns.Exec(t, "cat", "/sys/class/net/lr0/queues/"+f)) }
	ns.Exec(t, "sh", "-c", "echo 2 > /sys/class/net/lr0/queues/rx-3/rps_cpus; echo 64 > /sys/class/net/lr0/queues/rx-2/rps_flow_cnt; echo 1 > /sys/class/net/lr0/queues/tx-3/xps_cpus")
	before := map[string]string{"rx-3/rps_cpus": q("rx-3/rps_cpus"), "rx-2/rps_flow_cnt": q("rx-2/rps_flow_cnt"), "tx-3/xps_cpus": q("tx-3/xps_cpus")}
	dir := t.TempDir()
	profile := filepath.Join(dir, "one.yaml")
	os.WriteFile(profile, []byte("name: one-queue\nknobs:\n  channels.rx: 1\n  channels.tx: 1\n"), 0o644)
	state := filepath.Join(dir, "state")
	if out, errOut, code := inNS(t, ns, "tune", "lr0", "--profile", profile, "--state-dir", state); code != 0 {
		t.Fatalf("tune: %d %s%s", code, out, errOut)
	}
	if _, err := ns.Try("cat", "/sys/class/net/lr0/queues/rx-3/rps_cpus"); err == nil {
		t.Fatal("rx-3 still there with one channel: the test proves nothing")
	}
	if out, errOut, code := inNS(t, ns, "revert", "lr0", "--state-dir", state); code != 0 {
		t.Fatalf("revert: %d %s%s", code, out, errOut)
	}
	for f, want := range before {
		if got := q(f); got != want {
			t.Errorf("after revert %s = %s, want %s as before the tune", f, got, want)
		}
	}
}

// TestTuneGlobalKnobsOnFixture: knobs a namespace cannot own (netdev_max_backlog,
// dev_weight, the governor, IRQ affinity) tuned and reverted on a copy of a captured tree.
func TestTuneGlobalKnobsOnFixture(t *testing.T) {
	root := copyTree(t, filepath.Join(showFixtures, "zynq7000-gem"))
	state := t.TempDir()
	profile := filepath.Join(t.TempDir(), "global.yaml")
	os.WriteFile(profile, []byte("name: global\nknobs:\n  sysctl.net.core.netdev_max_backlog: 3000\n  sysctl.net.core.dev_weight: 128\n  cpufreq.governor: performance\n  irq.affinity: 1\n  rings.rx: 4096\n"), 0o644)
	files := []string{"proc/sys/net/core/netdev_max_backlog", "proc/sys/net/core/dev_weight",
		"sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", "proc/irq/27/smp_affinity"}
	read := func() []string {
		var out []string
		for _, f := range files {
			b, _ := os.ReadFile(filepath.Join(root, f))
			out = append(out, string(b))
		}
		return out
	}
	orig := read()
	out, errOut, code := runCLI(t, "tune", "eth0", "--root", root, "--profile", profile, "--state-dir", state)
	if code != 0 {
		t.Fatalf("tune --root: exit %d: %s%s", code, out, errOut)
	}
	if want := []string{"3000\n", "128\n", "performance\n", "performance\n", "2\n"}; !reflect.DeepEqual(read(), want) {
		t.Errorf("after tune: %q, want %q", read(), want)
	}
	if !strings.Contains(out, "skipped rings.rx: cannot be changed in a captured tree") {
		t.Errorf("rings in a captured tree not skipped: %s", out)
	}
	// A failure on the third write restores the first two.
	runCLI(t, "revert", "eth0", "--root", root, "--state-dir", state)
	if !reflect.DeepEqual(read(), orig) {
		t.Fatalf("revert: %q, want %q", read(), orig)
	}
	c := tuneConfig{iface: "eth0", root: root, profile: profile, stateDir: state,
		beforeWrite: func(k tune.Knob, n int) error {
			if n == 2 {
				return errors.New("injected failure")
			}
			return nil
		}}
	if err := c.run(context.Background(), &strings.Builder{}); err == nil {
		t.Fatal("injected failure not reported")
	}
	if !reflect.DeepEqual(read(), orig) {
		t.Errorf("after a failed tune: %q, want %q", read(), orig)
	}
}

func TestTuneBadInput(t *testing.T) {
	root := copyTree(t, filepath.Join(showFixtures, "zynq7000-gem"))
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("name: bad\nknobs:\n  sysctl.net.core.dev_weight: 128\n  rings.rx: 9000\n"), 0o644)
	before, _ := os.ReadFile(filepath.Join(root, "proc/sys/net/core/dev_weight"))
	_, errOut, code := runCLI(t, "tune", "eth0", "--root", root, "--profile", bad, "--state-dir", t.TempDir())
	if code != 2 || !strings.Contains(errOut, bad+":4: rings.rx: 9000 is above the driver's maximum 8192") {
		t.Errorf("exit %d, %q", code, errOut)
	}
	if after, _ := os.ReadFile(filepath.Join(root, "proc/sys/net/core/dev_weight")); string(after) != string(before) {
		t.Error("a rejected profile changed a knob")
	}
	for _, args := range [][]string{{"tune", "eth0"}, {"tune", "--profile", "throughput"}, {"tune", "eth0", "--profile", "warp"}, {"profile", "show", "warp"}, {"profile"}} {
		wantBadInput(t, args, "")
	}
}

// journalIn is the file of iface's tune journal, in a state directory, for an interface
// of ns: journals carry the namespace (tune-IFACE:netINODE.json) outside init's.
func journalIn(t *testing.T, ns *nstest.NS, iface string) string {
	return fmt.Sprintf("tune-%s:net%d.json", iface, ns.Inode(t))
}

// TestTuneJournalsPerNamespace tunes lr0 of two namespaces with one state directory: each
// revert restores its own lr0's MTU (a journal per interface name gave one namespace the
// other's old MTU and left the other unrevertable).
func TestTuneJournalsPerNamespace(t *testing.T) {
	nstest.NeedTool(t, "ethtool")
	state := filepath.Join(t.TempDir(), "state")
	profile := filepath.Join(t.TempDir(), "mtu.yaml")
	os.WriteFile(profile, []byte("name: mtu\nknobs:\n  mtu: 9000\n"), 0o644)
	mtuOf := func(ns *nstest.NS) string {
		var links []ipLink
		json.Unmarshal([]byte(ns.Exec(t, "ip", "-j", "link", "show", "dev", "lr0")), &links)
		return strconv.Itoa(links[0].MTU)
	}
	var nss []*nstest.NS
	for _, mtu := range []string{"1400", "1300"} {
		ns, peer := nstest.New(t), nstest.New(t)
		ns.Veth(t, "lr0", "lr1", peer, 1)
		ns.Exec(t, "ip", "link", "set", "lr0", "mtu", mtu)
		if out, errOut, code := inNS(t, ns, "tune", "lr0", "--profile", profile, "--state-dir", state); code != 0 || mtuOf(ns) != "9000" {
			t.Fatalf("tune in the namespace at MTU %s: exit %d, MTU %s: %s%s", mtu, code, mtuOf(ns), out, errOut)
		}
		nss = append(nss, ns)
	}
	for i, want := range []string{"1400", "1300"} {
		if out, errOut, code := inNS(t, nss[i], "revert", "lr0", "--state-dir", state); code != 0 {
			t.Fatalf("revert in namespace %d: exit %d: %s%s", i, code, out, errOut)
		}
		if got := mtuOf(nss[i]); got != want {
			t.Errorf("namespace %d: MTU %s after its revert, it had %s", i, got, want)
		}
		if i == 0 && mtuOf(nss[1]) != "9000" {
			t.Errorf("the first namespace's revert changed the second's MTU to %s", mtuOf(nss[1]))
		}
	}
}
