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

Captures every file and kernel answer that doctor reads (sysfs, procfs, ethtool and
rtnetlink answers, the live device tree's GEM nodes), twice, --interval apart, into one
archive with a manifest. 'linerate doctor --from FILE.tar.gz' on any machine then gives
the findings doctor gives on this one. Without IFACE: every interface but loopback.

Flags:
  -o FILE            the archive to write (required)
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
			ifaces, err := parseFlags(fs, args)
			if err != nil {
				return err
			}
			if *out == "" {
				return usageError("-o FILE.tar.gz is required")
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
