package station

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/zynqnet/linerate/plan"
)

// Limits from the population. A board can pass its plan's limits and still be far from
// the boards like it: the one that fails in the field. Per board type and measurement
// (one with a limit in the plan) the station keeps the values of the last N passing
// boards, and from them robust statistics (median; robust sigma 1.4826 x the median
// absolute deviation, else the interquartile range / 1.349; p1 and p99), the process's
// capability against the plan's limits (Cpk, from the median and the robust sigma), and
// dynamic part-average limits as AEC-Q001 sets them: median +- K robust sigma (K 6 by
// default). A passing board outside them is an outlier: marginal with the reason, or
// failed with --outlier-policy fail. None of the anchors proposes limits: `linerate
// station limits` does, from the same population, with its evidence.

// Population's defaults: the last 1000 passing boards, limits at 6 robust sigma, and
// none judged before 30 boards.
const (
	DefaultPopulation = 1000
	DefaultSigmas     = 6
	MinPopulation     = 30
)

// popKey is one measurement of one board type: a step's result id and measurement
// (plan.FigureName: tcp-down_mbps, tcp-up.eth1_mbps).
type popKey struct{ board, name string }

// sample is one passing board's value.
type sample struct {
	v  float64
	at time.Time
}

// series is a measurement's population: the last values (a ring), the plan's limit of
// the latest report, the unit.
type series struct {
	ring          []sample
	next          int
	limit         plan.Limit
	step, measure string
}

// population is every measurement's series, fed report by report (under the index's
// lock).
type population struct {
	n    int // how many values a series keeps
	data map[popKey]*series
}

// feed adds a passing report's limited measurements.
func (p *population) feed(board string, lim []limitValue, at time.Time) {
	if p.data == nil {
		p.data = map[popKey]*series{}
	}
	for _, l := range lim {
		k := popKey{board, l.Name}
		s := p.data[k]
		if s == nil {
			s = &series{}
			p.data[k] = s
		}
		s.limit, s.step, s.measure = l.Limit, l.Step, l.Measure
		if len(s.ring) < p.n {
			s.ring = append(s.ring, sample{l.Value, at})
			continue
		}
		s.ring[s.next] = sample{l.Value, at}
		s.next = (s.next + 1) % len(s.ring)
	}
}

// limitValue is a report's measurement with its limit, as the record keeps it.
type limitValue struct {
	Name    string     `json:"name"` // plan.FigureName of Step and Measure
	Step    string     `json:"step"`
	Measure string     `json:"measure"`
	Value   float64    `json:"value"`
	Limit   plan.Limit `json:"limit"`
}

// limitValues are a report's limited measurements.
func limitValues(r *plan.Report) []limitValue {
	var out []limitValue
	for _, s := range r.Steps {
		for _, l := range s.Limits {
			lim := l.Limit
			lim.Measurement = ""
			out = append(out, limitValue{Name: plan.FigureName(s.ID, l.Measurement), Step: s.ID, Measure: l.Measurement, Value: l.Value, Limit: lim})
		}
	}
	return out
}

// Capability is a measurement's population and what it says.
type Capability struct {
	Board       string    `json:"board"`
	Measurement string    `json:"measurement"` // plan.FigureName of Step and Measure
	Step        string    `json:"step"`
	Measure     string    `json:"measure"`
	Unit        string    `json:"unit,omitempty"`
	N           int       `json:"n"`
	From        time.Time `json:"from"`
	To          time.Time `json:"to"`
	Median      float64   `json:"median"`
	RobustSigma float64   `json:"robust_sigma"`
	P1          float64   `json:"p1"`
	P99         float64   `json:"p99"`
	// Low and High are the plan's limit (the latest report's); Cpk the capability
	// against it (nil with no spread or no limit).
	Low  *float64 `json:"low,omitempty"`
	High *float64 `json:"high,omitempty"`
	Cpk  *float64 `json:"cpk,omitempty"`
	// DPATLow and DPATHigh are the population's limits (median +- K robust sigma);
	// nil before MinPopulation boards or with no spread.
	DPATLow  *float64 `json:"dpat_low,omitempty"`
	DPATHigh *float64 `json:"dpat_high,omitempty"`
	// Proposed is a limit for the plan from the population: the DPAT limit on the
	// plan's side(s), with a marginal band at two thirds of the way.
	Proposed *plan.Limit `json:"proposed,omitempty"`
}

