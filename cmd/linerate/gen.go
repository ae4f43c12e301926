package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
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
                    [--duration 10s | --count N] [--flows N] [--vlan ID] [--stream ID] [--json]

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
  --src-ip, --dst-ip IPv4 addresses (default 198.18.0.1 -> 198.19.0.1, RFC 2544's
                     benchmarking network: a receiver that does not own the address
                     drops the frames in the IP layer)
  --link-mbps N      the link speed 100% means (default: the interface's)
  --force            send on the interface that carries the default route
  --json             the result as JSON
`

const sinkUsage = `Usage: linerate sink IFACE [--duration 60s] [--count N] [--stream ID] [--json]

Counts the test frames of one stream arriving on IFACE (through a TPACKET_V3 RX ring):
received, lost, reordered, duplicated, corrupted (payload checksum), foreign (anything
else on the port), rates and latency percentiles. Latency is one-way: it is right when
the sender shares this machine's clock (the same machine, or PTP). The run ends after
--duration (default 60s), at --count frames, or shortly after the sender's end marker.

Flags:
  --duration D       the longest the sink listens (default 60s)
  --count N          stop after N frames of the stream
  --stream ID        the stream to count (default 1)
  --json             the result as JSON
`

const reflectUsage = `Usage: linerate reflect IFACE [--duration 10m] [--json]

Sends every test frame addressed to IFACE's MAC back to where it came from (MACs swapped),
for 'linerate rfc2544 --peer' or 'linerate gen' + 'linerate sink' on the other machine,
which then measures round-trip latency. Anything else arriving is left alone.

Flags:
  --duration D       how long to reflect (default 10m)
  --json             the result as JSON
`

const rfc2544Usage = `Usage: linerate rfc2544 IFACE (--peer MAC | --loop IFACE2) [--sizes 64,128,256,512,1024,1280,1518]
                        [--trial 10s] [--loss-tolerance 0] [--tests throughput,latency,loss,backtoback]
                        [--resolution 1] [--link-mbps N] [--json]

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

func parseMAC(flagName, s string) (net.HardwareAddr, error) {
	m, err := net.ParseMAC(s)
	if err != nil || len(m) != 6 {
		return nil, usageError("%s %q: want an Ethernet address, 02:00:00:00:00:0b", flagName, s)
	}
	return m, nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func mbps(bytes uint64, frames uint64, secs float64, wire bool) float64 {
	if secs <= 0 {
		return 0
	}
	b := float64(bytes)
	if wire {
		b += float64(frames) * float64(20)
	}
	return b * 8 / secs / 1e6
}

func runGenCmd(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	dst := fs.String("dst", "", "")
	src := fs.String("src", "", "")
	size := fs.String("size", "64", "")
	rate := fs.String("rate", "100%", "")
	duration := fs.Duration("duration", 10*time.Second, "")
	count := fs.Uint64("count", 0, "")
	flows := fs.Int("flows", 1, "")
	vlan := fs.Int("vlan", 0, "")
	stream := fs.Uint("stream", 1, "")
	link := fs.Int("link-mbps", 0, "")
	force := fs.Bool("force", false, "")
	asJSON := fs.Bool("json", false, "")
	srcIP := fs.String("src-ip", frames.DefaultSrcIP.String(), "")
	dstIP := fs.String("dst-ip", frames.DefaultDstIP.String(), "")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError("give one interface")
	}
	sip, err1 := netip.ParseAddr(*srcIP)
	dip, err2 := netip.ParseAddr(*dstIP)
	if err1 != nil || err2 != nil || !sip.Is4() || !dip.Is4() {
		return usageError("--src-ip %s, --dst-ip %s: want IPv4 addresses", *srcIP, *dstIP)
	}
	if *dst == "" {
		return usageError("--dst MAC is required")
	}
	if *duration <= 0 {
		return usageError("--duration %v: want a positive duration; every run is bounded", *duration)
	}
	if flagGiven(fs, "count") && *count == 0 {
		return usageError("--count 0: want at least one frame")
	}
	if *stream > 65535 {
		return usageError("--stream %d: want 0..65535", *stream)
	}
	dmac, err := parseMAC("--dst", *dst)
	if err != nil {
		return err
	}
	p, err := engine.LookupPort("/", pos[0], *link)
	if err != nil {
		return err
	}
	smac := p.MAC
	if *src != "" {
		if smac, err = parseMAC("--src", *src); err != nil {
			return err
		}
	}
	sizes, err := frames.ParseSizes(*size)
	if err != nil {
		return usageError("%v", err)
	}
	if *vlan != 0 && strings.EqualFold(*size, "imix") {
		for i := range sizes {
			sizes[i] += 4
		}
	}
	if err := p.CheckSizes(sizes, *vlan != 0); err != nil {
		return err
	}
	b, err := frames.NewBuilder(frames.Spec{Src: smac, Dst: dmac, SrcIP: sip, DstIP: dip, Sizes: sizes, Flows: *flows, VLAN: *vlan, Stream: uint16(*stream)})
	if err != nil {
		return usageError("%v", err)
	}
	r, err := frames.ParseRate(*rate)
	if err != nil {
		return usageError("%v", err)
	}
	fps, err := r.FPS(p.LinkMbps, b.AvgSize())
	if err != nil {
		return usageError("%v", err)
	}
	if err := engine.RefuseManagement(p.Name, *force); err != nil {
		return err
	}
	tx, err := rawsock.OpenTX(p.Name, b.MaxFrameLen(), true)
	if err != nil {
		return err
	}
	defer tx.Close()
	target := fps
	if r.Percent >= 100 {
		target = 0 // line rate: as fast as the port takes them; the driver paces
	}
	o := rawsock.GenOptions{FPS: target, Count: *count, Duration: *duration, EndMarkers: true,
		Progress: func(sent uint64, el time.Duration) {
			fmt.Fprintf(stderr, "gen %s: %6.1fs  %d frames  %.0f fps\n", p.Name, el.Seconds(), sent, float64(sent)/el.Seconds())
		}}
	if flagGiven(fs, "count") && !flagGiven(fs, "duration") {
		o.Duration = 0
		if fps > 0 {
			// Bounded anyway: twice the time the count takes at the rate, and 10 s.
			o.Duration = time.Duration(float64(*count)/fps*2e9) + 10*time.Second
		}
	}
	st, err := rawsock.Gen(ctx, tx, b, o)
	if err != nil {
		return fmt.Errorf("%s: %w", p.Name, err)
	}
	secs := st.Elapsed.Seconds()
	res := struct {
		Interface string  `json:"interface"`
		Dst       string  `json:"dst"`
		Stream    uint    `json:"stream"`
		Sizes     []int   `json:"sizes"`
		TargetFPS float64 `json:"target_fps"`
		LinkMbps  int     `json:"link_mbps"`
		Sent      uint64  `json:"sent"`
		Seconds   float64 `json:"seconds"`
		PPS       float64 `json:"pps"`
		L2Mbps    float64 `json:"l2_mbps"`
		WireMbps  float64 `json:"wire_mbps"`
	}{p.Name, dmac.String(), *stream, sizes, fps, p.LinkMbps, st.Sent, secs, float64(st.Sent) / secs,
		mbps(st.Bytes, st.Sent, secs, false), mbps(st.Bytes, st.Sent, secs, true)}
	if *asJSON {
		return writeJSON(stdout, res)
	}
	fmt.Fprintf(stdout, "gen %s -> %s stream %d, %v bytes: sent %d frames in %.2f s: %.0f fps, %.2f Mbit/s L2, %.2f Mbit/s wire (%.1f%% of %d Mbit/s)\n",
		p.Name, dmac, *stream, sizeText(sizes), st.Sent, secs, res.PPS, res.L2Mbps, res.WireMbps, res.WireMbps/float64(p.LinkMbps)*100, p.LinkMbps)
	return nil
}

func sizeText(s []int) string {
	if len(s) == len(frames.IMIX) {
		return "imix"
	}
	return strings.Trim(strings.Join(strings.Fields(fmt.Sprint(s)), ","), "[]")
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
	duration := fs.Duration("duration", 60*time.Second, "")
	count := fs.Uint64("count", 0, "")
	stream := fs.Uint("stream", 1, "")
	asJSON := fs.Bool("json", false, "")
	iface, err := oneBoundedIface(fs, args, duration)
	if err != nil {
		return err
	}
	pos := []string{iface}
	if *stream > 65535 {
		return usageError("--stream %d: want 0..65535", *stream)
	}
	if _, err := net.InterfaceByName(pos[0]); err != nil {
		_, err := engine.LookupPort("/", pos[0], 1)
		return err
	}
	rx, err := rawsock.OpenRX(pos[0])
	if err != nil {
		return err
	}
	defer rx.Close()
	c := frames.NewCounter(uint16(*stream))
	_, err = rawsock.Sink(ctx, rx, c, rawsock.SinkOptions{Duration: *duration, Count: *count,
		Progress: func(c *frames.Counter, el time.Duration) {
			fmt.Fprintf(stderr, "sink %s: %6.1fs  %d frames  %d corrupted  %d foreign\n", pos[0], el.Seconds(), c.Received, c.Corrupted, c.Foreign)
		}})
	if err != nil {
		return fmt.Errorf("%s: %w", pos[0], err)
	}
	r := c.Result(0, 0)
	r.LatencyKind = "one-way"
	drops := rx.Drops()
	if *asJSON {
		return writeJSON(stdout, struct {
			Interface string `json:"interface"`
			frames.Result
			SinkDrops uint64 `json:"sink_drops"`
		}{pos[0], r, drops})
	}
	fmt.Fprint(stdout, r.Text("sink "+pos[0]))
	if drops > 0 {
		fmt.Fprintf(stdout, "  the sink's ring overflowed: %d frames dropped here, not on the path\n", drops)
	}
	return nil
}

func runReflectCmd(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("reflect", flag.ContinueOnError)
	duration := fs.Duration("duration", 10*time.Minute, "")
	asJSON := fs.Bool("json", false, "")
	iface, err := oneBoundedIface(fs, args, duration)
	if err != nil {
		return err
	}
	p, err := engine.OpenReflector("/", iface)
	if err != nil {
		return err
	}
	defer p.Close()
	fmt.Fprintf(stderr, "reflect %s (%s): for %v\n", p.Name, p.MAC, *duration)
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
	fmt.Fprintf(stdout, "reflect %s: %d frames reflected, %d foreign, %d dropped (TX ring full)\n", p.Name, st.Reflected, st.Foreign, st.Dropped)
	return nil
}

func runRFC2544Cmd(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("rfc2544", flag.ContinueOnError)
	peer := fs.String("peer", "", "")
	loop := fs.String("loop", "", "")
	sizesFlag := fs.String("sizes", "64,128,256,512,1024,1280,1518", "")
	trial := fs.Duration("trial", 10*time.Second, "")
	tol := fs.Float64("loss-tolerance", 0, "")
	tests := fs.String("tests", strings.Join(rfc2544.AllTests, ","), "")
	res := fs.Float64("resolution", 1, "")
	link := fs.Int("link-mbps", 0, "")
	force := fs.Bool("force", false, "")
	asJSON := fs.Bool("json", false, "")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError("give one interface")
	}
	if (*peer == "") == (*loop == "") {
		return usageError("give --peer MAC (a reflector) or --loop IFACE2 (a second port cabled back)")
	}
	if *trial <= 0 {
		return usageError("--trial %v: want a positive duration", *trial)
	}
	sizes, err := frames.ParseSizes(*sizesFlag)
	if err != nil {
		return usageError("%v", err)
	}
	for _, s := range sizes {
		if s < frames.MinSize || s > frames.MaxSize {
			return usageError("frame size %d: want %d..%d", s, frames.MinSize, frames.MaxSize)
		}
	}
	cfg := rfc2544.Config{Sizes: sizes, Trial: *trial, LossTol: *tol, Res: *res, Tests: strings.Split(*tests, ","), LinkMbps: 1,
		Progress: func(s string) { fmt.Fprintf(stderr, "rfc2544 %s: %s\n", pos[0], s) }}
	if err := cfg.Check(); err != nil {
		return usageError("%v", err)
	}
	p, err := engine.LookupPort("/", pos[0], *link)
	if err != nil {
		return err
	}
	cfg.LinkMbps = p.LinkMbps
	if err := p.CheckSizes(sizes, false); err != nil {
		return err
	}
	if err := engine.RefuseManagement(p.Name, *force); err != nil {
		return err
	}
	maxLen := 0
	for _, s := range sizes {
		maxLen = max(maxLen, s-frames.FCS)
	}
	e := &engine.Trialer{Src: p.MAC, Settle: 500 * time.Millisecond}
	rxName := p.Name
	if *peer != "" {
		if e.Dst, err = parseMAC("--peer", *peer); err != nil {
			return err
		}
		e.Kind = "round-trip"
	} else {
		q, err := engine.LookupPort("/", *loop, p.LinkMbps)
		if err != nil {
			return err
		}
		e.Dst, e.Kind, rxName = q.MAC, "one-way", q.Name
	}
	if e.TX, err = rawsock.OpenTX(p.Name, maxLen, true); err != nil {
		return err
	}
	defer e.TX.Close()
	if e.RX, err = rawsock.OpenRX(rxName); err != nil {
		return err
	}
	defer e.RX.Close()
	rs, err := rfc2544.Run(ctx, e, cfg)
	if err != nil {
		return fmt.Errorf("%s: %w", p.Name, err)
	}
	if *asJSON {
		return writeJSON(stdout, struct {
			Interface string               `json:"interface"`
			Peer      string               `json:"peer,omitempty"`
			Loop      string               `json:"loop,omitempty"`
			LinkMbps  int                  `json:"link_mbps"`
			Trial     float64              `json:"trial_seconds"`
			LossTol   float64              `json:"loss_tolerance_pct"`
			Results   []rfc2544.SizeResult `json:"results"`
		}{p.Name, *peer, *loop, p.LinkMbps, trial.Seconds(), *tol, rs})
	}
	fmt.Fprintf(stdout, "RFC 2544 on %s (%d Mbit/s), %s, trials of %v, loss tolerance %g%%\n", p.Name, p.LinkMbps, map[bool]string{true: "through the reflector " + *peer, false: "looped to " + *loop}[*peer != ""], *trial, *tol)
	fmt.Fprint(stdout, rfc2544.Table(rs))
	return nil
}
