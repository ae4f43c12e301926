package station

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"html/template"
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The line lead's page: the alarms, the boards in test now, the filters (each applying
// to every table), the throughput chart, yields, Pareto, pace, and the reports.

var pageTmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"figs": func(f map[string]float64) []figure {
		var parts []figure
		for _, k := range sortedKeys(f) {
			parts = append(parts, figureOf(k, f[k]))
		}
		return parts
	},
	"when":  func(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") },
	"join":  func(s []string) string { return strings.Join(s, ", ") },
	"sel":   func(a, b string) bool { return a == b },
	"more":  moreLink,
	"num":   trim,
	"secs":  func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + "\u00a0s" },
	"pct":   func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + "\u00a0%" },
	"dupOf": dupText,
	"limit": limitText,
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="60"><title>{{with .Line}}{{.}} - {{end}}linerate station</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em;margin:0 0 .3em}
.sub{color:#666;margin-bottom:1em}
table{border-collapse:collapse;width:100%;font-size:.92em}
th,td{text-align:left;padding:.35em .6em;border-bottom:1px solid #ddd;vertical-align:top}
th{background:#f4f4f4}
td.n,th.n{text-align:right;white-space:nowrap}
.nw{white-space:nowrap}
.PASS{color:#fff;background:#2e7d32;padding:.1em .5em;border-radius:3px;font-weight:bold}
.FAIL{color:#fff;background:#c62828;padding:.1em .5em;border-radius:3px;font-weight:bold}
.marginal{color:#000;background:#ffb300;padding:.1em .5em;border-radius:3px;font-weight:bold}
.flag{color:#fff;background:#6a1b9a;padding:.1em .4em;border-radius:3px;font-size:90%;white-space:nowrap}
.lost{color:#fff;background:#c62828;padding:.1em .5em;border-radius:3px}
.booting{color:#fff;background:#1565c0;padding:.1em .5em;border-radius:3px}
.testing{color:#fff;background:#1565c0;padding:.1em .5em;border-radius:3px}
tr.dup td.mac{color:#c62828;font-weight:bold}
.alarm{background:#c62828;color:#fff;padding:.6em 1em;margin:.5em 0;border-radius:4px}
.alarm form{display:inline;margin:0 0 0 1em}
.alarm code{background:#fff2;padding:0 .3em}
form.filters{margin:1em 0}
form.filters *{margin-right:.6em}
.chart{margin:1em 0}
.count{font-weight:bold}
h2{font-size:1.05em;margin:.8em 0 .3em}
.views{display:flex;gap:3em;flex-wrap:wrap;margin-bottom:1em}
table.small{width:auto}
.figs{display:grid;grid-template-columns:max-content max-content;column-gap:.6em;font-size:.9em}
.figs .v{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
td.serial{max-width:11em;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.tiles{display:flex;gap:1em;flex-wrap:wrap;margin:.4em 0 .8em}
.tile{background:#e8eaf6;border-radius:6px;padding:.5em 1.1em;min-width:10em}
.tile .v{font-size:1.9em;font-weight:bold}
.tile .l{color:#444;font-size:.9em}
.tile .s{color:#555;font-size:.8em}
.tile.low{background:#ef6c00;color:#fff}
.tile.red{background:#c62828;color:#fff}
.tile.low .l,.tile.low .s,.tile.red .l,.tile.red .s{color:#fff}
.banner a{color:#fff}
.top{display:flex;gap:1.5em;flex-wrap:wrap;align-items:flex-start}
.top table{font-size:.85em}
#live th{background:#e0f7fa}
#fixture-yield th{background:#fff3e0}
#yield th{background:#f1f8e9}
</style></head><body>
<h1>{{with .Line}}{{.}} &middot; {{end}}linerate station</h1>
<div class="tiles">{{range .Tiles}}<div class="tile{{with .Class}} {{.}}{{end}}"><div class="l">{{.Label}}</div><div class="v">{{.Value}}</div><div class="s">{{.Sub}}</div></div>{{end}}</div>
{{range .Alarms}}<div class="alarm" id="alarm-{{.ID}}"><b>ALARM</b> {{.Text}} (since {{when .Raised}})
<form method="post" action="/api/alarms/{{.ID}}/ack"><input type="hidden" name="csrf" value="{{$.CSRF}}"><button type="submit">acknowledge</button></form>{{if $.Tokens}} with a token: <code>curl -X POST -H 'Authorization: Bearer TOKEN' {{$.Base}}/api/alarms/{{.ID}}/ack</code>{{end}}</div>
{{end}}
{{range .Banners}}<div class="alarm banner"><b>{{.Text}}</b>: {{join .Serials}}{{if .More}} and {{.More}} more{{end}} (<a href="{{.Link}}">the reports</a>)</div>
{{end}}
{{if .FixtureStates}}<h2>Fixtures</h2><table class="small" id="fixtures"><tr><th>fixture</th><th>verified</th><th>last golden board</th><th class="n">boards since</th></tr>
{{range .FixtureStates}}<tr><td>{{.Fixture}}</td><td>{{if .Verified}}<span class="PASS">yes</span>{{else}}<span class="FAIL" title="{{.Why}}">no</span> {{.Why}}{{end}}</td><td>{{if .GoldenSerial}}{{.GoldenSerial}}, {{when .LastGolden}}{{else}}-{{end}}</td><td class="n">{{.Since}}</td></tr>{{end}}</table>{{more "fixtures" $.MoreRows $.QS}}{{end}}
<div class="sub"><span class="count" id="count">{{len .Rows}}</span> of {{.Selected}} reports shown ({{.Total}} stored){{if .Selected}}: {{.Pass}} PASS, {{.Fail}} FAIL{{end}}</div>
<div class="top">
<div><h2>Boards in test</h2>
<table class="small" id="live"><thead><tr><th>board</th><th>serial</th><th>MAC</th><th>fixture</th><th>step</th><th class="n">elapsed</th><th>state</th></tr></thead><tbody>
{{range .Live}}<tr><td>{{.Board}}</td><td class="serial" title="{{.Serial}}">{{.Serial}}</td><td>{{.MAC}}</td><td>{{.Fixture}}</td><td>{{.Index}}/{{.Steps}} {{.Step}}</td><td class="n">{{secs .Elapsed}}</td><td><span class="{{.State}}">{{.State}}</span></td></tr>
{{else}}<tr><td colspan="7">none</td></tr>{{end}}
</tbody></table>{{more "live" $.MoreRows $.QS}}</div>
<div><h2>Yield per fixture</h2>{{if .FixtureYield}}<table class="small" id="fixture-yield"><tr><th>fixture</th><th class="n">boards</th><th class="n">passed first time</th><th class="n">first-pass yield</th></tr>
{{range .FixtureYield}}<tr><td>{{.Fixture}}</td><td class="n">{{.Tested}}</td><td class="n">{{.Passed}}</td><td class="n">{{pct .Pct}}</td></tr>{{end}}</table>{{more "fixture-yield" $.MoreRows $.QS}}{{else}}<p>No boards yet.</p>{{end}}</div>
<div><h2>Yield</h2>{{if .Yield}}<table class="small" id="yield"><tr><th>day</th><th>board</th><th class="n">first tested</th><th class="n">passed first time</th><th class="n">first-pass yield</th><th class="n">marginal</th><th class="n">final yield</th></tr>
{{range .Yield}}<tr><td class="nw">{{.Day}}</td><td>{{.Board}}</td><td class="n">{{.Tested}}</td><td class="n">{{.Passed}}</td><td class="n">{{pct .Pct}}</td><td class="n">{{.Marginal}}</td><td class="n">{{pct .FinalPct}}</td></tr>{{end}}</table>{{more "yield" $.MoreRows $.QS}}{{else}}<p>No reports.</p>{{end}}</div>
</div>
<form class="filters" method="get" action="/">
<label>board <input name="board" list="boards" value="{{.Q.board}}" size="12" placeholder="all" autocomplete="off"></label><datalist id="boards">{{range .Boards}}<option value="{{.}}">{{end}}</datalist>
<label>verdict <select name="verdict"><option value="">all</option><option{{if sel "PASS" $.Q.verdict}} selected{{end}}>PASS</option><option{{if sel "FAIL" $.Q.verdict}} selected{{end}}>FAIL</option></select></label>
<label>fixture <input name="fixture" list="fixtures" value="{{.Q.fixture}}" size="10" placeholder="all" autocomplete="off"></label><datalist id="fixtures">{{range .Fixtures}}<option value="{{.}}">{{end}}</datalist>
<label>serial, MAC or id <input name="q" id="q" value="{{.Q.q}}" autocomplete="off"></label>
<label><input type="checkbox" name="duplicate" value="1"{{if .Q.duplicate}} checked{{end}}>duplicate MACs</label>
<label><input type="checkbox" name="retest" value="1"{{if .Q.retest}} checked{{end}}>retests</label>
<label>from <input type="date" name="from" value="{{.Q.from}}"></label>
<label>to <input type="date" name="to" value="{{.Q.to}}"></label>
<details{{if or .Q.operator .Q.build .Q.plan .Q.kernel .Q.uboot .Q.station_version}} open{{end}}><summary>what produced it</summary>
<label>operator <input name="operator" value="{{.Q.operator}}" size="10"></label>
<label>image build <input name="build" value="{{.Q.build}}" size="16"></label>
<label>plan sha256 <input name="plan" value="{{.Q.plan}}" size="16"></label>
<label>kernel <input name="kernel" value="{{.Q.kernel}}" size="12"></label>
<label>U-Boot <input name="uboot" value="{{.Q.uboot}}" size="12"></label>
<label>station <input name="station_version" value="{{.Q.station_version}}" size="10"></label>
</details>
<button type="submit">filter</button>
<a href="/api/reports.csv?{{.QS}}">CSV of these reports</a>
</form>
<div class="chart">{{.Chart}}</div>
<div class="views">
{{if .PortYield}}<div><h2>Per-port yield</h2><table class="small"><tr><th>board</th><th>port</th><th class="n">boards</th><th class="n">passed first time</th><th class="n">yield</th></tr>
{{range .PortYield}}<tr><td>{{.Board}}</td><td>{{.Port}}</td><td class="n">{{.Tested}}</td><td class="n">{{.Passed}}</td><td class="n">{{pct .Pct}}</td></tr>{{end}}</table>{{more "port-yield" $.MoreRows $.QS}}</div>{{end}}
<div><h2>Failing steps (Pareto)</h2>{{if .Pareto}}<table class="small"><tr><th>failing step</th><th class="n">failures</th><th></th><th class="n">cumulative</th></tr>
{{range .Pareto}}<tr><td>{{.Step}}</td><td class="n">{{.Count}}</td><td><svg width="160" height="12"><rect width="{{.Bar}}" height="12" fill="#c62828"/></svg></td><td class="n">{{pct .CumulativePct}}</td></tr>{{end}}</table>{{more "pareto" $.MoreRows $.QS}}{{else}}<p>No failed steps.</p>{{end}}</div>
<div><h2>Pace</h2><table class="small"><tr><th>board</th><th class="n">reports</th><th class="n">median test time</th><th class="n">p90</th></tr>
{{range .Pace}}<tr><td>{{.Board}}</td><td class="n">{{.Reports}}</td><td class="n">{{secs .Median}}</td><td class="n">{{secs .P90}}</td></tr>{{end}}</table>{{more "pace" $.MoreRows $.QS}}
<p>Today ({{.Hours.Day}}): {{.Hours.Reports}} reports, {{num .Hours.PerHour}} an hour.</p>{{.HourChart}}</div>
<div><h2>Time per step</h2><table class="small"><tr><th>step</th><th class="n">runs</th><th class="n">median</th><th class="n">p90</th></tr>
{{range .Steps}}<tr><td>{{.Step}}</td><td class="n">{{.Runs}}</td><td class="n">{{secs .Median}}</td><td class="n">{{secs .P90}}</td></tr>{{end}}</table>{{more "steps" $.MoreRows $.QS}}</div>
</div>
{{if .Capability}}<h2>Capability</h2><table class="small" id="capability"><tr><th>board</th><th>measurement</th><th class="n">boards</th><th class="n">median</th><th class="n">robust &sigma;</th><th class="n">p1..p99</th><th>plan's limit</th><th class="n">Cpk</th><th>population's limits</th></tr>
{{range .Capability}}<tr><td>{{.Board}}</td><td>{{.Measurement}}</td><td class="n">{{.N}}</td><td class="n">{{num .Median}}&nbsp;{{.Unit}}</td><td class="n">{{num .RobustSigma}}</td><td class="n">{{num .P1}}..{{num .P99}}</td><td>{{limit .Low .High}}</td><td class="n">{{with .Cpk}}{{printf "%.2f" .}}{{else}}-{{end}}</td><td>{{if .DPATLow}}{{limit .DPATLow .DPATHigh}}{{else}}after {{.N}} of 30 boards{{end}}</td></tr>{{end}}</table>{{more "capability" $.MoreRows $.QS}}{{end}}
<table id="reports"><thead><tr><th>received</th><th>board</th><th>serial</th><th>MAC</th><th class="n">attempt</th><th>fixture</th><th>verdict</th><th>failed steps</th><th>key figures</th><th class="n">time</th><th>reports</th></tr></thead><tbody>
{{range .Rows}}<tr{{if .DuplicateMAC}} class="dup"{{end}} data-text="{{.Serial}} {{.MAC}} {{.ID}} {{.Board}} {{.Fixture}}"><td class="nw">{{when .Received}}</td><td>{{.Board}}</td><td class="serial" title="{{.Serial}}">{{.Serial}}</td><td class="mac"{{if .DuplicateMAC}} title="{{dupOf .DuplicateMAC}}"{{end}}>{{.MAC}}{{if .DuplicateMAC}} (duplicate){{end}}</td><td class="n">{{.Attempt}}</td><td>{{.Fixture}}</td><td><span class="{{.Verdict}}">{{.Verdict}}</span>{{if .Marginal}} <span class="marginal" title="{{join .Marginal}}">marginal</span>{{end}}{{range .Flags}} <span class="flag" title="{{.Text}}">{{.Kind}}</span>{{end}}{{range .Ports}} <span class="nw">{{.Interface}}&nbsp;<span class="{{.Verdict}}">{{.Verdict}}</span></span>{{end}}</td><td>{{join .Failed}}</td><td><div class="figs">{{range figs .Figures}}<span class="k">{{.Name}}</span><span class="v">{{.Value}}</span>{{end}}</div></td><td class="n">{{secs .Seconds}}</td><td class="nw"><a href="/reports/{{.ID}}">report</a> <a href="/api/reports/{{.ID}}">JSON</a> <a href="/api/reports/{{.ID}}/junit.xml">JUnit</a>{{$id := .ID}}{{range .Sweeps}} <a href="/api/reports/{{$id}}/sweep/{{.}}.svg">{{.}} chart</a>{{end}}</td></tr>
{{else}}<tr><td colspan="11">no reports{{if .Total}} match the filter{{end}}</td></tr>{{end}}
</tbody></table>
{{if gt .Selected (len .Rows)}}<p>The newest {{len .Rows}} of {{.Selected}}: <a href="/?{{.QS}}&amp;limit={{.More}}">show {{.More}}</a>, or the CSV for all.</p>{{end}}
<script nonce="{{.Nonce}}">
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
// The boards in test, every two seconds, without a reload: text only, never markup.
function cell(tr, text, cls) {
  var td = document.createElement('td');
  if (cls) { var s = document.createElement('span'); s.className = cls; s.textContent = text; td.appendChild(s); }
  else td.textContent = text;
  tr.appendChild(td);
  return td;
}
function refreshLive() {
  fetch('/api/live', {headers: {'Accept': 'application/json'}}).then(function (r) { return r.ok ? r.json() : null; }).then(function (list) {
    if (!list) return;
    var body = document.querySelector('#live tbody');
    while (body.firstChild) body.removeChild(body.firstChild);
    if (list.length === 0) { var tr = document.createElement('tr'); cell(tr, 'none').colSpan = 7; body.appendChild(tr); return; }
    list.slice(0, {{.LiveRows}}).forEach(function (b) {
      var tr = document.createElement('tr');
      cell(tr, b.board);
      var sc = cell(tr, b.serial); sc.className = 'serial'; sc.title = b.serial;
      cell(tr, b.mac); cell(tr, b.fixture || '');
      cell(tr, (b.step_index || 0) + '/' + b.steps + ' ' + (b.step || ''));
      cell(tr, b.elapsed_s.toFixed(1) + '\u00a0s').className = 'n';
      cell(tr, b.state, b.state === 'lost' ? 'lost' : b.state === 'booting' ? 'booting' : 'testing');
      body.appendChild(tr);
    });
  }).catch(function () {});
}
setInterval(refreshLive, 2000);
</script>
</body></html>
`))

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

func trim(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	return strings.TrimRight(strings.TrimRight(s, "0"), ".")
}

// figure is a figure as a person reads it, its name and its value with its unit.
type figure struct{ Name, Value string }

// figureOf reads tcp-up_mbps as "tcp-up" and "941.2 Mbit/s", frames_p99_us as "frames
// p99" and "2361 µs".
func figureOf(k string, v float64) figure {
	units := []struct{ suffix, unit string }{{"_mbps", "Mbit/s"}, {"_pct", "%"}, {"_us", "µs"}, {"_ms", "ms"}, {"_s", "s"}, {"_bytes", "B"}}
	for _, u := range units {
		if name, ok := strings.CutSuffix(k, u.suffix); ok {
			return figure{strings.ReplaceAll(name, "_", " "), trim(v) + "\u00a0" + u.unit}
		}
	}
	return figure{strings.ReplaceAll(k, "_", " "), trim(v)}
}

// figureText is a figure in one line: "tcp-up 941.2 Mbit/s".
func figureText(k string, v float64) string {
	f := figureOf(k, v)
	return f.Name + " " + f.Value
}

// dupText names the other boards of a duplicate MAC.
func dupText(uses []MACUse) string {
	var parts []string
	for _, u := range uses {
		parts = append(parts, fmt.Sprintf("also %s %s, first seen %s", u.Board, u.Serial, u.FirstSeen.Local().Format("2006-01-02 15:04")))
	}
	return strings.Join(parts, "; ")
}

var palette = []string{"#1565c0", "#ef6c00", "#2e7d32", "#6a1b9a", "#c62828", "#00838f", "#5d4037", "#9e9d24"}

// chart draws TCP throughput per board type and direction over time as an inline SVG: a
// line per board type and direction (TCP up and TCP down apart; UDP runs at a set rate
// and is left out), a dot per report, red when the report failed; the legend below the
// plot, as wide as the chart, so no name is cut.
func chart(rows []*row) template.HTML {
	series, count, tmin, tmax, vmax := chartSeries(rows)
	if len(series) == 0 {
		return template.HTML(`<p>No TCP throughput yet: the chart shows the TCP iperf3 steps' Mbit/s per board type and direction over time.</p>`)
	}
	names := sortedKeys(series)
	// At most maxSeries lines, those of the most reports: more is a legend nobody reads
	// and a chart of megabytes; the rest is said under the legend.
	var left int
	if len(names) > maxSeries {
		slices.SortStableFunc(names, func(a, b string) int { return count[b] - count[a] })
		left = len(names) - maxSeries
		names = names[:maxSeries]
		slices.Sort(names)
	}
	for _, name := range names {
		series[name] = thin(series[name], tmin, tmax)
	}
	span := tmax.Sub(tmin).Seconds()
	if span == 0 {
		span = 1
	}
	pb := plotBox{tmin: tmin, span: span, vtop: niceCeil(vmax)}
	legend := float64(len(names)+1) * 18
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" role="img" aria-label="throughput per board over time">`, plotW, plotT+plotH+40+legend)
	fmt.Fprintf(&b, `<text x="%.0f" y="14" font-size="13">TCP throughput, Mbit/s</text>`, plotL)
	pb.axes(&b, tmax)
	for i, name := range names {
		pb.series(&b, i, name, series[name], count[name])
	}
	ly := plotT + plotH + 40 + float64(len(names))*18
	fmt.Fprintf(&b, `<circle cx="%.0f" cy="%.0f" r="4" fill="#c62828"/><text x="%.0f" y="%.0f" font-size="12">FAIL report</text>`, plotL+5, ly+5, plotL+14, ly+9)
	if left > 0 {
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="12">%d more series with fewer reports not drawn: filter by board type</text>`, plotL+120, ly+9, left)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// chartGap is the idle time that breaks a chart's line.
const chartGap = time.Hour

// maxSeries bounds the chart's lines.
const maxSeries = 12

// The chart's geometry: its width, the plot's left and right margins, top and height.
const plotW, plotL, plotR, plotT, plotH = 900.0, 60.0, 20.0, 24.0, 200.0

// plotBox maps times and values to the chart's plot.
type plotBox struct {
	tmin       time.Time
	span, vtop float64
}

func (pb plotBox) x(t time.Time) float64 {
	return plotL + (plotW-plotL-plotR)*t.Sub(pb.tmin).Seconds()/pb.span
}
func (pb plotBox) y(v float64) float64 { return plotT + plotH*(1-v/pb.vtop) }

// axes draws the value grid and the time ticks up to tmax.
func (pb plotBox) axes(b *strings.Builder, tmax time.Time) {
	for i := 0; i <= 4; i++ {
		v := pb.vtop * float64(i) / 4
		fmt.Fprintf(b, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#e0e0e0"/><text x="%.0f" y="%.1f" font-size="11" text-anchor="end">%s</text>`, plotL, plotW-plotR, pb.y(v), pb.y(v), plotL-6, pb.y(v)+4, trim(v))
	}
	for _, tk := range timeTicks(pb.tmin, tmax, 5) {
		x, anchor := pb.x(tk.t), "middle"
		switch {
		case x < plotL+30:
			anchor = "start"
		case x > plotW-plotR-30:
			anchor = "end"
		}
		fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="%.0f" y2="%.0f" stroke="#999"/><text x="%.1f" y="%.0f" font-size="11" text-anchor="%s">%s</text>`,
			x, x, plotT+plotH, plotT+plotH+4, x, plotT+plotH+16, anchor, template.HTMLEscapeString(tk.label))
	}
}

// series draws the i-th series, its line, a dot per report (red when it failed) and its
// legend line with n reports.
func (pb plotBox) series(b *strings.Builder, i int, name string, pts []chartPt, n int) {
	col := palette[i%len(palette)]
	// A line joins the reports of a stretch of work; an idle gap over an hour (a night,
	// a line stop) breaks it, so no line is drawn across hours without a report.
	var xy []string
	flush := func() {
		if len(xy) > 0 {
			fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`, col, strings.Join(xy, " "))
		}
		xy = xy[:0]
	}
	for j, p := range pts {
		if j > 0 && p.t.Sub(pts[j-1].t) > chartGap {
			flush()
		}
		xy = append(xy, fmt.Sprintf("%.1f,%.1f", pb.x(p.t), pb.y(p.v)))
	}
	flush()
	for _, p := range pts {
		fill := col
		if p.fail {
			fill = "#c62828"
		}
		fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s %s Mbit/s</title></circle>`, pb.x(p.t), pb.y(p.v), fill, template.HTMLEscapeString(name), trim(p.v))
	}
	ly := plotT + plotH + 40 + float64(i)*18
	fmt.Fprintf(b, `<rect x="%.0f" y="%.0f" width="10" height="10" fill="%s"/><text x="%.0f" y="%.0f" font-size="12">%s (%d report%s)</text>`,
		plotL, ly, col, plotL+14, ly+9, template.HTMLEscapeString(name), n, map[bool]string{true: "", false: "s"}[n == 1])
}

// chartPt is one report's figure on the chart.
type chartPt struct {
	t    time.Time
	v    float64
	fail bool
}

// chartSeries is the chart's data: a series per board type (and port, for a multi-port
// report) and direction ("zc702 TCP up", "zcu102 eth1 TCP up") in the order of the rows,
// its number of reports, the time span and the top value.
func chartSeries(rows []*row) (series map[string][]chartPt, count map[string]int, tmin, tmax time.Time, vmax float64) {
	series, count = map[string][]chartPt{}, map[string]int{}
	for _, x := range rows {
		figs := []portFigure{{"TCP up", x.TCPUp}, {"TCP down", x.TCPDown}}
		if len(x.PortTCP) > 0 {
			figs = x.PortTCP // a multi-port report: a line per port and direction
		}
		for _, d := range figs {
			if math.IsNaN(d.V) {
				continue
			}
			name := x.Board + " " + d.Name
			series[name] = append(series[name], chartPt{x.Received, d.V, x.Verdict != "PASS"})
			count[name]++
			if tmin.IsZero() || x.Received.Before(tmin) {
				tmin = x.Received
			}
			if x.Received.After(tmax) {
				tmax = x.Received
			}
			vmax = math.Max(vmax, d.V)
		}
	}
	return series, count, tmin, tmax, vmax
}

// thin draws a series of more than a few hundred reports as the mean of each of
// maxPoints stretches of time (red when a report in it failed): a point per report of
// a year would be a page of megabytes that says less.
func thin(pts []chartPt, tmin, tmax time.Time) []chartPt {
	const maxPoints = 300
	if len(pts) <= maxPoints {
		return pts
	}
	var out []chartPt
	width := tmax.Sub(tmin) / maxPoints
	for start := 0; start < len(pts); {
		end := start
		edge := pts[start].t.Add(width)
		sum, fail := 0.0, false
		for end < len(pts) && (pts[end].t.Before(edge) || end == start) {
			sum += pts[end].v
			fail = fail || pts[end].fail
			end++
		}
		out = append(out, chartPt{pts[start].t, sum / float64(end-start), fail})
		start = end
	}
	return out
}

// tick is a time axis mark.
type tick struct {
	t     time.Time
	label string
}

// timeTicks are up to n marks between a and b, labelled as finely as the span needs
// (seconds within minutes, minutes within a day, days beyond), no two labels alike.
func timeTicks(a, b time.Time, n int) []tick {
	span := b.Sub(a)
	layout := "01-02"
	switch {
	case span < 2*time.Minute:
		layout = "15:04:05"
	case span < 24*time.Hour:
		layout = "15:04"
	case span < 7*24*time.Hour:
		layout = "01-02 15:04"
	}
	var out []tick
	for i := 0; i < n; i++ {
		t := a.Add(time.Duration(float64(span) * float64(i) / float64(n-1)))
		l := t.Local().Format(layout)
		if len(out) > 0 && out[len(out)-1].label == l {
			continue
		}
		out = append(out, tick{t, l})
		if span == 0 {
			break
		}
	}
	return out
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

// hourChart draws today's reports per hour as 24 bars.
func hourChart(h Hours, target float64) template.HTML {
	top := 1.0
	for _, n := range h.ByHour {
		top = math.Max(top, float64(n))
	}
	top = niceCeil(math.Max(top, target*1.1))
	const left, bottom, height = 28.0, 52.0, 50.0
	y := func(v float64) float64 { return bottom - height*v/top }
	var b strings.Builder
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" width="344" height="70" role="img" aria-label="tests per hour today">`)
	for _, v := range []float64{0, top / 2, top} {
		fmt.Fprintf(&b, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#e0e0e0"/><text x="%.0f" y="%.1f" font-size="9" text-anchor="end">%s</text>`, left, left+24*13, y(v), y(v), left-3, y(v)+3, trim(v))
	}
	for i, n := range h.ByHour {
		bh := height * float64(n) / top
		fmt.Fprintf(&b, `<rect x="%.0f" y="%.1f" width="11" height="%.1f" fill="#1565c0"><title>%02d:00 %d tests</title></rect>`, left+float64(i*13), bottom-bh, bh, i, n)
		if i%6 == 0 {
			fmt.Fprintf(&b, `<text x="%.0f" y="66" font-size="10">%02d</text>`, left+float64(i*13), i)
		}
	}
	if target > 0 {
		fmt.Fprintf(&b, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#ef6c00" stroke-width="1.5" stroke-dasharray="4 3"><title>target %s an hour</title></line>`, left, left+24*13, y(target), y(target), trim(target))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// newNonce is a CSP nonce: the page's own script runs, no other.
func newNonce() string {
	b := make([]byte, 16)
	rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// pageRows is how many reports the page lists by default (the CSV has them all).
const pageRows = 200

// pageTables is what the page's tables and charts show of the rows a query selects,
// read under the index's read lock.
type pageTables struct {
	ids                      []string // the rows listed, newest first
	total, selected, pass    int
	pareto                   []paretoBar
	yields                   []Yield
	portYields               []PortYield
	boards                   []Pace
	steps                    []StepPace
	hours                    Hours
	chart                    template.HTML
	boardNames, fixtureNames []string
	alarms                   []Alarm
	fixtures                 []fixtureState // with golden boards: their verifications
	capability               []Capability
	// more are how many rows each table has past those shown (/api/tables/NAME).
	more map[string]int
	// The line lead's glance: today's tiles, banners and the yield per fixture.
	tiles        []tile
	banners      []banner
	fixtureYield []FixtureYield
}

// paretoBar is a row of the failures' Pareto with its bar's length.
type paretoBar struct {
	ParetoRow
	Bar float64
}

// tables reads what the page needs of rows (under the index's read lock); limit is
// how many reports it lists.
func (s *Server) tables(rows []*row, total, limit int) pageTables {
	t := pageTables{total: total, selected: len(rows), ids: make([]string, 0, min(limit, len(rows)))}
	for i := len(rows) - 1; i >= 0 && len(t.ids) < limit; i-- {
		t.ids = append(t.ids, rows[i].ID)
	}
	for _, x := range rows {
		if x.Verdict == "PASS" {
			t.pass++
		}
	}
	t.more = map[string]int{}
	par, more := cut(pareto(rows), tableRows["pareto"])
	t.more["pareto"] = more
	for _, p := range par {
		t.pareto = append(t.pareto, paretoBar{p, 160 * float64(p.Count) / float64(max(par[0].Count, 1))})
	}
	t.yields, t.more["yield"] = cut(yields(rows), tableRows["yield"])
	t.portYields, t.more["port-yield"] = cut(portYields(rows), tableRows["port-yield"])
	boards, steps := paces(rows, s.idx.steps)
	t.boards, t.more["pace"] = cut(boards, tableRows["pace"])
	t.steps, t.more["steps"] = cut(steps, tableRows["steps"])
	t.hours = hours(rows, time.Now())
	t.tiles, t.banners = todayTiles(rows, t.hours, s.opts.Target, time.Now()), banners(rows, time.Now())
	t.fixtureYield, t.more["fixture-yield"] = cut(fixtureYields(rows), tableRows["fixture-yield"])
	t.chart = chart(rows)
	t.boardNames, t.fixtureNames = choices(s.idx.boards), choices(s.idx.fixtureNames)
	t.alarms = s.idx.alarms.list()
	if s.opts.Golden != nil {
		t.fixtures, t.more["fixtures"] = cut(s.fixtureList(time.Now()), tableRows["fixtures"])
	}
	t.capability, t.more["capability"] = cut(s.idx.pop.capabilities("", s.opts.Sigmas), tableRows["capability"])
	return t
}

// moreLink says how many rows a table has past those shown, with the link to all of
// them under the page's filters ("": none).
func moreLink(name string, more map[string]int, qs template.URL) template.HTML {
	n := more[name]
	if n == 0 {
		return ""
	}
	u := "/api/tables/" + name + "?" + string(qs)
	if name == "live" {
		u = "/api/live"
	}
	return template.HTML(fmt.Sprintf(`<p class="sub">%d more: <a href="%s">all of them</a> (JSON, paged with offset and limit)</p>`, n, template.HTMLEscapeString(u)))
}

// choices are a filter's suggestions: the first maxChoices names in order (the search
// box takes any other).
func choices(names map[string]bool) []string {
	out, _ := cut(sortedKeys(names), maxChoices)
	return out
}

func (s *Server) page(w http.ResponseWriter, req *http.Request) {
	q := query(req)
	limit := pageRows
	if n, err := strconv.Atoi(req.URL.Query().Get("limit")); err == nil && n > 0 {
		limit = min(n, 10*pageRows)
	}
	// Everything the tables need, under the index's read lock; then the store for the
	// rows shown, and the page, without it.
	var t pageTables
	if err := s.withView(q, func(rows []*row, total int) { t = s.tables(rows, total, limit) }); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	ids, total, selected, pass := t.ids, t.total, t.selected, t.pass
	par, ys, pys, boards, steps, hrs, svg := t.pareto, t.yields, t.portYields, t.boards, t.steps, t.hours, t.chart
	boardNames, fixtureNames, alarms := t.boardNames, t.fixtureNames, t.alarms

	shown, err := summaries(s.store.summaries(ids))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	qs := url.Values{}
	for k, v := range q {
		if v != "" {
			qs.Set(k, v)
		}
	}
	all := s.live.list(time.Now())
	inTest := 0
	for _, b := range all {
		if b.State != "lost" {
			inTest++
		}
	}
	live, liveMore := cut(all, tableRows["live"])
	t.more["live"] = liveMore
	t.tiles = append(t.tiles, tile{Label: "boards in test", Value: strconv.Itoa(inTest), Sub: fmt.Sprintf("%d lost", len(all)-inTest)},
		tile{Label: "open alarms", Value: strconv.Itoa(len(t.alarms)), Sub: "fixtures suspect", Class: map[bool]string{true: "red"}[len(t.alarms) > 0]})
	nonce, csrf := newNonce(), s.formToken(s.session(w, req))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-"+nonce+"'; connect-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	err = pageTmpl.Execute(w, map[string]any{"Rows": shown, "Selected": selected, "Total": total, "Pass": pass, "Fail": selected - pass,
		"Boards": boardNames, "Fixtures": fixtureNames,
		"Q": q, "QS": template.URL(qs.Encode()), "MoreRows": t.more, "More": min(selected, 10*pageRows), "Alarms": alarms, "Tokens": s.write != nil, "Base": "http://" + req.Host,
		"Nonce": nonce, "CSRF": csrf, "Line": s.opts.Line, "LiveRows": tableRows["live"], "Tiles": t.tiles, "Banners": t.banners, "FixtureYield": t.fixtureYield, "Live": live, "FixtureStates": t.fixtures, "Capability": t.capability, "Chart": svg, "Yield": ys, "PortYield": pys, "Pareto": par, "Pace": boards, "Steps": steps, "Hours": hrs, "HourChart": hourChart(hrs, s.opts.Target)})
	if err != nil {
		s.log.Printf("page: %v", err)
	}
}
