package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/zynqnet/linerate/internal/cli"
	"github.com/zynqnet/linerate/internal/console"
	"github.com/zynqnet/linerate/netperf/engine"
	"github.com/zynqnet/linerate/netperf/frames"
	"github.com/zynqnet/linerate/netperf/rawsock"
	"github.com/zynqnet/linerate/netperf/rfc2544"
)

// The raw-socket traffic engine's commands: gen, sink, reflect, rfc2544.

const cpusUsage = "`N|all` senders and receive rings, each on a thread pinned to a CPU of its own (default: one, not pinned)"

func genCommand() *cli.Command {
	return &cli.Command{
		Name: "gen", Summary: "send test frames at a rate (raw socket)",
		Usage: []string{"gen IFACE --dst MAC [--size 64..9018|imix] [--rate 100%|950Mbit|200kpps] [--duration 10s | --count N]"},
		About: `Sends test frames (Ethernet/IPv4/UDP with a stream id, sequence number, TX timestamp and
payload checksum) out of IFACE through an AF_PACKET TX ring, bypassing the qdisc, paced
to the rate. Rates are Ethernet rates: 100% is line rate at the link's speed counting
preamble and inter-frame gap (1 GbE: 1,488,095 frames/s at 64 bytes, 81,274 at 1518);
bit rates count the same way. Frame sizes include the FCS. A run ends at --count frames
or after --duration and then tells the sink how many were sent; with --cpus N, N senders
(streams ID, ID+1, ...) share the rate and the count, and the result gives CPU time.`,
		Examples: []cli.Example{cli.Ex("gen eth0 --dst 02:00:00:00:00:0b --rate 50% --duration 10s", "half line rate of 64-byte frames to a sink"),
			cli.Ex("gen eth0 --dst 02:00:00:00:00:0b --size imix --count 1000000 --cpus all", "a million IMIX frames from every core")},
		Flags: genFlags,
	}
}

func genFlags(fs *flag.FlagSet) cli.Run {
	c := engine.GenConfig{Root: "/", Stream: 1, SrcIP: frames.DefaultSrcIP, DstIP: frames.DefaultDstIP}
	fs.Var(cli.MAC{P: &c.Dst}, "dst", "destination `MAC` (required): the sink's port, or the reflector's")
	fs.Var(cli.MAC{P: &c.Src}, "src", "source `MAC` (default: IFACE's)")
	fs.StringVar(&c.Size, "size", "64", "frame `SIZE` with FCS, 64..9018 (within the MTU), or imix (7:4:1 of 64/594/1518; +4 each with --vlan)")
	fs.StringVar(&c.Rate, "rate", "100%", "the `RATE`: 100%, 50%, 950Mbit, 200kpps")
	fs.DurationVar(&c.Duration, "duration", 10*time.Second, "how long to send")
	fs.Uint64Var(&c.Count, "count", 0, "how many frames to send")
	fs.IntVar(&c.Flows, "flows", 1, "UDP source ports cycled, so RSS/RPS spread the load")
	fs.IntVar(&c.VLAN, "vlan", 0, "an 802.1Q tag `ID`")
	fs.Var(engine.StreamValue{P: &c.Stream}, "stream", "stream `ID`, 0..65535, as the sink expects (default 1)")
	fs.IntVar(&c.LinkMbps, "link-mbps", 0, "the link speed 100% means (default: the interface's)")
	fs.BoolVar(&c.Force, "force", false, "send on the interface that carries the default route")
	asJSON := fs.Bool("json", false, "the result as JSON")
	fs.Var(engine.IPv4Value{P: &c.SrcIP}, "src-ip", "IPv4 source `ADDR` (default "+frames.DefaultSrcIP.String()+": RFC 2544's benchmarking network, so a receiver that does not own the address drops the frames in the IP layer)")
	fs.Var(engine.IPv4Value{P: &c.DstIP}, "dst-ip", "IPv4 destination `ADDR` (default "+frames.DefaultDstIP.String()+")")
	fs.Var(engine.CPUsValue{P: &c.CPUs}, "cpus", cpusUsage)
	return func(ctx context.Context, pos []string, std cli.IO) error {
		switch {
		case len(pos) != 1:
			return usageError("give one interface")
		case c.Dst == nil:
			return usageError("--dst MAC is required")
		case c.Duration <= 0:
			return usageError("--duration %v: want a positive duration; every run is bounded", c.Duration)
		case cli.Given(fs, "count") && c.Count == 0:
			return usageError("--count 0: want at least one frame")
		}
		c.Iface = pos[0]
		if cli.Given(fs, "count") && !cli.Given(fs, "duration") {
			c.Duration = 0 // bounded by the count at the rate
		}
		c.Progress = func(sent uint64, el time.Duration) {
			fmt.Fprintf(std.Stderr, "gen %s: %6.1fs  %d frames  %.0f fps\n", c.Iface, el.Seconds(), sent, float64(sent)/el.Seconds())
		}
		res, err := engine.Gen(ctx, c)
		if err != nil {
			return err
		}
		return render(std.Stdout, *asJSON, res, res.Text())
	}
}

