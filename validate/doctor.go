package validate

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zynqnet/linerate/doctor"
	"github.com/zynqnet/linerate/nic"
	"github.com/zynqnet/linerate/plan"
)

// Doctor runs linerate doctor on the port: it fails on a finding of severity fail, or on
// any of fail_on's ids when given.
type Doctor struct {
	FailOn []string `yaml:"fail_on" json:"fail_on,omitempty" doc:"finding ids that fail the step (none: any finding of severity fail)"`
}

// Check: fail_on names finding ids (they are not checked against doctor's list, which
// grows; an unknown id simply never fires).
func (s *Doctor) Check(*plan.Plan) error {
	for _, id := range s.FailOn {
		if id == "" || strings.ContainsAny(id, " \t") {
			return fmt.Errorf("fail_on: %q is not a finding id (LINK_DOWN, RX_ERRORS_RISING, ...)", id)
		}
	}
	return nil
}

// minDoctorInterval is the shortest interval a doctor step judges rates over.
const minDoctorInterval = 500 * time.Millisecond

// Timeout: two samples and the rules.
func (s *Doctor) Timeout() time.Duration { return 30 * time.Second }

// Run samples the port twice and diagnoses it; the findings go into the report. In a
// run the first sample is the one taken as the link step passed, where no step since
// changed the port (linkWatch.Base): the interval is the time since, at least
// minDoctorInterval.
func (s *Doctor) Run(ctx context.Context, e Env) (Outcome, error) {
	interval := 2 * time.Second
	var before, after *nic.Sample
	var err error
	if base, at := e.link.Base(e.Iface); base != nil {
		select {
		case <-ctx.Done():
			return Outcome{}, ctx.Err()
		case <-time.After(time.Until(at.Add(minDoctorInterval))):
		}
		before = base
		after, err = nic.SampleNow(e.API, e.Iface)
		interval = time.Since(at)
	} else {
		before, after, err = nic.SampleLive(ctx, e.API, interval, []string{e.Iface}, nil)
	}
	if err != nil {
		return Outcome{}, err
	}
	for _, i := range after.Interfaces {
		e.link.keepRead(i) // a tune step next plans from it
	}
	rep, err := doctor.Diagnose(doctor.Input{Before: before, After: after, Interval: interval, Board: e.Board})
	if err != nil {
		return Outcome{}, err
	}
	o := s.Judge(e.Iface, rep)
	if b, err := json.Marshal(rep); err == nil {
		o.Doctor = b
	}
	return o, nil
}

// Judge: no finding of severity fail, or none of the step's fail_on ids.
func (s *Doctor) Judge(iface string, rep *doctor.Report) Outcome {
	var failing, all []string
	for _, i := range rep.Interfaces {
		for _, f := range i.Findings {
			all = append(all, f.ID)
			if (len(s.FailOn) == 0 && f.Severity == doctor.Fail) || slices.Contains(s.FailOn, f.ID) {
				failing = append(failing, f.ID)
			}
		}
	}
	o := Outcome{Pass: len(failing) == 0, Measured: map[string]float64{"findings": float64(len(all)), "failing": float64(len(failing))}}
	o.Summary = fmt.Sprintf("%d findings (%s), %d failing", len(all), orDash(strings.Join(all, " ")), len(failing))
	if !o.Pass {
		o.Reason = "doctor: " + strings.Join(failing, ", ") + " (linerate doctor " + iface + " says why and how to fix)"
	}
	return o
}
