package command

import (
	"fmt"
	"strings"

	"github.com/zynqnet/linerate/internal/cli"
)

// opt is one of iperf3 3.12's options as linerate takes it: its getopt_long names, where
// its value goes, and its line of help. The parser and the help are both made from the
// table, so the help names exactly the options that are parsed.
type opt struct {
	p     any // nil: parsed elsewhere (an optional value, or a refused option)
	long  string
	short rune
	arg   string // the value's name in the help, "" for a switch
	help  string
	group string
}

const (
	both   = "Server or Client"
	server = "Server specific"
	client = "Client specific"
	own    = "linerate only"
)

// table is every option, in the order iperf3's --help lists them.
func (o *options) table() []opt {
	return []opt{
		{&o.port, "port", 'p', "#", "server port to listen on/connect to (default 5201)", both},
		{&o.format, "format", 'f', "[kmgtKMGT]", "format to report: Kbits, Mbits, Gbits, Tbits", both},
		{&o.interval, "interval", 'i', "#", "seconds between periodic throughput reports (default 1)", both},
		{&o.pidfile, "pidfile", 'I', "file", "write PID file", both},
		{&o.file, "file", 'F', "name", "xmit/recv the specified file (TCP)", both},
		{&o.affinity, "affinity", 'A', "n[,m]", "set CPU affinity (n: here; m: the server's)", both},
		{&o.bind, "bind", 'B', "<host>[%<dev>]", "bind to the address <host> (and the device <dev>)", both},
		{&o.bindDev, "bind-dev", 0, "<dev>", "bind to the network interface with SO_BINDTODEVICE", both},
		{&o.verbose, "verbose", 'V', "", "more detailed output", both},
		{&o.jsonOut, "json", 'J', "", "output in JSON format", both},
		{&o.logfile, "logfile", 0, "f", "send output to a log file", both},
		{&o.forceflush, "forceflush", 0, "", "force flushing output at every interval (output is never buffered here: accepted for scripts)", both},
		{nil, "timestamps", 0, "[=format]", `emit a timestamp at the start of each output line (strftime(3) format, default "%c ")`, both},
		{&o.rcvTimeout, "rcv-timeout", 0, "#", "idle timeout for receiving data, ms (default 120000)", both},
		{&o.sndTimeout, "snd-timeout", 0, "#", "timeout for unacknowledged TCP data, ms", both},
		{nil, "debug", 'd', "[=#]", "emit debugging output", both},
		{&o.version, "version", 'v', "", "show version information and quit", both},
		{&o.help, "help", 'h', "", "show this message and quit", both},
		{&o.server, "server", 's', "", "run in server mode", server},
		{&o.daemon, "daemon", 'D', "", "run the server as a daemon", server},
		{&o.oneOff, "one-off", '1', "", "handle one client connection then exit", server},
		{&o.serverLimit, "server-bitrate-limit", 0, "#[KMG]", "refuse tests asking for more in total", server},
		{&o.idle, "idle-timeout", 0, "#", "drop a client silent for # seconds (default 30)", server},
		{&o.rsaPriv, "rsa-private-key-path", 0, "", "path to the RSA private key used to decrypt authentication credentials", server},
		{&o.users, "authorized-users-path", 0, "", `path to the configuration file containing user credentials (lines: user,sha256("{user}password"))`, server},
		{&o.skew, "time-skew-threshold", 0, "", "time skew threshold (in seconds) between the server and client during the authentication process (default 10)", server},
		{&o.host, "client", 'c', "<host>[%<dev>]", "run in client mode, connecting to <host>", client},
		{&o.udp, "udp", 'u', "", "use UDP rather than TCP", client},
		{&o.connTimeout, "connect-timeout", 0, "#", "timeout for control connection setup (ms)", client},
		{&o.bitrate, "bitrate", 'b', "#[KMG][/#]", "target bitrate in bits/sec (0 for unlimited) (default 1 Mbit/sec for UDP, unlimited for TCP) (optional slash and packet count for burst mode)", client},
		{&o.bitrate, "bandwidth", 0, "#[KMG][/#]", "the same as --bitrate (iperf3's older name)", client},
		{&o.pacingTimer, "pacing-timer", 0, "#[KMG]", "set the timing for pacing, in microseconds (default 1000)", client},
		{&o.fqRate, "fq-rate", 0, "#[KMG]", "enable fair-queuing based socket pacing in bits/sec", client},
		{nil, "time", 't', "#", "time in seconds to transmit for (default 10 secs)", client},
		{&o.bytesN, "bytes", 'n', "#[KMG]", "number of bytes to transmit (instead of -t)", client},
		{&o.blocks, "blockcount", 'k', "#[KMG]", "number of blocks (packets) to transmit (instead of -t or -n)", client},
		{&o.length, "length", 'l', "#[KMG]", "length of buffer to read or write (default 128 KB for TCP, 1460 for UDP)", client},
		{&o.length, "len", 0, "#[KMG]", "the same as --length", client},
		{&o.cport, "cport", 0, "<port>", "bind the data streams to this client port (and the next)", client},
		{&o.parallel, "parallel", 'P', "#", "number of parallel client streams to run", client},
		{&o.reverse, "reverse", 'R', "", "run in reverse mode (server sends, client receives)", client},
		{&o.bidir, "bidir", 0, "", "run in bidirectional mode", client},
		{&o.window, "window", 'w', "#[KMG]", "set send/receive socket buffer sizes", client},
		{&o.congestion, "congestion", 'C', "<algo>", "set TCP congestion control algorithm", client},
		{&o.mss, "set-mss", 'M', "#", "set TCP maximum segment size (MTU - 40 bytes)", client},
		{&o.noDelay, "no-delay", 'N', "", "set TCP no delay, disabling Nagle's Algorithm", client},
		{&o.v4, "version4", '4', "", "only use IPv4", client},
		{&o.v6, "version6", '6', "", "only use IPv6", client},
		{&o.tos, "tos", 'S', "N", "set the IP type of service, 0-255 (52, 064, 0x34)", client},
		{&o.dscp, "dscp", 0, "N|val", "set the IP dscp value, 0-63 or symbolic (AF11, EF, CS5...)", client},
		{&o.zeroCopy, "zerocopy", 'Z', "", "use a 'zero copy' method of sending data (sendfile)", client},
		{&o.omit, "omit", 'O', "N", "omit the first N seconds", client},
		{&o.title, "title", 'T', "str", "prefix every output line with this string", client},
		{&o.extraData, "extra-data", 0, "str", "data string to include in client and server JSON", client},
		{&o.serverOutput, "get-server-output", 0, "", "get results from server", client},
		{&o.c64, "udp-counters-64bit", 0, "", "use 64-bit counters in UDP test packets", client},
		{&o.repeating, "repeating-payload", 0, "", "use repeating pattern in payload", client},
		{&o.dontFr, "dont-fragment", 0, "", "set IPv4 Don't Fragment flag", client},
		{&o.username, "username", 0, "", "username for authentication (password from IPERF3_PASSWORD, or asked for)", client},
		{&o.rsaPub, "rsa-public-key-path", 0, "", "path to the RSA public key used to encrypt authentication credentials", client},
		{&o.copyRecv, "copy", 0, "", "read received TCP data into memory, as iperf3 does; by default the kernel discards it (recv MSG_TRUNC), so the figure is the link's and not the receiving CPU's copy", own},
	}
}

