package validate

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zynqnet/linerate/curve"
	"github.com/zynqnet/linerate/doctor"
	"github.com/zynqnet/linerate/netperf/frames"
	"github.com/zynqnet/linerate/netperf/iperf3"
	"github.com/zynqnet/linerate/netperf/rfc2544"
	"github.com/zynqnet/linerate/plan"
	"github.com/zynqnet/linerate/tune"
)

func f64(v float64) *float64 { return &v }
func i64(v int64) *int64     { return &v }
func intp(v int) *int        { return &v }

// check compares an outcome's verdict and, where given, a word of its reason and a
// measured value.
func check(t *testing.T, name string, o Outcome, pass bool, reason string, measured map[string]float64) {
	t.Helper()
	if o.Pass != pass {
		t.Errorf("%s: pass = %v, want %v (summary %q, reason %q)", name, o.Pass, pass, o.Summary, o.Reason)
	}
	if reason != "" && !strings.Contains(o.Reason, reason) {
		t.Errorf("%s: reason %q, want it to say %q", name, o.Reason, reason)
	}
	if pass && o.Reason != "" {
		t.Errorf("%s: a pass with a reason: %q", name, o.Reason)
	}
	for k, v := range measured {
		if got, ok := o.Measured[k]; !ok || got != v {
			t.Errorf("%s: measured[%s] = %v (%v), want %v", name, k, got, ok, v)
		}
	}
}

func TestJudgeLink(t *testing.T) {
	step := &Link{CarrierWithin: plan.Duration(5 * time.Second), SpeedMbps: 1000, Duplex: "full"}
	any := &Link{CarrierWithin: plan.Duration(5 * time.Second)}
	cases := []struct {
		name   string
		s      *Link
		m      LinkMeasurement
		pass   bool
		reason string
	}{
		{"up at speed", step, LinkMeasurement{Carrier: true, After: time.Second, SpeedMbps: 1000, Duplex: "full"}, true, ""},
		{"no carrier", step, LinkMeasurement{After: 5 * time.Second, Operstate: "down"}, false, "no link"},
		{"100 Mbit/s", step, LinkMeasurement{Carrier: true, SpeedMbps: 100, Duplex: "full"}, false, "link at 100 Mbit/s, want 1000"},
		{"half duplex", step, LinkMeasurement{Carrier: true, SpeedMbps: 1000, Duplex: "half"}, false, "half duplex, want full"},
		{"no speed asked", any, LinkMeasurement{Carrier: true, SpeedMbps: 10, Duplex: "half"}, true, ""},
	}
	for _, c := range cases {
		o := c.s.Judge(c.m)
		check(t, c.name, o, c.pass, c.reason, nil)
		if c.m.Carrier && o.Figures["speed_mbps"] != float64(c.m.SpeedMbps) {
			t.Errorf("%s: figure speed_mbps %v", c.name, o.Figures["speed_mbps"])
		}
	}
}

func TestJudgeDoctor(t *testing.T) {
	rep := &doctor.Report{Interfaces: []doctor.Interface{{Name: "eth0", Findings: []doctor.Finding{
		{ID: "RINGS_SMALL", Severity: doctor.Warn}, {ID: "RX_CRC_ERRORS", Severity: doctor.Fail}}}}}
	clean := &doctor.Report{Interfaces: []doctor.Interface{{Name: "eth0", Findings: []doctor.Finding{{ID: "RINGS_SMALL", Severity: doctor.Warn}}}}}
	cases := []struct {
		name   string
		s      *Doctor
		rep    *doctor.Report
		pass   bool
		reason string
	}{
		{"a fail finding fails by default", &Doctor{}, rep, false, "RX_CRC_ERRORS"},
		{"warnings pass by default", &Doctor{}, clean, true, ""},
		{"fail_on names a warning", &Doctor{FailOn: []string{"RINGS_SMALL"}}, clean, false, "RINGS_SMALL"},
		{"fail_on leaves other fails alone", &Doctor{FailOn: []string{"LINK_DOWN"}}, rep, true, ""},
	}
	for _, c := range cases {
		check(t, c.name, c.s.Judge("eth0", c.rep), c.pass, c.reason, map[string]float64{"findings": float64(len(c.rep.Interfaces[0].Findings))})
	}
}

