package engine

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zynqnet/linerate/internal/badinput"
	"github.com/zynqnet/linerate/netperf/frames"
	"github.com/zynqnet/linerate/netperf/rawsock"
	"github.com/zynqnet/linerate/netperf/rfc2544"
)

// GenConfig is one run of the generator (linerate gen).
type GenConfig struct {
	Root, Iface  string // Root "/" for this system
	Dst, Src     net.HardwareAddr
	SrcIP, DstIP netip.Addr
	Size         string // 64, 64,594,1518, or imix
	Rate         string // 100%, 950Mbit, 200kpps
	// Duration bounds the run; 0 with Count set: bounded by twice the time Count takes
	// at the rate, plus 10 s.
	Duration    time.Duration
	Count       uint64
	Flows, VLAN int
	Stream      uint16
	LinkMbps    int  // 0: the port's speed
	Force       bool // send on the port that carries the default route
	// CPUs is how many senders (ParseCPUs): 0 one, not pinned; each sender of several
	// has its own TX ring, pinned thread, stream (Stream, Stream+1, ...) and range of
	// Flows source ports, and the rate is their total.
	CPUs     int
	Progress func(sent uint64, el time.Duration)
}

// GenResult is what a run of the generator sent.
type GenResult struct {
	Interface string  `json:"interface"`
	Dst       string  `json:"dst"`
	Stream    uint16  `json:"stream"`
	Sizes     []int   `json:"sizes"`
	TargetFPS float64 `json:"target_fps"`
	LinkMbps  int     `json:"link_mbps"`
	Sent      uint64  `json:"sent"`
	// Unsent is the frames the port never took, still queued when the run ended (its
	// link down): not in Sent.
	Unsent   uint64  `json:"unsent,omitempty"`
	Seconds  float64 `json:"seconds"`
	PPS      float64 `json:"pps"`
	L2Mbps   float64 `json:"l2_mbps"`
	WireMbps float64 `json:"wire_mbps"`
	// Streams is how many streams were sent, Stream and the ones after it: one a sender.
	Streams int `json:"streams"`
	// CPUNsPerFrame is the senders' CPU time per frame sent; Senders each one's share.
	CPUNsPerFrame float64               `json:"cpu_ns_per_frame"`
	Senders       []rawsock.ThreadStats `json:"senders"`
}

// ParseMAC reads an Ethernet address given as the named flag.
func ParseMAC(flagName, s string) (net.HardwareAddr, error) {
	m, err := net.ParseMAC(s)
	if err != nil || len(m) != 6 {
		return nil, badinput.Errorf("%s %q: want an Ethernet address, 02:00:00:00:00:0b", flagName, s)
	}
	return m, nil
}

// genPlan checks a generator run before anything is sent: the port, the frames, the
// rate and the management guard.
func genPlan(c *GenConfig) (*Port, *frames.Builder, []int, float64, frames.Rate, error) {
	var rate frames.Rate
	p, err := LookupPort(c.Root, c.Iface, c.LinkMbps)
	if err != nil {
		return nil, nil, nil, 0, rate, err
	}
	src := c.Src
	if src == nil {
		src = p.MAC
	}
	sizes, err := frames.ParseSizes(c.Size)
	if err != nil {
		return nil, nil, nil, 0, rate, badinput.Wrap(err)
	}
	if c.VLAN != 0 && strings.EqualFold(c.Size, "imix") {
		for i := range sizes {
			sizes[i] += 4
		}
	}
	if err := p.CheckSizes(sizes, c.VLAN != 0); err != nil {
		return nil, nil, nil, 0, rate, err
	}
	b, err := frames.NewBuilder(frames.Spec{Src: src, Dst: c.Dst, SrcIP: c.SrcIP, DstIP: c.DstIP, Sizes: sizes, Flows: c.Flows, VLAN: c.VLAN, Stream: c.Stream})
	if err != nil {
		return nil, nil, nil, 0, rate, badinput.Wrap(err)
	}
	if rate, err = frames.ParseRate(c.Rate); err != nil {
		return nil, nil, nil, 0, rate, badinput.Wrap(err)
	}
	fps, err := rate.FPS(p.LinkMbps, b.AvgSize())
	if err != nil {
		return nil, nil, nil, 0, rate, badinput.Wrap(err)
	}
	if err := RefuseManagement(p.Name, c.Force); err != nil {
		return nil, nil, nil, 0, rate, err
	}
	return p, b, sizes, fps, rate, nil
}

