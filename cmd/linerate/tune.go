package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/zynqnet/linerate/dts"
	"github.com/zynqnet/linerate/nic"
	"github.com/zynqnet/linerate/tune"
)

const tuneUsage = `Usage: linerate tune IFACE --profile NAME|FILE [--dry-run] [--json] [--state-dir DIR]
       linerate tune IFACE --from-dt [--dry-run] [--json] [--state-dir DIR]

Applies a profile as one transaction: reads every knob the profile touches, plans
(knob, old, new), writes a journal of the old values, applies in a safe order reading
each knob back, and on any failure restores every knob it changed. 'linerate revert
IFACE' gives back what the interface had before linerate changed it, also after a crash.
Applying the same profile twice changes nothing the second time.

Knobs: rings, channels, coalescing (ethtool -C where the driver has it, software
coalescing through napi_defer_hard_irqs and gro_flush_timeout where not), offload
features, MTU, promisc, RPS (rps_cpus, rps_flow_cnt, rps_sock_flow_entries), XPS, IRQ
affinity, sysctls, threaded NAPI, the cpufreq governor. A knob this kernel or driver
lacks is skipped with the reason, unless the profile lists it as required.

Flags:
  --profile P        a built-in profile ('linerate profile list') or a YAML file
  --from-dt          the profile the interface's device-tree node asks for: its
                     linerate,rx-ring-size and linerate,tx-ring-size (u32) and
                     linerate,tune-profile (a built-in profile name) properties
  --dry-run          print the plan and change nothing
  --json             print the plan (and outcome) as JSON
  --state-dir DIR    where journals live (default /var/lib/linerate, or /run/linerate
                     on a read-only root)
  --carrier-timeout D  how long to wait for the link after a change that bounces it
                     (default 15s)
  --wait D           how long to wait for another tune or revert of the interface to
                     finish before giving up (default 10s)
  --root DIR         tune a captured tree's files (kernel-held knobs are skipped)
  --ethtool-api API  auto, netlink or ioctl
`

const revertUsage = `Usage: linerate revert IFACE [--state-dir DIR] [--wait 10s]

Restores every knob that linerate tune changed on IFACE to the value it had before,
from the journal in the state directory, then removes the journal. Works after a tune
that was interrupted (crash, kill -9, power loss). --wait bounds the wait for a tune of
the interface that is still running.
`

const profileUsage = `Usage: linerate profile list
       linerate profile show NAME

Lists the built-in profiles, or prints one as YAML to copy and edit.
`

type tuneConfig struct {
	iface, profile, stateDir, root, api string
	dryRun, json, fromDT                bool
	carrierTimeout, lockWait            time.Duration
	// beforeWrite is the fault-injection hook of the tests.
	beforeWrite func(k tune.Knob, n int) error
}

func tuneCommand() command {
	return command{
		name:    "tune",
		summary: "apply a profile to an interface as one transaction",
		usage:   tuneUsage,
		run: func(ctx context.Context, args []string, _ io.Reader, stdout, _ io.Writer) error {
			var c tuneConfig
			fs := flag.NewFlagSet("tune", flag.ContinueOnError)
			fs.StringVar(&c.profile, "profile", "", "")
			fs.BoolVar(&c.fromDT, "from-dt", false, "")
			fs.BoolVar(&c.dryRun, "dry-run", false, "")
			fs.BoolVar(&c.json, "json", false, "")
			fs.StringVar(&c.stateDir, "state-dir", "", "")
			fs.StringVar(&c.root, "root", "", "")
			fs.StringVar(&c.api, "ethtool-api", nic.APIAuto, "")
			fs.DurationVar(&c.carrierTimeout, "carrier-timeout", 15*time.Second, "")
			fs.DurationVar(&c.lockWait, "wait", 10*time.Second, "")
			pos, err := parseFlags(fs, args)
			if err != nil {
				return err
			}
			if len(pos) != 1 {
				return usageError("want exactly one interface, have %d", len(pos))
			}
			if (c.profile == "") == !c.fromDT {
				return usageError("give --profile or --from-dt")
			}
			c.iface = pos[0]
			return c.run(ctx, stdout)
		},
	}
}

