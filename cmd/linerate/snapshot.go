package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/zynqnet/linerate/internal/cli"
	"github.com/zynqnet/linerate/snapshot"
)

func snapshotCommand() *cli.Command {
	return &cli.Command{
		Name: "snapshot", Summary: "capture what doctor reads into an archive, for offline diagnosis",
		Usage: []string{"snapshot [IFACE...] -o FILE.tar.gz [--interval 3s]", "snapshot --from-console SERIAL.log -o FILE.tar.gz"},
		About: `Captures every file and kernel answer that doctor reads (sysfs, procfs, ethtool and
rtnetlink answers, the live device tree's GEM nodes), twice, --interval apart, into one
archive with a manifest. 'linerate doctor --from FILE.tar.gz' on any machine then gives
the findings doctor gives on this one. Without IFACE: every interface but loopback.

A board with only a serial console prints its snapshot there (the tester image's
linerate.run=capture job, between "==== LINERATE CAPTURE" lines); --from-console takes
it back out of the console's log, checked against its size and SHA-256.`,
		Examples: []cli.Example{cli.Ex("snapshot eth0 -o board.tar.gz", "then 'linerate doctor --from board.tar.gz' anywhere"),
			cli.Ex("snapshot --from-console serial.log -o board.tar.gz", "the capture a board printed on its console")},
		Flags: func(fs *flag.FlagSet) cli.Run {
			out := fs.String("o", "", "the archive `FILE` to write (required)")
			interval := fs.Duration("interval", 3*time.Second, "time between the two samples, up to 1h")
			api := apiFlag(fs)
			fromConsole := fs.String("from-console", "", "take the last capture printed in a serial console `LOG`")
			return func(ctx context.Context, ifaces []string, std cli.IO) error {
				if *out == "" {
					return usageError("-o FILE.tar.gz is required")
				}
				var msg string
				var err error
				switch {
				case *fromConsole != "" && len(ifaces) > 0:
					return usageError("--from-console takes no interfaces: the board chose them")
				case *fromConsole != "":
					msg, err = snapshot.FromConsoleFile(*fromConsole, *out)
				case *interval < 0 || *interval > time.Hour:
					return usageError("--interval %v: want 0 to 1h", *interval)
				default:
					msg, err = snapshot.CaptureFile(ctx, *api, *interval, ifaces, version, *out)
				}
				fmt.Fprint(std.Stdout, msg)
				return err
			}
		},
	}
}
