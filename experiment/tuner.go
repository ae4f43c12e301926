package experiment

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/zynqnet/linerate/nic"
	"github.com/zynqnet/linerate/tune"
)

// Tuner is the Setter of the live system: each value is a one-knob profile applied by
// tune.Apply (journal, write, read back, roll back on failure; knobs that bounce the
// link wait for the carrier). Its journal is its own (StateDir/sweep), so the user's
// tune journal, if any, is not touched and Restore gives back exactly what the port had
// when the Tuner was opened. The interface's tune lock is held from Open to Close: no
// tune or revert runs in between.
type Tuner struct {
	Iface string
	store tune.Store
	lock  *tune.Lock
	sys   *tune.System
	rd    *nic.Reader
	close func()
	// settle is how long the last Set waited for the link to come back.
	settle time.Duration
}

// SweepStore is where a sweep's journal lives under a tune state directory ("" is
// tune's default).
func SweepStore(stateDir string) tune.Store {
	return tune.Store{Dir: filepath.Join(tune.StoreAt(stateDir).Dir, "sweep")}
}

// OpenTuner takes the interface's tune lock and opens the system. A journal left by a
// sweep that died refuses the run: its values must be given back first.
func OpenTuner(iface, stateDir, api string, carrierTimeout time.Duration) (*Tuner, error) {
	lock, err := tune.StoreAt(stateDir).Acquire(iface, 10*time.Second)
	if err != nil {
		return nil, err
	}
	t := &Tuner{Iface: iface, store: SweepStore(stateDir), lock: lock}
	// A sweep, tune or PHY test that did not finish, in whatever state directory, left
	// values that are not the user's: they go back first.
	if err := lock.Pending(iface); err != nil {
		lock.Release()
		return nil, err
	}
	if j, err := t.store.Load(iface); err != nil || j != nil {
		lock.Release()
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s: a sweep that did not finish left its journal %s: run 'linerate revert %s --state-dir %s' first",
			iface, t.store.Path(iface), iface, t.store.Dir)
	}
	if t.sys, t.rd, t.close, err = tune.Open("", api, carrierTimeout); err != nil {
		lock.Release()
		return nil, err
	}
	if _, err := t.rd.Read(iface); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// Close releases the system and the lock (after Restore).
func (t *Tuner) Close() {
	if t.close != nil {
		t.close()
	}
	t.lock.Release()
}

// Set applies knob=v (a value tune.CheckSettings gave) and returns what reads back: one
// value, or knob=value pairs when the setting spans several knobs (a queue each).
func (t *Tuner) Set(ctx context.Context, knob, v string) (string, error) {
	p := &tune.Profile{Name: "sweep " + knob + "=" + v, Source: "sweep", Required: map[string]bool{knob: true}, Exact: true,
		Settings: []tune.Setting{{Knob: knob, Value: v}}}
	before := t.sys.Settled
	plan, err := t.ApplyProfile(ctx, p)
	t.settle = t.sys.Settled - before
	if err != nil {
		return "", err
	}
	if len(plan.Skipped) > 0 && len(plan.Changes) == 0 {
		return "", fmt.Errorf("%s=%s does not apply on %s: %s", knob, v, t.Iface, plan.Skipped[0].Reason)
	}
	cur, absent, err := tune.Readback(t.sys, t.rd, t.Iface, p)
	if err != nil {
		return "", fmt.Errorf("read back %s: %w", knob, err)
	}
	return readbackText(cur, absent), nil
}

// LastSettle is how long the last Set waited for the link to come back after a knob
// that bounced it (0: it did not bounce).
func (t *Tuner) LastSettle() time.Duration { return t.settle }

// ApplyProfile plans and applies a whole profile, journalled with the sweep's changes.
func (t *Tuner) ApplyProfile(ctx context.Context, p *tune.Profile) (*tune.Plan, error) {
	plan, err := tune.ReadState(t.sys, t.rd, t.Iface, p)
	if err != nil {
		return nil, err
	}
	plan.Temporary = true // given back at the end: left behind, it blocks other changes
	return plan, tune.Apply(ctx, t.sys, t.store, plan)
}

// readbackText: one knob's value, or knob=value pairs; a sysctl's fields (tcp_rmem's
// "4096\t131072\t6291456") single-spaced as a profile writes them.
func readbackText(cur, absent map[string]string) string {
	if len(cur) == 1 && len(absent) == 0 {
		for _, v := range cur {
			return strings.Join(strings.Fields(v), " ")
		}
	}
	var ks []string
	for k, v := range cur {
		ks = append(ks, k+"="+strings.Join(strings.Fields(v), " "))
	}
	sort.Strings(ks)
	return strings.Join(ks, " ")
}

// Restore replays the sweep's journal, whatever context the sweep had left.
func (t *Tuner) Restore() error {
	_, err := tune.Revert(context.Background(), t.sys, t.store, t.Iface)
	if errors.Is(err, tune.ErrNothingToRevert) {
		return nil
	}
	return err
}