// Usage is the command's help at the console's width (cli.Width): iperf3 3.12's
// options, each as linerate takes it, then the options refused and why.
func Usage() string { return UsageAt(cli.Width) }

// UsageAt is the help with every line within width columns (the manual page's is
// narrower than the console's).
func UsageAt(width int) string {
	var b strings.Builder
	b.WriteString("Usage: linerate iperf3 [-s|-c host] [options]\n       linerate iperf3 [-h|--help] [-v|--version]\n\n")
	for _, l := range cli.Wrap("An iperf3 wire-compatible server and client: a stock iperf3 (3.7 to 3.18) is the peer in either role. Options, defaults and output are iperf3 3.12's, parsed as getopt_long does (-t1, -uR, --time=1).", width) {
		b.WriteString(l + "\n")
	}
	group := ""
	for _, f := range new(options).table() {
		if f.group != group {
			group = f.group
			b.WriteString("\n" + group + ":\n")
		}
		term := "--" + f.long
		if f.short != 0 {
			term = fmt.Sprintf("-%c, --%s", f.short, f.long)
		}
		if f.arg != "" {
			sep := " "
			if strings.HasPrefix(f.arg, "[=") {
				sep = ""
			}
			term += sep + f.arg
		}
		lines := cli.Wrap(f.help, width-28)
		if len(term) > 25 {
			b.WriteString("  " + term + "\n")
		} else {
			fmt.Fprintf(&b, "  %-26s%s\n", term, lines[0])
			lines = lines[1:]
		}
		for _, l := range lines {
			b.WriteString(strings.Repeat(" ", 28) + l + "\n")
		}
	}
	var refused []string
	for _, r := range refusals {
		n := "--" + r.long
		if r.short != 0 {
			n = fmt.Sprintf("-%c/--%s", r.short, r.long)
		}
		refused = append(refused, n)
	}
	b.WriteString("\n")
	for _, l := range cli.Wrap("Not here, each refused with the reason: "+strings.Join(refused, ", ")+" (no IPv6 flow label from Go's connect; TCP and UDP only).", width) {
		b.WriteString(l + "\n")
	}
	return b.String()
}

// Options are the options for completion and the flag walk.
func Options() []cli.OwnFlag {
	var out []cli.OwnFlag
	for _, f := range new(options).table() {
		out = append(out, cli.OwnFlag{Long: f.long, Short: f.short, Help: f.help})
	}
	for _, r := range refusals {
		out = append(out, cli.OwnFlag{Long: r.long, Short: r.short, Help: "not supported: " + r.why, Refused: r.why})
	}
	return out
}
