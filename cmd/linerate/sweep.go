package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"time"

	"github.com/zynqnet/linerate/curve"
	"github.com/zynqnet/linerate/experiment"
	"github.com/zynqnet/linerate/internal/atomicfile"
	"github.com/zynqnet/linerate/internal/cli"
	"github.com/zynqnet/linerate/tune"
)

const measuring = `Measuring: --iperf3 HOST[:PORT] measures TCP throughput and retransmits against an
iperf3 server (stock iperf3 -s, or linerate station's); --reflector MAC sends frames
through a reflector (linerate reflect, the station's): loss and round-trip p50/p99/p99.9
for each --size. Output: a line per point as it is measured, then the table; --json the
whole result instead; --csv and --svg the table and the chart (figures against values).`

// sweepFlags are the flags sweep, autotune and compare share.
type sweepFlags struct {
	knob, values, iperf3, reflector, sizes, rate, cpus, csv, svg, stateDir string
	api, direction                                                         *string
	duration, carrierTimeout                                               time.Duration
	repeat                                                                 int
	json, earlyStop                                                        bool
}

func (f *sweepFlags) register(fs *flag.FlagSet, knob bool) {
	if knob {
		fs.StringVar(&f.knob, "knob", "", "any `KNOB` a tune profile takes: rings.rx, rings.tx, coalesce.usecs, napi.defer_hard_irqs, napi.gro_flush_timeout, rps.cpus, mtu, features.gro, sysctl.net.core.netdev_max_backlog, ...")
		fs.StringVar(&f.values, "values", "", "the values: `V1,V2,...` (V1;V2;... when values hold commas, as CPU lists do), or A..B: A, 2A, 4A, ... B (ring depths: 64..8192)")
	}
	fs.StringVar(&f.iperf3, "iperf3", "", "measure TCP against the iperf3 server at `HOST[:PORT]` for --duration")
	f.direction = cli.Choice(fs, "direction", "up", "up: this port sends; down: it receives (-R)", "up", "down")
	fs.StringVar(&f.reflector, "reflector", "", "measure frames through the reflector at `MAC`")
	fs.StringVar(&f.sizes, "size", "64", "frame `SIZES` with FCS, comma-separated")
	fs.StringVar(&f.rate, "rate", "10%", "the frames' `RATE`: 10% of line rate, 200kpps, 500Mbit")
	fs.StringVar(&f.cpus, "cpus", "1", "`N|all` senders and receive rings")
	fs.DurationVar(&f.duration, "duration", 5*time.Second, "each measurement's length")
	fs.IntVar(&f.repeat, "repeat", 1, "measure each point `N` times: the median and the spread, 1..100")
	fs.BoolVar(&f.earlyStop, "early-stop", false, "with --repeat: a value's runs stop once it cannot beat the best so far (by 1%) even were its runs left the best (off: every run, for studies)")
	fs.StringVar(&f.csv, "csv", "", "write the table to `FILE`")
	fs.StringVar(&f.svg, "svg", "", "write the chart to `FILE`")
	fs.BoolVar(&f.json, "json", false, "print the whole result as JSON instead of a line per point (progress goes to stderr)")
	fs.StringVar(&f.stateDir, "state-dir", "", "tune's state `DIR` (the sweep's journal is DIR/sweep)")
	f.api = apiFlag(fs)
	fs.DurationVar(&f.carrierTimeout, "carrier-timeout", 15*time.Second, "how long to wait for the link after a value that bounces it")
}

// progress is where the lines per point go: stdout, or stderr when stdout has the JSON.
func (f *sweepFlags) progress(std cli.IO) io.Writer {
	return map[bool]io.Writer{false: std.Stdout, true: std.Stderr}[f.json]
}

