package experiment

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/zynqnet/linerate/curve"
	"github.com/zynqnet/linerate/dts"
	"github.com/zynqnet/linerate/internal/atomicfile"
	"github.com/zynqnet/linerate/internal/badinput"
	"github.com/zynqnet/linerate/tune"
)

// Objective is what autotune looks for: the most throughput or the least latency, among
// the points that meet every constraint given.
type Objective struct {
	Goal                          string // "throughput" or "latency"
	MaxP99US, MinMbps, MaxLossPct *float64
}

// worst is the highest figure among the columns with the prefix (every frame size's
// p99, say); ok is false when no column has one.
func worst(p curve.Point, prefix string) (float64, bool) {
	w, ok := math.Inf(-1), false
	for k, v := range p.Median {
		if strings.HasPrefix(k, prefix) {
			w, ok = math.Max(w, v), true
		}
	}
	return w, ok
}

// Check refuses an objective the sweep's meters cannot judge.
func (o Objective) Check(tcp, frames bool) error {
	switch {
	case o.Goal != "throughput" && o.Goal != "latency":
		return fmt.Errorf("--objective %q: want throughput or latency", o.Goal)
	case o.Goal == "latency" && !frames:
		return fmt.Errorf("--objective latency needs frames through a reflector (--reflector)")
	case o.MaxP99US != nil && !frames:
		return fmt.Errorf("--max-p99-us needs frames through a reflector (--reflector)")
	case o.MaxLossPct != nil && !frames:
		return fmt.Errorf("--max-loss-pct needs frames through a reflector (--reflector)")
	case o.MinMbps != nil && !tcp:
		return fmt.Errorf("--min-mbps needs TCP against an iperf3 server (--iperf3)")
	}
	return nil
}

// meets says why p breaks a constraint, or "" when it meets them all.
func (o Objective) meets(p curve.Point) string {
	if p.Error != "" {
		return p.Error
	}
	if o.MaxP99US != nil {
		if v, ok := worst(p, "p99_us_"); !ok || v > *o.MaxP99US {
			return fmt.Sprintf("p99 %s us above %g", curve.Num(v), *o.MaxP99US)
		}
	}
	if o.MaxLossPct != nil {
		if v, ok := worst(p, "loss_pct_"); !ok || v > *o.MaxLossPct {
			return fmt.Sprintf("loss %s%% above %g%%", curve.Num(v), *o.MaxLossPct)
		}
	}
	if o.MinMbps != nil {
		if v, ok := p.Median["tcp_mbps"]; !ok || v < *o.MinMbps {
			return fmt.Sprintf("%s Mbit/s below %g", curve.Num(v), *o.MinMbps)
		}
	}
	return ""
}

// score is what the objective maximizes.
func (o Objective) score(p curve.Point) float64 {
	if o.Goal == "latency" {
		v, _ := worst(p, "p99_us_")
		return -v
	}
	if v, ok := p.Median["tcp_mbps"]; ok {
		return v
	}
	v, _ := worst(p, "loss_pct_") // frames only: the least loss is the most throughput
	return -v
}

// lost says why a point whose runs so far are runs, with left runs to go, can no longer
// be picked over the best point of sofar: even were every run left the best possible,
// the median score of its runs stays below the best's by more than Pick's 1%. "" while
// it can still win (or there is no best yet).
func (o Objective) lost(runs []map[string]float64, left int, sofar *curve.Result) string {
	best, _, err := o.Pick(sofar)
	if err != nil || len(runs) == 0 {
		return ""
	}
	top := o.score(*best)
	scores := make([]float64, 0, len(runs)+left)
	for _, r := range runs {
		scores = append(scores, o.score(curve.Point{Median: r}))
	}
	for range left {
		scores = append(scores, math.Inf(1))
	}
	slices.Sort(scores)
	m := scores[len(scores)/2]
	if len(scores)%2 == 0 {
		m = (scores[len(scores)/2-1] + scores[len(scores)/2]) / 2
	}
	if m >= top-math.Abs(top)*0.01 {
		return ""
	}
	return fmt.Sprintf("it cannot beat %s=%s any more", sofar.Knob, best.Value)
}

// Pick is the best point that meets the constraints. Points within 1% of the best score
// count as equal (one run's noise), and of those the first in the sweep's order wins:
// give values from the cheapest (the smallest ring, the least coalescing) up. The reason
// names why every other point lost.
func (o Objective) Pick(r *curve.Result) (*curve.Point, []string, error) {
	var why []string
	best := -1
	var feasible []int
	for i, p := range r.Points {
		if w := o.meets(p); w != "" {
			why = append(why, fmt.Sprintf("%s=%s: %s", r.Knob, p.Value, w))
			continue
		}
		feasible = append(feasible, i)
		if best < 0 || o.score(p) > o.score(r.Points[best]) {
			best = i
		}
	}
	if best < 0 {
		return nil, why, fmt.Errorf("no value of %s meets the constraints: %s", r.Knob, strings.Join(why, "; "))
	}
	top := o.score(r.Points[best])
	for _, i := range feasible {
		if s := o.score(r.Points[i]); s >= top-math.Abs(top)*0.01 {
			best = i
			break
		}
	}
	return &r.Points[best], why, nil
}

