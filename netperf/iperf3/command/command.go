// Package command is linerate's iperf3 command line: iperf3's options, defaults and output
// (text, or -J's JSON) over the wire-compatible client and server of netperf/iperf3, so
// that a script written for stock iperf3 runs linerate's unchanged. Options are parsed
// with a getopt_long library (pborman/getopt/v2), as iperf3 parses them.
package command

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/zynqnet/linerate/internal/cli"
	"github.com/zynqnet/linerate/netperf/iperf3"
)

// Run runs the command: args are its arguments after "iperf3"; version is linerate's,
// sent to the peer and printed. A usage error is said as iperf3 says it (an unknown
// option, "parameter error - ..."), with the usage's first lines, and exits 1 as
// iperf3's do: a script that tells a bad command line by its status sees stock's.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, version string) error {
	o, err := parse(args)
	if err != nil {
		return usageExit(stderr, err, "")
	}
	if err := o.check(); err != nil {
		return usageExit(stderr, err, "parameter error - ")
	}
	switch {
	case o.help:
		return flag.ErrHelp
	case o.version:
		fmt.Fprintf(stdout, "iperf 3.12 (linerate %s: wire-compatible with iperf3 3.7 to 3.18)\n%s %s\n", version, runtime.GOOS, runtime.GOARCH)
		return nil
	}
	if o.daemon && o.server && os.Getenv(daemonEnv) == "" {
		return daemonize(args)
	}
	out, closeOut, err := o.output(stdout)
	if err != nil {
		return err
	}
	defer closeOut()
	if o.logfile != "" {
		stderr = out // iperf3 sends everything, errors too, to --logfile
	}
	if o.pidfile != "" {
		remove, err := createPidfile(o.pidfile)
		if err != nil {
			fmt.Fprintf(stderr, "iperf3: error - %v\n", err)
			return &cli.Reported{Code: 1, Err: err}
		}
		defer remove()
	}
	local, server, hasServer, err := affinityValue(o.affinity)
	if err != nil {
		return err
	}
	if local >= 0 {
		if _, err := iperf3.SetAffinity(local); err != nil { // this process's own -A: for its life
			return err
		}
	}
	if o.server {
		return o.runServer(ctx, out, stderr, version)
	}
	c, err := o.clientConfig(version)
	if err != nil {
		return usageExit(stderr, err, "parameter error - ")
	}
	c.Params.ServerAffinity, c.Params.HasServerAffinity = server, hasServer
	return o.runClient(ctx, c, out, stderr)
}

// usageExit says a usage error as iperf3 does and exits 1; another error passes.
func usageExit(stderr io.Writer, err error, prefix string) error {
	if !errors.Is(err, cli.ErrUsage) {
		return err
	}
	msg := strings.TrimPrefix(err.Error(), cli.ErrUsage.Error()+": ")
	fmt.Fprintf(stderr, "iperf3: %s%s\nUsage: linerate iperf3 [-s|-c host] [options]\n       linerate iperf3 [-h|--help] [-v|--version]\n", prefix, msg)
	return &cli.Reported{Code: 1, Err: err}
}

// output is where iperf3's lines go: stdout or --logfile (appended), each line headed
// by --timestamps and -T as iperf3's iperf_printf heads them.
func (o *options) output(stdout io.Writer) (io.Writer, func(), error) {
	w, done := stdout, func() {}
	if o.logfile != "" {
		f, err := os.OpenFile(o.logfile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return nil, nil, cli.Usagef("--logfile %s: %v", o.logfile, err)
		}
		w, done = f, func() { f.Close() }
	}
	if o.jsonOut || (!o.timestampsSet && o.title == "") {
		return w, done, nil
	}
	format := "%c "
	if o.timestamps != "" {
		format = o.timestamps
	}
	title := ""
	if o.title != "" {
		title = o.title + ":  "
	}
	stamp := func() string {
		if !o.timestampsSet {
			return title
		}
		return strftime(format, time.Now()) + title
	}
	return &linePrefix{w: w, prefix: stamp}, done, nil
}