func TestJudgeTune(t *testing.T) {
	tp := &tune.Plan{Changes: []tune.Change{{}, {}}, Skipped: []tune.Skip{{}}}
	check(t, "applied", (&Tune{Profile: "zc702"}).Judge(tp, nil), true, "", map[string]float64{"changes": 2, "skipped": 1})
	check(t, "rolled back", (&Tune{Profile: "zc702"}).Judge(tp, errors.New("rx ring: invalid argument")), false, "rx ring", nil)
	check(t, "no plan", (&Tune{Profile: "nope"}).Judge(nil, errors.New("unknown profile")), false, "unknown profile", nil)
	if o := (&Tune{Profile: "x", Keep: true}).Judge(tp, nil); !strings.Contains(o.Summary, "kept") {
		t.Errorf("keep: summary %q", o.Summary)
	}
}

func iperfReport(recvBPS float64, retr *int64, loss *float64) *iperf3.Report {
	r := &iperf3.Report{}
	r.End.SumReceived = iperf3.StreamInterval{Bytes: 1, BitsPerSecond: recvBPS, LostPercent: loss}
	r.End.SumSent = iperf3.StreamInterval{Bytes: 1, BitsPerSecond: recvBPS, Retransmits: retr}
	return r
}

func TestJudgeIperf3(t *testing.T) {
	tcp := &Iperf3{Protocol: "tcp", Direction: "up", MinMbps: f64(900), MaxRetransmits: intp(10)}
	udp := &Iperf3{Protocol: "udp", Direction: "up", MinMbps: f64(90), MaxLossPct: f64(0.1)}
	udpSum := iperfReport(0, nil, nil)
	udpSum.End.SumReceived.Bytes = 0
	udpSum.End.Sum = &iperf3.StreamInterval{Bytes: 1, BitsPerSecond: 95e6, LostPercent: f64(0.05)}
	cases := []struct {
		name     string
		id       string
		s        *Iperf3
		r        *iperf3.Report
		pass     bool
		reason   string
		measured map[string]float64
	}{
		{"at line rate", "tcp-up", tcp, iperfReport(941e6, i64(0), nil), true, "", map[string]float64{"mbps": 941, "retransmits": 0}},
		{"exactly the threshold", "tcp-up", tcp, iperfReport(900e6, i64(10), nil), true, "", map[string]float64{"mbps": 900}},
		{"below", "tcp-up", tcp, iperfReport(899.9e6, i64(0), nil), false, "below 900", nil},
		{"retransmits", "tcp-up", tcp, iperfReport(941e6, i64(11), nil), false, "11 retransmits", map[string]float64{"retransmits": 11}},
		{"udp clean", "udp", udp, iperfReport(95e6, nil, f64(0)), true, "", map[string]float64{"loss_pct": 0}},
		{"udp lossy", "udp", udp, iperfReport(95e6, nil, f64(0.2)), false, "UDP loss", map[string]float64{"loss_pct": 0.2}},
		{"udp from sum (old servers)", "udp", udp, udpSum, true, "", map[string]float64{"mbps": 95, "loss_pct": 0.05}},
	}
	for _, c := range cases {
		o := c.s.Judge(c.id, c.r)
		check(t, c.name, o, c.pass, c.reason, c.measured)
		if _, ok := o.Figures[c.id+"_mbps"]; !ok {
			t.Errorf("%s: no figure %s_mbps", c.name, c.id)
		}
	}
}

func TestJudgeThroughput(t *testing.T) {
	s := &Frames{Size: 64, MinThroughputPct: f64(90)}
	check(t, "above", s.JudgeThroughput("rfc", rfc2544.SizeResult{Size: 64, Throughput: &rfc2544.Throughput{FPS: 1.4e6, Percent: 94}}), true, "", map[string]float64{"throughput_pct": 94})
	check(t, "at", s.JudgeThroughput("rfc", rfc2544.SizeResult{Size: 64, Throughput: &rfc2544.Throughput{Percent: 90}}), true, "", nil)
	check(t, "below", s.JudgeThroughput("rfc", rfc2544.SizeResult{Size: 64, Throughput: &rfc2544.Throughput{Percent: 89.99}}), false, "below 90", nil)
	check(t, "no result", s.JudgeThroughput("rfc", rfc2544.SizeResult{Size: 64}), false, "below 90", map[string]float64{"throughput_pct": 0})
}

