// Package rfc2544 runs the RFC 2544 benchmarks (section 26: throughput, latency, frame
// loss rate, back-to-back frames) over any trial runner: linerate's raw-socket engine
// on a real port, or a fake in the tests.
package rfc2544

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/zynqnet/linerate/netperf/frames"
)

// Trialer runs one trial: frames of size at fps for d, or, when count > 0, a burst of
// count frames at fps. It returns the sink's result for that trial's own stream.
type Trialer interface {
	Trial(ctx context.Context, size int, fps float64, d time.Duration, count uint64) (frames.Result, error)
}

// Tests, in the order RFC 2544 section 26 lists them.
var AllTests = []string{"throughput", "latency", "loss", "backtoback"}

// DefaultSizes are RFC 2544's frame sizes for Ethernet (section 9.1).
var DefaultSizes = []int{64, 128, 256, 512, 1024, 1280, 1518}

// Config is one run.
type Config struct {
	Sizes    []int
	Trial    time.Duration // length of each trial (RFC 2544: at least 60 s; 10 s default here)
	LossTol  float64       // percent of frames a throughput trial may lose
	Res      float64       // throughput search resolution, percent of the rate found
	Tests    []string
	LinkMbps int
	// BurstTrial is how long the longest back-to-back burst lasts at line rate (RFC
	// 2544 section 26.4: 2 s).
	BurstTrial time.Duration
	// Progress, when set, hears of every trial as it ends: what it found, and the
	// run's trials so far and an estimate of all of them (the searches' lengths depend
	// on what they find: the sizes done so far set the pace of the rest).
	Progress func(line string, done, estimate int)

	trials, sizeTrials, sizesLeft, doneSizes, doneTrials int
}

// Point is one trial's outcome. Lost and LossPct are frames lost on the path, the thing
// under test; frames the sending port's driver refused and frames the reflector had no
// TX room for are counted apart, and so is the sender falling short of the offered
// count (a generator the CPU cannot keep at the rate), which sends fewer, not loses.
type Point struct {
	Percent        float64 `json:"percent"`
	FPS            float64 `json:"fps"`
	Offered        uint64  `json:"offered,omitempty"`
	Sent           uint64  `json:"sent"`
	Lost           uint64  `json:"lost"`
	LossPct        float64 `json:"loss_pct"`
	SenderDrops    uint64  `json:"sender_drops,omitempty"`
	ReflectorDrops uint64  `json:"reflector_drops,omitempty"`
	SenderShort    uint64  `json:"sender_short,omitempty"`
}

// maxAttempts is how often a trial whose sender fell short is run.
const maxAttempts = 3

// point sums a trial up, loss counted on the path only.
func point(pct, fps float64, res frames.Result) Point {
	p := Point{Percent: pct, FPS: fps, Offered: res.Offered, Sent: res.Sent, Lost: res.PathLost(), LossPct: res.PathLossPct(),
		SenderDrops: res.SenderDrops, ReflectorDrops: res.ReflectorDrops}
	// A shortfall of more than 1% (and a frame) is the sender's, worth saying.
	if res.Offered > res.Sent && float64(res.Offered-res.Sent) > max(1, 0.01*float64(res.Offered)) {
		p.SenderShort = res.Offered - res.Sent
	}
	return p
}

// apart says what a trial lost that was not the path's.
func (p Point) apart() string {
	var s []string
	if p.SenderDrops > 0 {
		s = append(s, fmt.Sprintf("%d dropped by the sending port's driver", p.SenderDrops))
	}
	if p.ReflectorDrops > 0 {
		s = append(s, fmt.Sprintf("%d dropped by the reflector", p.ReflectorDrops))
	}
	if p.SenderShort > 0 {
		s = append(s, fmt.Sprintf("the sender fell %d short of %d offered", p.SenderShort, p.Offered))
	}
	if len(s) == 0 {
		return ""
	}
	return " (not counted as loss: " + strings.Join(s, "; ") + ")"
}

// SizeResult is every test's outcome for one frame size.
type SizeResult struct {
	Size       int         `json:"size"`
	LineFPS    float64     `json:"line_fps"`
	Throughput *Throughput `json:"throughput,omitempty"`
	Latency    *Latency    `json:"latency,omitempty"`
	Loss       []Point     `json:"frame_loss,omitempty"`
	BackToBack *BackToBack `json:"back_to_back,omitempty"`
}