func (o *options) runServer(ctx context.Context, out, stderr io.Writer, version string) error {
	limit, err := size("--server-bitrate-limit", strings.SplitN(o.serverLimit, "/", 2)[0], 1000)
	if err != nil {
		return err
	}
	bind, dev := hostDev(o.bind)
	if o.bindDev != "" {
		dev = o.bindDev
	}
	var auth *iperf3.Authenticator
	if o.rsaPriv != "" {
		key, err := iperf3.ReadPrivateKey(o.rsaPriv)
		if err != nil {
			return cli.Usagef("--rsa-private-key-path: %v", err)
		}
		auth = &iperf3.Authenticator{Key: key, Users: o.users, Skew: time.Duration(o.skew) * time.Second}
	}
	interval := time.Duration(o.interval * float64(time.Second))
	if interval == 0 {
		interval = -1 // -i 0: the whole test as one interval
	}
	srv := &iperf3.Server{Auth: auth, Addr: bind, Port: o.port, OneOff: o.oneOff, Version: version,
		IdleTimeout: time.Duration(o.idle * float64(time.Second)), CopyReceived: o.copyRecv,
		Family: o.family(), Format: o.formatByte(), BindDev: dev, BitrateLimit: limit, Verbose: o.verbose,
		Interval: interval, Errors: stderr}
	if o.verbose {
		// Go's log lines are for -V/--debug only: iperf3's layout stays as stock's.
		srv.Log = log.New(stderr, "linerate iperf3: ", log.LstdFlags)
	}
	if o.jsonOut {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		srv.JSON = func(r *iperf3.Report) { enc.Encode(r) }
	} else {
		srv.Text = out
	}
	err = srv.ListenAndServe(ctx)
	if err == nil && ctx.Err() != nil {
		// Stopped (SIGINT, SIGTERM): a test running was ended with SERVER_TERMINATE
		// and its summary; iperf3 says this and exits 1.
		err = iperf3.ErrServerInterrupt
		if !o.jsonOut {
			fmt.Fprintf(stderr, "iperf3: %v\n", err)
		}
		return &cli.Reported{Code: 1, Err: err}
	}
	return err
}

func (o *options) family() string {
	switch {
	case o.v4:
		return "4"
	case o.v6:
		return "6"
	}
	return ""
}

func (o *options) formatByte() byte {
	if o.format == "" {
		return 0
	}
	return o.format[0]
}

// clientConfig turns the options into a client.
func (o *options) clientConfig(version string) (*iperf3.Client, error) {
	host, dev := hostDev(o.host)
	if o.bindDev != "" {
		dev = o.bindDev
	}
	bind, bdev := hostDev(o.bind)
	if bdev != "" {
		dev = bdev
	}
	if net.ParseIP(host) == nil && strings.ContainsAny(host, " /") {
		return nil, cli.Usagef("-c %q is not a host", host)
	}
	rateStr, burstStr, _ := strings.Cut(o.bitrate, "/")
	p := iperf3.Params{UDP: o.udp, Time: int(o.timeSecs), Parallel: o.parallel, Reverse: o.reverse, Bidir: o.bidir,
		MSS: o.mss, NoDelay: o.noDelay, Omit: o.omit, UDPCounters64Bit: o.c64, GetServerOutput: o.serverOutput,
		Congestion: o.congestion, Title: o.title, RepeatingPayload: o.repeating, DontFragment: o.dontFr, ExtraData: o.extraData,
		Local: iperf3.LocalOpts{BindDev: dev, SndTimeout: time.Duration(o.sndTimeout) * time.Millisecond, ZeroCopy: o.zeroCopy}}
	var err error
	sizes := []struct {
		name string
		s    string
		base float64
		dst  *uint64
	}{{"-n", o.bytesN, 1024, &p.Bytes}, {"-k", o.blocks, 1024, &p.Blocks}, {"-b", rateStr, 1000, &p.Bandwidth}, {"--fq-rate", o.fqRate, 1000, &p.FQRate}}
	for _, sz := range sizes {
		if *sz.dst, err = size(sz.name, sz.s, sz.base); err != nil {
			return nil, err
		}
	}
	p.RateGiven = rateStr != ""
	ints := []struct {
		name string
		s    string
		base float64
		dst  *int
		max  uint64
	}{{"-l", o.length, 1024, &p.Len, iperf3.MaxTCPLen}, {"-w", o.window, 1024, &p.Window, 512 << 20}, {"--pacing-timer", o.pacingTimer, 1000, &p.PacingTimer, 1e9}}
	for _, n := range ints {
		v, err := size(n.name, n.s, n.base)
		if err != nil {
			return nil, err
		}
		if v > n.max && n.name == "-l" && !o.udp {
			return nil, cli.Usagef("block size too large (maximum = %d bytes)", n.max) // iperf3's words
		}
		if v > n.max {
			return nil, cli.Usagef("%s %s: too large (at most %d)", n.name, n.s, n.max)
		}
		*n.dst = int(v)
	}
	if burstStr != "" {
		b, err := strconv.Atoi(burstStr)
		if err != nil || b < 1 || b > 100000 {
			return nil, cli.Usagef("-b %q: the burst after / is a packet count, 1..100000", o.bitrate)
		}
		p.Burst = b
	}
	switch {
	case o.udp && p.Len > iperf3.MaxUDPLen:
		return nil, cli.Usagef("-l %d: too large (UDP %d, TCP %d)", p.Len, iperf3.MaxUDPLen, iperf3.MaxTCPLen)
	case o.udp && p.Len > 0 && p.Len < 16:
		return nil, cli.Usagef("-l %d: UDP needs at least 16 bytes", p.Len)
	}
	if p.TOS, err = tosValue(o.tos, o.dscp); err != nil {
		return nil, err
	}
	if err := o.fileParams(&p); err != nil {
		return nil, err
	}
	if o.username != "" {
		if p.AuthToken, err = authToken(o.username, o.rsaPub); err != nil {
			return nil, err
		}
	}
	return &iperf3.Client{Host: host, Port: o.port, Bind: bind, Version: version, Family: o.family(), CPort: o.cport,
		Format: o.formatByte(), Verbose: o.verbose, RcvTimeout: time.Duration(o.rcvTimeout) * time.Millisecond,
		Interval:       time.Duration(o.interval * float64(time.Second)),
		ConnectTimeout: time.Duration(o.connTimeout) * time.Millisecond, CopyReceived: o.copyRecv, Params: p}, nil
}

