package experiment

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zynqnet/linerate/nic"
	"github.com/zynqnet/linerate/tune"
)

// Change is a temporary change of one of tune's knobs (the PHY's control register, the
// advertised link modes) made for a measurement: journalled under the interface's lock,
// given back when the measurement ends, however it ends, and by 'linerate revert IFACE'
// after a crash.
type Change struct {
	Iface, StateDir, Knob string
	CarrierTimeout        time.Duration
}

// ChangeResult is the knob's value before, during and after.
type ChangeResult struct {
	Before, During, After string
	Restored              bool
}

// Run sets the knob to what value makes of its value before, runs measure, and gives
// the knob back. A value that cannot be read (the port has no such knob) changes
// nothing and is the error.
func (c Change) Run(ctx context.Context, value func(before string) (string, error), measure func(context.Context) error) (*ChangeResult, error) {
	store := tune.StoreAt(c.StateDir)
	lock, err := store.Acquire(c.Iface, 10*time.Second)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	if err := lock.Pending(c.Iface); err != nil {
		return nil, err
	}
	sys, _, closeFn, err := tune.Open("", nic.APIAuto, c.CarrierTimeout)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	k, err := tune.KnobFromName(c.Iface, c.Knob)
	if err != nil {
		return nil, err
	}
	res := &ChangeResult{}
	if res.Before, err = sys.Read(k); err != nil {
		return nil, err
	}
	if res.During, err = value(res.Before); err != nil {
		return nil, err
	}
	plan := &tune.Plan{Iface: c.Iface, Profile: c.Knob + " test", Temporary: true, Changes: []tune.Change{{Knob: c.Knob, Old: res.Before, New: res.During}}}
	if err := tune.Apply(ctx, sys, store, plan); err != nil {
		// Apply put back what it changed: say whether the knob reads as before.
		res.After, _ = sys.Read(k)
		res.Restored = res.After == res.Before
		return res, fmt.Errorf("set %s to %s: %w", c.Knob, res.During, err)
	}
	merr := measure(ctx)
	// Given back whatever happened, with a context of its own: never cut short.
	rerr := tune.RevertTemporary(context.Background(), sys, store, plan)
	res.After, _ = sys.Read(k)
	res.Restored = rerr == nil && res.After == res.Before
	if rerr == nil && !res.Restored {
		rerr = fmt.Errorf("%s reads %s after the test, was %s", c.Knob, res.After, res.Before)
	}
	return res, errors.Join(merr, rerr)
}
