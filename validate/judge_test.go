package validate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zynqnet/linerate/curve"
	"github.com/zynqnet/linerate/doctor"
	"github.com/zynqnet/linerate/experiment"
	"github.com/zynqnet/linerate/netperf/frames"
	"github.com/zynqnet/linerate/netperf/iperf3"
	"github.com/zynqnet/linerate/netperf/rfc2544"
	"github.com/zynqnet/linerate/nic"
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
	matrix := &Link{CarrierWithin: plan.Duration(5 * time.Second), Speeds: []int{100, 1000}}
	cases = append(cases, []struct {
		name   string
		s      *Link
		m      LinkMeasurement
		pass   bool
		reason string
	}{
		{"matrix", matrix, LinkMeasurement{Carrier: true, SpeedMbps: 1000, Duplex: "full", Matrix: []experiment.SpeedPoint{
			{Want: 100, Got: 100, Restored: true}, {Want: 1000, Got: 1000, Restored: true}}}, true, ""},
		{"PHY ignores the advertisement", matrix, LinkMeasurement{Carrier: true, SpeedMbps: 1000, Duplex: "full", Matrix: []experiment.SpeedPoint{
			{Want: 100, Got: 1000, Restored: true, Error: "the link came up at 1000 Mbit/s, not 100 Mbit/s: the PHY ignores the advertisement"}, {Want: 1000, Got: 1000, Restored: true}}}, false, "100 Mbit/s: the link came up at 1000 Mbit/s"},
		{"advertisement kept", matrix, LinkMeasurement{Carrier: true, SpeedMbps: 1000, Duplex: "full", Matrix: []experiment.SpeedPoint{
			{Want: 100, Got: 100, Restored: false}}}, false, "was not given back"},
		{"no link modes", matrix, LinkMeasurement{Carrier: true, SpeedMbps: 10000, Duplex: "full", MatrixErr: errors.New("eth0 has no link modes")}, false, "speed matrix: eth0 has no link modes"},
	}...)
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

