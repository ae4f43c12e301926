package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zynqnet/linerate/internal/nstest"
	"github.com/zynqnet/linerate/netperf/rawsock"
)

// The traffic engine's commands run in-process inside namespaces made here, joined by
// veths (and a bridge with a tbf qdisc where the path must lose frames). Sockets are
// made on the namespace's thread and keep their namespace.

type cliOut struct {
	stdout, stderr string
	code           int
}

// cliIn runs the CLI inside ns (on a thread that entered it).
func cliIn(ns *nstest.NS, args ...string) cliOut {
	var o, e bytes.Buffer
	var code int
	err := ns.Run(func() error {
		code = exitCode(run(context.Background(), args, nil, &o, &e))
		return nil
	})
	if err != nil {
		return cliOut{"", err.Error(), -1}
	}
	return cliOut{o.String(), e.String(), code}
}

func macOf(t *testing.T, ns *nstest.NS, iface string) string {
	t.Helper()
	var mac string
	ns.Do(t, func() error {
		i, err := net.InterfaceByName(iface)
		if err == nil {
			mac = i.HardwareAddr.String()
		}
		return err
	})
	return mac
}

type sinkJSON struct {
	Sent, Received, Lost, Reordered, Duplicated, Corrupted, Foreign uint64
	PPS                                                             float64
	Latency                                                         *struct{ P50, P99, Max int64 } `json:"latency_ns"`
	SinkDrops                                                       uint64                         `json:"sink_drops"`
}

func decode[T any](t *testing.T, what string, o cliOut) T {
	t.Helper()
	var v T
	if o.code != 0 {
		t.Fatalf("%s: exit %d: %s", what, o.code, o.stderr)
	}
	if err := json.Unmarshal([]byte(o.stdout), &v); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, o.stdout)
	}
	return v
}

// genAndSink runs a sink on (sinkNS, sinkIf) and, once it listens, gen in genNS.
func genAndSink(t *testing.T, genNS *nstest.NS, genArgs []string, sinkNS *nstest.NS, sinkArgs []string, sinkDelay time.Duration) (genOut, sinkOut cliOut) {
	t.Helper()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sinkOut = cliIn(sinkNS, sinkArgs...)
	}()
	time.Sleep(300*time.Millisecond + sinkDelay)
	genOut = cliIn(genNS, genArgs...)
	wg.Wait()
	return
}