// Gen sends test frames out of the port at the rate until Count or Duration.
func Gen(ctx context.Context, c GenConfig) (*GenResult, error) {
	p, b, sizes, fps, rate, err := genPlan(&c)
	if err != nil {
		return nil, err
	}
	cpus, err := PickCPUs(c.CPUs)
	if err != nil {
		return nil, err
	}
	senders, err := openSenders(p.Name, b, c, cpus)
	defer closeSenders(senders)
	if err != nil {
		return nil, err
	}
	st, err := rawsock.Gen(ctx, senders, genOptions(c, fps, rate))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.Name, err)
	}
	return genResult(p, c, sizes, fps, st, len(senders)), nil
}

// genOptions is how the senders are paced: at fps, or at line rate (100%) as fast as the
// port takes them (the driver paces); a run bounded by a count alone is bounded in time
// anyway, by twice the time the count takes at the rate and 10 s.
func genOptions(c GenConfig, fps float64, rate frames.Rate) rawsock.GenOptions {
	target := fps
	if rate.Percent >= 100 {
		target = 0
	}
	o := rawsock.GenOptions{FPS: target, Count: c.Count, Duration: c.Duration, EndMarkers: true, Progress: c.Progress}
	if c.Duration == 0 && c.Count > 0 && fps > 0 {
		o.Duration = time.Duration(float64(c.Count)/fps*2e9) + 10*time.Second
	}
	return o
}

// genResult is a run's account: frames and bytes sent over the time taken, on the
// wire (with preamble and gap) and at layer 2, and the senders' CPU per frame; streams
// is how many senders (a stream each).
func genResult(p *Port, c GenConfig, sizes []int, fps float64, st rawsock.GenStats, streams int) *GenResult {
	secs := st.Elapsed.Seconds()
	pps := 0.0
	if secs > 0 {
		pps = float64(st.Sent) / secs
	}
	return &GenResult{Interface: p.Name, Dst: c.Dst.String(), Stream: c.Stream, Sizes: sizes, TargetFPS: fps, LinkMbps: p.LinkMbps,
		Sent: st.Sent, Unsent: st.Unsent, Seconds: secs, PPS: pps,
		L2Mbps: mbps(st.Bytes, st.Sent, secs, false), WireMbps: mbps(st.Bytes, st.Sent, secs, true),
		Streams: streams, CPUNsPerFrame: rawsock.NsPerFrame(st.CPU, st.Sent), Senders: st.Senders}
}

// closeSenders closes every sender's ring at once: each close waits out a network
// grace period (packet_release's synchronize_net), tens of ms on a busy core, which one
// after another added up to over 100 ms between SIGINT and exit with --cpus 2.
func closeSenders(senders []rawsock.Sender) {
	var wg sync.WaitGroup
	for _, s := range senders {
		wg.Add(1)
		go func() { defer wg.Done(); s.TX.Close() }()
	}
	wg.Wait()
}

// openSenders opens a TX ring a sender: one, not pinned, without cpus; else one a CPU,
// each with its stream (c.Stream + i) and its c.Flows source ports after the last one's.
func openSenders(port string, b *frames.Builder, c GenConfig, cpus []int) ([]rawsock.Sender, error) {
	if len(cpus) == 0 {
		tx, err := rawsock.OpenTX(port, b.MaxFrameLen(), 0, true)
		if err != nil {
			return nil, err
		}
		return []rawsock.Sender{{TX: tx, B: b, CPU: -1}}, nil
	}
	if int(c.Stream)+len(cpus)-1 > 65535 {
		return nil, badinput.Errorf("--stream %d with %d senders: their streams %d..%d pass 65535", c.Stream, len(cpus), c.Stream, int(c.Stream)+len(cpus)-1)
	}
	var senders []rawsock.Sender
	for i, cpu := range cpus {
		spec := b.Spec()
		spec.Stream += uint16(i)
		spec.FirstFlow = i * spec.Flows
		bi, err := frames.NewBuilder(spec)
		if err != nil {
			return senders, badinput.Errorf("%d senders of %d flows each: %v", len(cpus), spec.Flows, err)
		}
		tx, err := rawsock.OpenTX(port, b.MaxFrameLen(), 0, true)
		if err != nil {
			return senders, err
		}
		senders = append(senders, rawsock.Sender{TX: tx, B: bi, CPU: cpu})
	}
	return senders, nil
}

