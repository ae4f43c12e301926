package validate

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/zynqnet/linerate/plan"
	"github.com/zynqnet/linerate/tune"
)

// Tune applies a tune profile as one transaction before the steps that measure; the run
// reverts it after the last step (also when a step failed) unless keep is set.
type Tune struct {
	Profile string `yaml:"profile" json:"profile,omitempty" doc:"the tune profile: a built-in name or a YAML file (required)"`
	Keep    bool   `yaml:"keep" json:"keep,omitempty" doc:"keep the profile after the run instead of reverting it" default:"false"`

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

// BoardPorts: a tune step is one transaction across every port of the plan.
func (s *Tune) BoardPorts(*plan.Plan) string { return "" }

// Run applies the profile to every port, one after the other under each port's lock,
// as one transaction: when a port's tune fails (it rolls back itself), the ports tuned
// before it are reverted, so no port keeps the profile. Unless kept, the run reverts
// them all at its end.
func (s *Tune) Run(ctx context.Context, e Env) (Outcome, error) {
	var plans []*tune.Plan
	var done []string
	for _, port := range e.Ports {
		p, err := e.applyProfile(ctx, port.Interface, s.profile, s.Keep)
		if err != nil || p == nil {
			var undone []string
			for i := len(done) - 1; i >= 0; i-- {
				if rerr := e.revert(done[i]); rerr != nil {
					fmt.Fprintf(e.Console, "linerate validate: revert %s: %v\n", done[i], rerr)
					continue
				}
				undone = append(undone, done[i])
			}
			o := s.Judge(p, err)
			if len(e.Ports) > 1 {
				o.Reason = fmt.Sprintf("%s: %s", port.Interface, o.Reason)
				if len(undone) > 0 {
					o.Reason += fmt.Sprintf("; %s rolled back", strings.Join(undone, ", "))
				}
			}
			return o, nil
		}
		plans = append(plans, p)
		if len(p.Changes) > 0 {
			done = append(done, port.Interface)
		}
	}
	o := s.Judge(merge(plans), nil)
	if !s.Keep && len(done) > 0 {
		// The run gives the ports back at its end, the last tuned first: after the
		// verdict line, so the console says so.
		o.Undo = func(console io.Writer) {
			for i := len(done) - 1; i >= 0; i-- {
				if err := e.revert(done[i]); err != nil {
					fmt.Fprintf(console, "linerate validate: revert %s: %v\n", done[i], err)
					continue
				}
				fmt.Fprintf(console, "linerate validate: %s given back what it had before the tune\n", done[i])
			}
		}
	}
	if len(e.Ports) > 1 {
		o.Summary += fmt.Sprintf(" on %d ports", len(e.Ports))
	}
	return o, nil
}

// merge is the ports' tune plans as one, for the judgement's counts.
func merge(plans []*tune.Plan) *tune.Plan {
	m := &tune.Plan{}
	for _, p := range plans {
		m.Changes = append(m.Changes, p.Changes...)
		m.Skipped = append(m.Skipped, p.Skipped...)
	}
	return m
}

func (e Env) applyProfile(ctx context.Context, iface string, p *tune.Profile, keep bool) (*tune.Plan, error) {
	j := e.tuneJob(iface)
	j.Read = e.link.Read(iface)
	if keep {
		j.StateDir = e.StateDir // kept: the user's to revert, where 'linerate revert' looks
	}
	res, err := j.Tune(ctx, p, false)
	if err != nil {
		return nil, err
	}
	return res.Plan, res.Err
}

// tuneJob is a tune or revert of iface on the live system, journalled where validate
// keeps the tunes it gives back at its end (ValidateStateDir).
func (e Env) tuneJob(iface string) tune.Job {
	return tune.Job{Iface: iface, StateDir: ValidateStateDir(e.StateDir), API: e.API, CarrierTimeout: 15 * time.Second, LockWait: 10 * time.Second}
}

// ValidateStateDir is where a run journals the tunes it gives back at its end: a journal
// found there when a run starts is a dead run's (killed, or the board lost power
// mid-run on a read-write state directory), which the new run reverts first.
func ValidateStateDir(stateDir string) string {
	return filepath.Join(cmp.Or(stateDir, tune.DefaultStateDir()), "validate")
}

// revertDeadTunes gives each port back what a run that never reached its end left tuned
// (its journal in ValidateStateDir), before this run's first step, saying so: measuring
// on a dead run's profile while the report says "reverted at the end" would be a lie.
func revertDeadTunes(stateDir, api string, ports []string, console io.Writer) {
	dir := ValidateStateDir(stateDir)
	for _, iface := range ports {
		j, err := tune.StoreAt(dir).Load(iface)
		if err != nil {
			fmt.Fprintf(console, "linerate validate: %s: a dead run's tune journal cannot be read: %v\n", iface, err)
			continue
		}
		if j == nil {
			continue
		}
		job := tune.Job{Iface: iface, StateDir: dir, API: api, CarrierTimeout: 15 * time.Second, LockWait: 30 * time.Second}
		if _, err := job.Revert(context.Background()); err != nil {
			fmt.Fprintf(console, "linerate validate: %s still holds the tune (%s) of a run that did not end: %v\n", iface, strings.Join(j.Profiles, ", "), err)
			continue
		}
		fmt.Fprintf(console, "linerate validate: %s held the tune (%s) of a run that did not end: reverted before this run\n", iface, strings.Join(j.Profiles, ", "))
	}
}

// revert gives the port back what it had before the tune step, whatever ctx the run had
// left: a revert is never cut short.
func (e Env) revert(iface string) error {
	j := e.tuneJob(iface)
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
