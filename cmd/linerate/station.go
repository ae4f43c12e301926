//go:build !arm && !arm64

package main

import (
	"context"
	"flag"
	"io"
	"log"

	"github.com/zynqnet/linerate/station"
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
			listen := fs.String("listen", ":8080", "")
			data := fs.String("data", "/var/lib/linerate-station", "")
			ip3 := fs.String("iperf3", ":5201", "")
			reflect := fs.String("reflect", "", "")
			duration := fs.Duration("duration", 0, "")
			tokens := fs.String("tokens", "", "")
			readTokens := fs.String("read-tokens", "", "")
			db := fs.String("db", "", "")
			cert := fs.String("tls-cert", "", "")
			key := fs.String("tls-key", "", "")
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
			return station.Run(ctx, station.Config{Listen: *listen, Data: *data, Iperf3: *ip3, Reflect: *reflect, Duration: *duration,
				DB: *db, Tokens: *tokens, ReadTokens: *readTokens, TLSCert: *cert, TLSKey: *key, Version: version, Log: log.New(stderr, "station: ", log.LstdFlags)})
		},
	}
}
