package station

import (
	"bytes"
	"encoding/json"
	"html/template"
	"math"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/zynqnet/linerate/curve"
	"github.com/zynqnet/linerate/internal/safecsv"
	"github.com/zynqnet/linerate/plan"
)

// Yield is the yield of one board type on one day: of the serials first tested that
// day, how many passed their first test (first-pass yield) and how many passed in the
// end, retests included (final yield).
type Yield struct {
	Board  string  `json:"board"`
	Day    string  `json:"day"` // YYYY-MM-DD, the station's local time
	Tested int     `json:"tested"`
	Passed int     `json:"passed"` // at the first test
	Pct    float64 `json:"pct"`
	// Marginal are those of Passed that passed as marginal: a measurement in its band.
	Marginal    int     `json:"marginal"`
	FinalPassed int     `json:"final_passed"` // by their last test
	FinalPct    float64 `json:"final_pct"`
}

// yields are the yields per board type and day, newest day first. A serial counts once,
// on the day of its first report (its row's First, its final verdict FinalPass).
func yields(rows []*row) []Yield {
	type key struct {
		board string
		day   int32
	}
	agg := map[key]*Yield{}
	for _, x := range rows {
		if !x.First || x.Golden {
			continue // a serial once; golden boards are the fixtures', not the line's
		}
		y := agg[key{x.Board, x.Day}]
		if y == nil {
			y = &Yield{Board: x.Board, Day: dayText(x.Day)}
			agg[key{x.Board, x.Day}] = y
		}
		y.Tested++
		if x.Verdict == "PASS" {
			y.Passed++
			if x.Marginal {
				y.Marginal++
			}
		}
		if x.FinalPass {
			y.FinalPassed++
		}
	}
	var out []Yield
	for _, y := range agg {
		y.Pct = 100 * float64(y.Passed) / float64(y.Tested)
		y.FinalPct = 100 * float64(y.FinalPassed) / float64(y.Tested)
		out = append(out, *y)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Day != out[j].Day {
			return out[i].Day > out[j].Day
		}
		return out[i].Board < out[j].Board
	})
	return out
}

// PortYield is how often one port of a board type passed the board's first test.
type PortYield struct {
	Board  string  `json:"board"`
	Port   string  `json:"port"`
	Tested int     `json:"tested"`
	Passed int     `json:"passed"`
	Pct    float64 `json:"pct"`
}

// portYields are the first-pass yields port by port of the multi-port boards: which
// port of a board type fails first.
func portYields(rows []*row) []PortYield {
	type key struct{ board, port string }
	agg := map[key]*PortYield{}
	var keys []key
	for _, x := range rows {
		if !x.First || x.Golden {
			continue
		}
		for _, p := range x.Ports {
			k := key{x.Board, p.Iface}
			y := agg[k]
			if y == nil {
				y = &PortYield{Board: x.Board, Port: p.Iface}
				agg[k] = y
				keys = append(keys, k)
			}
			y.Tested++
			if p.Pass {
				y.Passed++
			}
		}
	}
	var out []PortYield
	for _, k := range keys {
		y := agg[k]
		y.Pct = 100 * float64(y.Passed) / float64(y.Tested)
		out = append(out, *y)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Board != out[j].Board {
			return out[i].Board < out[j].Board
		}
		return out[i].Port < out[j].Port
	})
	return out
}

// ParetoRow is a failing step with how often it failed and the running share.
type ParetoRow struct {
	Step          string  `json:"step"`
	Count         int     `json:"count"`
	CumulativePct float64 `json:"cumulative_pct"`
}

// pareto counts the failed steps of the reports, most frequent first.
func pareto(rows []*row) []ParetoRow {
	n := map[string]int{}
	total := 0
	for _, x := range rows {
		if x.Golden {
			continue
		}
		for _, f := range x.Failed {
			n[f]++
			total++
		}
	}
	var out []ParetoRow
	for k, c := range n {
		out = append(out, ParetoRow{Step: k, Count: c})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Step < out[j].Step
	})
	cum := 0
	for i := range out {
		cum += out[i].Count
		out[i].CumulativePct = 100 * float64(cum) / float64(total)
	}
	return out
}

