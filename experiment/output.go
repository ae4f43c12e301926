package experiment

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// num prints a figure as the table, CSV and chart give it.
func num(x float64) string {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return ""
	case x != 0 && math.Abs(x) < 0.1:
		return strconv.FormatFloat(x, 'g', 3, 64)
	}
	return strconv.FormatFloat(x, 'f', 1, 64)
}

// PointLine is a point's progress line: the value, what reads back, each figure's median
// with its spread when repeated.
func (r *Result) PointLine(p Point) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s=%s", r.Knob, p.Value)
	if p.Applied != "" && p.Applied != p.Value {
		fmt.Fprintf(&b, " (reads back %s)", p.Applied)
	}
	if p.Error != "" {
		return b.String() + ": " + p.Error
	}
	for _, c := range r.Columns {
		x, ok := p.Median[c.Key]
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "  %s %s", c.Key, num(x))
		if s := p.Spread[c.Key]; len(p.Runs) > 1 {
			fmt.Fprintf(&b, " ±%s", num(s/2))
		}
	}
	return b.String()
}

// WriteText writes the sweep's table: a header with the units, a line per point.
func (r *Result) WriteText(w io.Writer) {
	fmt.Fprintf(w, "sweep %s %s: %d points\n", r.Iface, r.Knob, len(r.Points))
	for _, p := range r.Points {
		fmt.Fprintln(w, "  "+r.PointLine(p))
	}
	var units []string
	for _, c := range r.Columns {
		units = append(units, c.Key+" in "+c.Unit)
	}
	fmt.Fprintf(w, "  (%s; medians, ± half the spread over the repeats)\n", strings.Join(units, ", "))
	switch {
	case r.Interrupted && r.Restored:
		fmt.Fprintf(w, "interrupted; %s given back its value from before the sweep\n", r.Knob)
	case r.Restored:
		fmt.Fprintf(w, "%s given back its value from before the sweep\n", r.Knob)
	}
}

// csvField quotes a field that holds a comma, a quote or a line break (RFC 4180).
func csvField(s string) string {
	if !strings.ContainsAny(s, ",\"\r\n") {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// WriteCSV writes a row per point: the knob's value (the header names the knob), the
// value read back, the repeats, each figure's median and spread (max - min),
// and the error of a point that failed.
func (r *Result) WriteCSV(w io.Writer) error {
	h := []string{r.Knob, "applied", "repeats"}
	for _, c := range r.Columns {
		h = append(h, c.Key, c.Key+"_spread") // the keys carry their unit: tcp_mbps, p99_us_64
	}
	h = append(h, "error")
	rows := [][]string{h}
	for _, p := range r.Points {
		row := []string{p.Value, p.Applied, strconv.Itoa(len(p.Runs))}
		for _, c := range r.Columns {
			x, ok := p.Median[c.Key]
			if !ok {
				row = append(row, "", "")
				continue
			}
			row = append(row, num(x), num(p.Spread[c.Key]))
		}
		rows = append(rows, append(row, p.Error))
	}
	var b strings.Builder
	for _, row := range rows {
		for i, f := range row {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(csvField(f))
		}
		b.WriteString("\r\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
