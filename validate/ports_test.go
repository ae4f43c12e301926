package validate

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zynqnet/linerate/plan"
)

const portsPlan = `name: two
board: zc702
budget: 1m
station:
  address: 198.18.5.1
  port: 5201
  reflector_mac: auto
ports:
  - eth0
  - interface: eth1
    station: {address: 198.18.6.1, port: 5202, reflector_mac: "02:00:00:00:00:0b"}
steps:
  - {id: link, type: link}
  - {id: tcp-up, type: iperf3, min_mbps: 100}
  - {id: tune, type: tune, profile: zc702}
  - {id: loop, type: loop, ports: [eth0, eth1], rate: 1000pps, max_loss_pct: 0}
  - {id: slow, type: frames, rate: 1000pps, max_loss_pct: 0, concurrent: false}
`

func TestParsePorts(t *testing.T) {
	p, err := Parse([]byte(portsPlan), "two.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !p.Multi() || len(p.Ports) != 2 || p.Interface != "eth0" {
		t.Fatalf("ports %+v", p.Ports)
	}
	a, b := p.Ports[0].Station, p.Ports[1].Station
	if a.Address != "198.18.5.1" || a.Port != 5201 || a.MAC != nil || b.Address != "198.18.6.1" || b.Port != 5202 || b.MAC.String() != "02:00:00:00:00:0b" {
		t.Errorf("stations: %+v %+v", a, b)
	}
	if !p.Steps[4].Sequential || p.Steps[1].Sequential {
		t.Error("concurrent: false not read")
	}
	one, err := Parse([]byte(goodPlan), "one.yaml")
	if err != nil || one.Multi() || len(one.Ports) != 1 || one.Ports[0].Interface != "eth0" || one.Ports[0].Station.Address != "198.18.5.1" {
		t.Errorf("interface: is one port: %+v %v", one.Ports, err)
	}
	base := "board: zc702\nstation:\n  address: 198.18.5.1\nsteps:\n  - {id: link, type: link}\n"
	for _, c := range []struct{ edit, want string }{
		{"interface: eth0\nports: [eth1]\n", "give interface: (one port) or ports:, not both"},
		{"ports: [eth0, eth0]\n", "ports: eth0 is given twice"},
		{"ports: []\n", "ports: want a list of 1..16 ports"},
		{"ports: [eth0/1]\n", `ports: interface "eth0/1": want an interface name`},
		{"ports: [averyveryverylongname]\n", "want an interface name"},
		{"ports:\n  - {interface: eth1, colour: red}\n", `ports: unknown key "colour"`},
		{"ports:\n  - {interface: eth1, station: {port: 70000}}\n", "ports: eth1: station.port 70000"},
		{"ports:\n  - {interface: eth1, station: {reflector_mac: nope}}\n", `ports: eth1: station.reflector_mac "nope"`},
		{"ports:\n  - {interface: eth1, station: {adress: x}}\n", "ports: station: field adress is not a key"},
		{"ports: [eth0, eth1]\nsteps:\n  - {id: l, type: loop, ports: [eth0, eth2], rate: 1000pps, max_loss_pct: 0}\n", "ports: eth2 is not a port of the plan"},
		{"ports: [eth0, eth1]\nsteps:\n  - {id: l, type: loop, ports: [eth0], rate: 1000pps, max_loss_pct: 0}\n", "loop step needs ports: [FROM, TO]"},
		{"ports: [eth0]\nsteps:\n  - {id: x, type: link, concurrent: maybe}\n", "concurrent: \"maybe\": want true"},
	} {
		in := c.edit + base
		if strings.Contains(c.edit, "steps:") {
			in = "board: zc702\nstation:\n  address: 198.18.5.1\n" + c.edit
		}
		if _, err := Parse([]byte(in), "p.yaml"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.edit, err, c.want)
		}
	}
	noStation := "board: zc702\nports:\n  - eth0\n  - {interface: eth1, station: {address: 198.18.6.1}}\nsteps:\n  - {id: t, type: iperf3, min_mbps: 1}\n"
	if _, err := Parse([]byte(noStation), "p.yaml"); err == nil || !strings.Contains(err.Error(), "give station.address (the plan's, or port eth0's)") {
		t.Errorf("a port without a station: %v", err)
	}
}

