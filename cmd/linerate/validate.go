package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/zynqnet/linerate/nic"
	"github.com/zynqnet/linerate/plan"
	"github.com/zynqnet/linerate/validate"
)

const validateUsage = `Usage: linerate validate PLAN [--report-dir DIR] [--station URL] [--serial S] [--json]

Runs a board's factory plan: its steps in order (link, doctor, tune, iperf3, frames,
counters, sweep), each with a timeout and the whole plan within its budget, and prints a line
per step with PASS or FAIL and the measured value against its threshold, then exactly
one verdict line:

  LINERATE PASS board=zc702 serial=... mac=... tcp-up_mbps=941.2 ... failed=- elapsed=41.3s

It writes a JSON report (the plan, every step's measurements, doctor's findings and show
of the port) and a JUnit XML report to the report directory, and POSTs the JSON to the
station. A report the station does not take stays in the spool (DIR/spool), is printed
on the console between "==== LINERATE REPORT BEGIN" and "END" lines, is re-sent with
backoff for --upload-window, and again by the next run. Exit 0 on pass, 1 on fail, 2 on
a bad plan.

PLAN is a file, or a built-in plan: %s.

Flags:
  --report-dir DIR    where reports go (default /var/lib/linerate/reports, or
                      /run/linerate/reports on a read-only root)
  --station URL       the station's report URL (default: the plan's station.report_url)
  --serial S          the board's serial number (default: the device tree's
                      serial-number, the SoC's, else one made from the MAC)
  --upload-window D   how long to keep re-sending a report (default 60s)
  --station-token FILE|@NAME  the station's bearer token (station --tokens): a file, or
                      an environment variable (default: the plan's station.token)
  --station-ca FILE   the CA certificate (PEM) an https station's certificate is
                      checked against (default: the system's roots)
  --json              print the JSON report on stdout (progress goes to stderr)
`

func validateCommand() command {
	return command{
		name:    "validate",
		summary: "run a board's factory plan: one verdict, reports, upload to the station",
		usage:   fmt.Sprintf(validateUsage, strings.Join(validate.BuiltinNames(), ", ")),
		run: func(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
			fs := flag.NewFlagSet("validate", flag.ContinueOnError)
			c := validateConfig{}
			fs.StringVar(&c.reportDir, "report-dir", "", "")
			fs.StringVar(&c.station, "station", "", "")
			fs.StringVar(&c.token, "station-token", "", "")
			fs.StringVar(&c.ca, "station-ca", "", "")
			fs.StringVar(&c.serial, "serial", "", "")
			fs.DurationVar(&c.window, "upload-window", 60*time.Second, "")
			fs.BoolVar(&c.json, "json", false, "")
			fs.StringVar(&c.root, "root", "/", "")
			pos, err := parseFlags(fs, args)
			if err != nil {
				return err
			}
			if len(pos) != 1 {
				return usageError("give one PLAN (a file or a built-in plan)")
			}
			p, err := validate.Load(pos[0])
			if err != nil {
				return err
			}
			return c.run(ctx, p, stdout, stderr)
		},
	}
}

type validateConfig struct {
	reportDir, station, serial, root, token, ca string
	window                                      time.Duration
	json                                        bool
}

func (c *validateConfig) run(ctx context.Context, p *plan.Plan, stdout, stderr io.Writer) error {
	console := stdout
	if c.json {
		console = stderr
	}
	tok, err := validate.ReadToken(cmp.Or(c.token, p.Station.Token))
	if err != nil {
		return usageError("--station-token or the plan's station.token: %v", err)
	}
	tc, err := validate.StationTLS(c.ca)
	if err != nil {
		return usageError("--station-ca: %v", err)
	}
	v := &validate.Validation{Plan: p, ReportDir: c.reportDir, StationURL: c.station, StationToken: tok, StationTLS: tc, Serial: c.serial, Root: c.root,
		API: nic.APIAuto, Version: version, UploadWindow: c.window, Console: console}
	res, err := v.Run(ctx)
	if err != nil {
		return err
	}
	if c.json {
		stdout.Write(append(res.JSON, '\n'))
	}
	if res.Report.Verdict != "PASS" {
		return &exitError{code: 1, err: fmt.Errorf("FAIL: %s", strings.Join(res.Report.Failed, ", "))}
	}
	return nil
}
