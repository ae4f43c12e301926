package curve

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Written by hand: an SVG chart is a few elements, and no kept Go library draws one
// without pulling in a plotting stack. Every text and attribute value goes through
// encoding/xml's escaping in svgw: what a posted report names (a knob, a value, a column
// key, an error) can never become markup in the station's pages.

// svgw writes SVG elements: names and attribute keys are the code's own constants, every
// value is escaped.
type svgw struct{ b strings.Builder }

func (w *svgw) esc(s string) {
	xml.EscapeText(&w.b, []byte(s)) // never fails on a strings.Builder
}

// open writes <name k="v" ...>, attrs as key, value pairs; self closes it (/>).
func (w *svgw) open(name string, self bool, attrs ...string) {
	w.b.WriteString("<" + name)
	for i := 0; i+1 < len(attrs); i += 2 {
		w.b.WriteString(" " + attrs[i] + `="`)
		w.esc(attrs[i+1])
		w.b.WriteString(`"`)
	}
	if self {
		w.b.WriteString("/>\n")
		return
	}
	w.b.WriteString(">")
}

// text writes <name attrs>text</name>, the text escaped, with an optional <title>.
func (w *svgw) text(name, text, title string, attrs ...string) {
	w.open(name, false, attrs...)
	if title != "" {
		w.b.WriteString("<title>")
		w.esc(title)
		w.b.WriteString("</title>")
	}
	w.esc(text)
	w.b.WriteString("</" + name + ">\n")
}

func f1(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

// unit is a column's unit as a chart shows it (µs, not us).
func unit(u string) string {
	if u == "us" {
		return "µs"
	}
	return u
}

// axes picks what the chart draws: throughput (or, without TCP, the loss) on the left
// axis, the round trip's p99 (or, without frames, the retransmits) on the right.
func (r *Result) axes() (left, right []Column) {
	pick := func(prefix string) []Column {
		var cs []Column
		for _, c := range r.Columns {
			if strings.HasPrefix(c.Key, prefix) {
				cs = append(cs, c)
			}
		}
		return cs
	}
	if left = pick("tcp_mbps"); len(left) == 0 {
		left = pick("loss_pct_")
	}
	if right = pick("p99_us_"); len(right) == 0 {
		right = pick("tcp_retransmits")
	}
	return left, right
}

// Categorical says the knob's values are names (on/off, governors), not quantities: the
// chart draws them as marks over each value, not as a line that suggests values between.
func (r *Result) Categorical() bool {
	for _, p := range r.Points {
		if _, err := strconv.ParseFloat(p.Value, 64); err != nil {
			return true
		}
	}
	return false
}

// tick is an axis label: whole numbers without decimals.
func tick(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return fmt.Sprintf("%.0f", x)
	}
	return Num(x)
}

