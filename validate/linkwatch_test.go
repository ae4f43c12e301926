package validate

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zynqnet/linerate/nic"
	"github.com/zynqnet/linerate/plan"
)

// The run's link watch, read for a window: the state the window began in, its events,
// carrier losses and time without carrier (not what linerate caused), counter rises;
// and a step's result with a flap of its window.
func TestLinkWatchWindows(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	ev := func(s float64, kind, detail, excused string) nic.LinkEvent {
		return nic.LinkEvent{Time: at(s), Kind: kind, Detail: "eth0 " + detail, Excused: excused}
	}
	w := &linkWatch{ports: map[string]*portWatch{"eth0": {begun: t0, start: "carrier up, 1000 Mb/s full", events: []nic.LinkEvent{
		ev(1, "carrier-down", "carrier down", "linerate was changing the port: tune"),
		ev(3, "carrier-up", "carrier up after 2.00s", "linerate was changing the port: tune"),
		ev(10, "counter", "rx_crc_errors +3", ""),
		ev(12, "carrier-down", "carrier down", ""),
		ev(12.5, "carrier-up", "carrier up after 0.50s", ""),
		ev(20, "carrier-down", "carrier down", ""),
	}}}}
	s := w.Summary("eth0", at(5), at(22))
	if s.Start != "carrier up" || len(s.Events) != 4 || s.Downs != 2 || s.DownS != 2.5 || s.Counters["rx_crc_errors"] != 3 || s.Seconds != 17 {
		t.Errorf("summary 5..22 s: %+v", s)
	}
	if s := w.Summary("eth0", at(2), at(4)); s.Start != "no carrier" || s.Downs != 0 || s.DownS != 1 || len(s.Faults()) != 0 {
		t.Errorf("summary 2..4 s (in the tune's bounce): %+v", s)
	}
	w.settle([]string{"eth0"}, at(4))
	if got := w.Settled("eth0"); !got.Equal(at(4)) {
		t.Errorf("settled %v", got)
	}

	res := plan.StepResult{ID: "tcp-up", Type: "iperf3", Pass: true}
	holdLink(&res, "iperf3", w.Events([]string{"eth0"}, at(0), at(5)))
	if !res.Pass || res.Flap != "" || len(res.LinkEvents) != 2 || !strings.Contains(res.LinkEvents[0], "not counted") {
		t.Errorf("the tune's own bounce held against a step: %+v", res)
	}
	res = plan.StepResult{ID: "tcp-up", Type: "iperf3", Reason: "1.0 Mbit/s is below 900"}
	holdLink(&res, "iperf3", w.Events([]string{"eth0"}, at(9), at(13)))
	if res.Pass || res.Flap != "03:00:12.000 eth0 carrier down" ||
		res.Reason != "stability fault: the link flapped during this step: 03:00:12.000 eth0 carrier down; 03:00:12.500 eth0 carrier up after 0.50s; and 1.0 Mbit/s is below 900" {
		t.Errorf("a flap during a failing step: %+v", res)
	}
	res = plan.StepResult{ID: "link", Type: "link", Pass: true}
	holdLink(&res, "link", w.Events([]string{"eth0"}, at(9), at(13)))
	if !res.Pass || res.Flap != "" || len(res.LinkEvents) != 3 {
		t.Errorf("the link step is held for its negotiation: %+v", res)
	}
	res = plan.StepResult{ID: "c", Type: "counters", Pass: true}
	holdLink(&res, "counters", w.Events([]string{"eth0"}, at(9), at(11)))
	if !res.Pass || len(res.LinkEvents) != 1 {
		t.Errorf("a counter's rise is the counters step's to judge: %+v", res)
	}
	// The PHY's registers: a loss its status register latched that the carrier never
	// showed is a flap; its control bits changing is named, not one.
	w.ports["eth0"].events = append(w.ports["eth0"].events,
		ev(30, "phy-control", "PHY control normal -> loopback (BMCR 0x1140 -> 0x5140)", ""),
		ev(31, "phy-down", "PHY link down (BMSR 0x7949: link down)", ""),
		ev(32, "phy-up", "PHY link up (BMSR 0x796d: link up, autoneg complete)", ""))
	res = plan.StepResult{ID: "tcp-down", Type: "iperf3", Pass: true}
	holdLink(&res, "iperf3", w.Events([]string{"eth0"}, at(29.5), at(30.5)))
	if !res.Pass || len(res.LinkEvents) != 1 {
		t.Errorf("a PHY control change held as a flap: %+v", res)
	}
	holdLink(&res, "iperf3", w.Events([]string{"eth0"}, at(30.5), at(33)))
	if res.Pass || res.Flap != "03:00:31.000 eth0 PHY link down (BMSR 0x7949: link down)" {
		t.Errorf("a loss the PHY latched: %+v", res)
	}
	// The doctor's baseline: kept across steps that only read the port or put it back,
	// dropped by one that changes or loads it.
	w.ports["eth0"].base, w.ports["eth0"].baseAt = &nic.Sample{}, at(4)
	for _, typ := range []string{"identity", "phy", "doctor"} {
		w.keepBase([]string{"eth0"}, typ)
	}
	if b, when := w.Base("eth0"); b == nil || !when.Equal(at(4)) {
		t.Errorf("baseline dropped by a step that reads the port: %v %v", b, when)
	}
	if w.keepBase([]string{"eth0"}, "tune"); w.ports["eth0"].base != nil {
		t.Error("baseline kept across a tune")
	}
	if b, _ := (*linkWatch)(nil).Base("eth0"); b != nil {
		t.Error("a baseline without a watch")
	}
	if evs := (*linkWatch)(nil).Events([]string{"eth0"}, t0, at(30)); evs != nil {
		t.Errorf("no watch: %v", evs)
	}
}

