package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"time"

	"github.com/zynqnet/linerate/netperf/engine"
	"github.com/zynqnet/linerate/netperf/frames"
	"github.com/zynqnet/linerate/netperf/rawsock"
	"github.com/zynqnet/linerate/netperf/rfc2544"
)

// The raw-socket traffic engine's commands: gen, sink, reflect, rfc2544.

const genUsage = `Usage: linerate gen IFACE --dst MAC [--src MAC] [--size 64..9018|imix] [--rate 100%|950Mbit|200kpps]
                    [--duration 10s | --count N] [--flows N] [--vlan ID] [--stream ID] [--cpus N|all] [--json]

Sends test frames (Ethernet/IPv4/UDP with a stream id, sequence number, TX timestamp and
payload checksum) out of IFACE through an AF_PACKET TX ring, bypassing the qdisc, paced
to the rate. Rates are Ethernet rates: 100% is line rate at the link's speed counting
preamble and inter-frame gap (1 GbE: 1,488,095 frames/s at 64 bytes, 81,274 at 1518);
bit rates count the same way. Frame sizes include the FCS. A run ends at --count frames
or after --duration (default 10s) and then tells the sink how many were sent.

Flags:
  --dst MAC          destination: the sink's port, or the reflector's
  --src MAC          source MAC (default: IFACE's)
  --size S           frame size with FCS, 64..9018 (within the MTU), or imix (7:4:1 of
                     64/594/1518; +4 each with --vlan) (default 64)
  --rate R           100%, 50%, 950Mbit, 200kpps (default 100%)
  --duration D       how long to send (default 10s)
  --count N          how many frames to send
  --flows N          UDP source ports cycled, so RSS/RPS spread the load (default 1)
  --vlan ID          an 802.1Q tag
  --stream ID        stream id, 0..65535, as the sink expects (default 1)
  --cpus N|all       N senders, each with its own TX ring, thread pinned to a CPU of
                     its own, stream (ID, ID+1, ...: sink --streams N) and --flows
                     source ports; the rate and --count are their total (default: one
                     sender, not pinned). The result gives the CPU time per frame.
  --src-ip, --dst-ip IPv4 addresses (default 198.18.0.1 -> 198.19.0.1, RFC 2544's
                     benchmarking network: a receiver that does not own the address
                     drops the frames in the IP layer)
  --link-mbps N      the link speed 100% means (default: the interface's)
  --force            send on the interface that carries the default route
  --json             the result as JSON
`

const sinkUsage = `Usage: linerate sink IFACE [--duration 60s] [--count N] [--stream ID] [--streams N]
                     [--cpus N|all] [--fanout hash|cpu] [--max-loss P] [--min-frames N] [--json]

Counts the test frames of one stream (or of gen --cpus N's N streams) arriving on IFACE (through a TPACKET_V3 RX ring):
received, lost, reordered, duplicated, corrupted (payload checksum), foreign (anything
else on the port), rates and latency percentiles. Latency is one-way: it is right when
the sender shares this machine's clock (the same machine, or PTP). The run ends after
--duration (default 60s), at --count frames, or shortly after the sender's end marker.

Flags:
  --duration D       the longest the sink listens (default 60s)
  --count N          stop after N frames of the stream
  --stream ID        the stream to count (default 1)
  --streams N        count N streams from ID, one a sender of gen --cpus N (default 1)
  --cpus N|all       N receive rings sharing the port's frames (PACKET_FANOUT), each
                     read by a thread pinned to a CPU of its own, counts merged
                     (default: one ring, not pinned)
  --fanout MODE      how the rings share frames: hash (a flow to one ring, its order
                     whole) or cpu (the ring of the CPU that received the frame)
                     (default hash)
  --max-loss P       exit 1 when more than P percent of the stream was lost (default 100)
  --min-frames N     exit 1 when fewer than N frames of the stream arrived (default 1)
  --json             the result as JSON
`

