package plan

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestPlanAnchorsAcrossSteps: an anchor on one step's fields is merged into the next
// (<<: *base, the step's own keys winning), a whole step and a scalar are aliased; a
// billion laughs is refused with a line, not expanded.
func TestPlanAnchorsAcrossSteps(t *testing.T) {
	in := `name: t
station:
  address: 10.0.0.1
  reflector_mac: 02:00:00:00:00:0b
steps:
  - &base
    id: a
    type: link
    speed_mbps: &speed 1000
    wait: 3s
  - <<: *base
    id: b
    wait: 5s
  - <<: [*base]
    id: c
    speed_mbps: *speed
`
	p, err := Parse([]byte(in), "t.yaml", fakeKinds)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range p.Steps {
		f := s.Params.(*fakeParams)
		got = append(got, fmt.Sprintf("%s %s %d %v", s.ID, s.Type, f.SpeedMbps, f.Wait.D()))
	}
	if want := "a link 1000 3s|b link 1000 5s|c link 1000 3s"; strings.Join(got, "|") != want {
		t.Errorf("steps %q, want %q", strings.Join(got, "|"), want)
	}
	if p.Steps[1].Timeout.D() != 12*time.Second {
		t.Errorf("step b's timeout %v", p.Steps[1].Timeout.D())
	}
	// A duplicate id through an alias is still a duplicate.
	if _, err := Parse([]byte(strings.Replace(in, "    id: b\n", "", 1)), "t.yaml", fakeKinds); err == nil || !strings.Contains(err.Error(), `step id "a" is used twice`) {
		t.Errorf("aliased id twice: %v", err)
	}
	var bomb strings.Builder
	bomb.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 9; i++ {
		fmt.Fprintf(&bomb, "a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	bomb.WriteString("steps:\n  - id: l\n    type: link\n")
	_, err = Parse([]byte(bomb.String()), "bomb.yaml", fakeKinds)
	var pe *Error
	if !errors.As(err, &pe) || pe.Source != "bomb.yaml" || !strings.Contains(err.Error(), "nodes") && !strings.Contains(err.Error(), "alias") {
		t.Errorf("billion laughs: %v", err)
	}
}