func (c *tuneConfig) run(ctx context.Context, stdout io.Writer) error {
	var p *tune.Profile
	var err error
	if c.fromDT {
		root := c.root
		if root == "" {
			root = "/"
		}
		if p, err = dts.FromDT(root, c.iface); errors.Is(err, dts.ErrNoDTTuning) {
			fmt.Fprintf(stdout, "tune %s: nothing to do: %v\n", c.iface, err)
			return nil
		}
	} else if p, err = tune.LoadProfile(c.profile); err != nil {
		// A profile that parses but is wrong names its line; one that cannot be found or
		// read is a usage error of --profile.
		var pe *tune.ProfileError
		if !errors.As(err, &pe) {
			return usageError("--%v", err)
		}
	}
	if err != nil {
		return err
	}
	store := tune.StoreAt(c.stateDir)
	// Read, plan and apply under the interface's lock: another tune's half-applied
	// values must not be taken for what the user had.
	lock, err := store.Acquire(c.iface, c.lockWait)
	if err != nil {
		return err
	}
	defer lock.Release()
	sys, r, closeFn, err := tune.Open(c.root, c.api, c.carrierTimeout)
	if err != nil {
		return err
	}
	defer closeFn()
	sys.BeforeWrite = c.beforeWrite
	plan, err := tune.ReadState(sys, r, c.iface, p)
	if err != nil {
		return err
	}
	res := &tune.Result{Plan: plan, DryRun: c.dryRun}
	if !c.dryRun {
		res.Err = tune.Apply(ctx, sys, store, plan)
		if res.Err == nil && len(plan.Changes) > 0 {
			res.Journal = store.Path(c.iface)
		}
	}
	if c.json {
		if err := writeJSON(stdout, res); err != nil {
			return err
		}
	} else {
		res.WriteText(stdout)
	}
	return res.Err
}

func revertCommand() command {
	return command{
		name:    "revert",
		summary: "give an interface back what it had before linerate tune",
		usage:   revertUsage,
		run: func(ctx context.Context, args []string, _ io.Reader, stdout, _ io.Writer) error {
			fs := flag.NewFlagSet("revert", flag.ContinueOnError)
			stateDir := fs.String("state-dir", "", "")
			root := fs.String("root", "", "")
			api := fs.String("ethtool-api", nic.APIAuto, "")
			timeout := fs.Duration("carrier-timeout", 15*time.Second, "")
			wait := fs.Duration("wait", 10*time.Second, "")
			pos, err := parseFlags(fs, args)
			if err != nil {
				return err
			}
			if len(pos) != 1 {
				return usageError("want exactly one interface, have %d", len(pos))
			}
			sys, _, closeFn, err := tune.Open(*root, *api, *timeout)
			if err != nil {
				return err
			}
			defer closeFn()
			store := tune.StoreAt(*stateDir)
			lock, err := store.Acquire(pos[0], *wait)
			if err != nil {
				return err
			}
			defer lock.Release()
			j, err := tune.Revert(ctx, sys, store, pos[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "reverted %s: %d knobs back as they were before %s\n", pos[0], len(j.Entries), strings.Join(j.Profiles, ", "))
			for _, e := range j.Entries {
				fmt.Fprintf(stdout, "  %-40s %s\n", e.Knob, e.Old)
			}
			return nil
		},
	}
}

func profileCommand() command {
	return command{
		name:    "profile",
		summary: "list the built-in tune profiles, or print one as YAML",
		usage:   profileUsage,
		run: func(ctx context.Context, args []string, _ io.Reader, stdout, _ io.Writer) error {
			fs := flag.NewFlagSet("profile", flag.ContinueOnError)
			pos, err := parseFlags(fs, args)
			if err != nil {
				return err
			}
			switch {
			case len(pos) == 1 && pos[0] == "list":
				return tune.WriteProfileList(stdout)
			case len(pos) == 2 && pos[0] == "show":
				y, err := tune.BuiltinYAML(pos[1])
				if err != nil {
					return usageError("%v", err)
				}
				_, err = stdout.Write(y)
				return err
			}
			return usageError("want 'list' or 'show NAME'")
		},
	}
}
