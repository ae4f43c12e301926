//go:build !arm && !arm64

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"strconv"
	"time"

	"github.com/zynqnet/linerate/netperf/engine"
	"github.com/zynqnet/linerate/netperf/iperf3"
	"github.com/zynqnet/linerate/station"
	"golang.org/x/sync/errgroup"
)

// The station runs on the line's PC (amd64); the board images (arm, arm64) are built
// without it, so its HTTP, store and metrics code never weighs on them.

const stationUsage = `Usage: linerate station [--listen ADDR:PORT] [--data DIR] [--iperf3 ADDR:PORT|off]
                        [--reflect IFACE] [--tokens FILE] [--read-tokens FILE]
                        [--tls-cert FILE --tls-key FILE] [--db postgres://...] [--duration D]

The line's station: receives the boards' validate reports (POST /api/reports), checks
them and stores them durably (DIR/station.db), and serves
  /                          the boards with verdicts and key figures, filterable, and a
                             chart of throughput per board type over time
  /api/reports               the reports as JSON (?board=, ?verdict=, ?q=)
  /api/reports/ID            one report; /api/reports/ID/junit.xml its JUnit XML;
                             /api/reports/ID/sweep/STEP.svg the chart of a sweep step
  /metrics                   Prometheus metrics (boards tested, step results, throughput)
It also runs the iperf3 server and the frame reflector the plans point at, so one
command sets up a station. It runs until stopped (Ctrl-C, SIGTERM) or --duration.

Flags:
  --listen ADDR:PORT   HTTP (default :8080)
  --data DIR           where the store lives (default /var/lib/linerate-station)
  --db URL             store in PostgreSQL instead (postgres://USER@HOST/DB, or
                       key=value settings): the stations of a line on one database
                       share one history; the station creates and migrates its tables
  --iperf3 ADDR:PORT   the iperf3 server (default :5201; off for none)
  --reflect IFACE      reflect the boards' test frames on this port (default: none)
  --tokens FILE        POST takes only these bearer tokens: lines "TOKEN NAME" ('#'
                       comments); a report records its token's name and the address
                       it came from. Without it anyone on the network may post.
  --read-tokens FILE   the page and the API need one of these tokens (or a --tokens one)
  --tls-cert FILE, --tls-key FILE   serve https with this certificate and key (PEM);
                       the boards check it with validate --station-ca
  --duration D         stop after D (default: run until stopped)
`

func stationCommand() command {
	return command{
		name:    "station",
		summary: "the line's station: reports, page, metrics, iperf3 server, reflector",
		usage:   stationUsage,
		run: func(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
			fs := flag.NewFlagSet("station", flag.ContinueOnError)
			c := station.Config{}
			fs.StringVar(&c.Listen, "listen", ":8080", "")
			fs.StringVar(&c.Data, "data", "/var/lib/linerate-station", "")
			ip3 := fs.String("iperf3", ":5201", "")
			reflect := fs.String("reflect", "", "")
			duration := fs.Duration("duration", 0, "")
			fs.StringVar(&c.Tokens, "tokens", "", "")
			fs.StringVar(&c.ReadTokens, "read-tokens", "", "")
			fs.StringVar(&c.DB, "db", "", "")
			fs.StringVar(&c.TLSCert, "tls-cert", "", "")
			fs.StringVar(&c.TLSKey, "tls-key", "", "")
			pos, err := parseFlags(fs, args)
			if err != nil {
				return err
			}
			if len(pos) > 0 {
				return usageError("unexpected argument %q", pos[0])
			}
			if *duration < 0 {
				return usageError("--duration %v: want a positive duration, or none", *duration)
			}
			c.Log = log.New(stderr, "station: ", log.LstdFlags)
			return runStation(ctx, c, *ip3, *reflect, *duration)
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
	if ip3 != "off" && ip3 != "" {
		host, port, err := net.SplitHostPort(ip3)
		p, perr := strconv.Atoi(port)
		if err != nil || perr != nil || p < 1 || p > 65535 {
			return usageError("--iperf3 %q: want ADDR:PORT, :5201, or off", ip3)
		}
		s := &iperf3.Server{Addr: host, Port: p, Version: version, Log: c.Log}
		g.Go(func() error { return quiet(ctx, "iperf3 server", s.ListenAndServe(ctx)) })
		c.Log.Printf("iperf3 server on %s", ip3)
	}
	if reflect != "" {
		r, err := engine.OpenReflector("/", reflect, 0)
		if err != nil {
			return err
		}
		defer r.Close()
		g.Go(func() error {
			st, err := r.Run(ctx, 0, nil)
			c.Log.Printf("reflector on %s: %d frames reflected", r.Name, st.Reflected)
			return quiet(ctx, "reflector", err)
		})
		c.Log.Printf("reflector on %s (%s)", r.Name, r.MAC)
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
