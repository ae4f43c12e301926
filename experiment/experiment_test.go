package experiment

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/zynqnet/linerate/tune"
)

func TestParseValues(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		err  string
	}{
		{"64,128, 256", []string{"64", "128", "256"}, ""},
		{"64..512", []string{"64", "128", "256", "512"}, ""},
		{"64..1000", []string{"64", "128", "256", "512", "1000"}, ""},
		{"0-1,3;2", []string{"0-1,3", "2"}, ""},
		{"4096 4096 4096;4096 131072 6291456", []string{"4096 4096 4096", "4096 131072 6291456"}, ""},
		{"on,off", []string{"on", "off"}, ""},
		{"64,,128", nil, "an empty value"},
		{"64,64", nil, "given twice"},
		{"512..64", nil, "0 < A <= B"},
		{"0..64", nil, "0 < A <= B"},
		{"x..y", nil, "0 < A <= B"},
		{"1..1099511627776", nil, "0 < A <= B"},
		{strings.Repeat("1,", 64) + "x", nil, "given twice"},
		{func() string {
			var v []string
			for i := 0; i < 65; i++ {
				v = append(v, strconv.Itoa(i+1))
			}
			return strings.Join(v, ",")
		}(), nil, "at most 64"},
	} {
		got, err := ParseValues(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseValues(%q) = %v, %v; want error with %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseValues(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	m, s := summarize([]map[string]float64{{"a": 3, "b": 1}, {"a": 1}, {"a": 2, "b": math.NaN()}})
	if m["a"] != 2 || s["a"] != 2 || m["b"] != 1 || s["b"] != 0 {
		t.Errorf("odd count: median %v spread %v", m, s)
	}
	m, _ = summarize([]map[string]float64{{"a": 1}, {"a": 4}})
	if m["a"] != 2.5 {
		t.Errorf("even count: median %v", m)
	}
}

func f(v float64) *float64 { return &v }

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

func TestPick(t *testing.T) {
	for _, c := range []struct {
		o    Objective
		want string
		err  string
	}{
		// 945 is within 1% of 940: the cheaper 256 wins.
		{Objective{Goal: "throughput"}, "256", ""},
		{Objective{Goal: "throughput", MaxP99US: f(150)}, "128", ""},
		{Objective{Goal: "latency"}, "64", ""},
		{Objective{Goal: "latency", MaxLossPct: f(1)}, "128", ""},
		{Objective{Goal: "latency", MinMbps: f(900)}, "256", ""},
		{Objective{Goal: "throughput", MinMbps: f(1000)}, "", "no value of rings.rx meets"},
	} {
		p, why, err := c.o.Pick(result())
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%+v: %v, want %q", c.o, err, c.err)
			}
			continue
		}
		if err != nil || p.Value != c.want {
			t.Errorf("%+v: picked %v (%v), want %s", c.o, p, err, c.want)
		}
		if len(why) == 0 || !strings.Contains(strings.Join(why, "\n"), "8192: knob rings.rx: invalid argument") {
			t.Errorf("%+v: the failed point is not among the reasons: %q", c.o, why)
		}
	}
	if err := (Objective{Goal: "latency"}).Check(true, false); err == nil {
		t.Error("latency without frames accepted")
	}
	if err := (Objective{Goal: "fast"}).Check(true, true); err == nil {
		t.Error("an unknown objective accepted")
	}
}

func TestProfileYAMLParsesBack(t *testing.T) {
	r := result()
	for _, v := range []string{"256", "0-1,3"} {
		r.Knob = map[string]string{"256": "rings.rx", "0-1,3": "rps.cpus"}[v]
		y, err := ProfileYAML(r, &Point{Value: v, Median: map[string]float64{}}, Objective{Goal: "throughput"})
		if err != nil {
			t.Fatal(err)
		}
		p, err := tune.ParseProfile(y, "test")
		if err != nil || len(p.Settings) != 1 || p.Settings[0].Knob != r.Knob || p.Settings[0].Value != v || !p.Required[r.Knob] {
			t.Errorf("%s", y)
			t.Errorf("parsed back: %+v, %v", p, err)
		}
	}
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
	r.Points[0].Value = `<&"'>`
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
	for _, want := range []string{"tcp (Mbit/s)", "p99 (us)", "rings.rx", "&lt;&amp;&quot;&#39;&gt;", "✕"} {
		if !strings.Contains(s, want) {
			t.Errorf("the chart lacks %q", want)
		}
	}
	if lines != 2 {
		t.Errorf("%d lines drawn, want 2 (throughput, p99)", lines)
	}
}

// fakeSetter records what the sweep asked for; it stands in for the system only in
// these tests of the loop's bookkeeping (the namespace tests drive the real one).
type fakeSetter struct {
	set      []string
	restored bool
	failOn   string
}

func (f *fakeSetter) Set(_ context.Context, knob, v string) (string, error) {
	if v == f.failOn {
		return "", errors.New("refused")
	}
	f.set = append(f.set, v)
	return v, nil
}
func (f *fakeSetter) Restore() error { f.restored = true; return nil }

type countMeter struct{ n float64 }

func (c *countMeter) Columns() []Column { return []Column{{Key: "n", Unit: "count"}} }
func (c *countMeter) Measure(ctx context.Context) (map[string]float64, error) {
	c.n++
	return map[string]float64{"n": c.n}, ctx.Err()
}

func TestSweepLoop(t *testing.T) {
	fs := &fakeSetter{failOn: "b"}
	s := &Sweep{Iface: "x", Knob: "mtu", Values: []string{"a", "b", "c"}, Repeat: 3, Meters: []Meter{&countMeter{}}, Setter: fs}
	res, err := s.Run(context.Background())
	if err != nil || !res.Restored || !fs.restored || len(res.Points) != 3 {
		t.Fatalf("%+v %v", res, err)
	}
	if res.Points[1].Error != "refused" || res.Points[0].Median["n"] != 2 || res.Points[2].Median["n"] != 5 || res.Points[2].Spread["n"] != 2 {
		t.Errorf("points: %+v", res.Points)
	}
	// Cancelled before the second value: the first is kept, the knob given back.
	ctx, cancel := context.WithCancel(context.Background())
	fs = &fakeSetter{}
	s = &Sweep{Knob: "mtu", Values: []string{"a", "b"}, Meters: []Meter{&countMeter{}}, Setter: fs, Progress: func(Point) { cancel() }}
	res, err = s.Run(ctx)
	if err != nil || !res.Interrupted || !fs.restored || len(res.Points) != 1 || !reflect.DeepEqual(fs.set, []string{"a"}) {
		t.Errorf("cancelled: %+v %v %+v", res, err, fs)
	}
}

// FuzzParseValues: --values and a plan's values never panic, and what they give is a
// list of distinct, non-empty values within the limit.
func FuzzParseValues(f *testing.F) {
	for _, s := range []string{"64..8192", "1,2,3", "0-1,3;2", "4096 4096 4096;4096 131072 6291456", "..", "1..", ";", "9..9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		vs, err := ParseValues(s)
		if err != nil {
			return
		}
		if len(vs) == 0 || len(vs) > 64 {
			t.Fatalf("%q: %d values", s, len(vs))
		}
		seen := map[string]bool{}
		for _, v := range vs {
			if v == "" || seen[v] {
				t.Fatalf("%q: %q", s, vs)
			}
			seen[v] = true
		}
	})
}
