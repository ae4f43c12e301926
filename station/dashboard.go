package station

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/zynqnet/linerate/curve"
	"github.com/zynqnet/linerate/internal/safecsv"
)

// Yield is first-pass yield of one board type on one day: of the serials first tested
// that day, how many passed their first test.
type Yield struct {
	Board  string  `json:"board"`
	Day    string  `json:"day"` // YYYY-MM-DD, the station's local time
	Tested int     `json:"tested"`
	Passed int     `json:"passed"`
	Pct    float64 `json:"pct"`
}

// FirstPassYield is the yield per board type and day, newest day first. A serial counts
// once, on the day of its first report, whatever its retests did.
func FirstPassYield(list []Summary) []Yield {
	first := map[string]Summary{} // board+serial -> first report
	for _, x := range list {      // oldest first
		k := x.Board + "\x00" + x.Serial
		if _, ok := first[k]; !ok {
			first[k] = x
		}
	}
	agg := map[[2]string]*Yield{}
	for _, x := range first {
		day := x.Received.Local().Format("2006-01-02")
		y := agg[[2]string{x.Board, day}]
		if y == nil {
			y = &Yield{Board: x.Board, Day: day}
			agg[[2]string{x.Board, day}] = y
		}
		y.Tested++
		if x.Verdict == "PASS" {
			y.Passed++
		}
	}
	var out []Yield
	for _, y := range agg {
		y.Pct = 100 * float64(y.Passed) / float64(y.Tested)
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

// ParetoRow is a failing step with how often it failed and the running share.
type ParetoRow struct {
	Step          string  `json:"step"`
	Count         int     `json:"count"`
	CumulativePct float64 `json:"cumulative_pct"`
}

// Pareto counts the failed steps of the reports, most frequent first.
func Pareto(list []Summary) []ParetoRow {
	n := map[string]int{}
	total := 0
	for _, x := range list {
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
	cw.Write(append([]string{"received", "id", "board", "serial", "mac", "verdict", "failed", "seconds", "posted_by", "remote"}, figs...))
	for _, x := range list {
		row := []string{x.Received.UTC().Format(time.RFC3339), x.ID, x.Board, x.Serial, x.MAC, x.Verdict, strings.Join(x.Failed, " "),
			strconv.FormatFloat(x.Seconds, 'f', 1, 64), x.PostedBy, x.Remote}
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
</style></head><body>
<p><a href="/">all reports</a></p>
<h1>{{.R.Board}} {{.R.Serial}} <span class="{{.R.Verdict}}">{{.R.Verdict}}</span></h1>
<div class="sub">{{.R.MAC}} on {{.R.Interface}}, started {{when .R.Started}}, {{printf "%.1f" .R.Seconds}} s, linerate {{.R.Linerate}}{{if .R.Plan}}, plan {{.R.Plan.Name}}{{end}}{{if .M.PostedBy}}; posted by {{.M.PostedBy}} from {{.M.Remote}}{{else if .M.Remote}}; posted from {{.M.Remote}}{{end}}</div>
<p><a href="/api/reports/{{.R.ID}}">JSON</a> <a href="/api/reports/{{.R.ID}}/junit.xml">JUnit</a></p>
<h2>Steps</h2>
<table><tr><th>step</th><th>type</th><th>result</th><th>measured against the threshold</th><th>why it failed</th><th>time</th></tr>
{{range .R.Steps}}<tr><td>{{.ID}}</td><td>{{.Type}}</td><td><span class="{{res .Pass}}">{{res .Pass}}</span></td><td>{{.Summary}}</td><td>{{.Reason}}</td><td>{{printf "%.1f" .Seconds}} s</td></tr>
{{end}}</table>
{{if .R.Figures}}<h2>Figures</h2><table>{{range $k, $v := .R.Figures}}<tr><td>{{$k}}</td><td>{{num $v}}</td></tr>{{end}}</table>{{end}}
{{range .Sweeps}}<h2>Sweep {{.ID}}</h2>{{.SVG}}{{end}}
<h2>Doctor</h2>
{{if .Findings}}<table><tr><th>severity</th><th>finding</th><th>why</th><th>fix</th></tr>
{{range .Findings}}<tr><td><span class="{{.Severity}}">{{.Severity}}</span></td><td>{{.ID}}</td><td>{{.Why}}</td><td>{{.Fix}}</td></tr>
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
	findings := doctorFindings(r.Doctor)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	reportTmpl.Execute(w, map[string]any{"R": r, "M": s.store.Meta(r.ID), "Sweeps": sweeps, "Findings": findings, "HasDoctor": len(r.Doctor) > 0})
}

// finding is a doctor finding as the report page shows it (the report's JSON, read
// without doctor's package: the station takes in none of the board's code).
type finding struct {
	ID, Severity, Why, Fix string
}

// doctorFindings are the findings of a report's doctor answer; a severity other than
// doctor's three reads as info.
func doctorFindings(raw []byte) []finding {
	var dr struct {
		Interfaces []struct {
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
			out = append(out, f)
		}
	}
	return out
}

// yieldTable and paretoTable are the page's line-lead views.
func yieldTable(ys []Yield) template.HTML {
	if len(ys) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(`<table class="small"><tr><th>day</th><th>board</th><th>first tested</th><th>passed first time</th><th>first-pass yield</th></tr>`)
	for i, y := range ys {
		if i == 30 {
			break
		}
		fmt.Fprintf(&b, `<tr><td>%s</td><td>%s</td><td>%d</td><td>%d</td><td>%.1f%%</td></tr>`, y.Day, template.HTMLEscapeString(y.Board), y.Tested, y.Passed, y.Pct)
	}
	b.WriteString(`</table>`)
	return template.HTML(b.String())
}

func paretoTable(ps []ParetoRow) template.HTML {
	if len(ps) == 0 {
		return template.HTML(`<p>No failed steps.</p>`)
	}
	max := ps[0].Count
	var b strings.Builder
	b.WriteString(`<table class="small"><tr><th>failing step</th><th>failures</th><th></th><th>cumulative</th></tr>`)
	for i, p := range ps {
		if i == 15 {
			break
		}
		fmt.Fprintf(&b, `<tr><td>%s</td><td>%d</td><td><svg width="160" height="12"><rect width="%.0f" height="12" fill="#c62828"/></svg></td><td>%.1f%%</td></tr>`,
			template.HTMLEscapeString(p.Step), p.Count, 160*float64(p.Count)/float64(max), p.CumulativePct)
	}
	b.WriteString(`</table>`)
	return template.HTML(b.String())
}
