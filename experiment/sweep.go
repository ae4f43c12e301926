// Package experiment ties settings to measurements: a sweep applies each value of one
// tune knob through tune's transaction and measures the port at it (TCP against an iperf3
// server, frames through a reflector), autotune picks the best value under constraints,
// and compare measures a profile between two baselines. The port is left as it was found:
// the sweep's changes go to a journal of their own, replayed at the end, on an error and
// when the context is cancelled (SIGINT, SIGTERM).
package experiment

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zynqnet/linerate/curve"
	"github.com/zynqnet/linerate/internal/atomicfile"
	"github.com/zynqnet/linerate/internal/console"
	"github.com/zynqnet/linerate/tune"
)

// Meter measures the port once at the present setting.
type Meter interface {
	Columns() []curve.Column
	Measure(ctx context.Context) (map[string]float64, error)
}

// Setter applies one knob's value as a transaction and reads it back; Restore gives back
// everything the Setter changed.
type Setter interface {
	Set(ctx context.Context, knob, value string) (applied string, err error)
	Restore() error
}

// Sweep is one knob over its values.
type Sweep struct {
	Iface, Knob string
	Values      []string
	Repeat      int
	Meters      []Meter
	Setter      Setter
	// Progress, when set, gets each point as it is measured.
	Progress func(curve.Point)
	// EarlyStop stops a repeated point once it cannot beat the best point so far under
	// Objective (by Pick's 1%), even if every run left came out best: fewer runs for
	// values that have lost. Off for studies, which want every run.
	EarlyStop bool
	Objective Objective
}

// Columns are the figures of every meter, in order.
func (s *Sweep) Columns() []curve.Column {
	var cs []curve.Column
	for _, m := range s.Meters {
		cs = append(cs, m.Columns()...)
	}
	return cs
}

// Run measures every value and restores the knob. An error is returned only when the
// knob could not be restored; points that failed carry their error.
func (s *Sweep) Run(ctx context.Context) (*curve.Result, error) {
	res := &curve.Result{Iface: s.Iface, Knob: s.Knob, Columns: s.Columns()}
	for _, v := range s.Values {
		if ctx.Err() != nil {
			res.Interrupted = true
			break
		}
		p := s.point(ctx, v, res)
		if ctx.Err() != nil && p.Error != "" {
			res.Interrupted = true
			break
		}
		res.Points = append(res.Points, p)
		if s.Progress != nil {
			s.Progress(p)
		}
	}
	if err := s.Setter.Restore(); err != nil {
		return res, fmt.Errorf("%s: giving %s its value back: %w", s.Iface, s.Knob, err)
	}
	res.Restored = true
	return res, nil
}

// settler is a Setter that measures how long its last value took to settle.
type settler interface{ LastSettle() time.Duration }

func (s *Sweep) point(ctx context.Context, v string, sofar *curve.Result) curve.Point {
	p := curve.Point{Value: v}
	applied, err := s.Setter.Set(ctx, s.Knob, v)
	p.Applied = applied
	if st, ok := s.Setter.(settler); ok {
		p.SettleS = st.LastSettle().Seconds()
	}
	if err != nil {
		p.Error = err.Error()
		return p
	}
	n := max(s.Repeat, 1)
	for i := 0; i < n; i++ {
		if i > 0 && s.EarlyStop {
			if why := s.Objective.lost(p.Runs, n-i, sofar); why != "" {
				p.Stopped = fmt.Sprintf("stopped after %d of %d runs: %s", i, n, why)
				break
			}
		}
		run := map[string]float64{}
		for _, m := range s.Meters {
			f, err := m.Measure(ctx)
			if err != nil {
				p.Error = err.Error()
				return p
			}
			for k, x := range f {
				run[k] = x
			}
		}
		p.Runs = append(p.Runs, run)
	}
	p.Median, p.Spread = summarize(p.Runs)
	return p
}