func noIPv6(t *testing.T, nss ...*nstest.NS) {
	for _, ns := range nss {
		ns.Exec(t, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1")
	}
}

// TestGenSinkExact: N frames at a rate veth carries: the sink receives N, loses none;
// the rate holds within 1% of the request; latency is measured.
func TestGenSinkExact(t *testing.T) {
	nstest.Require(t)
	a, b := nstest.New(t), nstest.New(t)
	noIPv6(t, a, b)
	a.Veth(t, "a0", "b0", b, 1)
	dst := macOf(t, b, "b0")
	for _, tc := range []struct {
		size, rate string
		extra      []string
	}{{"64", "40kpps", nil}, {"1518", "300Mbit", nil}, {"imix", "2%", nil}, {"128", "20kpps", []string{"--vlan", "100"}}} {
		g, s := genAndSink(t, a, append([]string{"gen", "a0", "--dst", dst, "--size", tc.size, "--rate", tc.rate, "--duration", "3s", "--flows", "8", "--stream", "9", "--link-mbps", "10000", "--json"}, tc.extra...),
			b, []string{"sink", "b0", "--stream", "9", "--duration", "30s", "--json"}, 0)
		gen := decode[struct {
			Sent      uint64
			PPS       float64
			TargetFPS float64 `json:"target_fps"`
			WireMbps  float64 `json:"wire_mbps"`
		}](t, "gen", g)
		sink := decode[sinkJSON](t, "sink", s)
		// Reordering is not checked: a sender that moves between CPUs puts frames in two
		// CPUs' backlogs, and the kernel may deliver them out of order. It is counted.
		if sink.Sent != gen.Sent || sink.Received != gen.Sent || sink.Lost != 0 || sink.Duplicated+sink.Corrupted != 0 {
			t.Errorf("%s at %s: gen sent %d; sink %+v", tc.size, tc.rate, gen.Sent, sink)
		}
		if d := gen.PPS/gen.TargetFPS - 1; d > 0.01 || d < -0.01 {
			t.Errorf("%s at %s: rate %.0f fps, asked %.0f (%.2f%% off)", tc.size, tc.rate, gen.PPS, gen.TargetFPS, d*100)
		}
		if sink.Latency == nil || sink.Latency.P50 <= 0 {
			t.Errorf("no latency: %+v", sink)
		}
		t.Logf("%s at %s: sent %d at %.0f fps (asked %.0f), sink %.0f pps, p50 %v p99 %v", tc.size, tc.rate, gen.Sent, gen.PPS, gen.TargetFPS, sink.PPS, time.Duration(sink.Latency.P50), time.Duration(sink.Latency.P99))
	}
}

// bridged makes a path a0 (in a) -> m0 [bridge in m, tbf on m1] m1 -> dst (in d).
// The tbf queues up to latency of frames: enough that a busy CPU running the qdisc late
// does not make it drop.
func bridged(t *testing.T, a, m, d *nstest.NS, dst, rate, latency string) {
	t.Helper()
	a.Veth(t, "a0", "m0", m, 1)
	m.Veth(t, "m1", dst, d, 1)
	m.Exec(t, "ip", "link", "add", "br0", "type", "bridge")
	for _, p := range []string{"m0", "m1"} {
		m.Exec(t, "ip", "link", "set", p, "master", "br0")
	}
	m.Exec(t, "ip", "link", "set", "br0", "up")
	m.Exec(t, "tc", "qdisc", "add", "dev", "m1", "root", "tbf", "rate", rate, "burst", "32kb", "latency", latency)
}

func tbfDropped(t *testing.T, m *nstest.NS) uint64 {
	t.Helper()
	out := m.Exec(t, "tc", "-s", "qdisc", "show", "dev", "m1")
	mm := regexp.MustCompile(`dropped (\d+)`).FindStringSubmatch(out)
	if mm == nil {
		t.Fatalf("no drop count in:\n%s", out)
	}
	n, _ := strconv.ParseUint(mm[1], 10, 64)
	return n
}

// TestInducedLoss: a tbf policing the path drops frames; the sink's loss is exactly the
// tbf's drop count. A sink started late loses the head of the stream, counted exactly.
func TestInducedLoss(t *testing.T) {
	nstest.Require(t)
	nstest.NeedTool(t, "tc")
	a, m, d := nstest.New(t), nstest.New(t), nstest.New(t)
	noIPv6(t, a, m, d)
	bridged(t, a, m, d, "d0", "50mbit", "5ms")
	dst := macOf(t, d, "d0")
	before := tbfDropped(t, m)
	g, s := genAndSink(t, a, []string{"gen", "a0", "--dst", dst, "--size", "512", "--rate", "25000pps", "--count", "50000", "--link-mbps", "1000", "--json"},
		d, []string{"sink", "d0", "--json", "--duration", "30s"}, 0)
	gen := decode[struct{ Sent uint64 }](t, "gen", g)
	sink := decode[sinkJSON](t, "sink", s)
	dropped := tbfDropped(t, m) - before
	// tbf also sees the three end-of-stream markers: it may have dropped some of those.
	if gen.Sent != 50000 || sink.Sent != 50000 || sink.Lost == 0 || sink.Lost > dropped || sink.Lost+3 < dropped || sink.Received+sink.Lost != gen.Sent {
		t.Errorf("sent %d; tbf dropped %d; sink %+v", gen.Sent, dropped, sink)
	}
	t.Logf("tbf dropped %d of %d; sink lost %d", dropped, gen.Sent, sink.Lost)

	// Late sink: started 1 s into a 2 s stream at 10k fps on a clean path.
	a2, b2 := nstest.New(t), nstest.New(t)
	noIPv6(t, a2, b2)
	a2.Veth(t, "x0", "y0", b2, 1)
	var wg sync.WaitGroup
	var late cliOut
	wg.Add(1)
	go func() {
		defer wg.Done()
		time.Sleep(1 * time.Second)
		late = cliIn(b2, "sink", "y0", "--json", "--duration", "30s", "--max-loss", "10")
	}()
	g = cliIn(a2, "gen", "x0", "--dst", macOf(t, b2, "y0"), "--rate", "10kpps", "--count", "20000", "--link-mbps", "1000", "--json")
	wg.Wait()
	gen = decode[struct{ Sent uint64 }](t, "gen", g)
	// It lost a quarter or more, above --max-loss: the result is printed, and it exits 1.
	if late.code != 1 || !strings.Contains(late.stderr, "above --max-loss 10%") {
		t.Errorf("late sink with --max-loss 10: exit %d, %s", late.code, late.stderr)
	}
	late.code = 0
	ls := decode[sinkJSON](t, "late sink", late)
	if ls.Sent != 20000 || ls.Lost < 5000 || ls.Lost > 15000 || ls.Received+ls.Lost != 20000 || ls.Duplicated != 0 {
		t.Errorf("late sink: %+v", ls)
	}
}

// TestSinkNothingReceived: a sink that hears nothing of its stream exits 1, and with
// --min-frames 0 it does not.
func TestSinkNothingReceived(t *testing.T) {
	nstest.Require(t)
	a, b := nstest.New(t), nstest.New(t)
	a.Veth(t, "a0", "b0", b, 1)
	if o := cliIn(b, "sink", "b0", "--duration", "300ms", "--stream", "1"); o.code != 1 || !strings.Contains(o.stderr, "received 0 frames of stream 1, want at least 1 (--min-frames)") || !strings.Contains(o.stdout, "received 0 of 0") {
		t.Errorf("silent sink: exit %d, %s %s", o.code, o.stdout, o.stderr)
	}
	if o := cliIn(b, "sink", "b0", "--duration", "300ms", "--min-frames", "0"); o.code != 0 {
		t.Errorf("--min-frames 0: exit %d, %s", o.code, o.stderr)
	}
	if o := cliIn(b, "sink", "b0", "--max-loss", "NaN"); o.code != 2 {
		t.Errorf("--max-loss NaN: exit %d, %s", o.code, o.stderr)
	}
}

// TestReflectAndRFC2544: a reflector in one namespace; rfc2544 --peer from the other
// finds no loss on a clean veth and measures round-trip latency (at a 10 Mbit/s line
// rate: a reflector on a CI machine busy with other tests keeps up with that, not
// always with 100 Mbit/s of 256-byte frames). Then rfc2544 --loop
// through a tbf finds the tbf's rate.
func TestReflectAndRFC2544(t *testing.T) {
	nstest.NeedTool(t, "tc")
	o, refl := throughReflector(t, []string{"--duration", "12s"}, "--sizes", "256", "--trial", "1s", "--tests", "throughput,latency", "--link-mbps", "10")
	type result struct {
		Results []struct {
			Size       int
			LineFPS    float64 `json:"line_fps"`
			Throughput struct {
				FPS     float64
				Percent float64
			}
			Latency *struct {
				Kind string
				NS   struct{ P50 int64 } `json:"latency_ns"`
			}
		}
	}
	r := decode[result](t, "rfc2544 --peer", o)
	rf := decode[struct{ Reflected uint64 }](t, "reflect", refl)
	if len(r.Results) != 1 || r.Results[0].Throughput.Percent != 100 || r.Results[0].Latency == nil || r.Results[0].Latency.Kind != "round-trip" || r.Results[0].Latency.NS.P50 <= 0 {
		t.Errorf("rfc2544 through the reflector: %+v\n%s", r, o.stderr)
	}
	if rf.Reflected == 0 {
		t.Errorf("reflector reflected nothing")
	}

	// --loop through a tbf at 100 Mbit/s: 512-byte frames are 508 bytes to tbf (no FCS):
	// 24,606 frames/s, 10.47% of a gigabit line.
	a2, m, d := nstest.New(t), nstest.New(t), nstest.New(t)
	noIPv6(t, a2, m, d)
	// 2 s trials against a 20 ms queue: a rate 1.1% above the tbf's overflows it.
	bridged(t, a2, m, d, "d0", "100mbit", "20ms")
	// The loop port lives in the sender's namespace: move it over.
	d.Exec(t, "ip", "link", "set", "d0", "netns", a2.Name)
	a2.Exec(t, "ip", "link", "set", "d0", "up")
	o = cliIn(a2, "rfc2544", "a0", "--loop", "d0", "--sizes", "512", "--trial", "2s", "--tests", "throughput", "--link-mbps", "1000", "--resolution", "1", "--json")
	r = decode[result](t, "rfc2544 --loop", o)
	// The tbf's rate is the most the path takes; a busy machine (CI runs packages side
	// by side) can only lower what the search finds.
	want := 100e6 / (508 * 8)
	if got := r.Results[0].Throughput.FPS; got < want*0.9 || got > want*1.05 {
		t.Errorf("throughput through a 100 Mbit/s tbf: %.0f fps, want %.0f, -10%%..+5%%\n%s", got, want, o.stderr)
	}
	t.Logf("tbf 100mbit: throughput %.0f fps (%.2f%%), want %.0f", r.Results[0].Throughput.FPS, r.Results[0].Throughput.Percent, want)
}

// throughReflector joins namespaces A and B with a veth (a0-b0), runs linerate reflect
// on b0 with reflectArgs and, 300 ms on, rfc2544 --peer from a0 against it with
// rfcArgs, each with --json, and returns what each printed.
func throughReflector(t *testing.T, reflectArgs []string, rfcArgs ...string) (rfc, refl cliOut) {
	t.Helper()
	nstest.Require(t)
	a, b := nstest.New(t), nstest.New(t)
	noIPv6(t, a, b)
	a.Veth(t, "a0", "b0", b, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		refl = cliIn(b, append(append([]string{"reflect", "b0"}, reflectArgs...), "--json")...)
	}()
	time.Sleep(300 * time.Millisecond)
	rfc = cliIn(a, append(append([]string{"rfc2544", "a0", "--peer", macOf(t, b, "b0")}, rfcArgs...), "--json")...)
	wg.Wait()
	return rfc, refl
}

// TestEngineBadInput: clear errors before anything is sent.
func TestEngineBadInput(t *testing.T) {
	nstest.Require(t)
	a, b := nstest.New(t), nstest.New(t)
	a.Veth(t, "a0", "b0", b, 1)
	dst := macOf(t, b, "b0")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"gen", "nope0", "--dst", dst}, `interface "nope0" not found`},
		{[]string{"gen", "a0", "--dst", "00:11:22"}, "--dst"},
		{[]string{"gen", "a0"}, "--dst MAC is required"},
		{[]string{"gen", "a0", "--dst", dst, "--size", "1600"}, "above a0's MTU 1500"},
		{[]string{"gen", "a0", "--dst", dst, "--size", "40"}, "frame size 40"},
		{[]string{"gen", "a0", "--dst", dst, "--rate", "150%"}, "above line rate"},
		{[]string{"gen", "a0", "--dst", dst, "--rate", "20Gbit"}, "above line rate"},
		{[]string{"gen", "a0", "--dst", dst, "--rate", "fast"}, "want a percentage"},
		{[]string{"gen", "a0", "--dst", dst, "--duration", "0s"}, "--duration 0s"},
		{[]string{"gen", "a0", "--dst", dst, "--count", "0"}, "--count 0"},
		{[]string{"sink", "a0", "--duration", "0s"}, "--duration 0s"},
		{[]string{"sink", "nope0"}, `interface "nope0" not found`},
		{[]string{"rfc2544", "a0"}, "give --peer MAC"},
		{[]string{"rfc2544", "a0", "--peer", dst, "--tests", "jitter"}, `unknown test "jitter"`},
		{[]string{"rfc2544", "a0", "--peer", dst, "--sizes", "32"}, "frame size 32"},
		{[]string{"reflect", "a0", "--duration", "-1s"}, "--duration -1s"},
		{[]string{"gen", "a0", "--dst", dst, "--cpus", "0"}, `--cpus "0": want a count of CPUs`},
		{[]string{"gen", "a0", "--dst", dst, "--cpus", "two"}, `--cpus "two"`},
		{[]string{"gen", "a0", "--dst", dst, "--cpus", "999"}, "999 CPUs asked for, this process may run on"},
		{[]string{"gen", "a0", "--dst", dst, "--cpus", "2", "--stream", "65535"}, "pass 65535"},
		{[]string{"gen", "a0", "--dst", dst, "--cpus", "2", "--flows", "10000"}, "2 senders of 10000 flows each"},
		{[]string{"sink", "a0", "--streams", "0"}, "--streams 0"},
		{[]string{"sink", "a0", "--fanout", "rr"}, `fanout "rr": want hash or cpu`},
		{[]string{"sink", "a0", "--cpus", "999"}, "999 CPUs asked for"},
		{[]string{"reflect", "a0", "--cpus", "999"}, "999 CPUs asked for"},
		{[]string{"reflect", "a0", "--realtime", "fast"}, `--realtime "fast": want on, off or a CPU number`},
		{[]string{"reflect", "a0", "--realtime", "1", "--cpus", "2"}, "give --cpus with --realtime on"},
		{[]string{"rfc2544", "a0", "--peer", dst, "--cpus", "-3"}, `--cpus "-3"`},
		{[]string{"rfc2544", "a0", "--loop", "b0", "--hw-timestamps"}, "--hw-timestamps measures round trips through a reflector"},
	} {
		o := cliIn(a, tc.args...)
		if o.code != 2 || !strings.Contains(o.stderr, tc.want) {
			t.Errorf("%v: exit %d, want 2 and %q in:\n%s", tc.args, o.code, tc.want, o.stderr)
		}
	}
	// The management port: refused unless --force.
	a.Exec(t, "ip", "addr", "add", "198.18.30.1/24", "dev", "a0")
	a.Exec(t, "ip", "route", "add", "default", "via", "198.18.30.2", "dev", "a0")
	if o := cliIn(a, "gen", "a0", "--dst", dst, "--count", "10"); o.code != 2 || !strings.Contains(o.stderr, "carries the default route") {
		t.Errorf("default route port: %d %s", o.code, o.stderr)
	}
	if o := cliIn(a, "gen", "a0", "--dst", dst, "--count", "10", "--force", "--rate", "1000pps"); o.code != 0 || !strings.Contains(o.stdout, "sent 10 frames") {
		t.Errorf("--force: %d %s %s", o.code, o.stdout, o.stderr)
	}
}

