package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/zynqnet/linerate/experiment"
	"github.com/zynqnet/linerate/internal/cli"
	"github.com/zynqnet/linerate/nic"
	"github.com/zynqnet/linerate/tune"
)

func phyCommand() *cli.Command {
	return &cli.Command{
		Name: "phy", Summary: "a port's PHY: id, driver, registers; --loopback: its self-test",
		Usage: []string{"phy IFACE [--json]", "phy IFACE --loopback [--frames N] [--json]"},
		About: `Reads the PHY bound to the port: its MDIO address, id (registers 2 and 3), the kernel
driver bound to it (a vendor's, or phylib's "Generic PHY", which sets up no RGMII delays),
its control and status registers decoded and what the partner advertised. --loopback
loops the PHY back at the link's speed, sends test frames and counts them back, then
gives the control register back exactly (also on an error and on Ctrl-C; journalled, so
'linerate revert IFACE' gives it back after a crash): frames back mean MAC, PHY and their
RGMII path work, and a fault is the cable's, the fixture's or the peer's. Exit 1 when a
port has no PHY or no MII access, or frames did not come back.`,
		Examples: []cli.Example{cli.Ex("phy eth0", "the PHY and its registers"), cli.Ex("phy eth0 --loopback --frames 10000", "the self-test")},
		Flags: func(fs *flag.FlagSet) cli.Run {
			l := experiment.Loopback{CarrierTimeout: 15 * time.Second}
			loop := fs.Bool("loopback", false, "loop the PHY back and count test frames back")
			fs.IntVar(&l.Frames, "frames", 1000, "how many test frames the loopback sends, 1..10000000")
			fs.StringVar(&l.StateDir, "state-dir", "", "tune's state `DIR`, where the loopback is journalled")
			asJSON := fs.Bool("json", false, "the PHY, or the self-test's result, as JSON")
			return func(ctx context.Context, pos []string, std cli.IO) error {
				var err error
				if l.Iface, err = one(pos, "interface"); err != nil {
					return err
				}
				if !*loop {
					p, err := experiment.ReadPHY(l.Iface)
					if err != nil {
						return cli.Fail(err)
					}
					return render(std.Stdout, *asJSON, p, p.Text())
				}
				res, err := l.Run(ctx)
				if res != nil {
					err = errors.Join(err, render(std.Stdout, *asJSON, res, res.Text()))
				}
				return err
			}
		},
	}
}

func watchCommand() *cli.Command {
	return &cli.Command{
		Name: "watch", Summary: "a line per link event of a port: carrier, speed, PHY, error counters",
		Usage: []string{"watch IFACE [--duration 60s] [--json]"},
		About: `Watches the port's link: a line per event as it happens (carrier down or up with the
time, a speed or duplex change, the PHY's link, a remote fault or loopback, isolate or
power-down as its registers say where the driver gives MII access (a loss the PHY
latched between reads shows even if the carrier never dropped), an error counter
rising), then a summary: carrier losses,
time without carrier, the counters that rose. A change another linerate makes while it
holds the port (a tune that bounces the link) is shown and not counted. Exit 1 when the
port had a link event or an error counter rose, 0 otherwise.`,
		Examples: []cli.Example{cli.Ex("watch eth0 --duration 10m", "a cable or fixture that drops now and then")},
		Flags: func(fs *flag.FlagSet) cli.Run {
			w := nic.Watcher{Interval: time.Second}
			duration := fs.Duration("duration", time.Minute, "how long to watch")
			fs.DurationVar(&w.Interval, "interval", time.Second, "how often speed, duplex and counters are read")
			asJSON := fs.Bool("json", false, "the summary with every event as JSON")
			api := apiFlag(fs)
			return func(ctx context.Context, pos []string, std cli.IO) error {
				var err error
				if w.Iface, err = oneBounded(pos, *duration); err != nil {
					return err
				}
				w.API = *api
				w.Excuse = tune.Excuse(w.Iface)
				w.Started = func(state string, _ map[string]uint64) {
					if !*asJSON {
						fmt.Fprintf(std.Stdout, "%s %s: %s; watching for %v (Ctrl-C ends it)\n", time.Now().Format("15:04:05.000"), w.Iface, state, *duration)
					}
				}
				ctx, cancel := context.WithTimeout(ctx, *duration)
				defer cancel()
				sum, err := w.Watch(ctx, func(e nic.LinkEvent) {
					if !*asJSON {
						fmt.Fprintln(std.Stdout, e.String())
					}
				})
				if err != nil {
					return err
				}
				if err := render(std.Stdout, *asJSON, sum, sum.Text()); err != nil {
					return err
				}
				if len(sum.Faults()) > 0 {
					return cli.Fail(fmt.Errorf("%d link event(s)", len(sum.Faults())))
				}
				return nil
			}
		},
	}
}