// summarize is each figure's median and spread (max - min) over the runs.
func summarize(runs []map[string]float64) (median, spread map[string]float64) {
	median, spread = map[string]float64{}, map[string]float64{}
	keys := map[string]bool{}
	for _, r := range runs {
		for k := range r {
			keys[k] = true
		}
	}
	for k := range keys {
		var xs []float64
		for _, r := range runs {
			if x, ok := r[k]; ok && !math.IsNaN(x) {
				xs = append(xs, x)
			}
		}
		if len(xs) == 0 {
			continue
		}
		slices.Sort(xs)
		m := xs[len(xs)/2]
		if len(xs)%2 == 0 {
			m = (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
		}
		median[k], spread[k] = m, xs[len(xs)-1]-xs[0]
	}
	return median, spread
}

// ParseValues reads --values: V1,V2,... (or V1;V2;... when a value holds commas, as CPU
// lists do), or A..B: A, 2A, 4A, ... up to B (ring depths).
func ParseValues(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if a, b, ok := strings.Cut(s, ".."); ok && !strings.ContainsAny(s, ",;") {
		lo, err1 := strconv.ParseUint(a, 10, 32)
		hi, err2 := strconv.ParseUint(b, 10, 32)
		if err1 != nil || err2 != nil || lo == 0 || hi < lo {
			return nil, fmt.Errorf("--values %q: a range is A..B with 0 < A <= B (doubling from A)", s)
		}
		var out []string
		for v := lo; v <= hi; v *= 2 {
			out = append(out, strconv.FormatUint(v, 10))
		}
		if out[len(out)-1] != b {
			out = append(out, b)
		}
		return limitValues(out)
	}
	sep := ","
	if strings.Contains(s, ";") {
		sep = ";"
	}
	var out []string
	seen := map[string]bool{}
	for _, v := range strings.Split(s, sep) {
		v = strings.TrimSpace(v)
		if v == "" {
			return nil, fmt.Errorf("--values %q: an empty value", s)
		}
		if seen[v] {
			return nil, fmt.Errorf("--values %q: %q given twice", s, v)
		}
		seen[v] = true
		out = append(out, v)
	}
	return limitValues(out)
}

func limitValues(vs []string) ([]string, error) {
	if len(vs) > 64 {
		return nil, fmt.Errorf("--values: %d values, at most 64 in one sweep", len(vs))
	}
	return vs, nil
}

// Job is a sweep as a command line asks for it: the sweep, the tune state it goes
// through, where its progress goes and the files it leaves (CSV, SVG).
type Job struct {
	Sweep
	StateDir, API  string
	CarrierTimeout time.Duration
	// Duration is one measurement's, for the header line.
	Duration time.Duration
	CSV, SVG string
	Progress io.Writer
}

// Run opens the tuner (the interface's lock, a journal of the sweep's own), sweeps with
// a line per point on Progress, and writes the CSV and the SVG of what was measured,
// also when the sweep was cut short.
func (j *Job) Run(ctx context.Context) (*curve.Result, error) {
	t, err := OpenTuner(j.Iface, j.StateDir, j.API, j.CarrierTimeout)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	j.Setter = t
	head := &curve.Result{Knob: j.Knob, Columns: j.Columns()}
	fmt.Fprintf(j.Progress, "sweep %s %s over %d values, %v a measurement\n", j.Iface, j.Knob, len(j.Values), j.Duration)
	prog := console.NewProgress(j.Progress, "sweep "+j.Iface, len(j.Values))
	j.Sweep.Progress = func(p curve.Point) { prog.Step(head.PointLine(p)) }
	res, err := j.Sweep.Run(ctx)
	prog.End()
	if res == nil {
		return nil, err
	}
	for _, o := range []struct {
		path  string
		write func(io.Writer) error
	}{{j.CSV, res.WriteCSV}, {j.SVG, res.WriteSVG}} {
		var b bytes.Buffer
		if o.path != "" && o.write(&b) == nil {
			err = errors.Join(err, atomicfile.Write(o.path, b.Bytes(), 0o644))
		}
	}
	return res, err
}

// KnobValues are a sweep's values of knob (as ParseValues reads them), each checked by
// tune's knob registry and given as a profile holds it: the one check a sweep's values
// get, from the command line or a plan.
func KnobValues(knob, values string) ([]string, error) {
	vs, err := ParseValues(values)
	if err != nil {
		return nil, err
	}
	return tune.CheckSettings(knob, vs)
}