// render writes a result as JSON or as its text.
func render(w io.Writer, asJSON bool, v any, text string) error {
	if asJSON {
		return writeJSON(w, v)
	}
	_, err := io.WriteString(w, text)
	return err
}

// oneBounded checks a command's one interface and its bounded --duration.
func oneBounded(pos []string, d time.Duration) (string, error) {
	if len(pos) != 1 {
		return "", usageError("give one interface")
	}
	if d <= 0 {
		return "", usageError("--duration %v: want a positive duration; every run is bounded", d)
	}
	return pos[0], nil
}

func sinkCommand() *cli.Command {
	return &cli.Command{
		Name: "sink", Summary: "count test frames: loss, order, latency",
		Usage: []string{"sink IFACE [--duration 60s] [--count N] [--stream ID [--streams N]] [--cpus N|all]"},
		About: `Counts the test frames arriving on IFACE (a TPACKET_V3 RX ring), per stream and summed:
received, lost, reordered, duplicated, corrupted (payload checksum), foreign (anything
else), rates, latency percentiles. Every stream that comes is counted (the first 256:
gen --cpus N's N need no flag); --stream ID [--streams N] counts those alone. Latency is
one-way: right when the sender shares this clock (same machine, or PTP). The run ends
after --duration, at --count frames, or once every stream counted has sent its end marker.`,
		Examples: []cli.Example{cli.Ex("sink eth1 --cpus 2", "what 'gen --cpus 2' sends, on two cores"), cli.Ex("sink eth1 --stream 7", "stream 7 alone")},
		Flags: func(fs *flag.FlagSet) cli.Run {
			c := engine.SinkConfig{Root: "/", Stream: 1}
			fs.DurationVar(&c.Duration, "duration", 60*time.Second, "the longest the sink listens")
			fs.Uint64Var(&c.Count, "count", 0, "stop after `N` frames of the stream")
			fs.Var(engine.StreamValue{P: &c.Stream}, "stream", "count stream `ID` alone, the rest foreign (without --stream and --streams: every stream that comes)")
			asJSON := fs.Bool("json", false, "the result as JSON")
			maxLoss := fs.Float64("max-loss", 100, "exit 1 when more than `P` percent of the stream was lost")
			minFrames := fs.Uint64("min-frames", 1, "exit 1 when fewer than `N` frames of the stream arrived")
			fs.IntVar(&c.Streams, "streams", 1, "count `N` streams from --stream's ID alone, one a sender of gen --cpus N")
			fs.Var(engine.CPUsValue{P: &c.CPUs}, "cpus", "`N|all` receive rings sharing the port's frames (PACKET_FANOUT), each read by a thread pinned to a CPU of its own, counts merged (default: one ring, not pinned)")
			fanout := cli.Choice(fs, "fanout", "hash", "how the rings share frames: hash (a flow to one ring, its order whole) or cpu (the ring of the CPU that received the frame)", "hash", "cpu")
			return func(ctx context.Context, pos []string, std cli.IO) error {
				iface, err := oneBounded(pos, c.Duration)
				if err != nil {
					return err
				}
				fs.Visit(func(f *flag.Flag) { c.Narrow = c.Narrow || strings.HasPrefix(f.Name, "stream") })
				if !(*maxLoss >= 0 && *maxLoss <= 100) {
					return usageError("--max-loss %v: want a percentage, 0..100", *maxLoss)
				}
				c.Iface, c.Fanout = iface, *fanout
				c.Progress = func(n rawsock.SinkProgress, el time.Duration) {
					fmt.Fprintf(std.Stderr, "sink %s: %6.1fs  %d frames  streams %d  %d corrupted  %d foreign\n", iface, el.Seconds(), n.Received, n.Streams, n.Corrupted, n.Foreign)
				}
				res, err := engine.Sink(ctx, c)
				if err != nil {
					return err
				}
				if err := render(std.Stdout, *asJSON, res, res.Text()); err != nil {
					return err
				}
				// The verdict, for scripts: exit 1 when the stream fell short of what was asked.
				if err := res.Verdict(*maxLoss, *minFrames); err != nil {
					return cli.Fail(err)
				}
				return nil
			}
		},
	}
}

