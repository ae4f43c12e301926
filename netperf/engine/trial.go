package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zynqnet/linerate/internal/badinput"
	"github.com/zynqnet/linerate/netperf/frames"
	"github.com/zynqnet/linerate/netperf/rawsock"
	"github.com/zynqnet/linerate/nic"
)

// ParseCPUs reads a --cpus value: a count of threads, each pinned to a CPU of its own,
// or all (every CPU this process may run on, -1). The empty string is 0: one thread,
// not pinned.
func ParseCPUs(flagName, s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	if strings.EqualFold(s, "all") {
		return -1, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 1024 {
		return 0, badinput.Errorf("%s %q: want a count of CPUs (1, 2, ...) or all", flagName, s)
	}
	return n, nil
}

// PickCPUs turns a ParseCPUs count into the CPUs the threads are pinned to: nil for 0
// (one thread, not pinned), the first n CPUs this process may run on for n, all of them
// for -1. More than there are is bad input that names how many there are.
func PickCPUs(n int) ([]int, error) {
	if n == 0 {
		return nil, nil
	}
	cpus, err := rawsock.CPUs(max(n, 0))
	if err != nil {
		return nil, badinput.Errorf("--cpus %d: %v", n, err)
	}
	return cpus, nil
}

// Trialer runs RFC 2544 trials (rfc2544.Trialer) through the raw-socket engine: frames
// from Src to Dst out of the TX rings (one sender a ring, pinned to CPUs when given),
// counted as they come back on the RX rings.
type Trialer struct {
	TX       []*rawsock.TX
	RX       []*rawsock.RX
	CPUs     []int // the senders' CPUs; nil: not pinned
	Src, Dst net.HardwareAddr
	// Root and Port name the sending port, whose tx_dropped counter tells frames its
	// driver refused (qdisc bypass drops them there) from frames lost on the path.
	Root, Port string
	// Kind is the latency's kind: "round-trip" through a reflector, "one-way" looped.
	Kind string
	// Settle is how long the receiver waits for late frames after the sender is done.
	Settle time.Duration
	stream uint16
	// hw: the port stamps every frame in hardware and the rings read the stamps;
	// hwNote says why not when that was asked for; restore puts the port's
	// timestamping back.
	hw      bool
	hwNote  string
	restore func() error
}

// TrialerConfig is what OpenTrialer opens rings for.
type TrialerConfig struct {
	Root string
	Port *Port            // the sending port
	Dst  net.HardwareAddr // the reflector's MAC, or the looped port's
	// RXPort is where frames are counted back: Port's own name through a reflector, a
	// second port looped.
	RXPort string
	MaxLen int    // the longest frame, without FCS
	CPUs   int    // senders and receive rings, as ParseCPUs gives it
	Kind   string // "round-trip" or "one-way"
	// MaxFPS is the highest rate its trials run at, when known (a frames step's rate, a
	// PHY loopback's): the receive rings are sized for it (rawsock.PacedRing); 0: for
	// line rate (a throughput search).
	MaxFPS float64
	// HWStamps asks for the NIC's hardware timestamps of every frame (round trips
	// through a reflector only: TX and RX on one port, one clock). A port that has none
	// measures with software stamps, and the results say why.
	HWStamps bool
}

// OpenTrialer opens the rings of trials: a sender and a receive ring a CPU. Close
// closes them and puts the port's timestamping back.
func OpenTrialer(c TrialerConfig) (*Trialer, error) {
	p := c.Port
	e := &Trialer{Src: p.MAC, Dst: c.Dst, Kind: c.Kind, Settle: 500 * time.Millisecond, Root: c.Root, Port: p.Name}
	var err error
	if e.CPUs, err = PickCPUs(c.CPUs); err != nil {
		return nil, err
	}
	if c.HWStamps && c.RXPort != p.Name {
		return nil, badinput.Errorf("hardware timestamps measure round trips through a reflector: %s and %s have a clock each", p.Name, c.RXPort)
	}
	n := max(len(e.CPUs), 1)
	// The senders' rings are set up while the receive rings open (rawsock.OpenTXRings).
	// Blocks, not frames: a trial's count does not wait on a block's timer (the
	// reflector hands frames on as they come, and the RX time is the kernel's stamp).
	e.TX, err = rawsock.OpenTXRings(p.Name, n, c.MaxLen, rawsock.PacedTXFrames(c.MaxFPS), true, func() error {
		var err error
		e.RX, err = rawsock.OpenRXRings(c.RXPort, n, rawsock.PacedRing(c.MaxFPS, c.MaxLen), rawsock.FanoutHash)
		return err
	})
	if err != nil {
		e.Close()
		return nil, err
	}
	if c.HWStamps {
		if err := e.stampHW(); err != nil {
			e.Close()
			return nil, err
		}
	}
	return e, nil
}

// stampHW turns the port's hardware stamping on and has every ring read the stamps;
// a port without it leaves the trials on software stamps, noted.
func (e *Trialer) stampHW() error {
	restore, err := rawsock.EnableHWStamps(e.Port)
	var no *rawsock.NoHWStamps
	if errors.As(err, &no) {
		e.hwNote = no.Why + ": software stamps used"
		return nil
	}
	if err != nil {
		return err
	}
	e.restore, e.hw = restore, true
	for _, t := range e.TX {
		if err := t.StampHW(); err != nil {
			return fmt.Errorf("%s: TX ring: %w", e.Port, err)
		}
	}
	for _, r := range e.RX {
		if err := r.StampHW(); err != nil {
			return fmt.Errorf("%s: RX ring: %w", e.Port, err)
		}
	}
	return nil
}

// Close closes the rings and puts the port's timestamping back as it was. The rings
// close at once, each on a goroutine of its own: the kernel waits out an RCU grace
// period for each packet socket it releases (synchronize_net), 60 ms on the emulated
// ZC702, and waited one after the other they were the most of a step's tear-down.
func (e *Trialer) Close() error {
	var wg sync.WaitGroup
	for _, t := range e.TX {
		wg.Go(func() { t.Close() })
	}
	for _, r := range e.RX {
		wg.Go(func() { r.Close() })
	}
	wg.Wait()
	if e.restore != nil {
		return e.restore()
	}
	return nil
}

// CloseBehind closes the rings as Close does, on a goroutine of behind, and returns at
// once: what the kernel does then is wait out the RCU grace periods of the sockets'
// release (65 ms on the emulated ZC702), which the caller, done with the rings, need not
// wait for; the next step runs meanwhile. The port's timestamping, when the trials
// changed it, is put back before it returns (Close). A nil behind closes here.
func (e *Trialer) CloseBehind(behind *sync.WaitGroup) {
	if behind == nil || e.restore != nil {
		e.Close()
		return
	}
	behind.Go(func() { e.Close() })
}

// Trial sends size-byte frames at fps for d (or count frames) and counts them back.
func (e *Trialer) Trial(ctx context.Context, size int, fps float64, d time.Duration, count uint64) (frames.Result, error) {
	// Fresh streams per trial (one a sender): frames late from the last one are foreign
	// to this one.
	e.stream += uint16(max(len(e.TX), 1))
	spec := frames.Spec{Src: e.Src, Dst: e.Dst, Sizes: []int{size}, Flows: 1, Stream: e.stream}
	o := rawsock.GenOptions{FPS: fps, Duration: d}
	if count > 0 {
		o = rawsock.GenOptions{FPS: fps, Count: count, Duration: time.Duration(float64(count)/fps*2e9) + 5*time.Second}
	}
	offered := count
	if count == 0 {
		offered = uint64(fps * d.Seconds())
	}
	if e.hw {
		// At most about 100,000 frames paired a trial (the book keeps them in memory).
		o.HW = frames.NewHWBook(offered/100000 + 1)
	}
	before, okBefore := e.txDropped()
	r, _, err := rawsock.Trial(ctx, e.TX, e.RX, e.CPUs, spec, o, e.Settle)
	if after, ok := e.txDropped(); ok && okBefore && after > before {
		r.SenderDrops = after - before
	}
	r.Offered = offered
	r.LatencyKind = e.Kind
	r.LatencyClock, r.HWNote = "software", e.hwNote
	if o.HW != nil {
		e.hwLatency(&r, o.HW)
	}
	return r, err
}

// hwLatency puts the paired hardware stamps' latency in r, or says why there is none.
func (e *Trialer) hwLatency(r *frames.Result, b *frames.HWBook) {
	lat, n := b.Latency()
	switch {
	case lat != nil:
		r.Latency, r.LatencyClock = lat, "hardware"
		r.HWNote = fmt.Sprintf("%d frames paired (one in %d)", n, b.Every)
	case r.Latency != nil:
		r.HWNote = e.Port + " stamped no frame it received in hardware: software stamps used"
	case r.Received > 0:
		r.LatencyClock = "hardware"
		r.HWNote = e.Port + " stamped frames it received but handed back no TX stamp: no latency"
	}
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
