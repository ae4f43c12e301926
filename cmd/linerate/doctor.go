package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"strings"
	"time"

	"github.com/zynqnet/linerate/board"
	"github.com/zynqnet/linerate/doctor"
	"github.com/zynqnet/linerate/internal/cli"
	"github.com/zynqnet/linerate/snapshot"
)

func doctorCommand() *cli.Command {
	return &cli.Command{
		Name: "doctor", Summary: "explain what holds an interface back, with the fix",
		Usage: []string{"doctor [IFACE...] [--json] [--interval 3s] [--profile throughput|latency]", "doctor [IFACE...] --from SNAPSHOT.tar.gz | --root DIR"},
		About: `Explains what holds an interface back, in the order the field guides troubleshoot:
link, errors on the wire, driver, queues and IRQs, rings, coalescing, socket buffers and
backlog, CPU power, PCIe, captures left running. Counters are read twice, --interval
apart, so rates are judged, not totals. Each finding has an id, a severity (fail, warn,
info), the numbers read, why it matters and the exact fix.

Exit status: 0 when no finding is a fail, 1 when one is, 2 on usage errors or bad input.`,
		Examples: []cli.Example{cli.Ex("doctor eth0", "the findings, with the fix for each"),
			cli.Ex("doctor --from board.tar.gz", "a board's findings from its snapshot, on any machine")},
		Flags: func(fs *flag.FlagSet) cli.Run {
			var in doctor.Input
			asJSON := fs.Bool("json", false, `print {"interfaces":[{"name":...,"findings":[{id,severity,evidence,why,fix}]}]}`)
			fs.DurationVar(&in.Interval, "interval", 3*time.Second, "time between the two samples, up to 1h")
			profile := cli.Choice(fs, "profile", doctor.Throughput, "what the findings judge against: throughput or latency", doctor.Throughput, doctor.Latency)
			from := fs.String("from", "", "judge a snapshot `FILE` taken with 'linerate snapshot' (on any machine)")
			root := fs.String("root", "", "judge a captured tree `DIR` (one sample: no rates)")
			boardName := fs.String("board", "", "take the interfaces as this `BOARD`'s GEM instead of detecting the board from the device tree (known: "+strings.Join(board.Names(), ", ")+")")
			api := apiFlag(fs)
			return func(ctx context.Context, pos []string, std cli.IO) error {
				in.Profile = *profile
				switch {
				case in.Interval < 0 || in.Interval > time.Hour:
					return usageError("--interval %v: want 0 to 1h", in.Interval)
				case *from != "" && *root != "":
					return usageError("--from and --root exclude each other")
				}
				if *boardName != "" {
					b, err := board.Lookup(*boardName)
					if err != nil {
						return usageError("--board: %v", err)
					}
					in.Board = b
				}
				return runDoctor(ctx, std.Stdout, in, pos, snapshot.Source{From: *from, Root: *root, API: *api, Interval: in.Interval}, *asJSON)
			}
		},
	}
}

// runDoctor samples (live, a snapshot or a tree), diagnoses and renders; a failing
// finding is exit 1.
func runDoctor(ctx context.Context, stdout io.Writer, in doctor.Input, ifaces []string, src snapshot.Source, asJSON bool) error {
	var err error
	if in.Before, in.After, in.Interval, err = src.Read(ctx, ifaces); err != nil {
		return err
	}
	rep, err := doctor.Diagnose(in)
	if err != nil {
		return err
	}
	if asJSON {
		err = writeJSON(stdout, rep)
	} else {
		doctor.WriteText(stdout, rep)
	}
	if err == nil && rep.Failed() {
		return cli.Fail(errors.New("a finding failed"))
	}
	return err
}
