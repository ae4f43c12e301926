package plan

import (
	"encoding/xml"
	"strings"
	"testing"
)

func f(v float64) *float64 { return &v }

func TestLimitJudgeAndCheck(t *testing.T) {
	low := Limit{Measurement: "mbps", Unit: "Mbit/s", Low: f(930), MarginalLow: f(940)}
	high := Limit{Measurement: "loss_pct", Unit: "%", High: f(1), MarginalHigh: f(0.5)}
	both := Limit{Measurement: "p99_us", Low: f(10), MarginalLow: f(20), High: f(1000), MarginalHigh: f(800)}
	for _, c := range []struct {
		l    Limit
		v    float64
		want string
	}{
		{low, 929.9, LimitFail}, {low, 930, LimitMarginal}, {low, 939.99, LimitMarginal}, {low, 940, LimitPass}, {low, 999, LimitPass},
		{high, 1.01, LimitFail}, {high, 1, LimitMarginal}, {high, 0.5, LimitPass}, {high, 0, LimitPass},
		{both, 5, LimitFail}, {both, 15, LimitMarginal}, {both, 500, LimitPass}, {both, 900, LimitMarginal}, {both, 1001, LimitFail},
	} {
		if got := c.l.Judge(c.v); got != c.want {
			t.Errorf("%s %g: %s, want %s", c.l, c.v, got, c.want)
		}
	}
	if s := low.String(); s != "930.. Mbit/s (marginal below 940)" {
		t.Errorf("String %q", s)
	}
	for _, c := range []struct {
		l    Limit
		unit string
		want string
	}{
		{Limit{Measurement: "mbps"}, "", "give low and/or high"},
		{Limit{Low: f(1)}, "", "needs its measurement"},
		{Limit{Measurement: "mbps", Unit: "Gbit/s", Low: f(1)}, "Mbit/s", `unit "Gbit/s", but mbps is measured in Mbit/s`},
		{Limit{Measurement: "mbps", Low: f(930), MarginalLow: f(920)}, "", "marginal_low 920 below low 930"},
		{Limit{Measurement: "x", High: f(1), MarginalHigh: f(2)}, "", "marginal_high 2 above high 1"},
		{Limit{Measurement: "x", High: f(9), MarginalLow: f(2)}, "", "marginal_low without low"},
		{Limit{Measurement: "x", Low: f(5), High: f(1)}, "", "low 5 above high 1"},
		{Limit{Measurement: "x", Low: f(0), MarginalLow: f(8), High: f(10), MarginalHigh: f(6)}, "", "the marginal bands cross"},
		{Limit{Measurement: "x", Low: f(1e300)}, "", "want a finite number"},
	} {
		if err := c.l.Check(c.unit); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.l, err, c.want)
		}
	}
	l := Limit{Measurement: "mbps", Low: f(1)}
	if err := l.Check("Mbit/s"); err != nil || l.Unit != "Mbit/s" {
		t.Errorf("the measurement's unit is taken: %v %q", err, l.Unit)
	}
}

// A board with a measurement in its band passes as marginal: the verdict line, the
// report's and the port's lists, JUnit; the station's check agrees, and refuses a report
// that hides it or passes a step whose measurement is outside its limit.
func TestMarginalVerdict(t *testing.T) {
	low := Limit{Measurement: "mbps", Unit: "Mbit/s", Low: f(930), MarginalLow: f(940)}
	r := &Report{Board: "zc702", Serial: "S1", MAC: "m", Ports: []PortReport{{Interface: "eth0"}, {Interface: "eth1"}}, Steps: []StepResult{
		{ID: "tcp-down.eth0", Port: "eth0", Pass: true, Measured: map[string]float64{"mbps": 935.5}, Limits: JudgeLimits([]Limit{low}, map[string]float64{"mbps": 935.5})},
		{ID: "tcp-down.eth1", Port: "eth1", Pass: true, Measured: map[string]float64{"mbps": 941}, Limits: JudgeLimits([]Limit{low}, map[string]float64{"mbps": 941})},
	}}
	r.Judge()
	if r.Verdict != "PASS" || strings.Join(r.Marginal, ",") != "tcp-down.eth0_mbps" || len(r.Ports[0].Marginal) != 1 || len(r.Ports[1].Marginal) != 0 {
		t.Fatalf("%s %v %+v", r.Verdict, r.Marginal, r.Ports)
	}
	if line := r.VerdictLine(); !strings.HasPrefix(line, "LINERATE PASS marginal=tcp-down.eth0_mbps board=zc702 ") {
		t.Errorf("verdict line %s", line)
	}
	if err := r.CheckVerdict(); err != nil {
		t.Fatal(err)
	}
	x, err := r.JUnit()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Cases []struct {
				Props []struct {
					Name  string `xml:"name,attr"`
					Value string `xml:"value,attr"`
				} `xml:"properties>property"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(x, &doc); err != nil || len(doc.Suites[0].Cases[0].Props) != 1 {
		t.Fatalf("%v\n%s", err, x)
	}
	if p := doc.Suites[0].Cases[0].Props[0]; p.Name != "tcp-down.eth0_mbps" || p.Value != "935.5 Mbit/s, limit 930.. Mbit/s (marginal below 940): marginal" {
		t.Errorf("property %+v", p)
	}
	hidden := *r
	hidden.Marginal = nil
	if err := hidden.CheckVerdict(); err == nil || !strings.Contains(err.Error(), "marginal lists none, but the steps' marginal measurements are tcp-down.eth0_mbps") {
		t.Errorf("a hidden marginal: %v", err)
	}
	lied := *r
	lied.Steps = append([]StepResult{}, r.Steps...)
	lied.Steps[1].Limits = []LimitResult{{Limit: low, Value: 900, Status: LimitPass}}
	if err := lied.CheckVerdict(); err == nil || !strings.Contains(err.Error(), "mbps 900 is fail against 930.. Mbit/s (marginal below 940), not pass") {
		t.Errorf("a wrong status: %v", err)
	}
	lied.Steps[1].Limits[0].Status = LimitFail
	if err := lied.CheckVerdict(); err == nil || !strings.Contains(err.Error(), "step tcp-down.eth1 passes, but its mbps 900 is outside its limit") {
		t.Errorf("a pass outside its limit: %v", err)
	}
}