// Every step runs on every port, at once unless concurrent: false; a step of the board
// (tune, loop) runs once; the ids name the port; a port's failure is its own.
func TestRunnerPorts(t *testing.T) {
	p, err := Parse([]byte(portsPlan), "two.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var running, most atomic.Int32
	var console strings.Builder
	r := &Runner{Plan: p, Console: &console, Do: func(ctx context.Context, s *plan.Step, port int) (Outcome, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(50 * time.Millisecond)
		switch {
		case s.ID == "tcp-up" && port == 1:
			return Outcome{Summary: "TCP up 12 Mbit/s", Reason: "below 100"}, nil
		case s.ID == "slow" && port == 0:
			if running.Load() != 1 {
				return Outcome{}, errors.New("ran beside another port")
			}
		case port < 0 && s.ID != "tune" && s.ID != "loop":
			return Outcome{}, errors.New("a per-port step ran for the board")
		}
		return Outcome{Pass: true, Summary: "ok", Figures: map[string]float64{s.ID + "_x": float64(port)}}, nil
	}}
	d := r.Run(context.Background())
	res, failed := d.Steps, d.Failed
	var ids []string
	for _, x := range res {
		ids = append(ids, x.ID+"@"+x.Port)
	}
	if strings.Join(ids, " ") != "link.eth0@eth0 link.eth1@eth1 tcp-up.eth0@eth0 tcp-up.eth1@eth1 tune@ loop@eth0+eth1 slow.eth0@eth0 slow.eth1@eth1" {
		t.Errorf("results: %v", ids)
	}
	if strings.Join(failed, ",") != "tcp-up.eth1" || most.Load() != 2 {
		t.Errorf("failed %v, at most %d at once", failed, most.Load())
	}
	rep := &plan.Report{Board: "zc702", Serial: "S", MAC: "m", Steps: res, Failed: failed, Ports: []plan.PortReport{{Interface: "eth0"}, {Interface: "eth1"}}}
	rep.Judge()
	if got := rep.VerdictLine(); !strings.HasPrefix(got, "LINERATE FAIL board=zc702 serial=S mac=m eth0=PASS eth1=FAIL(tcp-up) ") {
		t.Errorf("verdict line: %s", got)
	}
	// A board step's failure is every port's it concerns.
	res[5].Pass = false
	rep.Judge()
	if rep.Ports[0].Verdict != "FAIL" || strings.Join(rep.Ports[1].Failed, ",") != "tcp-up,loop" {
		t.Errorf("ports %+v", rep.Ports)
	}
	if !strings.Contains(console.String(), "step 2/5 tcp-up.eth1 iperf3   FAIL  TCP up 12 Mbit/s: below 100") {
		t.Errorf("console:\n%s", console.String())
	}
}

// What steps found comes back in their outcomes and lands in each port's place of the
// report; what a step left to give back is given back after the last step, newest
// first, and a retried step's every attempt's.
func TestFoundAndUndo(t *testing.T) {
	p, err := Parse([]byte(portsPlan), "two.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	var mu sync.Mutex
	note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	r := &Runner{Plan: p, Do: func(ctx context.Context, s *plan.Step, port int) (Outcome, error) {
		o := Outcome{Pass: true, Summary: "ok"}
		switch {
		case s.ID == "link" && port >= 0:
			iface := p.Ports[port].Interface
			o.Found = Found{MAC: "02:00:00:00:00:0" + iface[3:], MACSource: "kernel " + iface, Doctor: []byte(`{"port":"` + iface + `"}`)}
			o.Figures = map[string]float64{"link." + iface + "_speed_mbps": 1000}
		case s.ID == "tune":
			o.Undo = func(io.Writer) { note("untune") }
		case s.ID == "loop":
			o.Undo = func(io.Writer) { note("unloop") }
		case s.ID == "slow":
			note("last step")
		}
		return o, nil
	}}
	d := r.Run(context.Background())
	if strings.Join(order, ",") != "last step,last step,unloop,untune" {
		t.Errorf("order %v", order)
	}
	rn := &run{Validation: &Validation{Plan: p, Root: t.TempDir()}}
	rep := &plan.Report{}
	rn.assemble(rep, d)
	if len(rep.Ports) != 2 {
		t.Fatalf("ports %+v", rep.Ports)
	}
	for i, iface := range []string{"eth0", "eth1"} {
		pr := rep.Ports[i]
		if pr.MAC != "02:00:00:00:00:0"+iface[3:] || pr.MACSource != "kernel "+iface || string(pr.Doctor) != `{"port":"`+iface+`"}` || pr.Figures["link."+iface+"_speed_mbps"] != 1000 || len(pr.Figures) != 1 {
			t.Errorf("port %s: %+v", iface, pr)
		}
	}
	if rep.MACSource != "kernel eth0" || rep.Doctor != nil {
		t.Errorf("the report's own: %q %s", rep.MACSource, rep.Doctor)
	}
	// A crash in the runner's own code still gives back what the steps left.
	order = nil
	r2 := &Runner{Plan: p, Do: func(ctx context.Context, s *plan.Step, port int) (Outcome, error) {
		if s.ID == "tune" {
			return Outcome{Pass: true, Found: Found{Undo: func(io.Writer) { note("untune") }}}, nil
		}
		return Outcome{Pass: true}, nil
	}, Started: func(i int, s *plan.Step) {
		if s.ID == "slow" {
			panic("the runner broke")
		}
	}}
	func() {
		defer func() { recover() }()
		r2.Run(context.Background())
	}()
	if strings.Join(order, ",") != "untune" {
		t.Errorf("after a crash: %v", order)
	}
}
