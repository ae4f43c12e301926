package plan

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// The ranges every number of a report is held to, at the board before it sends and at
// the station's door. A number outside them is no measurement of a port: it is a bug or
// a forgery, and past them a value stops being a number the station's page, metrics and
// statistics can work with (1e39 seconds is +Inf as the float32 the station's index
// keeps, and 1.7e308 flattens every chart).
const (
	// MaxSeconds bounds a duration: the run's and a step's (a week).
	MaxSeconds = 7 * 24 * 3600
	// MaxFigure bounds a measurement without a unit of its own (counts, frames, bytes).
	MaxFigure = 1e12
)

// unitRanges are the ranges a measurement's unit gives it, by the suffix of its name.
// Percentages may go below zero (a loss with duplicates) but never past ±100.
var unitRanges = []struct {
	suffix   string
	lo, hi   float64
	unitText string
}{
	{"_pct", -100, 100, "%"},
	{"_mbps", 0, 1e7, "Mbit/s"},
	{"_us", 0, MaxSeconds * 1e6, "µs"},
	{"_ms", 0, MaxSeconds * 1e3, "ms"},
	{"_s", 0, MaxSeconds, "s"},
	{"_fps", 0, 1e10, "frames/s"},
	{"_pps", 0, 1e10, "packets/s"},
}

// MeasureRange is the range of a measurement or figure named name: from its unit's
// suffix (loss_pct, tcp-up_mbps, p99_us, down_s, ...), or the name itself when it is
// the unit (mbps, pps), else ±MaxFigure.
func MeasureRange(name string) (lo, hi float64, unit string) {
	for _, u := range unitRanges {
		if strings.HasSuffix(name, u.suffix) || name == u.suffix[1:] {
			return u.lo, u.hi, u.unitText
		}
	}
	return -MaxFigure, MaxFigure, ""
}

// CheckMeasure says why v is no value for a measurement named name: not finite, or
// outside its unit's range (MeasureRange); nil when it is one.
func CheckMeasure(name string, v float64) error {
	lo, hi, unit := MeasureRange(name)
	if math.IsNaN(v) || math.IsInf(v, 0) || v < lo || v > hi {
		if unit != "" {
			unit = " " + unit
		}
		return fmt.Errorf("%s = %g: want a finite number in %g..%g%s", name, v, lo, hi, unit)
	}
	return nil
}

// checkSeconds says why v is no duration.
func checkSeconds(field string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > MaxSeconds {
		return fmt.Errorf("%s %g: want a duration of 0..%d s", field, v, MaxSeconds)
	}
	return nil
}

// earliest and latest bound a report's start time: a board without a clock starts in
// 1970, and nothing starts after 2200.
var (
	earliest = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	latest   = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
)

// CheckNumbers holds every number a report carries to its range and names the field of
// the first that is not: the run's seconds and start, each step's seconds and
// measurements (its earlier attempts' too), and the figures.
func (r *Report) CheckNumbers() error {
	if err := checkSeconds("seconds", r.Seconds); err != nil {
		return err
	}
	if r.Started.Before(earliest) || !r.Started.Before(latest) {
		return fmt.Errorf("started %s: want a time from 1970 to 2200", r.Started.UTC().Format(time.RFC3339))
	}
	for k, v := range r.Figures {
		if err := CheckMeasure(k, v); err != nil {
			return fmt.Errorf("figure %w", err)
		}
	}
	for i := range r.Steps {
		if err := r.Steps[i].checkNumbers(fmt.Sprintf("steps[%d] (%.40s)", i, r.Steps[i].ID)); err != nil {
			return err
		}
	}
	return nil
}

func (s *StepResult) checkNumbers(field string) error {
	if err := checkSeconds(field+".seconds", s.Seconds); err != nil {
		return err
	}
	for k, v := range s.Measured {
		if err := CheckMeasure(k, v); err != nil {
			return fmt.Errorf("%s.measured: %w", field, err)
		}
	}
	for i, l := range s.Limits {
		if err := CheckMeasure(l.Measurement, l.Value); err != nil {
			return fmt.Errorf("%s.limits[%d]: %w", field, i, err)
		}
		if err := l.Limit.Check(""); err != nil {
			return fmt.Errorf("%s.limits[%d]: %w", field, i, err)
		}
	}
	for j := range s.Attempts {
		if err := s.Attempts[j].checkNumbers(fmt.Sprintf("%s.attempts[%d]", field, j)); err != nil {
			return err
		}
	}
	return nil
}
