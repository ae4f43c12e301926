package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/zynqnet/linerate/curve"
	"github.com/zynqnet/linerate/experiment"
	"github.com/zynqnet/linerate/internal/atomicfile"
	"github.com/zynqnet/linerate/nic"
	"github.com/zynqnet/linerate/tune"
)

const measureFlags = `Measuring (one or both):
  --iperf3 HOST[:PORT]  TCP throughput and retransmits against an iperf3 server (stock
                        iperf3 -s, or linerate station's), --duration long
  --direction up|down   up: this port sends (default); down: it receives (-R)
  --reflector MAC       frames through a reflector (linerate reflect, the station's):
                        loss and round-trip p50/p99/p99.9 for each --size
  --size S[,S...]       frame sizes with FCS (default 64)
  --rate R              the frames' rate: 10% of line rate (default), 200kpps, 500Mbit
  --cpus N|all          senders and receive rings (default 1)
  --duration D          each measurement's length (default 5s)
  --repeat N            measure each point N times: the median and the spread (default 1)
Output:
  a line per point as it is measured; --json the whole result as JSON instead;
  --csv FILE, --svg FILE the table and the chart (figures against the values)
Tuning (as tune does): --state-dir DIR, --ethtool-api API, --carrier-timeout D
`

const sweepUsage = `Usage: linerate sweep IFACE --knob KNOB --values V1,V2,... (--iperf3 HOST | --reflector MAC) [flags]

Applies each value of one tune knob (as 'linerate tune' applies a profile: journal,
write, read back, roll back on failure; knobs that bounce the link wait for the carrier)
and measures the port at it. The port is left exactly as found: after the sweep, on an
error, on Ctrl-C or SIGTERM. Its journal is its own (STATE-DIR/sweep): a sweep that was
killed outright is undone with 'linerate revert IFACE --state-dir STATE-DIR/sweep'.

  --knob KNOB           any knob a tune profile takes: rings.rx, rings.tx, coalesce.usecs,
                        napi.defer_hard_irqs, napi.gro_flush_timeout, rps.cpus, mtu,
                        features.gro, sysctl.net.core.netdev_max_backlog, ...
  --values LIST         V1,V2,... (V1;V2;... when values hold commas, as CPU lists do), or
                        A..B: A, 2A, 4A, ... B (ring depths: 64..8192)

` + measureFlags

const autotuneUsage = `Usage: linerate autotune IFACE --knob KNOB --values LIST (--iperf3 HOST | --reflector MAC) [flags]

Sweeps the knob (see 'linerate sweep --help') and picks the best value: the most
throughput or the least p99 latency among the values that meet every constraint.
Values within 1% of the best count as equal; the first of them (in --values' order)
wins, so give the cheapest first. The port is left as found; the pick is written:

  --objective throughput|latency   (default throughput)
  --max-p99-us N, --min-mbps N, --max-loss-pct N   constraints
  --write-profile FILE  a tune profile setting the pick ('linerate tune --profile FILE')
  --write-overlay FILE  for rings.rx/rings.tx: the GEM's device-tree overlay (.dtbo or
                        .dts) that 'tune --from-dt' applies at boot; with --board B
                        [--gem gemN]

` + measureFlags

const compareUsage = `Usage: linerate compare IFACE --profile P (--iperf3 HOST | --reflector MAC) [flags]

Measures the port as found, with the profile applied (one transaction), and as found
again; prints a row per figure: both baselines, the profile, the delta against the
baselines' mean and whether it is for the better. The port is left as found.

` + measureFlags

// sweepFlags are the flags the three commands share.
type sweepFlags struct {
	knob, values, iperf3, direction, reflector, sizes, rate, cpus, csv, svg, stateDir, api string
	duration, carrierTimeout                                                               time.Duration
	repeat                                                                                 int
	json                                                                                   bool
}

func (f *sweepFlags) register(fs *flag.FlagSet, knob bool) {
	if knob {
		fs.StringVar(&f.knob, "knob", "", "")
		fs.StringVar(&f.values, "values", "", "")
	}
	fs.StringVar(&f.iperf3, "iperf3", "", "")
	fs.StringVar(&f.direction, "direction", "up", "")
	fs.StringVar(&f.reflector, "reflector", "", "")
	fs.StringVar(&f.sizes, "size", "64", "")
	fs.StringVar(&f.rate, "rate", "10%", "")
	fs.StringVar(&f.cpus, "cpus", "1", "")
	fs.DurationVar(&f.duration, "duration", 5*time.Second, "")
	fs.IntVar(&f.repeat, "repeat", 1, "")
	fs.StringVar(&f.csv, "csv", "", "")
	fs.StringVar(&f.svg, "svg", "", "")
	fs.BoolVar(&f.json, "json", false, "")
	fs.StringVar(&f.stateDir, "state-dir", "", "")
	fs.StringVar(&f.api, "ethtool-api", nic.APIAuto, "")
	fs.DurationVar(&f.carrierTimeout, "carrier-timeout", 15*time.Second, "")
}

