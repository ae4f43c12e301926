package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/zynqnet/linerate/internal/cli"
	"github.com/zynqnet/linerate/nic"
	"github.com/zynqnet/linerate/validate"
)

func validateCommand() *cli.Command {
	return &cli.Command{
		Name: "validate", Summary: "run a board's factory plan: one verdict, reports, upload to the station",
		Usage: []string{"validate PLAN [--report-dir DIR] [--station URL] [--station-token FILE|@ENV] [--serial S] [--json]"},
		About: `Runs a board's factory plan: its steps in order (` + strings.Join(validate.StepTypes(), ", ") + `), each
with a timeout and the whole plan within its budget, a line per step with PASS, FAIL or
SKIP and the measured value against its threshold, then exactly one verdict line:

  LINERATE PASS board=zc702 serial=... mac=... tcp-up_mbps=941.2 ... failed=- elapsed=41.3s

The JSON and JUnit reports go to the report directory and the JSON to the station; one
the station does not take stays in the spool (DIR/spool), is printed between "==== LINERATE
REPORT" lines and re-sent. Exit 0 on pass, 1 on fail, 2 on a bad plan. PLAN is a file, or
a built-in plan: ` + strings.Join(validate.BuiltinNames(), ", ") + `.`,
		Examples: []cli.Example{cli.Ex("validate zc702 --station http://192.168.10.1:8080/api/reports --station-token /etc/linerate/token", "a ZC702 on the line"),
			cli.Ex("validate my-plan.yaml --report-dir /tmp/r --json", "a plan of one's own; the report on stdout")},
		Flags: func(fs *flag.FlagSet) cli.Run {
			v := validate.Validation{API: nic.APIAuto, Version: version}
			fs.StringVar(&v.ReportDir, "report-dir", "", "where reports go: `DIR` (default /var/lib/linerate/reports, or /run/linerate/reports on a read-only root)")
			fs.StringVar(&v.StationURL, "station", "", "the station's report `URL` (default: the plan's station.report_url)")
			token := fs.String("station-token", "", "the station's bearer token (station --tokens): a `FILE|@NAME` (a file, or an environment variable; default: the plan's station.token)")
			fs.BoolVar(&v.InsecureToken, "insecure-token", false, "send the station token over plain http too (by default it goes only over https: on http anyone on the line's network reads it)")
			ca := fs.String("station-ca", "", "the CA certificate `FILE` (PEM) an https station's certificate is checked against (default: the system's roots)")
			fs.StringVar(&v.Serial, "serial", "", "the board's serial number (default: the device tree's serial-number, the SoC's, else one made from the MAC)")
			fs.BoolVar(&v.AskSerial, "ask-serial", false, "ask for the serial on the console (a barcode scanner types it), again until it matches the plan's serial_pattern")
			fs.StringVar(&v.Fixture, "fixture", "", "the test fixture's `NAME` (default: linerate.fixture=, the plan's fixture, else the station's port)")
			fs.StringVar(&v.Operator, "operator", "", "who tests the board: an operator `ID` (default: linerate.operator=, the plan's operator)")
			fs.BoolVar(&v.AskOperator, "ask-operator", false, "ask for the operator's id on the console first")
			fs.DurationVar(&v.UploadWindow, "upload-window", 60*time.Second, "how long to keep re-sending a report")
			asJSON := fs.Bool("json", false, "print the JSON report on stdout (progress goes to stderr)")
			fs.StringVar(&v.Root, "root", "/", "read /sys and /proc under `DIR` (tests: a captured tree)")
			list, show := fs.Bool("list", false, "list the built-in plans (board, ports, steps) and end"), fs.String("print", "", "print the built-in plan `NAME` as shipped (a start for one's own) and end")
			return func(ctx context.Context, pos []string, std cli.IO) error {
				if done, err := validate.ShowBuiltins(std.Stdout, *list, *show); done {
					return err
				}
				name, err := one(pos, "PLAN (a file or a built-in plan)")
				if err != nil {
					return err
				}
				if v.Plan, err = validate.Load(name); err != nil {
					return err
				}
				if v.StationToken, err = validate.ReadToken(cmp.Or(*token, v.Plan.Station.Token)); err != nil {
					return usageError("--station-token or the plan's station.token: %v", err)
				}
				if v.StationTLS, err = validate.StationTLS(*ca); err != nil {
					return usageError("--station-ca: %v", err)
				}
				v.Console, v.Input = std.Stdout, std.Stdin
				if *asJSON {
					v.Console = std.Stderr
				}
				res, err := v.Run(ctx)
				if err != nil {
					return err
				}
				if *asJSON {
					std.Stdout.Write(append(res.JSON, '\n'))
				}
				if res.Report.Verdict != "PASS" {
					return cli.Fail(fmt.Errorf("FAIL: %s", strings.Join(res.Report.Failed, ", ")))
				}
				return nil
			}
		},
	}
}