// ProfileYAML is a tune profile that sets the knob to the value picked: 'linerate tune
// --profile FILE' applies it. It is parsed back before it is handed out.
func ProfileYAML(r *curve.Result, p *curve.Point, o Objective) ([]byte, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "# written by linerate autotune %s --knob %s (objective %s)\n", r.Iface, r.Knob, o.Goal)
	fmt.Fprintf(&b, "# %s\n", r.PointLine(*p))
	fmt.Fprintf(&b, "name: autotune-%s\n", strings.ReplaceAll(r.Knob, ".", "-"))
	fmt.Fprintf(&b, "description: %q\n", fmt.Sprintf("%s=%s, the %s pick of a sweep on %s", r.Knob, p.Value, o.Goal, r.Iface))
	fmt.Fprintf(&b, "knobs:\n  %s: %q\nrequired: [%s]\n", r.Knob, p.Value, r.Knob)
	if _, err := tune.ParseProfile([]byte(b.String()), "autotune"); err != nil {
		return nil, fmt.Errorf("the profile autotune wrote does not parse: %w", err)
	}
	return []byte(b.String()), nil
}

// RingOverlay is the board's GEM overlay that sets the ring depth knob (rings.rx or
// rings.tx) to value, for 'tune --from-dt' at boot.
func RingOverlay(board, gem, knob, value string) (*dts.Overlay, error) {
	n, err := strconv.ParseUint(value, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("--write-overlay: %s=%s is not a depth", knob, value)
	}
	ov := &dts.Overlay{GEM: gem, Comment: "linerate autotune: " + knob + "=" + value}
	switch rx, ok := tune.IsRingKnob(knob); {
	case !ok:
		return nil, fmt.Errorf("--write-overlay: the GEM's overlay carries ring depths only (%s, %s), not %s", tune.RingKnob(true), tune.RingKnob(false), knob)
	case rx:
		ov.RxRing = uint32(n)
	default:
		ov.TxRing = uint32(n)
	}
	return ov, ov.Prepare(board, "")
}

// Autotune is what autotune does after its sweep: pick the best value under Objective and
// write it as a tune profile and, for ring depths, as the GEM's overlay.
type Autotune struct {
	Objective   Objective
	Iface, Knob string
	// ProfileFile and OverlayFile are where the pick is written ("": not written); the
	// overlay is for Board's GEM.
	ProfileFile, OverlayFile, Board, GEM string
}

// Pick is autotune's answer, as --json writes it.
type Pick struct {
	Sweep     *curve.Result `json:"sweep"`
	Objective string        `json:"objective"`
	Best      *curve.Point  `json:"best"`
	Rejected  []string      `json:"rejected"`
}

// Check refuses, before any sweep, what could not be done after it: an objective the
// meters cannot judge, an overlay of a knob no overlay carries or of an unknown board,
// an output that cannot be written.
func (a *Autotune) Check(tcp, frames bool) error {
	if err := a.Objective.Check(tcp, frames); err != nil {
		return badinput.Errorf("%v", err)
	}
	for _, p := range []string{a.ProfileFile, a.OverlayFile} {
		if err := atomicfile.CanWrite(p); err != nil {
			return badinput.Errorf("%v", err)
		}
	}
	if a.OverlayFile == "" {
		return nil
	}
	if _, err := RingOverlay(a.Board, a.GEM, a.Knob, "64"); err != nil {
		return badinput.Errorf("%v", err)
	}
	return nil
}

// Pick picks the best point of the sweep, says why the others lost and what was written.
func (a *Autotune) Pick(res *curve.Result, progress io.Writer) (*Pick, error) {
	best, why, err := a.Objective.Pick(res)
	if err != nil {
		return nil, err
	}
	for _, w := range why {
		fmt.Fprintln(progress, "  not "+w)
	}
	fmt.Fprintf(progress, "best for %s: %s\n", a.Objective.Goal, res.PointLine(*best))
	if a.ProfileFile != "" {
		y, err := ProfileYAML(res, best, a.Objective)
		if err == nil {
			err = atomicfile.Write(a.ProfileFile, y, 0o644)
		}
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(progress, "wrote %s: linerate tune %s --profile %s\n", a.ProfileFile, a.Iface, a.ProfileFile)
	}
	if a.OverlayFile != "" {
		ov, err := RingOverlay(a.Board, a.GEM, a.Knob, best.Value)
		if err != nil {
			return nil, err
		}
		if _, err := ov.WriteFile(a.OverlayFile); err != nil {
			return nil, err
		}
		fmt.Fprintf(progress, "wrote %s: %s\n", a.OverlayFile, ov.Describe())
	}
	return &Pick{Sweep: res, Objective: a.Objective.Goal, Best: best, Rejected: why}, nil
}

// Ended says how a sweep ended, as an error for the command's exit status: cut short
// (a signal), or without one value measured.
func Ended(r *curve.Result) error {
	if r.Interrupted {
		return errors.New("interrupted")
	}
	for _, p := range r.Points {
		if p.Error == "" {
			return nil
		}
	}
	if len(r.Points) > 0 {
		return fmt.Errorf("no value of %s could be measured: %s", r.Knob, r.Points[0].Error)
	}
	return nil
}
