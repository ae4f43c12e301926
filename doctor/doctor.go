// Package doctor judges what holds an interface back, from two samples of the system
// (nic.Sample) some seconds apart, in the order the field guides troubleshoot: link,
// errors on the wire, driver, queues and IRQs, rings, coalescing, socket buffers and
// backlog, CPU power, PCIe, capture tools left running. Each finding carries the numbers
// read, why they matter, and the exact fix.
//
// Background: Documentation/networking/scaling.rst (RPS, RFS, XPS, IRQ affinity),
// Documentation/networking/napi.rst (napi_defer_hard_irqs, gro_flush_timeout, busy
// polling), Documentation/admin-guide/sysctl/net.rst (netdev_max_backlog, budgets).
package doctor

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/zynqnet/linerate/board"
	"github.com/zynqnet/linerate/nic"
)

// Severity of a finding.
type Severity string

// Severities, worst first.
const (
	Fail Severity = "fail"
	Warn Severity = "warn"
	Info Severity = "info"
)

// Groups in troubleshooting order.
var Groups = []string{"link", "errors", "driver", "queues and irqs", "rings", "coalescing", "buffers and backlog", "cpu power", "pcie", "capture"}

// Finding is one thing that holds an interface back, or that its user should know.
type Finding struct {
	ID       string         `json:"id"`
	Severity Severity       `json:"severity"`
	Group    string         `json:"group"`
	Evidence map[string]any `json:"evidence"`
	Why      string         `json:"why"`
	Fix      string         `json:"fix"`
}

// Interface is the verdict on one interface.
type Interface struct {
	Name     string    `json:"name"`
	Driver   string    `json:"driver"`
	Board    string    `json:"board,omitempty"`
	Findings []Finding `json:"findings"`
}

// Report is doctor's whole answer.
type Report struct {
	Profile    string      `json:"profile"`
	IntervalS  float64     `json:"interval_s"`
	Interfaces []Interface `json:"interfaces"`
}

// Failed reports whether any finding is a fail.
func (r *Report) Failed() bool {
	for _, i := range r.Interfaces {
		for _, f := range i.Findings {
			if f.Severity == Fail {
				return true
			}
		}
	}
	return false
}

// Profiles doctor judges against.
const (
	Throughput = "throughput"
	Latency    = "latency"
)

// Input is what Diagnose judges.
type Input struct {
	Before, After *nic.Sample
	Interval      time.Duration
	Profile       string
	// Board, when set, is taken as the board the interfaces belong to; otherwise it is
	// detected from the device tree and applies to macb interfaces only.
	Board *board.Board
}

// Diagnose applies every rule to every interface of After.
func Diagnose(in Input) (*Report, error) {
	if in.Before == nil || in.After == nil {
		return nil, fmt.Errorf("doctor needs two samples")
	}
	switch in.Profile {
	case "":
		in.Profile = Throughput
	case Throughput, Latency:
	default:
		return nil, fmt.Errorf("profile %q: want %s or %s", in.Profile, Throughput, Latency)
	}
	rep := &Report{Profile: in.Profile, IntervalS: in.Interval.Seconds()}
	before := map[string]*nic.Interface{}
	for _, i := range in.Before.Interfaces {
		before[i.Name] = i
	}
	for _, a := range in.After.Interfaces {
		b := before[a.Name]
		if b == nil {
			b = a
		}
		c := &check{in: in, a: a, b: b}
		c.board = in.Board
		if c.board == nil && a.Platform.DeviceTree != nil && c.driver() == "macb" {
			c.board = board.Detect(a.Platform.DeviceTree.Compatible)
		}
		for _, r := range rules {
			r(c)
		}
		sort.SliceStable(c.out, func(i, j int) bool { return groupIndex(c.out[i].Group) < groupIndex(c.out[j].Group) })
		ir := Interface{Name: a.Name, Driver: c.driver(), Findings: c.out}
		if ir.Findings == nil {
			ir.Findings = []Finding{}
		}
		if c.board != nil {
			ir.Board = c.board.Name
		}
		rep.Interfaces = append(rep.Interfaces, ir)
	}
	return rep, nil
}

func groupIndex(g string) int {
	for i, x := range Groups {
		if x == g {
			return i
		}
	}
	return len(Groups)
}

// check is the state of judging one interface.
type check struct {
	in    Input
	a, b  *nic.Interface // after, before
	board *board.Board
	out   []Finding
}

func (c *check) add(id string, sev Severity, group string, ev map[string]any, why, fix string) {
	c.out = append(c.out, Finding{ID: id, Severity: sev, Group: group, Evidence: ev, Why: why, Fix: fix})
}

func (c *check) driver() string {
	if c.a.Driver != nil {
		return c.a.Driver.Name
	}
	return ""
}

func (c *check) cpus() int { return c.a.Platform.CPUs }

// delta is how much a counter rose; a counter that went back (reset, wrap) counts from 0.
func delta(after, before uint64) uint64 {
	if after < before {
		return after
	}
	return after - before
}

// rising lists the named counters that rose, link counters by their JSON name and
// driver counters by theirs.
type counterDelta struct {
	name  string
	delta uint64
}

func (c *check) driverDeltas(match func(string) bool) []counterDelta {
	var out []counterDelta
	for _, ca := range c.a.Stats.Driver {
		if !match(ca.Name) {
			continue
		}
		cb, _ := c.b.Stats.Driver.Get(ca.Name)
		if d := delta(ca.Value, cb); d > 0 {
			out = append(out, counterDelta{ca.Name, d})
		}
	}
	return out
}

func evidenceOf(ds []counterDelta, interval time.Duration) map[string]any {
	ev := map[string]any{"interval_s": interval.Seconds()}
	for _, d := range ds {
		ev[d.name] = d.delta
	}
	return ev
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}
