package experiment

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zynqnet/linerate/curve"
	"github.com/zynqnet/linerate/netperf/frames"
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

func result() *curve.Result {
	cols := []curve.Column{{Key: "tcp_mbps", Unit: "Mbit/s"}, {Key: "loss_pct_64", Unit: "%", Lower: true}, {Key: "p99_us_64", Unit: "us", Lower: true}}
	pt := func(v string, mbps, loss, p99 float64) curve.Point {
		return curve.Point{Value: v, Applied: v, Runs: []map[string]float64{{}}, Median: map[string]float64{"tcp_mbps": mbps, "loss_pct_64": loss, "p99_us_64": p99}, Spread: map[string]float64{}}
	}
	return &curve.Result{Iface: "eth0", Knob: "rings.rx", Columns: cols, Points: []curve.Point{
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
		y, err := ProfileYAML(r, &curve.Point{Value: v, Median: map[string]float64{}}, Objective{Goal: "throughput"})
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

func (c *countMeter) Columns() []curve.Column { return []curve.Column{{Key: "n", Unit: "count"}} }
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
	s = &Sweep{Knob: "mtu", Values: []string{"a", "b"}, Meters: []Meter{&countMeter{}}, Setter: fs, Progress: func(curve.Point) { cancel() }}
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

// tableMeter gives each value's TCP throughput from a table, a run at a time.
type tableMeter struct {
	fs   *fakeSetter
	runs map[string][]float64
	took map[string]int
}

func (m *tableMeter) Columns() []curve.Column {
	return []curve.Column{{Key: "tcp_mbps", Unit: "Mbit/s"}}
}
func (m *tableMeter) Measure(context.Context) (map[string]float64, error) {
	v := m.fs.set[len(m.fs.set)-1]
	x := m.runs[v][m.took[v]]
	m.took[v]++
	return map[string]float64{"tcp_mbps": x}, nil
}

// settleSetter bounces the link for some values and says how long each took to settle.
type settleSetter struct {
	fakeSetter
	settle map[string]time.Duration
	last   time.Duration
}

func (s *settleSetter) Set(ctx context.Context, knob, v string) (string, error) {
	s.last = s.settle[v]
	return s.fakeSetter.Set(ctx, knob, v)
}
func (s *settleSetter) LastSettle() time.Duration { return s.last }

// TestSweepEarlyStop: with EarlyStop, a repeated point stops once its median cannot
// reach the best point's any more even were its runs left the best possible; a point
// that still can is measured in full, and without EarlyStop every run is taken. Each
// point says how long its value took to settle, as the Setter measured it.
func TestSweepEarlyStop(t *testing.T) {
	runs := map[string][]float64{
		"64":  {500, 510, 505, 508, 502},
		"128": {100, 110, 120, 900, 900}, // lost after 3 runs: two runs left, even the best possible, cannot lift its median to 64's
		"256": {505, 400, 400, 400, 400}, // still could after 3 (a median of 505 with two best runs), not after 4
		"512": {900, 950, 1000, 990, 980},
	}
	for _, early := range []bool{false, true} {
		ss := &settleSetter{settle: map[string]time.Duration{"512": 1500 * time.Millisecond}}
		m := &tableMeter{fs: &ss.fakeSetter, runs: runs, took: map[string]int{}}
		s := &Sweep{Knob: "rings.rx", Values: []string{"64", "128", "256", "512"}, Repeat: 5, Meters: []Meter{m}, Setter: ss}
		s.EarlyStop, s.Objective = early, Objective{Goal: "throughput"}
		res, err := s.Run(context.Background())
		if err != nil || len(res.Points) != 4 {
			t.Fatalf("early %v: %+v %v", early, res, err)
		}
		want := map[string]int{"64": 5, "128": 5, "256": 5, "512": 5}
		if early {
			want = map[string]int{"64": 5, "128": 3, "256": 4, "512": 5}
		}
		if !reflect.DeepEqual(m.took, want) {
			t.Errorf("early %v: runs taken %v, want %v", early, m.took, want)
		}
		if p := res.Points[1]; early != (p.Stopped == "stopped after 3 of 5 runs: it cannot beat rings.rx=64 any more") {
			t.Errorf("early %v: point 128 %+v", early, p)
		}
		if p := res.Points[3]; p.SettleS != 1.5 || p.Stopped != "" || res.Points[0].SettleS != 0 ||
			!strings.Contains(res.PointLine(p), "rings.rx=512 (link back after 1.50s)  tcp_mbps 980") {
			t.Errorf("early %v: point 512 %+v: %s", early, p, res.PointLine(p))
		}
		if best, _, err := (Objective{Goal: "throughput"}).Pick(res); err != nil || best.Value != "512" {
			t.Errorf("early %v: picked %+v %v", early, best, err)
		}
	}
}

// TestLoopbackFPS: the PHY self-test's rate is a quarter of the link's line rate for
// its frames, at least 2000 a second and at most 23,500.
func TestLoopbackFPS(t *testing.T) {
	for _, c := range []struct {
		mbps, size int
		want       float64
	}{
		{1000, 512, 23_500},                   // the ceiling: a ZC702's 10,000 frames in 0.43 s
		{100, 512, 100e6 / (8 * 532) / 4},     // the emulated GEM: 5,874/s, 1000 frames in 0.17 s
		{1000, 64, 23_500},                    // small frames: the CPU's ceiling, not a quarter of 1.49 million
		{1000, 9018, 1000e6 / (8 * 9038) / 4}, // jumbo: 3,458/s
		{10, 512, 2000},
		{0, 512, 2000},
	} {
		if got := loopbackFPS(c.mbps, c.size); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%d Mb/s, %d bytes: %v frames/s, want %v", c.mbps, c.size, got, c.want)
		}
	}
}

// TestSendLooped: frames lost while the PHY left loopback (its driver's late soft
// reset) are sent again once the PHY is looped again; frames lost by a PHY still looped
// stand, and so does a PHY that cannot be looped again.
func TestSendLooped(t *testing.T) {
	all := frames.Result{Sent: 1000, Received: 1000}
	lost := frames.Result{Sent: 1000, Received: 310, Lost: 690}
	cases := []struct {
		name             string
		sends            []frames.Result
		left             bool
		holdErr          error
		wantSends, holds int
		want             frames.Result
		relooped         bool
		err              string
	}{
		{name: "all back", sends: []frames.Result{all}, left: true, wantSends: 1, want: all},
		{name: "lost, still looped", sends: []frames.Result{lost}, wantSends: 1, want: lost},
		{name: "lost, left loopback", sends: []frames.Result{lost, all}, left: true, wantSends: 2, holds: 1, want: all, relooped: true},
		{name: "lost again", sends: []frames.Result{lost, lost}, left: true, wantSends: 2, holds: 1, want: lost, relooped: true},
		{name: "cannot loop again", sends: []frames.Result{lost}, left: true, holdErr: errors.New("phy.bmcr: the PHY left loopback again and again"), wantSends: 1, holds: 1, want: lost, relooped: true,
			err: "the PHY left loopback during the frames; looping it again: phy.bmcr: the PHY left loopback again and again"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sends, holds := 0, 0
			got, relooped, err := sendLooped(func() (frames.Result, error) {
				sends++
				return c.sends[sends-1], nil
			}, func() bool { return c.left }, func() error { holds++; return c.holdErr })
			if sends != c.wantSends || holds != c.holds || relooped != c.relooped || got.Received != c.want.Received {
				t.Errorf("%d sends, %d holds, relooped %v, %d back; want %d, %d, %v, %d", sends, holds, relooped, got.Received, c.wantSends, c.holds, c.relooped, c.want.Received)
			}
			if fmt.Sprint(err) != cmp.Or(c.err, "<nil>") {
				t.Errorf("err %v, want %s", err, c.err)
			}
		})
	}
}