// TestGenStopsAtAnyRate: however slow the rate, gen ends at its duration and within
// 100 ms of SIGINT or SIGTERM (a frame every 20 s must not hold the process for 20 s);
// so do sink, reflect and rfc2544 in the middle of a long run.
func TestGenStopsAtAnyRate(t *testing.T) {
	nstest.Require(t)
	a, b := nstest.New(t), nstest.New(t)
	a.Veth(t, "a0", "b0", b, 1)
	dst := macOf(t, b, "b0")
	start := time.Now()
	o := cliIn(a, "gen", "a0", "--dst", dst, "--rate", "0.05pps", "--duration", "2s", "--json")
	g := decode[struct{ Sent uint64 }](t, "slow gen", o)
	if took := time.Since(start); took > 3*time.Second || g.Sent != 1 {
		t.Errorf("--rate 0.05pps --duration 2s: ran %v, sent %d; want about 2s and 1 frame", took, g.Sent)
	}
	// A sink takes the other side's frames (and a core), as on a line.
	sink, _, _ := linerateIn(t, b, "sink", "b0", "--duration", "60s", "--min-frames", "0")
	defer func() { sink.Process.Kill(); sink.Wait() }()
	for _, tc := range []struct {
		sig  syscall.Signal
		args []string
	}{
		{syscall.SIGINT, []string{"gen", "a0", "--dst", dst, "--rate", "0.05pps", "--duration", "60s"}},
		{syscall.SIGTERM, []string{"gen", "a0", "--dst", dst, "--rate", "0.05pps", "--duration", "60s"}},
		// At line rate on two CPUs: each thread's socket closes at once, not one after another.
		{syscall.SIGINT, []string{"gen", "a0", "--dst", dst, "--cpus", "2", "--duration", "60s"}},
		{syscall.SIGINT, []string{"sink", "a0", "--duration", "60s", "--min-frames", "0"}},
		{syscall.SIGTERM, []string{"reflect", "a0", "--duration", "60s"}},
		{syscall.SIGINT, []string{"rfc2544", "a0", "--peer", dst, "--trial", "60s", "--tests", "latency", "--link-mbps", "1"}},
	} {
		sig := tc.sig
		cmd, _, errOut := linerateIn(t, a, tc.args...)
		time.Sleep(700 * time.Millisecond)
		sent := time.Now()
		cmd.Process.Signal(sig)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			took := time.Since(sent)
			t.Logf("%s: ended %v after %v", tc.args[0], took, sig)
			if took > 100*time.Millisecond {
				t.Errorf("%s: ended %v after %v (want within 100 ms), %v: %s", tc.args[0], took, sig, err, errOut)
			}
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Errorf("%s: still running 10 s after %v", tc.args[0], sig)
		}
	}
}