// capability is a series' statistics, with K sigmas.
func (s *series) capability(board, name string, k float64) Capability {
	vals := make([]float64, len(s.ring))
	c := Capability{Board: board, Measurement: name, Step: s.step, Measure: s.measure, Unit: s.limit.Unit, N: len(s.ring), Low: s.limit.Low, High: s.limit.High}
	for i, x := range s.ring {
		vals[i] = x.v
		if c.From.IsZero() || x.at.Before(c.From) {
			c.From = x.at
		}
		if x.at.After(c.To) {
			c.To = x.at
		}
	}
	sort.Float64s(vals)
	c.Median, c.P1, c.P99 = quantile(vals, 0.5), quantile(vals, 0.01), quantile(vals, 0.99)
	c.RobustSigma = robustSigma(vals, c.Median)
	if c.RobustSigma <= 0 {
		return c
	}
	cpk := math.Inf(1)
	if c.Low != nil {
		cpk = min(cpk, (c.Median-*c.Low)/(3*c.RobustSigma))
	}
	if c.High != nil {
		cpk = min(cpk, (*c.High-c.Median)/(3*c.RobustSigma))
	}
	if !math.IsInf(cpk, 0) {
		c.Cpk = &cpk
	}
	if c.N < MinPopulation {
		return c
	}
	lo, hi := c.Median-k*c.RobustSigma, c.Median+k*c.RobustSigma
	c.DPATLow, c.DPATHigh = &lo, &hi
	p := plan.Limit{Unit: c.Unit}
	if c.Low != nil || c.High == nil {
		ml := c.Median - 2.0/3*k*c.RobustSigma
		p.Low, p.MarginalLow = &lo, &ml
	}
	if c.High != nil {
		mh := c.Median + 2.0/3*k*c.RobustSigma
		p.High, p.MarginalHigh = &hi, &mh
	}
	c.Proposed = &p
	return c
}

// quantile of sorted values, interpolated.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	pos := q * float64(len(sorted)-1)
	i := int(pos)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (pos-float64(i))*(sorted[i+1]-sorted[i])
}

// robustSigma is 1.4826 x the median absolute deviation, else (half the values the
// same) the interquartile range / 1.349; 0 when neither spreads.
func robustSigma(sorted []float64, median float64) float64 {
	dev := make([]float64, len(sorted))
	for i, v := range sorted {
		dev[i] = math.Abs(v - median)
	}
	sort.Float64s(dev)
	if mad := quantile(dev, 0.5); mad > 0 {
		return 1.4826 * mad
	}
	return (quantile(sorted, 0.75) - quantile(sorted, 0.25)) / 1.349
}

// Outlier is a passing board's measurement outside its population's limits.
type Outlier struct {
	Measurement string  `json:"measurement"`
	Value       float64 `json:"value"`
	Low         float64 `json:"low"`
	High        float64 `json:"high"`
	Median      float64 `json:"median"`
	RobustSigma float64 `json:"robust_sigma"`
	N           int     `json:"n"`
	Text        string  `json:"text"`
}

// outliers are a passing report's measurements outside their populations' limits
// (under the index's lock).
func (p *population) outliers(r *plan.Report, k float64) []Outlier {
	if r.Verdict != "PASS" {
		return nil
	}
	var out []Outlier
	for _, l := range limitValues(r) {
		s := p.data[popKey{r.Board, l.Name}]
		if s == nil || len(s.ring) < MinPopulation {
			continue
		}
		c := s.capability(r.Board, l.Name, k)
		if c.DPATLow == nil || l.Value >= *c.DPATLow && l.Value <= *c.DPATHigh {
			continue
		}
		o := Outlier{Measurement: l.Name, Value: l.Value, Low: *c.DPATLow, High: *c.DPATHigh, Median: c.Median, RobustSigma: c.RobustSigma, N: c.N}
		o.Text = fmt.Sprintf("%s %s is outside the population's limits %s..%s (median %s, robust sigma %s, %g sigma, %d boards)",
			l.Name, num(l.Value), num(o.Low), num(o.High), num(c.Median), num(c.RobustSigma), k, c.N)
		out = append(out, o)
	}
	return out
}

// capabilities are the board type's measurements' statistics (every type's for ""),
// sorted.
func (p *population) capabilities(board string, k float64) []Capability {
	var keys []popKey
	for key := range p.data {
		if board == "" || key.board == board {
			keys = append(keys, key)
		}
	}
	slices.SortFunc(keys, func(a, b popKey) int { return strings.Compare(a.board+"\x00"+a.name, b.board+"\x00"+b.name) })
	out := []Capability{}
	for _, key := range keys {
		out = append(out, p.data[key].capability(key.board, key.name, k))
	}
	return out
}