// progress is where the lines per point go: stdout, or stderr when stdout has the JSON.
func (f *sweepFlags) progress(stdout, stderr io.Writer) io.Writer {
	if f.json {
		return stderr
	}
	return stdout
}

// meters checks the measuring flags and builds the meters.
func (f *sweepFlags) meters(iface string) ([]experiment.Meter, error) {
	if f.repeat < 1 || f.repeat > 100 {
		return nil, usageError("--repeat %d: want 1..100", f.repeat)
	}
	ms, err := experiment.MeterSpec{Iperf3: f.iperf3, Direction: f.direction, Reflector: f.reflector, Sizes: f.sizes, Rate: f.rate,
		CPUs: f.cpus, Duration: f.duration, Version: version}.Meters("/", iface)
	if err != nil {
		return nil, usageError("%v", err)
	}
	return ms, nil
}

// parse reads the shared flags and the interface; knob commands also the knob and values.
func (f *sweepFlags) parse(fs *flag.FlagSet, args []string, knob bool) (string, []string, []experiment.Meter, error) {
	pos, err := parseFlags(fs, args)
	if err != nil {
		return "", nil, nil, err
	}
	if len(pos) != 1 {
		return "", nil, nil, usageError("want exactly one interface, have %d", len(pos))
	}
	var values []string
	if knob {
		if f.knob == "" || f.values == "" {
			return "", nil, nil, usageError("give --knob KNOB and --values V1,V2,...")
		}
		if values, err = experiment.ParseValues(f.values); err != nil {
			return "", nil, nil, usageError("%v", err)
		}
		for _, v := range values {
			if _, err := tune.CheckSetting(f.knob, v); err != nil {
				return "", nil, nil, usageError("--knob/--values: %v", err)
			}
		}
	}
	ms, err := f.meters(pos[0])
	return pos[0], values, ms, err
}

// sweep runs the sweep with progress on out and writes the files asked for.
func (f *sweepFlags) sweep(ctx context.Context, iface string, values []string, ms []experiment.Meter, out, progress io.Writer) (*curve.Result, error) {
	t, err := experiment.OpenTuner(iface, f.stateDir, f.api, f.carrierTimeout)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	s := &experiment.Sweep{Iface: iface, Knob: f.knob, Values: values, Repeat: f.repeat, Meters: ms, Setter: t}
	head := &curve.Result{Knob: f.knob, Columns: s.Columns()}
	fmt.Fprintf(progress, "sweep %s %s over %d values, %v a measurement\n", iface, f.knob, len(values), f.duration)
	s.Progress = func(p curve.Point) { fmt.Fprintln(progress, "  "+head.PointLine(p)) }
	res, err := s.Run(ctx)
	if res != nil {
		if werr := f.writeFiles(res); werr != nil && err == nil {
			err = werr
		}
	}
	return res, err
}