// TestManagementGuard: the default route is found however it reaches the port: in a
// policy-routing table, as one next hop of a multipath route, through the bridge the
// port is enslaved to, or through a VLAN or macvlan device on top of the port.
func TestManagementGuard(t *testing.T) {
	nstest.Require(t)
	for _, tc := range []struct {
		name  string
		setup [][]string
		want  string
	}{
		{"main table", [][]string{{"ip", "route", "add", "default", "via", "198.18.30.2", "dev", "a0"}}, "a0 carries the default route (the"},
		{"policy table", [][]string{{"ip", "route", "add", "default", "via", "198.18.30.2", "dev", "a0", "table", "100"}}, "in routing table 100"},
		{"multipath", [][]string{{"ip", "route", "add", "default", "nexthop", "via", "198.18.31.2", "dev", "c0", "nexthop", "via", "198.18.30.2", "dev", "a0"}}, "a0 carries the default route"},
		{"bridge master", [][]string{{"ip", "link", "add", "br9", "type", "bridge"}, {"ip", "link", "set", "a0", "master", "br9"}, {"ip", "link", "set", "br9", "up"},
			{"ip", "addr", "add", "198.18.32.1/24", "dev", "br9"}, {"ip", "route", "add", "default", "via", "198.18.32.2", "dev", "br9"}}, "through its bridge br9"},
		{"vlan on the port", [][]string{{"ip", "link", "add", "link", "a0", "name", "a0.10", "type", "vlan", "id", "10"}, {"ip", "link", "set", "a0.10", "up"},
			{"ip", "addr", "add", "198.18.33.1/24", "dev", "a0.10"}, {"ip", "route", "add", "default", "via", "198.18.33.2", "dev", "a0.10"}}, "through its vlan a0.10"},
		{"macvlan on the port", [][]string{{"ip", "link", "add", "link", "a0", "name", "mv0", "type", "macvlan", "mode", "bridge"}, {"ip", "link", "set", "mv0", "up"},
			{"ip", "addr", "add", "198.18.34.1/24", "dev", "mv0"}, {"ip", "route", "add", "default", "via", "198.18.34.2", "dev", "mv0"}}, "through its macvlan mv0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := nstest.New(t), nstest.New(t)
			a.Veth(t, "a0", "b0", b, 1)
			a.Veth(t, "c0", "d0", b, 1)
			dst := macOf(t, b, "b0")
			a.Exec(t, "ip", "addr", "add", "198.18.30.1/24", "dev", "a0")
			a.Exec(t, "ip", "addr", "add", "198.18.31.1/24", "dev", "c0")
			if o := cliIn(a, "gen", "a0", "--dst", dst, "--count", "1", "--rate", "1000pps"); o.code != 0 {
				t.Fatalf("before any default route: %d %s", o.code, o.stderr)
			}
			for _, c := range tc.setup {
				if _, err := a.Try(c[0], c[1:]...); err != nil {
					if strings.Contains(err.Error(), "Unknown device type") {
						t.Skipf("this kernel has no such device (no module can be loaded here): %v", err)
					}
					t.Fatal(err)
				}
			}
			o := cliIn(a, "gen", "a0", "--dst", dst, "--count", "1", "--rate", "1000pps")
			if o.code != 2 || !strings.Contains(o.stderr, tc.want) {
				t.Errorf("exit %d, want 2 and %q in: %s", o.code, tc.want, o.stderr)
			}
			if o := cliIn(a, "rfc2544", "a0", "--peer", dst, "--trial", "100ms", "--tests", "throughput"); o.code != 2 || !strings.Contains(o.stderr, "default route") {
				t.Errorf("rfc2544: exit %d: %s", o.code, o.stderr)
			}
		})
	}
}

