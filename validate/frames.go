package validate

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/zynqnet/linerate/netperf/engine"
	"github.com/zynqnet/linerate/netperf/frames"
	"github.com/zynqnet/linerate/netperf/rfc2544"
	"github.com/zynqnet/linerate/plan"
)

// Frames sends test frames through the station's reflector and counts them back: loss
// and round-trip p99 at a rate, or with min_throughput_pct an RFC 2544 throughput search.
type Frames struct {
	Size                  int           `yaml:"size" json:"size,omitempty" doc:"frame size with FCS, 64..9018" unit:"bytes" default:"512"`
	Rate                  string        `yaml:"rate" json:"rate,omitempty" doc:"10%, 50Mbit or 5000pps (required without min_throughput_pct)"`
	Duration              plan.Duration `yaml:"duration" json:"duration,omitempty" doc:"how long frames are sent" default:"5s"`
	MaxLossPct            *float64      `yaml:"max_loss_pct" json:"max_loss_pct,omitempty" doc:"the most loss that passes" unit:"%"`
	MaxP99US              *float64      `yaml:"max_p99_us" json:"max_p99_us,omitempty" doc:"the highest round-trip p99 latency that passes" unit:"µs"`
	MarginalLossPct       *float64      `yaml:"marginal_loss_pct" json:"marginal_loss_pct,omitempty" doc:"the edge of max_loss_pct's marginal band: from it up to max_loss_pct passes as marginal" unit:"%"`
	MarginalP99US         *float64      `yaml:"marginal_p99_us" json:"marginal_p99_us,omitempty" doc:"the edge of max_p99_us's marginal band: from it up to max_p99_us passes as marginal" unit:"µs"`
	MarginalThroughputPct *float64      `yaml:"marginal_throughput_pct" json:"marginal_throughput_pct,omitempty" doc:"the edge of min_throughput_pct's marginal band: from min_throughput_pct up to it passes as marginal" unit:"%"`
	MinThroughputPct      *float64      `yaml:"min_throughput_pct" json:"min_throughput_pct,omitempty" doc:"run the RFC 2544 throughput search instead; the least share of line rate that passes" unit:"%"` // RFC 2544 throughput instead
	// CPUs: senders and receive rings, as gen's --cpus (a count or all); empty: one
	CPUs string `yaml:"cpus" json:"cpus,omitempty" doc:"senders and receive rings, as gen's --cpus: a count or all (none: one, not pinned)"`
	// HWTimestamps: latency from the NIC's hardware stamps where the port has them
	HWTimestamps bool `yaml:"hw_timestamps" json:"hw_timestamps,omitempty" doc:"take the latency from the NIC's hardware stamps where the port has them" default:"false"`

	rate frames.Rate
	cpus int
}

// Check defaults 512-byte frames for 5 s and needs a rate and a threshold, or
// min_throughput_pct.
func (s *Frames) Check(p *plan.Plan) error {
	if err := needStation(p); err != nil {
		return err
	}
	if s.Size == 0 {
		s.Size = 512
	}
	if err := checkDuration(&s.Duration, 5*time.Second, 0); err != nil {
		return err
	}
	if s.MinThroughputPct == nil {
		if s.Rate == "" {
			return fmt.Errorf("frames step needs a rate (10%%, 50Mbit, 5000pps), or min_throughput_pct for an RFC 2544 search")
		}
		if s.MaxLossPct == nil && s.MaxP99US == nil {
			return fmt.Errorf("frames step needs a threshold: max_loss_pct and/or max_p99_us")
		}
	}
	if err := checkThresholds(map[string]*float64{"max_loss_pct": s.MaxLossPct, "max_p99_us": s.MaxP99US, "min_throughput_pct": s.MinThroughputPct,
		"marginal_loss_pct": s.MarginalLossPct, "marginal_p99_us": s.MarginalP99US, "marginal_throughput_pct": s.MarginalThroughputPct}); err != nil {
		return err
	}
	search := s.MinThroughputPct != nil
	if err := checkBands(s.Limits(), map[string]bool{"marginal_loss_pct": s.MarginalLossPct != nil && (s.MaxLossPct == nil || search),
		"marginal_p99_us": s.MarginalP99US != nil && (s.MaxP99US == nil || search), "marginal_throughput_pct": s.MarginalThroughputPct != nil && !search}); err != nil {
		return err
	}
	var err error
	s.rate, s.cpus, err = checkFrames(s.Size, s.Rate, s.CPUs)
	return err
}

// checkFrames checks a frame size, a rate ("" for none) and a CPU count as the engine
// takes them (frames and sweep steps).
func checkFrames(size int, rate, cpus string) (frames.Rate, int, error) {
	var r frames.Rate
	if size < frames.MinSize || size > frames.MaxSize {
		return r, 0, fmt.Errorf("size %d: want a frame size of %d..%d bytes with FCS", size, frames.MinSize, frames.MaxSize)
	}
	if rate != "" {
		var err error
		if r, err = frames.ParseRate(rate); err != nil {
			return r, 0, err
		}
	}
	n, err := engine.ParseCPUs("cpus", cpus)
	return r, n, err
}

// Timeout: the trial and its set-up; an RFC 2544 search takes up to 20 trials.
func (s *Frames) Timeout() time.Duration {
	if s.MinThroughputPct != nil {
		return 20*s.Duration.D() + 30*time.Second
	}
	return s.Duration.D() + 30*time.Second
}