// niceMax rounds up to 1, 2 or 5 times a power of ten, so the axis ticks read well.
func niceMax(x float64) float64 {
	if x <= 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if x <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// chart is one drawing's geometry.
type chart struct {
	w                    svgw
	W, H, l, top, pw, ph float64
	n                    int
}

const legendItem = 175.0 // px per legend entry

func (c *chart) x(i int) float64 {
	if c.n <= 1 {
		return c.l + c.pw/2
	}
	return c.l + c.pw*(0.06+0.88*float64(i)/float64(c.n-1)) // inset: the end labels fit
}

// WriteSVG draws the figures against the knob's values: a series per figure (a line, or
// marks alone for categorical values), the left and right axes each with its unit, a
// legend that wraps onto as many rows as it needs, the points that failed marked.
func (r *Result) WriteSVG(w io.Writer) error {
	left, right := r.axes()
	series := len(left) + len(right)
	const W, l, rt, bot = 760.0, 70.0, 70.0, 60.0
	perRow := int(math.Floor((W - l - rt) / legendItem))
	rows := max(1, (series+perRow-1)/perRow)
	top := 44.0 + 18*float64(rows)
	c := &chart{W: W, H: top + 300 + bot, l: l, top: top, pw: W - l - rt, ph: 300, n: len(r.Points)}
	lmax, rmax := r.scale(left), r.scale(right)
	c.w.b.WriteString(fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g" font-family="sans-serif" font-size="12">`+"\n", c.W, c.H, c.W, c.H))
	c.w.open("rect", true, "width", "100%", "height", "100%", "fill", "white")
	c.w.text("text", "sweep of "+r.Knob+" on "+r.Iface, "", "x", f1(l), "y", "22", "font-size", "15", "font-weight", "bold")
	r.grid(c, left, right, lmax, rmax)
	colors := []string{"#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#d62728", "#ff7f0e", "#e377c2", "#17becf"}
	k := 0
	for _, side := range []struct {
		cs   []Column
		max  float64
		dash string
	}{{left, lmax, ""}, {right, rmax, "5,3"}} {
		for _, col := range side.cs {
			r.series(c, col, side.max, colors[k%len(colors)], side.dash, k)
			k++
		}
	}
	c.w.b.WriteString("</svg>\n")
	_, err := io.WriteString(w, c.w.b.String())
	return err
}

// scale is the axis maximum for the columns: the largest median plus half its spread.
func (r *Result) scale(cs []Column) float64 {
	m := 0.0
	for _, p := range r.Points {
		for _, c := range cs {
			if v, ok := p.Median[c.Key]; ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
				m = math.Max(m, v+p.Spread[c.Key]/2)
			}
		}
	}
	return niceMax(m)
}

// grid draws the grid, both axes' ticks and labels, the knob's values and the failures.
func (r *Result) grid(c *chart, left, right []Column, lmax, rmax float64) {
	for i := 0; i <= 5; i++ {
		y := c.top + c.ph - c.ph*float64(i)/5
		c.w.open("line", true, "x1", f1(c.l), "y1", f1(y), "x2", f1(c.l+c.pw), "y2", f1(y), "stroke", "#ddd")
		if len(left) > 0 {
			c.w.text("text", tick(lmax*float64(i)/5), "", "x", f1(c.l-6), "y", f1(y+4), "text-anchor", "end")
		}
		if len(right) > 0 {
			c.w.text("text", tick(rmax*float64(i)/5), "", "x", f1(c.l+c.pw+6), "y", f1(y+4))
		}
	}
	c.w.open("rect", true, "x", f1(c.l), "y", f1(c.top), "width", f1(c.pw), "height", f1(c.ph), "fill", "none", "stroke", "#333")
	axisLabel := func(cs []Column, xpos float64, rot int) {
		if len(cs) == 0 {
			return
		}
		name := strings.SplitN(cs[0].Key, "_", 2)[0]
		c.w.text("text", name+" ("+unit(cs[0].Unit)+")", "", "transform", fmt.Sprintf("translate(%g,%g) rotate(%d)", xpos, c.top+c.ph/2, rot), "text-anchor", "middle")
	}
	axisLabel(left, 18, -90)
	axisLabel(right, c.W-14, 90)
	for i, p := range r.Points {
		c.w.text("text", p.Value, "", "x", f1(c.x(i)), "y", f1(c.top+c.ph+18), "text-anchor", "middle")
		if p.Error != "" {
			c.w.text("text", "✕", p.Error, "x", f1(c.x(i)), "y", f1(c.top+c.ph-4), "text-anchor", "middle", "fill", "#c00")
		}
	}
	c.w.text("text", r.Knob, "", "x", f1(c.l+c.pw/2), "y", f1(c.H-14), "text-anchor", "middle")
}

// series draws one column: its marks with spread bars, the line through them (unless the
// values are categorical) and its legend entry (the k-th).
func (r *Result) series(c *chart, col Column, max float64, color, dash string, k int) {
	var pts []string
	for i, p := range r.Points {
		v, ok := p.Median[col.Key]
		if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		y := c.top + c.ph - c.ph*v/max
		pts = append(pts, f1(c.x(i))+","+f1(y))
		if s := p.Spread[col.Key]; s > 0 {
			c.w.open("line", true, "x1", f1(c.x(i)), "y1", f1(y-c.ph*s/2/max), "x2", f1(c.x(i)), "y2", f1(y+c.ph*s/2/max), "stroke", color)
		}
		c.w.text("circle", "", r.Knob+"="+p.Value+": "+col.Key+" "+Num(v)+" "+unit(col.Unit), "cx", f1(c.x(i)), "cy", f1(y), "r", "4", "fill", color)
	}
	stroke := []string{"fill", "none", "stroke", color, "stroke-width", "2"}
	if dash != "" {
		stroke = append(stroke, "stroke-dasharray", dash)
	}
	if len(pts) > 1 && !r.Categorical() {
		c.w.open("polyline", true, append([]string{"points", strings.Join(pts, " ")}, stroke...)...)
	}
	perRow := int(math.Floor(c.pw / legendItem))
	lx, ly := c.l+float64(k%perRow)*legendItem, 40+18*float64(k/perRow)
	c.w.open("line", true, append([]string{"x1", f1(lx), "y1", f1(ly), "x2", f1(lx + 20), "y2", f1(ly)}, stroke...)...)
	c.w.text("text", col.Key+" ("+unit(col.Unit)+")", "", "x", f1(lx+24), "y", f1(ly+4))
}
