package experiment

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// Written by hand: an SVG line chart is a few elements, and no kept Go library draws one
// without pulling in a plotting stack far bigger than this binary's budget allows.

// esc makes text safe in SVG's text and attributes.
var esc = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;").Replace

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

// tick is an axis label: whole numbers without decimals.
func tick(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return fmt.Sprintf("%.0f", x)
	}
	return num(x)
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

// WriteSVG draws the figures against the knob's values: a line per figure, the left and
// right axes each with its unit, a legend, the points that failed marked on the axis.
func (r *Result) WriteSVG(w io.Writer) error {
	const W, H, l, rt, top, bot = 760.0, 420.0, 70.0, 70.0, 60.0, 60.0
	pw, ph := W-l-rt, H-top-bot
	left, right := r.axes()
	n := len(r.Points)
	x := func(i int) float64 {
		if n <= 1 {
			return l + pw/2
		}
		return l + pw*(0.06+0.88*float64(i)/float64(n-1)) // inset: the end labels fit
	}
	scale := func(cs []Column) float64 {
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
	lmax, rmax := scale(left), scale(right)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g" font-family="sans-serif" font-size="12">`+"\n", W, H, W, H)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%g" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", l, esc("sweep of "+r.Knob+" on "+r.Iface))
	// Grid and the two axes' ticks.
	for i := 0; i <= 5; i++ {
		y := top + ph - ph*float64(i)/5
		fmt.Fprintf(&b, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#ddd"/>`+"\n", l, y, l+pw, y)
		if len(left) > 0 {
			fmt.Fprintf(&b, `<text x="%g" y="%.1f" text-anchor="end">%s</text>`+"\n", l-6, y+4, tick(lmax*float64(i)/5))
		}
		if len(right) > 0 {
			fmt.Fprintf(&b, `<text x="%g" y="%.1f">%s</text>`+"\n", l+pw+6, y+4, tick(rmax*float64(i)/5))
		}
	}
	fmt.Fprintf(&b, `<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="#333"/>`+"\n", l, top, pw, ph)
	axisLabel := func(cs []Column, xpos float64, rot int) {
		if len(cs) == 0 {
			return
		}
		name := strings.TrimRight(strings.SplitN(cs[0].Key, "_", 2)[0], "_")
		fmt.Fprintf(&b, `<text transform="translate(%g,%g) rotate(%d)" text-anchor="middle">%s</text>`+"\n", xpos, top+ph/2, rot, esc(name+" ("+cs[0].Unit+")"))
	}
	axisLabel(left, 18, -90)
	axisLabel(right, W-14, 90)
	for i, p := range r.Points {
		fmt.Fprintf(&b, `<text x="%.1f" y="%g" text-anchor="middle">%s</text>`+"\n", x(i), top+ph+18, esc(p.Value))
		if p.Error != "" {
			fmt.Fprintf(&b, `<text x="%.1f" y="%g" text-anchor="middle" fill="#c00"><title>%s</title>✕</text>`+"\n", x(i), top+ph-4, esc(p.Error))
		}
	}
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle">%s</text>`+"\n", l+pw/2, H-14, esc(r.Knob))
	colors := []string{"#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#d62728", "#ff7f0e", "#e377c2", "#17becf"}
	series := 0
	draw := func(cs []Column, max float64, dash string) {
		for _, c := range cs {
			col := colors[series%len(colors)]
			var pts []string
			for i, p := range r.Points {
				v, ok := p.Median[c.Key]
				if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
					continue
				}
				y := top + ph - ph*v/max
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y))
				if s := p.Spread[c.Key]; s > 0 {
					fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s"/>`+"\n", x(i), y-ph*s/2/max, x(i), y+ph*s/2/max, col)
				}
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s=%s: %s %s %s</title></circle>`+"\n",
					x(i), y, col, esc(r.Knob), esc(p.Value), c.Key, num(v), esc(c.Unit))
			}
			if len(pts) > 1 {
				fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", strings.Join(pts, " "), col, dash)
			}
			lx := l + float64(series)*150
			fmt.Fprintf(&b, `<line x1="%g" y1="40" x2="%g" y2="40" stroke="%s" stroke-width="2"%s/><text x="%g" y="44">%s</text>`+"\n",
				lx, lx+20, col, dash, lx+24, esc(c.Key+" ("+c.Unit+")"))
			series++
		}
	}
	draw(left, lmax, "")
	draw(right, rmax, ` stroke-dasharray="5,3"`)
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