const reflectUsage = `Usage: linerate reflect IFACE [--duration 10m] [--cpus N|all] [--json]

Sends every test frame addressed to IFACE's MAC back to where it came from (MACs swapped),
for 'linerate rfc2544 --peer' or 'linerate gen' + 'linerate sink' on the other machine,
which then measures round-trip latency. Anything else arriving is left alone.

Flags:
  --duration D       how long to reflect (default 10m)
  --cpus N|all       N pairs of rings, the receive rings sharing the frames by flow
                     (PACKET_FANOUT), each pair on a thread pinned to a CPU of its own
                     (default: one pair, not pinned)
  --json             the result as JSON
`

const rfc2544Usage = `Usage: linerate rfc2544 IFACE (--peer MAC | --loop IFACE2) [--sizes 64,128,256,512,1024,1280,1518]
                        [--trial 10s] [--loss-tolerance 0] [--tests throughput,latency,loss,backtoback]
                        [--resolution 1] [--link-mbps N] [--cpus N|all] [--hw-timestamps] [--json]

Runs the RFC 2544 benchmarks from IFACE: throughput (the highest rate with loss within
the tolerance, by binary search), latency at that rate, frame loss rate (from 100% down
in 10% steps until two trials lose nothing) and back-to-back frames (the longest burst at
line rate without loss). --peer is a reflector's MAC (linerate reflect on the far end;
latency is round-trip), --loop a second port of this machine cabled to IFACE (latency is
one-way).

Flags:
  --sizes LIST       frame sizes with FCS (default RFC 2544's seven)
  --trial D          each trial's length (default 10s; RFC 2544 asks for 60s)
  --loss-tolerance P percent of frames a throughput trial may lose (default 0)
  --tests LIST       which tests (default all four)
  --resolution P     throughput search stops within P% of the rate (default 1)
  --link-mbps N      the link speed 100% means (default: the interface's)
  --cpus N|all       N senders and N receive rings, as gen's and sink's --cpus
  --hw-timestamps    latency from the NIC's own stamps as each frame leaves and comes
                     back (SIOCSHWTSTAMP, put back after; with --peer): a ZynqMP GEM's
                     TSU. A port without them (ethtool -T) measures with software
                     stamps and the result says why
  --force            send on the interface that carries the default route
  --json             the results as JSON
`

func genCommands() []command {
	return []command{
		{name: "gen", summary: "send test frames at a rate (raw socket)", usage: genUsage, run: runGenCmd},
		{name: "sink", summary: "count test frames: loss, order, latency", usage: sinkUsage, run: runSinkCmd},
		{name: "reflect", summary: "send test frames back to their sender", usage: reflectUsage, run: runReflectCmd},
		{name: "rfc2544", summary: "RFC 2544 throughput, latency, loss, back-to-back", usage: rfc2544Usage, run: runRFC2544Cmd},
	}
}