func TestJudgeIdentity(t *testing.T) {
	plain := &Identity{}
	strict := &Identity{ExpectOUI: []string{"00:0a:35", "a0:36:9f"}, SerialPattern: `ZC-[0-9]{6}`, PlaceholderMACs: []string{"a0:36:9f:00:00:01"}}
	local := &Identity{AllowLocalMAC: true}
	for _, s := range []*Identity{plain, strict, local} {
		if err := s.Check(nil); err != nil {
			t.Fatal(err)
		}
	}
	good := IdentityFacts{MAC: "00:0a:35:12:34:56", Serial: "ZC-000042", SerialSource: "kernel command line"}
	with := func(f IdentityFacts, edit func(*IdentityFacts)) IdentityFacts { edit(&f); return f }
	cases := []struct {
		name   string
		s      *Identity
		f      IdentityFacts
		eeprom bool
		pass   bool
		reason string
		source string
	}{
		{"good", strict, good, false, true, "", "kernel"},
		{"xilinx placeholder", plain, with(good, func(f *IdentityFacts) { f.MAC = "00:0a:35:00:01:22" }), false, false, "is a placeholder (U-Boot's hard-coded ethaddr)", ""},
		{"plan's placeholder", strict, with(good, func(f *IdentityFacts) { f.MAC = "a0:36:9f:00:00:01" }), false, false, "placeholder", ""},
		{"all zero", plain, with(good, func(f *IdentityFacts) { f.MAC = "00:00:00:00:00:00" }), false, false, "none was programmed", ""},
		{"broadcast", plain, with(good, func(f *IdentityFacts) { f.MAC = "ff:ff:ff:ff:ff:ff" }), false, false, "broadcast", ""},
		{"multicast", plain, with(good, func(f *IdentityFacts) { f.MAC = "01:00:5e:00:00:01" }), false, false, "multicast", ""},
		{"local", plain, with(good, func(f *IdentityFacts) { f.MAC = "52:54:00:12:34:56" }), false, false, "locally administered", ""},
		{"local allowed", local, with(good, func(f *IdentityFacts) { f.MAC = "52:54:00:12:34:56" }), false, true, "", "kernel"},
		{"other OUI", strict, with(good, func(f *IdentityFacts) { f.MAC = "00:1b:21:12:34:56" }), false, false, "outside the expected OUIs (00:0a:35, a0:36:9f)", ""},
		{"second OUI", strict, with(good, func(f *IdentityFacts) { f.MAC = "a0:36:9f:12:34:56" }), false, true, "", ""},
		{"device tree agrees", plain, with(good, func(f *IdentityFacts) { f.DTMAC, f.DTProp = f.MAC, "local-mac-address" }), false, true, "", "device tree (local-mac-address)"},
		{"device tree differs", plain, with(good, func(f *IdentityFacts) { f.DTMAC, f.DTProp = "00:0a:35:99:99:99", "mac-address" }), false, false, "the device tree's mac-address says 00:0a:35:99:99:99", ""},
		{"eeprom agrees", plain, with(good, func(f *IdentityFacts) { f.EEPROMMAC = f.MAC }), true, true, "", "eeprom"},
		{"eeprom differs", plain, with(good, func(f *IdentityFacts) { f.EEPROMMAC = "00:0a:35:00:00:07" }), true, false, "the board's EEPROM holds 00:0a:35:00:00:07", ""},
		{"eeprom blank", plain, with(good, func(f *IdentityFacts) { f.EEPROMNote = "blank: its MAC cell was never programmed" }), true, false, "EEPROM MAC: blank", ""},
		{"no eeprom to compare", plain, with(good, func(f *IdentityFacts) { f.EEPROMNote = "the board profile names no EEPROM" }), false, true, "", "kernel"},
		{"serial off pattern", strict, with(good, func(f *IdentityFacts) { f.Serial = "ZC-42" }), false, false, `serial "ZC-42" (kernel command line) does not match`, ""},
		{"serial pattern anchored", strict, with(good, func(f *IdentityFacts) { f.Serial = "xZC-000042" }), false, false, "does not match", ""},
		{"not a MAC", plain, with(good, func(f *IdentityFacts) { f.MAC = "" }), false, false, "not an Ethernet MAC", ""},
	}
	for _, c := range cases {
		o := c.s.Judge(c.f, c.eeprom)
		check(t, c.name, o, c.pass, c.reason, nil)
		if got := o.Detail.(IdentityFacts).MACSource; c.source != "" && got != c.source {
			t.Errorf("%s: MAC source %q, want %q", c.name, got, c.source)
		}
	}
	for _, bad := range []*Identity{{PlaceholderMACs: []string{"00:0a"}}, {ExpectOUI: []string{"xyz"}}, {SerialPattern: "("}} {
		if err := bad.Check(nil); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

func TestJudgePHY(t *testing.T) {
	marvell := &nic.Registers{Address: 7, BMCR: 0x1140, BMSR: 0x796d, ID1: 0x0141, ID2: 0x0cc2}
	sysfs := &nic.PHY{Device: "e000b000.ethernet-ffffffff:07", ID: "0x01410cc2", Driver: "Marvell 88E1116R"}
	generic := &nic.PHY{Device: sysfs.Device, ID: sysfs.ID, Driver: "Generic PHY"}
	full := &PHY{Loopback: true, ExpectPHYID: "0x1410CC2", ExpectDriver: "Marvell 88E1116R"}
	required := &PHY{Loopback: true, Required: true}
	plain := &PHY{}
	for _, s := range []*PHY{full, required, plain} {
		if err := s.Check(nil); err != nil {
			t.Fatal(err)
		}
	}
	if full.Frames != 1000 || full.ExpectPHYID != "0x01410cc2" {
		t.Fatalf("defaults: %+v", full)
	}
	back := func(n, corrupted uint64, restored bool) *experiment.LoopbackResult {
		return &experiment.LoopbackResult{Sent: 1000, Received: n, Corrupted: corrupted, Before: "0x1140", Loop: "0x4140", After: map[bool]string{true: "0x1140", false: "0x4140"}[restored], Restored: restored}
	}
	veth := &experiment.PHY{Iface: "eth0", NoMII: "eth0's driver (veth) gives no MII access"}
	cases := []struct {
		name   string
		s      *PHY
		m      PHYMeasurement
		pass   bool
		skip   bool
		reason string
	}{
		{"all back", full, PHYMeasurement{PHY: &experiment.PHY{Sysfs: sysfs, Registers: marvell}, Loopback: back(1000, 0, true)}, true, false, ""},
		{"frames lost", full, PHYMeasurement{PHY: &experiment.PHY{Sysfs: sysfs, Registers: marvell}, Loopback: back(999, 0, true)}, false, false, "999 of 1000 frames back"},
		{"corrupted", full, PHYMeasurement{PHY: &experiment.PHY{Sysfs: sysfs, Registers: marvell}, Loopback: back(1000, 1, true)}, false, false, "1 corrupted"},
		{"not restored", full, PHYMeasurement{PHY: &experiment.PHY{Sysfs: sysfs, Registers: marvell}, Loopback: back(1000, 0, false)}, false, false, "BMCR reads 0x4140 after the test, was 0x1140"},
		{"loopback error", full, PHYMeasurement{PHY: &experiment.PHY{Sysfs: sysfs, Registers: marvell}, Err: "carrier never came"}, false, false, "loopback: carrier never came"},
		{"generic driver", full, PHYMeasurement{PHY: &experiment.PHY{Sysfs: generic, Registers: marvell}, Loopback: back(1000, 0, true)}, false, false, `driver "Generic PHY" bound, want "Marvell 88E1116R" (phylib's generic driver`},
		{"other PHY", full, PHYMeasurement{PHY: &experiment.PHY{Sysfs: sysfs, Registers: &nic.Registers{ID1: 0x2000, ID2: 0xa231}}, Loopback: back(1000, 0, true)}, false, false, "PHY id 0x2000a231, want 0x01410cc2"},
		{"another revision", full, PHYMeasurement{PHY: &experiment.PHY{Sysfs: sysfs, Registers: &nic.Registers{ID1: 0x0141, ID2: 0x0cc5}}, Loopback: back(1000, 0, true)}, true, false, ""},
		{"no MII skips", full, PHYMeasurement{PHY: veth}, false, true, ""},
		{"no MII required", required, PHYMeasurement{PHY: veth}, false, false, "no PHY to test on eth0: eth0's driver (veth) gives no MII access (the plan requires it)"},
		{"sysfs only, no loopback", plain, PHYMeasurement{PHY: &experiment.PHY{Sysfs: sysfs, NoMII: "EPERM"}}, true, false, ""},
	}
	for _, c := range cases {
		o := c.s.Judge(c.m)
		if o.Skip != c.skip {
			t.Errorf("%s: skip %v, want %v (%q)", c.name, o.Skip, c.skip, o.Summary)
		}
		if c.skip {
			if !strings.Contains(o.Summary, "no MII access") {
				t.Errorf("%s: a skip must say why: %q", c.name, o.Summary)
			}
			continue
		}
		check(t, c.name, o, c.pass, c.reason, nil)
	}
	for _, bad := range []*PHY{{ExpectPHYID: "marvell"}, {Frames: -1}, {Frames: 2_000_000}} {
		if err := bad.Check(nil); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

func TestJudgeStability(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 5, 0, time.UTC)
	ev := func(kind, detail, excused string) nic.LinkEvent {
		return nic.LinkEvent{Time: at, Kind: kind, Detail: "eth0 " + detail, Excused: excused}
	}
	s := &Stability{Ignore: []string{"rx_missed_errors"}}
	cases := []struct {
		name   string
		events []nic.LinkEvent
		downs  int
		pass   bool
		reason string
	}{
		{"quiet", nil, 0, true, ""},
		{"flap", []nic.LinkEvent{ev("carrier-down", "carrier down", ""), ev("carrier-up", "carrier up after 1.02s", "")}, 1, false, "10:00:05.000 eth0 carrier down"},
		{"our own bounce", []nic.LinkEvent{ev("carrier-down", "carrier down", "linerate was changing the port: tune"), ev("carrier-up", "carrier up after 2.00s", "linerate was changing the port: tune")}, 0, true, ""},
		{"crc errors", []nic.LinkEvent{ev("counter", "rx_crc_errors +3", "")}, 0, false, "rx_crc_errors +3"},
		{"ignored counter", []nic.LinkEvent{ev("counter", "rx_missed_errors +9", "")}, 0, true, ""},
		{"speed drop", []nic.LinkEvent{ev("speed", "speed 1000 -> 100 Mb/s", "")}, 0, false, "speed 1000 -> 100"},
		{"empty detail", []nic.LinkEvent{{Time: at, Kind: "counter", Detail: "eth0 "}}, 0, false, "not stable"},
	}
	for _, c := range cases {
		w := &nic.WatchSummary{Iface: "eth0", Seconds: 10, Events: c.events, Downs: c.downs}
		o := s.Judge(StabilityMeasurement{Watch: w, Traffic: "no traffic"})
		check(t, c.name, o, c.pass, c.reason, map[string]float64{"carrier_downs": float64(c.downs)})
	}
	// A flap that stalled the step's TCP: the flap fails the step, and its summary says
	// what became of the traffic rather than nothing.
	w := &nic.WatchSummary{Iface: "eth0", Seconds: 35, Events: cases[1].events, Downs: 1}
	o, err := s.judged(context.Background(), Env{}, time.Now(), w, "", errors.New("iperf3 to the station: no results 35s after the 15s test began"))
	if err != nil || o.Pass || !strings.Contains(o.Summary, "35s watched with traffic that stopped (iperf3 to the station: no results 35s after the 15s test began): 2 link event(s)") {
		t.Errorf("a flap that stalled the traffic: %v %+v", err, o)
	}
	// Without a fault of the link, the traffic's failure is the step's error.
	if _, err := s.judged(context.Background(), Env{}, time.Now(), &nic.WatchSummary{Iface: "eth0", Seconds: 35}, "", errors.New("stalled")); err == nil || err.Error() != "stalled" {
		t.Errorf("a stall on a quiet link: %v", err)
	}
}

// Every port of a board has its own MAC; with mac_layout consecutive, the first port's
// plus each port's place (across an octet's carry).
func TestIdentityPorts(t *testing.T) {
	anyLayout, consec := &Identity{AllowLocalMAC: true}, &Identity{AllowLocalMAC: true, MACLayout: "consecutive"}
	for _, s := range []*Identity{anyLayout, consec} {
		if err := s.Check(nil); err != nil {
			t.Fatal(err)
		}
	}
	ports := func(macs ...string) []PortMAC {
		var out []PortMAC
		for i, m := range macs {
			out = append(out, PortMAC{fmt.Sprintf("eth%d", i), m})
		}
		return out
	}
	for _, c := range []struct {
		s     *Identity
		ports []PortMAC
		index int
		want  string
	}{
		{anyLayout, ports("00:0a:35:00:00:10", "00:0a:35:00:00:10"), 1, "MAC 00:0a:35:00:00:10 is also eth0's: each port of a board needs its own"},
		{anyLayout, ports("00:0a:35:00:00:10", "00:0a:35:00:00:10"), 0, "is also eth1's"},
		{anyLayout, ports("00:0a:35:00:00:10", "00:0a:35:00:00:99"), 1, ""},
		{consec, ports("00:0a:35:00:00:10", "00:0a:35:00:00:11", "00:0a:35:00:00:12"), 2, ""},
		{consec, ports("00:0a:35:00:00:10", "00:0a:35:00:00:11", "00:0a:35:00:00:13"), 2, "MAC 00:0a:35:00:00:13, want 00:0a:35:00:00:12: eth0's 00:0a:35:00:00:10 plus 2 (mac_layout: consecutive)"},
		{consec, ports("00:0a:35:00:ff:ff", "00:0a:35:01:00:00"), 1, ""},
	} {
		f := IdentityFacts{MAC: c.ports[c.index].MAC, Ports: c.ports, Index: c.index, Serial: "S"}
		o := c.s.Judge(f, false)
		if (c.want == "") != o.Pass || !strings.Contains(o.Reason, c.want) {
			t.Errorf("%v port %d: pass %v %q, want %q", c.ports, c.index, o.Pass, o.Reason, c.want)
		}
	}
	if err := (&Identity{MACLayout: "random"}).Check(nil); err == nil || !strings.Contains(err.Error(), `mac_layout "random": want consecutive or any`) {
		t.Errorf("a bad layout: %v", err)
	}
}
