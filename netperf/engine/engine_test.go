package engine

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/zynqnet/linerate/internal/badinput"
	"github.com/zynqnet/linerate/netperf/frames"
	"github.com/zynqnet/linerate/netperf/rawsock"
)

// TestGenOptions: how gen paces its senders. Line rate is left to the driver (no
// schedule); any other rate is the schedule's; a count alone is bounded in time too.
func TestGenOptions(t *testing.T) {
	for _, c := range []struct {
		name    string
		rate    string
		fps     float64
		cfg     GenConfig
		wantFPS float64
		wantDur time.Duration
		wantCnt uint64
		markers bool
	}{
		{"line rate: the driver paces", "100%", 1488095, GenConfig{Duration: 10 * time.Second}, 0, 10 * time.Second, 0, true},
		{"a share of line rate", "50%", 744047.5, GenConfig{Duration: 10 * time.Second}, 744047.5, 10 * time.Second, 0, true},
		{"frames per second", "200kpps", 200000, GenConfig{Duration: time.Second}, 200000, time.Second, 0, true},
		{"a count alone: twice its time and 10 s", "1000pps", 1000, GenConfig{Count: 5000}, 1000, 20 * time.Second, 5000, true},
		{"a count and a duration: the duration", "1000pps", 1000, GenConfig{Count: 5000, Duration: 3 * time.Second}, 1000, 3 * time.Second, 5000, true},
		{"a count at line rate: bounded by the rate's time", "100%", 81274, GenConfig{Count: 81274}, 0, 12 * time.Second, 81274, true},
	} {
		rate, err := frames.ParseRate(c.rate)
		if err != nil {
			t.Fatal(err)
		}
		o := genOptions(c.cfg, c.fps, rate)
		if o.FPS != c.wantFPS || o.Duration != c.wantDur || o.Count != c.wantCnt || o.EndMarkers != c.markers {
			t.Errorf("%s: %+v, want fps %g duration %v count %d", c.name, o, c.wantFPS, c.wantDur, c.wantCnt)
		}
	}
}

// TestGenAccounting: a run's figures from what the senders counted: frames per second,
// Mbit/s at layer 2 (frames with FCS) and on the wire (20 bytes of preamble and gap a
// frame more), CPU per frame; and the line a person reads.
func TestGenAccounting(t *testing.T) {
	p := &Port{Name: "eth0", LinkMbps: 1000}
	dst, _ := net.ParseMAC("02:00:00:00:00:0b")
	// 81,274 frames of 1518 bytes in a second: gigabit line rate.
	st := rawsock.GenStats{Sent: 81274, Bytes: 81274 * 1518, Elapsed: time.Second, CPU: 81274 * 2000 * time.Nanosecond,
		Senders: []rawsock.ThreadStats{{CPU: 0, Frames: 40637, CPUTime: 40637 * 1500}, {CPU: 1, Frames: 40637, CPUTime: 40637 * 2500}}}
	r := genResult(p, GenConfig{Dst: dst, Stream: 7}, []int{1518}, 81274, st, 2)
	if r.PPS != 81274 || r.L2Mbps < 986.99 || r.L2Mbps > 987 || r.WireMbps < 999.99 || r.WireMbps > 1000.01 || r.CPUNsPerFrame != 2000 || r.Streams != 2 {
		t.Errorf("%+v", r)
	}
	want := "gen eth0 -> 02:00:00:00:00:0b streams 7..8, 1518 bytes: sent 81274 frames in 1.00 s: 81274 fps, 986.99 Mbit/s L2, 1000.00 Mbit/s wire (100.0% of 1000 Mbit/s)\n" +
		"  cpu: 2000 ns/frame; sender 0 on CPU 0: 40637 frames, 1500 ns/frame; sender 1 on CPU 1: 40637 frames, 2500 ns/frame\n"
	if got := r.Text(); got != want {
		t.Errorf("text\n%s\nwant\n%s", got, want)
	}
	// Frames the port never took (its link down at the end) are said apart from those sent.
	st.Unsent = 2048
	r = genResult(p, GenConfig{Dst: dst, Stream: 7}, []int{1518}, 81274, st, 2)
	if want := "  2048 more frames were queued at the end that eth0 never took (its link down?): not counted as sent\n"; r.Unsent != 2048 || !strings.Contains(r.Text(), want) {
		t.Errorf("unsent: %d\n%s", r.Unsent, r.Text())
	}
	// Nothing sent, no time: zeros, not NaN.
	z := genResult(p, GenConfig{Dst: dst}, frames.IMIX, 0, rawsock.GenStats{}, 1)
	if z.PPS != 0 || z.L2Mbps != 0 || z.WireMbps != 0 || z.CPUNsPerFrame != 0 || !strings.Contains(z.Text(), "stream 0, imix bytes") {
		t.Errorf("an empty run: %+v %s", z, z.Text())
	}
	for _, c := range []struct {
		bytes, n uint64
		secs     float64
		wire     bool
		want     float64
	}{{64 * 1488095, 1488095, 1, true, 1000}, {64 * 1488095, 1488095, 1, false, 761.904640}, {1000, 10, 0, true, 0}, {125000, 1, 2, false, 0.5}} {
		if got := mbps(c.bytes, c.n, c.secs, c.wire); got < c.want-0.001 || got > c.want+0.001 {
			t.Errorf("mbps(%d, %d, %g, %v) = %g, want %g", c.bytes, c.n, c.secs, c.wire, got, c.want)
		}
	}
}

