//go:build !arm && !arm64

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/zynqnet/linerate/internal/cli"
	"github.com/zynqnet/linerate/netperf/engine"
	"github.com/zynqnet/linerate/netperf/iperf3"
	"github.com/zynqnet/linerate/station"
	"github.com/zynqnet/linerate/validate"
	"golang.org/x/sync/errgroup"
)

// The station runs on the line's PC (amd64); the board images (arm, arm64) are built
// without it, so its HTTP, store and metrics code never weighs on them.

func stationCommand() *cli.Command {
	return &cli.Command{
		Name: "station", Summary: "the line's station: reports, page, metrics, iperf3 server, reflector",
		Usage: []string{"station [--listen ADDR:PORT] [--data DIR | --db postgres://...] [--iperf3 ADDR:PORT|off] [--reflect IFACE] [--netboot IFACE --boot-dir DIR --netboot-pool FIRST-LAST --netboot-plan PLAN]"},
		About: `The line's station: receives the boards' validate reports (POST /api/reports), checks
and stores them durably, and serves the line lead's page (/), the reports (/api/reports,
CSV, JSON, JUnit, sweep charts) and Prometheus metrics (/metrics). Beside it run the
iperf3 server and the frame reflector the plans measure against: one command sets up a
station. It runs until stopped (Ctrl-C, SIGTERM) or --duration.`,
		Examples: []cli.Example{cli.Ex("station --tokens /etc/linerate/tokens --reflect eth1", "a locked-down station that also reflects frames on eth1"),
			cli.Ex("station --db postgres://linerate@db/line --listen 10.0.0.1:8080", "one of several stations sharing a PostgreSQL database")},
		Subs: []*cli.Command{station.LimitsCommand(), station.BootScriptCommand(validate.Load)},
		Flags: func(fs *flag.FlagSet) cli.Run {
			c := station.Config{}
			fs.StringVar(&c.Listen, "listen", ":8080", "HTTP address `ADDR:PORT`")
			fs.StringVar(&c.Data, "data", "/var/lib/linerate-station", "where the bbolt store lives: `DIR`")
			ip3 := fs.String("iperf3", ":5201", "the iperf3 servers' `ADDR:PORT[,ADDR:PORT...]` (one per port of a multi-port board), or off")
			reflect := fs.String("reflect", "", "reflect the boards' test frames on these `IFACE[,IFACE...]`: in the kernel (reflect --bpf) where it takes it, else a real-time thread (default: none)")
			duration := fs.Duration("duration", 0, "stop after this long (default: run until stopped)")
			fs.StringVar(&c.Tokens, "tokens", "", "POST takes only the bearer tokens in `FILE` (lines \"TOKEN NAME\", '#' comments); a report records its token's name and the address it came from; without it anyone on the network may post")
			fs.StringVar(&c.ReadTokens, "read-tokens", "", "the page and the API need one of the tokens in `FILE` (or a --tokens one)")
			fs.StringVar(&c.DB, "db", "", "store in PostgreSQL instead (`URL`: postgres://USER@HOST/DB, or key=value settings): the stations of a line on one database share one history; the station creates and migrates its tables")
			fs.StringVar(&c.TLSCert, "tls-cert", "", "serve https with this certificate `FILE` (PEM), with --tls-key; the boards check it with validate --station-ca")
			fs.StringVar(&c.TLSKey, "tls-key", "", "the private key `FILE` (PEM) of --tls-cert")
			policies, netboot := station.PolicyFlags(fs, &c.Options), station.NetbootFlags(fs, &c.Netboot, validate.Load)
			return func(ctx context.Context, pos []string, std cli.IO) error {
				if err := errors.Join(none(pos), policies(), netboot()); err != nil {
					return err
				}
				c.Options.Version = version
				if *duration < 0 {
					return usageError("--duration %v: want a positive duration, or none", *duration)
				}
				c.Log = log.New(std.Stderr, "station: ", log.LstdFlags)
				return runStation(ctx, c, *ip3, *reflect, *duration)
			}
		},
	}
}

// runStation runs the report service and, beside it, the iperf3 server and the frame
// reflector the plans measure against, until ctx ends, duration passes or one fails.
func runStation(ctx context.Context, c station.Config, ip3, reflect string, duration time.Duration) error {
	if duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, duration)
		defer cancel()
	}
	g, ctx := errgroup.WithContext(ctx)
	// A server and a reflector for each port of a board (all measured at once).
	for _, a := range strings.Split(ip3, ",") {
		if a == "off" || a == "" {
			continue
		}
		host, port, err := iperf3.ParseListen(a)
		if err != nil {
			return usageError("--iperf3 %v, or off", err)
		}
		s := &iperf3.Server{Addr: host, Port: port, Version: version, Log: c.Log}
		g.Go(func() error { return quiet(ctx, "iperf3 server", s.ListenAndServe(ctx)) })
		c.Log.Printf("iperf3 server on %s", a)
	}
	// The reflectors, each in a process of its own (engine.RunReflectors says why).
	if names := strings.FieldsFunc(reflect, func(r rune) bool { return r == ',' }); len(names) > 0 {
		if err := engine.CheckReflectors("/", names); err != nil {
			return err
		}
		g.Go(func() error { return quiet(ctx, "reflector", engine.RunReflectors(ctx, names, duration, c.Log.Printf)) })
	}
	g.Go(func() error { return station.Run(ctx, c) })
	err := g.Wait()
	if err == nil {
		c.Log.Printf("stopped")
	}
	return err
}

// quiet is a part's error, or nil when it ended because the station is stopping.
func quiet(ctx context.Context, what string, err error) error {
	if err == nil || ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}
