package validate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zynqnet/linerate/netperf/engine"
	"github.com/zynqnet/linerate/netperf/frames"
	"github.com/zynqnet/linerate/netperf/iperf3"
	"github.com/zynqnet/linerate/nic"
	"github.com/zynqnet/linerate/plan"
	"github.com/zynqnet/linerate/tune"
)

// Stability watches the port's link while traffic runs for the step's duration (frames
// through the station's reflector by default, TCP to its iperf3 server, or none): any
// carrier loss, speed or duplex change or error counter rise fails it, with its time. A
// change linerate itself made (a tune bouncing the link for a ring change) does not.
type Stability struct {
	Duration plan.Duration `yaml:"duration" json:"duration,omitempty" doc:"how long the link is watched" default:"10s"`
	Traffic  string        `yaml:"traffic" json:"traffic,omitempty" doc:"what runs meanwhile: frames through the reflector, tcp to the iperf3 server, or none" default:"frames"` // frames, tcp or none
	Size     int           `yaml:"size" json:"size,omitempty" doc:"the frames' size with FCS" unit:"bytes" default:"512"`
	Rate     string        `yaml:"rate" json:"rate,omitempty" doc:"the frames' rate" default:"1000pps"`
	Ignore   []string      `yaml:"ignore" json:"ignore,omitempty" doc:"error counters that may rise"` // error counters that may rise

	rate frames.Rate
}

// Check defaults 10 s of 512-byte frames at 1000 a second.
func (s *Stability) Check(p *plan.Plan) error {
	if err := checkDuration(&s.Duration, 10*time.Second, time.Second); err != nil {
		return err
	}
	if s.Traffic == "" {
		s.Traffic = "frames"
	}
	switch s.Traffic {
	case "frames", "tcp":
		if err := needStation(p); err != nil {
			return err
		}
	case "none":
	default:
		return fmt.Errorf("traffic %q: want frames, tcp or none", s.Traffic)
	}
	if s.Size == 0 {
		s.Size = 512
	}
	if s.Rate == "" {
		s.Rate = "1000pps"
	}
	if err := (&Counters{Ignore: s.Ignore}).Check(p); err != nil {
		return err
	}
	var err error
	s.rate, _, err = checkFrames(s.Size, s.Rate, "")
	return err
}

// stabilityGrace is how long TCP traffic may take beyond the step's duration (the
// connection, a busy station's turn, the results) before the step calls it stalled.
const stabilityGrace = 20 * time.Second

// Timeout: the watch and the traffic's set-up.
func (s *Stability) Timeout() time.Duration { return s.Duration.D() + 30*time.Second }

// StabilityMeasurement is what the watch saw, and the traffic that ran meanwhile.
type StabilityMeasurement struct {
	Watch   *nic.WatchSummary `json:"watch"`
	Traffic string            `json:"traffic"`
}

// Run watches the link and runs the traffic for the duration.
func (s *Stability) Run(ctx context.Context, e Env) (Outcome, error) {
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	w := nic.Watcher{Iface: e.Iface, API: e.API, Interval: time.Second, Excuse: tune.Excuse(e.Iface)}
	var sum *nic.WatchSummary
	var werr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sum, werr = w.Watch(wctx, func(ev nic.LinkEvent) { fmt.Fprintln(e.Console, "  "+ev.String()) })
	}()
	start := time.Now()
	traffic, terr := s.traffic(ctx, e)
	stop()
	wg.Wait()
	if werr != nil {
		return Outcome{}, werr
	}
	if ctx.Err() != nil && (sum == nil || len(sum.Faults()) == 0) {
		// The step's timeout or the plan's budget ended it: a link watched for less
		// than the step's duration proves nothing.
		return Outcome{}, fmt.Errorf("cut short after %.1fs of the %v watch: %w", time.Since(start).Seconds(), s.Duration.D(), context.Cause(ctx))
	}
	if terr != nil && ctx.Err() == nil && len(sum.Faults()) == 0 {
		return Outcome{}, terr
	}
	return s.Judge(StabilityMeasurement{Watch: sum, Traffic: traffic}), nil
}

// traffic runs the step's traffic for its duration and says what it did.
func (s *Stability) traffic(ctx context.Context, e Env) (string, error) {
	d := s.Duration.D()
	switch s.Traffic {
	case "tcp":
		c := &iperf3.Client{Host: e.Station.Address, Port: e.Station.Port, Version: e.Version, ConnectTimeout: 5 * time.Second,
			Params: iperf3.Params{Time: int(d.Seconds())}}
		// A test whose path stops carrying frames waits for results that never come:
		// bounded here, so the step says so well inside its own timeout.
		stalled := fmt.Errorf("no results %v after the %v test began: the station stopped answering", d+stabilityGrace, d)
		tctx, cancel := context.WithTimeoutCause(ctx, d+stabilityGrace, stalled)
		defer cancel()
		rep, err := c.RunWhenFree(tctx)
		if err != nil {
			if context.Cause(tctx) == stalled && ctx.Err() == nil {
				err = stalled
			}
			return "", fmt.Errorf("iperf3 to the station: %w", err)
		}
		return fmt.Sprintf("TCP up %.1f Mbit/s", rep.End.Received().BitsPerSecond/1e6), nil
	case "frames":
		peer, err := e.reflectorMAC(ctx)
		if err != nil {
			return "", err
		}
		p, err := engine.LookupPort(e.Root, e.Iface, 0)
		if err != nil {
			return "", err
		}
		t, err := engine.OpenTrialer(engine.TrialerConfig{Root: e.Root, Port: p, Dst: peer, RXPort: p.Name, MaxLen: s.Size - frames.FCS, Kind: "round-trip"})
		if err != nil {
			return "", err
		}
		defer t.Close()
		fps, err := s.rate.FPS(p.LinkMbps, float64(s.Size))
		if err != nil {
			return "", err
		}
		r, err := t.Trial(ctx, s.Size, fps, d, 0)
		return fmt.Sprintf("%d of %d frames back through the reflector", r.Received, r.Sent), err
	}
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
	return "no traffic", nil
}

// Judge: no link event of the port's own and no error counter rise but those ignored.
func (s *Stability) Judge(m StabilityMeasurement) Outcome {
	w := m.Watch
	var faults []string
	for _, ev := range w.Faults() {
		if f := strings.Fields(strings.TrimPrefix(ev.Detail, w.Iface+" ")); ev.Kind == "counter" && len(f) > 0 && slices.Contains(s.Ignore, f[0]) {
			continue
		}
		faults = append(faults, ev.String())
	}
	o := Outcome{Pass: len(faults) == 0, Detail: m,
		Measured: map[string]float64{"carrier_downs": float64(w.Downs), "down_s": w.DownS, "events": float64(len(faults))}}
	o.Summary = fmt.Sprintf("%.0fs watched with %s: %d link event(s), %d carrier loss(es)", w.Seconds, m.Traffic, len(faults), w.Downs)
	if !o.Pass {
		o.Reason = "the link was not stable: " + strings.Join(faults, "; ")
	}
	return o
}
