package curve

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/zynqnet/linerate/internal/safecsv"
)

// Num prints a figure as the table, CSV and chart give it.
func Num(x float64) string {
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
	if p.SettleS > 0 {
		fmt.Fprintf(&b, " (link back after %.2fs)", p.SettleS)
	}
	if p.Error != "" {
		return b.String() + ": " + p.Error
	}
	for _, c := range r.Columns {
		x, ok := p.Median[c.Key]
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "  %s %s", c.Key, Num(x))
		if s := p.Spread[c.Key]; len(p.Runs) > 1 {
			fmt.Fprintf(&b, " ±%s", Num(s/2))
		}
	}
	if p.Stopped != "" {
		b.WriteString("  (" + p.Stopped + ")")
	}
	return b.String()
}

// WriteText writes the sweep's table: a row per point, a column per figure (its median,
// ± half the spread when repeated), the value read back where it differs and a failed
// point's error; then the units and whether the knob was given back.
func (r *Result) WriteText(w io.Writer) {
	fmt.Fprintf(w, "sweep %s %s: %d points\n", r.Iface, r.Knob, len(r.Points))
	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	cell := func(s string) string { return strings.ReplaceAll(s, "\t", " ") }
	head := []string{r.Knob, "reads back"}
	for _, c := range r.Columns {
		head = append(head, c.Key)
	}
	fmt.Fprintln(tw, "  "+strings.Join(append(head, "error"), "\t"))
	for _, p := range r.Points {
		row := []string{cell(p.Value), "="}
		if p.Applied != p.Value {
			row[1] = cell(cmp.Or(p.Applied, "-"))
		}
		for _, c := range r.Columns {
			x, ok := p.Median[c.Key]
			switch {
			case !ok:
				row = append(row, "-")
			case len(p.Runs) > 1:
				row = append(row, Num(x)+" ±"+Num(p.Spread[c.Key]/2))
			default:
				row = append(row, Num(x))
			}
		}
		fmt.Fprintln(tw, "  "+strings.Join(append(row, cell(p.Error)), "\t"))
	}
	tw.Flush()
	for _, l := range strings.SplitAfter(table.String(), "\n") {
		if l != "" {
			fmt.Fprintln(w, strings.TrimRight(l, " \n")) // a row without an error ends in blanks
		}
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

// WriteCSV writes a row per point: the knob's value (the header names the knob), the
// value read back, the repeats, each figure's median and spread (max - min), and the
// error of a point that failed; cells a spreadsheet would run as formulas are
// neutralised (safecsv).
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
			row = append(row, Num(x), Num(p.Spread[c.Key]))
		}
		rows = append(rows, append(row, p.Error))
	}
	cw := safecsv.NewWriter(w)
	for _, row := range rows {
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	return cw.Flush()
}
