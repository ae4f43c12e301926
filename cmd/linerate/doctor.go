package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/zynqnet/linerate/board"
	"github.com/zynqnet/linerate/doctor"
	"github.com/zynqnet/linerate/nic"
	"github.com/zynqnet/linerate/snapshot"
)

const doctorUsage = `Usage: linerate doctor [IFACE...] [--json] [--interval 3s] [--profile throughput|latency]
                       [--from SNAPSHOT.tar.gz | --root DIR] [--board NAME]

Explains what holds an interface back, in the order the field guides troubleshoot:
link, errors on the wire, driver, queues and IRQs, rings, coalescing, socket buffers and
backlog, CPU power, PCIe, captures left running. Counters are read twice, --interval
apart, so rates are judged, not totals. Each finding has an id, a severity (fail, warn,
info), the numbers read, why it matters and the exact fix.

Exit status: 0 when no finding is a fail, 1 when one is, 2 on usage errors or bad input.

Flags:
  --json             {"interfaces":[{"name":...,"findings":[{id,severity,evidence,why,fix}]}]}
  --interval D       time between the two samples (default 3s)
  --profile P        throughput (default) or latency: what the findings judge against
  --from FILE        judge a snapshot taken with 'linerate snapshot' (on any machine)
  --root DIR         judge a captured tree (one sample: no rates)
  --board NAME       take the interfaces as this board's GEM instead of detecting the
                     board from the device tree (known: %s)
  --ethtool-api API  auto, netlink or ioctl
`

type doctorConfig struct {
	json     bool
	interval time.Duration
	profile  string
	from     string
	root     string
	board    string
	api      string
	ifaces   []string
}

func doctorCommand() command {
	return command{
		name:    "doctor",
		summary: "explain what holds an interface back, with the fix",
		usage:   fmt.Sprintf(doctorUsage, strings.Join(board.Names(), ", ")),
		run: func(ctx context.Context, args []string, _ io.Reader, stdout, _ io.Writer) error {
			var c doctorConfig
			fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
			fs.BoolVar(&c.json, "json", false, "")
			fs.DurationVar(&c.interval, "interval", 3*time.Second, "")
			fs.StringVar(&c.profile, "profile", doctor.Throughput, "")
			fs.StringVar(&c.from, "from", "", "")
			fs.StringVar(&c.root, "root", "", "")
			fs.StringVar(&c.board, "board", "", "")
			fs.StringVar(&c.api, "ethtool-api", nic.APIAuto, "")
			pos, err := parseFlags(fs, args)
			if err != nil {
				return err
			}
			c.ifaces = pos
			switch {
			case c.profile != doctor.Throughput && c.profile != doctor.Latency:
				return usageError("--profile %q: want throughput or latency", c.profile)
			case c.interval < 0 || c.interval > time.Hour:
				return usageError("--interval %v: want 0 to 1h", c.interval)
			case c.from != "" && c.root != "":
				return usageError("--from and --root exclude each other")
			}
			return c.run(ctx, stdout)
		},
	}
}

func (c *doctorConfig) run(ctx context.Context, stdout io.Writer) error {
	in := doctor.Input{Profile: c.profile, Interval: c.interval}
	if c.board != "" {
		b, err := board.Lookup(c.board)
		if err != nil {
			return usageError("--board: %v", err)
		}
		in.Board = b
	}
	var err error
	switch {
	case c.from != "":
		in.Before, in.After, in.Interval, err = snapshot.Samples(c.from, c.ifaces)
	case c.root != "":
		var r *nic.Reader
		var closeFn func()
		if r, closeFn, err = nic.Open(c.root, c.api); err == nil {
			defer closeFn()
			in.After, err = r.Sample(c.ifaces...)
			in.Before, in.Interval = in.After, 0
		}
	default:
		in.Before, in.After, err = nic.SampleLive(ctx, c.api, c.interval, c.ifaces, nil)
	}
	if err != nil {
		return err
	}
	rep, err := doctor.Diagnose(in)
	if err != nil {
		return err
	}
	if c.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		doctor.WriteText(stdout, rep)
	}
	if rep.Failed() {
		return &exitError{code: 1, err: errFindings}
	}
	return nil
}

var errFindings = fmt.Errorf("a finding failed")
