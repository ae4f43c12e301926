package station

import (
	"fmt"
	"html/template"
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

var pageTmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"figs": func(f map[string]float64) string {
		var parts []string
		for _, k := range sortedKeys(f) {
			parts = append(parts, fmt.Sprintf("%s %s", k, trim(f[k])))
		}
		return strings.Join(parts, ", ")
	},
	"when": func(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") },
	"join": func(s []string) string { return strings.Join(s, ", ") },
	"sel":  func(a, b string) bool { return a == b },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>linerate station</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em;margin:0 0 .3em}
.sub{color:#666;margin-bottom:1em}
table{border-collapse:collapse;width:100%;font-size:.92em}
th,td{text-align:left;padding:.35em .6em;border-bottom:1px solid #ddd;vertical-align:top}
th{background:#f4f4f4}
.PASS{color:#fff;background:#2e7d32;padding:.1em .5em;border-radius:3px;font-weight:bold}
.FAIL{color:#fff;background:#c62828;padding:.1em .5em;border-radius:3px;font-weight:bold}
form{margin:1em 0}
form *{margin-right:.6em}
.chart{margin:1em 0}
.count{font-weight:bold}
h2{font-size:1.05em;margin:.8em 0 .3em}
.views{display:flex;gap:3em;flex-wrap:wrap;margin-bottom:1em}
table.small{width:auto}
</style></head><body>
<h1>linerate station</h1>
<div class="sub"><span class="count" id="count">{{len .Rows}}</span> of {{.Total}} reports{{if .Total}}: {{.Pass}} PASS, {{.Fail}} FAIL{{end}}</div>
<form method="get" action="/">
<label>board <select name="board"><option value="">all</option>{{range .Boards}}<option{{if sel . $.Q.board}} selected{{end}}>{{.}}</option>{{end}}</select></label>
<label>verdict <select name="verdict"><option value="">all</option><option{{if sel "PASS" $.Q.verdict}} selected{{end}}>PASS</option><option{{if sel "FAIL" $.Q.verdict}} selected{{end}}>FAIL</option></select></label>
<label>serial, MAC or id <input name="q" id="q" value="{{.Q.q}}" autocomplete="off"></label>
<label>from <input type="date" name="from" value="{{.Q.from}}"></label>
<label>to <input type="date" name="to" value="{{.Q.to}}"></label>
<button type="submit">filter</button>
<a href="/api/reports.csv?{{.QS}}">CSV of these reports</a>
</form>
<div class="chart">{{.Chart}}</div>
<div class="views">
<div><h2>First-pass yield</h2>{{.Yield}}</div>
<div><h2>Failing steps (Pareto)</h2>{{.Pareto}}</div>
</div>
<table id="reports"><thead><tr><th>received</th><th>board</th><th>serial</th><th>MAC</th><th>verdict</th><th>failed steps</th><th>key figures</th><th>time</th><th>reports</th></tr></thead><tbody>
{{range .Rows}}<tr data-text="{{.Serial}} {{.MAC}} {{.ID}} {{.Board}}"><td>{{when .Received}}</td><td>{{.Board}}</td><td>{{.Serial}}</td><td>{{.MAC}}</td><td><span class="{{.Verdict}}">{{.Verdict}}</span></td><td>{{join .Failed}}</td><td>{{figs .Figures}}</td><td>{{printf "%.1f" .Seconds}} s</td><td><a href="/reports/{{.ID}}">report</a> <a href="/api/reports/{{.ID}}">JSON</a> <a href="/api/reports/{{.ID}}/junit.xml">JUnit</a>{{$id := .ID}}{{range .Sweeps}} <a href="/api/reports/{{$id}}/sweep/{{.}}.svg">{{.}} chart</a>{{end}}</td></tr>
{{else}}<tr><td colspan="9">no reports{{if .Total}} match the filter{{end}}</td></tr>{{end}}
</tbody></table>
<script>
// Filter the rows as you type; the form does the same on the server without script.
document.getElementById('q').addEventListener('input', function (e) {
  var t = e.target.value.toLowerCase(), n = 0;
  document.querySelectorAll('#reports tbody tr[data-text]').forEach(function (r) {
    var show = r.dataset.text.toLowerCase().indexOf(t) >= 0;
    r.style.display = show ? '' : 'none';
    if (show) n++;
  });
  document.getElementById('count').textContent = n;
});
</script>
</body></html>
`))

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

func trim(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	return strings.TrimRight(strings.TrimRight(s, "0"), ".")
}

var palette = []string{"#1565c0", "#ef6c00", "#2e7d32", "#6a1b9a", "#c62828", "#00838f", "#5d4037", "#9e9d24"}

// chart draws TCP throughput per board type and direction over time as an inline SVG: a
// line per board type and direction (TCP up and TCP down apart; UDP runs at a set rate
// and is left out), a dot per report, red when the report failed.
func chart(list []Summary) template.HTML {
	type pt struct {
		t    time.Time
		v    float64
		fail bool
	}
	series := map[string][]pt{}
	var tmin, tmax time.Time
	vmax := 0.0
	for _, x := range list {
		for dir, v := range x.TCP {
			name := x.Board + " TCP " + dir
			series[name] = append(series[name], pt{x.Received, v, x.Verdict != "PASS"})
			if tmin.IsZero() || x.Received.Before(tmin) {
				tmin = x.Received
			}
			if x.Received.After(tmax) {
				tmax = x.Received
			}
			vmax = math.Max(vmax, v)
		}
	}
	if len(series) == 0 {
		return template.HTML(`<p>No TCP throughput yet: the chart shows the TCP iperf3 steps' Mbit/s per board type and direction over time.</p>`)
	}
	const W, H, L, R, T, B = 900.0, 260.0, 60.0, 150.0, 20.0, 40.0
	span := tmax.Sub(tmin).Seconds()
	if span == 0 {
		span = 1
	}
	vtop := niceCeil(vmax)
	x := func(t time.Time) float64 { return L + (W-L-R)*t.Sub(tmin).Seconds()/span }
	y := func(v float64) float64 { return T + (H-T-B)*(1-v/vtop) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" role="img" aria-label="throughput per board over time">`, W, H)
	fmt.Fprintf(&b, `<text x="%.0f" y="14" font-size="13">TCP throughput, Mbit/s</text>`, L)
	for i := 0; i <= 4; i++ {
		v := vtop * float64(i) / 4
		fmt.Fprintf(&b, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#e0e0e0"/><text x="%.0f" y="%.1f" font-size="11" text-anchor="end">%s</text>`, L, W-R, y(v), y(v), L-6, y(v)+4, trim(v))
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="11">%s</text><text x="%.0f" y="%.0f" font-size="11" text-anchor="end">%s</text>`,
		L, H-12, template.HTMLEscapeString(tmin.Local().Format("01-02 15:04")), W-R, H-12, template.HTMLEscapeString(tmax.Local().Format("01-02 15:04")))
	for i, name := range sortedKeys(series) {
		col := palette[i%len(palette)]
		var pts []string
		for _, p := range series[name] {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(p.t), y(p.v)))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`, col, strings.Join(pts, " "))
		for _, p := range series[name] {
			fill := col
			if p.fail {
				fill = "#c62828"
			}
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s %s Mbit/s</title></circle>`, x(p.t), y(p.v), fill, template.HTMLEscapeString(name), trim(p.v))
		}
		fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="10" height="10" fill="%s"/><text x="%.0f" y="%.0f" font-size="12">%s (%d)</text>`,
			W-R+12, T+float64(i)*18, col, W-R+26, T+float64(i)*18+9, template.HTMLEscapeString(name), len(series[name]))
	}
	fmt.Fprintf(&b, `<circle cx="%.0f" cy="%.0f" r="4" fill="#c62828"/><text x="%.0f" y="%.0f" font-size="12">FAIL report</text>`,
		W-R+17, T+float64(len(series))*18+5, W-R+26, T+float64(len(series))*18+9)
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func (s *Server) page(w http.ResponseWriter, req *http.Request) {
	all, err := s.store.List()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	q := query(req)
	rows := filter(all, q)
	pass := 0
	for _, x := range all {
		if x.Verdict == "PASS" {
			pass++
		}
	}
	// Newest first in the table.
	for i, j := 0, len(rows)-1; i < j; i, j = i+1, j-1 {
		rows[i], rows[j] = rows[j], rows[i]
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	// The line lead's views follow the board and time filters, not the verdict or a serial.
	scope := filter(all, map[string]string{"board": q["board"], "from": q["from"], "to": q["to"]})
	qs := url.Values{}
	for k, v := range q {
		if v != "" {
			qs.Set(k, v)
		}
	}
	pageTmpl.Execute(w, map[string]any{"Rows": rows, "Total": len(all), "Pass": pass, "Fail": len(all) - pass, "Boards": boardsOf(all), "Q": q, "QS": qs.Encode(),
		"Chart": chart(filter(all, map[string]string{"board": q["board"], "verdict": q["verdict"], "from": q["from"], "to": q["to"]})),
		"Yield": yieldTable(FirstPassYield(scope)), "Pareto": paretoTable(Pareto(scope))})
}