// Pace is how fast a board type goes through the line: its test time's median and p90
// and how many reports.
type Pace struct {
	Board   string  `json:"board"`
	Reports int     `json:"reports"`
	Median  float64 `json:"median_s"`
	P90     float64 `json:"p90_s"`
}

// StepPace is a step's time, median and p90, over the reports.
type StepPace struct {
	Step   string  `json:"step"`
	Runs   int     `json:"runs"`
	Median float64 `json:"median_s"`
	P90    float64 `json:"p90_s"`
}

// durations counts durations in buckets of about 1% (64 to each doubling, from 10 ms):
// the median and p90 of a million reports without sorting them, within 1%.
type durations struct {
	n      int
	counts []int
}

// bucketOf is v's bucket; what no report can carry (NaN, below 10 ms, past a week:
// the door's bounds, which an older store may not have kept) goes to the first or last.
func bucketOf(v float64) int {
	if !(v > 0.01) {
		return 0
	}
	v = min(v, plan.MaxSeconds)
	frac, exp := math.Frexp(v / 0.01) // frac in [0.5, 1)
	return exp*64 + int((frac-0.5)*128)
}

func (d *durations) add(v float64) {
	i := bucketOf(v)
	if i >= len(d.counts) {
		d.counts = append(d.counts, make([]int, i+1-len(d.counts))...)
	}
	d.counts[i]++
	d.n++
}

// quantile is the q-quantile: the middle of its bucket.
func (d *durations) quantile(q float64) float64 {
	want := max(int(math.Ceil(q*float64(d.n))), 1)
	seen := 0
	for i, c := range d.counts {
		seen += c
		if seen >= want {
			if i == 0 {
				return 0
			}
			return 0.01 * math.Ldexp(0.5+(float64(i%64)+0.5)/128, i/64)
		}
	}
	return 0
}

// paces are the test times per board type and per step (names: the index's step
// names).
func paces(rows []*row, names []string) ([]Pace, []StepPace) {
	byBoard := map[string]*durations{}
	byStep := make([]*durations, len(names))
	for _, x := range rows {
		d := byBoard[x.Board]
		if d == nil {
			d = &durations{}
			byBoard[x.Board] = d
		}
		d.add(x.Seconds)
		for _, st := range x.Steps {
			if int(st.Step) >= len(byStep) {
				continue
			}
			if byStep[st.Step] == nil {
				byStep[st.Step] = &durations{}
			}
			byStep[st.Step].add(float64(st.Seconds))
		}
	}
	var boards []Pace
	for _, b := range sortedKeys(byBoard) {
		d := byBoard[b]
		boards = append(boards, Pace{Board: b, Reports: d.n, Median: d.quantile(0.5), P90: d.quantile(0.9)})
	}
	var steps []StepPace
	for i, d := range byStep {
		if d != nil {
			steps = append(steps, StepPace{Step: names[i], Runs: d.n, Median: d.quantile(0.5), P90: d.quantile(0.9)})
		}
	}
	sort.SliceStable(steps, func(i, j int) bool {
		if steps[i].Median != steps[j].Median {
			return steps[i].Median > steps[j].Median
		}
		return steps[i].Step < steps[j].Step
	})
	return boards, steps
}

// Hours is today's pace: reports per hour of the day, and per hour since the first.
type Hours struct {
	Day     string  `json:"day"`
	Reports int     `json:"reports"`
	PerHour float64 `json:"per_hour"` // since today's first report
	ByHour  [24]int `json:"by_hour"`
}

func hours(rows []*row, now time.Time) Hours {
	today := dayOf(now)
	h := Hours{Day: dayText(today)}
	var first time.Time
	for i := len(rows) - 1; i >= 0 && rows[i].Day >= today; i-- { // oldest first: today's are at the end
		if rows[i].Day != today {
			continue
		}
		t := rows[i].Received.Local()
		h.Reports++
		h.ByHour[t.Hour()]++
		first = t
	}
	if h.Reports > 0 {
		h.PerHour = float64(h.Reports) / math.Max(now.Sub(first).Hours(), 1) // an hour at least: two boards in a minute are no 120 an hour
	}
	return h
}

