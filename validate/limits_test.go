package validate

import (
	"context"
	"strings"
	"testing"

	"github.com/zynqnet/linerate/plan"
)

const limitsPlan = `name: limits
board: zc702
station: {address: 198.18.5.1}
steps:
  - {id: tcp-down, type: iperf3, direction: down, min_mbps: 930, marginal_mbps: 940}
  - id: f
    type: frames
    rate: 10%
    max_loss_pct: 1
    marginal_loss_pct: 0.1
    limits:
      - {measurement: pps, unit: packets/s, low: 1000, marginal_low: 1200}
  - id: l
    type: link
    limits: [{measurement: carrier_s, high: 5, marginal_high: 3}]
`

// The plan's limits: the kinds' thresholds with their bands, and limits: of any
// measurement a kind gives, each checked against its unit when the plan is read.
func TestLimitsInPlans(t *testing.T) {
	p, err := Parse([]byte(limitsPlan), "limits.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range p.Steps {
		for _, l := range s.AllLimits() {
			got = append(got, s.ID+":"+l.Measurement+" "+l.String())
		}
	}
	want := "tcp-down:mbps 930.. Mbit/s (marginal below 940)|f:loss_pct ..1 % (marginal above 0.1)|f:pps 1000.. packets/s (marginal below 1200)|l:carrier_s ..5 s (marginal above 3)"
	if strings.Join(got, "|") != want {
		t.Errorf("limits\n%s\nwant\n%s", strings.Join(got, "|"), want)
	}
	base := "board: zc702\nstation: {address: 198.18.5.1}\nsteps:\n"
	for _, c := range []struct{ step, want string }{
		{"  - {id: t, type: iperf3, min_mbps: 930, marginal_mbps: 920}", "marginal_low 920 below low 930"},
		{"  - {id: t, type: iperf3, marginal_mbps: 920}", "needs a threshold: min_mbps"},
		{"  - {id: t, type: iperf3, min_mbps: 1, marginal_loss_pct: 1}", "marginal_loss_pct: a marginal band needs the threshold it lies inside (max_loss_pct)"},
		{"  - {id: t, type: frames, rate: 1%, max_loss_pct: 1, marginal_loss_pct: 2}", "marginal_high 2 above high 1"},
		{"  - {id: t, type: link, limits: [{measurement: mbps, low: 1}]}", `a step of type link measures no "mbps" (it measures carrier_s, speed_mbps)`},
		{"  - {id: t, type: link, limits: [{measurement: speed_mbps, unit: Gbit/s, low: 1}]}", `unit "Gbit/s", but speed_mbps is measured in Mbit/s`},
		{"  - {id: t, type: identity, limits: [{measurement: x, low: 1}]}", "a step of type identity has no measurements to bound"},
		{"  - {id: t, type: link, limits: [{measurement: carrier_s, colour: red}]}", "colour"},
		{"  - {id: t, type: link, limits: {measurement: carrier_s}}", "limits: want a list"},
	} {
		if _, err := Parse([]byte(base+c.step+"\n"), "p.yaml"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.step, err, c.want)
		}
	}
}

// The runner judges each step's measurements against its limits: one in its band
// passes as marginal (the console says so), one outside fails the step even when the
// kind passed it, and the report's verdict says marginal.
func TestRunnerJudgesLimits(t *testing.T) {
	p, err := Parse([]byte(limitsPlan), "limits.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var console strings.Builder
	r := &Runner{Plan: p, Console: &console, Do: func(ctx context.Context, s *plan.Step, port int) (Outcome, error) {
		switch s.ID {
		case "tcp-down":
			return Outcome{Pass: true, Summary: "TCP down 935.0 Mbit/s", Measured: map[string]float64{"mbps": 935}}, nil
		case "f":
			return Outcome{Pass: true, Summary: "frames", Measured: map[string]float64{"loss_pct": 0, "pps": 900}}, nil
		}
		return Outcome{Pass: true, Summary: "carrier", Measured: map[string]float64{"carrier_s": 1}}, nil
	}}
	d := r.Run(context.Background())
	rep := &plan.Report{Steps: d.Steps}
	rep.Judge()
	if rep.Verdict != "FAIL" || strings.Join(rep.Failed, ",") != "f" || strings.Join(rep.Marginal, ",") != "tcp-down_mbps" {
		t.Errorf("verdict %s failed %v marginal %v", rep.Verdict, rep.Failed, rep.Marginal)
	}
	if d.Steps[1].Reason != "pps 900 outside its limit 1000.. packets/s (marginal below 1200)" {
		t.Errorf("reason %q", d.Steps[1].Reason)
	}
	if err := rep.CheckVerdict(); err != nil {
		t.Error(err)
	}
	for _, want := range []string{"tcp-down   iperf3   PASS  TCP down 935.0 Mbit/s [marginal: mbps 935 in 930.. Mbit/s (marginal below 940)]", "f          frames   FAIL  frames: pps 900 outside its limit"} {
		if !strings.Contains(console.String(), want) {
			t.Errorf("console lacks %q:\n%s", want, console.String())
		}
	}
}