// num is a figure as the station writes it: four significant digits.
func num(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

// outliers are a passing report's measurements outside their populations' limits;
// under --outlier-policy fail, the rejection that names them.
func (s *Server) outliers(r *plan.Report) ([]Outlier, error) {
	if err := s.refresh(); err != nil {
		return nil, nil
	}
	s.idx.mu.RLock()
	out := s.idx.pop.outliers(r, s.opts.Sigmas)
	s.idx.mu.RUnlock()
	if len(out) > 0 && s.opts.OutlierPolicy == Reject {
		var texts []string
		for _, o := range out {
			texts = append(texts, o.Text)
		}
		return nil, &PolicyError{Kind: "outlier", Text: "an outlier: " + strings.Join(texts, "; ")}
	}
	return out, nil
}

// getCapability serves each measurement's population, capability and part-average
// limits (?type= one board type's).
func (s *Server) getCapability(w http.ResponseWriter, req *http.Request) {
	var caps []Capability
	err := s.withView(map[string]string{}, func([]*row, int) { caps = s.idx.pop.capabilities(req.URL.Query().Get("type"), s.opts.Sigmas) })
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(w, caps)
}

// limitText is a limit's bounds as the page shows them ("930..", "..1", "910..970").
func limitText(low, high *float64) string {
	if low == nil && high == nil {
		return "-"
	}
	s := ""
	if low != nil {
		s = num(*low)
	}
	s += ".."
	if high != nil {
		s += num(*high)
	}
	return s
}

// Limits reads a store's population (the bbolt store in dir, or PostgreSQL at db) and
// returns a board type's capabilities ("" every type's), as a station with population n
// and k sigmas would judge the next report.
func Limits(ctx context.Context, dir, db, board string, n int, k float64) ([]Capability, error) {
	st, _, err := OpenStore(ctx, dir, db)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	recs, err := st.records()
	if err != nil {
		return nil, err
	}
	p := population{n: n}
	for _, r := range recs {
		if r.Verdict == "PASS" && !r.Golden && len(r.Outliers) == 0 {
			p.feed(r.Board, r.Limits, r.Received)
		}
	}
	return p.capabilities(board, k), nil
}

// WriteLimits writes capabilities for a person: per measurement its population (how
// many boards, from when to when), its statistics, the plan's limit and Cpk, the
// population's limits, and the limit proposed for the plan as a plan's limits: line.
func WriteLimits(w io.Writer, caps []Capability, k float64) {
	if len(caps) == 0 {
		fmt.Fprintln(w, "no measurement with a limit in the stored passing reports")
		return
	}
	for _, c := range caps {
		fmt.Fprintf(w, "%s %s (%s): %d passing boards, %s .. %s\n", c.Board, c.Measurement, orDash(c.Unit), c.N, c.From.Format("2006-01-02 15:04"), c.To.Format("2006-01-02 15:04"))
		fmt.Fprintf(w, "  median %s, robust sigma %s, p1 %s, p99 %s\n", num(c.Median), num(c.RobustSigma), num(c.P1), num(c.P99))
		cpk := "-"
		if c.Cpk != nil {
			cpk = fmt.Sprintf("%.2f", *c.Cpk)
		}
		fmt.Fprintf(w, "  the plan's limit %s: Cpk %s\n", limitText(c.Low, c.High), cpk)
		if c.Proposed == nil {
			fmt.Fprintf(w, "  no proposal: %s\n", map[bool]string{true: "the values do not spread", false: fmt.Sprintf("%d boards, %d needed", c.N, MinPopulation)}[c.N >= MinPopulation])
			continue
		}
		fmt.Fprintf(w, "  the population's limits (median +- %g robust sigma): %s\n", k, limitText(c.DPATLow, c.DPATHigh))
		p := c.Proposed
		fmt.Fprintf(w, "  proposed for step %s: - {measurement: %s%s%s%s%s%s}\n", c.Step, c.Measure, yamlNum(", low: ", p.Low), yamlNum(", marginal_low: ", p.MarginalLow),
			yamlNum(", marginal_high: ", p.MarginalHigh), yamlNum(", high: ", p.High), map[bool]string{true: ", unit: " + c.Unit}[c.Unit != ""])
	}
}

func yamlNum(key string, v *float64) string {
	if v == nil {
		return ""
	}
	return key + num(*v)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
