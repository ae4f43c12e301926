package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/zynqnet/linerate/dts"
	"github.com/zynqnet/linerate/internal/cli"
	"github.com/zynqnet/linerate/tune"
)

type tuneConfig struct {
	iface, profile, stateDir, root, api string
	dryRun, json, fromDT                bool
	carrierTimeout, lockWait            time.Duration
	apiFlag                             *string
	// beforeWrite is the fault-injection hook of the tests.
	beforeWrite func(k tune.Knob, n int) error
}

// tuneFlags are the flags tune and revert share: where journals live and how long to wait.
func tuneFlags(fs *flag.FlagSet, c *tuneConfig) {
	fs.StringVar(&c.stateDir, "state-dir", "", "where journals live (default /var/lib/linerate, or /run/linerate on a read-only root): `DIR`")
	fs.StringVar(&c.root, "root", "", "tune a captured tree's files under `DIR` (kernel-held knobs are skipped)")
	api := apiFlag(fs)
	c.apiFlag = api
	fs.DurationVar(&c.carrierTimeout, "carrier-timeout", 15*time.Second, "how long to wait for the link after a change that bounces it")
	fs.DurationVar(&c.lockWait, "wait", 10*time.Second, "how long to wait for another tune or revert of the interface to finish before giving up")
}

func tuneCommand() *cli.Command {
	return &cli.Command{
		Name: "tune", Summary: "apply a profile to an interface as one transaction",
		Usage: []string{"tune IFACE --profile NAME|FILE [--dry-run] [--json]", "tune IFACE --from-dt [--dry-run] [--json]"},
		About: `Applies a profile as one transaction: reads every knob the profile touches, plans
(knob, old, new), writes a journal of the old values, applies in a safe order reading
each knob back, and on any failure restores every knob it changed. 'linerate revert
IFACE' gives back what the interface had before linerate changed it, also after a crash.
Applying the same profile twice changes nothing the second time.

Knobs: rings, channels, coalescing (ethtool -C where the driver has it, software
coalescing through napi_defer_hard_irqs and gro_flush_timeout where not), offload
features, MTU, promisc, RPS (rps_cpus, rps_flow_cnt, rps_sock_flow_entries), XPS, IRQ
affinity, sysctls, threaded NAPI, the cpufreq governor. A knob this kernel or driver
lacks is skipped with the reason, unless the profile lists it as required.`,
		Examples: []cli.Example{cli.Ex("tune eth0 --profile zc702 --dry-run", "the plan, changing nothing"), cli.Ex("tune eth0 --profile zc702", "apply the board's profile"),
			cli.Ex("tune eth0 --from-dt", "what the device tree's linerate,* properties ask for (the tester image does this at boot)")},
		Flags: func(fs *flag.FlagSet) cli.Run {
			var c tuneConfig
			fs.StringVar(&c.profile, "profile", "", "a built-in profile ('linerate profile list') or a YAML `FILE`")
			fs.BoolVar(&c.fromDT, "from-dt", false, "the profile the interface's device-tree node asks for: its linerate,rx-ring-size and linerate,tx-ring-size (u32) and linerate,tune-profile (a built-in profile) properties")
			fs.BoolVar(&c.dryRun, "dry-run", false, "print the plan and change nothing")
			fs.BoolVar(&c.json, "json", false, "print the plan (and outcome) as JSON")
			tuneFlags(fs, &c)
			return func(ctx context.Context, pos []string, std cli.IO) error {
				var err error
				c.api = *c.apiFlag
				if c.iface, err = one(pos, "interface"); err != nil {
					return err
				}
				if (c.profile == "") == !c.fromDT {
					return usageError("give --profile or --from-dt")
				}
				return c.run(ctx, std.Stdout)
			}
		},
	}
}

// load is the profile asked for: --from-dt's, or --profile's (nil, nil: nothing to do).
func (c *tuneConfig) load(stdout io.Writer) (*tune.Profile, error) {
	if c.fromDT {
		p, err := dts.FromDT(cmp.Or(c.root, "/"), c.iface)
		if errors.Is(err, dts.ErrNoDTTuning) {
			fmt.Fprintf(stdout, "tune %s: nothing to do: %v\n", c.iface, err)
			return nil, nil
		}
		return p, err
	}
	p, err := tune.LoadProfile(c.profile)
	// A profile that parses but is wrong names its line; one that cannot be found or
	// read is a usage error of --profile.
	var pe *tune.ProfileError
	if err != nil && !errors.As(err, &pe) {
		return nil, usageError("--%v", err)
	}
	return p, err
}

func (c *tuneConfig) run(ctx context.Context, stdout io.Writer) error {
	p, err := c.load(stdout)
	if p == nil || err != nil {
		return err
	}
	res, err := c.job().Tune(ctx, p, c.dryRun)
	if err != nil {
		return err
	}
	if !c.json {
		res.WriteText(stdout)
	} else if err := writeJSON(stdout, res); err != nil {
		return err
	}
	return res.Err
}

func (c *tuneConfig) job() tune.Job {
	return tune.Job{Iface: c.iface, StateDir: c.stateDir, Root: c.root, API: c.api, CarrierTimeout: c.carrierTimeout, LockWait: c.lockWait, BeforeWrite: c.beforeWrite}
}

func revertCommand() *cli.Command {
	return &cli.Command{
		Name: "revert", Summary: "give an interface back what it had before linerate tune",
		Usage: []string{"revert IFACE [--state-dir DIR] [--wait 10s]"},
		About: `Restores every knob that linerate tune changed on IFACE to the value it had before,
from the journal in the state directory, then removes the journal. Works after a tune
that was interrupted (crash, kill -9, power loss). --wait bounds the wait for a tune of
the interface that is still running.`,
		Examples: []cli.Example{cli.Ex("revert eth0", "undo every tune of eth0"), cli.Ex("revert eth0 --state-dir /var/lib/linerate/sweep", "undo a sweep that was killed")},
		Flags: func(fs *flag.FlagSet) cli.Run {
			var c tuneConfig
			tuneFlags(fs, &c)
			return func(ctx context.Context, pos []string, std cli.IO) error {
				var err error
				if c.iface, err = one(pos, "interface"); err != nil {
					return err
				}
				c.api = *c.apiFlag
				j, err := c.job().Revert(ctx)
				if err != nil {
					return err
				}
				fmt.Fprintf(std.Stdout, "reverted %s: %d knobs back as they were before %s\n", c.iface, len(j.Entries), strings.Join(j.Profiles, ", "))
				for _, e := range j.Entries {
					fmt.Fprintf(std.Stdout, "  %-40s %s\n", e.Knob, e.Old)
				}
				return nil
			}
		},
	}
}

func profileCommand() *cli.Command {
	return &cli.Command{
		Name: "profile", Summary: "list the built-in tune profiles, or print one as YAML",
		Usage:    []string{"profile list", "profile show NAME"},
		About:    "Lists the built-in profiles, or prints one as YAML to copy and edit.",
		Examples: []cli.Example{cli.Ex("profile show zc702 > my.yaml", "a board's profile to start from")},
		Flags: func(fs *flag.FlagSet) cli.Run {
			return func(ctx context.Context, pos []string, std cli.IO) error {
				switch {
				case len(pos) == 1 && pos[0] == "list":
					return tune.WriteProfileList(std.Stdout)
				case len(pos) == 2 && pos[0] == "show":
					y, err := tune.BuiltinYAML(pos[1])
					if err != nil {
						return usageError("%v", err)
					}
					_, err = std.Stdout.Write(y)
					return err
				}
				return usageError("want 'list' or 'show NAME'")
			}
		},
	}
}
