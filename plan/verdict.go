package plan

import (
	"fmt"
	"slices"
	"strings"
)

// The verdict rule, written once: the board's validate calls Judge to give its report a
// verdict, and the station calls CheckVerdict to refuse a report whose stated verdict is
// not the one its steps give.
//
//   - A step passes when it passed or was skipped (Pass is set for both).
//   - The report's Failed lists the ids of the steps that did not pass, in their order,
//     and its Verdict is PASS exactly when that list is empty.
//   - In a multi-port report, a port's Failed lists the plan's step ids (without the
//     ".IFACE" of a port's result) of the failed steps that concern it: its own, and the
//     board's steps that name it or name no port; its Verdict is PASS exactly when that
//     list is empty. A failed port fails the board.

// Judge sets the report's verdict, failed list and every port's from its steps.
func (r *Report) Judge() {
	r.Verdict, r.Failed = verdict(r.Steps)
	for i := range r.Ports {
		p := &r.Ports[i]
		p.Verdict, p.Failed = portVerdict(r.Steps, p.Interface)
	}
}

func verdict(steps []StepResult) (string, []string) {
	failed := []string{}
	for _, s := range steps {
		if !s.Pass {
			failed = append(failed, s.ID)
		}
	}
	return passFail(failed), failed
}

func portVerdict(steps []StepResult, iface string) (string, []string) {
	failed := []string{}
	for _, s := range steps {
		if !s.Pass && s.Concerns(iface) {
			failed = append(failed, strings.TrimSuffix(s.ID, "."+iface))
		}
	}
	return passFail(failed), failed
}

func passFail(failed []string) string {
	if len(failed) > 0 {
		return "FAIL"
	}
	return "PASS"
}

// CheckVerdict says how the report's stated verdicts differ from what its steps give
// (Judge); nil when they agree.
func (r *Report) CheckVerdict() error {
	want, failed := verdict(r.Steps)
	if r.Verdict != want {
		return fmt.Errorf("verdict %s, but its steps say %s (failed: %s)", r.Verdict, want, orNone(failed))
	}
	if !slices.Equal(r.Failed, failed) && !(len(r.Failed) == 0 && len(failed) == 0) {
		return fmt.Errorf("failed lists %s, but the steps that failed are %s", orNone(r.Failed), orNone(failed))
	}
	for _, p := range r.Ports {
		want, failed := portVerdict(r.Steps, p.Interface)
		if p.Verdict != want || !slices.Equal(p.Failed, failed) && !(len(p.Failed) == 0 && len(failed) == 0) {
			return fmt.Errorf("port %s: verdict %s failed %s, but its steps say %s failed %s", p.Interface, p.Verdict, orNone(p.Failed), want, orNone(failed))
		}
	}
	return nil
}

func orNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ",")
}