// Throughput is the highest rate with loss within tolerance (RFC 2544 26.1).
type Throughput struct {
	FPS      float64 `json:"fps"`
	Percent  float64 `json:"percent"`
	L2Mbps   float64 `json:"l2_mbps"`
	WireMbps float64 `json:"wire_mbps"`
	Trials   []Point `json:"trials"`
	// SenderBound says the sender could not offer more than Percent (the CPU, or a
	// path pushing back): the search ended there; the path may carry more.
	SenderBound bool `json:"sender_bound,omitempty"`
}

// Latency is measured at the throughput rate (RFC 2544 26.2).
type Latency struct {
	FPS  float64         `json:"fps"`
	Kind string          `json:"kind"`
	NS   *frames.Latency `json:"latency_ns"`
	// Clock is the stamps': software or hardware; HWNote why hardware was not had, or
	// how many frames it paired.
	Clock  string `json:"clock,omitempty"`
	HWNote string `json:"hw_timestamps,omitempty"`
}

// BackToBack is the longest burst at line rate without loss (RFC 2544 26.4).
type BackToBack struct {
	Frames  uint64  `json:"frames"`
	Seconds float64 `json:"seconds"`
	Trials  []Point `json:"trials"`
}

// Check validates a config before any frame is sent.
func (c *Config) Check() error {
	if len(c.Sizes) == 0 {
		return fmt.Errorf("no frame sizes")
	}
	if c.Trial <= 0 {
		return fmt.Errorf("trial length %v: want a positive duration", c.Trial)
	}
	if c.LossTol < 0 || c.LossTol >= 100 {
		return fmt.Errorf("loss tolerance %v%%: want 0 to below 100", c.LossTol)
	}
	if c.Res <= 0 || c.Res > 50 {
		return fmt.Errorf("resolution %v%%: want above 0, at most 50", c.Res)
	}
	if c.LinkMbps <= 0 {
		return fmt.Errorf("link speed unknown: give --link-mbps")
	}
	for _, t := range c.Tests {
		if !slices.Contains(AllTests, t) {
			return fmt.Errorf("unknown test %q (have %s)", t, strings.Join(AllTests, ", "))
		}
	}
	return nil
}

// say tells Progress of the trial just run.
func (c *Config) say(format string, a ...any) {
	if c.Progress != nil {
		c.Progress(fmt.Sprintf(format, a...), c.trials, c.estimate())
	}
}

// estimate is how many trials the run takes in all: those run, the rest of this size's
// and those of the sizes to come, each size as many as the sizes done took on average
// (before the first is done, as many as its searches take when the port is clean below
// line rate).
func (c *Config) estimate() int {
	per := c.doneTrials / max(c.doneSizes, 1)
	if c.doneSizes == 0 {
		per = 0
		if slices.Contains(c.Tests, "throughput") || slices.Contains(c.Tests, "latency") {
			per += 2 + int(math.Ceil(math.Log2(100/max(c.Res, 0.01)))) // a fail at 100%, then halving to the resolution
		}
		if slices.Contains(c.Tests, "latency") {
			per++
		}
		if slices.Contains(c.Tests, "loss") {
			per += 3 // 100%, 90%, 80%: two clean in a row end it
		}
		if slices.Contains(c.Tests, "backtoback") {
			per += 8 // to within 1% of the longest burst
		}
	}
	return c.trials + max(per-c.sizeTrials, 0) + per*c.sizesLeft
}