func (o *options) runClient(ctx context.Context, c *iperf3.Client, out, stderr io.Writer) error {
	if !o.jsonOut {
		c.Text = out
	}
	rep, err := c.Run(ctx)
	if o.jsonOut {
		if err != nil {
			rep.Error = err.Error()
		}
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if e := enc.Encode(rep); e != nil && err == nil {
			err = e
		}
	}
	if err != nil {
		// As iperf3: with -J the error is in the JSON alone; otherwise one line, an
		// interrupt's without "error - ".
		if !o.jsonOut {
			if errors.As(err, new(*iperf3.InterruptError)) {
				fmt.Fprintf(stderr, "iperf3: %v\n", err)
			} else {
				fmt.Fprintf(stderr, "iperf3: error - %v\n", err)
			}
		}
		return &cli.Reported{Code: 1, Err: err}
	}
	return nil
}

// linePrefix heads every line written through it.
type linePrefix struct {
	w      io.Writer
	prefix func() string
	mid    bool // inside a line
}

func (l *linePrefix) Write(b []byte) (int, error) {
	var buf []byte
	for _, c := range b {
		if !l.mid {
			buf = append(buf, l.prefix()...)
			l.mid = true
		}
		buf = append(buf, c)
		if c == '\n' {
			l.mid = false
		}
	}
	if _, err := l.w.Write(buf); err != nil {
		return 0, err
	}
	return len(b), nil
}

var errNoDaemon = errors.New("-D: the server could not start in the background")

// fileParams applies -F: a TCP test's sending streams send the file (its size is the
// test's length unless -t, -n or -k says otherwise, as iperf3 has it); its receiving
// streams write it.
func (o *options) fileParams(p *iperf3.Params) error {
	if o.file == "" {
		return nil
	}
	if o.udp {
		return cli.Usagef("-F %s: linerate sends and receives files over TCP only", o.file)
	}
	p.Local.File = o.file
	if o.reverse && !o.bidir {
		return nil // received into the file
	}
	st, err := os.Stat(o.file)
	if err != nil {
		return cli.Usagef("-F %s: %v", o.file, err)
	}
	if !st.Mode().IsRegular() {
		return cli.Usagef("-F %s: not a regular file", o.file)
	}
	if !o.timeSeen && p.Bytes == 0 && p.Blocks == 0 {
		p.Bytes = uint64(st.Size())
		p.Time = 0
	}
	return nil
}

// authToken is the client's credentials (iperf3's --username): the password from
// IPERF3_PASSWORD, or asked for on the terminal without echo, as iperf3 does.
func authToken(user, pubFile string) (string, error) {
	pub, err := iperf3.ReadPublicKey(pubFile)
	if err != nil {
		return "", cli.Usagef("--rsa-public-key-path: %v", err)
	}
	password, ok := os.LookupEnv("IPERF3_PASSWORD")
	if !ok {
		if password, err = askPassword(); err != nil {
			return "", cli.Usagef("--username %s: no IPERF3_PASSWORD and no terminal to ask on: %v", user, err)
		}
	}
	return iperf3.AuthToken(user, password, pub, time.Now())
}