// TestSinkAccounting: the sink's line for one stream, several, any that came, and what
// its own ring dropped; its verdict against --min-frames and --max-loss.
func TestSinkAccounting(t *testing.T) {
	res := func(stream uint16, sent, got uint64) frames.Result {
		return frames.Result{Stream: stream, Sent: sent, Received: got, Lost: sent - got, LossPct: 100 * float64(sent-got) / float64(max(sent, 1))}
	}
	one := &SinkResult{Interface: "eth1", Result: res(3, 1000, 990), Streams: 1}
	if s := one.Text(); !strings.HasPrefix(s, "sink eth1 stream 3:") {
		t.Errorf("one stream:\n%s", s)
	}
	var per []frames.Result
	for i := uint16(0); i < 10; i++ {
		per = append(per, res(100+i, 10, 10))
	}
	anyRes := &SinkResult{Interface: "eth1", Result: res(100, 100, 100), PerStream: per, Streams: 10, Any: true, OverStreams: 5, SinkDrops: 2,
		Rings: []rawsock.ThreadStats{{CPU: -1, Frames: 100}}}
	s := anyRes.Text()
	for _, want := range []string{"10 streams (100, 101, 102, 103, 104, 105, 106, 107 and 2 more):", "  stream 109: received 10 of 10, lost 0",
		"5 frames of streams past the first", "the sink's ring overflowed: 2 frames dropped here, not on the path"} {
		if !strings.Contains(s, want) {
			t.Errorf("any streams: no %q in\n%s", want, s)
		}
	}
	if strings.Contains(s, "ring 0 on CPU") {
		t.Errorf("an unpinned ring has no CPU line:\n%s", s)
	}
	none := &SinkResult{Interface: "eth1", Result: res(0, 0, 0), Any: true}
	if s := none.Text(); !strings.Contains(s, "no test stream came:") {
		t.Errorf("no stream:\n%s", s)
	}
	for _, c := range []struct {
		r    *SinkResult
		loss float64
		min  uint64
		want string
	}{
		{one, 1, 1000, "received 990 frames of stream 3, want at least 1000"},
		{one, 0.5, 1, "lost 1.0000%, above --max-loss 0.5%"},
		{one, 1, 1, ""},
		{none, 0, 1, "received 0 test frames (of any stream), want at least 1"},
	} {
		err := c.r.Verdict(c.loss, c.min)
		if (err == nil) != (c.want == "") || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("verdict(%g, %d): %v, want %q", c.loss, c.min, err, c.want)
		}
	}
}

