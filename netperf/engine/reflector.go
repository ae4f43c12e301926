package engine

import (
	"context"
	"net"
	"strconv"
	"time"

	"github.com/zynqnet/linerate/netperf/frames"
	"github.com/zynqnet/linerate/netperf/rawsock"
	"github.com/zynqnet/linerate/nic"
)

// Reflector is a port with the rings a reflector on it needs.
type Reflector struct {
	*Port
	rx *rawsock.RX
	tx *rawsock.TX
}

// OpenReflector looks the port up and opens its rings; Close closes them.
func OpenReflector(root, name string) (*Reflector, error) {
	p, err := LookupPort(root, name, 1)
	if err != nil {
		return nil, err
	}
	// A ring of frames, not of blocks: each frame goes back as it arrives, so the round
	// trip measured through the reflector is the path's, not a block timer's.
	rx, err := rawsock.OpenRXFrames(p.Name)
	if err != nil {
		return nil, err
	}
	tx, err := rawsock.OpenTX(p.Name, max(p.MTU+18, 1518), true)
	if err != nil {
		rx.Close()
		return nil, err
	}
	return &Reflector{p, rx, tx}, nil
}

// Close closes the rings.
func (r *Reflector) Close() { r.tx.Close(); r.rx.Close() }

// Run reflects until ctx ends or duration passes (0: until ctx ends).
func (r *Reflector) Run(ctx context.Context, duration time.Duration, progress func(rawsock.ReflectStats, time.Duration)) (rawsock.ReflectStats, error) {
	return rawsock.Reflect(ctx, r.rx, r.tx, r.MAC, duration, progress)
}

// Trialer runs RFC 2544 trials (rfc2544.Trialer) through the raw-socket engine: frames
// from Src to Dst out of TX, counted as they come back on RX.
type Trialer struct {
	TX       *rawsock.TX
	RX       *rawsock.RX
	Src, Dst net.HardwareAddr
	// Root and Port name the sending port, whose tx_dropped counter tells frames its
	// driver refused (qdisc bypass drops them there) from frames lost on the path.
	Root, Port string
	// Kind is the latency's kind: "round-trip" through a reflector, "one-way" looped.
	Kind string
	// Settle is how long the receiver waits for late frames after the sender is done.
	Settle time.Duration
	stream uint16
}

// Trial sends size-byte frames at fps for d (or count frames) and counts them back.
func (e *Trialer) Trial(ctx context.Context, size int, fps float64, d time.Duration, count uint64) (frames.Result, error) {
	e.stream++ // a stream per trial: frames late from the last one are foreign to this one
	spec := frames.Spec{Src: e.Src, Dst: e.Dst, Sizes: []int{size}, Flows: 1, Stream: e.stream}
	o := rawsock.GenOptions{FPS: fps, Duration: d}
	if count > 0 {
		o = rawsock.GenOptions{FPS: fps, Count: count, Duration: time.Duration(float64(count)/fps*2e9) + 5*time.Second}
	}
	before, okBefore := e.txDropped()
	r, _, err := rawsock.Trial(ctx, e.TX, e.RX, spec, o, e.Settle)
	if after, ok := e.txDropped(); ok && okBefore && after > before {
		r.SenderDrops = after - before
	}
	r.Offered = count
	if count == 0 {
		r.Offered = uint64(fps * d.Seconds())
	}
	r.LatencyKind = e.Kind
	return r, err
}

// txDropped reads the sending port's tx_dropped counter.
func (e *Trialer) txDropped() (uint64, bool) {
	if e.Port == "" {
		return 0, false
	}
	s, err := nic.ReadFile(e.Root, "sys/class/net/"+e.Port+"/statistics/tx_dropped")
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}