func TestJudgeFrames(t *testing.T) {
	s := &Frames{Size: 512, Rate: "10%", MaxLossPct: f64(0.1), MaxP99US: f64(500)}
	lat := func(p99us int64) *frames.Latency { return &frames.Latency{P99: p99us * 1000} }
	cases := []struct {
		name     string
		r        frames.Result
		pass     bool
		reason   string
		measured map[string]float64
	}{
		{"clean and fast", frames.Result{Sent: 1000, Received: 1000, Latency: lat(120)}, true, "", map[string]float64{"p99_us": 120, "loss_pct": 0}},
		{"loss at the threshold", frames.Result{Sent: 1000, Received: 999, Lost: 1, LossPct: 0.1, Latency: lat(120)}, true, "", nil},
		{"lossy", frames.Result{Sent: 1000, Received: 990, Lost: 10, LossPct: 1, Latency: lat(120)}, false, "loss 1.000% above", nil},
		{"slow", frames.Result{Sent: 1000, Received: 1000, Latency: lat(501)}, false, "p99 latency 501us", nil},
		{"nothing back", frames.Result{Sent: 1000, Lost: 1000, LossPct: 100}, false, "no frame came back", nil},
		{"the reflector's drops are the station's", frames.Result{Sent: 1000, Received: 980, Lost: 20, LossPct: 2, ReflectorDrops: 20, Latency: lat(120)}, true, "", map[string]float64{"loss_pct": 0, "reflector_drops": 20}},
		{"the board's driver drops are the board's", frames.Result{Sent: 1000, Received: 980, Lost: 20, LossPct: 2, SenderDrops: 20, Latency: lat(120)}, false, "loss 2.000% above", map[string]float64{"loss_pct": 2}},
	}
	for _, c := range cases {
		check(t, c.name, s.Judge("frames", c.r), c.pass, c.reason, c.measured)
	}
	hw := s.Judge("frames", frames.Result{Sent: 1000, Received: 1000, Latency: lat(12), LatencyClock: "hardware", HWNote: "1000 frames paired (one in 1)"})
	if !strings.Contains(hw.Summary, "p99 12us round trip (want <= 500), hardware stamps; hardware timestamps: 1000 frames paired") {
		t.Errorf("hardware stamps not said: %s", hw.Summary)
	}
	loose := &Frames{Size: 64, Rate: "1%"}
	check(t, "no thresholds", loose.Judge("frames", frames.Result{Sent: 10, Received: 5, Lost: 5, LossPct: 50}), true, "", nil)
}

func TestJudgeCounters(t *testing.T) {
	before := map[string]uint64{"rx_errors": 5, "rx_crc_errors": 2, "collisions": 0}
	cases := []struct {
		name   string
		s      *Counters
		after  map[string]uint64
		pass   bool
		reason string
	}{
		{"nothing rose", &Counters{}, map[string]uint64{"rx_errors": 5, "rx_crc_errors": 2}, true, ""},
		{"crc rose", &Counters{}, map[string]uint64{"rx_errors": 5, "rx_crc_errors": 4}, false, "rx_crc_errors +2"},
		{"ignored", &Counters{Ignore: []string{"rx_crc_errors"}}, map[string]uint64{"rx_crc_errors": 4}, true, ""},
		{"went backwards (driver reloaded)", &Counters{}, map[string]uint64{"rx_errors": 0}, true, ""},
		{"new counter from zero", &Counters{}, map[string]uint64{"collisions": 1}, false, "collisions +1"},
	}
	for _, c := range cases {
		check(t, c.name, c.s.Judge(before, c.after), c.pass, c.reason, nil)
	}
}

func TestJudgeSweep(t *testing.T) {
	s := &Sweep{Knob: "rings.rx", Values: "64,128,256", values: []string{"64", "128", "256"}}
	pt := func(v string, mbps float64) curve.Point {
		return curve.Point{Value: v, Applied: v, Median: map[string]float64{"tcp_mbps": mbps}}
	}
	ok := &curve.Result{Knob: "rings.rx", Restored: true, Points: []curve.Point{pt("64", 10), pt("128", 50), pt("256", 50.2)}}
	if o := s.Judge(ok); !o.Pass || !strings.Contains(o.Summary, "3 measured; most throughput at 128 (50.0 Mbit/s)") {
		t.Errorf("all measured: %+v", o)
	}
	failed := &curve.Result{Knob: "rings.rx", Restored: true, Points: []curve.Point{pt("64", 10), {Value: "128", Error: "no carrier"}, pt("256", 5)}}
	if o := s.Judge(failed); o.Pass || o.Reason != "128: no carrier" {
		t.Errorf("a point failed: %+v", o)
	}
	short := &curve.Result{Knob: "rings.rx", Restored: true, Interrupted: true, Points: []curve.Point{pt("64", 10)}}
	if o := s.Judge(short); o.Pass || !strings.Contains(o.Reason, "1 of 3") {
		t.Errorf("cut short: %+v", o)
	}
	kept := &curve.Result{Knob: "rings.rx", Points: ok.Points}
	if o := s.Judge(kept); o.Pass || !strings.Contains(o.Reason, "not given back") {
		t.Errorf("not restored: %+v", o)
	}
}