// Text is the run for a person: one line, and the senders' CPU cost.
func (r *GenResult) Text() string {
	streams := fmt.Sprintf("stream %d", r.Stream)
	if r.Streams > 1 {
		streams = fmt.Sprintf("streams %d..%d", r.Stream, int(r.Stream)+r.Streams-1)
	}
	s := fmt.Sprintf("gen %s -> %s %s, %v bytes: sent %d frames in %.2f s: %.0f fps, %.2f Mbit/s L2, %.2f Mbit/s wire (%.1f%% of %d Mbit/s)\n",
		r.Interface, r.Dst, streams, sizeText(r.Sizes), r.Sent, r.Seconds, r.PPS, r.L2Mbps, r.WireMbps, r.WireMbps/float64(r.LinkMbps)*100, r.LinkMbps)
	if r.Unsent > 0 {
		s += fmt.Sprintf("  %d more frames were queued at the end that %s never took (its link down?): not counted as sent\n", r.Unsent, r.Interface)
	}
	return s + threadsText("sender", r.CPUNsPerFrame, r.Senders)
}

// threadsText is the CPU cost line: per frame in all, and each pinned thread's share.
func threadsText(what string, nsPerFrame float64, ts []rawsock.ThreadStats) string {
	s := fmt.Sprintf("  cpu: %.0f ns/frame", nsPerFrame)
	for i, t := range ts {
		if t.CPU < 0 {
			continue
		}
		s += fmt.Sprintf("; %s %d on CPU %d: %d frames, %.0f ns/frame", what, i, t.CPU, t.Frames, rawsock.NsPerFrame(t.CPUTime, t.Frames))
	}
	return s + "\n"
}

func mbps(bytes uint64, n uint64, secs float64, wire bool) float64 {
	if secs <= 0 {
		return 0
	}
	b := float64(bytes)
	if wire {
		b += float64(n) * frames.WireOverhead
	}
	return b * 8 / secs / 1e6
}

func sizeText(s []int) string {
	if len(s) == len(frames.IMIX) {
		return "imix"
	}
	return strings.Trim(strings.Join(strings.Fields(fmt.Sprint(s)), ","), "[]")
}

// SinkConfig is one run of the sink (linerate sink).
type SinkConfig struct {
	Root, Iface string
	Duration    time.Duration
	Count       uint64
	// Narrow counts Streams streams from Stream alone (gen --cpus N sends N; 1..1024),
	// the rest foreign; otherwise every stream that comes is counted (up to
	// frames.MaxAnyStreams).
	Narrow  bool
	Stream  uint16
	Streams int
	// CPUs is how many receive rings (ParseCPUs): 0 one, read by an unpinned thread;
	// several share the port's frames in a fanout group (Fanout: "hash", the default,
	// or "cpu"), each read by a thread pinned to its CPU, their counts merged.
	CPUs     int
	Fanout   string
	Progress func(p rawsock.SinkProgress, el time.Duration)
}

// SinkResult is what the sink counted, and what its own rings dropped.
type SinkResult struct {
	Interface string `json:"interface"`
	frames.Result
	// PerStream is each stream's count when there are several; Streams how many
	// streams came (counted every one) or were asked for.
	PerStream []frames.Result `json:"per_stream,omitempty"`
	Streams   int             `json:"streams"`
	// Any: every stream that came was counted (no --stream); OverStreams the test
	// frames of streams past frames.MaxAnyStreams, counted as foreign.
	Any         bool   `json:"any_stream"`
	OverStreams uint64 `json:"over_max_streams,omitempty"`
	SinkDrops   uint64 `json:"sink_drops"`
	// Handled is every frame the rings handed over; CPUNsPerFrame the reading threads'
	// CPU time per frame handled; Rings each ring's share.
	Handled       uint64                `json:"handled"`
	CPUNsPerFrame float64               `json:"cpu_ns_per_frame"`
	Rings         []rawsock.ThreadStats `json:"rings"`
}