// parse checks the interface, the meters and (for knob commands) the knob's values,
// each value checked once by tune's knob registry.
func (f *sweepFlags) parse(pos []string, knob bool) (string, []string, []experiment.Meter, error) {
	iface, err := one(pos, "interface")
	if err != nil {
		return "", nil, nil, err
	}
	var values []string
	if knob {
		if f.knob == "" || f.values == "" {
			return "", nil, nil, usageError("give --knob KNOB and --values V1,V2,...")
		}
		if values, err = experiment.KnobValues(f.knob, f.values); err != nil {
			return "", nil, nil, usageError("--knob/--values: %v", err)
		}
	}
	ms, err := experiment.MeterSpec{Iperf3: f.iperf3, Direction: *f.direction, Reflector: f.reflector, Sizes: f.sizes, Rate: f.rate,
		CPUs: f.cpus, Duration: f.duration, Repeat: f.repeat, Version: version}.Meters("/", iface)
	if err != nil {
		return "", nil, nil, usageError("%v", err)
	}
	for _, p := range []string{f.csv, f.svg} {
		if err := atomicfile.CanWrite(p); err != nil {
			return "", nil, nil, usageError("%v", err)
		}
	}
	return iface, values, ms, nil
}

// sweep runs the sweep with progress and writes the files asked for.
func (f *sweepFlags) sweep(ctx context.Context, iface string, values []string, ms []experiment.Meter, progress io.Writer, o experiment.Objective) (*curve.Result, error) {
	j := &experiment.Job{Sweep: experiment.Sweep{Iface: iface, Knob: f.knob, Values: values, Repeat: f.repeat, Meters: ms, EarlyStop: f.earlyStop, Objective: o},
		StateDir: f.stateDir, API: *f.api, CarrierTimeout: f.carrierTimeout, Duration: f.duration, CSV: f.csv, SVG: f.svg, Progress: progress}
	return j.Run(ctx)
}

// finish prints the result and says how the sweep ended: interrupted, or with no point
// measured, is a failure.
func (f *sweepFlags) finish(res *curve.Result, err error, stdout io.Writer) error {
	if res == nil {
		return err
	}
	if f.json {
		err = errors.Join(err, writeJSON(stdout, res))
	} else {
		res.WriteText(stdout)
	}
	if err != nil {
		return err
	}
	return experiment.Ended(res)
}

func sweepCommand() *cli.Command {
	return &cli.Command{
		Name: "sweep", Summary: "measure the port at each value of a tune knob",
		Usage: []string{"sweep IFACE --knob KNOB --values V1,V2,... (--iperf3 HOST | --reflector MAC)"},
		About: `Applies each value of one tune knob (as 'linerate tune' applies a profile: journal,
write, read back, roll back on failure; knobs that bounce the link wait for the carrier)
and measures the port at it. The port is left exactly as found: after the sweep, on an
error, on Ctrl-C or SIGTERM. Its journal is its own (STATE-DIR/sweep): a sweep that was
killed outright is undone with 'linerate revert IFACE --state-dir STATE-DIR/sweep'.

` + measuring,
		Examples: []cli.Example{cli.Ex("sweep eth0 --knob rings.rx --values 64..8192 --iperf3 192.168.10.1 --direction down --svg rings.svg", "the RX ring's curve, TCP into the port"),
			cli.Ex("sweep eth0 --knob rps.cpus --values '0;1;0-1' --reflector 02:00:00:00:00:0b", "where receive work goes, against latency")},
		Flags: func(fs *flag.FlagSet) cli.Run {
			var f sweepFlags
			f.register(fs, true)
			return func(ctx context.Context, pos []string, std cli.IO) error {
				iface, values, ms, err := f.parse(pos, true)
				if err != nil {
					return err
				}
				res, err := f.sweep(ctx, iface, values, ms, f.progress(std), experiment.Objective{Goal: "throughput"})
				return f.finish(res, err, std.Stdout)
			}
		},
	}
}

func autotuneCommand() *cli.Command {
	return &cli.Command{
		Name: "autotune", Summary: "sweep a knob and write the best value as a profile or overlay",
		Usage: []string{"autotune IFACE --knob KNOB --values LIST (--iperf3 HOST | --reflector MAC) [--write-profile FILE]"},
		About: `Sweeps the knob (see 'linerate sweep --help') and picks the best value: the most
throughput or the least p99 latency among the values that meet every constraint.
Values within 1% of the best count as equal; the first of them (in --values' order)
wins, so give the cheapest first. The port is left as found; the pick is written as a
tune profile, or for rings.rx/rings.tx as the GEM's device-tree overlay that
'tune --from-dt' applies at boot.

` + measuring,
		Examples: []cli.Example{cli.Ex("autotune eth0 --knob rings.rx --values 256..8192 --iperf3 192.168.10.1 --write-overlay rings.dtbo --board zc702", "the ring depth with the most TCP throughput, as an overlay")},
		Flags:    autotuneFlags,
	}
}

