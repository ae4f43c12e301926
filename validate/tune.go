package validate

import (
	"context"
	"fmt"
	"time"

	"github.com/zynqnet/linerate/plan"
	"github.com/zynqnet/linerate/tune"
)

// Tune applies a tune profile as one transaction before the steps that measure; the run
// reverts it after the last step (also when a step failed) unless keep is set.
type Tune struct {
	Profile string `yaml:"profile" json:"profile,omitempty"`
	Keep    bool   `yaml:"keep" json:"keep,omitempty"`

	profile *tune.Profile
}

// Check loads the profile (built-in or a file): a name that is neither is a bad plan.
func (s *Tune) Check(*plan.Plan) error {
	if s.Profile == "" {
		return fmt.Errorf("tune step needs a profile")
	}
	p, err := tune.LoadProfile(s.Profile)
	if err != nil {
		return err
	}
	s.profile = p
	return nil
}

// Timeout: a profile's writes, each knob that bounces the link with its carrier wait.
func (s *Tune) Timeout() time.Duration { return 60 * time.Second }

// Run applies the profile under the port's lock and, unless kept, queues its revert.
func (s *Tune) Run(ctx context.Context, e Env) (Outcome, error) {
	p, err := e.applyProfile(ctx, s.profile)
	o := s.Judge(p, err)
	if o.Pass && !s.Keep && len(p.Changes) > 0 {
		iface := e.Iface
		e.cleanup = append(e.cleanup, func() {
			if err := e.revert(iface); err != nil {
				fmt.Fprintf(e.Console, "linerate validate: revert %s: %v\n", iface, err)
			}
		})
	}
	return o, nil
}

func (e Env) applyProfile(ctx context.Context, p *tune.Profile) (*tune.Plan, error) {
	res, err := e.tuneJob(e.Iface).Tune(ctx, p, false)
	if err != nil {
		return nil, err
	}
	return res.Plan, res.Err
}

// tuneJob is a tune or revert of iface on the live system, with the run's state directory.
func (r *run) tuneJob(iface string) tune.Job {
	return tune.Job{Iface: iface, StateDir: r.StateDir, API: r.API, CarrierTimeout: 15 * time.Second, LockWait: 10 * time.Second}
}

// revert gives the port back what it had before the tune step, whatever ctx the run had
// left: a revert is never cut short.
func (r *run) revert(iface string) error {
	j := r.tuneJob(iface)
	j.LockWait = 30 * time.Second
	_, err := j.Revert(context.Background())
	return err
}

// Judge: the profile's transaction went through (applyErr nil), or it did not and every
// setting stayed as it was.
func (s *Tune) Judge(p *tune.Plan, applyErr error) Outcome {
	if applyErr != nil || p == nil {
		reason := "no plan"
		if applyErr != nil {
			reason = applyErr.Error()
		}
		return Outcome{Summary: "profile " + s.Profile + " not applied (every setting kept as it was)", Reason: reason}
	}
	keep := "reverted at the end"
	if s.Keep {
		keep = "kept"
	}
	return Outcome{Pass: true, Summary: fmt.Sprintf("profile %s applied: %d changes, %d skipped (%s)", s.Profile, len(p.Changes), len(p.Skipped), keep),
		Measured: map[string]float64{"changes": float64(len(p.Changes)), "skipped": float64(len(p.Skipped))}}
}