// reportsCSV writes the reports as CSV: a row each, the figures as columns.
func (s *Server) reportsCSV(w http.ResponseWriter, req *http.Request) {
	list, ok := s.filtered(w, req)
	if !ok {
		return
	}
	keys := map[string]bool{}
	for _, x := range list {
		for k := range x.Figures {
			keys[k] = true
		}
	}
	figs := sortedKeys(keys)
	var b bytes.Buffer
	cw := safecsv.NewWriter(&b) // board, serial, MAC and figure names come from the boards
	cw.Write(append([]string{"received", "id", "board", "serial", "mac", "verdict", "failed", "seconds", "posted_by", "remote", "attempt", "fixture", "duplicate_mac_of"}, figs...))
	for _, x := range list {
		var dups []string
		for _, u := range x.DuplicateMAC {
			dups = append(dups, u.Serial)
		}
		row := []string{x.Received.UTC().Format(time.RFC3339), x.ID, x.Board, x.Serial, x.MAC, x.Verdict, strings.Join(x.Failed, " "),
			strconv.FormatFloat(x.Seconds, 'f', 1, 64), x.PostedBy, x.Remote, strconv.Itoa(max(x.Attempt, 1)), x.Fixture, strings.Join(dups, " ")}
		for _, k := range figs {
			if v, ok := x.Figures[k]; ok {
				row = append(row, strconv.FormatFloat(v, 'f', -1, 64))
			} else {
				row = append(row, "")
			}
		}
		cw.Write(row)
	}
	cw.Flush()
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="linerate-reports.csv"`)
	w.Write(b.Bytes())
}

var reportTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"num":  trim,
	"inc":  func(i int) int { return i + 1 },
	"sub":  func(a, b float64) float64 { return max(a-b, 0) },
	"when": func(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") },
	"join": func(s []string) string { return strings.Join(s, ", ") },
	"res": func(p bool) string {
		if p {
			return "PASS"
		}
		return "FAIL"
	},
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.R.Board}} {{.R.Serial}}: {{.R.Verdict}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em;margin:0 0 .3em} h2{font-size:1.1em;margin:1.4em 0 .4em}
table{border-collapse:collapse;font-size:.92em}
th,td{text-align:left;padding:.35em .6em;border-bottom:1px solid #ddd;vertical-align:top}
th{background:#f4f4f4}
.PASS{color:#fff;background:#2e7d32;padding:.1em .5em;border-radius:3px;font-weight:bold}
.FAIL,.fail{color:#fff;background:#c62828;padding:.1em .5em;border-radius:3px;font-weight:bold}
.warn{color:#fff;background:#ef6c00;padding:.1em .5em;border-radius:3px}
.info{color:#fff;background:#1565c0;padding:.1em .5em;border-radius:3px}
.sub{color:#666}
.nw{white-space:nowrap}
</style></head><body>
<p><a href="/">all reports</a></p>
<h1>{{.R.Board}} {{.R.Serial}} <span class="{{.R.Verdict}}">{{.R.Verdict}}</span></h1>
<div class="sub">{{.R.MAC}} on {{.R.Interface}}, started {{when .R.Started}}, {{printf "%.1f" .R.Seconds}} s{{if gt .R.WindowS 0.0}} (measuring {{printf "%.1f" .R.WindowS}} s, overhead {{printf "%.1f" (sub .R.Seconds .R.WindowS)}} s){{end}}, linerate {{.R.Linerate}}{{if .R.Plan}}, plan {{.R.Plan.Name}}{{end}}{{if .M.PostedBy}}; posted by {{.M.PostedBy}} from {{.M.Remote}}{{else if .M.Remote}}; posted from {{.M.Remote}}{{end}}</div>
{{if .S}}{{range .S.Flags}}<p class="flag"><span class="FAIL">{{.Kind}}</span> {{.Text}}</p>{{end}}{{end}}
<h2>What produced it</h2>
<table class="small"><tr><td>plan</td><td>{{if .R.Plan}}{{.R.Plan.Name}}{{end}} <span class="mono">{{.R.PlanSHA256}}</span></td></tr>
<tr><td>image</td><td>{{with .R.Build}}build <span class="mono">{{.ID}}</span>, linerate {{.Linerate}}, image sha256 <span class="mono">{{.ImageSHA256}}</span>, for kernel {{.Kernel}} (config <span class="mono">{{.KernelConfigSHA256}}</span>){{else}}-{{end}}</td></tr>
<tr><td>kernel</td><td>{{or .R.Kernel "-"}}</td></tr>
<tr><td>U-Boot</td><td>{{or .R.UBoot "- (not loaded by U-Boot)"}}</td></tr>
<tr><td>FPGA</td><td>{{with .R.FPGA}}{{.Manager}}: {{.State}}{{if .Firmware}}, {{.Firmware}}{{end}}{{else}}-{{end}}</td></tr>
<tr><td>operator</td><td>{{or .R.Operator "-"}}</td></tr>
<tr><td>station</td><td>{{if .S}}{{or .S.StationVersion "-"}}{{end}}</td></tr></table>
<p><a href="/api/reports/{{.R.ID}}">JSON</a> <a href="/api/reports/{{.R.ID}}/junit.xml">JUnit</a></p>
{{with .S}}<p>Attempt {{.Attempt}}{{if .Fixture}} on fixture {{.Fixture}}{{end}}{{with .Port}}; the station's port {{.Name}} over the test: {{if .Rose}}{{range $k, $v := .Rose}}{{$k}} +{{$v}} {{end}}{{else}}no error counter rose{{end}}{{end}}.</p>
{{if .DuplicateMAC}}<p class="dupmac"><span class="FAIL">duplicate MAC</span> {{$.R.MAC}} was reported before by {{range .DuplicateMAC}}{{.Board}} {{.Serial}} (first seen {{when .FirstSeen}}, <a href="/reports/{{.Report}}">report</a>) {{end}}</p>{{end}}{{end}}
{{if gt (len .History) 1}}<h2>This board's tests</h2><table><tr><th>attempt</th><th>received</th><th>verdict</th><th>failed steps</th><th>fixture</th></tr>
{{range .History}}<tr><td>{{.Attempt}}</td><td>{{when .Received}}</td><td><span class="{{.Verdict}}">{{.Verdict}}</span></td><td>{{join .Failed}}</td><td>{{.Fixture}}</td><td>{{if ne .ID $.R.ID}}<a href="/reports/{{.ID}}">report</a>{{else}}this one{{end}}</td></tr>
{{end}}</table>{{end}}
<h2>Steps</h2>
{{if .R.Ports}}<p>Ports: {{range .R.Ports}}<span class="nw">{{.Interface}} <span class="{{.Verdict}}">{{.Verdict}}</span>{{if .Failed}} ({{join .Failed}}){{end}}</span> {{end}}</p>{{end}}
<table><tr><th>step</th><th>type</th><th>port</th><th>result</th><th>measured against the threshold</th><th>why it failed</th><th>time</th></tr>
{{range .R.Steps}}{{range $i, $a := .Attempts}}<tr class="sub"><td>{{$a.ID}} (attempt {{inc $i}})</td><td>{{$a.Type}}</td><td>{{$a.Port}}</td><td><span class="{{res $a.Pass}}">{{res $a.Pass}}</span></td><td>{{$a.Summary}}</td><td>{{$a.Reason}}</td><td>{{printf "%.1f" $a.Seconds}}&nbsp;s</td></tr>
{{end}}<tr><td>{{.ID}}</td><td>{{.Type}}</td><td>{{.Port}}</td><td><span class="{{res .Pass}}">{{res .Pass}}</span></td><td>{{.Summary}}</td><td>{{.Reason}}{{range .LinkEvents}}<div class="sub">{{.}}</div>{{end}}</td><td>{{printf "%.1f" .Seconds}}&nbsp;s{{if gt .WindowS 0.0}}<div class="sub">window {{printf "%.1f" .WindowS}}&nbsp;s</div>{{end}}</td></tr>
{{end}}</table>
{{if .R.Figures}}<h2>Figures</h2><table>{{range $k, $v := .R.Figures}}<tr><td>{{$k}}</td><td>{{num $v}}</td></tr>{{end}}</table>{{end}}
{{range .Sweeps}}<h2>Sweep {{.ID}}</h2>{{.SVG}}{{end}}
<h2>Doctor</h2>
{{if .Findings}}<table><tr><th>port</th><th>severity</th><th>finding</th><th>why</th><th>fix</th></tr>
{{range .Findings}}<tr><td>{{.Port}}</td><td><span class="{{.Severity}}">{{.Severity}}</span></td><td>{{.ID}}</td><td>{{.Why}}</td><td>{{.Fix}}</td></tr>
{{end}}</table>{{else}}<p>No findings{{if not .HasDoctor}} (the report has no doctor step){{end}}.</p>{{end}}
</body></html>
`))

