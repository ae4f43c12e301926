package command

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/pborman/getopt/v2"
	"github.com/zynqnet/linerate/internal/cli"
	"github.com/zynqnet/linerate/netperf/iperf3"
)

// options is iperf3's command line, parsed.
type options struct {
	server, client                       bool
	host, bind, bindDev                  string
	port                                 int
	format                               string
	interval                             float64
	pidfile, logfile, title, extraData   string
	affinity                             string
	verbose, jsonOut, forceflush         bool
	timestamps                           string
	timestampsSet                        bool
	rcvTimeout, sndTimeout, connTimeout  int
	debug                                string
	version, help                        bool
	daemon, oneOff                       bool
	serverLimit                          string
	idle                                 float64
	udp, reverse, bidir, noDelay         bool
	bitrate, pacingTimer, fqRate         string
	timeSecs                             float64
	bytesN, blocks, length, window       string
	cport, parallel, mss, omit           int
	congestion                           string
	v4, v6                               bool
	tos, dscp                            string
	zeroCopy                             bool
	serverOutput, c64, repeating, dontFr bool
	copyRecv                             bool
	file                                 string
	timeSeen                             bool
	username, rsaPub, rsaPriv, users     string
	skew                                 int
	refused                              []refusedOpt
}

// refusedOpt is an option iperf3 has and linerate does not, with why.
type refusedOpt struct {
	long  string
	short rune
	why   string
	arg   bool
}

var refusals = []refusedOpt{
	{"flowlabel", 'L', "Go's connect cannot carry an IPv6 flow label (sin6_flowinfo)", true},
	{"sctp", 0, "linerate's iperf3 speaks TCP and UDP only (no SCTP sockets in Go)", false},
	{"xbind", 'X', "linerate's iperf3 speaks TCP and UDP only (no SCTP)", true},
	{"nstreams", 0, "linerate's iperf3 speaks TCP and UDP only (no SCTP)", true},
}

// refusedValue records that a refused option was given.
type refusedValue struct {
	o   *options
	opt refusedOpt
}

func (r refusedValue) Set(string, getopt.Option) error {
	r.o.refused = append(r.o.refused, r.opt)
	return nil
}
func (r refusedValue) String() string { return "" }

// parse reads args (after "iperf3") as getopt_long does: combined short options (-uR),
// attached values (-t1, -b10M), --opt=value and --opt value, optional values only
// attached (--timestamps=%T, -d2).
func parse(args []string) (*options, error) {
	o := &options{port: iperf3.DefaultPort, interval: 1, timeSecs: 10, idle: 30, parallel: 1, rcvTimeout: 120000, skew: 10}
	set := getopt.New()
	set.SetProgram("iperf3")
	for _, f := range o.table() {
		if f.p != nil {
			set.FlagLong(f.p, f.long, f.short)
		}
	}
	timeOpt := set.FlagLong(&o.timeSecs, "time", 't') // the table's -t row: Seen() is wanted
	// Values only attached: --timestamps=%T, -d2.
	ts := set.FlagLong(&o.timestamps, "timestamps", 0).SetOptional()
	dbg := set.FlagLong(&o.debug, "debug", 'd').SetOptional()
	for _, r := range refusals {
		opt := set.FlagLong(refusedValue{o, r}, r.long, r.short)
		if !r.arg {
			opt.SetFlag()
		}
	}
	if err := set.Getopt(append([]string{"iperf3"}, args...), nil); err != nil {
		var ge *getopt.Error
		if errors.As(err, &ge) {
			switch ge.ErrorCode {
			case getopt.UnknownOption:
				return nil, cli.Usagef("unrecognized option '%s'", ge.Name)
			case getopt.MissingParameter:
				return nil, cli.Usagef("option '%s' requires an argument", ge.Name)
			}
			if ge.Name != "" {
				return nil, cli.Usagef("option '%s': %v", ge.Name, ge.Err)
			}
		}
		return nil, cli.Usagef("%v", err)
	}
	if rest := set.Args(); len(rest) > 0 {
		return nil, cli.Usagef("unexpected argument %q", rest[0])
	}
	o.timestampsSet = ts.Seen()
	o.timeSeen = timeOpt.Seen()
	if dbg.Seen() {
		o.verbose = true
	}
	o.client = o.host != ""
	return o, nil
}

