package plan

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestCheckNumbers(t *testing.T) {
	good := func() *Report {
		return &Report{Seconds: 30, Started: time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC),
			Figures: map[string]float64{"tcp-up_mbps": 941, "frames_loss_pct": 0, "frames_p99_us": 120, "flaps": 3},
			Steps: []StepResult{{ID: "link", Seconds: 2, Measured: map[string]float64{"carrier_s": 1.2, "speed_mbps": 1000}},
				{ID: "tcp-up", Seconds: 10, Measured: map[string]float64{"mbps": 941, "retransmits": 12},
					Attempts: []StepResult{{ID: "tcp-up", Seconds: 10, Measured: map[string]float64{"mbps": 12}}}}}}
	}
	if err := good().CheckNumbers(); err != nil {
		t.Fatalf("a good report: %v", err)
	}
	for _, c := range []struct {
		name, want string
		mutate     func(r *Report)
	}{
		{"the hang", "steps[1] (tcp-up).seconds 1e+39", func(r *Report) { r.Steps[1].Seconds = 1e39 }},
		{"negative step", "steps[0] (link).seconds -1", func(r *Report) { r.Steps[0].Seconds = -1 }},
		{"run past a week", "seconds 1e+07", func(r *Report) { r.Seconds = 1e7 }},
		{"NaN run", "seconds NaN", func(r *Report) { r.Seconds = math.NaN() }},
		{"year 1", "started 0001-01-01", func(r *Report) { r.Started = time.Time{} }},
		{"year 9999", "started 9999", func(r *Report) { r.Started = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC) }},
		{"pct", "figure frames_loss_pct = 150", func(r *Report) { r.Figures["frames_loss_pct"] = 150 }},
		{"negative rate", "figure tcp-up_mbps = -1", func(r *Report) { r.Figures["tcp-up_mbps"] = -1 }},
		{"huge count", "figure flaps = 1e+300", func(r *Report) { r.Figures["flaps"] = 1e300 }},
		{"inf measure", "steps[1] (tcp-up).measured: mbps = +Inf", func(r *Report) { r.Steps[1].Measured["mbps"] = math.Inf(1) }},
		{"attempt", "steps[1] (tcp-up).attempts[0].seconds 1e+39", func(r *Report) { r.Steps[1].Attempts[0].Seconds = 1e39 }},
		{"attempt measure", "steps[1] (tcp-up).attempts[0].measured: mbps = 2e+07", func(r *Report) { r.Steps[1].Attempts[0].Measured["mbps"] = 2e7 }},
		{"carrier", "carrier_s = 1e+09", func(r *Report) { r.Steps[0].Measured["carrier_s"] = 1e9 }},
	} {
		r := good()
		c.mutate(r)
		err := r.CheckNumbers()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %q", c.name, err, c.want)
		}
	}
	// A board without a clock starts in 1970.
	r := good()
	r.Started = time.Unix(5, 0)
	if err := r.CheckNumbers(); err != nil {
		t.Errorf("a board without a clock: %v", err)
	}
}

func TestMeasureRange(t *testing.T) {
	for name, want := range map[string]string{"loss_pct": "%", "tcp-up_mbps": "Mbit/s", "mbps": "Mbit/s", "p99_us": "µs", "down_s": "s",
		"throughput_fps": "frames/s", "pps": "packets/s", "rx_errors": "", "sent": ""} {
		if _, _, u := MeasureRange(name); u != want {
			t.Errorf("%s: unit %q, want %q", name, u, want)
		}
	}
}