// TestReflectorLatency: at a low rate the round trip through the reflector is the
// path's. With a ring of blocks the reflector held each frame until its block's timer
// (2 ms) retired it, and gen -> reflect -> sink at 1000 frames/s read p50 about 1,000 µs
// and p99 about 2,000 µs on a veth whose ping round trip is a few µs.
func TestReflectorLatency(t *testing.T) {
	// 1 Mbit/s: 844 frames/s of 128 bytes
	o, refl := throughReflector(t, []string{"--duration", "6s"}, "--sizes", "128", "--trial", "2s", "--tests", "latency", "--link-mbps", "1")
	r := decode[struct {
		Results []struct {
			Latency *struct {
				NS struct{ P50, P99 int64 } `json:"latency_ns"`
			}
		}
	}](t, "rfc2544 latency", o)
	decode[struct{ Reflected uint64 }](t, "reflect", refl)
	if len(r.Results) != 1 || r.Results[0].Latency == nil {
		t.Fatalf("no latency: %+v\n%s", r, o.stderr)
	}
	l := r.Results[0].Latency.NS
	t.Logf("round trip through the reflector at 844 fps: p50 %.1f µs, p99 %.1f µs", float64(l.P50)/1e3, float64(l.P99)/1e3)
	// Well under the millisecond a block timer adds (a loaded CI machine gets room).
	if l.P50 > 400e3 {
		t.Errorf("round-trip p50 %.1f µs: the reflector holds frames back", float64(l.P50)/1e3)
	}
}