// Sink counts the streams' test frames arriving on the port.
func Sink(ctx context.Context, c SinkConfig) (*SinkResult, error) {
	if _, err := net.InterfaceByName(c.Iface); err != nil {
		_, err := LookupPort(c.Root, c.Iface, 1) // names the interfaces there are
		return nil, err
	}
	streams := 0
	if c.Narrow {
		if c.Streams < 1 || c.Streams > 1024 {
			return nil, badinput.Errorf("--streams %d: want 1..1024 (gen --cpus N sends N streams)", c.Streams)
		}
		streams = c.Streams
	}
	if streams > 0 && int(c.Stream)+streams-1 > 65535 {
		return nil, badinput.Errorf("--stream %d --streams %d: the streams pass 65535", c.Stream, streams)
	}
	mode := rawsock.FanoutHash
	if c.Fanout != "" {
		var err error
		if mode, err = rawsock.ParseFanout(c.Fanout); err != nil {
			return nil, badinput.Wrap(err)
		}
	}
	cpus, err := PickCPUs(c.CPUs)
	if err != nil {
		return nil, err
	}
	rings, err := rawsock.OpenRXRings(c.Iface, max(len(cpus), 1), rawsock.RXRing{}, mode)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, r := range rings {
			r.Close()
		}
	}()
	s, st, err := rawsock.Sink(ctx, rings, cpus, c.Stream, streams, rawsock.SinkOptions{Duration: c.Duration, Count: c.Count, Progress: c.Progress})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Iface, err)
	}
	total, per := s.Result(nil, 0)
	total.LatencyKind = "one-way"
	res := &SinkResult{Interface: c.Iface, Result: total, SinkDrops: st.Drops, Handled: st.Handled, CPUNsPerFrame: rawsock.NsPerFrame(st.CPU, st.Handled), Rings: st.Rings,
		Streams: len(per), Any: s.Any(), OverStreams: s.Over}
	if len(per) > 1 {
		for i := range per {
			per[i].LatencyKind = "one-way"
		}
		res.PerStream = per
	}
	return res, nil
}