// TestBaseTakenAside: the doctor's baseline is sampled on a goroutine of its own while
// the next steps run; Base waits for it and gives it; a step that changes the port
// while it is being taken drops it (it is not kept when it comes in after), a sample
// that fails leaves none, and ports sampled at once keep a baseline each.
func TestBaseTakenAside(t *testing.T) {
	release := make(chan struct{})
	taken := &nic.Sample{}
	fail := false
	w := &linkWatch{ports: map[string]*portWatch{"eth0": {}}, sample: func(api string, ifaces ...string) (*nic.Sample, error) {
		<-release
		if fail {
			return nil, errors.New("ethtool: no such device")
		}
		return taken, nil
	}}
	w.takeBase([]string{"eth0"}) // returns while the sample waits
	got := make(chan *nic.Sample)
	go func() { b, _ := w.Base("eth0"); got <- b }()
	select {
	case b := <-got:
		t.Fatalf("Base gave %v before the sample was in", b)
	case <-time.After(20 * time.Millisecond):
	}
	released := time.Now()
	close(release)
	if b := <-got; b != taken {
		t.Errorf("Base gave %v, want the sample taken", b)
	}
	// Its time is when the sample began (its link counters are its first read), not
	// when it came in.
	if _, at := w.Base("eth0"); at.IsZero() || !at.Before(released) {
		t.Errorf("the baseline's time is %v, want before the sample was let through (%v)", at, released)
	}

	// A tune while the sample is under way: the sample is not kept.
	release = make(chan struct{})
	w.takeBase([]string{"eth0"})
	w.keepBase([]string{"eth0"}, "tune")
	close(release)
	if b, _ := w.Base("eth0"); b != nil {
		t.Errorf("a baseline dropped by a tune while it was taken came back: %v", b)
	}

	// A sample that fails: no baseline (the doctor samples its own interval).
	release, fail = make(chan struct{}), true
	w.takeBase([]string{"eth0"})
	close(release)
	if b, _ := w.Base("eth0"); b != nil {
		t.Errorf("a failed sample left a baseline: %v", b)
	}

	// Two ports whose link steps pass at once (a board's ports tested together): each
	// keeps its own baseline, and a tune of one drops only that one's.
	release, fail = make(chan struct{}), false
	w.ports["eth1"] = &portWatch{}
	w.takeBase([]string{"eth0"})
	w.takeBase([]string{"eth1"})
	w.keepBase([]string{"eth1"}, "tune")
	close(release)
	if b, _ := w.Base("eth0"); b != taken {
		t.Errorf("eth0's baseline lost to eth1's: %v", b)
	}
	if b, _ := w.Base("eth1"); b != nil {
		t.Errorf("eth1's baseline kept across its tune: %v", b)
	}
	w.wg.Wait()
}

// TestDoctorReadKept: the port as a doctor step read it is kept for a tune step after
// it (Read), per port, across steps that leave the port as it was (the PHY's self-test
// gives its register back), and dropped by a step that changes it; a watch that is not
// there (a run over a captured tree) keeps none.
func TestDoctorReadKept(t *testing.T) {
	w := &linkWatch{ports: map[string]*portWatch{"eth0": {}, "eth1": {}}}
	r0, r1 := &nic.Interface{Name: "eth0"}, &nic.Interface{Name: "eth1"}
	w.keepRead(r0)
	w.keepRead(r1)
	w.keepRead(&nic.Interface{Name: "eth9"}) // not watched: nothing kept
	w.keepBase([]string{"eth0", "eth1"}, "phy")
	if w.Read("eth0") != r0 || w.Read("eth1") != r1 || w.Read("eth9") != nil {
		t.Fatalf("reads %v %v %v, want eth0's and eth1's", w.Read("eth0"), w.Read("eth1"), w.Read("eth9"))
	}
	w.keepBase([]string{"eth1"}, "tune")
	if w.Read("eth0") != r0 || w.Read("eth1") != nil {
		t.Errorf("after eth1's tune: %v %v, want eth0's read alone", w.Read("eth0"), w.Read("eth1"))
	}
	var none *linkWatch
	none.keepRead(r0)
	if none.Read("eth0") != nil {
		t.Error("no watch, yet a read")
	}
}
