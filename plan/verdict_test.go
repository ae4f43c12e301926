package plan

import (
	"strings"
	"testing"
)

func TestJudge(t *testing.T) {
	steps := []StepResult{
		{ID: "link.eth0", Port: "eth0", Pass: true},
		{ID: "link.eth1", Port: "eth1", Pass: true},
		{ID: "phy.eth1", Port: "eth1", Pass: true, Skipped: true},
		{ID: "tune", Pass: true},
		{ID: "tcp-up.eth1", Port: "eth1"},
		{ID: "loop", Port: "eth0+eth2"},
	}
	r := &Report{Steps: append([]StepResult{}, steps...), Ports: []PortReport{{Interface: "eth0"}, {Interface: "eth1"}, {Interface: "eth2"}}}
	r.Judge()
	got := r.Verdict + " " + strings.Join(r.Failed, ",")
	for _, p := range r.Ports {
		got += " " + p.Interface + "=" + p.Verdict + "(" + strings.Join(p.Failed, ",") + ")"
	}
	if want := "FAIL tcp-up.eth1,loop eth0=FAIL(loop) eth1=FAIL(tcp-up) eth2=FAIL(loop)"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if err := r.CheckVerdict(); err != nil {
		t.Errorf("a judged report: %v", err)
	}
	// A board step that names no port concerns every port.
	r.Steps[3].Pass = false
	r.Judge()
	if r.Ports[2].Failed[0] != "tune" || len(r.Failed) != 3 {
		t.Errorf("tune failed: %+v %v", r.Ports, r.Failed)
	}
	pass := &Report{Steps: steps[:4]}
	pass.Judge()
	if pass.Verdict != "PASS" || pass.Failed == nil || len(pass.Failed) != 0 {
		t.Errorf("all passed: %s %v", pass.Verdict, pass.Failed)
	}
	for _, c := range []struct {
		name, want string
		edit       func(r *Report)
	}{
		{"verdict", "verdict PASS, but its steps say FAIL", func(r *Report) { r.Verdict = "PASS" }},
		{"failed list", "failed lists tcp-up.eth1, but the steps that failed are tcp-up.eth1,loop,tune", func(r *Report) { r.Failed = r.Failed[:1] }},
		{"a port's verdict", "port eth0: verdict PASS failed none, but its steps say FAIL failed loop,tune", func(r *Report) { r.Ports[0].Verdict, r.Ports[0].Failed = "PASS", nil }},
		{"a port's list", "port eth2: verdict FAIL failed link", func(r *Report) { r.Ports[2].Failed = []string{"link"} }},
	} {
		x := &Report{Steps: append([]StepResult{}, r.Steps...), Ports: append([]PortReport{}, r.Ports...)}
		x.Steps[3], x.Steps[4], x.Steps[5] = r.Steps[4], r.Steps[5], r.Steps[3]
		x.Judge()
		c.edit(x)
		if err := x.CheckVerdict(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
