package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/zynqnet/linerate/internal/atomicfile"
	"github.com/zynqnet/linerate/nic"
	"github.com/zynqnet/linerate/snapshot"
)

const snapshotUsage = `Usage: linerate snapshot [IFACE...] -o FILE.tar.gz [--interval 3s]
       linerate snapshot --from-console SERIAL.log -o FILE.tar.gz

Captures every file and kernel answer that doctor reads (sysfs, procfs, ethtool and
rtnetlink answers, the live device tree's GEM nodes), twice, --interval apart, into one
archive with a manifest. 'linerate doctor --from FILE.tar.gz' on any machine then gives
the findings doctor gives on this one. Without IFACE: every interface but loopback.

A board with only a serial console prints its snapshot there (the tester image's
linerate.run=capture job, between "==== LINERATE CAPTURE" lines); --from-console takes
it back out of the console's log, checked against its size and SHA-256.

Flags:
  -o FILE            the archive to write (required)
  --from-console LOG the last capture printed in a serial console log
  --interval D       time between the two samples (default 3s)
  --ethtool-api API  auto, netlink or ioctl
`

func snapshotCommand() command {
	return command{
		name:    "snapshot",
		summary: "capture what doctor reads into an archive, for offline diagnosis",
		usage:   snapshotUsage,
		run: func(ctx context.Context, args []string, _ io.Reader, stdout, _ io.Writer) error {
			fs := flag.NewFlagSet("snapshot", flag.ContinueOnError)
			out := fs.String("o", "", "")
			interval := fs.Duration("interval", 3*time.Second, "")
			api := fs.String("ethtool-api", nic.APIAuto, "")
			fromConsole := fs.String("from-console", "", "")
			ifaces, err := parseFlags(fs, args)
			if err != nil {
				return err
			}
			if *out == "" {
				return usageError("-o FILE.tar.gz is required")
			}
			if *fromConsole != "" {
				if len(ifaces) > 0 {
					return usageError("--from-console takes no interfaces: the board chose them")
				}
				return snapshotFromConsole(stdout, *fromConsole, *out)
			}
			if *interval < 0 || *interval > time.Hour {
				return usageError("--interval %v: want 0 to 1h", *interval)
			}
			return writeSnapshot(ctx, stdout, *out, *interval, *api, ifaces)
		},
	}
}

func writeSnapshot(ctx context.Context, stdout io.Writer, out string, interval time.Duration, api string, ifaces []string) error {
	archive, m, n, err := snapshot.Capture(ctx, api, interval, ifaces, version)
	if err != nil {
		return err
	}
	// Write then rename, so a half-written archive never carries the name.
	if err := atomicfile.Write(out, archive, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: %d entries, %d bytes, interfaces %v, %v between samples\n", out, n, len(archive), m.Interfaces, interval)
	return nil
}

// snapshotFromConsole takes the snapshot a board printed on its console out of the log
// and writes it.
func snapshotFromConsole(stdout io.Writer, logFile, out string) error {
	archive, m, err := snapshot.FromConsole(logFile)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(out, archive, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: %d bytes, interfaces %v, %v between samples, taken by linerate %s\n", out, len(archive), m.Interfaces, m.Interval(), m.Version)
	return nil
}