func reflectCommand() *cli.Command {
	return &cli.Command{
		Name: "reflect", Summary: "send test frames back to their sender",
		Usage: []string{"reflect IFACE [--duration 10m] [--cpus N|all] [--realtime on|CPU] [--bpf] [--json]"},
		About: `Sends every test frame addressed to IFACE's MAC back to where it came from (MACs swapped),
for 'linerate rfc2544 --peer' or 'linerate gen' + 'linerate sink' on the other machine,
which then measures round-trip latency. Anything else arriving is left alone.`,
		Examples: []cli.Example{cli.Ex("reflect eth1 --duration 1h", "the far end of an rfc2544 --peer run")},
		Flags: func(fs *flag.FlagSet) cli.Run {
			duration := fs.Duration("duration", 10*time.Minute, "how long to reflect")
			asJSON := fs.Bool("json", false, "the result as JSON")
			inKernel := fs.Bool("bpf", false, "answer in the port's receive path, not on a thread: a BPF program at its TC ingress (TCX, Linux 6.6+, root), in the softirq that receives the frame, as the kernel answers a ping; detached when the command ends (the station's build)")
			var cpus, rt = 0, engine.Realtime{}
			fs.Var(engine.CPUsValue{P: &cpus}, "cpus", "`N|all` pairs of rings, the receive rings sharing the frames by flow (PACKET_FANOUT), each pair on a thread pinned to a CPU of its own (default: one pair, not pinned)")
			fs.Var(engine.RealtimeValue{P: &rt}, "realtime", "`on|CPU` the reflecting threads real-time (SCHED_FIFO 10) and memory locked, as root or with CAP_SYS_NICE; a CPU number also pins the one thread there, busy-polling its ring: give it a CPU nothing else needs (linerate station does so when the machine has CPUs to spare) (default: off)")
			return func(ctx context.Context, pos []string, std cli.IO) error {
				iface, err := oneBounded(pos, *duration)
				if err != nil {
					return err
				}
				res, err := engine.Reflect(ctx, "/", iface, cpus, rt, *inKernel, *duration, std.Stderr)
				if err != nil {
					return err
				}
				return render(std.Stdout, *asJSON, res, res.Text())
			}
		},
	}
}

