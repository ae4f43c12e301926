package curve

import (
	"bytes"
	"testing"
)

// TestWriteText: the table a sweep prints: a header of the knob and the figures, a row
// per point with the medians (± half the spread when repeated) in aligned columns, what
// read back where it differs, a failed point's error, the units, the knob given back.
func TestWriteText(t *testing.T) {
	r := &Result{Iface: "eth0", Knob: "rings.rx", Restored: true,
		Columns: []Column{{Key: "tcp_mbps", Unit: "Mbit/s"}, {Key: "p99_us_64", Unit: "µs", Lower: true}},
		Points: []Point{
			{Value: "64", Applied: "64", Runs: make([]map[string]float64, 2), Median: map[string]float64{"tcp_mbps": 2.5, "p99_us_64": 812}, Spread: map[string]float64{"tcp_mbps": 1, "p99_us_64": 40}},
			{Value: "1000", Applied: "1024", Runs: make([]map[string]float64, 2), Median: map[string]float64{"tcp_mbps": 941.25}, Spread: map[string]float64{"tcp_mbps": 3}},
			{Value: "8192", Error: "write rings.rx: Invalid argument"},
		}}
	var b bytes.Buffer
	r.WriteText(&b)
	want := `sweep eth0 rings.rx: 3 points
  rings.rx  reads back  tcp_mbps    p99_us_64    error
  64        =           2.5 ±0.5    812.0 ±20.0
  1000      1024        941.2 ±1.5  -
  8192      -           -           -            write rings.rx: Invalid argument
  (tcp_mbps in Mbit/s, p99_us_64 in µs; medians, ± half the spread over the repeats)
rings.rx given back its value from before the sweep
`
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
}