// Run sends through the reflector at the step's rate (loss, latency), or searches the
// RFC 2544 throughput.
func (s *Frames) Run(ctx context.Context, e Env) (Outcome, error) {
	peer, err := e.reflectorMAC(ctx)
	if err != nil {
		return Outcome{}, err
	}
	p, err := engine.LookupPort(e.Root, e.Iface, 0)
	if err != nil {
		return Outcome{}, err
	}
	return s.measure(ctx, e, p, engine.TrialerConfig{Dst: peer, RXPort: p.Name, Kind: "round-trip", HWStamps: s.HWTimestamps})
}

// measure runs the step's trial (or throughput search) from port p with tc's
// destination, receiving port and kind, and judges it.
func (s *Frames) measure(ctx context.Context, e Env, p *engine.Port, tc engine.TrialerConfig) (Outcome, error) {
	if err := p.CheckSizes([]int{s.Size}, false); err != nil {
		return Outcome{}, err
	}
	tc.Root, tc.Port, tc.MaxLen, tc.CPUs = e.Root, p, s.Size-frames.FCS, s.cpus
	var fps float64
	if s.MinThroughputPct == nil {
		var err error
		if fps, err = s.rate.FPS(p.LinkMbps, float64(s.Size)); err != nil {
			return Outcome{}, err
		}
		tc.MaxFPS = fps // the rings for the step's rate (a throughput search's: line rate)
	}
	t, err := engine.OpenTrialer(tc)
	if err != nil {
		return Outcome{}, err
	}
	defer t.CloseBehind(e.behind)
	var w windows
	tt := timedTrialer{t, &w}
	if s.MinThroughputPct != nil {
		rs, err := rfc2544.Run(ctx, tt, rfc2544.Config{Sizes: []int{s.Size}, Trial: s.Duration.D(), Res: 1, Tests: []string{"throughput"}, LinkMbps: p.LinkMbps})
		if err != nil {
			return Outcome{}, err
		}
		o := s.JudgeThroughput(e.ID, rs[0])
		o.Window = w.total()
		return o, nil
	}
	res, err := tt.Trial(ctx, s.Size, fps, s.Duration.D(), 0)
	if err != nil {
		return Outcome{}, err
	}
	o := s.Judge(e.ID, res)
	o.Window = w.total()
	if tc.Kind == "one-way" {
		o.Summary = strings.Replace(o.Summary, "through the reflector", "from "+p.Name+" to "+tc.RXPort, 1)
		o.Summary = strings.Replace(o.Summary, "round trip", "one way", 1)
	}
	return o, nil
}

// JudgeThroughput: an RFC 2544 throughput search's result against min_throughput_pct.
func (s *Frames) JudgeThroughput(id string, r rfc2544.SizeResult) Outcome {
	var pct, fps float64
	if r.Throughput != nil {
		pct, fps = r.Throughput.Percent, r.Throughput.FPS
	}
	o := Outcome{Pass: pct >= deref(s.MinThroughputPct), Measured: map[string]float64{"throughput_pct": pct, "throughput_fps": fps},
		Figures: map[string]float64{id + "_throughput_pct": pct}, Detail: r}
	o.Summary = fmt.Sprintf("RFC 2544 throughput at %d bytes: %.2f%% of line rate, %.0f fps (want >= %g%%)", s.Size, pct, fps, deref(s.MinThroughputPct))
	if !o.Pass {
		o.Reason = fmt.Sprintf("throughput %.2f%% below %g%%", pct, deref(s.MinThroughputPct))
	}
	return o
}

// Judge: frames through the reflector, loss against max_loss_pct and the round-trip p99
// against max_p99_us.
//
// Frames the station's reflector dropped itself (its drop reports) are the station's,
// not the board's: they are reported, and left out of the loss judged.
func (s *Frames) Judge(id string, r frames.Result) Outcome {
	board := r
	board.SenderDrops = 0 // the board's own driver refusing frames is the board's loss
	loss := board.PathLossPct()
	o := Outcome{Pass: true, Measured: map[string]float64{"sent": float64(r.Sent), "received": float64(r.Received), "loss_pct": loss, "pps": r.PPS,
		"reflector_drops": float64(r.ReflectorDrops), "sender_drops": float64(r.SenderDrops)},
		Figures: map[string]float64{id + "_loss_pct": loss}, Detail: r}
	o.Summary = fmt.Sprintf("%d-byte frames at %s through the reflector: %d of %d back, loss %.3f%%", s.Size, s.Rate, r.Received, r.Sent, loss)
	if r.ReflectorDrops > 0 {
		o.Summary += fmt.Sprintf(" (%d more dropped by the station's reflector, not counted)", r.ReflectorDrops)
	}
	if s.MaxLossPct != nil {
		o.Summary += fmt.Sprintf(" (want <= %g%%)", *s.MaxLossPct)
		if loss > *s.MaxLossPct {
			o.Pass, o.Reason = false, fmt.Sprintf("loss %.3f%% above %g%%", loss, *s.MaxLossPct)
		}
	}
	if s.MaxP99US != nil {
		if r.Latency == nil {
			o.Pass, o.Reason = false, "no frame came back: no latency"
			return o
		}
		p99 := float64(r.Latency.P99) / 1e3
		o.Measured["p99_us"] = p99
		o.Figures[id+"_p99_us"] = p99
		o.Summary += fmt.Sprintf(", p99 %.0fus round trip (want <= %g)", p99, *s.MaxP99US)
		if r.LatencyClock == "hardware" {
			o.Summary += ", hardware stamps"
		}
		if p99 > *s.MaxP99US {
			o.Pass, o.Reason = false, fmt.Sprintf("p99 latency %.0fus above %gus", p99, *s.MaxP99US)
		}
	}
	if r.HWNote != "" {
		o.Summary += "; hardware timestamps: " + r.HWNote
	}
	return o
}