// Text is the sink's count for a person.
func (r *SinkResult) Text() string {
	head := "sink " + r.Interface
	s := r.Result.Text(head)
	switch {
	case r.Any && r.Streams == 0:
		s = strings.Replace(s, fmt.Sprintf("stream %d:", r.Stream), "no test stream came:", 1)
	case r.Any:
		ids := make([]string, len(r.PerStream))
		for i, p := range r.PerStream {
			ids[i] = strconv.Itoa(int(p.Stream))
		}
		if len(ids) == 0 {
			ids = []string{strconv.Itoa(int(r.Stream))}
		}
		s = strings.Replace(s, fmt.Sprintf("stream %d:", r.Stream), fmt.Sprintf("%d %s (%s):", r.Streams, plural(r.Streams, "stream"), idList(ids)), 1)
	case len(r.PerStream) > 1:
		s = strings.Replace(s, fmt.Sprintf("stream %d:", r.Stream), fmt.Sprintf("streams %d..%d:", r.Stream, int(r.Stream)+len(r.PerStream)-1), 1)
	}
	if len(r.PerStream) > 1 {
		for _, p := range r.PerStream {
			s += fmt.Sprintf("  stream %d: received %d of %d, lost %d, reordered %d, duplicated %d, corrupted %d\n",
				p.Stream, p.Received, p.Sent, p.Lost, p.Reordered, p.Duplicated, p.Corrupted)
		}
	}
	if r.OverStreams > 0 {
		s += fmt.Sprintf("  %d frames of streams past the first %d counted as foreign: narrow it with --stream ID --streams N\n", r.OverStreams, frames.MaxAnyStreams)
	}
	if r.SinkDrops > 0 {
		s += fmt.Sprintf("  the sink's ring overflowed: %d frames dropped here, not on the path\n", r.SinkDrops)
	}
	return s + threadsText("ring", r.CPUNsPerFrame, r.Rings)
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// idList is the streams' ids, the first 8 and how many more.
func idList(ids []string) string {
	if len(ids) > 8 {
		return strings.Join(ids[:8], ", ") + fmt.Sprintf(" and %d more", len(ids)-8)
	}
	return strings.Join(ids, ", ")
}

// Verdict says why the sink's stream fell short: fewer than minFrames of it arrived, or
// more than maxLoss percent was lost; nil when neither.
func (r *SinkResult) Verdict(maxLoss float64, minFrames uint64) error {
	switch {
	case r.Received < minFrames && r.Any:
		return fmt.Errorf("received %d test frames (of any stream), want at least %d (--min-frames)", r.Received, minFrames)
	case r.Received < minFrames:
		return fmt.Errorf("received %d frames of stream %d, want at least %d (--min-frames)", r.Received, r.Stream, minFrames)
	case r.LossPct > maxLoss:
		return fmt.Errorf("lost %.4f%%, above --max-loss %g%%", r.LossPct, maxLoss)
	}
	return nil
}

// RFC2544Config is one run of the RFC 2544 benchmarks from a port, through a reflector
// (Peer) or a second port cabled back (Loop).
type RFC2544Config struct {
	Root, Iface string
	Peer        net.HardwareAddr // the reflector's MAC; nil with Loop
	Loop        string
	Bench       rfc2544.Config // LinkMbps 0: the port's speed
	Force       bool
	CPUs        int // senders and receive rings, as GenConfig's
	// HWStamps asks for the NIC's hardware timestamps (through a reflector only).
	HWStamps bool
}

// RFC2544Result is the benchmarks' results with what they ran on.
type RFC2544Result struct {
	Interface string               `json:"interface"`
	Peer      string               `json:"peer,omitempty"`
	Loop      string               `json:"loop,omitempty"`
	LinkMbps  int                  `json:"link_mbps"`
	Trial     float64              `json:"trial_seconds"`
	LossTol   float64              `json:"loss_tolerance_pct"`
	Results   []rfc2544.SizeResult `json:"results"`
}

// RFC2544 runs the benchmarks.
func RFC2544(ctx context.Context, c RFC2544Config) (*RFC2544Result, error) {
	cfg := c.Bench
	for _, s := range cfg.Sizes {
		if s < frames.MinSize || s > frames.MaxSize {
			return nil, badinput.Errorf("frame size %d: want %d..%d", s, frames.MinSize, frames.MaxSize)
		}
	}
	link := cfg.LinkMbps
	cfg.LinkMbps = max(link, 1)
	if err := cfg.Check(); err != nil {
		return nil, badinput.Wrap(err)
	}
	p, err := LookupPort(c.Root, c.Iface, link)
	if err != nil {
		return nil, err
	}
	cfg.LinkMbps = p.LinkMbps
	if err := p.CheckSizes(cfg.Sizes, false); err != nil {
		return nil, err
	}
	if err := RefuseManagement(p.Name, c.Force); err != nil {
		return nil, err
	}
	rxName, dst, kind := p.Name, c.Peer, "round-trip"
	if c.Peer == nil {
		q, err := LookupPort(c.Root, c.Loop, p.LinkMbps)
		if err != nil {
			return nil, err
		}
		dst, kind, rxName = q.MAC, "one-way", q.Name
	}
	maxLen := 0
	for _, s := range cfg.Sizes {
		maxLen = max(maxLen, s-frames.FCS)
	}
	e, err := OpenTrialer(TrialerConfig{Root: c.Root, Port: p, Dst: dst, RXPort: rxName, MaxLen: maxLen, CPUs: c.CPUs, Kind: kind, HWStamps: c.HWStamps})
	if err != nil {
		return nil, err
	}
	defer e.Close()
	rs, err := rfc2544.Run(ctx, e, cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.Name, err)
	}
	res := &RFC2544Result{Interface: p.Name, Loop: c.Loop, LinkMbps: p.LinkMbps, Trial: cfg.Trial.Seconds(), LossTol: cfg.LossTol, Results: rs}
	if c.Peer != nil {
		res.Peer = c.Peer.String()
	}
	return res, nil
}

// Text is the results for a person: a header line and the table.
func (r *RFC2544Result) Text() string {
	how := "looped to " + r.Loop
	if r.Peer != "" {
		how = "through the reflector " + r.Peer
	}
	return fmt.Sprintf("RFC 2544 on %s (%d Mbit/s), %s, trials of %v, loss tolerance %g%%\n", r.Interface, r.LinkMbps, how,
		time.Duration(r.Trial*float64(time.Second)), r.LossTol) + rfc2544.Table(r.Results)
}
