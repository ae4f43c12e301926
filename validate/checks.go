package validate

import (
	"fmt"
	"math"
	"time"

	"github.com/zynqnet/linerate/plan"
)

// needStation: a step that measures against the station needs its address.
func needStation(p *plan.Plan) error {
	if len(p.Ports) == 0 && p.Station.Address == "" {
		return fmt.Errorf("measures against the station: give station.address")
	}
	for _, port := range p.Ports {
		if port.Station.Address == "" {
			if len(p.Ports) == 1 {
				return fmt.Errorf("measures against the station: give station.address")
			}
			return fmt.Errorf("measures against the station: give station.address (the plan's, or port %s's)", port.Interface)
		}
	}
	return nil
}

// checkDirection defaults a direction to up and refuses any but up and down.
func checkDirection(d *string) error {
	if *d == "" {
		*d = "up"
	}
	if *d != "up" && *d != "down" {
		return fmt.Errorf("direction %q: want up (the board sends) or down", *d)
	}
	return nil
}

// checkDuration defaults a measurement's duration and holds it within min..1h.
func checkDuration(d *plan.Duration, def, min time.Duration) error {
	if *d == 0 {
		*d = plan.Duration(def)
	}
	if d.D() > time.Hour {
		return fmt.Errorf("duration %v: want at most 1h0m0s", d.D())
	}
	if d.D() < min {
		return fmt.Errorf("duration %v: a measurement takes at least %v", d.D(), min)
	}
	return nil
}

// thresholdRanges are the thresholds' ranges: a threshold outside (NaN and infinities
// included) would make a step that can never pass, or never fail.
var thresholdRanges = map[string]struct {
	min, max float64
	unit     string
}{
	"min_mbps":                {0, 1e6, "Mbit/s"},
	"max_loss_pct":            {0, 100, "%"},
	"max_p99_us":              {0, 60e6, "µs"},
	"min_throughput_pct":      {0, 100, "%"},
	"marginal_mbps":           {0, 1e6, "Mbit/s"},
	"marginal_loss_pct":       {0, 100, "%"},
	"marginal_p99_us":         {0, 60e6, "µs"},
	"marginal_throughput_pct": {0, 100, "%"},
}

// checkThresholds refuses a given threshold that is not finite or not within what its
// step can measure.
func checkThresholds(ts map[string]*float64) error {
	for _, name := range []string{"min_mbps", "max_loss_pct", "max_p99_us", "min_throughput_pct", "marginal_mbps", "marginal_loss_pct", "marginal_p99_us", "marginal_throughput_pct"} {
		v, r := ts[name], thresholdRanges[name]
		if v != nil && (math.IsNaN(*v) || *v < r.min || *v > r.max) {
			return fmt.Errorf("%s %v: out of range, want %g..%g %s", name, *v, r.min, r.max, r.unit)
		}
	}
	return nil
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// checkBands refuses a marginal band without the threshold it lies inside (orphans: a
// field given that says so), and a band outside its threshold (the limit's own check).
func checkBands(limits []plan.Limit, orphans map[string]bool) error {
	for _, name := range []string{"marginal_mbps", "marginal_retransmits", "marginal_loss_pct", "marginal_p99_us", "marginal_throughput_pct"} {
		if orphans[name] {
			return fmt.Errorf("%s: a marginal band needs the threshold it lies inside (%s)", name, map[string]string{"marginal_mbps": "min_mbps",
				"marginal_retransmits": "max_retransmits", "marginal_loss_pct": "max_loss_pct", "marginal_p99_us": "max_p99_us", "marginal_throughput_pct": "min_throughput_pct"}[name])
		}
	}
	for i := range limits {
		if err := limits[i].Check(limits[i].Unit); err != nil {
			return err
		}
	}
	return nil
}
