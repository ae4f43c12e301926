// Package command is linerate's iperf3 command line: iperf3's options, defaults and output
// (text, or -J's JSON) over the wire-compatible client and server of netperf/iperf3, so
// that a script written for stock iperf3 runs linerate's unchanged.
package command

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/zynqnet/linerate/internal/cli"
	"github.com/zynqnet/linerate/netperf/iperf3"
)

// Usage is the command's help.
const Usage = `Usage: linerate iperf3 -s [-p PORT] [-B ADDR] [-1] [-J] [--idle-timeout N]
       linerate iperf3 -c HOST [options]

An iperf3 wire-compatible server and client: a stock iperf3 (3.7 and later) is the peer
in either role. Flags and defaults are iperf3's.

Server:
  -s, --server           run as server
  -1, --one-off          serve one test, then exit
  --idle-timeout N       drop a client silent for N seconds (default 30)
Client:
  -c, --client HOST      run as client to HOST
  -t, --time N           seconds to transmit (default 10)
  -n, --bytes N[KMG]     bytes to transmit (instead of -t)
  -k, --blockcount N[KMG] blocks to transmit (instead of -t or -n)
  -P, --parallel N       parallel streams (default 1)
  -R, --reverse          the server sends, the client receives
  --bidir                both directions at once
  -u, --udp              UDP instead of TCP
  -b, --bitrate N[KMG]   target bitrate in bit/s (UDP default 1M; TCP unlimited)
  -l, --length N[KMG]    block length (TCP 128K, UDP 1460)
  -w, --window N[KMG]    socket buffer size
  -M, --set-mss N        TCP maximum segment size
  -N, --no-delay         TCP no delay (Nagle off)
  -O, --omit N           omit the first N seconds
  -i, --interval N       seconds between reports (default 1; 0: none)
  --udp-counters-64bit   64-bit UDP packet counters
  --get-server-output    print the server's output too
  --connect-timeout MS   control connection timeout in milliseconds
Both:
  -p, --port N           server port (default 5201)
  -B, --bind ADDR        local address
  -J, --json             JSON output in iperf3 -J's shape
  --copy                 read received TCP data into memory, as iperf3 does; by default
                         the kernel discards it (recv MSG_TRUNC), so the figure is the
                         link's and not the receiving CPU's memory copy
`

type sizeFlag struct {
	v    *uint64
	base float64
}

func (f sizeFlag) String() string {
	if f.v == nil {
		return ""
	}
	return strconv.FormatUint(*f.v, 10)
}

func (f sizeFlag) Set(s string) error {
	v, err := iperf3.ParseSize(s, f.base)
	if err != nil {
		return err
	}
	*f.v = v
	return nil
}