func (f *sweepFlags) writeFiles(res *curve.Result) error {
	for _, o := range []struct {
		path  string
		write func(io.Writer) error
	}{{f.csv, res.WriteCSV}, {f.svg, res.WriteSVG}} {
		if o.path == "" {
			continue
		}
		var b bytes.Buffer
		o.write(&b)
		if err := atomicfile.Write(o.path, b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func (f *sweepFlags) finish(res *curve.Result, err error, stdout io.Writer) error {
	if res == nil {
		return err
	}
	if f.json {
		if jerr := writeJSON(stdout, res); jerr != nil && err == nil {
			err = jerr
		}
	} else if res.Interrupted || !res.Restored {
		res.WriteText(stdout)
	} else {
		fmt.Fprintf(stdout, "%s given back its value from before the sweep\n", f.knob)
	}
	if err == nil && res.Interrupted {
		err = errors.New("interrupted")
	}
	return err
}

func sweepCommand() command {
	return command{name: "sweep", summary: "measure the port at each value of a tune knob", usage: sweepUsage,
		run: func(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
			var f sweepFlags
			fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
			f.register(fs, true)
			iface, values, ms, err := f.parse(fs, args, true)
			if err != nil {
				return err
			}
			progress := f.progress(stdout, stderr)
			res, err := f.sweep(ctx, iface, values, ms, stdout, progress)
			return f.finish(res, err, stdout)
		}}
}

func autotuneCommand() command {
	return command{name: "autotune", summary: "sweep a knob and write the best value as a profile or overlay", usage: autotuneUsage,
		run: func(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
			var f sweepFlags
			fs := flag.NewFlagSet("autotune", flag.ContinueOnError)
			f.register(fs, true)
			var o experiment.Objective
			fs.StringVar(&o.Goal, "objective", "throughput", "")
			fs.Float64("max-p99-us", 0, "")
			fs.Float64("min-mbps", 0, "")
			fs.Float64("max-loss-pct", 0, "")
			profOut := fs.String("write-profile", "", "")
			dtOut := fs.String("write-overlay", "", "")
			boardName := fs.String("board", "", "")
			gem := fs.String("gem", "", "")
			iface, values, ms, err := f.parse(fs, args, true)
			if err != nil {
				return err
			}
			for name, p := range map[string]**float64{"max-p99-us": &o.MaxP99US, "min-mbps": &o.MinMbps, "max-loss-pct": &o.MaxLossPct} {
				if flagGiven(fs, name) {
					v, _ := strconv.ParseFloat(fs.Lookup(name).Value.String(), 64)
					if v < 0 {
						return usageError("--%s %g: want 0 or more", name, v)
					}
					*p = &v
				}
			}
			if err := o.Check(f.iperf3 != "", f.reflector != ""); err != nil {
				return usageError("%v", err)
			}
			if *dtOut != "" {
				if f.knob != "rings.rx" && f.knob != "rings.tx" {
					return usageError("--write-overlay: the GEM's overlay carries ring depths only (rings.rx, rings.tx), not %s", f.knob)
				}
				if _, err := experiment.RingOverlay(*boardName, *gem, f.knob, "64"); err != nil { // --board and --gem, before the sweep
					return err
				}
			}
			progress := f.progress(stdout, stderr)
			res, err := f.sweep(ctx, iface, values, ms, stdout, progress)
			if err != nil || res.Interrupted {
				return f.finish(res, err, stdout)
			}
			best, why, err := o.Pick(res)
			if err != nil {
				f.finish(res, nil, stdout)
				return err
			}
			for _, w := range why {
				fmt.Fprintln(progress, "  not "+w)
			}
			fmt.Fprintf(progress, "best for %s: %s\n", o.Goal, res.PointLine(*best))
			if *profOut != "" {
				y, err := experiment.ProfileYAML(res, best, o)
				if err != nil {
					return err
				}
				if err := atomicfile.Write(*profOut, y, 0o644); err != nil {
					return err
				}
				fmt.Fprintf(progress, "wrote %s: linerate tune %s --profile %s\n", *profOut, iface, *profOut)
			}
			if *dtOut != "" {
				ov, err := experiment.RingOverlay(*boardName, *gem, f.knob, best.Value)
				if err != nil {
					return err
				}
				if _, err := ov.WriteFile(*dtOut); err != nil {
					return err
				}
				fmt.Fprintf(progress, "wrote %s: %s\n", *dtOut, ov.Describe())
			}
			if f.json {
				return writeJSON(stdout, map[string]any{"sweep": res, "objective": o.Goal, "best": best, "rejected": why})
			}
			return nil
		}}
}

func compareCommand() command {
	return command{name: "compare", summary: "measure a profile between two baselines", usage: compareUsage,
		run: func(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
			var f sweepFlags
			fs := flag.NewFlagSet("compare", flag.ContinueOnError)
			f.register(fs, false)
			profile := fs.String("profile", "", "")
			iface, _, ms, err := f.parse(fs, args, false)
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
			t, err := experiment.OpenTuner(iface, f.stateDir, f.api, f.carrierTimeout)
			if err != nil {
				return err
			}
			defer t.Close()
			progress := f.progress(stdout, stderr)
			c, err := experiment.Compare(ctx, t, p, ms, f.repeat, func(name string, pt curve.Point) {
				fmt.Fprintf(progress, "  %s measured\n", name)
			})
			if f.json {
				if jerr := writeJSON(stdout, c); jerr != nil && err == nil {
					err = jerr
				}
			} else {
				c.WriteText(stdout)
			}
			return err
		}}
}
