package engine

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
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
	Progress    func(sent uint64, el time.Duration)
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
	Seconds   float64 `json:"seconds"`
	PPS       float64 `json:"pps"`
	L2Mbps    float64 `json:"l2_mbps"`
	WireMbps  float64 `json:"wire_mbps"`
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
	tx, err := rawsock.OpenTX(p.Name, b.MaxFrameLen(), true)
	if err != nil {
		return nil, err
	}
	defer tx.Close()
	target := fps
	if rate.Percent >= 100 {
		target = 0 // line rate: as fast as the port takes them; the driver paces
	}
	o := rawsock.GenOptions{FPS: target, Count: c.Count, Duration: c.Duration, EndMarkers: true, Progress: c.Progress}
	if c.Duration == 0 && c.Count > 0 && fps > 0 {
		// Bounded anyway: twice the time the count takes at the rate, and 10 s.
		o.Duration = time.Duration(float64(c.Count)/fps*2e9) + 10*time.Second
	}
	st, err := rawsock.Gen(ctx, tx, b, o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.Name, err)
	}
	secs := st.Elapsed.Seconds()
	return &GenResult{Interface: p.Name, Dst: c.Dst.String(), Stream: c.Stream, Sizes: sizes, TargetFPS: fps, LinkMbps: p.LinkMbps,
		Sent: st.Sent, Seconds: secs, PPS: float64(st.Sent) / secs,
		L2Mbps: mbps(st.Bytes, st.Sent, secs, false), WireMbps: mbps(st.Bytes, st.Sent, secs, true)}, nil
}

// Text is the run for a person, one line.
func (r *GenResult) Text() string {
	return fmt.Sprintf("gen %s -> %s stream %d, %v bytes: sent %d frames in %.2f s: %.0f fps, %.2f Mbit/s L2, %.2f Mbit/s wire (%.1f%% of %d Mbit/s)\n",
		r.Interface, r.Dst, r.Stream, sizeText(r.Sizes), r.Sent, r.Seconds, r.PPS, r.L2Mbps, r.WireMbps, r.WireMbps/float64(r.LinkMbps)*100, r.LinkMbps)
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
	Stream      uint16
	Progress    func(c *frames.Counter, el time.Duration)
}

// SinkResult is what the sink counted, and what its own ring dropped.
type SinkResult struct {
	Interface string `json:"interface"`
	frames.Result
	SinkDrops uint64 `json:"sink_drops"`
}

// Sink counts the stream's test frames arriving on the port.
func Sink(ctx context.Context, c SinkConfig) (*SinkResult, error) {
	if _, err := net.InterfaceByName(c.Iface); err != nil {
		_, err := LookupPort(c.Root, c.Iface, 1) // names the interfaces there are
		return nil, err
	}
	rx, err := rawsock.OpenRX(c.Iface)
	if err != nil {
		return nil, err
	}
	defer rx.Close()
	counter := frames.NewCounter(c.Stream)
	if _, err := rawsock.Sink(ctx, rx, counter, rawsock.SinkOptions{Duration: c.Duration, Count: c.Count, Progress: c.Progress}); err != nil {
		return nil, fmt.Errorf("%s: %w", c.Iface, err)
	}
	r := counter.Result(0, 0)
	r.LatencyKind = "one-way"
	return &SinkResult{Interface: c.Iface, Result: r, SinkDrops: rx.Drops()}, nil
}

// Text is the sink's count for a person.
func (r *SinkResult) Text() string {
	s := r.Result.Text("sink " + r.Interface)
	if r.SinkDrops > 0 {
		s += fmt.Sprintf("  the sink's ring overflowed: %d frames dropped here, not on the path\n", r.SinkDrops)
	}
	return s
}

// Verdict says why the sink's stream fell short: fewer than minFrames of it arrived, or
// more than maxLoss percent was lost; nil when neither.
func (r *SinkResult) Verdict(maxLoss float64, minFrames uint64) error {
	switch {
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
	e := &Trialer{Src: p.MAC, Dst: c.Peer, Kind: "round-trip", Settle: 500 * time.Millisecond, Root: c.Root, Port: p.Name}
	rxName := p.Name
	if c.Peer == nil {
		q, err := LookupPort(c.Root, c.Loop, p.LinkMbps)
		if err != nil {
			return nil, err
		}
		e.Dst, e.Kind, rxName = q.MAC, "one-way", q.Name
	}
	maxLen := 0
	for _, s := range cfg.Sizes {
		maxLen = max(maxLen, s-frames.FCS)
	}
	if e.TX, err = rawsock.OpenTX(p.Name, maxLen, true); err != nil {
		return nil, err
	}
	defer e.TX.Close()
	if e.RX, err = rawsock.OpenRX(rxName); err != nil {
		return nil, err
	}
	defer e.RX.Close()
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