// TestSeveralCPUs: gen --cpus 2 sends 200,000 frames from two pinned senders (a stream
// and a source-port range each) to sink --cpus 2 --streams 2, two rings in a fanout
// group: the total is exact, neither stream loses, reorders or duplicates a frame, both
// rings took frames, and both sides report CPU time per frame. Then reflect --cpus 2
// reflects rfc2544 --cpus 2's trials: round-trip latency through two reflecting threads.
func TestSeveralCPUs(t *testing.T) {
	nstest.Require(t)
	if n := len(cpusOf(t)); n < 2 {
		t.Skipf("this process may run on %d CPU: two are needed to pin two threads", n)
	}
	a, b := nstest.New(t), nstest.New(t)
	noIPv6(t, a, b)
	a.Veth(t, "a0", "b0", b, 1)
	dst := macOf(t, b, "b0")
	g, s := genAndSink(t, a, []string{"gen", "a0", "--dst", dst, "--count", "200000", "--rate", "100kpps", "--flows", "4", "--stream", "30", "--cpus", "2", "--link-mbps", "10000", "--json"},
		b, []string{"sink", "b0", "--stream", "30", "--streams", "2", "--cpus", "2", "--duration", "60s", "--json"}, 0)
	type thread struct {
		CPU    int
		Frames uint64
		CPUNs  int64 `json:"cpu_ns"`
	}
	gen := decode[struct {
		Sent, Streams int
		NsPerFrame    float64 `json:"cpu_ns_per_frame"`
		Senders       []thread
	}](t, "gen", g)
	type stream struct {
		Stream                                                 uint16
		Sent, Received, Lost, Reordered, Duplicated, Corrupted uint64
	}
	sink := decode[struct {
		stream
		PerStream  []stream `json:"per_stream"`
		NsPerFrame float64  `json:"cpu_ns_per_frame"`
		Rings      []thread
	}](t, "sink", s)
	if gen.Sent != 200000 || gen.Streams != 2 || len(gen.Senders) != 2 || gen.NsPerFrame <= 0 {
		t.Errorf("gen: %+v", gen)
	}
	if sink.Received != 200000 || sink.Lost != 0 || len(sink.PerStream) != 2 || sink.NsPerFrame <= 0 || len(sink.Rings) != 2 {
		t.Errorf("sink: %+v", sink)
	}
	for i, p := range sink.PerStream {
		if p.Stream != uint16(30+i) || p.Sent == 0 || p.Sent != gen.Senders[i].Frames || p.Received != p.Sent || p.Reordered+p.Duplicated+p.Corrupted != 0 {
			t.Errorf("stream %d: %+v; its sender %+v", 30+i, p, gen.Senders[i])
		}
	}
	for i, r := range append(gen.Senders, sink.Rings...) {
		if r.CPU != i%2 || r.Frames == 0 {
			t.Errorf("thread %d: %+v, want pinned to CPU %d with frames", i, r, i%2)
		}
	}
	t.Logf("gen --cpus 2: %+v, %.0f ns/frame; sink --cpus 2: %+v, %.0f ns/frame", gen.Senders, gen.NsPerFrame, sink.Rings, sink.NsPerFrame)

	// No flag: a plain sink counts both of gen --cpus 2's streams, exactly, each on its
	// own, and says two came; --stream narrows it, the other stream's frames foreign.
	for _, narrow := range [][]string{nil, {"--stream", "41"}} {
		g, s = genAndSink(t, a, []string{"gen", "a0", "--dst", dst, "--count", "100000", "--rate", "100kpps", "--stream", "40", "--cpus", "2", "--link-mbps", "10000", "--json"},
			b, append([]string{"sink", "b0", "--duration", "60s", "--json"}, narrow...), 0)
		gen := decode[struct{ Senders []thread }](t, "gen", g)
		sink := decode[struct {
			stream
			Foreign   uint64
			Streams   int
			Any       bool     `json:"any_stream"`
			PerStream []stream `json:"per_stream"`
		}](t, "sink", s)
		if len(gen.Senders) != 2 {
			t.Fatalf("gen: %+v", gen)
		}
		if narrow == nil {
			if !sink.Any || sink.Streams != 2 || sink.Received != 100000 || sink.Lost+sink.Foreign != 0 || len(sink.PerStream) != 2 {
				t.Errorf("a plain sink: %+v", sink)
			}
			for i, p := range sink.PerStream {
				if p.Stream != uint16(40+i) || p.Received != gen.Senders[i].Frames || p.Sent != p.Received {
					t.Errorf("a plain sink's stream %d: %+v; its sender %+v", 40+i, p, gen.Senders[i])
				}
			}
		} else if sink.Any || sink.Streams != 1 || sink.Stream != 41 || sink.Received != gen.Senders[1].Frames || sink.Foreign < gen.Senders[0].Frames {
			t.Errorf("sink --stream 41: %+v; senders %+v", sink, gen.Senders)
		}
	}
	if o := cliIn(b, "sink", "b0", "--duration", "300ms"); !strings.Contains(o.stdout, "no test stream came") || !strings.Contains(o.stderr, "received 0 test frames (of any stream)") {
		t.Errorf("a silent plain sink: %d %s %s", o.code, o.stdout, o.stderr)
	}

	var wg sync.WaitGroup
	var refl cliOut
	wg.Add(1)
	go func() {
		defer wg.Done()
		refl = cliIn(b, "reflect", "b0", "--cpus", "2", "--duration", "6s", "--json")
	}()
	time.Sleep(300 * time.Millisecond)
	// --hw-timestamps: veth has no clock of its own; the latency is software's, and the
	// result says why.
	o := cliIn(a, "rfc2544", "a0", "--peer", dst, "--sizes", "128", "--trial", "1s", "--tests", "latency", "--cpus", "2", "--link-mbps", "100", "--hw-timestamps", "--json")
	wg.Wait()
	r := decode[struct {
		Results []struct {
			Latency *struct {
				Kind, Clock string
				HWNote      string                   `json:"hw_timestamps"`
				NS          struct{ P50, P99 int64 } `json:"latency_ns"`
			}
		}
	}](t, "rfc2544 --cpus 2", o)
	if l := r.Results[0].Latency; l == nil || l.Clock != "software" || l.HWNote != "a0 has no hardware timestamping (ethtool -T a0: no hardware-transmit/receive/raw-clock): software stamps used" {
		t.Errorf("rfc2544 --hw-timestamps on veth: %+v", l)
	}
	rf := decode[struct {
		Reflected  uint64
		NsPerFrame float64 `json:"cpu_ns_per_frame"`
		Rings      []thread
	}](t, "reflect --cpus 2", refl)
	if len(r.Results) != 1 || r.Results[0].Latency == nil || r.Results[0].Latency.Kind != "round-trip" || r.Results[0].Latency.NS.P50 <= 0 {
		t.Errorf("rfc2544 --cpus 2: %+v\n%s", r, o.stderr)
	}
	if rf.Reflected == 0 || len(rf.Rings) != 2 || rf.NsPerFrame <= 0 {
		t.Errorf("reflect --cpus 2: %+v", rf)
	}
	t.Logf("rfc2544 --cpus 2 through reflect --cpus 2: latency %+v; reflector %+v, %.0f ns/frame", *r.Results[0].Latency, rf.Rings, rf.NsPerFrame)
}

