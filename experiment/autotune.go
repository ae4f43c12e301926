package experiment

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/zynqnet/linerate/curve"
	"github.com/zynqnet/linerate/dts"
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
	if knob == "rings.rx" {
		ov.RxRing = uint32(n)
	} else {
		ov.TxRing = uint32(n)
	}
	return ov, ov.Prepare(board, "")
}
