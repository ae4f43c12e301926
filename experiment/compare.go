package experiment

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/zynqnet/linerate/curve"
	"github.com/zynqnet/linerate/internal/console"
	"github.com/zynqnet/linerate/tune"
)

// Comparison is a profile measured between two baselines: the port as found, the
// profile applied, the port as found again (so drift shows as a difference between the
// baselines, not as the profile's effect).
type Comparison struct {
	Iface   string         `json:"interface"`
	Profile string         `json:"profile"`
	Columns []curve.Column `json:"columns"`
	// Phases are "baseline", "profile", "baseline again", each a point.
	Phases  []curve.Point `json:"phases"`
	Changes []tune.Change `json:"changes"`
	// Delta is the profile's median minus the baselines' mean, per figure; DeltaPct the
	// same in percent of that mean.
	Delta    map[string]float64 `json:"delta"`
	DeltaPct map[string]float64 `json:"delta_pct"`
	Restored bool               `json:"restored"`
}

// Compare measures the port, applies the profile (one transaction, journalled as a
// sweep's), measures, gives the port back what it had and measures again.
func Compare(ctx context.Context, t *Tuner, p *tune.Profile, meters []Meter, repeat int, progress func(string, curve.Point)) (*Comparison, error) {
	s := &Sweep{Meters: meters, Repeat: repeat}
	c := &Comparison{Iface: t.Iface, Profile: p.Name, Columns: s.Columns(), Delta: map[string]float64{}, DeltaPct: map[string]float64{}}
	measure := func(name string) error {
		pt := curve.Point{Value: name}
		for i := 0; i < max(repeat, 1); i++ {
			run := map[string]float64{}
			for _, m := range meters {
				f, err := m.Measure(ctx)
				if err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
				for k, v := range f {
					run[k] = v
				}
			}
			pt.Runs = append(pt.Runs, run)
		}
		pt.Median, pt.Spread = summarize(pt.Runs)
		c.Phases = append(c.Phases, pt)
		if progress != nil {
			progress(name, pt)
		}
		return nil
	}
	if err := measure("baseline"); err != nil {
		return c, err
	}
	plan, err := t.ApplyProfile(ctx, p)
	if err != nil {
		return c, fmt.Errorf("profile %s: %w", p.Name, err)
	}
	c.Changes = plan.Changes
	merr := measure("profile")
	if err := t.Restore(); err != nil {
		return c, fmt.Errorf("%s: giving back what the port had: %w", t.Iface, err)
	}
	c.Restored = true
	if merr != nil {
		return c, merr
	}
	if err := measure("baseline again"); err != nil {
		return c, err
	}
	for _, col := range c.Columns {
		a, okA := c.Phases[0].Median[col.Key]
		b, okB := c.Phases[2].Median[col.Key]
		v, okV := c.Phases[1].Median[col.Key]
		if !okA || !okB || !okV {
			continue
		}
		base := (a + b) / 2
		c.Delta[col.Key] = v - base
		if base != 0 {
			c.DeltaPct[col.Key] = (v - base) / base * 100
		}
	}
	return c, nil
}

// WriteText writes the before/after table: a row per figure, a column per phase, the
// delta and whether it is for the better.
func (c *Comparison) WriteText(w io.Writer) {
	fmt.Fprintf(w, "compare %s: profile %s between two baselines\n", c.Iface, c.Profile)
	for _, ch := range c.Changes {
		fmt.Fprintf(w, "  %s: %s -> %s\n", ch.Knob, ch.Old, ch.New)
	}
	if len(c.Changes) == 0 {
		fmt.Fprintln(w, "  (the profile changes nothing here)")
	}
	fmt.Fprintf(w, "  %-18s %-10s %12s %12s %12s %12s %9s\n", "figure", "unit", "baseline", "profile", "again", "delta", "")
	for _, col := range c.Columns {
		cell := func(i int) string {
			if i >= len(c.Phases) {
				return "-"
			}
			if v, ok := c.Phases[i].Median[col.Key]; ok {
				return curve.Num(v)
			}
			return "-"
		}
		d, ok := c.Delta[col.Key]
		verdict, delta := "", "-"
		if ok {
			delta = curve.Num(d)
			if pct, ok := c.DeltaPct[col.Key]; ok {
				delta += fmt.Sprintf(" (%+.1f%%)", pct)
			}
			if better := d > 0 != col.Lower; d != 0 {
				verdict = map[bool]string{true: "better", false: "worse"}[better]
			}
		}
		fmt.Fprintf(w, "  %-18s %-10s %12s %12s %12s %12s %9s\n", col.Key, col.Unit, cell(0), cell(1), cell(2), strings.TrimSpace(delta), verdict)
	}
	if c.Restored {
		fmt.Fprintf(w, "%s given back what it had before the comparison\n", c.Iface)
	}
}

// CompareJob is compare as a command line asks for it: the port, the profile, the
// meters and the tune state the profile goes through.
type CompareJob struct {
	Iface, StateDir, API string
	CarrierTimeout       time.Duration
	Profile              *tune.Profile
	Meters               []Meter
	Repeat               int
	Progress             io.Writer
}

// Run opens the tuner (the interface's lock, a journal of its own) and compares.
func (j CompareJob) Run(ctx context.Context) (*Comparison, error) {
	t, err := OpenTuner(j.Iface, j.StateDir, j.API, j.CarrierTimeout)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	prog := console.NewProgress(j.Progress, "compare "+j.Iface, 3) // baseline, profile, baseline again
	defer prog.End()
	return Compare(ctx, t, j.Profile, j.Meters, j.Repeat, func(name string, _ curve.Point) { prog.Step(name + " measured") })
}
