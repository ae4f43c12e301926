package validate

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/zynqnet/linerate/nic"
	"github.com/zynqnet/linerate/plan"
)

// Link waits for carrier and checks the link's speed and duplex.
type Link struct {
	CarrierWithin plan.Duration `yaml:"carrier_within" json:"carrier_within,omitempty"`
	SpeedMbps     int           `yaml:"speed_mbps" json:"speed_mbps,omitempty"`
	Duplex        string        `yaml:"duplex" json:"duplex,omitempty"`
}

// Check defaults carrier_within to 10s and checks the speed and duplex asked for.
func (s *Link) Check(*plan.Plan) error {
	if s.CarrierWithin == 0 {
		s.CarrierWithin = plan.Duration(10 * time.Second)
	}
	if s.CarrierWithin.D() > 10*time.Minute {
		return fmt.Errorf("carrier_within %v: want at most 10m0s", s.CarrierWithin.D())
	}
	if s.Duplex != "" && s.Duplex != "full" && s.Duplex != "half" {
		return fmt.Errorf("duplex %q: want full or half", s.Duplex)
	}
	if s.SpeedMbps < 0 || s.SpeedMbps > 400000 {
		return fmt.Errorf("speed_mbps %d: want a link speed up to 400000", s.SpeedMbps)
	}
	return nil
}

// Timeout: the wait for carrier and a little more.
func (s *Link) Timeout() time.Duration { return s.CarrierWithin.D() + 5*time.Second }

// sysfs reads one of the port's /sys/class/net files ("" when it cannot).
func (e Env) sysfs(name string) string {
	v, _ := nic.ReadFile(e.Root, filepath.Join("sys/class/net", e.Iface, name))
	return v
}

// Run polls the carrier until it is up or carrier_within has passed.
func (s *Link) Run(ctx context.Context, e Env) (Outcome, error) {
	start := time.Now()
	deadline := start.Add(s.CarrierWithin.D())
	for e.sysfs("carrier") != "1" {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return s.Judge(LinkMeasurement{After: time.Since(start), Operstate: e.sysfs("operstate")}), nil
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	speed, _ := strconv.Atoi(e.sysfs("speed"))
	return s.Judge(LinkMeasurement{Carrier: true, After: time.Since(start), SpeedMbps: speed, Duplex: e.sysfs("duplex"), Operstate: e.sysfs("operstate")}), nil
}

// LinkMeasurement is what the link step read.
type LinkMeasurement struct {
	Carrier   bool
	After     time.Duration // until carrier, or how long it waited for none
	SpeedMbps int
	Duplex    string
	Operstate string
}

// Judge: carrier within the step's time, at its speed and duplex.
func (s *Link) Judge(m LinkMeasurement) Outcome {
	if !m.Carrier {
		return Outcome{Summary: fmt.Sprintf("no carrier within %v (operstate %s)", s.CarrierWithin.D(), orDash(m.Operstate)),
			Reason: "no link: check the cable and the switch port"}
	}
	o := Outcome{Pass: true, Measured: map[string]float64{"carrier_s": m.After.Seconds(), "speed_mbps": float64(m.SpeedMbps)},
		Figures: map[string]float64{"speed_mbps": float64(m.SpeedMbps)}}
	o.Summary = fmt.Sprintf("carrier after %.1fs, %d Mbit/s %s", m.After.Seconds(), m.SpeedMbps, orDash(m.Duplex))
	var want []string
	if s.SpeedMbps > 0 {
		want = append(want, fmt.Sprintf("%d Mbit/s", s.SpeedMbps))
		if m.SpeedMbps != s.SpeedMbps {
			o.Pass, o.Reason = false, fmt.Sprintf("link at %d Mbit/s, want %d (cable, PHY or autonegotiation)", m.SpeedMbps, s.SpeedMbps)
		}
	}
	if s.Duplex != "" {
		want = append(want, s.Duplex)
		if m.Duplex != s.Duplex {
			o.Pass, o.Reason = false, fmt.Sprintf("%s duplex, want %s", orDash(m.Duplex), s.Duplex)
		}
	}
	if len(want) > 0 {
		o.Summary += " (want " + strings.Join(want, " ") + ")"
	}
	return o
}
