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
//   - A measurement outside its limit fails its step. One in its limit's marginal band
//     (of a step that passed) is marginal: the report's Marginal, and each port's of the
//     steps that concern it, name them (FigureName) in the steps' order. A board that
//     passes with a marginal measurement passes as marginal.

// Judge sets the report's verdict, failed list and every port's from its steps.
func (r *Report) Judge() {
	r.Verdict, r.Failed = verdict(r.Steps)
	r.Marginal = marginal(r.Steps, "")
	for i := range r.Ports {
		p := &r.Ports[i]
		p.Verdict, p.Failed = portVerdict(r.Steps, p.Interface)
		p.Marginal = marginal(r.Steps, p.Interface)
	}
}

// marginal are the measurements in their marginal bands of the steps that passed and
// concern iface ("": every step).
func marginal(steps []StepResult, iface string) []string {
	var out []string
	for _, s := range steps {
		if !s.Pass || iface != "" && !s.Concerns(iface) {
			continue
		}
		for _, l := range s.Limits {
			if l.Status == LimitMarginal {
				out = append(out, FigureName(s.ID, l.Measurement))
			}
		}
	}
	return out
}

// checkLimits says where a step's limit results are not what its limits and values
// give, or where a step passes with a measurement outside its limit.
func checkLimits(steps []StepResult) error {
	for _, s := range steps {
		for _, l := range s.Limits {
			if want := l.Limit.Judge(l.Value); l.Status != want {
				return fmt.Errorf("step %s: %s %g is %s against %s, not %s", s.ID, l.Measurement, l.Value, want, l.Limit, l.Status)
			}
			if l.Status == LimitFail && s.Pass {
				return fmt.Errorf("step %s passes, but its %s %g is outside its limit %s", s.ID, l.Measurement, l.Value, l.Limit)
			}
		}
	}
	return nil
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
	if err := checkLimits(r.Steps); err != nil {
		return err
	}
	if want := marginal(r.Steps, ""); !slices.Equal(r.Marginal, want) {
		return fmt.Errorf("marginal lists %s, but the steps' marginal measurements are %s", orNone(r.Marginal), orNone(want))
	}
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
		if m := marginal(r.Steps, p.Interface); !slices.Equal(p.Marginal, m) {
			return fmt.Errorf("port %s: marginal %s, but its steps' marginal measurements are %s", p.Interface, orNone(p.Marginal), orNone(m))
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
