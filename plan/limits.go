package plan

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Typed limits. A measurement's limit names its unit and bounds it below, above or both,
// each bound with an optional marginal band inside it: with low 930 and marginal_low
// 940, 929 fails, 935 passes as marginal and 945 passes. A marginal board passes; the
// line sees it as marginal (the verdict line, the report, JUnit and the station's page),
// because the board that passes by a hair is the one that fails in the field
// (OpenHTF's measurement validators with marginal ranges).

// Limit bounds one measurement of a step.
type Limit struct {
	// Measurement is the step's measurement it bounds (mbps, loss_pct, p99_us, ...).
	Measurement string   `yaml:"measurement" json:"measurement"`
	Unit        string   `yaml:"unit" json:"unit,omitempty"`
	Low         *float64 `yaml:"low" json:"low,omitempty"`
	High        *float64 `yaml:"high" json:"high,omitempty"`
	// MarginalLow and MarginalHigh are the band's inner edges: a value from Low up to
	// MarginalLow, or from MarginalHigh up to High, passes as marginal.
	MarginalLow  *float64 `yaml:"marginal_low" json:"marginal_low,omitempty"`
	MarginalHigh *float64 `yaml:"marginal_high" json:"marginal_high,omitempty"`
}

// The statuses of a measurement against its limit.
const (
	LimitPass     = "pass"
	LimitMarginal = "marginal"
	LimitFail     = "fail"
)

// Check says why the limit cannot be used: no bound, a bound that is no number within
// its unit's range, a band outside its bound or crossing the other, or a unit that is not
// the measurement's. unit is the measurement's unit as its step kind gives it ("" when
// the kind does not say).
func (l *Limit) Check(unit string) error {
	if l.Measurement == "" {
		return fmt.Errorf("a limit needs its measurement")
	}
	if l.Low == nil && l.High == nil {
		return fmt.Errorf("limit of %s: give low and/or high", l.Measurement)
	}
	if unit != "" && l.Unit != "" && l.Unit != unit {
		return fmt.Errorf("limit of %s: unit %q, but %s is measured in %s", l.Measurement, l.Unit, l.Measurement, unit)
	}
	if l.Unit == "" {
		l.Unit = unit
	}
	for name, v := range map[string]*float64{"low": l.Low, "high": l.High, "marginal_low": l.MarginalLow, "marginal_high": l.MarginalHigh} {
		if v != nil && (math.IsNaN(*v) || math.IsInf(*v, 0) || math.Abs(*v) > MaxFigure) {
			return fmt.Errorf("limit of %s: %s %v: want a finite number", l.Measurement, name, *v)
		}
	}
	switch {
	case l.MarginalLow != nil && l.Low == nil:
		return fmt.Errorf("limit of %s: marginal_low without low", l.Measurement)
	case l.MarginalHigh != nil && l.High == nil:
		return fmt.Errorf("limit of %s: marginal_high without high", l.Measurement)
	case l.Low != nil && l.High != nil && *l.Low > *l.High:
		return fmt.Errorf("limit of %s: low %g above high %g", l.Measurement, *l.Low, *l.High)
	case l.MarginalLow != nil && *l.MarginalLow < *l.Low:
		return fmt.Errorf("limit of %s: marginal_low %g below low %g: the band is inside the limit", l.Measurement, *l.MarginalLow, *l.Low)
	case l.MarginalHigh != nil && *l.MarginalHigh > *l.High:
		return fmt.Errorf("limit of %s: marginal_high %g above high %g: the band is inside the limit", l.Measurement, *l.MarginalHigh, *l.High)
	case l.High != nil && l.MarginalLow != nil && *l.MarginalLow > *l.High,
		l.Low != nil && l.MarginalHigh != nil && *l.MarginalHigh < *l.Low,
		l.MarginalLow != nil && l.MarginalHigh != nil && *l.MarginalLow > *l.MarginalHigh:
		return fmt.Errorf("limit of %s: the marginal bands cross", l.Measurement)
	}
	return nil
}

// Judge is v's status against the limit: fail outside it, marginal in a band, else
// pass.
func (l Limit) Judge(v float64) string {
	switch {
	case math.IsNaN(v), l.Low != nil && v < *l.Low, l.High != nil && v > *l.High:
		return LimitFail
	case l.MarginalLow != nil && v < *l.MarginalLow, l.MarginalHigh != nil && v > *l.MarginalHigh:
		return LimitMarginal
	}
	return LimitPass
}

// String is the limit as a line shows it: "930..", "..1 %", "930.. (marginal below 940)".
func (l Limit) String() string {
	f := func(p *float64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatFloat(*p, 'g', -1, 64)
	}
	s := f(l.Low) + ".." + f(l.High)
	if l.Unit != "" {
		s += " " + l.Unit
	}
	var band []string
	if l.MarginalLow != nil {
		band = append(band, "below "+f(l.MarginalLow))
	}
	if l.MarginalHigh != nil {
		band = append(band, "above "+f(l.MarginalHigh))
	}
	if len(band) > 0 {
		s += " (marginal " + strings.Join(band, ", ") + ")"
	}
	return s
}

// LimitResult is a measurement judged against its limit.
type LimitResult struct {
	Limit
	Value  float64 `json:"value"`
	Status string  `json:"status"` // pass, marginal or fail
}

// JudgeLimits are the step's measurements judged against its limits, in the limits'
// order; a limit whose measurement the step did not give is left out (the step said why
// it measured nothing).
func JudgeLimits(limits []Limit, measured map[string]float64) []LimitResult {
	var out []LimitResult
	for _, l := range limits {
		v, ok := measured[l.Measurement]
		if !ok {
			continue
		}
		out = append(out, LimitResult{Limit: l, Value: v, Status: l.Judge(v)})
	}
	return out
}

// FigureName is the name a step result's measurement goes by on the verdict line and in
// the report's marginal list: the result's id (with its port), '_', the measurement.
func FigureName(stepID, measurement string) string { return stepID + "_" + measurement }
