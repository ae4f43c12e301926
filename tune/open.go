package tune

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/zynqnet/linerate/internal/badinput"
	"github.com/zynqnet/linerate/nic"
)

// LoadProfile reads a profile: a YAML file, or a built-in profile's name. A file that
// cannot be read or parsed, or an unknown name, is bad input naming it.
func LoadProfile(arg string) (*Profile, error) {
	if b, err := os.ReadFile(arg); err == nil {
		return ParseProfile(b, arg)
	} else if strings.ContainsAny(arg, "/.") {
		return nil, badinput.Errorf("profile %s: %w", arg, err)
	}
	p, err := Builtin(arg)
	if err != nil {
		return nil, badinput.Errorf("profile: %w", err)
	}
	return p, nil
}

// Open opens the system knobs are read from and written to: the live kernel (with the
// ethtool API and the carrier wait for knobs that bounce the link), or, with root set, a
// captured tree whose kernel-held knobs are skipped. close releases the kernel's sockets.
func Open(root, api string, carrierTimeout time.Duration) (sys *System, r *nic.Reader, close func(), err error) {
	if r, close, err = nic.Open(root, api); err != nil {
		return nil, nil, nil, err
	}
	sys = &System{Root: r.Root, Kernel: r.Kernel}
	if root == "" {
		sys.Setter, _ = r.Kernel.(nic.Setter)
		sys.CarrierTimeout = carrierTimeout
	}
	return sys, r, close, nil
}

// StoreAt is the journal store in dir, or in DefaultStateDir when dir is empty.
func StoreAt(dir string) Store {
	if dir == "" {
		dir = DefaultStateDir()
	}
	return Store{Dir: dir}
}

// Job is one tune or revert of an interface, as the command line and a plan's step ask
// for it: the state directory, the system (live, or a captured tree under Root), and how
// long to wait for the carrier and for the interface's lock.
type Job struct {
	Iface, StateDir, Root, API string
	CarrierTimeout, LockWait   time.Duration
	// BeforeWrite is the fault-injection hook of the tests (System.BeforeWrite).
	BeforeWrite func(k Knob, n int) error
	// Read, where set, is the port as read a moment ago (a validation's doctor step):
	// the plan is made from it rather than from a read of its own; the knobs' values
	// are read anew all the same.
	Read *nic.Interface
}

// Tune reads the knobs the profile touches, plans and, unless dryRun, applies the plan
// as one transaction, all under the interface's lock: another tune's half-applied values
// are never taken for what the user had. Result.Err is why the transaction did not go
// through (every knob then restored); the error is why there was no plan at all.
func (j Job) Tune(ctx context.Context, p *Profile, dryRun bool) (*Result, error) {
	store := StoreAt(j.StateDir)
	if !dryRun || j.Root == "" {
		// A dry run over a captured tree touches nothing of this machine, its locks
		// included.
		lock, err := store.Acquire(j.Iface, j.LockWait)
		if err != nil {
			return nil, err
		}
		defer lock.Release()
		if err := lock.Pending(j.Iface); err != nil && !dryRun {
			return nil, err
		}
	}
	sys, r, closeFn, err := Open(j.Root, j.API, j.CarrierTimeout)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	sys.BeforeWrite = j.BeforeWrite
	st, e, err := readStateFrom(sys, r, j.Read, j.Iface, p)
	if err != nil {
		return nil, err
	}
	plan, err := Diff(p, st, e)
	if err != nil {
		return nil, err
	}
	res := &Result{Plan: plan, DryRun: dryRun}
	if !dryRun {
		res.Err = Apply(ctx, sys, store, plan)
		if res.Err == nil && len(plan.Changes) > 0 {
			res.Journal = store.Path(j.Iface)
		}
	}
	return res, nil
}

// Revert gives the interface back every knob of its journal, under its lock.
func (j Job) Revert(ctx context.Context) (*Journal, error) {
	sys, _, closeFn, err := Open(j.Root, j.API, j.CarrierTimeout)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	store := StoreAt(j.StateDir)
	lock, err := store.Acquire(j.Iface, j.LockWait)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	return Revert(ctx, sys, store, j.Iface)
}
