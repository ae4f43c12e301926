package validate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zynqnet/linerate/curve"
	"github.com/zynqnet/linerate/experiment"
	"github.com/zynqnet/linerate/netperf/frames"
	"github.com/zynqnet/linerate/plan"
	"github.com/zynqnet/linerate/tune"
)

// Sweep measures the port at each value of one tune knob (as linerate sweep's --values),
// each point by tcp (iperf3 to the station, in Direction) and/or frames (through its
// reflector, at Size and Rate), Repeat times, and gives the knob back at the end. The
// curve goes into the report; the station draws it.
type Sweep struct {
	Knob      string        `yaml:"knob" json:"knob,omitempty" doc:"the tune knob swept (rings.rx, coalesce.usecs, ...) (required)"`
	Values    string        `yaml:"values" json:"values,omitempty" doc:"its values: V1,V2,... (V1;V2;... when a value holds commas) or A..B, doubling from A (required)"`
	Measure   []string      `yaml:"measure" json:"measure,omitempty" doc:"tcp and/or frames" default:"[tcp]"`
	Direction string        `yaml:"direction" json:"direction,omitempty" doc:"up (the board sends) or down, for tcp" default:"up"`
	Duration  plan.Duration `yaml:"duration" json:"duration,omitempty" doc:"one measurement's duration" default:"3s"` // one measurement's
	Repeat    int           `yaml:"repeat" json:"repeat,omitempty" doc:"measurements of each value, 1..100 (the median is kept)" default:"1"`
	EarlyStop bool          `yaml:"early_stop" json:"early_stop,omitempty" doc:"with repeat: a value's measurements stop once its median cannot beat the best value's throughput so far (by 1%) even were the rest the best"`
	Size      int           `yaml:"size" json:"size,omitempty" doc:"the frames' size with FCS, for frames" unit:"bytes" default:"512"`
	Rate      string        `yaml:"rate" json:"rate,omitempty" doc:"the frames' rate, for frames" default:"1000pps"`
	CPUs      string        `yaml:"cpus" json:"cpus,omitempty" doc:"senders and receive rings for frames, as gen's --cpus"`

	values []string // each checked by tune's knob registry, as a profile holds it
	knob   tune.KnobInfo
	rate   frames.Rate
	cpus   int
}

// Check parses the values and checks each against the knob, and what it measures.
func (s *Sweep) Check(p *plan.Plan) error {
	if err := needStation(p); err != nil {
		return err
	}
	if s.Knob == "" || s.Values == "" {
		return fmt.Errorf("sweep step needs knob and values (64..8192, or V1,V2,...)")
	}
	var err error
	if s.knob, err = tune.Info(s.Knob); err != nil {
		return err
	}
	if s.values, err = experiment.KnobValues(s.Knob, s.Values); err != nil {
		return fmt.Errorf("values: %v", strings.TrimPrefix(err.Error(), "--values "))
	}
	if len(s.Measure) == 0 {
		s.Measure = []string{"tcp"}
	}
	for _, m := range s.Measure {
		if m != "tcp" && m != "frames" {
			return fmt.Errorf("measure %q: want tcp and/or frames", m)
		}
	}
	if err := checkDirection(&s.Direction); err != nil {
		return err
	}
	if err := checkDuration(&s.Duration, 3*time.Second, time.Second); err != nil {
		return err
	}
	if s.Repeat == 0 {
		s.Repeat = 1
	}
	if s.Repeat < 1 || s.Repeat > 100 {
		return fmt.Errorf("repeat %d: want 1..100", s.Repeat)
	}
	if slices.Contains(s.Measure, "frames") {
		if s.Size == 0 {
			s.Size = 512
		}
		if s.Rate == "" {
			s.Rate = "1000pps"
		}
		if s.rate, s.cpus, err = checkFrames(s.Size, s.Rate, s.CPUs); err != nil {
			return err
		}
	}
	return nil
}

// Timeout: each point its write, and the wait for the link when the registry says the
// knob bounces it, then each measurement with its settling; the port given back at the
// end.
func (s *Sweep) Timeout() time.Duration {
	write := 5 * time.Second
	if s.knob.Bounces {
		write += sweepCarrierWait
	}
	per := time.Duration(len(s.Measure))*(s.Duration.D()+2*time.Second) + write
	return time.Duration(len(s.values)*s.Repeat)*per + 60*time.Second
}

// sweepCarrierWait is how long a point waits for the link after a knob that bounces it.
const sweepCarrierWait = 15 * time.Second

// Run sweeps the knob through tune's transaction (a journal of its own) against the
// station and gives it back its value.
func (s *Sweep) Run(ctx context.Context, e Env) (Outcome, error) {
	st := e.Station
	var ms []experiment.Meter
	for _, m := range s.Measure {
		switch m {
		case "tcp":
			ms = append(ms, experiment.NewTCPMeter(st.Address, st.Port, e.Version, s.Duration.D(), s.Direction == "down"))
		case "frames":
			peer, err := e.reflectorMAC(ctx)
			if err != nil {
				return Outcome{}, err
			}
			ms = append(ms, &experiment.FramesMeter{Root: e.Root, Iface: e.Iface, Reflector: peer, Sizes: []int{s.Size}, Rate: s.rate, Duration: s.Duration.D(), CPUs: s.cpus})
		}
	}
	t, err := experiment.OpenTuner(e.Iface, e.StateDir, e.API, sweepCarrierWait)
	if err != nil {
		return Outcome{}, err
	}
	defer t.Close()
	var w windows
	for i := range ms {
		ms[i] = timedMeter{ms[i], s.Duration.D(), &w}
	}
	sw := &experiment.Sweep{Iface: e.Iface, Knob: s.Knob, Values: s.values, Repeat: s.Repeat, Meters: ms, Setter: t,
		EarlyStop: s.EarlyStop, Objective: experiment.Objective{Goal: "throughput"}}
	head := &curve.Result{Knob: s.Knob, Columns: sw.Columns()}
	sw.Progress = func(p curve.Point) { fmt.Fprintln(e.Console, "  "+head.PointLine(p)) }
	res, err := sw.Run(ctx)
	if err != nil {
		return Outcome{}, err
	}
	o := s.Judge(res)
	o.Window = w.total()
	return o, nil
}

// Judge: the sweep passes when every value was applied (tune reads each write back) and
// measured, and the knob was given back its value; the curve itself is the report's
// (Detail), for the station's chart.
func (s *Sweep) Judge(r *curve.Result) Outcome {
	o := Outcome{Pass: true, Measured: map[string]float64{"points": float64(len(r.Points))}, Detail: r}
	var bad []string
	for _, p := range r.Points {
		if p.Error != "" {
			bad = append(bad, p.Value+": "+p.Error)
		}
	}
	want := len(s.values)
	o.Summary = fmt.Sprintf("%s over %d values: %d measured", s.Knob, want, len(r.Points)-len(bad))
	if best, _, err := (experiment.Objective{Goal: "throughput"}).Pick(r); err == nil && len(best.Median) > 0 {
		o.Summary += "; most throughput at " + best.Value
		if v, ok := best.Median["tcp_mbps"]; ok {
			o.Summary += fmt.Sprintf(" (%.1f Mbit/s)", v)
		}
	}
	switch {
	case len(bad) > 0:
		o.Pass, o.Reason = false, strings.Join(bad, "; ")
	case r.Interrupted || len(r.Points) < want:
		o.Pass, o.Reason = false, fmt.Sprintf("cut short: %d of %d values measured", len(r.Points), want)
	case !r.Restored:
		o.Pass, o.Reason = false, "the knob was not given back its value"
	}
	return o
}