// Run runs the command: args are its arguments after "iperf3"; version is linerate's,
// sent to the peer and printed. A usage error wraps cli.ErrUsage.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, version string) error {
	fs := flag.NewFlagSet("iperf3", flag.ContinueOnError)
	var (
		server, oneOff, jsonOut, reverse, bidir, udp, noDelay, c64, serverOut, copyRecv bool
		client, bind                                                                    string
		port, parallel, mss, omit, connTimeout                                          int
		timeSecs, interval, idle                                                        float64
		bytesN, blocks, bitrate, length, window                                         uint64
	)
	boolVar := func(p *bool, names ...string) {
		for _, n := range names {
			fs.BoolVar(p, n, false, "")
		}
	}
	strVar := func(p *string, names ...string) {
		for _, n := range names {
			fs.StringVar(p, n, "", "")
		}
	}
	intVar := func(p *int, def int, names ...string) {
		for _, n := range names {
			fs.IntVar(p, n, def, "")
		}
	}
	floatVar := func(p *float64, def float64, names ...string) {
		for _, n := range names {
			fs.Float64Var(p, n, def, "")
		}
	}
	sizeVar := func(p *uint64, base float64, names ...string) {
		for _, n := range names {
			fs.Var(sizeFlag{p, base}, n, "")
		}
	}
	boolVar(&server, "s", "server")
	boolVar(&oneOff, "1", "one-off")
	boolVar(&jsonOut, "J", "json")
	boolVar(&reverse, "R", "reverse")
	boolVar(&bidir, "bidir")
	boolVar(&udp, "u", "udp")
	boolVar(&noDelay, "N", "no-delay")
	boolVar(&c64, "udp-counters-64bit")
	boolVar(&serverOut, "get-server-output")
	boolVar(&copyRecv, "copy")
	strVar(&client, "c", "client")
	strVar(&bind, "B", "bind")
	intVar(&port, iperf3.DefaultPort, "p", "port")
	intVar(&parallel, 1, "P", "parallel")
	intVar(&mss, 0, "M", "set-mss")
	intVar(&omit, 0, "O", "omit")
	intVar(&connTimeout, 0, "connect-timeout")
	floatVar(&timeSecs, 10, "t", "time")
	floatVar(&interval, 1, "i", "interval")
	floatVar(&idle, 30, "idle-timeout")
	sizeVar(&bytesN, 1024, "n", "bytes")
	sizeVar(&blocks, 1024, "k", "blockcount")
	sizeVar(&bitrate, 1000, "b", "bitrate", "bandwidth")
	sizeVar(&length, 1024, "l", "length", "len")
	sizeVar(&window, 1024, "w", "window")
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return cli.Usagef("unexpected argument %q", pos[0])
	case server == (client != ""):
		return cli.Usagef("give -s (server) or -c HOST (client)")
	case port < 1 || port > 65535:
		return cli.Usagef("-p %d: want 1..65535", port)
	case parallel < 1 || parallel > iperf3.MaxParallel:
		return cli.Usagef("-P %d: want 1..%d", parallel, iperf3.MaxParallel)
	case timeSecs < 0 || timeSecs > iperf3.MaxDuration:
		return cli.Usagef("-t %v: want 0..%d seconds", timeSecs, iperf3.MaxDuration)
	case omit < 0 || omit > 600:
		return cli.Usagef("-O %d: want 0..600", omit)
	case interval < 0 || interval > 60:
		return cli.Usagef("-i %v: want 0..60", interval)
	case idle <= 0:
		return cli.Usagef("--idle-timeout %v: want a positive number of seconds", idle)
	case udp && length > iperf3.MaxUDPLen, !udp && length > iperf3.MaxTCPLen:
		return cli.Usagef("-l %d: too large (UDP %d, TCP %d)", length, iperf3.MaxUDPLen, iperf3.MaxTCPLen)
	case udp && length > 0 && length < 16:
		return cli.Usagef("-l %d: UDP needs at least 16 bytes", length)
	}
	if server {
		srv := &iperf3.Server{Addr: bind, Port: port, OneOff: oneOff, Version: version,
			IdleTimeout: time.Duration(idle * float64(time.Second)), CopyReceived: copyRecv,
			Log: log.New(stderr, "linerate iperf3: ", log.LstdFlags)}
		if jsonOut {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			srv.JSON = func(r *iperf3.Report) { enc.Encode(r) }
		} else {
			srv.Text = stdout
			fmt.Fprintf(stdout, "-----------------------------------------------------------\nServer listening on %d (linerate %s)\n-----------------------------------------------------------\n", port, version)
		}
		return srv.ListenAndServe(ctx)
	}
	c := &iperf3.Client{Host: client, Port: port, Bind: bind, Version: version,
		Interval:       time.Duration(interval * float64(time.Second)),
		ConnectTimeout: time.Duration(connTimeout) * time.Millisecond, CopyReceived: copyRecv,
		Params: iperf3.Params{UDP: udp, Time: int(timeSecs), Bytes: bytesN, Blocks: blocks, Parallel: parallel,
			Reverse: reverse, Bidir: bidir, Len: int(length), Bandwidth: bitrate, Window: int(window), MSS: mss,
			NoDelay: noDelay, Omit: omit, UDPCounters64Bit: c64, GetServerOutput: serverOut}}
	if net.ParseIP(client) == nil && strings.ContainsAny(client, " /") {
		return cli.Usagef("-c %q is not a host", client)
	}
	if !jsonOut {
		c.Text = stdout
	}
	rep, err := c.Run(ctx)
	if jsonOut {
		if err != nil {
			rep.Error = err.Error()
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if e := enc.Encode(rep); e != nil && err == nil {
			err = e
		}
	}
	if err != nil {
		// As iperf3: with -J the error is in the JSON alone; otherwise one line.
		if !jsonOut {
			fmt.Fprintf(stderr, "iperf3: error - %v\n", err)
		}
		return &cli.Reported{Code: 1, Err: err}
	}
	return nil
}