func runGenCmd(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	c := engine.GenConfig{Root: "/"}
	dst := fs.String("dst", "", "")
	src := fs.String("src", "", "")
	fs.StringVar(&c.Size, "size", "64", "")
	fs.StringVar(&c.Rate, "rate", "100%", "")
	fs.DurationVar(&c.Duration, "duration", 10*time.Second, "")
	fs.Uint64Var(&c.Count, "count", 0, "")
	fs.IntVar(&c.Flows, "flows", 1, "")
	fs.IntVar(&c.VLAN, "vlan", 0, "")
	stream := fs.Uint("stream", 1, "")
	fs.IntVar(&c.LinkMbps, "link-mbps", 0, "")
	fs.BoolVar(&c.Force, "force", false, "")
	asJSON := fs.Bool("json", false, "")
	srcIP := fs.String("src-ip", frames.DefaultSrcIP.String(), "")
	dstIP := fs.String("dst-ip", frames.DefaultDstIP.String(), "")
	cpus := fs.String("cpus", "", "")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if c.CPUs, err = engine.ParseCPUs("--cpus", *cpus); err != nil {
		return err
	}
	var err1, err2 error
	c.SrcIP, err1 = netip.ParseAddr(*srcIP)
	c.DstIP, err2 = netip.ParseAddr(*dstIP)
	switch {
	case len(pos) != 1:
		return usageError("give one interface")
	case err1 != nil || err2 != nil || !c.SrcIP.Is4() || !c.DstIP.Is4():
		return usageError("--src-ip %s, --dst-ip %s: want IPv4 addresses", *srcIP, *dstIP)
	case *dst == "":
		return usageError("--dst MAC is required")
	case c.Duration <= 0:
		return usageError("--duration %v: want a positive duration; every run is bounded", c.Duration)
	case flagGiven(fs, "count") && c.Count == 0:
		return usageError("--count 0: want at least one frame")
	case *stream > 65535:
		return usageError("--stream %d: want 0..65535", *stream)
	}
	c.Iface, c.Stream = pos[0], uint16(*stream)
	if c.Dst, err = engine.ParseMAC("--dst", *dst); err != nil {
		return err
	}
	if *src != "" {
		if c.Src, err = engine.ParseMAC("--src", *src); err != nil {
			return err
		}
	}
	if flagGiven(fs, "count") && !flagGiven(fs, "duration") {
		c.Duration = 0 // bounded by the count at the rate
	}
	c.Progress = func(sent uint64, el time.Duration) {
		fmt.Fprintf(stderr, "gen %s: %6.1fs  %d frames  %.0f fps\n", c.Iface, el.Seconds(), sent, float64(sent)/el.Seconds())
	}
	res, err := engine.Gen(ctx, c)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, res)
	}
	_, err = io.WriteString(stdout, res.Text())
	return err
}

// oneBoundedIface parses the flags of a command that takes one interface and runs for a
// bounded --duration.
func oneBoundedIface(fs *flag.FlagSet, args []string, duration *time.Duration) (string, error) {
	pos, err := parseFlags(fs, args)
	if err != nil {
		return "", err
	}
	if len(pos) != 1 {
		return "", usageError("give one interface")
	}
	if *duration <= 0 {
		return "", usageError("--duration %v: want a positive duration; every run is bounded", *duration)
	}
	return pos[0], nil
}

func runSinkCmd(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sink", flag.ContinueOnError)
	c := engine.SinkConfig{Root: "/"}
	fs.DurationVar(&c.Duration, "duration", 60*time.Second, "")
	fs.Uint64Var(&c.Count, "count", 0, "")
	stream := fs.Uint("stream", 1, "")
	asJSON := fs.Bool("json", false, "")
	maxLoss := fs.Float64("max-loss", 100, "")
	minFrames := fs.Uint64("min-frames", 1, "")
	fs.IntVar(&c.Streams, "streams", 1, "")
	cpus := fs.String("cpus", "", "")
	fs.StringVar(&c.Fanout, "fanout", "hash", "")
	iface, err := oneBoundedIface(fs, args, &c.Duration)
	if err != nil {
		return err
	}
	if c.CPUs, err = engine.ParseCPUs("--cpus", *cpus); err != nil {
		return err
	}
	switch {
	case *stream > 65535:
		return usageError("--stream %d: want 0..65535", *stream)
	case c.Streams < 1 || c.Streams > 1024:
		return usageError("--streams %d: want 1..1024 (gen --cpus N sends N streams)", c.Streams)
	case !(*maxLoss >= 0 && *maxLoss <= 100):
		return usageError("--max-loss %v: want a percentage, 0..100", *maxLoss)
	}
	c.Iface, c.Stream = iface, uint16(*stream)
	c.Progress = func(n rawsock.SinkProgress, el time.Duration) {
		fmt.Fprintf(stderr, "sink %s: %6.1fs  %d frames  %d corrupted  %d foreign\n", iface, el.Seconds(), n.Received, n.Corrupted, n.Foreign)
	}
	res, err := engine.Sink(ctx, c)
	if err != nil {
		return err
	}
	if *asJSON {
		err = writeJSON(stdout, res)
	} else {
		_, err = io.WriteString(stdout, res.Text())
	}
	if err != nil {
		return err
	}
	// The verdict, for scripts: exit 1 when the stream fell short of what was asked.
	if err := res.Verdict(*maxLoss, *minFrames); err != nil {
		return &exitError{code: 1, err: err}
	}
	return nil
}