// check refuses what iperf3 refuses, with its reason, before anything runs.
func (o *options) check() error {
	if len(o.refused) > 0 {
		r := o.refused[0]
		name := "--" + r.long
		if r.short != 0 {
			name = fmt.Sprintf("-%c/--%s", r.short, r.long)
		}
		return cli.Usagef("%s: not supported: %s", name, r.why)
	}
	switch {
	case o.help || o.version:
		return nil
	case o.server && o.client:
		return cli.Usagef("cannot be both server and client")
	case !o.server && !o.client:
		return cli.Usagef("must either be a client (-c) or server (-s)")
	case o.port < 1 || o.port > 65535:
		return cli.Usagef("-p %d: want 1..65535", o.port)
	case o.parallel > iperf3.MaxParallel:
		return cli.Usagef("number of parallel streams too large (maximum = %d)", iperf3.MaxParallel)
	case o.parallel < 1:
		return cli.Usagef("-P %d: want 1..%d", o.parallel, iperf3.MaxParallel)
	case o.timeSecs < 0 || o.timeSecs > iperf3.MaxDuration:
		return cli.Usagef("-t %v: want 0..%d seconds", o.timeSecs, iperf3.MaxDuration)
	case o.omit < 0 || o.omit > 600:
		return cli.Usagef("-O %d: want 0..600", o.omit)
	case o.interval != 0 && (o.interval < 0.1 || o.interval > 60):
		return cli.Usagef("-i %v: want 0 (none) or 0.1..60 seconds", o.interval)
	case o.idle <= 0:
		return cli.Usagef("--idle-timeout %v: want a positive number of seconds", o.idle)
	case o.format != "" && (len(o.format) != 1 || !strings.Contains("kmgtKMGTaA", o.format)):
		return cli.Usagef("-f %q: want one of k m g t K M G T", o.format)
	case o.v4 && o.v6:
		return cli.Usagef("-4 and -6: give one")
	case o.cport < 0 || o.cport > 65535:
		return cli.Usagef("--cport %d: want 1..65535", o.cport)
	case o.rcvTimeout < 0 || o.sndTimeout < 0 || o.connTimeout < 0:
		return cli.Usagef("timeouts are milliseconds, 0 or more")
	case o.client && (o.username == "") != (o.rsaPub == ""):
		return cli.Usagef("--username and --rsa-public-key-path go together")
	case o.server && (o.rsaPriv == "") != (o.users == ""):
		return cli.Usagef("--rsa-private-key-path and --authorized-users-path go together")
	case o.mss < 0 || o.mss > 9216:
		return cli.Usagef("-M %d: want a TCP MSS of up to 9216", o.mss)
	}
	return nil
}

// size reads a K/M/G size flag (iperf3's unit_atof: base 1024 for sizes, 1000 for rates).
func size(name, s string, base float64) (uint64, error) {
	if s == "" {
		return 0, nil
	}
	v, err := iperf3.ParseSize(s, base)
	if err != nil {
		return 0, cli.Usagef("%s %q: %v", name, s, err)
	}
	return v, nil
}

// tosValue reads -S (0-255, decimal, 0 octal or 0x hex) or --dscp (0-63, or a name) as
// the IP TOS byte.
func tosValue(tos, dscp string) (int, error) {
	if tos != "" {
		v, err := strconv.ParseInt(tos, 0, 32)
		if err != nil || v < 0 || v > 255 {
			return 0, cli.Usagef("-S %q: want a TOS of 0-255 (52, 064 or 0x34)", tos)
		}
		return int(v), nil
	}
	if dscp == "" {
		return 0, nil
	}
	if v, err := strconv.ParseInt(dscp, 0, 32); err == nil {
		if v < 0 || v > 63 {
			return 0, cli.Usagef("--dscp %q: want 0-63 or a name (AF11, EF, CS5)", dscp)
		}
		return int(v) << 2, nil
	}
	if v, ok := dscpName(strings.ToUpper(dscp)); ok {
		return v << 2, nil
	}
	return 0, cli.Usagef("--dscp %q: want 0-63 or a name (AF11..AF43, CS0..CS7, EF, VA, LE)", dscp)
}

// dscpNames are RFC 2474/2597/3246/5865/8622's code points, as iperf3's dscp.c has
// them: NAME:VALUE, looked up in place (a map literal costs a board's binary its
// initialisation code).
const dscpNames = " CS0:0 CS1:8 CS2:16 CS3:24 CS4:32 CS5:40 CS6:48 CS7:56 AF11:10 AF12:12 AF13:14 AF21:18 AF22:20 AF23:22" +
	" AF31:26 AF32:28 AF33:30 AF41:34 AF42:36 AF43:38 EF:46 VA:44 LE:1 "

func dscpName(name string) (int, bool) {
	i := strings.Index(dscpNames, " "+name+":")
	if i < 0 {
		return 0, false
	}
	v := dscpNames[i+len(name)+2:]
	v = v[:strings.IndexByte(v, ' ')]
	n, err := strconv.Atoi(v)
	return n, err == nil
}

// hostDev splits iperf3's host%dev.
func hostDev(s string) (host, dev string) {
	if i := strings.LastIndexByte(s, '%'); i >= 0 && !strings.Contains(s[i:], ":") {
		return s[:i], s[i+1:]
	}
	return s, ""
}

// affinityValue reads -A n[,m].
func affinityValue(s string) (local, server int, hasServer bool, err error) {
	local, server = -1, -1
	if s == "" {
		return
	}
	l, r, comma := strings.Cut(s, ",")
	if l != "" {
		if local, err = strconv.Atoi(l); err != nil || local < 0 || local > 1024 {
			return 0, 0, false, cli.Usagef("-A %q: want a CPU number, n or n,m", s)
		}
	}
	if comma {
		if server, err = strconv.Atoi(r); err != nil || server < 0 || server > 1024 {
			return 0, 0, false, cli.Usagef("-A %q: want a CPU number, n or n,m", s)
		}
		hasServer = true
	}
	return local, server, hasServer, nil
}