func cpusOf(t *testing.T) []int {
	cpus, err := rawsock.CPUs(0)
	if err != nil {
		t.Fatal(err)
	}
	return cpus
}

// TestReflectorRealtime: a reflector (a process of its own, as a station runs it) with
// --realtime on its thread SCHED_FIFO, and with --realtime CPU its thread pinned to that
// CPU busy polling (not real-time: the kernel would throttle a spinning one 50 ms a
// second); each says so on its first line and in its result, and answers the frames of
// a latency test.
func TestReflectorRealtime(t *testing.T) {
	nstest.Require(t)
	a, b := nstest.New(t), nstest.New(t)
	noIPv6(t, a, b)
	a.Veth(t, "a0", "b0", b, 1)
	cpus, err := rawsock.CPUs(0)
	if err != nil {
		t.Fatal(err)
	}
	last := strconv.Itoa(cpus[len(cpus)-1])
	for _, tc := range []struct{ arg, want, policy, cpus string }{
		{"on", fmt.Sprintf("real-time (SCHED_FIFO %d), memory locked", rawsock.RTPriority), "1", ""},
		{last, "busy polling on CPU " + last + ", memory locked", "0", last},
	} {
		cmd, out, errOut := linerateIn(t, b, "reflect", "b0", "--realtime", tc.arg, "--duration", "4s", "--json")
		// ip netns exec execs linerate: its pid is the command's. The reflecting thread is
		// the one named by its policy (field 41 of its stat) or by its CPUs; it is set up
		// once its rings are open. (Its stderr is read once it has ended: the process
		// writes it meanwhile.)
		reflecting := func() int {
			found := 0
			tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", cmd.Process.Pid))
			for _, task := range tasks {
				dir := fmt.Sprintf("/proc/%d/task/%s/", cmd.Process.Pid, task.Name())
				stat, _ := os.ReadFile(dir + "stat")
				status, _ := os.ReadFile(dir + "status")
				f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
				pinned := regexp.MustCompile(`(?m)^Cpus_allowed_list:\s*(\S+)$`).FindSubmatch(status)
				switch {
				case len(f) < 39:
				case tc.policy == "1" && f[38] == "1":
					found++
				case tc.cpus != "" && pinned != nil && string(pinned[1]) == tc.cpus && f[38] == "0":
					found++
				}
			}
			return found
		}
		found := 0
		for deadline := time.Now().Add(10 * time.Second); found == 0 && time.Now().Before(deadline); found = reflecting() {
			time.Sleep(50 * time.Millisecond)
		}
		if found != 1 {
			t.Errorf("--realtime %s: %d reflecting threads as asked (policy %s, CPUs %q), want 1", tc.arg, found, tc.policy, tc.cpus)
		}
		o := cliIn(a, "rfc2544", "a0", "--peer", macOf(t, b, "b0"), "--sizes", "128", "--trial", "2s", "--tests", "latency",
			"--link-mbps", "1", "--json")
		if !waitOrKill(cmd, 20*time.Second) {
			t.Fatal("reflect did not end by itself")
		}
		r := decode[struct {
			Results []struct {
				Latency *struct {
					NS struct{ P50, P99 int64 } `json:"latency_ns"`
				}
			}
		}](t, "rfc2544 latency", o)
		refl := decode[struct {
			Reflected uint64
			Realtime  string
		}](t, "reflect", cliOut{out.String(), errOut.String(), cmd.ProcessState.ExitCode()})
		if refl.Realtime != tc.want || !strings.Contains(errOut.String(), "reflect b0 (") {
			t.Errorf("--realtime %s: the reflector says %q, want %q; stderr:\n%s", tc.arg, refl.Realtime, tc.want, errOut)
		}
		if len(r.Results) != 1 || r.Results[0].Latency == nil || refl.Reflected < 1000 {
			t.Fatalf("--realtime %s: latency %+v, reflected %d\n%s", tc.arg, r, refl.Reflected, o.stderr)
		}
		l := r.Results[0].Latency.NS
		t.Logf("%s: round trip p50 %.1f µs, p99 %.1f µs", tc.want, float64(l.P50)/1e3, float64(l.P99)/1e3)
	}
}