// Run runs the configured tests for every size.
func Run(ctx context.Context, t Trialer, c Config) ([]SizeResult, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	if c.BurstTrial == 0 {
		c.BurstTrial = 2 * time.Second
	}
	var out []SizeResult
	for i, size := range c.Sizes {
		c.sizeTrials, c.sizesLeft = 0, len(c.Sizes)-i-1
		line := frames.LinePPS(c.LinkMbps, float64(size))
		r := SizeResult{Size: size, LineFPS: line}
		trial := func(pct float64, count uint64) (frames.Result, Point, error) {
			fps := line * pct / 100
			for attempt := 1; ; attempt++ {
				res, err := t.Trial(ctx, size, fps, c.Trial, count)
				c.trials++
				c.sizeTrials++
				p := point(pct, fps, res)
				if err == nil && res.Sent == 0 {
					err = fmt.Errorf("a trial at %.2f%% sent nothing", pct)
				}
				// A trial whose sender could not offer the load (a busy CPU, then a burst
				// to catch up) measured something else than the rate: it is run again,
				// twice at most, and then counts as it came out, its shortfall said.
				if err != nil || p.SenderShort == 0 || attempt == maxAttempts || ctx.Err() != nil {
					return res, p, err
				}
				c.say("%d bytes: trial at %.3f%% again: the sender fell %d short of %d offered", size, pct, p.SenderShort, p.Offered)
			}
		}
		if slices.Contains(c.Tests, "throughput") || slices.Contains(c.Tests, "latency") {
			tp, err := c.throughput(size, trial)
			if err != nil {
				return out, err
			}
			r.Throughput = tp
		}
		if slices.Contains(c.Tests, "latency") && r.Throughput.FPS > 0 {
			res, _, err := trial(r.Throughput.Percent, 0)
			if err != nil {
				return out, err
			}
			r.Latency = &Latency{FPS: r.Throughput.FPS, Kind: res.LatencyKind, NS: res.Latency, Clock: res.LatencyClock, HWNote: res.HWNote}
			c.say("%d bytes: latency at %.2f%%: %s", size, r.Throughput.Percent, r.Latency.text())
		}
		if !slices.Contains(c.Tests, "throughput") {
			r.Throughput = nil
		}
		if slices.Contains(c.Tests, "loss") {
			clean := 0
			for pct := 100.0; pct >= 10 && clean < 2; pct -= 10 {
				_, p, err := trial(pct, 0)
				if err != nil {
					return out, err
				}
				r.Loss = append(r.Loss, p)
				c.say("%d bytes: frame loss at %.0f%%: %.3f%% (%d of %d)%s", size, pct, p.LossPct, p.Lost, p.Sent, p.apart())
				if p.Lost == 0 {
					clean++
				} else {
					clean = 0
				}
			}
		}
		if slices.Contains(c.Tests, "backtoback") {
			b, err := c.backToBack(size, line, trial)
			if err != nil {
				return out, err
			}
			r.BackToBack = b
		}
		out = append(out, r)
		c.doneSizes++
		c.doneTrials += c.sizeTrials
	}
	return out, nil
}

// throughput is the binary search of RFC 2544 26.1: start at line rate; halve the
// interval between the highest passing and lowest failing rate until it is within the
// resolution (relative to the rate). A trial whose sender fell short of the rate (after
// its attempts) measured the rate it sent, not the one asked, and that rate is what the
// sender reaches: no rate above it can be tried, so it bounds the search. Clean, it is
// the throughput found (said to be the sender's bound: the path may carry more); with
// loss, the search goes on below it. A path that holds the sender back (a qdisc pushing
// back on the port) is found at its own rate this way, and a sender the CPU cannot keep
// at line rate (a 10G port's) ends the search at its reach at once, instead of trying
// rates between it and line rate that it cannot send.
func (c *Config) throughput(size int, trial func(float64, uint64) (frames.Result, Point, error)) (*Throughput, error) {
	tp := &Throughput{}
	lo, hi := 0.0, 100.0
	loFPS := 0.0
	pct := 100.0
	for i := 0; i < 64; i++ {
		_, p, err := trial(pct, 0)
		if err != nil {
			return nil, err
		}
		tp.Trials = append(tp.Trials, p)
		pass := p.LossPct <= c.LossTol
		verdict := map[bool]string{true: "pass", false: "fail"}[pass]
		switch {
		case pass && p.SenderShort > 0 && p.Offered > 0:
			sent := float64(p.Sent) / float64(p.Offered)
			verdict = fmt.Sprintf("pass at the %.3f%% sent only: the sender's reach bounds the search", pct*sent)
			if pct*sent > lo {
				lo, loFPS = pct*sent, p.FPS*sent
			}
			hi, tp.SenderBound = lo, true
		case pass:
			lo, loFPS = pct, p.FPS
		case p.SenderShort > 0 && p.Offered > 0:
			hi = max(lo, pct*float64(p.Sent)/float64(p.Offered)) // the loss was at the rate sent
		default:
			hi = pct
		}
		c.say("%d bytes: throughput trial at %.3f%% (%.0f fps): loss %.3f%% %s%s", size, pct, p.FPS, p.LossPct, verdict, p.apart())
		if lo == 100 || hi-lo <= c.Res/100*hi {
			break
		}
		pct = (lo + hi) / 2
	}
	if lo > 0 {
		tp.FPS, tp.Percent = loFPS, lo
		tp.L2Mbps = tp.FPS * float64(size) * 8 / 1e6
		tp.WireMbps = tp.FPS * float64(size+frames.WireOverhead) * 8 / 1e6
	}
	return tp, nil
}

