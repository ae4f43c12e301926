package validate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zynqnet/linerate/experiment"
	"github.com/zynqnet/linerate/plan"
)

// Link waits for carrier and checks the link's speed and duplex.
type Link struct {
	CarrierWithin plan.Duration `yaml:"carrier_within" json:"carrier_within,omitempty" doc:"how long to wait for carrier" default:"10s"`
	SpeedMbps     int           `yaml:"speed_mbps" json:"speed_mbps,omitempty" doc:"the link speed the port must come up at (none: any)" unit:"Mbit/s"`
	Duplex        string        `yaml:"duplex" json:"duplex,omitempty" doc:"full or half (none: any)"`
	// Speeds is a speed matrix: the PHY advertises one speed at a time, the link must
	// come up at it and carry frames (with a station), and the advertisement is given
	// back exactly.
	Speeds []int `yaml:"speeds" json:"speeds,omitempty" doc:"a speed matrix: each BASE-T speed advertised alone in turn, the link awaited at it and a second of frames sent through the reflector; the advertisement given back" unit:"Mbit/s"`
}

// Check defaults carrier_within to 10s and checks the speed and duplex asked for.
func (s *Link) Check(p *plan.Plan) error {
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
	for _, sp := range s.Speeds {
		if !slices.Contains([]int{10, 100, 1000, 2500, 5000, 10000}, sp) {
			return fmt.Errorf("speeds: %d is not a BASE-T speed (10, 100, 1000, 2500, 5000, 10000)", sp)
		}
	}
	return nil
}

// Timeout: the wait for carrier, and per speed of a matrix two waits and a second of
// frames.
func (s *Link) Timeout() time.Duration {
	return s.CarrierWithin.D() + 5*time.Second + time.Duration(len(s.Speeds))*(2*s.CarrierWithin.D()+15*time.Second)
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
	m := LinkMeasurement{Carrier: true, After: time.Since(start), SpeedMbps: speed, Duplex: e.sysfs("duplex"), Operstate: e.sysfs("operstate")}
	if len(s.Speeds) > 0 {
		mx := experiment.SpeedMatrix{Iface: e.Iface, StateDir: e.StateDir, Speeds: s.Speeds, Duplex: s.Duplex, Wait: s.CarrierWithin.D(), Measure: func(ctx context.Context) (string, error) {
			return e.speedFrames(ctx, e.Station.Address != "")
		}}
		m.Matrix, m.MatrixErr = mx.Run(ctx)
	}
	o := s.Judge(m)
	if e.Multi && o.Figures != nil {
		// Each port's speed, by the step's id with the port's interface.
		o.Figures = map[string]float64{e.ID + "_speed_mbps": o.Figures["speed_mbps"]}
	}
	return o, nil
}

// speedFrames is a speed matrix's measurement: a second of frames through the station's
// reflector (nothing without a station).
func (e Env) speedFrames(ctx context.Context, station bool) (string, error) {
	if !station {
		return "no station: the link's speed only", nil
	}
	f := &Frames{Size: 512, Rate: "1000pps", Duration: plan.Duration(time.Second), MaxLossPct: new(float64)}
	if err := f.Check(&plan.Plan{Station: e.Station}); err != nil {
		return "", err
	}
	o, err := f.Run(ctx, e)
	if err != nil {
		return "", err
	}
	if !o.Pass {
		return o.Summary, errors.New(o.Reason)
	}
	return o.Summary, nil
}

// LinkMeasurement is what the link step read.
type LinkMeasurement struct {
	Carrier   bool
	After     time.Duration // until carrier, or how long it waited for none
	SpeedMbps int
	Duplex    string
	Operstate string
	// Matrix is each speed of a speed matrix; MatrixErr why there is none.
	Matrix    []experiment.SpeedPoint
	MatrixErr error
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
	if len(s.Speeds) > 0 {
		s.judgeMatrix(m, &o)
	}
	return o
}

// judgeMatrix: every speed came up as advertised, carried its frames, and the
// advertisement was given back.
func (s *Link) judgeMatrix(m LinkMeasurement, o *Outcome) {
	o.Detail = m.Matrix
	var done, bad []string
	for _, p := range m.Matrix {
		done = append(done, fmt.Sprintf("%d->%s", p.Want, mbps(p.Got)))
		if p.Error != "" {
			bad = append(bad, fmt.Sprintf("%d Mbit/s: %s", p.Want, p.Error))
		}
		if !p.Restored {
			bad = append(bad, fmt.Sprintf("%d Mbit/s: the advertisement was not given back: run 'linerate revert'", p.Want))
		}
	}
	if m.MatrixErr != nil {
		bad = append(bad, "speed matrix: "+m.MatrixErr.Error())
	}
	o.Summary += "; speeds " + orDash(strings.Join(done, " "))
	if len(bad) > 0 && o.Pass {
		o.Pass, o.Reason = false, strings.Join(bad, "; ")
	} else if len(bad) > 0 {
		o.Reason += "; " + strings.Join(bad, "; ")
	}
}

func mbps(n int) string {
	if n <= 0 {
		return "no link"
	}
	return strconv.Itoa(n)
}
