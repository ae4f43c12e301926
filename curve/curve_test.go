package curve

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func result() *Result {
	cols := []Column{{Key: "tcp_mbps", Unit: "Mbit/s"}, {Key: "loss_pct_64", Unit: "%", Lower: true}, {Key: "p99_us_64", Unit: "us", Lower: true}}
	pt := func(v string, mbps, loss, p99 float64) Point {
		return Point{Value: v, Applied: v, Runs: []map[string]float64{{}}, Median: map[string]float64{"tcp_mbps": mbps, "loss_pct_64": loss, "p99_us_64": p99}, Spread: map[string]float64{}}
	}
	return &Result{Iface: "eth0", Knob: "rings.rx", Columns: cols, Points: []Point{
		pt("64", 300, 5, 80), pt("128", 700, 0.5, 120), pt("256", 940, 0, 200), pt("512", 945, 0, 400),
		{Value: "8192", Error: "knob rings.rx: invalid argument"},
	}}
}

func TestCSV(t *testing.T) {
	r := result()
	r.Knob = "rps.cpus"
	r.Points[0].Value = "0-1,3"
	r.Points[1].Runs = []map[string]float64{{}, {}}
	r.Points[1].Spread = map[string]float64{"tcp_mbps": 12.5}
	var b bytes.Buffer
	if err := r.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\r\n"), "\r\n")
	want := []string{
		"rps.cpus,applied,repeats,tcp_mbps,tcp_mbps_spread,loss_pct_64,loss_pct_64_spread,p99_us_64,p99_us_64_spread,error",
		`"0-1,3",64,1,300.0,0.0,5.0,0.0,80.0,0.0,`,
		"128,128,2,700.0,12.5,0.5,0.0,120.0,0.0,",
	}
	if !reflect.DeepEqual(lines[:3], want) {
		t.Errorf("CSV:\n%s\nwant first lines\n%s", b.String(), strings.Join(want, "\n"))
	}
	if last := lines[len(lines)-1]; last != "8192,,0,,,,,,,knob rings.rx: invalid argument" {
		t.Errorf("the failed point's row: %q", last)
	}
}

// TestSVGIsWellFormed: the chart is XML a browser takes, whatever the values hold, with
// both axes' units and a line per figure.
func TestSVGIsWellFormed(t *testing.T) {
	r := result()
	r.Knob = `<&"'>`
	r.Points[1].Median["p99_us_64"] = math.Inf(1)
	var b bytes.Buffer
	if err := r.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	d := xml.NewDecoder(&b)
	lines := 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, b.String())
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
			lines++
		}
	}
	for _, want := range []string{"tcp (Mbit/s)", "p99 (µs)", "&lt;&amp;&#34;&#39;&gt;", "✕"} {
		if !strings.Contains(s, want) {
			t.Errorf("the chart lacks %q", want)
		}
	}
	if lines != 2 {
		t.Errorf("%d lines drawn, want 2 (throughput, p99)", lines)
	}
}

// svgTokens parses the chart as XML (a browser's view of it): every element and the
// text it holds.
func svgTokens(t *testing.T, b []byte) (elems []xml.StartElement, text string) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return elems, text
		}
		if err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, b)
		}
		switch x := tok.(type) {
		case xml.StartElement:
			elems = append(elems, x.Copy())
		case xml.CharData:
			text += string(x)
		}
	}
}

// TestSVGEscapesEverything: a posted report's knob, column keys and units, values and
// errors are text in the chart, never markup (the station serves this chart).
func TestSVGEscapesEverything(t *testing.T) {
	const evil = `x</title><script>alert(1)</script><a href="javascript:x">`
	r := &Result{Iface: evil, Knob: evil, Columns: []Column{{Key: "tcp_mbps" + evil, Unit: evil}, {Key: "p99_us_" + evil, Unit: evil}},
		Points: []Point{{Value: evil, Median: map[string]float64{"tcp_mbps" + evil: 5, "p99_us_" + evil: 3}}, {Value: "2", Error: evil}}}
	var b bytes.Buffer
	if err := r.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	elems, text := svgTokens(t, b.Bytes())
	allowed := map[string]bool{"svg": true, "rect": true, "text": true, "line": true, "circle": true, "title": true, "polyline": true}
	for _, e := range elems {
		if !allowed[e.Name.Local] {
			t.Errorf("element <%s> in the chart", e.Name.Local)
		}
		for _, a := range e.Attr {
			if strings.Contains(a.Value, "javascript") || strings.HasPrefix(a.Name.Local, "on") || a.Name.Local == "href" {
				t.Errorf("attribute %s=%q", a.Name.Local, a.Value)
			}
		}
	}
	if !strings.Contains(text, "<script>") {
		t.Errorf("the hostile text is not shown as text")
	}
}

// TestSVGCategoricalAndLegend: on/off values are drawn as marks, not a line; six series
// wrap their legend onto rows that stay inside the chart.
func TestSVGCategoricalAndLegend(t *testing.T) {
	var cols []Column
	med := map[string]float64{}
	for _, k := range []string{"tcp_mbps", "p99_us_64", "p99_us_128", "p99_us_256", "p99_us_512", "p99_us_1518"} {
		cols = append(cols, Column{Key: k, Unit: "us"})
		med[k] = 10
	}
	r := &Result{Knob: "features.gro", Columns: cols, Points: []Point{{Value: "on", Median: med}, {Value: "off", Median: med}}}
	if !r.Categorical() || result().Categorical() {
		t.Fatal("categorical values not told from quantities")
	}
	var b bytes.Buffer
	r.WriteSVG(&b)
	elems, _ := svgTokens(t, b.Bytes())
	width := 0.0
	for _, e := range elems {
		if e.Name.Local == "polyline" {
			t.Error("a line drawn through categorical values")
		}
		for _, a := range e.Attr {
			if e.Name.Local == "svg" && a.Name.Local == "width" {
				width, _ = strconv.ParseFloat(a.Value, 64)
			}
			if e.Name.Local == "text" && a.Name.Local == "x" {
				if x, _ := strconv.ParseFloat(a.Value, 64); x > width-60 && width > 0 {
					t.Errorf("text at x=%v runs off a %v-wide chart", x, width)
				}
			}
		}
	}
	if !strings.Contains(b.String(), "µs") {
		t.Error("microseconds not written as µs")
	}
}
