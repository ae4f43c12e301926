package plan

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// fakeParams is a step kind of the tests: one number and one duration, checked.
type fakeParams struct {
	SpeedMbps int      `yaml:"speed_mbps" json:"speed_mbps,omitempty"`
	Wait      Duration `yaml:"wait" json:"wait,omitempty"`
}

func (f *fakeParams) Check(p *Plan) error {
	if f.SpeedMbps < 0 {
		return fmt.Errorf("speed_mbps %d: want 0 or more", f.SpeedMbps)
	}
	return nil
}

func (f *fakeParams) Timeout() time.Duration { return 7*time.Second + f.Wait.D() }

var fakeKinds = Kinds{Names: []string{"link"}, New: func(typ string) Params {
	if typ == "link" {
		return &fakeParams{}
	}
	return nil
}}

func TestParse(t *testing.T) {
	p, err := Parse([]byte("name: t\nstation:\n  address: 10.0.0.1\n  reflector_mac: 02:00:00:00:00:0b\nsteps:\n  - id: l\n    type: link\n    speed_mbps: 1000\n    wait: 3s\n"), "t.yaml", fakeKinds)
	if err != nil {
		t.Fatal(err)
	}
	l := p.Steps[0].Params.(*fakeParams)
	if l.SpeedMbps != 1000 || l.Wait.D() != 3*time.Second || p.Steps[0].Timeout.D() != 10*time.Second || p.Steps[0].Line != 6 {
		t.Errorf("step %+v %+v", p.Steps[0], l)
	}
	if p.Board != "auto" || p.Interface != "eth0" || p.Station.Port != 5201 || p.Budget.D() != 10*time.Minute || p.Station.MAC.String() != "02:00:00:00:00:0b" {
		t.Errorf("defaults %+v", p)
	}
}

func TestParseRefuses(t *testing.T) {
	const steps = "steps:\n  - id: l\n    type: link\n"
	for _, c := range []struct{ in, want string }{
		{"name: a\nname: b\n" + steps, `t.yaml:2: "name" is given twice`},
		{steps + "---\nname: second\n", "a second YAML document"},
		{"steps:\n  - id: l\n    type: link\n    speed_mbps: 1\n    speed_mbps: 2\n", `t.yaml:5: "speed_mbps" is given twice in a step`},
		{"steps:\n  - id: l\n    type: link\n    wait: 10\n", `t.yaml:4: wait: "10": want a duration with its unit`},
		{"steps:\n  - id: l\n    type: link\n    wait: -1s\n", `t.yaml:4: wait: "-1s": want a positive duration`},
		{"steps:\n  - id: l\n    type: link\n    speed_mbps: fast\n", "t.yaml:4: step \"l\": speed_mbps: want a number, not the text `fast`"},
		{"steps:\n  - id: l\n    type: link\n    colour: red\n", "t.yaml:4: step \"l\": field colour is not a key"},
		{"steps:\n  - id: l\n    type: link\n    speed_mbps: -5\n", `t.yaml:2: step "l": speed_mbps -5: want 0 or more`},
		{"steps:\n  - id: l\n    type: ping\n", `unknown type "ping" (have link)`},
		{"steps:\n  - id: l\n    type: link\n    timeout: 25h\n", "timeout 25h0m0s: want at most 24h"},
		{"", "empty"},
		{"- a\n", "want a mapping"},
	} {
		_, err := Parse([]byte(c.in), "t.yaml", fakeKinds)
		var pe *Error
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
}

// FuzzParse: any bytes give a plan or a *Error naming the source, never a panic.
func FuzzParse(f *testing.F) {
	f.Add([]byte("steps:\n  - id: l\n    type: link\n    wait: 3s\n"))
	f.Add([]byte("station: {port: 70000}\nsteps: [{id: a, type: link}]\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Parse(b, "fuzz.yaml", fakeKinds)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		for _, s := range p.Steps {
			if s.Timeout <= 0 || s.ID == "" || s.Params == nil {
				t.Fatalf("a parsed step without timeout, id or fields: %+v", s)
			}
		}
	})
}