// reportPage is one report for a person: its steps, figures, sweeps drawn, and
// doctor's findings with the fix.
func (s *Server) reportPage(w http.ResponseWriter, req *http.Request) {
	r, ok := s.lookupReport(w, req)
	if !ok {
		return
	}
	type sweep struct {
		ID  string
		SVG template.HTML
	}
	var sweeps []sweep
	for _, st := range r.Steps {
		var res curve.Result
		if st.Type == "sweep" && json.Unmarshal(st.Detail, &res) == nil && len(res.Points) > 0 {
			var b bytes.Buffer
			res.WriteSVG(&b)
			sweeps = append(sweeps, sweep{st.ID, template.HTML(b.String())}) // escaped by WriteSVG
		}
	}
	// The doctor's findings: the report's own (one port), then each port's.
	findings, hasDoctor := doctorFindings(r.Doctor), len(r.Doctor) > 0
	for _, p := range r.Ports {
		findings, hasDoctor = append(findings, doctorFindings(p.Doctor)...), hasDoctor || len(p.Doctor) > 0
	}
	var sum *Summary
	if recs, err := s.store.summaries([]string{r.ID}); err == nil && len(recs) == 1 {
		sum = &recs[0].Summary
		sum.Attempt = s.attemptOf(sum.ID, sum.Attempt)
	}
	// The board's tests, oldest first: its attempts.
	var history []row
	s.withView(map[string]string{}, func(rows []*row, _ int) {
		for _, x := range rows {
			if x.Board == r.Board && x.Serial == r.Serial {
				history = append(history, *x)
			}
		}
	})
	slices.SortStableFunc(history, func(a, b row) int { return a.Started.Compare(b.Started) })
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'")
	err := reportTmpl.Execute(w, map[string]any{"R": r, "M": s.store.Meta(r.ID), "S": sum, "History": history, "Sweeps": sweeps, "Findings": findings, "HasDoctor": hasDoctor})
	if err != nil {
		s.log.Printf("report page %s: %v", r.ID, err)
	}
}

// finding is a doctor finding as the report page shows it (the report's JSON, read
// without doctor's package: the station takes in none of the board's code).
type finding struct {
	ID, Severity, Why, Fix string
	Port                   string `json:"-"` // the interface the doctor read
}

// doctorFindings are the findings of a report's doctor answer; a severity other than
// doctor's three reads as info.
func doctorFindings(raw []byte) []finding {
	var dr struct {
		Interfaces []struct {
			Name     string    `json:"name"`
			Findings []finding `json:"findings"`
		} `json:"interfaces"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &dr) != nil {
		return nil
	}
	var out []finding
	for _, i := range dr.Interfaces {
		for _, f := range i.Findings {
			if f.Severity != "fail" && f.Severity != "warn" {
				f.Severity = "info"
			}
			f.Port = i.Name
			out = append(out, f)
		}
	}
	return out
}
