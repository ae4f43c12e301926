//go:build !arm && !arm64

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/zynqnet/linerate/netperf/engine"
	"github.com/zynqnet/linerate/netperf/iperf3"
	"github.com/zynqnet/linerate/station"
)

// The station runs on the line's PC (amd64); the board images (arm, arm64) are built
// without it, so its HTTP, store and metrics code never weighs on them.

const stationUsage = `Usage: linerate station [--listen ADDR:PORT] [--data DIR] [--iperf3 ADDR:PORT|off]
                        [--reflect IFACE] [--duration D]

The line's station: receives the boards' validate reports (POST /api/reports), checks
them and stores them durably (DIR/station.db), and serves
  /                          the boards with verdicts and key figures, filterable, and a
                             chart of throughput per board type over time
  /api/reports               the reports as JSON (?board=, ?verdict=, ?q=)
  /api/reports/ID            one report; /api/reports/ID/junit.xml its JUnit XML
  /metrics                   Prometheus metrics (boards tested, step results, throughput)
It also runs the iperf3 server and the frame reflector the plans point at, so one
command sets up a station. It runs until stopped (Ctrl-C, SIGTERM) or --duration.

Flags:
  --listen ADDR:PORT   HTTP (default :8080)
  --data DIR           where the store lives (default /var/lib/linerate-station)
  --iperf3 ADDR:PORT   the iperf3 server (default :5201; off for none)
  --reflect IFACE      reflect the boards' test frames on this port (default: none)
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
			return runStation(ctx, stderr, *listen, *data, *ip3, *reflect, *duration)
		},
	}
}

func runStation(ctx context.Context, stderr io.Writer, listen, data, ip3, reflect string, duration time.Duration) error {
	logger := log.New(stderr, "station: ", log.LstdFlags)
	if duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, duration)
		defer cancel()
	}
	if err := os.MkdirAll(data, 0o755); err != nil {
		return err
	}
	store, err := station.Open(data)
	if err != nil {
		return err
	}
	defer store.Close()
	srv, err := station.NewServer(store, logger)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", listen, err)
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errs <- fmt.Errorf("http: %w", err)
		}
	}()
	logger.Printf("reports on http://%s/ (store %s)", ln.Addr(), data)
	if ip3 != "off" && ip3 != "" {
		host, port, err := net.SplitHostPort(ip3)
		p, perr := strconv.Atoi(port)
		if err != nil || perr != nil {
			return usageError("--iperf3 %q: want ADDR:PORT, :5201, or off", ip3)
		}
		s := &iperf3.Server{Addr: host, Port: p, Version: version, Log: logger}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.ListenAndServe(ctx); err != nil && ctx.Err() == nil {
				errs <- fmt.Errorf("iperf3 server: %w", err)
			}
		}()
		logger.Printf("iperf3 server on %s", ip3)
	}
	if reflect != "" {
		p, err := engine.OpenReflector("/", reflect)
		if err != nil {
			return err
		}
		defer p.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := p.Run(ctx, 0, nil)
			if err != nil && ctx.Err() == nil {
				errs <- fmt.Errorf("reflector: %w", err)
			}
			logger.Printf("reflector on %s: %d frames reflected", p.Name, st.Reflected)
		}()
		logger.Printf("reflector on %s (%s)", p.Name, p.MAC)
	}
	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-errs:
	}
	cancel()
	sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
	hs.Shutdown(sctx)
	scancel()
	wg.Wait()
	logger.Printf("stopped")
	return runErr
}
