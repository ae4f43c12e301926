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

// Stability judges the port's link: for its window it runs traffic (frames through the
// station's reflector by default, TCP to its iperf3 server, or none) while the link is
// watched, and any carrier loss, speed or duplex change or error counter rise fails it,
// with its time. With window 0s it has no window of its own: it judges the link as the
// run's link watch saw it from the end of the link step (or the run's start) to this
// step, the steps' own traffic its load. A change linerate itself made (a tune bouncing
// the link for a ring change) does not count.
type Stability struct {
	Window *plan.Window `yaml:"window" json:"window,omitempty" doc:"how long the step watches the link with its traffic; 0s: no window of its own, the link as the run's watch saw it through the steps before this one" default:"10s"`
	// Duration is the window's former name, still read.
	Duration plan.Duration `yaml:"duration" json:"duration,omitempty" doc:"the window's former name (give one of them)"`
	Traffic  string        `yaml:"traffic" json:"traffic,omitempty" doc:"what runs meanwhile: frames through the reflector, tcp to the iperf3 server, or none" default:"frames"` // frames, tcp or none
	Size     int           `yaml:"size" json:"size,omitempty" doc:"the frames' size with FCS" unit:"bytes" default:"512"`
	Rate     string        `yaml:"rate" json:"rate,omitempty" doc:"the frames' rate" default:"1000pps"`
	Ignore   []string      `yaml:"ignore" json:"ignore,omitempty" doc:"error counters that may rise"` // error counters that may rise

	rate frames.Rate
}

// Check defaults a window of 10 s of 512-byte frames at 1000 a second.
func (s *Stability) Check(p *plan.Plan) error {
	switch {
	case s.Window != nil && s.Duration != 0 && s.Window.Duration != s.Duration:
		return fmt.Errorf("window %v and duration %v: give the window only (duration is its former name)", s.Window.D(), s.Duration.D())
	case s.Window == nil:
		d := s.Duration
		if err := checkDuration(&d, 10*time.Second, time.Second); err != nil {
			return err
		}
		s.Window = &plan.Window{Duration: d}
	case s.Window.Duration != 0:
		if err := checkDuration(&s.Window.Duration, 10*time.Second, time.Second); err != nil {
			return err
		}
	}
	s.Duration = s.Window.Duration
	if s.Traffic == "" {
		s.Traffic = "frames"
	}
	switch s.Traffic {
	case "frames", "tcp":
		if err := needStation(p); err != nil && s.window() > 0 {
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

// window is the step's own window (0: none).
func (s *Stability) window() time.Duration {
	if s.Window == nil {
		return s.Duration.D()
	}
	return s.Window.D()
}

// stabilityGrace is how long TCP traffic may take beyond the step's duration (the
// connection, a busy station's turn, the results) before the step calls it stalled.
const stabilityGrace = 20 * time.Second

// Timeout: the watch and the traffic's set-up.
func (s *Stability) Timeout() time.Duration { return s.window() + 30*time.Second }

// StabilityMeasurement is what the watch saw, and the traffic that ran meanwhile.
type StabilityMeasurement struct {
	Watch   *nic.WatchSummary `json:"watch"`
	Traffic string            `json:"traffic"`
}

// Run runs the traffic for the window and judges what the run's link watch saw of it
// (a watcher of its own where the run has none); with no window, what the run's watch
// saw so far.
func (s *Stability) Run(ctx context.Context, e Env) (Outcome, error) {
	if s.window() == 0 {
		if !e.link.Watching(e.Iface) {
			return Outcome{}, fmt.Errorf("window 0s judges the run's link watch, which does not watch %s here: give the step a window", e.Iface)
		}
		from := e.link.Settled(e.Iface)
		sum := e.link.Summary(e.Iface, from, time.Now())
		return s.Judge(StabilityMeasurement{Watch: sum, Traffic: "the run's steps"}), nil
	}
	if e.link.Watching(e.Iface) {
		start := time.Now()
		traffic, terr := s.traffic(ctx, e)
		sum := e.link.Summary(e.Iface, start, time.Now())
		return s.judged(ctx, e, start, sum, traffic, terr)
	}
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
	return s.judged(ctx, e, start, sum, traffic, terr)
}

// judged is the step's outcome from the watch of its window and its traffic's.
func (s *Stability) judged(ctx context.Context, e Env, start time.Time, sum *nic.WatchSummary, traffic string, terr error) (Outcome, error) {
	if ctx.Err() != nil && (sum == nil || len(sum.Faults()) == 0) {
		// The step's timeout or the plan's budget ended it: a link watched for less
		// than the step's duration proves nothing.
		return Outcome{}, fmt.Errorf("cut short after %.1fs of the %v watch: %w", time.Since(start).Seconds(), s.window(), context.Cause(ctx))
	}
	if terr != nil && ctx.Err() == nil && len(sum.Faults()) == 0 {
		return Outcome{}, terr
	}
	if terr != nil {
		// The link's faults judge the step; what became of its traffic is said with them
		// (a flap mid-test stalls TCP).
		if traffic == "" {
			traffic = "traffic that stopped"
		}
		traffic += " (" + terr.Error() + ")"
	}
	o := s.Judge(StabilityMeasurement{Watch: sum, Traffic: traffic})
	o.Window = time.Duration(sum.Seconds * float64(time.Second))
	return o, nil
}

// traffic runs the step's traffic for its duration and says what it did.
func (s *Stability) traffic(ctx context.Context, e Env) (string, error) {
	d := s.window()
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