// TestCheckSizes: a frame's IP packet must fit the port's MTU (a VLAN tag takes 4 bytes
// of the frame).
func TestCheckSizes(t *testing.T) {
	p := &Port{Name: "eth0", MTU: 1500}
	for _, c := range []struct {
		sizes []int
		vlan  bool
		ok    bool
	}{{[]int{64, 1518}, false, true}, {[]int{1519}, false, false}, {[]int{1522}, true, true}, {[]int{1523}, true, false}, {frames.IMIX, false, true}} {
		err := p.CheckSizes(c.sizes, c.vlan)
		if (err == nil) != c.ok {
			t.Errorf("%v vlan %v: %v", c.sizes, c.vlan, err)
		}
		if err != nil && (!badinput.Is(err) || !strings.Contains(err.Error(), "ip link set eth0 mtu")) {
			t.Errorf("%v: %v, want bad input naming the fix", c.sizes, err)
		}
	}
}

// TestParsers: the engine's flags and values, each refusal saying what it takes.
func TestParsers(t *testing.T) {
	for s, want := range map[string]int{"": 0, "all": -1, "ALL": -1, "1": 1, "1024": 1024} {
		if n, err := ParseCPUs("--cpus", s); err != nil || n != want {
			t.Errorf("ParseCPUs(%q) = %d, %v", s, n, err)
		}
	}
	for _, s := range []string{"0", "-1", "1025", "two"} {
		if _, err := ParseCPUs("--cpus", s); err == nil || !strings.Contains(err.Error(), `--cpus "`+s+`": want a count of CPUs`) {
			t.Errorf("ParseCPUs(%q): %v", s, err)
		}
	}
	var n int
	v := CPUsValue{&n}
	if v.Set("all") != nil || v.String() != "all" || v.Set("3") != nil || v.String() != "3" || v.Set("0") == nil {
		t.Errorf("CPUsValue %d", n)
	}
	var stream uint16
	sv := StreamValue{&stream}
	if sv.Set("65535") != nil || sv.String() != "65535" || sv.Set("65536") == nil {
		t.Errorf("StreamValue %d", stream)
	}
	if _, err := ParseMAC("--dst", "02:00:00:00:00:0b"); err != nil {
		t.Error(err)
	}
	for _, s := range []string{"02:00:00:00:00", "00:00:00:00:fe:80:00:00:00:00:00:00:02:00:5e:10", "x"} {
		if _, err := ParseMAC("--dst", s); err == nil || !strings.Contains(err.Error(), "want an Ethernet address") {
			t.Errorf("ParseMAC(%q): %v", s, err)
		}
	}
}

// TestLookupPortRefusals: before anything is sent, an unknown interface names the ones
// there are, and one without an Ethernet address (loopback) is refused.
func TestLookupPortRefusals(t *testing.T) {
	_, err := LookupPort("/", "no-such-port0", 0)
	if err == nil || !strings.Contains(err.Error(), "no-such-port0") || !strings.Contains(err.Error(), "lo") {
		t.Errorf("an unknown port: %v", err)
	}
	if _, err := LookupPort("/", "lo", 1000); err == nil || !strings.Contains(err.Error(), "has no Ethernet address") {
		t.Errorf("loopback: %v", err)
	}
}

// TestParseRealtime: --realtime's values, and what it refuses.
func TestParseRealtime(t *testing.T) {
	for in, want := range map[string]Realtime{"off": {}, "on": {On: true, CPU: -1}, "ON": {On: true, CPU: -1}, "3": {On: true, CPU: 3}, "0": {On: true, CPU: 0}} {
		got, err := ParseRealtime(in)
		if err != nil || got != want || (in != "ON" && got.String() != in) {
			t.Errorf("%q: %+v %v (%s), want %+v", in, got, err, got, want)
		}
	}
	for _, in := range []string{"", "-1", "yes", "1024", "cpu3"} {
		if _, err := ParseRealtime(in); err == nil || !strings.Contains(err.Error(), "want on, off or a CPU number") {
			t.Errorf("%q: %v", in, err)
		}
	}
	if !(Realtime{On: true, CPU: 0}).Kept() || (Realtime{On: true, CPU: -1}).Kept() || (Realtime{CPU: 2}).Kept() {
		t.Error("Kept")
	}
	if _, err := OpenReflector("/", "lo", 2, Realtime{On: true, CPU: 1}); !badinput.Is(err) || !strings.Contains(err.Error(), "give --cpus with --realtime on") {
		t.Errorf("--cpus 2 --realtime 1: %v", err)
	}
}