func runReflectCmd(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("reflect", flag.ContinueOnError)
	duration := fs.Duration("duration", 10*time.Minute, "")
	asJSON := fs.Bool("json", false, "")
	cpuFlag := fs.String("cpus", "", "")
	iface, err := oneBoundedIface(fs, args, duration)
	if err != nil {
		return err
	}
	cpus, err := engine.ParseCPUs("--cpus", *cpuFlag)
	if err != nil {
		return err
	}
	p, err := engine.OpenReflector("/", iface, cpus)
	if err != nil {
		return err
	}
	defer p.Close()
	fmt.Fprintf(stderr, "reflect %s (%s): %d thread(s), for %v\n", p.Name, p.MAC, p.Threads(), *duration)
	st, err := p.Run(ctx, *duration, func(s rawsock.ReflectStats, el time.Duration) {
		fmt.Fprintf(stderr, "reflect %s: %6.1fs  %d reflected  %d foreign  %d dropped\n", p.Name, el.Seconds(), s.Reflected, s.Foreign, s.Dropped)
	})
	if err != nil {
		return fmt.Errorf("%s: %w", p.Name, err)
	}
	if *asJSON {
		return writeJSON(stdout, struct {
			Interface string `json:"interface"`
			rawsock.ReflectStats
		}{p.Name, st})
	}
	fmt.Fprintf(stdout, "reflect %s: %d frames reflected, %d foreign, %d dropped (TX ring full); cpu: %.0f ns/frame\n", p.Name, st.Reflected, st.Foreign, st.Dropped, st.NsPerFrame)
	return nil
}

func runRFC2544Cmd(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("rfc2544", flag.ContinueOnError)
	c := engine.RFC2544Config{Root: "/"}
	b := &c.Bench
	peer := fs.String("peer", "", "")
	fs.StringVar(&c.Loop, "loop", "", "")
	sizes := fs.String("sizes", "64,128,256,512,1024,1280,1518", "")
	fs.DurationVar(&b.Trial, "trial", 10*time.Second, "")
	fs.Float64Var(&b.LossTol, "loss-tolerance", 0, "")
	tests := fs.String("tests", strings.Join(rfc2544.AllTests, ","), "")
	fs.Float64Var(&b.Res, "resolution", 1, "")
	fs.IntVar(&b.LinkMbps, "link-mbps", 0, "")
	fs.BoolVar(&c.Force, "force", false, "")
	fs.BoolVar(&c.HWStamps, "hw-timestamps", false, "")
	cpus := fs.String("cpus", "", "")
	asJSON := fs.Bool("json", false, "")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) != 1:
		return usageError("give one interface")
	case (*peer == "") == (c.Loop == ""):
		return usageError("give --peer MAC (a reflector) or --loop IFACE2 (a second port cabled back)")
	case b.Trial <= 0:
		return usageError("--trial %v: want a positive duration", b.Trial)
	}
	if c.CPUs, err = engine.ParseCPUs("--cpus", *cpus); err != nil {
		return err
	}
	if c.HWStamps && c.Loop != "" {
		return usageError("--hw-timestamps measures round trips through a reflector (--peer): two ports have a clock each")
	}
	c.Iface, b.Tests = pos[0], strings.Split(*tests, ",")
	if b.Sizes, err = frames.ParseSizes(*sizes); err != nil {
		return usageError("%v", err)
	}
	if *peer != "" {
		if c.Peer, err = engine.ParseMAC("--peer", *peer); err != nil {
			return err
		}
	}
	b.Progress = func(s string) { fmt.Fprintf(stderr, "rfc2544 %s: %s\n", c.Iface, s) }
	res, err := engine.RFC2544(ctx, c)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, res)
	}
	_, err = io.WriteString(stdout, res.Text())
	return err
}