// backToBack searches the longest burst at line rate without loss, up to BurstTrial's
// worth of frames, to within 1% (RFC 2544 26.4 repeats each length 50 times; one trial
// per length here, and the search is the repetition).
func (c *Config) backToBack(size int, line float64, trial func(float64, uint64) (frames.Result, Point, error)) (*BackToBack, error) {
	b := &BackToBack{}
	maxN := uint64(line * c.BurstTrial.Seconds())
	lo, hi := uint64(0), maxN
	n := maxN
	for i := 0; i < 64 && n > 0; i++ {
		_, p, err := trial(100, n)
		if err != nil {
			return nil, err
		}
		b.Trials = append(b.Trials, p)
		c.say("%d bytes: back-to-back burst of %d frames: lost %d%s", size, n, p.Lost, p.apart())
		if p.Lost == 0 {
			lo = n
			if n == maxN {
				break
			}
		} else {
			hi = n
		}
		if hi-lo <= max(1, hi/100) {
			break
		}
		n = (lo + hi) / 2
	}
	b.Frames = lo
	b.Seconds = float64(lo) / line
	return b, nil
}

// Table writes the results as a table per frame size.
func Table(rs []SizeResult) string {
	var s strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&s, "frame size %d bytes (line rate %.0f fps)\n", r.Size, r.LineFPS)
		if t := r.Throughput; t != nil {
			bound := ""
			if t.SenderBound {
				bound = ", the sender's reach: the path may carry more"
			}
			fmt.Fprintf(&s, "  throughput    %10.0f fps  %7.3f%%  %8.2f Mbit/s L2  %8.2f Mbit/s wire  (%d trials%s)\n", t.FPS, t.Percent, t.L2Mbps, t.WireMbps, len(t.Trials), bound)
		}
		if l := r.Latency; l != nil && l.NS != nil {
			fmt.Fprintf(&s, "  latency       at %.0f fps, %s\n", l.FPS, l.text())
		}
		for _, p := range r.Loss {
			fmt.Fprintf(&s, "  frame loss    at %5.1f%%  %10.0f fps  %8.4f%%  (%d of %d)%s\n", p.Percent, p.FPS, p.LossPct, p.Lost, p.Sent, p.apart())
		}
		if b := r.BackToBack; b != nil {
			fmt.Fprintf(&s, "  back-to-back  %d frames (%.4f s at line rate, %d trials)\n", b.Frames, b.Seconds, len(b.Trials))
		}
	}
	return s.String()
}

func us(ns int64) string { return fmt.Sprintf("%.1f µs", float64(ns)/1e3) }

// text is a latency's percentiles in µs, or why there are none, with its stamps.
func (lt *Latency) text() string {
	note := ""
	if lt.HWNote != "" {
		note = " (hardware timestamps: " + lt.HWNote + ")"
	}
	l := lt.NS
	if l == nil {
		return "no frame came back: no latency" + note
	}
	kind := lt.Kind
	if lt.Clock != "" {
		kind += ", " + lt.Clock + " stamps"
	}
	return fmt.Sprintf("%s: p50 %s  p90 %s  p99 %s  p99.9 %s  max %s%s", kind, us(l.P50), us(l.P90), us(l.P99), us(l.P999), us(l.Max), note)
}