func autotuneFlags(fs *flag.FlagSet) cli.Run {
	var f sweepFlags
	f.register(fs, true)
	a := experiment.Autotune{}
	goal := cli.Choice(fs, "objective", "throughput", "what is best: throughput or latency", "throughput", "latency")
	fs.Var(cli.OptFloat{P: &a.Objective.MaxP99US}, "max-p99-us", "a constraint: p99 latency at most `N` µs")
	fs.Var(cli.OptFloat{P: &a.Objective.MinMbps}, "min-mbps", "a constraint: at least `N` Mbit/s")
	fs.Var(cli.OptFloat{P: &a.Objective.MaxLossPct}, "max-loss-pct", "a constraint: at most `N` percent of frames lost")
	fs.StringVar(&a.ProfileFile, "write-profile", "", "write a tune profile setting the pick to `FILE` ('linerate tune --profile FILE')")
	fs.StringVar(&a.OverlayFile, "write-overlay", "", "for rings.rx/rings.tx: write the GEM's device-tree overlay (.dtbo or .dts) to `FILE`; with --board")
	fs.StringVar(&a.Board, "board", "", "the `BOARD` of --write-overlay")
	fs.StringVar(&a.GEM, "gem", "", "the GEM of --write-overlay: `gemN` (default: the board's)")
	return func(ctx context.Context, pos []string, std cli.IO) error {
		iface, values, ms, err := f.parse(pos, true)
		if err != nil {
			return err
		}
		a.Objective.Goal, a.Knob, a.Iface = *goal, f.knob, iface
		if err := a.Check(f.iperf3 != "", f.reflector != ""); err != nil {
			return err
		}
		progress := f.progress(std)
		res, err := f.sweep(ctx, iface, values, ms, progress, a.Objective)
		if err != nil || res.Interrupted {
			return f.finish(res, err, std.Stdout)
		}
		pick, err := a.Pick(res, progress)
		if err != nil {
			f.finish(res, nil, std.Stdout)
			return err
		}
		if f.json {
			return writeJSON(std.Stdout, pick)
		}
		return nil
	}
}

func compareCommand() *cli.Command {
	return &cli.Command{
		Name: "compare", Summary: "measure a profile between two baselines",
		Usage: []string{"compare IFACE --profile P (--iperf3 HOST | --reflector MAC)"},
		About: `Measures the port as found, with the profile applied (one transaction), and as found
again; prints a row per figure: both baselines, the profile, the delta against the
baselines' mean and whether it is for the better. The port is left as found.

` + measuring,
		Examples: []cli.Example{cli.Ex("compare eth0 --profile zc702 --iperf3 192.168.10.1", "what the board's profile is worth")},
		Flags: func(fs *flag.FlagSet) cli.Run {
			var f sweepFlags
			f.register(fs, false)
			profile := fs.String("profile", "", "a built-in profile or a `FILE`")
			return func(ctx context.Context, pos []string, std cli.IO) error {
				iface, _, ms, err := f.parse(pos, false)
				if err != nil {
					return err
				}
				if *profile == "" {
					return usageError("give --profile P (a built-in profile or a file)")
				}
				p, err := tune.LoadProfile(*profile)
				if err != nil {
					return err
				}
				c, err := experiment.CompareJob{Iface: iface, StateDir: f.stateDir, API: *f.api, CarrierTimeout: f.carrierTimeout,
					Profile: p, Meters: ms, Repeat: f.repeat, Progress: f.progress(std)}.Run(ctx)
				if c == nil {
					return err
				}
				if f.json {
					return errors.Join(err, writeJSON(std.Stdout, c))
				}
				c.WriteText(std.Stdout)
				return err
			}
		},
	}
}