func rfc2544Command() *cli.Command {
	return &cli.Command{
		Name: "rfc2544", Summary: "RFC 2544 throughput, latency, loss, back-to-back",
		Usage: []string{"rfc2544 IFACE (--peer MAC | --loop IFACE2) [--sizes 64,...,1518] [--trial 10s] [--tests throughput,latency,loss,backtoback]"},
		About: `Runs the RFC 2544 benchmarks from IFACE: throughput (the highest rate with loss within
the tolerance, by binary search), latency at that rate, frame loss rate (from 100% down
in 10% steps until two trials lose nothing) and back-to-back frames (the longest burst at
line rate without loss). --peer is a reflector's MAC (linerate reflect on the far end;
latency is round-trip), --loop a second port of this machine cabled to IFACE (latency is
one-way). 100% is IFACE's speed, or --link-mbps where the port says more than the link
carries or nothing. The search is bounded by what the sender reaches (a trial it falls
short in): the result says so.`,
		Examples: []cli.Example{cli.Ex("rfc2544 eth0 --peer 02:00:00:00:00:0b --trial 60s", "the four tests at RFC 2544's trial length"),
			cli.Ex("rfc2544 eth0 --loop eth1 --tests throughput --sizes 64,1518", "throughput between two ports cabled together")},
		Flags: rfc2544Flags,
	}
}

func rfc2544Flags(fs *flag.FlagSet) cli.Run {
	c := engine.RFC2544Config{Root: "/"}
	b := &c.Bench
	fs.Var(cli.MAC{P: &c.Peer}, "peer", "a reflector's `MAC` (linerate reflect on the far end)")
	fs.StringVar(&c.Loop, "loop", "", "a second port `IFACE2` of this machine cabled back to IFACE")
	sizes := fs.String("sizes", "64,128,256,512,1024,1280,1518", "frame `SIZES` with FCS, comma-separated")
	fs.DurationVar(&b.Trial, "trial", 10*time.Second, "each trial's length (RFC 2544 asks for 60s)")
	fs.Float64Var(&b.LossTol, "loss-tolerance", 0, "percent `P` of frames a throughput trial may lose")
	tests := fs.String("tests", strings.Join(rfc2544.AllTests, ","), "which `TESTS`, comma-separated")
	fs.Float64Var(&b.Res, "resolution", 1, "the throughput search stops within `P`% of the rate")
	fs.IntVar(&b.LinkMbps, "link-mbps", 0, "the link speed 100% means (default: the interface's)")
	fs.BoolVar(&c.Force, "force", false, "send on the interface that carries the default route")
	fs.BoolVar(&c.HWStamps, "hw-timestamps", false, "latency from the NIC's own stamps as each frame leaves and comes back (SIOCSHWTSTAMP, put back after; with --peer): a ZynqMP GEM's TSU; a port without them measures with software stamps and the result says why")
	fs.Var(engine.CPUsValue{P: &c.CPUs}, "cpus", cpusUsage)
	asJSON := fs.Bool("json", false, "the results as JSON")
	return func(ctx context.Context, pos []string, std cli.IO) error {
		var err error
		switch {
		case len(pos) != 1:
			return usageError("give one interface")
		case (c.Peer == nil) == (c.Loop == ""):
			return usageError("give --peer MAC (a reflector) or --loop IFACE2 (a second port cabled back)")
		case b.Trial <= 0:
			return usageError("--trial %v: want a positive duration", b.Trial)
		case c.HWStamps && c.Loop != "":
			return usageError("--hw-timestamps measures round trips through a reflector (--peer): two ports have a clock each")
		}
		c.Iface, b.Tests = pos[0], strings.Split(*tests, ",")
		if b.Sizes, err = frames.ParseSizes(*sizes); err != nil {
			return usageError("%v", err)
		}
		prog := console.NewProgress(std.Stderr, "rfc2544 "+c.Iface, 0)
		b.Progress = func(s string, _, est int) { prog.SetTotal(est, true); prog.Step(s) }
		res, err := engine.RFC2544(ctx, c)
		prog.End()
		if err != nil {
			return err
		}
		return render(std.Stdout, *asJSON, res, res.Text())
	}
}
